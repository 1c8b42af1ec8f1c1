// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CFI tables with elfutils' libdw (see cfi.h). The Elf handle is opened
 * with pread (ELF_C_READ), the CFI sections are read into libelf's memory
 * while the caller's fd is open, and the handle is then cut off from the
 * fd (ELF_C_FDDONE): a file replaced or truncated later changes nothing.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/cfi.h"
#include "symbols/elf_symbols.h"

/* CFI sections bigger than this are not read (libjvm's: 1.8 MiB) */
#define CFI_SECTION_MAX		(64ull << 20)
/*
 * .debug_frame needs libdw to read all of the file's DWARF sections (Go
 * binaries, which have no .eh_frame, keep frame pointers: above this they
 * are walked by those)
 */
#define CFI_DEBUG_MAX		(32ull << 20)

struct cfi_table {
	Elf *elf;
	Dwarf *dwarf;		/* .debug_frame only */
	Dwarf_CFI *cfi;
	void *img;		/* load_mem: the copied image */
	size_t bytes;
	uint64_t id;		/* cache key, never reused */
	const char *source;
	struct cfi_expr *exprs;	/* CFI_MAX_EXPRS, from the first one */
	size_t nexprs;
	uint64_t entry;		/* e_entry, 0: none */
};

static uint64_t next_id = 1;

/* the next named section after scn (NULL: from the first), NULL at the end */
static Elf_Scn *scn_next(Elf *e, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh,
			 const char **name)
{
	while ((scn = elf_nextscn(e, scn))) {
		if (gelf_getshdr(scn, sh) &&
		    (*name = elf_strptr(e, shstrndx, sh->sh_name)))
			return scn;
	}
	return NULL;
}

/* read (and so keep) a section named name; its size, 0 when absent */
static size_t section_load(Elf *e, const char *name, uint64_t max, bool *bad)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *n;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return 0;
	while ((scn = scn_next(e, shstrndx, scn, &sh, &n))) {
		if (strcmp(n, name) || sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_size > max || !elf_getdata(scn, NULL)) {
			*bad = true;
			return 0;
		}
		return sh.sh_size;
	}
	return 0;
}

/* total size of the .debug_* sections libdw would read */
static uint64_t debug_bytes(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *n;
	uint64_t sum = 0;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return 0;
	while ((scn = scn_next(e, shstrndx, scn, &sh, &n)))
		if (!strncmp(n, ".debug_", 7) && sh.sh_type != SHT_NOBITS)
			sum += sh.sh_size;
	return sum;
}

static struct cfi_table *table_from_elf(Elf *e, bool from_fd)
{
	struct cfi_table *t = NULL;
	GElf_Ehdr eh;
	bool bad = false;
	size_t eh_frame, hdr;
	int err = EINVAL;

	if (!e || !gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64)
		goto fail;
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = ENOMEM;
		goto fail;
	}
	t->elf = e;
	t->entry = eh.e_entry;
	eh_frame = section_load(e, ".eh_frame", CFI_SECTION_MAX, &bad);
	hdr = section_load(e, ".eh_frame_hdr", CFI_SECTION_MAX, &bad);
	if (bad)
		goto fail;
	if (eh_frame) {
		t->cfi = dwarf_getcfi_elf(e);
		t->bytes = eh_frame + hdr;
		t->source = ".eh_frame";
	}
	if (!t->cfi) {
		bool dbad = false;
		size_t df = section_load(e, ".debug_frame", CFI_SECTION_MAX,
					 &dbad);
		uint64_t all = df ? debug_bytes(e) : 0;

		if (!df || dbad || all > CFI_DEBUG_MAX) {
			err = df ? EINVAL : ENOENT;
			goto fail;
		}
		t->dwarf = dwarf_begin_elf(e, DWARF_C_READ, NULL);
		t->cfi = t->dwarf ? dwarf_getcfi(t->dwarf) : NULL;
		t->bytes = all;
		t->source = ".debug_frame";
	}
	if (!t->cfi) {
		err = eh_frame ? EINVAL : ENOENT;
		goto fail;
	}
	/* nothing more is read through the caller's fd */
	if (from_fd)
		elf_cntl(e, ELF_C_FDDONE);
	t->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
	return t;
fail:
	if (t) {
		if (t->dwarf)
			dwarf_end(t->dwarf);
		else if (t->cfi)
			dwarf_cfi_end(t->cfi);
		free(t);
	}
	if (e)
		elf_end(e);
	errno = err;
	return NULL;
}

struct cfi_table *cfi_table__load_fd(int fd)
{
	Elf *e = elf_open_fd(fd);

	if (!e) {
		errno = EINVAL;
		return NULL;
	}
	return table_from_elf(e, true);
}

struct cfi_table *cfi_table__load_mem(const void *img, size_t len)
{
	struct cfi_table *t;
	void *copy;
	Elf *e;

	if (!img || !len) {
		errno = EINVAL;
		return NULL;
	}
	copy = malloc(len);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(copy, img, len);
	elf_version(EV_CURRENT);
	e = elf_memory(copy, len);
	if (!e) {
		free(copy);
		errno = EINVAL;
		return NULL;
	}
	t = table_from_elf(e, false);
	if (!t) {
		free(copy);
		return NULL;
	}
	t->img = copy;
	t->bytes += len;
	return t;
}

void cfi_table__free(struct cfi_table *t)
{
	if (!t)
		return;
	if (t->dwarf)
		dwarf_end(t->dwarf);	/* owns the CFI */
	else
		dwarf_cfi_end(t->cfi);
	elf_end(t->elf);
	free(t->img);
	free(t->exprs);
	free(t);
}

size_t cfi_table__bytes(const struct cfi_table *t)
{
	if (!t)
		return 0;
	return t->bytes + (t->exprs ? CFI_MAX_EXPRS * sizeof(*t->exprs) : 0);
}

const char *cfi_table__source(const struct cfi_table *t)
{
	return t ? t->source : NULL;
}

/* one op into ours; false when the unwinder could not run it */
static bool op_take(const Dwarf_Op *op, struct cfi_op *out)
{
	uint8_t a = op->atom;

	out->atom = a;
	out->n = (int64_t)op->number;
	if (a >= DW_OP_breg0 && a <= DW_OP_breg31)
		return true;
	if (a >= DW_OP_lit0 && a <= DW_OP_lit31)
		return true;
	switch (a) {
	case DW_OP_bregx:
		if (op->number > 31)
			return false;
		out->atom = (uint8_t)(DW_OP_breg0 + op->number);
		out->n = (int64_t)op->number2;
		return true;
	case DW_OP_call_frame_cfa:
	case DW_OP_plus_uconst:
	case DW_OP_const1u: case DW_OP_const1s:
	case DW_OP_const2u: case DW_OP_const2s:
	case DW_OP_const4u: case DW_OP_const4s:
	case DW_OP_const8u: case DW_OP_const8s:
	case DW_OP_constu: case DW_OP_consts:
	case DW_OP_plus: case DW_OP_minus: case DW_OP_mul:
	case DW_OP_and: case DW_OP_or: case DW_OP_xor:
	case DW_OP_shl: case DW_OP_shr: case DW_OP_shra:
	case DW_OP_ge: case DW_OP_gt: case DW_OP_le: case DW_OP_lt:
	case DW_OP_eq: case DW_OP_ne:
	case DW_OP_neg: case DW_OP_not:
	case DW_OP_dup: case DW_OP_drop: case DW_OP_swap: case DW_OP_over:
	case DW_OP_deref:
		return true;
	default:
		return false;
	}
}

/* e as a table-owned expression (the same one once), false: cannot */
static bool expr_intern(struct cfi_table *t, const Dwarf_Op *ops,
			size_t nops, const struct cfi_expr **out)
{
	struct cfi_expr e;

	if (nops > CFI_MAX_OPS)
		return false;
	memset(&e, 0, sizeof(e));
	for (size_t i = 0; i < nops; i++)
		if (!op_take(&ops[i], &e.ops[i]))
			return false;
	e.nops = (uint8_t)nops;
	for (size_t i = 0; i < t->nexprs; i++)
		if (!memcmp(&t->exprs[i], &e, sizeof(e))) {
			*out = &t->exprs[i];
			return true;
		}
	if (t->nexprs == CFI_MAX_EXPRS)
		return false;
	if (!t->exprs) {
		t->exprs = calloc(CFI_MAX_EXPRS, sizeof(*t->exprs));
		if (!t->exprs)
			return false;
	}
	t->exprs[t->nexprs] = e;
	*out = &t->exprs[t->nexprs++];
	return true;
}

/* ops[i] is DW_OP_call_frame_cfa then an optional DW_OP_plus_uconst */
static bool cfa_plus(const Dwarf_Op *ops, size_t nops, int32_t *off)
{
	if (nops < 1 || nops > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (ops[1].atom != DW_OP_plus_uconst ||
	    (int64_t)ops[1].number != (int32_t)ops[1].number)
		return false;
	*off = (int32_t)ops[1].number;
	return true;
}

/* the rule for register regno: libdw's location description, ours */
static void reg_take(struct cfi_table *t, Dwarf_Frame *fr, int regno,
		     struct cfi_rule_of *out)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	bool val;

	memset(out, 0, sizeof(*out));
	if (dwarf_frame_register(fr, regno, mem, &ops, &nops) != 0) {
		out->rule = CFI_RULE_UNSUPPORTED;
		return;
	}
	if (nops == 0) {
		out->rule = ops ? CFI_RULE_UNDEF : CFI_RULE_SAME;
		return;
	}
	val = ops[nops - 1].atom == DW_OP_stack_value;
	if (val)
		nops--;
	if (!val && cfa_plus(ops, nops, &out->off)) {
		out->rule = CFI_RULE_AT;
		return;
	}
	out->rule = val ? CFI_RULE_EXPR_VAL : CFI_RULE_EXPR_AT;
	if (!expr_intern(t, ops, nops, &out->expr))
		out->rule = CFI_RULE_UNSUPPORTED;
}

static void cfa_take(struct cfi_table *t, Dwarf_Frame *fr,
		     struct cfi_rule_of *out)
{
	Dwarf_Op *ops = NULL;
	size_t nops = 0;

	memset(out, 0, sizeof(*out));
	out->rule = CFI_RULE_UNSUPPORTED;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0 || !nops)
		return;
	/* libdw states def_cfa (register + offset) as one bregx */
	if (nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < 32 &&
	    (int64_t)ops[0].number2 == (int32_t)ops[0].number2) {
		out->rule = CFI_RULE_REG;
		out->reg = (uint8_t)ops[0].number;
		out->off = (int32_t)ops[0].number2;
		return;
	}
	if (nops == 1 && ops[0].atom >= DW_OP_breg0 &&
	    ops[0].atom <= DW_OP_breg31 &&
	    (int64_t)ops[0].number == (int32_t)ops[0].number) {
		out->rule = CFI_RULE_REG;
		out->reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
		out->off = (int32_t)ops[0].number;
		return;
	}
	if (expr_intern(t, ops, nops, &out->expr))
		out->rule = CFI_RULE_EXPR_VAL;
}

int cfi_table__find(struct cfi_table *t, uint64_t vaddr, struct cfi_row *out)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr start = 0, end = 0;
	bool signal = false;
	int ra;

	if (!t || !out)
		return -EINVAL;
	if (dwarf_cfi_addrframe(t->cfi, vaddr, &fr) != 0) {
		/* the entry code without an FDE (the dynamic loader's
		 * _start, which also calls _dl_init): nothing calls it, it
		 * is a thread's first frame */
		if (t->entry && vaddr >= t->entry &&
		    vaddr - t->entry < ELF_ENTRY_CODE_BYTES) {
			memset(out, 0, sizeof(*out));
			out->start = t->entry;
			out->end = t->entry + ELF_ENTRY_CODE_BYTES;
			out->cfa.rule = CFI_RULE_REG;
			out->cfa.reg = CFI_REG_RSP;
			out->cfa.off = 8;
			out->rbp.rule = CFI_RULE_SAME;
			out->ra.rule = CFI_RULE_UNDEF;
			return 0;
		}
		return -ENOENT;	/* no FDE, or one libdw could not parse */
	}
	memset(out, 0, sizeof(*out));
	ra = dwarf_frame_info(fr, &start, &end, &signal);
	out->start = start;
	out->end = end;
	out->signal = signal;
	cfa_take(t, fr, &out->cfa);
	reg_take(t, fr, CFI_REG_RBP, &out->rbp);
	if (ra < 0)
		out->ra.rule = CFI_RULE_UNSUPPORTED;
	else
		reg_take(t, fr, ra, &out->ra);
	free(fr);
	return 0;
}

/* ---- the row cache ---- */

struct cfi_slot {
	uint64_t table;		/* 0: empty */
	uint64_t vaddr;
	int rc;
	struct cfi_row row;
};

struct cfi_cache {
	struct cfi_slot *slots;
	unsigned int mask;
	uint64_t hits, misses;
};

struct cfi_cache *cfi_cache__new(unsigned int entries)
{
	struct cfi_cache *c;
	unsigned int n = 1;

	while (n < entries && n < (1u << 20))
		n <<= 1;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->slots = calloc(n, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return NULL;
	}
	c->mask = n - 1;
	return c;
}

void cfi_cache__free(struct cfi_cache *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c);
}

int cfi_cache__find(struct cfi_cache *c, struct cfi_table *t, uint64_t vaddr,
		    struct cfi_row *out)
{
	struct cfi_slot *s;
	uint64_t h;

	if (!c || !t)
		return cfi_table__find(t, vaddr, out);
	h = (vaddr ^ (t->id * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	s = &c->slots[(h >> 40) & c->mask];
	if (s->table == t->id && s->vaddr == vaddr) {
		c->hits++;
		if (s->rc == 0)
			*out = s->row;
		return s->rc;
	}
	c->misses++;
	s->rc = cfi_table__find(t, vaddr, &s->row);
	s->table = t->id;
	s->vaddr = vaddr;
	if (s->rc == 0)
		*out = s->row;
	return s->rc;
}

void cfi_cache__stats(const struct cfi_cache *c, uint64_t *hits,
		      uint64_t *misses)
{
	if (hits)
		*hits = c ? c->hits : 0;
	if (misses)
		*misses = c ? c->misses : 0;
}
