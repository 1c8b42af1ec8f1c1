// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JVM events: ask each JVM's agent, probe each agent file (jvm_events.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capture.h"
#include "jvm/codemap.h"
#include "jvm/jvm_discover.h"
#include "profile/jvm_events.h"
#include "symbols/elf_symbols.h"
#include "util/err.h"
#include "util/safe_open.h"

#define AGENT_FILE_MAX	(64ull << 20)

struct probed {
	dev_t dev;
	ino_t ino;
};

struct jvm_events {
	struct capture *cap;
	uint32_t mask;
	uint64_t interval;
	bool quiet;
	uint8_t *agent;		/* our agent's bytes */
	size_t agent_len;
	uint64_t probe_off;	/* the probe's file offset in it */
	struct probed *files;
	size_t nfiles, cap_files;
	struct jvm_events_stats stats;
};

/* the whole file on fd, at most max bytes; NULL + errno */
static uint8_t *read_whole(int fd, size_t *len, uint64_t max)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;

	if (fstat(fd, &st))
		return NULL;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		errno = EFBIG;
		return NULL;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf)
		return NULL;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got,
				  (off_t)got);

		if (n <= 0) {
			free(buf);
			errno = n ? errno : EIO;
			return NULL;
		}
		got += (size_t)n;
	}
	*len = got;
	return buf;
}

struct jvm_events *jvm_events__new(struct capture *cap, const char *agent_path,
				   uint32_t mask, uint64_t interval, bool quiet,
				   char *err, size_t errlen)
{
	struct jvm_events *je = NULL;
	int fd = -1, ret;

	if (!agent_path) {
		err__set(err, errlen, -ENOENT,
			 "-e alloc/lock need the agent library (not found: build it or set ASGST_AGENT)");
		return NULL;
	}
	je = calloc(1, sizeof(*je));
	if (!je) {
		err__set(err, errlen, -ENOMEM, "out of memory");
		return NULL;
	}
	je->cap = cap;
	je->mask = mask;
	je->interval = interval;
	je->quiet = quiet;
	fd = open(agent_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(je->agent = read_whole(fd, &je->agent_len,
					       AGENT_FILE_MAX))) {
		err__set(err, errlen, -errno, "reading the agent %s: %s",
			 agent_path, strerror(errno));
		goto fail;
	}
	ret = elf_symbol_file_offset(fd, "asgst_probe_event", &je->probe_off);
	if (ret) {
		err__set(err, errlen, ret,
			 "the agent %s has no event probe (asgst_probe_event): rebuild it with this asgst-bpf",
			 agent_path);
		goto fail;
	}
	close(fd);
	return je;
fail:
	if (fd >= 0)
		close(fd);
	jvm_events__free(je);
	return NULL;
}

void jvm_events__free(struct jvm_events *je)
{
	if (!je)
		return;
	free(je->agent);
	free(je->files);
	free(je);
}

static bool probed(const struct jvm_events *je, const struct stat *st)
{
	for (size_t i = 0; i < je->nfiles; i++)
		if (je->files[i].dev == st->st_dev &&
		    je->files[i].ino == st->st_ino)
			return true;
	return false;
}

static int remember(struct jvm_events *je, const struct stat *st)
{
	if (je->nfiles == je->cap_files) {
		size_t cap = je->cap_files ? je->cap_files * 2 : 8;
		struct probed *v = realloc(je->files, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		je->files = v;
		je->cap_files = cap;
	}
	je->files[je->nfiles].dev = st->st_dev;
	je->files[je->nfiles].ino = st->st_ino;
	je->nfiles++;
	return 0;
}

static int refuse(struct jvm_events *je, pid_t pid, const char *why)
{
	je->stats.refused++;
	if (!je->quiet)
		fprintf(stderr, "asgst-bpf: JVM %d gives no alloc/lock events: %s\n",
			(int)pid, why);
	return 1;
}

/*
 * The uprobe on the agent pid maps, unless its file has one already. The
 * file is the mapping itself (/proc/PID/map_files), opened the safe way
 * (no FUSE, no FIFO), and must equal our agent byte for byte.
 */
static int probe_agent(struct jvm_events *je, pid_t pid, char *why,
		       size_t whylen)
{
	char range[64], path[96], swhy[SAFE_OPEN_WHY_MAX];
	uint8_t *bytes = NULL;
	struct stat st;
	size_t len = 0;
	int fd = -1, ret;

	ret = jvm_discover__agent_map(pid, range, sizeof(range));
	if (ret <= 0) {
		snprintf(why, whylen, "its agent library is not mapped");
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "/proc/%d/map_files/%s", (int)pid, range);
	fd = safe_open(SAFE_OPEN_HOST, path, SAFE_OPEN_PROC_LINK,
		       AGENT_FILE_MAX, &st, swhy, sizeof(swhy));
	if (fd < 0) {
		snprintf(why, whylen, "its agent library cannot be read (%s)",
			 swhy[0] ? swhy : strerror(-fd));
		return fd;
	}
	if (probed(je, &st)) {
		ret = 0;
		goto cleanup;
	}
	/* another size is another build: not read at all */
	if ((uint64_t)st.st_size != je->agent_len) {
		snprintf(why, whylen,
			 "its agent library is not this asgst-bpf's (another build)");
		ret = -EPERM;
		goto cleanup;
	}
	bytes = read_whole(fd, &len, AGENT_FILE_MAX);
	if (!bytes || len != je->agent_len ||
	    memcmp(bytes, je->agent, len)) {
		snprintf(why, whylen,
			 "its agent library is not this asgst-bpf's (another build)");
		ret = -EPERM;
		goto cleanup;
	}
	ret = capture__attach_probe(je->cap, fd, je->probe_off, why, whylen);
	if (!ret && remember(je, &st))
		ret = -ENOMEM;
	if (!ret)
		je->stats.probes++;
cleanup:
	free(bytes);
	close(fd);
	return ret;
}

int jvm_events__add(struct jvm_events *je, pid_t pid, struct codemap *cm)
{
	const struct cm_file_header *h = codemap__header(cm);
	char why[256];
	int ret;

	if (!je || !cm || !codemap__ok(cm))
		return 1;
	if (!h || !(h->flags & CM_F_READY))
		return 0;	/* the agent is still starting */
	if (!(h->flags & CM_F_EVENTS))
		return refuse(je, pid, "its agent does not offer them (an older agent, or the JVM refused the JVMTI capabilities)");
	ret = probe_agent(je, pid, why, sizeof(why));
	if (ret)
		return refuse(je, pid, why);
	ret = codemap__request_events(cm, je->mask, je->interval);
	if (ret) {
		snprintf(why, sizeof(why), "the request on its code map failed (%s)",
			 strerror(-ret));
		return refuse(je, pid, why);
	}
	je->stats.jvms++;
	return 1;
}

void jvm_events__stats(const struct jvm_events *je,
		       struct jvm_events_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (je)
		*out = je->stats;
}
