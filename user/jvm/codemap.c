// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Strict, incremental reader of a JVM's code map (agent/codemap_format.h).
 *
 * The file is written by a process we do not trust and may change under us
 * at any time, so nothing is ever used in place: every update preads the
 * bytes between the last position and the published write_pos into a
 * private buffer, validates each record completely and only then copies
 * what it keeps into our own structures (strings interned).
 *
 * This file is the reader's public API and the file part of it: opening
 * and checking a map, reading what the writer appended, following it to
 * each new generation, the budgets and the one line of a failed map. Each
 * whole record goes to the tables (codemap_tables.h), which hold the
 * method store (codemap_methods.h): calls go file -> tables -> store,
 * never back; a part below reports a failure by its return and its why.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "jvm/codemap_tables.h"
#include "util/err.h"
#include "util/safe_open.h"

#define CM_FILE_LIMIT		(256ull << 20)	/* refuse bigger map files */
#define CM_CHUNK		(1u << 20)	/* pread granularity */
#define CM_PRUNE_EVERY_NS	1000000000ull

struct codemap {
	int fd;
	pid_t pid;			/* host pid, for messages; 0 unknown */
	char *path;			/* for messages */
	bool failed;
	int errnum;
	char err[512];

	struct cm_file_header hdr;	/* last validated copy */
	uint64_t pos;			/* next record offset */

	/* generations (codemap_format.h): the path is opened again at a
	 * handover; vbase is where this file's records start in the tap's
	 * one stream */
	char *root;			/* NULL: not opened by path, no follow */
	char *rel;
	uint64_t vbase;
	bool reconcile;			/* a snapshot read, not reconciled */
	uint64_t retain_ns;		/* 0: keep everything */
	uint64_t last_prune_ns;
	uint64_t loss_told;		/* codemap__loss_news() */
	uint64_t at_ns;			/* codemap__set_decode_time() */

	uint8_t *buf;			/* records being read */
	size_t bufcap;

	/* events asked of the agent (CODEMAP_EV_*), held as locks on fd */
	uint32_t ev_mask;
	uint64_t ev_interval;

	codemap_tap_fn tap;		/* raw recordings: bytes as consumed */
	void *tap_ctx;

	/* the file's part of the stats; codemap__stats() adds the rest */
	struct codemap_stats stats;
	struct cm_budget budget;
	struct cm_tables t;		/* what the records made */
};

/* ---- errors ------------------------------------------------------------ */

/* the one line of a map that will not be used: its path, why, what is lost */
static int fail_line(char *err, size_t errlen, int ret, const char *path,
		     pid_t pid, const char *why)
{
	if (pid > 0)
		return err__set(err, errlen, ret,
				"code map %s: %s: Java frames of pid %d will not be decoded",
				path, why, (int)pid);
	return err__set(err, errlen, ret,
			"code map %s: %s: Java frames of this JVM will not be decoded",
			path, why);
}

/*
 * Disable the map: cm->err gets one line naming the file, what (fmt) and
 * what is lost. The first failure stays. Returns -errnum (-cm->errnum once
 * failed).
 */
__attribute__((format(printf, 3, 4)))
static int cm_fail(struct codemap *cm, int errnum, const char *fmt, ...)
{
	char what[320];
	va_list ap;

	if (cm->failed)
		return -cm->errnum;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fail_line(cm->err, sizeof(cm->err), 0, cm->path, cm->pid, what);
	cm->failed = true;
	cm->errnum = errnum;
	return -errnum;
}

/* a failure of the tables (err: -errno), the map's */
static int tables_fail(struct codemap *cm, int err)
{
	return cm_fail(cm, -err, "%s", cm->t.why);
}

void codemap__limits_default(struct codemap_limits *out)
{
	out->mem = CODEMAP_MAX_MEM;
	out->live_threads = CODEMAP_MAX_LIVE_THREADS;
	out->tid_records = CODEMAP_MAX_TID_RECORDS;
	out->blobs_at_start = CODEMAP_MAX_BLOBS_AT_START;
	out->method_versions = CODEMAP_MAX_METHOD_VERSIONS;
	out->methods = CODEMAP_MAX_METHODS;
	out->blobs = CODEMAP_MAX_BLOBS;
}

void codemap__set_limits(struct codemap *cm, const struct codemap_limits *l)
{
	if (cm && l)
		cm->budget.lim = *l;
}

const char *codemap__capped(const struct codemap *cm)
{
	return cm && cm->budget.msg[0] ? cm->budget.msg : NULL;
}

/* ---- reading ------------------------------------------------------------- */

static int read_header(struct codemap *cm, struct cm_file_header *h,
		       bool *retry)
{
	uint64_t wp2;
	struct stat st;
	ssize_t n;

	*retry = false;
	if (fstat(cm->fd, &st))
		return cm_fail(cm, errno, "fstat: %s", strerror(errno));
	if ((uint64_t)st.st_size > CM_FILE_LIMIT)
		return cm_fail(cm, EFBIG,
			       "file is %" PRIu64 " bytes, more than the %llu MiB limit",
			       (uint64_t)st.st_size, CM_FILE_LIMIT >> 20);
	n = pread(cm->fd, h, sizeof(*h), 0);
	if (n < 0)
		return cm_fail(cm, errno, "read: %s", strerror(errno));
	if ((n >= 8 || (size_t)n == (uint64_t)st.st_size) &&
	    memcmp(h->magic, CM_MAGIC, n < 8 ? (size_t)n : 8))
		return cm_fail(cm, EINVAL, "bad magic (not a code map)");
	if ((size_t)n < sizeof(*h))
		return cm_fail(cm, EINVAL,
			       "truncated: %zd bytes, shorter than its header",
			       n);
	if (h->version < CM_VERSION_MIN || h->version > CM_VERSION)
		return cm_fail(cm, EPROTO,
			       "format version %u, this asgst-bpf reads versions %u to %u: use a matching agent",
			       h->version, CM_VERSION_MIN, CM_VERSION);
	if (h->header_size != CM_HEADER_SIZE)
		return cm_fail(cm, EINVAL, "header_size %u, expected %u",
			       h->header_size, CM_HEADER_SIZE);
	if (h->flags & ~(CM_F_READY | CM_F_FULL | CM_F_DISABLED | CM_F_CLOSED |
			 CM_F_SUPERSEDED | CM_F_EVENTS | CM_F_ALLOC_ON |
			 CM_F_LOCK_ON))
		return cm_fail(cm, EINVAL, "unknown header flags 0x%x",
			       h->flags);
	h->disabled_reason[sizeof(h->disabled_reason) - 1] = '\0';
	/* a torn write_pos would be caught below; still, read it twice */
	if (pread(cm->fd, &wp2, sizeof(wp2),
		  offsetof(struct cm_file_header, write_pos)) != sizeof(wp2))
		return cm_fail(cm, EINVAL, "truncated while reading");
	if (wp2 != h->write_pos) {
		*retry = true;
		return 0;
	}
	if (h->write_pos < CM_HEADER_SIZE || h->write_pos % 8)
		return cm_fail(cm, EINVAL, "write_pos %" PRIu64 " is invalid",
			       h->write_pos);
	if (h->write_pos > (uint64_t)st.st_size)
		return cm_fail(cm, EINVAL,
			       "write_pos %" PRIu64 " is past the end of the %" PRIu64 "-byte file (truncated?)",
			       h->write_pos, (uint64_t)st.st_size);
	/* max_size bounds one generation; a raw recording's rebuilt map
	 * holds the records of several in one stream */
	if (h->max_size && !h->generation && h->write_pos > h->max_size)
		return cm_fail(cm, EINVAL,
			       "write_pos %" PRIu64 " is past max_size %" PRIu64,
			       h->write_pos, h->max_size);
	if (h->write_pos < cm->pos)
		return cm_fail(cm, EINVAL,
			       "write_pos went back from %" PRIu64 " to %" PRIu64,
			       cm->pos, h->write_pos);
	return 0;
}

static int ensure_buf(struct codemap *cm, size_t n)
{
	uint8_t *nb;

	if (n <= cm->bufcap)
		return 0;
	nb = realloc(cm->buf, n);
	if (!nb)
		return cm_fail(cm, ENOMEM, "out of memory");
	cm->buf = nb;
	cm->bufcap = n;
	return 0;
}

static int read_at(struct codemap *cm, void *dst, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(cm->fd, (uint8_t *)dst + got, n - got,
				  (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return cm_fail(cm, errno, "read: %s", strerror(errno));
		if (r == 0)
			return cm_fail(cm, EINVAL,
				       "file shrank below offset %" PRIu64,
				       off + got);
		got += (size_t)r;
	}
	return 0;
}

/* a record at at was applied: what the reader holds is within its
 * budget (O(1) to sum) */
static int counted(struct codemap *cm, const struct cm_rec_hdr *h,
		   uint64_t at)
{
	if (codemap__mem_bytes(cm) > cm->budget.lim.mem)
		return cm_fail(cm, EFBIG,
			       "exceeds %zu MiB of the recorder's memory (refused)",
			       cm->budget.lim.mem >> 20);
	cm->stats.records++;
	cm->stats.bytes = at + h->len;
	if (h->time_ns > cm->stats.last_record_ns)
		cm->stats.last_record_ns = h->time_ns;
	return 0;
}

/* read and apply the whole records of the next chunk below wp */
static int read_chunk(struct codemap *cm, uint64_t wp)
{
	uint64_t want = wp - cm->pos;
	size_t p = 0;
	int err;

	if (want > CM_CHUNK)
		want = CM_CHUNK;
	if ((err = ensure_buf(cm, want)) ||
	    (err = read_at(cm, cm->buf, want, cm->pos)))
		return err;
	while (want - p >= sizeof(struct cm_rec_hdr)) {
		struct cm_rec_hdr rh;
		uint64_t at = cm->pos + p;

		memcpy(&rh, cm->buf + p, sizeof(rh));
		if (rh.len < sizeof(rh) || rh.len % 8)
			return cm_fail(cm, EINVAL,
				       "record at offset %" PRIu64 " has length %u (%s)",
				       at, rh.len,
				       rh.len % 8 ? "not a multiple of 8" :
						    "shorter than 16");
		if (rh.len > wp - at)
			return cm_fail(cm, EINVAL,
				       "record at offset %" PRIu64 " has length %u, past write_pos %" PRIu64,
				       at, rh.len, wp);
		if (rh.len > want - p) {
			if (p)
				break;	/* next chunk starts here */
			/* one record bigger than a chunk */
			if ((err = ensure_buf(cm, rh.len)) ||
			    (err = read_at(cm, cm->buf, rh.len, at)))
				return err;
			want = rh.len;
		}
		if ((err = cm_tables__apply(&cm->t, cm->buf + p, rh.len, at)))
			return tables_fail(cm, err);
		if ((err = counted(cm, &rh, at)))
			return err;
		p += rh.len;
	}
	if (!p)
		return cm_fail(cm, EINVAL,
			       "record at offset %" PRIu64 " is cut by write_pos %" PRIu64,
			       cm->pos, wp);
	if (cm->tap)
		cm->tap(cm->tap_ctx, cm->vbase + cm->pos, cm->buf, p);
	cm->pos += p;
	return 0;
}

/* the header, then every record up to its write_pos */
static int read_current(struct codemap *cm)
{
	struct cm_file_header h;
	bool retry = false;
	int err = 0;

	/* nothing new since the last read, the case of most batches: the
	 * header as it was and everything up to its write_pos read */
	if (cm->pos >= CM_HEADER_SIZE && cm->pos == cm->hdr.write_pos &&
	    pread(cm->fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    !memcmp(&h, &cm->hdr, sizeof(h)))
		return 0;

	for (int tries = 0; tries < 4; tries++) {
		err = read_header(cm, &h, &retry);
		if (err || !retry)
			break;
	}
	if (err)
		return err;
	if (retry)
		return 0;	/* writer busy: try again next time */
	/* superseded: nothing is written to this file any more, so a second
	 * read has the final write_pos even if the first raced the flag */
	if ((h.flags & CM_F_SUPERSEDED) && (err = read_header(cm, &h, &retry)))
		return err;
	if (retry)
		return 0;
	cm->hdr = h;
	cm->stats.file_flags = h.flags;
	cm->stats.dropped = h.dropped;
	cm->stats.generation = h.generation;
	cm->stats.file_bytes = h.write_pos;

	while (!err && cm->pos < h.write_pos)
		err = read_chunk(cm, h.write_pos);
	return err;
}

static int check_owner(const struct stat *st, pid_t pid, const char *display,
		       char *err, size_t errlen);

/*
 * The file was superseded: open the path again (the same checks as the
 * first open) and go on in the newer generation. 1 switched, 0 not yet
 * (nothing newer there), or -errno with the map failed.
 */
static int jvm_maps_file(pid_t pid, const struct stat *st);

/* one byte of an event request (codemap_format.h, CM_CTL_*): 0/-errno */
static int request_byte(int fd, uint64_t off)
{
	struct flock fl = {
		.l_type = F_RDLCK, .l_whence = SEEK_SET,
		.l_start = (off_t)off, .l_len = 1,
	};

	return fcntl(fd, F_OFD_SETLK, &fl) ? -errno : 0;
}

/* the requests of cm, on fd (the file read now, or its next generation) */
static int request_on(const struct codemap *cm, int fd)
{
	int ret = 0;

	if (cm->ev_mask & CODEMAP_EV_ALLOC)
		ret = request_byte(fd, CM_CTL_ALLOC + cm->ev_interval);
	if (!ret && (cm->ev_mask & CODEMAP_EV_LOCK))
		ret = request_byte(fd, CM_CTL_LOCK);
	return ret;
}

int codemap__request_events(struct codemap *cm, uint32_t mask,
			    uint64_t interval)
{
	if (!cm || cm->fd < 0 || !mask || (mask & ~(CODEMAP_EV_ALLOC |
						    CODEMAP_EV_LOCK)))
		return -EINVAL;
	if ((mask & CODEMAP_EV_ALLOC) &&
	    (!interval || interval > CM_CTL_ALLOC_MAX))
		return -ERANGE;
	cm->ev_mask = mask;
	cm->ev_interval = interval;
	return request_on(cm, cm->fd);
}

static int follow(struct codemap *cm)
{
	char why[SAFE_OPEN_WHY_MAX];
	struct cm_file_header h;
	struct stat st;
	int dirfd, fd;
	ssize_t n;

	dirfd = safe_open__root_dir(cm->root);
	if (dirfd < 0)
		return 0;
	fd = safe_open(dirfd, cm->rel, SAFE_OPEN_NOFOLLOW, CM_FILE_LIMIT, &st,
		       why, sizeof(why));
	close(dirfd);
	if (fd < 0)
		return 0;	/* gone (the JVM exited) or being replaced */
	if (cm->pid > 0 && check_owner(&st, cm->pid, cm->path, why,
				       sizeof(why))) {
		close(fd);
		return cm_fail(cm, EPERM, "its next generation is not the JVM's (refused)");
	}
	if (cm->pid > 0 && jvm_maps_file(cm->pid, &st) == 0) {
		close(fd);
		return 0;	/* not (yet) a file the JVM maps */
	}
	n = pread(fd, &h, sizeof(h), 0);
	if (n != (ssize_t)sizeof(h) || memcmp(h.magic, CM_MAGIC, 8) ||
	    h.generation <= cm->hdr.generation) {
		close(fd);
		return 0;	/* not (yet) a newer generation */
	}
	if (st.st_nlink > 1 || h.writer_pid != cm->hdr.writer_pid) {
		close(fd);
		return cm_fail(cm, EINVAL,
			       "generation %" PRIu64 " is not of this writer (refused)",
			       h.generation);
	}
	/* the requests move with the reader: held on the new file before
	 * the old one is let go, so the agent sees no gap */
	if (cm->ev_mask)
		request_on(cm, fd);
	cm_tables__next_generation(&cm->t);
	cm->stats.gens_missed += h.generation - cm->hdr.generation - 1;
	cm->stats.handovers++;
	cm->vbase += cm->pos - CM_HEADER_SIZE;
	close(cm->fd);
	cm->fd = fd;
	cm->pos = CM_HEADER_SIZE;
	cm->reconcile = true;
	return 1;
}

int codemap__update(struct codemap *cm)
{
	int err, ret;

	if (!cm)
		return -EINVAL;
	if (cm->failed)
		return -cm->errnum;
	err = read_current(cm);
	/* a bounded number of hand-overs per update; the rest next time */
	for (int hops = 0; !err && cm->root &&
	     (cm->hdr.flags & CM_F_SUPERSEDED) && hops < 4; hops++) {
		err = follow(cm);
		if (err <= 0)
			break;
		err = read_current(cm);
	}
	/* the snapshot read whole: what it did not have died by its time
	 * (its unload record was dropped, or in a generation missed) */
	if (!err && cm->reconcile && cm->pos >= cm->hdr.snapshot_end) {
		cm->reconcile = false;
		if ((ret = cm_tables__reconcile(&cm->t, cm->hdr.gen_start_ns)))
			err = tables_fail(cm, ret);
	}
	/* index what was read, even up to a bad record */
	if ((ret = cm_tables__index(&cm->t))) {
		ret = tables_fail(cm, ret);
		if (!err)
			err = ret;
	}
	if (!err && cm->retain_ns) {
		uint64_t now = clock__mono_ns();

		if (now - cm->last_prune_ns >= CM_PRUNE_EVERY_NS &&
		    now > cm->retain_ns) {
			cm->last_prune_ns = now;
			codemap__prune(cm, now - cm->retain_ns);
		}
	}
	/* kept between updates it would be a MiB a map for nothing */
	if (cm->bufcap) {
		free(cm->buf);
		cm->buf = NULL;
		cm->bufcap = 0;
	}
	return err;
}

void codemap__set_retention(struct codemap *cm, uint64_t retain_ns)
{
	if (cm)
		cm->retain_ns = retain_ns;
}

void codemap__prune(struct codemap *cm, uint64_t before)
{
	long freed;

	if (!cm || cm->failed)
		return;
	freed = cm_tables__prune(&cm->t, before);
	if (freed < 0) {
		tables_fail(cm, (int)freed);
		return;
	}
	cm->stats.pruned += (uint64_t)freed;
}

/* ---- open ---------------------------------------------------------------- */

static char *join_path(const char *root, const char *path)
{
	size_t rl = strlen(root);
	char *s;

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (rl == 1 && root[0] == '/')
		rl = 0;
	if (asprintf(&s, "%.*s%s%s", (int)rl, root, path[0] == '/' ? "" : "/",
		     path) < 0)
		return NULL;
	return s;
}

static struct codemap *codemap_new(int fd, const char *display, pid_t pid)
{
	struct codemap *cm = calloc(1, sizeof(*cm));

	if (!cm)
		return NULL;
	cm->fd = fd;
	cm->pid = pid;
	cm->path = strdup(display);
	cm->pos = CM_HEADER_SIZE;
	codemap__limits_default(&cm->budget.lim);
	cm_tables__init(&cm->t, &cm->budget);
	if (!cm->path) {
		cm->fd = -1;
		codemap__free(cm);
		return NULL;
	}
	return cm;
}

/*
 * fd is ours from here on. A file too short for its header, or still
 * zero-filled, is a map being created: -EAGAIN, try again later.
 */
static int open_fd_common(struct codemap **out, int fd, const char *display,
			  pid_t pid, bool from_path, char *err, size_t errlen)
{
	struct codemap *cm;
	struct stat st;
	char magic[8];
	ssize_t n;
	int ret;

	*out = NULL;
	cm = codemap_new(fd, display, pid);
	if (!cm) {
		close(fd);
		return err__set(err, errlen, -ENOMEM, "code map: out of memory");
	}
	if (fstat(fd, &st)) {
		ret = cm_fail(cm, errno, "fstat: %s", strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = cm_fail(cm, EINVAL, "not a regular file (refused)");
		goto cleanup;
	}
	if (from_path && st.st_nlink > 1) {
		ret = cm_fail(cm, EINVAL,
			      "has %ju hard links, a map has one (refused)",
			      (uintmax_t)st.st_nlink);
		goto cleanup;
	}
	if ((uint64_t)st.st_size > CM_FILE_LIMIT) {
		ret = cm_fail(cm, EFBIG,
			      "file is %" PRIu64 " bytes, more than the %llu MiB limit",
			      (uint64_t)st.st_size, CM_FILE_LIMIT >> 20);
		goto cleanup;
	}
	/*
	 * Being created: shorter than its header, starting with a prefix of
	 * the magic or with zeros (the magic is written last).
	 */
	n = pread(fd, magic, sizeof(magic), 0);
	if (n < 0)
		n = 0;
	if ((!memcmp(magic, CM_MAGIC, (size_t)n) &&
	     (uint64_t)st.st_size < sizeof(struct cm_file_header)) ||
	    (n == sizeof(magic) && !memcmp(magic, "\0\0\0\0\0\0\0\0", 8))) {
		ret = cm_fail(cm, EAGAIN,
			      "not initialised yet (%" PRIu64 " bytes): try again when the agent has started",
			      (uint64_t)st.st_size);
		goto cleanup;
	}
	ret = codemap__update(cm);
	/* its header changed under every read (write_pos moving): nothing
	 * of it, its writer's pid included, is known yet */
	if (!ret && memcmp(cm->hdr.magic, CM_MAGIC, 8))
		ret = cm_fail(cm, EAGAIN,
			      "being written (its header changed while read): try again");
cleanup:
	if (ret) {
		err__set(err, errlen, ret, "%s", cm->err);
		codemap__free(cm);
		return ret;
	}
	*out = cm;
	return 0;
}

/*
 * The users a map of pid may belong to: the owner of /proc/PID and the
 * effective and file-system uids of its status (a JVM made non-dumpable
 * leaves /proc/PID to root). 0, or -errno when pid cannot be read.
 */
static int jvm_uids(pid_t pid, uid_t uids[3])
{
	char path[64], line[256];
	unsigned long r, e, sv, fs;
	struct stat st;
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		return -errno;
	uids[0] = uids[1] = uids[2] = st.st_uid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %lu %lu %lu %lu", &r, &e, &sv, &fs) == 4) {
			uids[1] = (uid_t)e;
			uids[2] = (uid_t)fs;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/*
 * A map is trusted as the JVM's only when the JVM's user owns it: anyone
 * can create /dev/shm/asgst-<pid>-<pidns>.map before the agent does, and what it
 * says decides how that JVM's stacks are read.
 */
static int check_owner(const struct stat *st, pid_t pid, const char *display,
		       char *err, size_t errlen)
{
	char why[200];
	uid_t uids[3] = { 0, 0, 0 };
	int ret;

	ret = jvm_uids(pid, uids);
	if (ret) {
		snprintf(why, sizeof(why), "cannot read the owner of pid %d (%s)",
			 (int)pid, strerror(-ret));
		return fail_line(err, errlen, ret == -ENOENT ? -ESRCH : ret,
				 display, pid, why);
	}
	if (st->st_uid == uids[0] || st->st_uid == uids[1] ||
	    st->st_uid == uids[2])
		return 0;
	snprintf(why, sizeof(why),
		 "owned by uid %u, not by uid %u the JVM runs as (refused: remove the file and restart the JVM or attach again)",
		 (unsigned)st->st_uid, (unsigned)uids[1]);
	return fail_line(err, errlen, -EPERM, display, pid, why);
}

/*
 * Whether pid maps the file st (its device and inode in /proc/PID/maps):
 * the agent maps its map as soon as it creates it, so a file at the map's
 * path that the JVM does not map is not its map (another container's with
 * the same name in a shared /dev/shm, or one planted there). 1 yes, 0 no,
 * -errno when the maps cannot be read.
 */
static int jvm_maps_file(pid_t pid, const struct stat *st)
{
	unsigned int want_maj = major(st->st_dev), want_min = minor(st->st_dev);
	char path[64], line[512];
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		unsigned int maj, min;
		unsigned long long ino;

		/* start-end perms offset maj:min inode path */
		if (sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min, &ino) == 3 &&
		    ino == (unsigned long long)st->st_ino && maj == want_maj &&
		    min == want_min)
			ret = 1;
		/* a line longer than the buffer: skip its rest */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	fclose(f);
	return ret;
}

/* root: a directory taken as "/" for path; pid > 0: the JVM the map is of */
static int open_common(struct codemap **out, const char *root,
		       const char *path, pid_t pid, char *err, size_t errlen)
{
	char why[SAFE_OPEN_WHY_MAX];
	char *display = NULL;
	struct stat st;
	int dirfd = -1, fd, ret;

	*out = NULL;
	display = join_path(root, path);
	if (!display)
		return err__set(err, errlen, -ENOMEM, "code map: out of memory");
	dirfd = safe_open__root_dir(root);
	if (dirfd < 0) {
		ret = fail_line(err, errlen, dirfd, display, pid,
				strerror(-dirfd));
		goto cleanup;
	}
	fd = safe_open(dirfd, path, SAFE_OPEN_NOFOLLOW, CM_FILE_LIMIT, &st,
		       why, sizeof(why));
	if (fd < 0) {
		ret = fail_line(err, errlen, fd, display, pid, fd == -ENOENT ?
				"does not exist (no agent in this JVM? see asgst-bpf attach)" :
				why);
		goto cleanup;
	}
	if (pid > 0) {
		ret = check_owner(&st, pid, display, err, errlen);
		if (!ret && jvm_maps_file(pid, &st) == 0)
			/* not (yet) the JVM's: looked at again later */
			ret = fail_line(err, errlen, -EAGAIN, display, pid,
					"is not mapped by the JVM (another JVM's, or not its map yet)");
		if (ret) {
			close(fd);
			goto cleanup;
		}
	}
	ret = open_fd_common(out, fd, display, pid, true, err, errlen);
	if (!ret) {
		/* kept to follow the writer to its next generation */
		(*out)->root = strdup(root);
		(*out)->rel = strdup(path);
		if (!(*out)->root || !(*out)->rel) {
			free((*out)->root);
			free((*out)->rel);
			(*out)->root = (*out)->rel = NULL;
		}
	}
cleanup:
	if (dirfd >= 0)
		close(dirfd);
	free(display);
	return ret;
}

int codemap__open(struct codemap **out, const char *root, const char *path,
		  char *err, size_t errlen)
{
	if (!out || !root || !path)
		return err__set(err, errlen, -EINVAL, "code map: no path given");
	return open_common(out, root, path, 0, err, errlen);
}

int codemap__open_fd(struct codemap **out, int fd, const char *name,
		     char *err, size_t errlen)
{
	int nfd;

	if (!out || fd < 0)
		return err__set(err, errlen, -EINVAL,
				"code map: bad file descriptor");
	*out = NULL;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return err__set(err, errlen, -errno, "code map: dup failed");
	return open_fd_common(out, nfd, name ? name : "(fd)", 0, false, err,
			      errlen);
}

int codemap__nspid(pid_t pid, pid_t *nspid)
{
	char path[64], line[512];
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *last = NULL, *tok, *save = NULL;

		if (strncmp(line, "NStgid:", 7))
			continue;
		for (tok = strtok_r(line + 7, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			last = tok;
		if (last) {
			char *end;
			long v = strtol(last, &end, 10);

			if (*end == '\0' && v > 0 && v <= INT_MAX) {
				*nspid = (pid_t)v;
				ret = 0;
			}
		}
		break;
	}
	fclose(f);
	return ret;
}

int codemap__pid_path(pid_t pid, pid_t nspid, char *path, size_t len)
{
	char ns[64], root[64];
	struct stat nst;

	snprintf(ns, sizeof(ns), "/proc/%d/ns/pid", (int)pid);
	if (stat(ns, &nst))
		return -errno;
	snprintf(path, len, CM_PATH_NS_FMT, (int)nspid,
		 (unsigned long long)nst.st_ino);
	/* the older name where only that one is there */
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	{
		char full[160], legacy[64];

		snprintf(full, sizeof(full), "%s%s", root, path);
		snprintf(legacy, sizeof(legacy), CM_PATH_FMT, (int)nspid);
		if (access(full, F_OK)) {
			snprintf(full, sizeof(full), "%s%s", root, legacy);
			if (!access(full, F_OK))
				snprintf(path, len, "%s", legacy);
		}
	}
	return 0;
}

int codemap__open_pid(struct codemap **out, pid_t pid, char *err,
		      size_t errlen)
{
	char root[64], path[96], ns[64];
	struct stat nst;
	pid_t nspid;
	int ret;

	if (!out || pid <= 0)
		return err__set(err, errlen, -EINVAL, "code map: bad pid");
	*out = NULL;
	ret = codemap__nspid(pid, &nspid);
	if (ret)
		return err__set(err, errlen, ret == -ENOENT ? -ESRCH : ret,
				"code map of pid %d: cannot read /proc/%d/status (%s): Java frames of pid %d will not be decoded",
				(int)pid, (int)pid,
				ret == -ENOENT ? "process gone" : strerror(-ret),
				(int)pid);
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	/* named by its pid and pid namespace; by its pid alone (no /proc
	 * in its root, an older agent) */
	snprintf(ns, sizeof(ns), "/proc/%d/ns/pid", (int)pid);
	ret = -ENOENT;
	if (!stat(ns, &nst)) {
		snprintf(path, sizeof(path), CM_PATH_NS_FMT, (int)nspid,
			 (unsigned long long)nst.st_ino);
		ret = open_common(out, root, path, pid, err, errlen);
	}
	if (ret == -ENOENT) {
		snprintf(path, sizeof(path), CM_PATH_FMT, (int)nspid);
		ret = open_common(out, root, path, pid, err, errlen);
	}
	if (ret)
		return ret;
	if ((*out)->hdr.writer_pid != (uint32_t)nspid) {
		struct codemap *cm = *out;

		ret = cm_fail(cm, ESTALE,
			      "left by pid %u, not by this JVM (pid %d in its namespace): stale map ignored",
			      cm->hdr.writer_pid, (int)nspid);
		err__set(err, errlen, ret, "%s", cm->err);
		codemap__free(cm);
		*out = NULL;
	}
	return ret;
}

void codemap__free(struct codemap *cm)
{
	if (!cm)
		return;
	if (cm->fd >= 0)
		close(cm->fd);
	cm_tables__free(&cm->t);
	free(cm->root);
	free(cm->rel);
	free(cm->buf);
	free(cm->path);
	free(cm);
}

/* ---- queries ------------------------------------------------------------- */

bool codemap__ok(const struct codemap *cm)
{
	return cm && !cm->failed;
}

const char *codemap__error(const struct codemap *cm)
{
	return cm && cm->failed ? cm->err : NULL;
}

uint32_t codemap__writer_pid(const struct codemap *cm)
{
	return cm ? cm->hdr.writer_pid : 0;
}

const struct cm_file_header *codemap__header(const struct codemap *cm)
{
	return cm ? &cm->hdr : NULL;
}

const char *codemap__path(const struct codemap *cm)
{
	return cm ? cm->path : NULL;
}

const struct cm_vm_consts *codemap__vm(const struct codemap *cm)
{
	return cm && cm->t.have_vm ? &cm->t.vm : NULL;
}

const struct cm_cont *codemap__cont(const struct codemap *cm)
{
	return cm && cm->t.have_cont ? &cm->t.cont : NULL;
}

uint32_t codemap__jdk_major(const struct codemap *cm)
{
	return cm && cm->t.have_vm ? cm->t.jdk_major : 0;
}

const char *codemap__vm_version(const struct codemap *cm)
{
	return cm && cm->t.have_vm ? cm->t.vm_version : NULL;
}

const struct codemap_method *codemap__method(const struct codemap *cm,
					     uint64_t method)
{
	if (!codemap__ok(cm))
		return NULL;
	return cm_store__get(&cm->t.store, method, cm->at_ns, NULL);
}

const struct codemap_method *codemap__method_timeless(const struct codemap *cm,
						      uint64_t method,
						      bool *timeless)
{
	*timeless = false;
	if (!codemap__ok(cm))
		return NULL;
	return cm_store__get(&cm->t.store, method, cm->at_ns, timeless);
}

uint64_t codemap__methods_stamp(const struct codemap *cm)
{
	return cm ? cm_store__stamp(&cm->t.store) : 0;
}

uint64_t codemap__stamp(const struct codemap *cm, uint64_t *horizon)
{
	*horizon = UINT64_MAX;
	if (!codemap__ok(cm))
		return 0;
	return cm_tables__stamp(&cm->t, horizon);
}

void codemap__set_decode_time(struct codemap *cm, uint64_t t)
{
	if (cm)
		cm->at_ns = t;
}

/* the lookups of the tables, with nothing between: tail calls */
const struct codemap_blob *codemap__find(const struct codemap *cm,
					 uint64_t pc, uint64_t t)
{
	if (!codemap__ok(cm))
		return NULL;
	return cm_tables__find(&cm->t, pc, t);
}

const struct codemap_thread *codemap__thread(const struct codemap *cm,
					     uint32_t tid, uint64_t t)
{
	if (!codemap__ok(cm))
		return NULL;
	return cm_tables__thread(&cm->t, tid, t);
}

void codemap__stats(const struct codemap *cm, struct codemap_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!cm)
		return;
	*out = cm->stats;
	out->methods = cm->t.store.added;
	out->blobs = cm->t.n.blobs;
	out->stubs = cm->t.n.stubs;
	out->threads = cm->t.n.threads;
	out->unloads = cm->t.n.unloads;
	out->reconciled = cm->t.n.reconciled;
	out->strings = cm->t.n.strings;
	out->classes = cm->t.n.classes;
	out->find_cut = cm->t.n.find_cut;
	out->capped = cm->budget.capped;
	out->steps = cm->budget.steps;
}

bool codemap__loss_news(struct codemap *cm, uint64_t *n)
{
	uint64_t lost;

	if (!cm)
		return false;
	lost = cm->stats.dropped + cm->stats.gens_missed + cm->t.n.reconciled;
	*n = lost;
	if (!lost || lost < 2 * cm->loss_told || lost == cm->loss_told)
		return false;
	cm->loss_told = lost;
	return true;
}

size_t codemap__mem_bytes(const struct codemap *cm)
{
	if (!cm)
		return 0;
	/* as the allocator holds it: what is read is kept in our own
	 * structures, the read buffer goes after each update */
	return cm_alloc_bytes(sizeof(*cm)) + cm_tables__bytes(&cm->t) +
	       cm_arr_bytes(cm->bufcap, 1);
}

size_t codemap__nblobs(const struct codemap *cm)
{
	return cm ? cm->t.nblobs : 0;
}

const struct codemap_blob *codemap__blob_at(const struct codemap *cm, size_t i)
{
	return cm && i < cm->t.nblobs ? &cm->t.blobs[i]->b : NULL;
}

size_t codemap__nmethods(const struct codemap *cm)
{
	return cm ? cm_store__count(&cm->t.store) : 0;
}

const struct codemap_method *codemap__method_at(const struct codemap *cm,
						size_t i)
{
	return cm && i < cm_store__count(&cm->t.store) ?
	       cm_store__at(&cm->t.store, i) : NULL;
}

size_t codemap__nthreads(const struct codemap *cm)
{
	return cm ? cm->t.nthreads : 0;
}

const struct codemap_thread *codemap__thread_at(const struct codemap *cm,
						size_t i)
{
	return cm && i < cm->t.nthreads ? &cm->t.threads[i]->t : NULL;
}

uint64_t codemap__pos(const struct codemap *cm)
{
	return cm->vbase + cm->pos;
}

void codemap__set_thread_cb(struct codemap *cm, codemap_thread_fn fn,
			    void *ctx)
{
	cm_tables__set_thread_cb(&cm->t, fn, ctx);
}

int codemap__set_tap(struct codemap *cm, codemap_tap_fn fn, void *ctx)
{
	uint64_t off = CM_HEADER_SIZE;
	uint8_t *buf;
	int err = 0;

	cm->tap = fn;
	cm->tap_ctx = ctx;
	/* a tap's stream starts with the file read now: a generation holds
	 * its snapshot, so it stands alone */
	cm->vbase = 0;
	if (!fn || cm->pos <= CM_HEADER_SIZE)
		return 0;
	/* catch up on what open() already consumed */
	buf = malloc(CM_CHUNK);
	if (!buf)
		return -ENOMEM;
	while (off < cm->pos) {
		size_t n = cm->pos - off > CM_CHUNK ? CM_CHUNK : cm->pos - off;
		ssize_t r = pread(cm->fd, buf, n, (off_t)off);

		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			break;
		}
		fn(ctx, off, buf, (size_t)r);
		off += (uint64_t)r;
	}
	free(buf);
	return err;
}
