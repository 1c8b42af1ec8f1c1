/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Call-frame information of one ELF module (x86-64), for unwinding native
 * frames without frame pointers: .eh_frame (with its .eh_frame_hdr search
 * table), else .debug_frame, parsed by elfutils' libdw.
 *
 * Nothing is precomputed: the module's CFI sections are read once (pread,
 * never mapped) and libdw finds a pc's FDE by the binary-search table the
 * linker wrote, so a table costs its sections' bytes and no build time.
 * A lookup gives the rules of the row that holds at a file vaddr, which
 * the unwinder applies to the sample's stack copy (user/decode/
 * decode_native.c): the CFA, and where the caller's rbp and return address
 * are; the usual ones as register + offset, the rest as small DWARF
 * expressions the table keeps (at most CFI_MAX_EXPRS of them). Rows are cached by the caller (struct
 * cfi_cache) since the same return addresses recur in every sample.
 */
#ifndef ASGST_CFI_H
#define ASGST_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* x86-64 DWARF register numbers the unwinder knows */
#define CFI_REG_RBX	3
#define CFI_REG_RBP	6
#define CFI_REG_RSP	7
#define CFI_REG_R13	13
#define CFI_REG_RIP	16

#define CFI_MAX_OPS	12	/* the PLT's CFA expression takes 9 */
#define CFI_MAX_EXPRS	256	/* distinct expressions a table keeps */

/* one DWARF expression operation (DW_OP_*; bregx becomes bregN) */
struct cfi_op {
	int64_t n;		/* operand (breg: offset) */
	uint8_t atom;
};

enum cfi_rule {
	CFI_RULE_UNDEF = 0,	/* not recoverable (the RA: outermost frame) */
	CFI_RULE_SAME,		/* unchanged by this frame */
	CFI_RULE_AT,		/* saved at CFA + off */
	CFI_RULE_REG,		/* the value reg + off (the usual CFA) */
	CFI_RULE_EXPR_AT,	/* saved at the address expr computes */
	CFI_RULE_EXPR_VAL,	/* expr computes the value itself */
	CFI_RULE_UNSUPPORTED,	/* an expression this unwinder cannot run */
};

/* a DWARF expression (DW_OP_* ops, bregx as bregN); rare: PLT entries,
 * realigned stacks, signal frames */
struct cfi_expr {
	uint8_t nops;
	struct cfi_op ops[CFI_MAX_OPS];
};

struct cfi_rule_of {
	uint8_t rule;		/* enum cfi_rule */
	uint8_t reg;		/* CFI_RULE_REG */
	int32_t off;		/* CFI_RULE_AT, CFI_RULE_REG */
	/* CFI_RULE_EXPR_*: owned by the table, alive as long as it is */
	const struct cfi_expr *expr;
};

struct cfi_row {
	uint64_t start, end;	/* file vaddrs where this row holds */
	struct cfi_rule_of cfa;	/* CFI_RULE_REG or CFI_RULE_EXPR_VAL */
	struct cfi_rule_of rbp;	/* the caller's rbp */
	struct cfi_rule_of ra;	/* the return address */
	bool signal;		/* a signal frame: its "return" is exact */
};

struct cfi_table;

/*
 * The CFI of the ELF file on fd (the fd stays the caller's; nothing is read
 * through it after return). NULL with errno: ENOENT when the file has no
 * CFI, EINVAL when it is not a usable ELF or its CFI is malformed.
 */
struct cfi_table *cfi_table__load_fd(int fd);
/* the same from an image in memory (the vdso); img must outlive nothing:
 * it is copied */
struct cfi_table *cfi_table__load_mem(const void *img, size_t len);
void cfi_table__free(struct cfi_table *t);
/* bytes of CFI the table keeps in memory */
size_t cfi_table__bytes(const struct cfi_table *t);
/* which section: ".eh_frame" or ".debug_frame" */
const char *cfi_table__source(const struct cfi_table *t);

/*
 * The row at file vaddr. 0, or -ENOENT when no FDE covers it or libdw
 * cannot parse the one that does (-EINVAL: bad arguments).
 */
int cfi_table__find(struct cfi_table *t, uint64_t vaddr, struct cfi_row *out);

/*
 * A bounded cache of rows, keyed by (table, vaddr): one per symbolizer,
 * a fixed number of entries whatever the number of modules.
 */
struct cfi_cache;

struct cfi_cache *cfi_cache__new(unsigned int entries);
void cfi_cache__free(struct cfi_cache *c);
/* cfi_table__find through the cache; hits and misses counted */
int cfi_cache__find(struct cfi_cache *c, struct cfi_table *t, uint64_t vaddr,
		    struct cfi_row *out);
void cfi_cache__stats(const struct cfi_cache *c, uint64_t *hits,
		      uint64_t *misses);

#endif /* ASGST_CFI_H */
