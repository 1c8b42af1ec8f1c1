/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* /proc/PID/maps parsing. */
#ifndef ASGST_MAPS_H
#define ASGST_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum maps_kind {
	MAPS_FILE = 0,		/* a file path */
	MAPS_ANON = 1,		/* no path */
	MAPS_SPECIAL = 2,	/* "[vdso]", "[stack]", "[heap]", ... */
};

struct maps_entry {
	uint64_t start, end;
	uint64_t pgoff;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	bool r, w, x, shared;
	bool deleted;		/* path ended in " (deleted)" (stripped) */
	uint8_t kind;		/* enum maps_kind */
	char *path;		/* malloc'ed; NULL for anonymous */
};

struct maps {
	struct maps_entry *e;	/* sorted by start */
	size_t n;
};

/* parse one line (no newline needed); 0, or -EINVAL for a malformed line */
int maps__parse_line(const char *line, size_t len, struct maps_entry *out);
/* parse a whole maps text; malformed lines are skipped. 0 or -ENOMEM */
int maps__parse(const char *text, size_t len, struct maps *out);
/* read /proc/PID/maps; 0 or -errno (-ENOENT/-ESRCH: the process is gone) */
int maps__read(pid_t pid, struct maps *out);
void maps__free(struct maps *m);
/* the entry holding addr, NULL if none */
const struct maps_entry *maps__find(const struct maps *m, uint64_t addr);
/* read a whole file (procfs too) into a malloc'ed, NUL-terminated buffer */
int maps__slurp(int fd, char **buf, size_t *len);

#endif /* ASGST_MAPS_H */
