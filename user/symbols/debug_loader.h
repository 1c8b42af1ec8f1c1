/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Debug info read off the decode path: one thread of its own opens a
 * module's DWARF (dwarf_lines__open: reading and inflating its debug
 * sections takes from milliseconds to seconds, libjvm's several) and,
 * when neither the module nor a local debug file has any, asks debuginfod
 * servers for the debug file by build-id (elfutils' libdebuginfod, its
 * cache, no more than one fetch at a time).
 *
 * The symbolizer hands it jobs and takes the results on its own thread
 * (symbolizer__poll_debug); nothing the thread makes is used before that.
 * A fetch ends at its deadline, or at once when the loader is freed: a
 * slow or dead server never holds the end of a recording.
 */
#ifndef ASGST_DEBUG_LOADER_H
#define ASGST_DEBUG_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwarf_lines;
struct debug_loader;

struct debug_loader_opts {
	/* debuginfod servers (DEBUGINFOD_URLS syntax); NULL: no fetches */
	const char *urls;
	uint32_t fetch_timeout_s;	/* each fetch, whole; 0: 10 s */
	uint32_t max_fetches;		/* a recording's fetches; 0: 256 */
};

struct debug_job {
	void *key;		/* the caller's (a module), handed back */
	int fd;			/* the module's file, or -1 (taken) */
	int debug_fd;		/* its local debug file, or -1 (taken) */
	uint8_t build_id[64];	/* for a fetch when neither has DWARF */
	size_t build_id_len;
	uint64_t max_bytes;	/* the DWARF's inflated sections at most */
};

struct debug_result {
	void *key;
	struct dwarf_lines *dw;	/* NULL: none (err says why) */
	int err;		/* errno of the last failure, 0 */
	int fetched_fd;		/* the debug file debuginfod gave, or -1:
				   the caller's to read symbols from, close */
	uint64_t read_ns;	/* reading the DWARF */
	uint64_t fetch_ns;	/* fetching (0: none) */
};

struct debug_loader_stats {
	uint64_t jobs, done;
	uint64_t fetches;		/* asked of debuginfod */
	uint64_t fetched;		/* ... and given a file */
	uint64_t fetch_failed;		/* no file: not found, refused,
					   timed out, aborted */
	uint64_t fetch_capped;		/* not asked: max_fetches reached */
	uint64_t fetch_ns;		/* time fetching, in all */
};

/*
 * The environment libdebuginfod reads, set while the process has one
 * thread (setenv is not safe beside a getenv): urls, when given, become
 * DEBUGINFOD_URLS; its cache, unless DEBUGINFOD_CACHE_PATH says where,
 * is root's own DEBUG_LOADER_CACHE (made 0700; refused when someone else
 * owns it or may write it), never under a HOME a user chose; a debug
 * file larger than max_fetch_bytes is not taken. The servers to ask:
 * DEBUGINFOD_URLS after this, NULL when none. -errno with err set.
 */
#define DEBUG_LOADER_CACHE	"/var/cache/asgst-bpf/debuginfod"
const char *debug_loader__env(const char *urls, uint64_t max_fetch_bytes,
			      char *err, size_t errlen);

/* NULL with errno (ENOMEM, or pthread's error) */
struct debug_loader *debug_loader__new(const struct debug_loader_opts *o);
/* aborts a fetch under way, waits for a DWARF read under way, frees all */
void debug_loader__free(struct debug_loader *l);
/* 0, or -ENOMEM (the job's fds are closed either way) */
int debug_loader__submit(struct debug_loader *l, const struct debug_job *j);
/*
 * Results ready, up to max into out; waits at most wait_ns for the first
 * when none is ready. Returns how many.
 */
size_t debug_loader__poll(struct debug_loader *l, struct debug_result *out,
			  size_t max, uint64_t wait_ns);
/* jobs submitted whose result was not polled yet */
size_t debug_loader__pending(const struct debug_loader *l);
bool debug_loader__fetching(const struct debug_loader *l);
void debug_loader__stats(const struct debug_loader *l,
			 struct debug_loader_stats *out);

#endif /* ASGST_DEBUG_LOADER_H */
