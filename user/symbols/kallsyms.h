/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel text symbols from /proc/kallsyms (t/T/w/W, module symbols with
 * their "[module]"), sorted, looked up by nearest preceding address.
 */
#ifndef ASGST_KALLSYMS_H
#define ASGST_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/* a pc farther than this past the last known symbol is not resolved */
#define KALLSYMS_MAX_TAIL	(1u << 20)

/*
 * Parse kallsyms text (len bytes). NULL on allocation failure. A table whose
 * addresses are all zero (kptr_restrict) parses but kallsyms__restricted()
 * is true and it resolves nothing.
 */
struct kallsyms *kallsyms__parse(const char *text, size_t len);
/* read and parse a file (path NULL = /proc/kallsyms); NULL + errno */
struct kallsyms *kallsyms__load(const char *path);
void kallsyms__free(struct kallsyms *ks);
size_t kallsyms__count(const struct kallsyms *ks);
int kallsyms__restricted(const struct kallsyms *ks);
/*
 * Symbol name for pc (owned by ks), *off = pc - symbol address, *module the
 * module name ("ext4") or NULL for the core kernel. NULL when unresolved.
 */
const char *kallsyms__lookup(const struct kallsyms *ks, uint64_t pc,
			     uint64_t *off, const char **module);

#endif /* ASGST_KALLSYMS_H */
