// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CFI rows (user/symbols/cfi.c) of a real module whose shape is known:
 * fx_pie is built with frame pointers, so the .eh_frame of a function that
 * calls another (fx_beta) says CFA = rsp + 8 with the return address at
 * CFA - 8 at its first instruction, and CFA = rbp + 16 with rbp saved at
 * CFA - 16 in its body (after push rbp; mov rbp, rsp); the PLT's CFA is
 * the linker's expression. Also: the vdso from memory, no CFI, the
 * row cache, and bad input.
 */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures/fixture_path.h"
#include "symbols/cfi.h"

static struct cfi_table *load(const char *name)
{
	char path[PATH_MAX];
	struct cfi_table *t;
	int fd;

	fixture_path(path, sizeof(path), name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	t = cfi_table__load_fd(fd);
	close(fd);	/* nothing is read through it any more */
	return t;
}

/* the .plt section's address in the fixture, read with libelf */
static uint64_t plt_addr(const char *name)
{
	char path[PATH_MAX];
	uint64_t addr = 0;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *e;
	int fd;

	fixture_path(path, sizeof(path), name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(e, shstrndx, sh.sh_name), ".plt"))
			addr = sh.sh_addr;
	elf_end(e);
	close(fd);
	return addr;
}

static void expect_reg(const struct cfi_rule_of *e, int reg, int32_t off)
{
	assert_int_equal(e->rule, CFI_RULE_REG);
	assert_int_equal(e->reg, reg);
	assert_int_equal(e->off, off);
}

static void expect_at_cfa(const struct cfi_rule_of *e, int32_t off)
{
	assert_int_equal(e->rule, CFI_RULE_AT);
	assert_int_equal(e->off, off);
}

static void test_entry_and_body(void **state)
{
	struct cfi_table *t = load("fx_pie");
	uint64_t fn = fixture_nm_addr("fx_pie.nm", "fx_beta", NULL);
	uint64_t plt = plt_addr("fx_pie");
	struct cfi_row r;

	(void)state;
	assert_non_null(t);
	assert_true(plt != 0);
	assert_string_equal(cfi_table__source(t), ".eh_frame");
	assert_true(cfi_table__bytes(t) > 0);
	/* at the first instruction: nothing pushed yet */
	assert_int_equal(cfi_table__find(t, fn, &r), 0);
	assert_true(r.start <= fn && fn < r.end);
	expect_reg(&r.cfa, CFI_REG_RSP, 8);
	expect_at_cfa(&r.ra, -8);
	assert_int_equal(r.rbp.rule, CFI_RULE_SAME);
	assert_false(r.signal);
	/* in the body (push rbp: 1 byte, mov rbp, rsp: 3 bytes) */
	assert_int_equal(cfi_table__find(t, fn + 4, &r), 0);
	expect_reg(&r.cfa, CFI_REG_RBP, 16);
	expect_at_cfa(&r.rbp, -16);
	expect_at_cfa(&r.ra, -8);
	/* a PLT entry: the linker's CFA expression (rsp + 8, + 8 more past
	 * the entry's push), run by the unwinder */
	assert_int_equal(cfi_table__find(t, plt + 0x16, &r), 0);
	assert_int_equal(r.cfa.rule, CFI_RULE_EXPR_VAL);
	assert_non_null(r.cfa.expr);
	assert_true(r.cfa.expr->nops >= 5);
	assert_int_equal(r.cfa.expr->ops[0].atom, DW_OP_breg0 + CFI_REG_RSP);
	expect_at_cfa(&r.ra, -8);
	/* no FDE covers the ELF header */
	assert_int_equal(cfi_table__find(t, 0, &r), -ENOENT);
	cfi_table__free(t);
}

static void test_cache(void **state)
{
	struct cfi_table *t = load("fx_pie");
	struct cfi_cache *c = cfi_cache__new(64);
	uint64_t fn = fixture_nm_addr("fx_pie.nm", "fx_beta", NULL);
	struct cfi_row a, b;
	uint64_t hits, misses;

	(void)state;
	assert_non_null(t);
	assert_non_null(c);
	assert_int_equal(cfi_cache__find(c, t, fn + 4, &a), 0);
	assert_int_equal(cfi_cache__find(c, t, fn + 4, &b), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(cfi_cache__find(c, t, 0, &a), -ENOENT);
	assert_int_equal(cfi_cache__find(c, t, 0, &a), -ENOENT);
	cfi_cache__stats(c, &hits, &misses);
	assert_int_equal(hits, 2);
	assert_int_equal(misses, 2);
	cfi_cache__free(c);
	cfi_table__free(t);
}

/* the vdso has CFI of its own, read from memory like the symbolizer does */
static void test_vdso(void **state)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct cfi_table *t;

	(void)state;
	if (!img)
		skip();
	/* the vdso is at most two pages here and on every x86-64 kernel */
	t = cfi_table__load_mem(img, 8192);
	assert_non_null(t);
	cfi_table__free(t);
}

static void test_bad_input(void **state)
{
	static const char junk[] = "\177ELF not really an ELF file at all";
	char path[] = "/tmp/asgst-cfi-XXXXXX";
	struct cfi_row r;
	int fd;

	(void)state;
	assert_null(cfi_table__load_mem(junk, sizeof(junk)));
	assert_null(cfi_table__load_mem(NULL, 10));
	assert_int_equal(cfi_table__find(NULL, 0, &r), -EINVAL);
	/* not ELF at all */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, junk, 5), 5);
	assert_null(cfi_table__load_fd(fd));
	close(fd);
	assert_null(cfi_table__load_fd(-1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_and_body),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
