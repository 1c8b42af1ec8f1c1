// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython processes (py_proc.h): the interpreter found in the maps, its
 * version and layout, and its code objects' names read from the process.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "python/py_layout.h"
#include "python/py_parse.h"
#include "python/py_proc.h"
#include "symbols/elf_symbols.h"
#include "symbols/maps.h"
#include "util/safe_open.h"
#include "util/u64map.h"

/* a code object's header: every field read lies before its first
 * instruction (3.11: 184 bytes) */
#define CODE_HDR_MAX	512

struct py_code {
	uint64_t type, filename, qualname, linetable;
	int32_t firstlineno;
	uint32_t lt_len;
	uint64_t checked;	/* the epoch it was last checked in */
	uint64_t poison_until;	/* py_proc__frame: seq below it unnamed */
	bool module;		/* func is "<module>": module-level code */
	const char *func, *file;
	uint8_t *lt;		/* the location table, lt_len bytes */
};

struct py_proc {
	pid_t pid;
	const struct py_layout *l;
	uint64_t code_type;	/* &PyCode_Type in the process */
	struct u64map codes;	/* code object -> struct py_code * */
	struct py_proc_stats stats;
	bool offline;		/* a recording's: never read the process */
	py_code_fn hook;
	void *hook_ctx;
};

/* the data symbols the reader needs, file addresses; 0 when absent */
struct py_syms {
	uint64_t runtime, version, code_type, ref_total;
	uint64_t bias_vaddr;	/* the PT_LOAD at file offset 0 */
	bool have_load;
};

static bool interp_name(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "python", 6) || !strncmp(b, "libpython", 9);
}

static void elf_syms(Elf *e, struct py_syms *s)
{
	Elf_Scn *scn = NULL;
	size_t nph = 0;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;
			uint64_t *slot = NULL;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!n || (n[0] != '_' && n[0] != 'P'))
				continue;
			if (!strcmp(n, "_PyRuntime"))
				slot = &s->runtime;
			else if (!strcmp(n, "Py_Version"))
				slot = &s->version;
			else if (!strcmp(n, "PyCode_Type"))
				slot = &s->code_type;
			else if (!strcmp(n, "_Py_RefTotal"))
				slot = &s->ref_total;
			if (slot && !*slot)
				*slot = sym.st_value;
		}
	}
	if (elf_getphdrnum(e, &nph))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_offset == 0) {
			s->bias_vaddr = ph.p_vaddr & ~0xfffull;
			s->have_load = true;
			break;
		}
	}
}

static int mem_read(pid_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec lo = { .iov_base = buf, .iov_len = n };
	struct iovec re = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };

	if (!addr || !n)
		return -EINVAL;
	ssize_t got = process_vm_readv(pid, &lo, 1, &re, 1, 0);

	if (got < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return got == (ssize_t)n ? 0 : -EFAULT;
}

/* the interpreter file mapped at e: its symbols, -errno */
static int read_syms(pid_t pid, int root_fd, const struct maps_entry *e,
		     struct py_syms *s)
{
	char mf[96];
	Elf *elf = NULL;
	int fd, ret = 0;

	fd = e->deleted || root_fd < 0 ? -ENOENT :
	     safe_open(root_fd, e->path, 0, ELF_FILE_MAX, NULL, NULL, 0);
	if (fd < 0) {
		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx",
			 (int)pid, (unsigned long long)e->start,
			 (unsigned long long)e->end);
		fd = safe_open(SAFE_OPEN_HOST, mf, SAFE_OPEN_PROC_LINK,
			       ELF_FILE_MAX, NULL, NULL, 0);
	}
	if (fd < 0)
		return fd;
	elf = elf_open_fd(fd);
	if (!elf) {
		ret = -EINVAL;
		goto cleanup;
	}
	memset(s, 0, sizeof(*s));
	elf_syms(elf, s);
cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

int py_proc__probe(pid_t pid, struct py_proc **out, struct asgst_py_proc *bpf,
		   char *why, size_t whylen)
{
	struct maps m = { 0 };
	struct py_syms s = { 0 };
	const struct maps_entry *hit = NULL;
	const struct py_layout *l;
	struct py_proc *pp;
	uint64_t bias, vhex = 0;
	int root_fd = -1, ret;

	*out = NULL;
	if (why && whylen)
		why[0] = '\0';
	ret = maps__read(pid, &m);
	if (ret)
		return ret;
	root_fd = safe_open__root(pid);
	/* the file that defines _PyRuntime: libpython, else the binary */
	for (size_t i = 0; i < m.n && !hit; i++) {
		const struct maps_entry *e = &m.e[i];

		if (e->kind != MAPS_FILE || e->pgoff || !e->path ||
		    !interp_name(e->path))
			continue;
		if (!read_syms(pid, root_fd, e, &s) && s.runtime &&
		    s.have_load)
			hit = e;
	}
	if (!hit) {
		ret = 0;
		goto cleanup;
	}
	bias = hit->start - s.bias_vaddr;
	if (!s.version ||
	    mem_read(pid, bias + s.version, &vhex, sizeof(vhex))) {
		snprintf(why, whylen, "CPython in %s has no readable "
			 "Py_Version (before 3.11): not supported, native "
			 "frames only", hit->path);
		ret = -1;
		goto cleanup;
	}
	l = py_layout__find((uint32_t)(vhex >> 16) & 0xffff);
	if (!l || s.ref_total || !s.code_type) {
		snprintf(why, whylen, "CPython %u.%u%s in %s: its layout is "
			 "not verified, native frames only",
			 (unsigned)(vhex >> 24) & 0xff,
			 (unsigned)(vhex >> 16) & 0xff,
			 s.ref_total ? " (debug build)" : "", hit->path);
		ret = -1;
		goto cleanup;
	}
	pp = calloc(1, sizeof(*pp));
	if (!pp) {
		ret = -ENOMEM;
		goto cleanup;
	}
	pp->pid = pid;
	pp->l = l;
	pp->code_type = bias + s.code_type;
	py_layout__to_bpf(l, bias + s.runtime, (uint32_t)vhex, bpf);
	*out = pp;
	ret = 1;
cleanup:
	if (root_fd >= 0)
		close(root_fd);
	maps__free(&m);
	return ret;
}

static void code_free(struct py_code *c)
{
	if (!c)
		return;
	free(c->lt);
	free(c);
}

static void codes_clear(struct py_proc *pp)
{
	for (size_t i = 0; i < pp->codes.cap; i++)
		if (pp->codes.vals && pp->codes.vals[i])
			code_free((struct py_code *)(uintptr_t)pp->codes.vals[i]);
	u64map__free(&pp->codes);
	memset(&pp->codes, 0, sizeof(pp->codes));
}

void py_proc__free(struct py_proc *pp)
{
	if (!pp)
		return;
	codes_clear(pp);
	free(pp);
}

const char *py_proc__version(const struct py_proc *pp)
{
	return pp ? pp->l->name : NULL;
}

void py_proc__stats(const struct py_proc *pp, struct py_proc_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (pp)
		*out = pp->stats;
}

static uint64_t word(const uint8_t *b, int32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/* a str object of the process as UTF-8, interned; NULL if not a str */
static const char *read_str(struct py_proc *pp, struct strtab *st,
			    uint64_t addr)
{
	uint8_t hdr[128], data[PY_STR_MAX_CHARS * 4];
	char utf8[PY_STR_MAX_CHARS * 4 + 4];
	struct py_str_info si;
	size_t hlen = (size_t)pp->l->str_data;

	if (hlen > sizeof(hdr) || mem_read(pp->pid, addr, hdr, hlen) ||
	    py_str__header(hdr, hlen, pp->l, &si))
		return NULL;
	if (si.length && mem_read(pp->pid, addr + si.data_off, data,
				  (size_t)si.length * si.kind))
		return NULL;
	py_str__utf8(data, si.length, si.kind, utf8, sizeof(utf8));
	return strtab__intern(st, utf8);
}

/* a bytes object's contents (at most PY_LINETABLE_MAX); NULL if none */
static uint8_t *read_bytes(struct py_proc *pp, uint64_t addr, uint32_t *len)
{
	uint8_t hdr[64];
	uint64_t n;
	uint8_t *b;

	if ((size_t)pp->l->bytes_data > sizeof(hdr) ||
	    mem_read(pp->pid, addr, hdr, (size_t)pp->l->bytes_data))
		return NULL;
	n = word(hdr, pp->l->bytes_size);
	if (n > PY_LINETABLE_MAX)
		return NULL;
	b = malloc(n ? n : 1);
	if (!b)
		return NULL;
	if (n && mem_read(pp->pid, addr + pp->l->bytes_data, b, n)) {
		free(b);
		return NULL;
	}
	*len = (uint32_t)n;
	return b;
}

/* the fields of the code object at addr that its names come from */
static int read_code_hdr(struct py_proc *pp, uint64_t addr, struct py_code *c)
{
	const struct py_layout *l = pp->l;
	uint8_t b[CODE_HDR_MAX];
	size_t n = (size_t)l->co_code;
	int32_t fl;

	int ret;

	if (n > sizeof(b))
		return -EINVAL;
	ret = mem_read(pp->pid, addr, b, n);
	if (ret)
		return ret;
	c->type = word(b, l->ob_type);
	c->filename = word(b, l->co_filename);
	c->qualname = word(b, l->co_qualname);
	c->linetable = word(b, l->co_linetable);
	memcpy(&fl, b + l->co_firstlineno, 4);
	c->firstlineno = fl;
	return c->type == pp->code_type ? 0 : -EINVAL;
}

static void code_view(const struct py_code *c, uint64_t addr,
		      struct py_code_view *v)
{
	v->code = addr;
	v->version = 0;
	v->firstlineno = c->firstlineno;
	v->lt_len = c->lt ? c->lt_len : 0;
	v->func = c->func;
	v->file = c->file;
	v->lt = c->lt;
	v->poison_until = c->poison_until;
}

void py_proc__set_hook(struct py_proc *pp, py_code_fn fn, void *ctx)
{
	if (!pp)
		return;
	pp->hook = fn;
	pp->hook_ctx = ctx;
}

void py_proc__each_code(const struct py_proc *pp, py_code_fn fn, void *ctx)
{
	struct py_code_view v;

	if (!pp || !pp->codes.vals)
		return;
	for (size_t i = 0; i < pp->codes.cap; i++) {
		if (!pp->codes.vals[i])
			continue;
		code_view((const struct py_code *)(uintptr_t)pp->codes.vals[i],
			  pp->codes.keys[i], &v);
		v.version = pp->l->version;
		fn(ctx, pp->pid, &v);
	}
}

struct py_proc *py_proc__new_offline(pid_t pid, uint32_t version)
{
	const struct py_layout *l = py_layout__find(version);
	struct py_proc *pp;

	if (!l || !(pp = calloc(1, sizeof(*pp))))
		return NULL;
	pp->pid = pid;
	pp->l = l;
	pp->offline = true;
	return pp;
}

/* c at addr, in place of what was there (freed); 0 or -ENOMEM */
static int code_put(struct py_proc *pp, uint64_t addr, struct py_code *c)
{
	struct py_code *old;

	old = (struct py_code *)(uintptr_t)u64map__get(&pp->codes, addr);
	if (!old && pp->codes.n >= PY_CODES_MAX)
		codes_clear(pp);
	if (u64map__put(&pp->codes, addr, (uint64_t)(uintptr_t)c))
		return -ENOMEM;
	code_free(old);
	return 0;
}

int py_proc__add_code(struct py_proc *pp, struct strtab *st,
		      const struct py_code_view *v)
{
	struct py_code *c;

	if (!pp || !v || !v->code || v->lt_len > PY_LINETABLE_MAX)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->firstlineno = v->firstlineno;
	c->poison_until = v->poison_until;
	c->func = v->func ? strtab__intern(st, v->func) : NULL;
	c->module = c->func && !strcmp(c->func, "<module>");
	c->file = v->file ? strtab__intern(st, v->file) : NULL;
	if (v->lt && v->lt_len) {
		c->lt = malloc(v->lt_len);
		if (c->lt) {
			memcpy(c->lt, v->lt, v->lt_len);
			c->lt_len = v->lt_len;
		}
	}
	if (!c->func || !c->file || (v->lt_len && !c->lt) ||
	    code_put(pp, v->code, c)) {
		code_free(c);
		return -ENOMEM;
	}
	return 0;
}

static struct py_code *read_code(struct py_proc *pp, struct strtab *st,
				 uint64_t addr)
{
	struct py_code *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (read_code_hdr(pp, addr, c) ||
	    !(c->func = read_str(pp, st, c->qualname)) ||
	    !(c->file = read_str(pp, st, c->filename))) {
		code_free(c);
		return NULL;
	}
	c->module = !strcmp(c->func, "<module>");
	/* no table: the frames of this code are named, without lines */
	c->lt = read_bytes(pp, c->linetable, &c->lt_len);
	pp->stats.codes++;
	return c;
}

/* a frame of module-level code (ASGST_PYF_MODULE) runs "<module>", a
 * function's (ASGST_PYF_FUNC) anything else; neither flag: not known */
static bool kind_differs(uint32_t flags, const struct py_code *c)
{
	return ((flags & ASGST_PYF_MODULE) && !c->module) ||
	       ((flags & ASGST_PYF_FUNC) && c->module);
}

bool py_proc__frame(struct py_proc *pp, struct strtab *st, uint64_t code,
		    uint32_t instr, uint32_t flags, uint64_t epoch, uint64_t seq,
		    uint64_t seq_next, const char **func, const char **file,
		    int32_t *line)
{
	struct py_code *c, now;
	struct py_code_view v;
	uint64_t poison = 0;
	int64_t idx = -1;
	int ret;

	if (!pp || !code)
		return false;
	c = (struct py_code *)(uintptr_t)u64map__get(&pp->codes, code);
	if (!c && pp->offline) {
		pp->stats.bad++;
		return false;
	}
	if (c && c->checked != epoch && !pp->offline) {
		/*
		 * The object may have been freed and its memory reused by
		 * another since it was read: its type and the fields its
		 * names came from must still say the same.
		 */
		pp->stats.rechecks++;
		ret = read_code_hdr(pp, code, &now);
		/* gone (an exit): its memory cannot have been reused since */
		if (ret == -ESRCH) {
			/* as it was */
		} else if (ret || now.type != c->type ||
			   now.filename != c->filename ||
			   now.qualname != c->qualname ||
			   now.linetable != c->linetable ||
			   now.firstlineno != c->firstlineno) {
			pp->stats.stale++;
			u64map__del(&pp->codes, code);
			code_free(c);
			c = NULL;
			/* what waits to be decoded may have run the old one */
			poison = seq_next;
		}
	}
	if (!c) {
		c = read_code(pp, st, code);
		if (!c) {
			pp->stats.bad++;
			return false;
		}
		c->poison_until = poison;
		if (code_put(pp, code, c)) {
			code_free(c);
			return false;
		}
		if (pp->hook) {
			code_view(c, code, &v);
			v.version = pp->l->version;
			pp->hook(pp->hook_ctx, pp->pid, &v);
		}
	}
	c->checked = epoch;
	if (seq < c->poison_until) {
		pp->stats.poisoned++;
		return false;
	}
	/*
	 * A module's code is freed once it has run, in the middle of
	 * imports: what the frame ran may be gone and another object in
	 * its memory by the time it is read.
	 */
	if (kind_differs(flags, c)) {
		pp->stats.other_kind++;
		return false;
	}
	if (instr != ~0u && instr >= (uint32_t)pp->l->co_code)
		idx = ((int64_t)instr - pp->l->co_code) / 2;
	*func = c->func;
	*file = c->file;
	*line = py_linetable__line(c->lt, c->lt_len, c->firstlineno, idx);
	return true;
}
