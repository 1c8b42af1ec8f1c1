// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Inlined functions and source lines from DWARF with libdw (see
 * dwarf_lines.h). A pc's chain: the compile unit holding it (by
 * .debug_aranges, else by each unit's ranges), then down its DIEs, at each
 * level the child whose ranges hold the pc: the DW_TAG_subprogram, and in
 * it the DW_TAG_inlined_subroutines (through lexical blocks). The
 * innermost frame is at the line the line table gives for the pc; each
 * frame outside it at the call site (DW_AT_call_file, DW_AT_call_line) of
 * the inlined call just inside it. This is the walk dwarf_getscopes()
 * makes, kept to the DIEs that name frames.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/dwarf_lines.h"
#include "symbols/elf_symbols.h"

/* nested DIEs walked at most (real code nests a few dozen deep) */
#define WALK_DEPTH_MAX	128
/* frames of one pc kept while walking, before the caller's max */
#define CHAIN_MAX	64

/* a compile unit's address range: units are found by binary search */
struct cu_range {
	uint64_t lo, hi;	/* [lo, hi) */
	Dwarf_Off die;		/* the unit's DIE */
};

struct dwarf_lines {
	Elf *elf;
	Dwarf *dw;
	size_t bytes;
	/*
	 * The units' ranges, sorted, made at open: compilers no longer write
	 * .debug_aranges by default, and asking each unit for each pc is a
	 * walk of thousands of units (20 ms a pc in libc's debug file).
	 */
	struct cu_range *cus;
	size_t ncus;
	/* units' scope trees, made at a unit's first lookup (unit_index) */
	struct unit_index **units;
	size_t units_cap, nunits;
	size_t index_bytes;
};

/*
 * A unit's scopes that name frames (subprograms and inlined subroutines,
 * one for each of their address ranges), as a tree of sorted sibling
 * blocks: the chain at a pc is a binary search a level, not a walk of
 * the unit's DIEs (70 us a lookup in CPython's ceval.c, 0.3-3 ms in
 * libjvm's units, each time). Lexical blocks and namespaces are looked
 * through, as the walk does.
 */
struct scope {
	uint64_t lo, hi;	/* [lo, hi) */
	Dwarf_Off die;
	uint32_t kids, nkids;	/* its children: s[kids, kids + nkids) */
};

struct unit_index {
	Dwarf_Off cu;		/* the unit's DIE */
	bool failed;		/* too big, or no memory: walked instead */
	struct scope *s;
	uint32_t n, top, ntop;	/* the unit's own: s[top, top + ntop) */
};

/* scopes of one unit at most, and index bytes of one module */
#define UNIT_SCOPES_MAX		(4u << 20)
#define INDEX_BYTES_MAX		(256u << 20)

/* CU ranges kept at most (a unit may have many; the rest is looked up
 * unit by unit) */
#define CU_RANGES_MAX	(1u << 20)

static int cu_range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* every unit's ranges into d->cus, sorted; false when they are too many */
static bool index_cus(struct dwarf_lines *d)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;

	while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		Dwarf_Die cu;
		ptrdiff_t it = 0;

		if (!dwarf_offdie(d->dw, off + hsize, &cu)) {
			off = next;
			continue;
		}
		while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (d->ncus == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct cu_range *n;

				if (nc > CU_RANGES_MAX)
					return false;
				n = realloc(d->cus, nc * sizeof(*n));
				if (!n)
					return false;
				d->cus = n;
				cap = nc;
			}
			d->cus[d->ncus++] = (struct cu_range){ lo, hi,
							       off + hsize };
		}
		off = next;
	}
	if (d->ncus)
		qsort(d->cus, d->ncus, sizeof(*d->cus), cu_range_cmp);
	return true;
}

/* the inflated size of a .zdebug_ section ("ZLIB" + 8-byte big-endian) */
static uint64_t zdebug_size(Elf_Scn *scn)
{
	Elf_Data *d = elf_rawdata(scn, NULL);
	const unsigned char *p;
	uint64_t v = 0;

	if (!d || !d->d_buf || d->d_size < 12 || memcmp(d->d_buf, "ZLIB", 4))
		return UINT64_MAX;
	p = (const unsigned char *)d->d_buf + 4;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * What libdw would read of e: the .debug_* sections' bytes as inflated
 * into *sum (past max: stops there, more than max); whether there is a
 * .debug_info with contents, and a .gnu_debugaltlink (dwz). false when a
 * size cannot be told.
 */
static bool scan_sections(Elf *e, uint64_t max, uint64_t *sum, bool *info,
			  bool *alt)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	*sum = 0;
	*info = *alt = false;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;
		uint64_t size;

		if (*sum > max)
			return true;
		if (!gelf_getshdr(scn, &sh) ||
		    !(n = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, ".gnu_debugaltlink"))
			*alt = true;
		if (sh.sh_type == SHT_NOBITS ||
		    (strncmp(n, ".debug_", 7) && strncmp(n, ".zdebug_", 8)))
			continue;
		size = sh.sh_size;
		/* a compressed section's header is read from its bytes */
		if (size > max - *sum) {
			*sum = max + 1;
			return true;
		}
		if (sh.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;

			if (!gelf_getchdr(scn, &ch))
				return false;
			size = ch.ch_size;
		} else if (n[1] == 'z') {
			size = zdebug_size(scn);
		}
		if (size == UINT64_MAX || *sum + size < *sum)
			return false;
		*sum += size;
		if (size && (!strcmp(n, ".debug_info") ||
			     !strcmp(n, ".zdebug_info")))
			*info = true;
	}
	return true;
}

struct dwarf_lines *dwarf_lines__open(int fd, uint64_t max_bytes)
{
	struct dwarf_lines *d = NULL;
	uint64_t sum;
	bool info, alt;
	int err = EINVAL;
	Elf *e;

	e = elf_open_fd(fd);
	if (!e || elf_kind(e) != ELF_K_ELF)
		goto fail;
	if (!scan_sections(e, max_bytes, &sum, &info, &alt))
		goto fail;
	if (sum > max_bytes) {
		err = EFBIG;
		goto fail;
	}
	if (!info) {
		err = ENOENT;
		goto fail;
	}
	if (alt) {
		err = ENOTSUP;
		goto fail;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		err = ENOMEM;
		goto fail;
	}
	/* libdw reads (and inflates) every debug section here */
	d->dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (!d->dw)
		goto fail;
	/* nothing more is read through the caller's fd */
	elf_cntl(e, ELF_C_FDDONE);
	d->elf = e;
	if (!index_cus(d)) {
		/* found unit by unit instead */
		free(d->cus);
		d->cus = NULL;
		d->ncus = 0;
	}
	d->bytes = sum + d->ncus * sizeof(*d->cus);
	return d;
fail:
	free(d);
	if (e)
		elf_end(e);
	errno = err;
	return NULL;
}

void dwarf_lines__free(struct dwarf_lines *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->units_cap; i++) {
		if (!d->units[i])
			continue;
		free(d->units[i]->s);
		free(d->units[i]);
	}
	free(d->units);
	dwarf_end(d->dw);
	elf_end(d->elf);
	free(d->cus);
	free(d);
}

size_t dwarf_lines__bytes(const struct dwarf_lines *d)
{
	return d ? d->bytes : 0;
}

size_t dwarf_lines__index_bytes(const struct dwarf_lines *d)
{
	return d ? d->index_bytes + d->units_cap * sizeof(*d->units) : 0;
}

/* the compile unit whose ranges hold vaddr */
static bool find_cu(struct dwarf_lines *d, uint64_t vaddr, Dwarf_Die *cu)
{
	Dwarf *dw = d->dw;
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (d->cus) {
		size_t lo = 0, hi = d->ncus;

		/* the last range starting at or before vaddr; ranges of
		 * units do not overlap */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (d->cus[mid].lo <= vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo && vaddr < d->cus[lo - 1].hi &&
		       dwarf_offdie(dw, d->cus[lo - 1].die, cu);
	}
	if (dwarf_addrdie(dw, vaddr, cu))
		return true;
	/* no .debug_aranges (or not for this unit): each unit's ranges */
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, cu) &&
		    dwarf_haspc(cu, vaddr) == 1)
			return true;
		off = next;
	}
	return false;
}

/*
 * The subprogram and the inlined subroutines holding pc under parent,
 * outermost first, appended to chain. Namespaces are looked into (GCC
 * puts a namespace's functions there); lexical blocks are gone through.
 */
static void walk(Dwarf_Die *parent, uint64_t pc, Dwarf_Die *chain, int *nch,
		 int depth)
{
	Dwarf_Die c;

	if (depth > WALK_DEPTH_MAX || dwarf_child(parent, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c), before;

		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
			if (dwarf_haspc(&c, pc) != 1)
				break;
			if (tag != DW_TAG_lexical_block && *nch < CHAIN_MAX)
				chain[(*nch)++] = c;
			walk(&c, pc, chain, nch, depth + 1);
			return;
		case DW_TAG_namespace:
			before = *nch;
			walk(&c, pc, chain, nch, depth + 1);
			if (*nch > before)
				return;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

/* a block of scopes being gathered */
struct scope_vec {
	struct scope *v;
	uint32_t n, cap;
};

static bool vec_push(struct scope_vec *v, const struct scope *sc)
{
	if (v->n == v->cap) {
		uint32_t nc = v->cap ? v->cap * 2 : 8;
		struct scope *p;

		if (nc > UNIT_SCOPES_MAX)
			return false;
		p = realloc(v->v, nc * sizeof(*p));
		if (!p)
			return false;
		v->v = p;
		v->cap = nc;
	}
	v->v[v->n++] = *sc;
	return true;
}

static int scope_cmp(const void *a, const void *b)
{
	const struct scope *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* a block sorted, then appended to all: its first index there */
static bool vec_flush(struct scope_vec *all, struct scope_vec *blk,
		      uint32_t *first)
{
	*first = all->n;
	if (blk->n)
		qsort(blk->v, blk->n, sizeof(*blk->v), scope_cmp);
	for (uint32_t i = 0; i < blk->n; i++)
		if (!vec_push(all, &blk->v[i]))
			return false;
	return true;
}

/*
 * The scopes under parent into blk (this level's), their own children's
 * blocks into all first; namespaces and lexical blocks flattened into
 * this level.
 */
static bool gather(Dwarf_Die *parent, struct scope_vec *blk,
		   struct scope_vec *all, int depth)
{
	Dwarf_Die c;

	if (depth > WALK_DEPTH_MAX || dwarf_child(parent, &c) != 0)
		return true;
	do {
		int tag = dwarf_tag(&c);
		struct scope_vec kids = { 0 };
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;
		uint32_t first;
		bool ok;

		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
			ok = gather(&c, &kids, all, depth + 1) &&
			     vec_flush(all, &kids, &first);
			free(kids.v);
			if (!ok)
				return false;
			while ((it = dwarf_ranges(&c, it, &base, &lo, &hi)) > 0) {
				struct scope sc = {
					.lo = lo, .hi = hi,
					.die = dwarf_dieoffset(&c),
					.kids = first, .nkids = kids.n,
				};

				if (lo < hi && !vec_push(blk, &sc))
					return false;
			}
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_namespace:
			if (!gather(&c, blk, all, depth + 1))
				return false;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return true;
}

/* the index of unit cu, made at its first use; NULL: walk instead */
static struct unit_index *unit_index(struct dwarf_lines *d, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	struct scope_vec all = { 0 }, top = { 0 };
	struct unit_index *u;
	size_t h;

	if (!d->units_cap) {
		d->units = calloc(1024, sizeof(*d->units));
		if (!d->units)
			return NULL;
		d->units_cap = 1024;
	}
	/* open addressing; grown at half full */
	h = (off * 0x9e3779b97f4a7c15ull) >> 20;
	for (size_t i = 0; i < d->units_cap; i++) {
		u = d->units[(h + i) & (d->units_cap - 1)];
		if (!u)
			break;
		if (u->cu == off)
			return u->failed ? NULL : u;
	}
	if (d->nunits * 2 >= d->units_cap) {
		size_t nc = d->units_cap * 2;
		struct unit_index **n = calloc(nc, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t i = 0; i < d->units_cap; i++) {
			struct unit_index *x = d->units[i];
			size_t j = (x ? (x->cu * 0x9e3779b97f4a7c15ull) >> 20 : 0);

			while (x && n[j & (nc - 1)])
				j++;
			if (x)
				n[j & (nc - 1)] = x;
		}
		free(d->units);
		d->units = n;
		d->units_cap = nc;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->cu = off;
	if (d->index_bytes >= INDEX_BYTES_MAX ||
	    !gather(cu, &top, &all, 0) || !vec_flush(&all, &top, &u->top) ||
	    d->index_bytes + all.n * sizeof(struct scope) > INDEX_BYTES_MAX) {
		u->failed = true;
		free(all.v);
	} else {
		u->s = all.v;
		u->n = all.n;
		u->ntop = top.n;
		d->index_bytes += all.n * sizeof(struct scope) + sizeof(*u);
	}
	free(top.v);
	for (size_t i = 0;; i++) {
		struct unit_index **slot = &d->units[(h + i) & (d->units_cap - 1)];

		if (!*slot) {
			*slot = u;
			break;
		}
	}
	d->nunits++;
	return u->failed ? NULL : u;
}

/* the scope in s[first, first + n) holding pc, or NULL */
static const struct scope *scope_at(const struct scope *s, uint32_t first,
				    uint32_t n, uint64_t pc)
{
	uint32_t lo = first, hi = first + n;

	/* the last scope starting at or before pc */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* siblings do not overlap in sane DWARF; a few back if they do */
	for (uint32_t i = lo, k = 0; i > first && k < 8; i--, k++)
		if (pc < s[i - 1].hi)
			return &s[i - 1];
	return NULL;
}

/* walk's chain from the unit's index; false when it has none */
static bool chain_indexed(struct dwarf_lines *d, Dwarf_Die *cu,
			  uint64_t pc, Dwarf_Die *chain, int *nch)
{
	struct unit_index *u = unit_index(d, cu);
	uint32_t first, n;

	if (!u)
		return false;
	first = u->top;
	n = u->ntop;
	while (n && *nch < CHAIN_MAX) {
		const struct scope *sc = scope_at(u->s, first, n, pc);

		if (!sc || !dwarf_offdie(d->dw, sc->die, &chain[*nch]))
			break;
		(*nch)++;
		first = sc->kids;
		n = sc->nkids;
	}
	return true;
}

/* a function's name: its linkage name (C++: mangled), else its name,
 * through DW_AT_abstract_origin and DW_AT_specification */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		n = dwarf_formstring(&a);
	if (!n && dwarf_attr_integrate(die, DW_AT_name, &a))
		n = dwarf_formstring(&a);
	return n;
}

/* where the inlined call die was made: *file and *line, when known */
static void call_site(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles,
		      const char **file, int32_t *line)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	*file = NULL;
	*line = 0;
	if (files && dwarf_attr(die, DW_AT_call_file, &a) &&
	    dwarf_formudata(&a, &w) == 0 && w < nfiles)
		*file = dwarf_filesrc(files, w, NULL, NULL);
	if (dwarf_attr(die, DW_AT_call_line, &a) &&
	    dwarf_formudata(&a, &w) == 0 && w <= INT32_MAX)
		*line = (int32_t)w;
}

int dwarf_lines__find(struct dwarf_lines *d, uint64_t vaddr,
		      struct dwarf_line_frame *out, int max)
{
	struct dwarf_line_frame tmp[CHAIN_MAX];
	Dwarf_Die cu, chain[CHAIN_MAX];
	Dwarf_Files *files = NULL;
	Dwarf_Attribute a;
	Dwarf_Line *l;
	const char *file = NULL;
	size_t nfiles = 0;
	int32_t line = 0;
	int nch = 0, n = 0, lno;

	if (!d || max <= 0 || !find_cu(d, vaddr, &cu))
		return 0;
	/* a skeleton unit: its DIEs are in a .dwo file, not followed */
	if (dwarf_attr(&cu, DW_AT_dwo_name, &a) ||
	    dwarf_attr(&cu, DW_AT_GNU_dwo_name, &a))
		return 0;
	if (!chain_indexed(d, &cu, vaddr, chain, &nch))
		walk(&cu, vaddr, chain, &nch, 0);
	l = dwarf_getsrc_die(&cu, vaddr);
	if (l) {
		file = dwarf_linesrc(l, NULL, NULL);
		if (dwarf_lineno(l, &lno) == 0 && lno > 0)
			line = lno;
	}
	if (!nch) {
		if (!file)
			return 0;
		out[0] = (struct dwarf_line_frame){ NULL, file, line };
		return 1;
	}
	if (dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
		files = NULL;
	/* innermost first; each frame out of an inlined one is at its call */
	for (int i = nch - 1; i >= 0; i--) {
		tmp[n++] = (struct dwarf_line_frame){ die_name(&chain[i]),
						      file, line };
		if (i > 0)
			call_site(&chain[i], files, nfiles, &file, &line);
	}
	if (n > max) {
		/* the innermost max - 1 and the function itself */
		tmp[max - 1] = tmp[n - 1];
		n = max;
	}
	memcpy(out, tmp, (size_t)n * sizeof(*out));
	return n;
}
