// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ELF symbol tables with libelf. The Elf handle is only open while loading:
 * names are copied into one pool per module so a module costs its symbols
 * and nothing else afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "symbols/elf_symbols.h"
#include "util/safe_open.h"

#define MAX_LOADS	16
#define MAX_SYMS	(1u << 24)	/* 16M: beyond any real module */
#define NESTED_SCAN	8
#define ELF_MAX_SECTIONS	65536	/* far beyond any linked module */
#define ELF_SECTION_MAX	(512ull << 20)	/* a symbol or string table */
#define ELF_SMALL_SCN_MAX	(1u << 20)	/* notes, section names */
#define CRC_CHUNK	(1u << 20)

struct esym {
	uint64_t addr;
	uint64_t size;
	uint32_t name;		/* offset into names */
	uint8_t rank;		/* lower is better at one address */
};

struct eload {
	uint64_t offset, vaddr, filesz;
	bool exec;
};

struct elf_module {
	struct esym *syms;
	size_t nsyms;
	const char **display;	/* lazily allocated, nsyms entries */
	char *names;
	size_t names_len, names_cap;
	struct eload loads[MAX_LOADS];
	int nloads;
	uint8_t build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
	unsigned int sources;
};

static void elf_init(void)
{
	static int done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = 1;
	}
}

/* an n-byte unsigned field in the file's byte order */
static uint64_t rd_uint(const uint8_t *p, int n, bool be)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
	return v;
}

/*
 * libelf sizes its tables by the header's counts, bounded only by the file
 * size: a forged count in a big sparse file would cost gigabytes before
 * anything is checked. Section and program header counts beyond what any
 * real module has are refused here, from the header alone.
 */
static bool elf_counts_sane(int fd)
{
	uint8_t h[64], s0[64];
	uint64_t shoff, shnum, phnum;
	bool is64, be;

	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h, ELFMAG, SELFMAG))
		return true;	/* not ELF: libelf says so itself */
	is64 = h[EI_CLASS] == ELFCLASS64;
	be = h[EI_DATA] == ELFDATA2MSB;
	shoff = is64 ? rd_uint(h + 0x28, 8, be) : rd_uint(h + 0x20, 4, be);
	phnum = is64 ? rd_uint(h + 0x38, 2, be) : rd_uint(h + 0x2c, 2, be);
	shnum = is64 ? rd_uint(h + 0x3c, 2, be) : rd_uint(h + 0x30, 2, be);
	if (phnum == PN_XNUM)
		return false;
	if (shnum == 0 && shoff != 0) {
		/* extended numbering: the count is section 0's sh_size */
		if (shoff > INT64_MAX ||
		    pread(fd, s0, sizeof(s0), (off_t)shoff) != (ssize_t)sizeof(s0))
			return false;
		shnum = is64 ? rd_uint(s0 + 0x20, 8, be) : rd_uint(s0 + 0x14, 4, be);
	}
	return shnum <= ELF_MAX_SECTIONS;
}

/*
 * ELF_C_READ, not ELF_C_READ_MMAP: libelf preads what it needs into its
 * own memory, so a file truncated under us is a read error, not SIGBUS.
 */
static Elf *elf_begin_fd(int fd)
{
	elf_init();
	if (!elf_counts_sane(fd))
		return NULL;
	return elf_begin(fd, ELF_C_READ, NULL);
}

Elf *elf_open_fd(int fd)
{
	return elf_begin_fd(fd);
}

/* a section libelf would read whole is no bigger than max */
static bool scn_size_ok(Elf *e, size_t idx, uint64_t max)
{
	Elf_Scn *scn = elf_getscn(e, idx);
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) &&
	       (sh.sh_type == SHT_NOBITS || sh.sh_size <= max);
}

void elf_build_id_hex(const uint8_t *id, size_t len, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * len] = '\0';
}

/* NT_GNU_BUILD_ID from the SHT_NOTE sections; length or 0 */
static size_t find_build_id(Elf *e, uint8_t *id, size_t cap)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    sh.sh_size > ELF_SMALL_SCN_MAX)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + noff, "GNU", 4) == 0 &&
			    nh.n_descsz > 0 && nh.n_descsz <= cap) {
				memcpy(id, (char *)d->d_buf + doff, nh.n_descsz);
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

int elf_read_build_id(int fd, uint8_t *id, size_t cap)
{
	Elf *e;
	size_t n;

	e = elf_begin_fd(fd);
	if (!e)
		return -ENOEXEC;
	if (elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return -ENOEXEC;
	}
	n = find_build_id(e, id, cap);
	elf_end(e);
	return n ? (int)n : -ENOENT;
}

static int add_name(struct elf_module *m, const char *s, uint32_t *off)
{
	size_t n = strlen(s) + 1;

	if (m->names_len + n > UINT32_MAX)
		return -E2BIG;
	if (m->names_len + n > m->names_cap) {
		size_t nc = m->names_cap ? m->names_cap * 2 : 4096;
		char *p;

		while (nc < m->names_len + n)
			nc *= 2;
		p = realloc(m->names, nc);
		if (!p)
			return -ENOMEM;
		m->names = p;
		m->names_cap = nc;
	}
	memcpy(m->names + m->names_len, s, n);
	*off = m->names_len;
	m->names_len += n;
	return 0;
}

/* one more symbol, its name copied; rank as in add_symbols() */
static int add_sym(struct elf_module *m, size_t *cap, uint64_t addr,
		   uint64_t size, const char *name, uint8_t rank)
{
	uint32_t off;

	if (m->nsyms == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		struct esym *ns;

		if (nc > MAX_SYMS)
			return -E2BIG;
		ns = realloc(m->syms, nc * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		m->syms = ns;
		*cap = nc;
	}
	if (add_name(m, name, &off))
		return -ENOMEM;
	m->syms[m->nsyms++] = (struct esym){ .addr = addr, .size = size,
					     .name = off, .rank = rank };
	return 0;
}

static bool scn_exec(Elf *e, size_t shndx)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return false;
	scn = elf_getscn(e, shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/*
 * The end of section shndx's addresses, 0 if unknown: a symbol without a
 * size ends there at the latest (_init, with the PLT stubs after it in
 * the next section, names none of them).
 */
static uint64_t scn_end(Elf *e, size_t shndx)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return 0;
	scn = elf_getscn(e, shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || !sh.sh_size)
		return 0;
	return sh.sh_addr + sh.sh_size;
}

/* add the function symbols of every section of type `type`; count added */
static long add_symbols(struct elf_module *m, Elf *e, Elf64_Word type,
			size_t *cap)
{
	Elf_Scn *scn = NULL;
	long added = 0;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type ||
		    sh.sh_entsize == 0 || sh.sh_size > ELF_SECTION_MAX ||
		    !scn_size_ok(e, sh.sh_link, ELF_SECTION_MAX))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		n = d->d_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym s;
			const char *name;
			int st, rank;
			uint64_t size;
			int ret;

			if (!gelf_getsym(d, i, &s) || s.st_value == 0 ||
			    s.st_shndx == SHN_UNDEF)
				continue;
			st = GELF_ST_TYPE(s.st_info);
			if (st == STT_FUNC || st == STT_GNU_IFUNC) {
				rank = 0;
			} else if ((st == STT_OBJECT || st == STT_NOTYPE) &&
				   s.st_size > 0 && scn_exec(e, s.st_shndx)) {
				/* sized labels in code (hand-written asm) */
				rank = 4;
			} else {
				continue;
			}
			if (GELF_ST_BIND(s.st_info) == STB_LOCAL)
				rank += 1;
			if (s.st_size == 0)
				rank += 2;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			size = s.st_size;
			if (!size) {
				uint64_t end = scn_end(e, s.st_shndx);

				if (end > s.st_value)
					size = end - s.st_value;
			}
			ret = add_sym(m, cap, s.st_value, size, name, (uint8_t)rank);
			if (ret)
				return ret;
			added++;
		}
	}
	return added;
}

static int esym_cmp(const void *a, const void *b)
{
	const struct esym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;	/* larger first */
	return x->name < y->name ? -1 : x->name > y->name;
}

/* sort and keep one symbol per address (the best ranked) */
static void finish_symbols(struct elf_module *m)
{
	size_t i, j = 0;

	if (!m->nsyms)
		return;
	qsort(m->syms, m->nsyms, sizeof(*m->syms), esym_cmp);
	for (i = 0; i < m->nsyms; i++) {
		if (j && m->syms[j - 1].addr == m->syms[i].addr)
			continue;
		m->syms[j++] = m->syms[i];
	}
	m->nsyms = j;
}

/*
 * A program's entry point with no symbol (the dynamic loader's _start on
 * a distribution without its .symtab): named as the ELF header places it,
 * a few bytes only, so the unnamed code after it stays unnamed.
 */
static int add_entry_symbol(struct elf_module *m, Elf *e, size_t *cap)
{
	uint64_t size = ELF_ENTRY_CODE_BYTES;
	GElf_Ehdr eh;
	int ret;

	if (!gelf_getehdr(e, &eh) || !eh.e_entry ||
	    elf_module__lookup(m, eh.e_entry) >= 0)
		return 0;
	/* up to the next named function at most */
	for (size_t i = 0; i < m->nsyms; i++)
		if (m->syms[i].addr > eh.e_entry &&
		    m->syms[i].addr - eh.e_entry < size)
			size = m->syms[i].addr - eh.e_entry;
	ret = add_sym(m, cap, eh.e_entry, size, "_start", 7);
	if (ret)
		return ret == -E2BIG ? 0 : ret;
	finish_symbols(m);
	return 0;
}

/*
 * PLT stubs, which no symbol table names, are "name@plt" as objdump and
 * perf call them. Each stub of .plt, .plt.sec and .plt.got jumps through
 * a GOT slot (jmp *disp(%rip), after an endbr64 and a bnd prefix where
 * the linker put them) that a JUMP_SLOT or GLOB_DAT relocation against
 * the dynamic symbol table names; an IRELATIVE one names the resolver
 * (an IFUNC's symbol: libc's strchr@plt where objdump says
 * *ABS*+0x9f550@plt). x86-64 only, as the decoder is.
 */
struct got_slot {
	uint64_t addr;
	const char *name;	/* in the Elf's dynamic string table */
	size_t sym;		/* else the module's symbol of this index */
};

#define GOT_SLOTS_MAX	(1u << 20)
#define PLT_RANK	6	/* below any symbol a table has */

static int got_slot_cmp(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* the named GOT slots of the relocations against dynsym (index dsi) */
static int got_slots(const struct elf_module *m, Elf *e, size_t dsi,
		     struct got_slot **out, size_t *n)
{
	Elf_Scn *dscn = elf_getscn(e, dsi), *scn = NULL;
	struct got_slot *v = NULL;
	size_t cap = 0, cnt = 0;
	Elf_Data *dd;
	GElf_Shdr dsh;

	if (!dscn || !gelf_getshdr(dscn, &dsh) ||
	    !scn_size_ok(e, dsh.sh_link, ELF_SECTION_MAX) ||
	    !(dd = elf_getdata(dscn, NULL)))
		goto done;
	while ((scn = elf_nextscn(e, scn)) != NULL && cnt < GOT_SLOTS_MAX) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_link != dsi || sh.sh_size > ELF_SECTION_MAX ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (int i = 0; cnt < GOT_SLOTS_MAX; i++) {
			const char *name = NULL;
			long idx = -1;
			GElf_Rela r;
			GElf_Sym sym;

			if (!gelf_getrela(d, i, &r))
				break;
			if (GELF_R_TYPE(r.r_info) == R_X86_64_IRELATIVE) {
				idx = elf_module__lookup(m, (uint64_t)r.r_addend);
				if (idx < 0 ||
				    m->syms[idx].addr != (uint64_t)r.r_addend)
					continue;
			} else if ((GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT &&
				    GELF_R_TYPE(r.r_info) != R_X86_64_GLOB_DAT) ||
				   !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info),
						&sym) ||
				   !(name = elf_strptr(e, dsh.sh_link,
						       sym.st_name)) ||
				   !*name) {
				continue;
			}
			if (cnt == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct got_slot *nv = realloc(v, nc * sizeof(*v));

				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
				cap = nc;
			}
			v[cnt++] = (struct got_slot){ r.r_offset, name,
						      (size_t)idx };
		}
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), got_slot_cmp);
done:
	*out = v;
	*n = cnt;
	return 0;
}

/* where a stub's jmp *disp(%rip) starts in its n bytes, or -1 */
static int plt_jmp_at(const uint8_t *p, size_t n)
{
	size_t i = 0;

	if (n >= 4 && p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e &&
	    p[3] == 0xfa)
		i = 4;			/* endbr64 */
	if (i < n && p[i] == 0xf2)
		i++;			/* bnd */
	if (i + 6 > n || p[i] != 0xff || p[i + 1] != 0x25)
		return -1;
	return (int)i;
}

/* the stubs of one PLT section named after their slots */
static int add_plt_section(struct elf_module *m, size_t *cap, Elf_Scn *scn,
			   const GElf_Shdr *sh, const struct got_slot *slots,
			   size_t nslots)
{
	uint64_t es = sh->sh_entsize == 8 || sh->sh_entsize == 16 ?
		      sh->sh_entsize : 16;
	Elf_Data *d = elf_getdata(scn, NULL);
	char name[512];
	int added = 0;

	if (!d || !d->d_buf)
		return 0;
	for (uint64_t off = 0; off + es <= d->d_size; off += es) {
		const uint8_t *p = (const uint8_t *)d->d_buf + off;
		int j = plt_jmp_at(p, es);
		struct got_slot key, *hit;
		int ret;

		if (j < 0)
			continue;
		key.addr = sh->sh_addr + off + (uint64_t)j + 6 +
			   (uint64_t)(int64_t)(int32_t)rd_uint(p + j + 2, 4,
							       false);
		hit = bsearch(&key, slots, nslots, sizeof(*slots),
			      got_slot_cmp);
		/* a symbol's name by index: add_sym() moves the names */
		if (!hit || (size_t)snprintf(name, sizeof(name), "%s@plt",
					     hit->name ? hit->name :
					     m->names + m->syms[hit->sym].name)
				    >= sizeof(name))
			continue;
		ret = add_sym(m, cap, sh->sh_addr + off, es, name, PLT_RANK);
		if (ret)
			return ret == -E2BIG ? added : ret;
		added++;
	}
	return added;
}

static long add_plt_symbols(struct elf_module *m, Elf *e, size_t *cap)
{
	struct got_slot *slots = NULL;
	Elf_Scn *scn = NULL;
	size_t nslots = 0, dsi = 0, shstr;
	long added = 0;
	GElf_Ehdr eh;
	int ret;

	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(e, &shstr))
		return 0;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM &&
		    sh.sh_size <= ELF_SECTION_MAX) {
			dsi = elf_ndxscn(scn);
			break;
		}
	}
	if (!dsi)
		return 0;
	finish_symbols(m);	/* sorted, for the resolvers' look-ups */
	ret = got_slots(m, e, dsi, &slots, &nslots);
	if (ret)
		return ret;
	scn = NULL;
	while (nslots && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *sn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_size > ELF_SMALL_SCN_MAX * 16 ||
		    !(sn = elf_strptr(e, shstr, sh.sh_name)) ||
		    (strcmp(sn, ".plt") && strcmp(sn, ".plt.sec") &&
		     strcmp(sn, ".plt.got")))
			continue;
		ret = add_plt_section(m, cap, scn, &sh, slots, nslots);
		if (ret < 0) {
			added = ret;
			break;
		}
		added += ret;
	}
	free(slots);
	return added;
}

static void read_loads(struct elf_module *m, Elf *e)
{
	size_t n, i;

	if (elf_getphdrnum(e, &n) != 0)
		return;
	for (i = 0; i < n && m->nloads < MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->loads[m->nloads].offset = ph.p_offset;
		m->loads[m->nloads].vaddr = ph.p_vaddr;
		m->loads[m->nloads].filesz = ph.p_filesz;
		m->loads[m->nloads].exec = ph.p_flags & PF_X;
		m->nloads++;
	}
}

/* .gnu_debuglink: file name and CRC; 0 or -ENOENT */
static int read_debuglink(Elf *e, char *name, size_t cap, uint32_t *crc)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx) != 0 ||
	    !scn_size_ok(e, shstrndx, ELF_SMALL_SCN_MAX))
		return -ENOENT;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *sn;
		Elf_Data *d;
		size_t len, crc_off;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sn = elf_strptr(e, shstrndx, sh.sh_name);
		if (sn && !strcmp(sn, ".gnu_debuglink") && sh.sh_size > 4096)
			return -ENOENT;
		if (!sn || strcmp(sn, ".gnu_debuglink") != 0)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < 8)
			return -ENOENT;
		len = strnlen(d->d_buf, d->d_size);
		crc_off = (len + 4) & ~(size_t)3;
		if (len == 0 || len >= cap || crc_off + 4 > d->d_size ||
		    memchr(d->d_buf, '/', len))
			return -ENOENT;
		memcpy(name, d->d_buf, len);
		name[len] = '\0';
		memcpy(crc, (char *)d->d_buf + crc_off, 4);
		return 0;
	}
	return -ENOENT;
}

/* pread in chunks, never mmap: the file may be truncated while read */
static bool file_crc_matches(int fd, uint32_t want)
{
	struct stat st;
	uint64_t done = 0;
	Bytef *buf;
	uLong crc;
	bool ok = false;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > ELF_FILE_MAX)
		return false;
	buf = malloc(CRC_CHUNK);
	if (!buf)
		return false;
	/* zlib's crc32 is the CRC that .gnu_debuglink records */
	crc = crc32(0L, Z_NULL, 0);
	while (done < (uint64_t)st.st_size) {
		size_t want_n = (uint64_t)st.st_size - done > CRC_CHUNK ?
				CRC_CHUNK : (size_t)((uint64_t)st.st_size - done);
		ssize_t r = pread(fd, buf, want_n, (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			goto cleanup;	/* shrank under us, or unreadable */
		crc = crc32(crc, buf, (uInt)r);
		done += (uint64_t)r;
	}
	ok = (uint32_t)crc == want;
cleanup:
	free(buf);
	return ok;
}

/*
 * A debug file candidate: fd, or -errno. A file that is there but refused
 * (not a regular file, a link out of its root, too big) is noted in
 * o->refused, the first one only, for the caller's message.
 */
static int open_debug(const struct elf_module_opts *o, int root_fd,
		      const char *path)
{
	char why[SAFE_OPEN_WHY_MAX];
	int fd = safe_open(root_fd, path, 0, ELF_FILE_MAX, NULL, why,
			   sizeof(why));

	if (fd < 0 && fd != -ENOENT && fd != -ENOTDIR && o && o->refused &&
	    o->refusedlen && !o->refused[0])
		snprintf(o->refused, o->refusedlen, "debug file %s: %s", path,
			 why);
	return fd;
}

/* a separate debug file with the same build-id (if we know it); fd or -1 */
static int open_debug_file(struct elf_module *m, Elf *e,
			   const struct elf_module_opts *o, unsigned int *src)
{
	const char *root = o && o->debug_root ? o->debug_root :
			   ELF_DEFAULT_DEBUG_ROOT;
	int root_fd = o ? o->root_fd : -1;
	char path[2 * PATH_MAX + 512], hex[2 * ELF_BUILD_ID_MAX + 1];
	char link[256], dir[PATH_MAX];
	uint32_t crc;
	int fd;

	if (m->build_id_len >= 2) {
		elf_build_id_hex(m->build_id, m->build_id_len, hex);
		/* the target's own debug packages first, then the host's */
		for (int i = root_fd >= 0 ? 0 : 1; i < 2; i++) {
			uint8_t id[ELF_BUILD_ID_MAX];
			int n;

			if (i == 0)
				snprintf(path, sizeof(path),
					 ELF_DEFAULT_DEBUG_ROOT "/.build-id/%.2s/%s.debug",
					 hex, hex + 2);
			else
				snprintf(path, sizeof(path),
					 "%s/.build-id/%.2s/%s.debug", root, hex,
					 hex + 2);
			fd = open_debug(o, i == 0 ? root_fd : SAFE_OPEN_HOST, path);
			if (fd < 0)
				continue;
			n = elf_read_build_id(fd, id, sizeof(id));
			if (n == (int)m->build_id_len &&
			    memcmp(id, m->build_id, n) == 0) {
				*src = ELF_SRC_DEBUG_BUILDID;
				return fd;
			}
			close(fd);
		}
	}
	if (!o || !o->path || read_debuglink(e, link, sizeof(link), &crc))
		return -1;
	snprintf(dir, sizeof(dir), "%s", o->path);
	{
		char *slash = strrchr(dir, '/');

		if (!slash)
			return -1;
		*slash = '\0';
	}
	for (int i = 0; i < 3; i++) {
		int rfd = root_fd, r;

		if (i == 0)
			r = snprintf(path, sizeof(path), "%s/%s", dir, link);
		else if (i == 1)
			r = snprintf(path, sizeof(path), "%s/.debug/%s", dir, link);
		else {
			r = snprintf(path, sizeof(path), "%s%s/%s", root, dir, link);
			rfd = SAFE_OPEN_HOST;
		}
		if (r < 0 || (size_t)r >= sizeof(path))
			continue;
		fd = open_debug(o, rfd, path);
		if (fd < 0)
			continue;
		if (file_crc_matches(fd, crc)) {
			*src = ELF_SRC_DEBUG_LINK;
			return fd;
		}
		close(fd);
	}
	return -1;
}

int elf_debug_file_open(int fd, const struct elf_module_opts *o)
{
	struct elf_module *m;
	unsigned int src = 0;
	int dfd = -ENOENT;
	Elf *e;

	e = elf_begin_fd(fd);
	if (!e)
		return -ENOEXEC;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto cleanup;
	if (elf_kind(e) == ELF_K_ELF) {
		m->build_id_len = find_build_id(e, m->build_id,
						sizeof(m->build_id));
		dfd = open_debug_file(m, e, o, &src);
		if (dfd < 0)
			dfd = -ENOENT;
	}
cleanup:
	free(m);
	elf_end(e);
	return dfd;
}

static struct elf_module *load_elf(Elf *e, const struct elf_module_opts *o,
				   bool allow_debug)
{
	struct elf_module *m;
	size_t cap = 0;
	long n;
	int err = 0;

	if (elf_kind(e) != ELF_K_ELF) {
		errno = ENOEXEC;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->build_id_len = find_build_id(e, m->build_id, sizeof(m->build_id));
	read_loads(m, e);
	n = add_symbols(m, e, SHT_SYMTAB, &cap);
	if (n < 0) {
		err = -n;
		goto cleanup;
	}
	if (n > 0)
		m->sources |= ELF_SRC_SYMTAB;
	if (n == 0) {
		/* stripped: exported symbols plus whatever a debug file has */
		n = add_symbols(m, e, SHT_DYNSYM, &cap);
		if (n < 0) {
			err = -n;
			goto cleanup;
		}
		if (n > 0)
			m->sources |= ELF_SRC_DYNSYM;
		if (allow_debug) {
			unsigned int src = 0;
			int dfd = open_debug_file(m, e, o, &src);

			if (dfd >= 0) {
				Elf *de = elf_begin_fd(dfd);

				if (de && elf_kind(de) == ELF_K_ELF) {
					n = add_symbols(m, de, SHT_SYMTAB, &cap);
					if (n > 0)
						m->sources |= src;
				}
				if (de)
					elf_end(de);
				close(dfd);
				if (n < 0) {
					err = -n;
					goto cleanup;
				}
			}
		}
	}
	n = add_plt_symbols(m, e, &cap);
	if (n < 0) {
		err = -n;
		goto cleanup;
	}
	finish_symbols(m);
	err = -add_entry_symbol(m, e, &cap);
cleanup:
	if (err) {
		elf_module__free(m);
		errno = err;
		return NULL;
	}
	return m;
}

int elf_module__add_debug_symbols(struct elf_module *m, int dfd)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t cap, n0;
	long n;
	Elf *de;

	if (!m || (m->sources & (ELF_SRC_SYMTAB | ELF_SRC_DEBUG_BUILDID |
				 ELF_SRC_DEBUG_LINK)))
		return 0;
	de = elf_begin_fd(dfd);
	if (!de)
		return -ENOEXEC;
	if (elf_kind(de) != ELF_K_ELF || !m->build_id_len ||
	    find_build_id(de, id, sizeof(id)) != m->build_id_len ||
	    memcmp(id, m->build_id, m->build_id_len)) {
		elf_end(de);
		return -EINVAL;
	}
	n0 = m->nsyms;
	cap = m->nsyms;
	n = add_symbols(m, de, SHT_SYMTAB, &cap);
	elf_end(de);
	if (n < 0) {
		/* what was added is dropped: the table stays as it was */
		m->nsyms = n0;
		return (int)n;
	}
	if (n > 0) {
		m->sources |= ELF_SRC_DEBUG_BUILDID;
		finish_symbols(m);
		/* display names are by index: the indices moved */
		free(m->display);
		m->display = NULL;
	}
	return (int)(n > 0);
}

struct elf_module *elf_module__load(int fd, const struct elf_module_opts *o)
{
	struct elf_module *m;
	Elf *e;

	e = elf_begin_fd(fd);
	if (!e) {
		errno = ENOEXEC;
		return NULL;
	}
	m = load_elf(e, o, true);
	elf_end(e);
	return m;
}

struct elf_module *elf_module__load_mem(const void *img, size_t len)
{
	struct elf_module *m;
	char *copy;
	Elf *e;

	elf_init();
	/* libelf may convert in place: give it a private copy */
	copy = malloc(len);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(copy, img, len);
	e = elf_memory(copy, len);
	if (!e) {
		free(copy);
		errno = ENOEXEC;
		return NULL;
	}
	m = load_elf(e, NULL, false);
	elf_end(e);
	free(copy);
	return m;
}

void elf_module__free(struct elf_module *m)
{
	if (!m)
		return;
	free(m->syms);
	free(m->names);
	free(m->display);
	free(m);
}

size_t elf_module__nsyms(const struct elf_module *m)
{
	return m ? m->nsyms : 0;
}

unsigned int elf_module__sources(const struct elf_module *m)
{
	return m ? m->sources : 0;
}

const uint8_t *elf_module__build_id(const struct elf_module *m, size_t *len)
{
	*len = m ? m->build_id_len : 0;
	return m && m->build_id_len ? m->build_id : NULL;
}

uint64_t elf_module__bias(const struct elf_module *m, uint64_t start,
			  uint64_t pgoff, bool exec)
{
	const struct eload *best = NULL;
	int i;

	for (i = 0; m && i < m->nloads; i++) {
		const struct eload *l = &m->loads[i];
		uint64_t lo = l->offset & ~(uint64_t)0xfff;

		if (pgoff < lo || pgoff >= l->offset + (l->filesz ? l->filesz : 1))
			continue;
		if (!best || (l->exec == exec && best->exec != exec))
			best = l;
	}
	if (!best)
		return start - pgoff;
	/* start - pgoff == bias + (p_vaddr - p_offset): they agree mod page */
	return start - pgoff - (best->vaddr - best->offset);
}

long elf_module__lookup(const struct elf_module *m, uint64_t vaddr)
{
	size_t lo = 0, hi, k;
	const struct esym *s;

	if (!m || !m->nsyms || vaddr < m->syms[0].addr)
		return -ENOENT;
	hi = m->nsyms;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	s = &m->syms[lo];
	if (s->size == 0 || vaddr - s->addr < s->size)
		return lo;
	/* a smaller symbol may sit inside a larger one: look a little back
	 * (at symbols with a size of their own: rank 2 and 3 had none, and
	 * span only to their section's end) */
	for (k = 1; k <= NESTED_SCAN && k <= lo; k++) {
		s = &m->syms[lo - k];
		if (s->rank != 2 && s->rank != 3 && vaddr - s->addr < s->size)
			return lo - k;
	}
	return -ENOENT;
}

const char *elf_module__sym_name(const struct elf_module *m, size_t idx)
{
	return idx < m->nsyms ? m->names + m->syms[idx].name : NULL;
}

uint64_t elf_module__sym_addr(const struct elf_module *m, size_t idx)
{
	return idx < m->nsyms ? m->syms[idx].addr : 0;
}

uint64_t elf_module__sym_size(const struct elf_module *m, size_t idx)
{
	return idx < m->nsyms ? m->syms[idx].size : 0;
}

const char **elf_module__display_slot(struct elf_module *m, size_t idx)
{
	if (idx >= m->nsyms)
		return NULL;
	if (!m->display) {
		m->display = calloc(m->nsyms, sizeof(*m->display));
		if (!m->display)
			return NULL;
	}
	return &m->display[idx];
}

long elf_module__find_name(const struct elf_module *m, const char *name)
{
	size_t i;

	for (i = 0; m && i < m->nsyms; i++)
		if (strcmp(m->names + m->syms[i].name, name) == 0)
			return i;
	return -ENOENT;
}

int elf_symbol_file_offset(int fd, const char *name, uint64_t *off)
{
	Elf_Scn *scn = NULL;
	GElf_Sym found = { 0 };
	size_t nph;
	bool have = false;
	int ret = -ENOENT;
	Elf *e = elf_open_fd(fd);

	if (!e)
		return -EINVAL;
	while (!have && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sh.sh_entsize; i++) {
			const char *n;
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name)) {
				found = sym;
				have = true;
				break;
			}
		}
	}
	if (!have || elf_getphdrnum(e, &nph))
		goto cleanup;
	/* the loadable segment that holds it maps file to address 1:1 */
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    found.st_value < ph.p_vaddr ||
		    found.st_value >= ph.p_vaddr + ph.p_filesz)
			continue;
		*off = found.st_value - ph.p_vaddr + ph.p_offset;
		ret = 0;
		break;
	}
cleanup:
	elf_end(e);
	return ret;
}
