// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Native and kernel symbolization (see symbolize.h).
 *
 * Processes: pid -> sorted mappings, each with its module and load bias,
 * read from /proc/PID/maps. Module files are opened through /proc/PID/root
 * with safe_open() (openat2 RESOLVE_IN_ROOT, regular files only, nothing
 * that can block), so a container's "/usr/lib/x.so" is the container's
 * file and no link can lead outside that root; deleted, replaced or
 * unreachable files are read through /proc/PID/map_files/START-END. Modules
 * of executable mappings are resolved when the maps are read, so the
 * samples of a process that has exited since still decode.
 *
 * Modules: found by dev+inode first (no open at all for a shared library
 * already seen), else opened, keyed by build-id; symbols load once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "symbols/demangle.h"
#include "symbols/elf_symbols.h"
#include "symbols/kallsyms.h"
#include "symbols/maps.h"
#include "symbols/perfmap.h"
#include "util/safe_open.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "symbols/cfi.h"
#include "symbols/debug_loader.h"
#include "symbols/dwarf_lines.h"
#include "symbols/symbolize.h"

#define PROC_BUCKETS	1024
#define MOD_BUCKETS	1024
#define REFRESH_NS	(100ull * 1000 * 1000)	/* per pid, on unknown pcs */
#define VDSO_MAX	(1u << 20)
#define NAME_MAX_LEN	4096
#define CFI_CACHE_ROWS	4096	/* ~2.5 MiB, whatever the modules */
/*
 * The modules' symbol tables and CFI: at most this in all, and of files a
 * user other than root owns at most SYM_USER_BYTES_MAX for each such user
 * (a user's flood of large ELF files cannot take the room of the system's
 * libraries). Past it, idle modules are freed first; then a new module is
 * refused (its pcs shown as module+offset) and counted.
 */
#define SYM_BYTES_MAX		(2ull << 30)
#define SYM_USER_BYTES_MAX	(256ull << 20)

struct module {
	struct module *next;		/* all modules (for freeing) */
	struct module *bid_next;	/* build-id hash chain */
	struct elf_module *elf;		/* NULL: unreadable, pcs get +off */
	struct cfi_table *cfi;		/* NULL: no usable CFI */
	/*
	 * Shared by build-id (the same library in many containers parsed
	 * once) only between files of one owner: a build-id is what a file
	 * claims, so a user's ELF that forges libc's must name and unwind
	 * only that user's own processes. 0: not in the build-id table.
	 */
	uint8_t build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
	uid_t owner;
	bool in_bids;			/* in the build-id table */
	/* what its tables take (module_cost), charged to the file's owner */
	size_t cost;
	uid_t cost_uid;
	size_t refs;			/* mappings of cached processes */
	uint64_t idle_since;		/* symbolizer__forget's clock */
	uint64_t id;			/* never reused: the inline cache's key */
	/*
	 * Its DWARF (inlined functions, lines): read at the first frame of
	 * the module named with them, from the file itself when it has
	 * .debug_info, else from its separate debug file. The file is
	 * opened again then: dev and inode of the one loaded, to know it.
	 */
	struct dwarf_lines *dw;
	bool dw_tried;
	bool dw_loading;		/* with the debug loader: under way */
	uint32_t sym_gen;		/* symbols added since it was made */
	dev_t st_dev;
	ino_t st_ino;
	size_t dw_bytes;		/* part of cost */
};

struct devino {
	struct devino *next;
	uint32_t major, minor;
	uint64_t inode;
	struct module *mod;
};

struct pmap {
	struct sym_map m;
	struct module *mod;
};

struct proc {
	struct proc *next;
	pid_t pid;
	bool gone;			/* maps could not be read any more */
	bool is_jvm;
	bool read_once;
	bool offline;			/* from a raw file: never read /proc */
	uint64_t last_refresh_ns;
	struct pmap *maps;
	size_t nmaps;
	char *maps_text;		/* the text the maps were parsed from */
	size_t maps_len;
	struct perfmap *jit;		/* JIT symbols, from the first need */
	/*
	 * The mappings last found (proc_find): a stack's pcs fall in a few
	 * modules, looked up for CFI, for is_text and for the name. NULL
	 * whenever maps is replaced.
	 */
	struct pmap *hot[2];
	uint64_t gen;			/* these maps' load (pc_cache key) */
};

struct symbolizer {
	struct strtab *st;
	char *debug_root;
	char *kallsyms_path;
	struct proc *procs[PROC_BUCKETS];
	struct devino *devinos[MOD_BUCKETS];
	struct module *bids[MOD_BUCKETS];
	struct module *modules;
	size_t nmodules;
	struct module *vdso;		/* one vdso image for all processes */
	uint64_t vdso_len;
	bool vdso_tried;
	struct kallsyms *ks;
	bool ks_tried;
	struct symbolizer_stats stats;
	struct cfi_cache *cfi_cache;	/* rows by (module, pc), bounded */
	struct sym_cache *sym_cache;	/* names by (module, pc): see below */
	struct pc_cache *pc_cache;	/* frames by (pid, maps, pc): below */
	struct inl_cache *inl_cache;	/* inline chains by (module, pc) */
	bool inlines;			/* symbolizer__set_inlines */
	struct debug_loader *loader;	/* symbolizer__set_debug_loader */
	size_t dw_loading;		/* modules whose DWARF is under way */
	uint64_t inl_unready;		/* frames symbolizer__inlines left
					   out for that */
	uint64_t mod_ids;		/* modules made so far (module->id) */
	uint64_t maps_gen;		/* loads of maps so far */
	/* changes to the names of any maps' pcs (symbols added, modules
	 * freed, the kernel's table read), and names asked of JIT maps */
	uint64_t names_epoch;
	uint64_t jit_lookups;
	struct proc *last_proc;		/* proc_get's last answer */
	symbolizer_maps_fn maps_fallback;	/* gone processes' maps */
	void *maps_fallback_ctx;
	/* the modules' tables: in all, and per owner of their files */
	size_t mod_bytes, mod_bytes_max, user_bytes_max;
	struct u64map owner_bytes;	/* uid -> bytes + 1 */
	/* module path (interned) -> its build-id in hex (interned), and
	 * path -> 1 when that came from a file of root's */
	struct u64map path_bids, path_bid_root;
	bool refused_said;
};

struct inl_cache;
static void inl_cache_free(struct inl_cache *c);

struct symbolizer *symbolizer__new(struct strtab *st)
{
	struct symbolizer *sz;

	if (!st)
		return NULL;
	sz = calloc(1, sizeof(*sz));
	if (!sz)
		return NULL;
	sz->mod_bytes_max = SYM_BYTES_MAX;
	sz->user_bytes_max = SYM_USER_BYTES_MAX;
	sz->st = st;
	return sz;
}

/* module references of a process's mappings (see symbolizer__forget) */
static void maps_hold(struct pmap *pm, size_t n, bool hold)
{
	for (size_t i = 0; i < n; i++) {
		if (!pm[i].mod)
			continue;
		if (hold)
			pm[i].mod->refs++;
		else if (pm[i].mod->refs)
			pm[i].mod->refs--;
	}
}

static void free_proc_maps(struct proc *p)
{
	p->hot[0] = p->hot[1] = NULL;
	free(p->maps);
	p->maps = NULL;
	p->nmaps = 0;
	free(p->maps_text);
	p->maps_text = NULL;
	p->maps_len = 0;
}

void symbolizer__free(struct symbolizer *sz)
{
	size_t i;

	if (!sz)
		return;
	debug_loader__free(sz->loader);
	for (i = 0; i < PROC_BUCKETS; i++) {
		struct proc *p = sz->procs[i], *n;

		for (; p; p = n) {
			n = p->next;
			free_proc_maps(p);
			perfmap__free(p->jit);
			free(p);
		}
	}
	for (i = 0; i < MOD_BUCKETS; i++) {
		struct devino *d = sz->devinos[i], *n;

		for (; d; d = n) {
			n = d->next;
			free(d);
		}
	}
	while (sz->modules) {
		struct module *m = sz->modules;

		sz->modules = m->next;
		elf_module__free(m->elf);
		cfi_table__free(m->cfi);
		dwarf_lines__free(m->dw);
		free(m);
	}
	kallsyms__free(sz->ks);
	inl_cache_free(sz->inl_cache);
	cfi_cache__free(sz->cfi_cache);
	u64map__free(&sz->owner_bytes);
	u64map__free(&sz->path_bids);
	u64map__free(&sz->path_bid_root);
	free(sz->sym_cache);
	free(sz->pc_cache);
	free(sz->debug_root);
	free(sz->kallsyms_path);
	free(sz);
}

int symbolizer__set_debug_root(struct symbolizer *sz, const char *dir)
{
	char *d = NULL;

	if (dir) {
		d = strdup(dir);
		if (!d)
			return -ENOMEM;
	}
	free(sz->debug_root);
	sz->debug_root = d;
	return 0;
}

int symbolizer__set_kallsyms_path(struct symbolizer *sz, const char *path)
{
	char *d = NULL;

	if (path) {
		d = strdup(path);
		if (!d)
			return -ENOMEM;
	}
	free(sz->kallsyms_path);
	sz->kallsyms_path = d;
	kallsyms__free(sz->ks);
	sz->ks = NULL;
	sz->ks_tried = false;
	return 0;
}

void symbolizer__stats(const struct symbolizer *sz, struct symbolizer_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!sz)
		return;
	*out = sz->stats;
	out->modules = sz->nmodules;
	for (const struct module *m = sz->modules; m; m = m->next)
		out->dwarf_index_bytes += dwarf_lines__index_bytes(m->dw);
	out->module_bytes = sz->mod_bytes;
	cfi_cache__stats(sz->cfi_cache, &out->cfi_hits, &out->cfi_misses);
}

void symbolizer__set_limits(struct symbolizer *sz, size_t all, size_t user)
{
	sz->mod_bytes_max = all;
	sz->user_bytes_max = user;
}

size_t symbolizer__nmodules(const struct symbolizer *sz)
{
	return sz ? sz->nmodules : 0;
}

size_t symbolizer__nprocs(const struct symbolizer *sz)
{
	return sz ? sz->stats.procs : 0;
}

static uint32_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x;
}

static struct proc *proc_get(struct symbolizer *sz, pid_t pid, bool create)
{
	uint32_t h;
	struct proc *p;

	/* a sample's frames ask for the same pid over and over */
	if (sz->last_proc && sz->last_proc->pid == pid)
		return sz->last_proc;
	h = hash64((uint64_t)pid) % PROC_BUCKETS;
	for (p = sz->procs[h]; p; p = p->next)
		if (p->pid == pid)
			return sz->last_proc = p;
	if (!create)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	sz->stats.procs++;
	p->next = sz->procs[h];
	sz->procs[h] = p;
	return sz->last_proc = p;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static size_t module_cost(const struct module *m);
static void module_destroy(struct symbolizer *sz, struct module *m);

/* what the tables of a module about to be made will take */
static size_t tables_cost(const struct elf_module *elf,
			  const struct cfi_table *cfi)
{
	return elf_module__nsyms(elf) * 64 +
	       (cfi ? cfi_table__bytes(cfi) : 0) + sizeof(struct module);
}

/* a user's bytes (kept + 1 in owner_bytes: 0 there is no entry) */
static size_t owner_bytes(const struct symbolizer *sz, uid_t uid)
{
	uint64_t v = uid ? u64map__get(&sz->owner_bytes, (uint64_t)uid) : 0;

	return v ? (size_t)(v - 1) : 0;
}

static void set_owner_bytes(struct symbolizer *sz, uid_t uid, size_t bytes)
{
	u64map__put(&sz->owner_bytes, (uint64_t)uid, (uint64_t)bytes + 1);
}

static void charge(struct symbolizer *sz, struct module *m, uid_t uid,
		   size_t cost)
{
	m->cost = cost;
	m->cost_uid = uid;
	sz->mod_bytes += cost;
	if (uid)
		set_owner_bytes(sz, uid, owner_bytes(sz, uid) + cost);
}

static void uncharge(struct symbolizer *sz, const struct module *m)
{
	size_t mine = owner_bytes(sz, m->cost_uid);

	sz->mod_bytes -= sz->mod_bytes >= m->cost ? m->cost : sz->mod_bytes;
	if (m->cost_uid)
		set_owner_bytes(sz, m->cost_uid,
				mine >= m->cost ? mine - m->cost : 0);
}

/*
 * Room for cost more bytes of uid's file: idle modules freed (the
 * longest idle first, uid's own first when uid's share is what is full)
 * until it fits; false when it cannot.
 */
static bool budget_room(struct symbolizer *sz, uid_t uid, size_t cost)
{
	for (;;) {
		bool all_ok = sz->mod_bytes + cost <= sz->mod_bytes_max;
		bool mine_ok = !uid ||
			       owner_bytes(sz, uid) + cost <= sz->user_bytes_max;
		struct module *m, *oldest = NULL;

		if (all_ok && mine_ok)
			return true;
		for (m = sz->modules; m; m = m->next) {
			if (m->refs || m == sz->vdso ||
			    (!mine_ok && m->cost_uid != uid))
				continue;
			if (!oldest || m->idle_since < oldest->idle_since)
				oldest = m;
		}
		if (!oldest)
			return false;
		module_destroy(sz, oldest);
	}
}

/*
 * The owner a module of the file st may be shared under: its uid, unless
 * others than its owner may write it (then never shared: -1).
 */
static uid_t share_owner(const struct stat *st)
{
	return (st->st_mode & 022) ? (uid_t)-1 : st->st_uid;
}

/* a module of owner's with this build-id, or NULL */
static struct module *module_by_id(struct symbolizer *sz, const uint8_t *id,
				   size_t idlen, uid_t owner)
{
	struct module *m;
	uint32_t h = 0;

	if (!idlen || owner == (uid_t)-1)
		return NULL;
	for (size_t i = 0; i < idlen; i++)
		h = h * 31 + id[i];
	for (m = sz->bids[h % MOD_BUCKETS]; m; m = m->bid_next)
		if (m->build_id_len == idlen && m->owner == owner &&
		    memcmp(m->build_id, id, idlen) == 0)
			return m;
	return NULL;
}

/* a module by build-id and owner, or a new one around elf (owned from now
 * on); owner -1: never shared */
static struct module *module_for(struct symbolizer *sz, const uint8_t *id,
				 size_t idlen, uid_t owner,
				 struct elf_module *elf)
{
	struct module *m;
	uint32_t h = 0;
	size_t i;

	m = module_by_id(sz, id, idlen, owner);
	if (m) {
		elf_module__free(elf);
		return m;
	}
	for (i = 0; i < idlen; i++)
		h = h * 31 + id[i];
	h %= MOD_BUCKETS;
	m = calloc(1, sizeof(*m));
	if (!m) {
		elf_module__free(elf);
		return NULL;
	}
	m->elf = elf;
	m->id = ++sz->mod_ids;
	if (idlen) {
		memcpy(m->build_id, id, idlen);
		m->build_id_len = idlen;
		m->owner = owner;
	}
	if (idlen && owner != (uid_t)-1) {
		m->bid_next = sz->bids[h];
		sz->bids[h] = m;
		m->in_bids = true;
	}
	m->next = sz->modules;
	sz->modules = m;
	sz->nmodules++;
	return m;
}

/* the module's CFI (owned from now on), unless it has one already */
static void module_set_cfi(struct symbolizer *sz, struct module *m,
			   struct cfi_table *cfi)
{
	if (!m || m->cfi || !cfi) {
		cfi_table__free(cfi);
		return;
	}
	m->cfi = cfi;
	sz->stats.cfi_modules++;
	sz->stats.cfi_bytes += cfi_table__bytes(cfi);
}

static int open_mapping(struct symbolizer *sz, pid_t pid, int root_fd,
			const struct maps_entry *e)
{
	char mf[96], why[SAFE_OPEN_WHY_MAX] = "", why2[SAFE_OPEN_WHY_MAX];
	int fd = -ENOENT, refused = 0;

	if (!e->deleted && root_fd >= 0) {
		fd = safe_open(root_fd, e->path, 0, ELF_FILE_MAX, NULL, why,
			       sizeof(why));
		if (fd >= 0)
			sz->stats.open_root++;
		else if (fd == -EREMOTE)
			refused = 1;
	}
	if (fd < 0 && pid > 0) {
		/* deleted, replaced or unreachable in the root: the mapped file */
		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)e->start, (unsigned long long)e->end);
		fd = safe_open(SAFE_OPEN_HOST, mf, SAFE_OPEN_PROC_LINK,
			       ELF_FILE_MAX, NULL, why2, sizeof(why2));
		if (fd >= 0)
			sz->stats.open_map_files++;
		else if (fd == -EREMOTE && !refused) {
			refused = 1;
			snprintf(why, sizeof(why), "%s", why2);
		}
	}
	if (fd < 0) {
		sz->stats.open_failed++;
		/* once a file: a module not opened is remembered */
		if (refused) {
			if (pid > 0)
				fprintf(stderr, "warning: pid %d: %s %s; its frames stay unnamed\n",
					(int)pid, e->path, why);
			else
				fprintf(stderr, "warning: %s %s; its frames stay unnamed\n",
					e->path, why);
		}
	}
	return fd;
}

static struct module *resolve_module(struct symbolizer *sz, pid_t pid,
				     int root_fd, const struct maps_entry *e)
{
	uint32_t h = hash64(((uint64_t)e->dev_major << 40) ^
			    ((uint64_t)e->dev_minor << 20) ^ e->inode) %
		     MOD_BUCKETS;
	char refused[PATH_MAX + 128] = "";
	struct elf_module_opts o = {
		.debug_root = sz->debug_root,
		.root_fd = root_fd,
		.path = e->path,
		.refused = refused,
		.refusedlen = sizeof(refused),
	};
	uint8_t id[ELF_BUILD_ID_MAX];
	struct elf_module *elf;
	struct cfi_table *cfi;
	struct devino *d;
	struct module *m;
	struct stat st;
	uid_t owner, file_uid;
	size_t cost;
	int fd, idlen;

	/* inode 0 (some special files) cannot identify a file */
	if (e->inode) {
		for (d = sz->devinos[h]; d; d = d->next)
			if (d->major == e->dev_major && d->minor == e->dev_minor &&
			    d->inode == e->inode)
				return d->mod;
	}
	fd = open_mapping(sz, pid, root_fd, e);
	if (fd < 0) {
		m = NULL;
		goto remember;
	}
	if (fstat(fd, &st)) {
		owner = (uid_t)-1;
		file_uid = (uid_t)-2;	/* unknown: a user's share */
		st.st_dev = 0;
		st.st_ino = 0;
	} else {
		owner = share_owner(&st);
		file_uid = st.st_uid;
	}
	idlen = elf_read_build_id(fd, id, sizeof(id));
	m = idlen > 0 ? module_by_id(sz, id, (size_t)idlen, owner) : NULL;
	if (m) {
		close(fd);
		goto remember;
	}
	elf = elf_module__load(fd, &o);
	cfi = elf ? cfi_table__load_fd(fd) : NULL;
	close(fd);
	/* said only when no other debug file stood in for the refused one */
	if (refused[0] && elf && !(elf_module__sources(elf) &
				   (ELF_SRC_DEBUG_BUILDID | ELF_SRC_DEBUG_LINK))) {
		sz->stats.debug_refused++;
		if (pid > 0)
			fprintf(stderr, "warning: pid %d: %s: symbols of %s come from its own tables only\n",
				(int)pid, refused, e->path);
		else
			fprintf(stderr, "warning: %s: symbols of %s come from its own tables only\n",
				refused, e->path);
	}
	if (!elf) {
		m = NULL;
		goto remember;
	}
	cost = tables_cost(elf, cfi);
	if (!budget_room(sz, file_uid, cost)) {
		elf_module__free(elf);
		cfi_table__free(cfi);
		sz->stats.modules_refused++;
		if (!sz->refused_said)
			fprintf(stderr, "warning: the symbol tables of modules "
				"reached their memory limit (%llu MiB in all, "
				"%llu MiB for each user's files): %s of uid %u "
				"and later ones are shown as module+offset\n",
				(unsigned long long)(sz->mod_bytes_max >> 20),
				(unsigned long long)(sz->user_bytes_max >> 20),
				e->path, (unsigned)file_uid);
		sz->refused_said = true;
		m = NULL;
		goto remember;
	}
	m = module_for(sz, id, idlen > 0 ? (size_t)idlen : 0, owner, elf);
	if (m && m->elf == elf) {
		charge(sz, m, file_uid, cost);
		m->st_dev = st.st_dev;
		m->st_ino = st.st_ino;
	}
	module_set_cfi(sz, m, cfi);
remember:
	if (!e->inode)
		return m;
	d = calloc(1, sizeof(*d));
	if (!d)
		return m;
	d->major = e->dev_major;
	d->minor = e->dev_minor;
	d->inode = e->inode;
	d->mod = m;
	d->next = sz->devinos[h];
	sz->devinos[h] = d;
	return m;
}

/*
 * The build-id a module path has, for the pprof mappings: the first file
 * seen at that path, or a file of root's over a user's (the same path in
 * a user's container should not name the host's library with its id).
 */
static void note_build_id(struct symbolizer *sz, const char *path,
			  const struct module *m)
{
	uint64_t k = (uint64_t)(uintptr_t)path;
	bool root = m->cost_uid == 0 && m->cost;
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	const char *h;

	if (!m->build_id_len || !path ||
	    (u64map__get(&sz->path_bids, k) &&
	     (!root || u64map__get(&sz->path_bid_root, k))))
		return;
	elf_build_id_hex(m->build_id, m->build_id_len, hex);
	h = strtab__intern(sz->st, hex);
	if (!h || u64map__put(&sz->path_bids, k, (uint64_t)(uintptr_t)h))
		return;
	if (root)
		u64map__put(&sz->path_bid_root, k, 1);
}

void symbolizer__each_build_id(const struct symbolizer *sz,
			       void (*fn)(void *ctx, const char *module,
					  const char *hex),
			       void *ctx)
{
	const struct u64map *b = &sz->path_bids;

	for (size_t i = 0; i < b->cap; i++)
		if (b->vals[i])
			fn(ctx, (const char *)(uintptr_t)b->keys[i],
			   (const char *)(uintptr_t)b->vals[i]);
}

/* the vdso image of pid, read from its memory; one for all processes */
static struct module *resolve_vdso(struct symbolizer *sz, pid_t pid,
				   const struct maps_entry *e)
{
	uint64_t len = e->end - e->start;
	char path[64];
	void *buf;
	ssize_t r;
	int fd;

	if (sz->vdso_tried)
		return len == sz->vdso_len ? sz->vdso : NULL;
	if (len == 0 || len > VDSO_MAX)
		return NULL;
	sz->vdso_tried = true;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(len);
	if (buf) {
		r = pread(fd, buf, len, (off_t)e->start);
		if (r == (ssize_t)len) {
			struct elf_module *elf = elf_module__load_mem(buf, len);

			if (elf) {
				sz->vdso = module_for(sz, NULL, 0, 0, elf);
				sz->vdso_len = len;
				module_set_cfi(sz, sz->vdso,
					       cfi_table__load_mem(buf, len));
			}
		}
		free(buf);
	}
	close(fd);
	return sz->vdso;
}

/*
 * A process known from a recording is gone: the vdso is the running
 * kernel's, the same image as in our own process (when the sizes agree).
 */
static struct module *resolve_own_vdso(struct symbolizer *sz,
				       const struct maps_entry *e)
{
	struct module *m = NULL;
	struct maps mp;

	if (sz->vdso_tried)
		return e->end - e->start == sz->vdso_len ? sz->vdso : NULL;
	if (maps__read(getpid(), &mp))
		return NULL;
	for (size_t i = 0; i < mp.n; i++)
		if (mp.e[i].kind == MAPS_SPECIAL && mp.e[i].path &&
		    !strcmp(mp.e[i].path, "[vdso]") &&
		    mp.e[i].end - mp.e[i].start == e->end - e->start)
			m = resolve_vdso(sz, getpid(), &mp.e[i]);
	maps__free(&mp);
	return m;
}

/*
 * Build p's mappings from a maps text (taken over: freed with p). Module
 * files are opened under root_fd; mf_pid is the pid whose map_files may be
 * used as a fallback (0: none, for processes that are gone).
 */
static int proc_load(struct symbolizer *sz, struct proc *p, char *text,
		     size_t len, int root_fd, pid_t mf_pid)
{
	struct maps mp;
	struct pmap *pm = NULL;
	int err;
	size_t i, n = 0;
	bool jvm = false;

	err = maps__parse(text, len, &mp);
	if (err) {
		free(text);
		return err;
	}
	pm = calloc(mp.n ? mp.n : 1, sizeof(*pm));
	if (!pm) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < mp.n; i++) {
		const struct maps_entry *e = &mp.e[i];
		struct pmap *q = &pm[n];

		q->m.start = e->start;
		q->m.end = e->end;
		q->m.pgoff = e->pgoff;
		q->m.exec = e->x;
		q->m.bias = e->start - e->pgoff;
		if (e->kind == MAPS_ANON) {
			q->m.bias = e->start;
			n++;
			continue;
		}
		q->m.path = strtab__intern(sz->st, e->path);
		if (!q->m.path) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (e->kind == MAPS_FILE) {
			q->m.is_jvm = strcmp(basename_of(e->path), "libjvm.so") == 0;
			jvm |= q->m.is_jvm;
			if (e->x)
				q->mod = resolve_module(sz, mf_pid, root_fd, e);
			if (q->mod)
				note_build_id(sz, q->m.path, q->mod);
		} else if (e->x && strcmp(e->path, "[vdso]") == 0) {
			q->mod = mf_pid > 0 ? resolve_vdso(sz, mf_pid, e) :
				 resolve_own_vdso(sz, e);
			q->m.bias = e->start;
		} else {
			q->m.bias = e->start;
		}
		if (q->mod && q->mod->elf)
			q->m.bias = elf_module__bias(q->mod->elf, e->start,
						     e->kind == MAPS_FILE ?
						     e->pgoff : 0, e->x);
		n++;
	}
	/*
	 * A data page can belong to two PT_LOADs (RELRO after read-only
	 * data): take the bias of the same file's code mapping instead.
	 */
	for (i = 0; i < n; i++) {
		size_t j;

		if (pm[i].m.exec || !pm[i].m.path || pm[i].m.path[0] != '/')
			continue;
		for (j = 0; j < n; j++)
			if (pm[j].m.exec && pm[j].m.path == pm[i].m.path) {
				pm[i].m.bias = pm[j].m.bias;
				break;
			}
	}
	/* the new maps hold their modules before the old ones let go */
	maps_hold(pm, n, true);
	maps_hold(p->maps, p->nmaps, false);
	free_proc_maps(p);
	p->maps = pm;
	p->nmaps = n;
	p->maps_text = text;
	p->maps_len = len;
	p->gen = ++sz->maps_gen;
	text = NULL;
	p->is_jvm = jvm;
	p->read_once = true;
	pm = NULL;
cleanup:
	free(pm);
	free(text);
	maps__free(&mp);
	return err;
}

/* gone, perhaps before /proc was read: the maps the fallback kept */
static int proc_read_fallback(struct symbolizer *sz, struct proc *p)
{
	char *text = NULL;
	pid_t root_pid = 0;
	size_t len = 0;
	int root_fd = -1, err;

	if (!sz->maps_fallback ||
	    sz->maps_fallback(sz->maps_fallback_ctx, p->pid, &text, &len,
			      &root_pid))
		return -ENOENT;
	if (root_pid > 0) {
		root_fd = safe_open__root(root_pid);
	}
	if (root_fd < 0)
		root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	err = proc_load(sz, p, text, len, root_fd, 0);
	if (root_fd >= 0)
		close(root_fd);
	if (!err) {
		p->read_once = true;
		sz->stats.maps_fallback++;
	}
	return err;
}

static int proc_read(struct symbolizer *sz, struct proc *p)
{
	char path[64], *text = NULL;
	size_t len = 0;
	int fd, root_fd, err;

	if (p->offline)
		return 0;
	p->last_refresh_ns = clock__mono_ns();
	sz->stats.map_reads++;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	err = maps__slurp(fd, &text, &len);
	close(fd);
	if (!err && len == 0)
		err = -ESRCH;	/* a zombie's maps are empty: it is gone */
	if (err)
		goto fail;
	root_fd = safe_open__root(p->pid);
	err = proc_load(sz, p, text, len, root_fd, p->pid);
	if (root_fd >= 0)
		close(root_fd);
	return err;
fail:
	free(text);
	if (err == -ENOENT || err == -ESRCH) {
		p->gone = true;
		if (proc_read_fallback(sz, p) == 0)
			return 0;
	}
	return err;
}

int symbolizer__maps_text(struct symbolizer *sz, pid_t pid, const char **text,
			  size_t *len)
{
	struct proc *p = sz ? proc_get(sz, pid, false) : NULL;

	if (!p || !p->maps_text)
		return -ENOENT;
	*text = p->maps_text;
	*len = p->maps_len;
	return 0;
}

int symbolizer__add_offline(struct symbolizer *sz, pid_t pid, const char *text,
			    size_t len)
{
	struct proc *p = sz ? proc_get(sz, pid, true) : NULL;
	char *copy;
	int root_fd, err;

	if (!p)
		return -ENOMEM;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	/* the process is gone (or its pid reused): files by their host path */
	root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	err = proc_load(sz, p, copy, len, root_fd, 0);
	if (root_fd >= 0)
		close(root_fd);
	p->offline = true;
	p->gone = true;
	p->read_once = true;
	return err;
}



static struct pmap *proc_find(struct proc *p, uint64_t pc)
{
	size_t lo = 0, hi = p->nmaps;
	struct pmap *m;

	for (int i = 0; i < 2; i++) {
		m = p->hot[i];
		if (m && pc >= m->m.start && pc < m->m.end)
			return m;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pc < p->maps[mid].m.start) {
			hi = mid;
		} else if (pc >= p->maps[mid].m.end) {
			lo = mid + 1;
		} else {
			m = &p->maps[mid];
			p->hot[1] = p->hot[0];
			p->hot[0] = m;
			return m;
		}
	}
	return NULL;
}

/* a first read, retried (rate-limited) while it fails, e.g. EACCES */
static void ensure_read(struct symbolizer *sz, struct proc *p)
{
	if (p->read_once || p->gone)
		return;
	if (p->last_refresh_ns && clock__mono_ns() - p->last_refresh_ns < REFRESH_NS)
		return;
	proc_read(sz, p);
}

static struct pmap *find_pmap(struct symbolizer *sz, pid_t pid, uint64_t pc)
{
	struct proc *p = proc_get(sz, pid, true);
	struct pmap *m;

	if (!p)
		return NULL;
	if (!p->read_once) {
		ensure_read(sz, p);
		return proc_find(p, pc);
	}
	m = proc_find(p, pc);
	if (m || p->gone)
		return m;
	/* garbage pcs must not make us reread maps for every frame */
	if (clock__mono_ns() - p->last_refresh_ns < REFRESH_NS)
		return NULL;
	proc_read(sz, p);
	return proc_find(p, pc);
}

const struct sym_map *symbolizer__find_map(struct symbolizer *sz, pid_t pid,
					    uint64_t pc)
{
	struct pmap *m = sz ? find_pmap(sz, pid, pc) : NULL;

	return m ? &m->m : NULL;
}

bool symbolizer__is_jvm(struct symbolizer *sz, pid_t pid)
{
	struct proc *p = sz ? proc_get(sz, pid, true) : NULL;

	if (!p)
		return false;
	ensure_read(sz, p);
	return p->is_jvm;
}

int symbolizer__refresh(struct symbolizer *sz, pid_t pid)
{
	struct proc *p = sz ? proc_get(sz, pid, true) : NULL;

	if (!p)
		return -ENOMEM;
	return proc_read(sz, p);
}

/* the display name of symbol idx: demangled short form, interned once */
static const char *display_name(struct symbolizer *sz, struct elf_module *elf,
				size_t idx)
{
	const char **slot = elf_module__display_slot(elf, idx);
	const char *raw = elf_module__sym_name(elf, idx);
	char buf[NAME_MAX_LEN];

	if (slot && *slot)
		return *slot;
	if (demangle__short(raw, buf, sizeof(buf)) < 0)
		return NULL;
	raw = strtab__intern(sz->st, buf);
	if (slot)
		*slot = raw;
	return raw;
}

/* the process's jitdump as its maps show it ("jit-PID.dump"), or NULL */
static const char *jitdump_path(const struct proc *p)
{
	for (size_t i = 0; i < p->nmaps; i++) {
		const char *b, *path = p->maps[i].m.path;
		size_t n;

		if (!path || path[0] != '/')
			continue;
		b = basename_of(path);
		n = strlen(b);
		if (n > 9 && !strncmp(b, "jit-", 4) && !strcmp(b + n - 5, ".dump") &&
		    strspn(b + 4, "0123456789") == n - 9)
			return path;
	}
	return NULL;
}

/*
 * A pc in anonymous memory, in a file that is no ELF module, or in no
 * mapping: JIT code the process may have named in its perf map or
 * jitdump (perfmap.c). Read again, rate-limited, when the pc is not there
 * yet. -ENOENT leaves out as it was: unknown JIT code stays a pc.
 */
static int native_jit(struct symbolizer *sz, pid_t pid, uint64_t pc,
		      struct frame *out)
{
	struct proc *p = proc_get(sz, pid, false);
	const char *name, *file = NULL;

	sz->jit_lookups++;
	if (!p || p->offline)
		return -ENOENT;
	if (!p->jit && !(p->jit = perfmap__new(pid)))
		return -ENOENT;
	name = perfmap__find(p->jit, pc, &file);
	if (!name && !p->gone && perfmap__due(p->jit)) {
		perfmap__refresh(p->jit, -1, jitdump_path(p));
		name = perfmap__find(p->jit, pc, &file);
	}
	if (!name)
		return -ENOENT;
	out->symbol = strtab__intern(sz->st, name);
	out->module = file ? strtab__intern(sz->st, file) : NULL;
	out->offset = pc;	/* a JIT map's addresses are the pcs */
	return out->symbol ? 0 : -ENOENT;
}

/*
 * Names already resolved, by (ELF module, file offset) and by kernel pc:
 * the same few thousand pcs come back sample after sample, and a binary
 * search over libjvm's symbols (or the kernel's) is a cache miss at each
 * step. Direct-mapped and bounded; a slot holds the last pc that fell in
 * it. A module freed (symbolizer__forget) may leave its address to
 * another: the module entries are dropped whenever modules_freed moves.
 */
#define SYM_CACHE_SLOTS	4096

struct sym_cache_native {
	const struct elf_module *elf;	/* NULL: empty */
	uint64_t off;
	const char *symbol;		/* NULL: no symbol there */
};

struct sym_cache_kernel {
	uint64_t pc;			/* 0: empty */
	const char *symbol, *module;
	uint64_t off;
};

struct sym_cache {
	size_t modules_freed;		/* sz->stats's when filled */
	struct sym_cache_native native[SYM_CACHE_SLOTS];
	struct sym_cache_kernel kernel[SYM_CACHE_SLOTS];
};

static struct sym_cache *sym_cache_get(struct symbolizer *sz)
{
	struct sym_cache *c = sz->sym_cache;

	if (!c && (c = sz->sym_cache = calloc(1, sizeof(*c))))
		c->modules_freed = sz->stats.modules_freed;
	if (c && c->modules_freed != sz->stats.modules_freed) {
		memset(c->native, 0, sizeof(c->native));
		c->modules_freed = sz->stats.modules_freed;
	}
	return c;
}

static size_t sym_cache_slot(uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;

	return (h >> 40) & (SYM_CACHE_SLOTS - 1);
}

/* symbol of offset off in elf: the cache's, else looked up and kept */
static const char *native_name(struct symbolizer *sz, struct elf_module *elf,
			       uint64_t off)
{
	struct sym_cache *c = sym_cache_get(sz);
	struct sym_cache_native *e = NULL;
	const char *name = NULL;
	long idx;

	if (c) {
		e = &c->native[sym_cache_slot((uintptr_t)elf, off)];
		if (e->elf == elf && e->off == off)
			return e->symbol;
	}
	idx = elf_module__lookup(elf, off);
	if (idx >= 0)
		name = display_name(sz, elf, idx);
	if (e) {
		e->elf = elf;
		e->off = off;
		e->symbol = name;
	}
	return name;
}

/*
 * Frames already named, by (pid, maps, pc): the same native pcs (a
 * thread's start, the VM's entry into Java, a loop's calls) come back
 * sample after sample, and each was a mapping search and a name lookup.
 * The maps are those of one load (proc->gen, never reused, so a pid read
 * again or reused misses); only names from an ELF module are kept (JIT
 * names may come later). Direct-mapped and bounded; strings are interned.
 */
#define PC_CACHE_SLOTS	4096

struct pc_cache_ent {
	uint64_t gen;			/* 0: empty */
	uint64_t pc;
	const char *symbol, *module;
	uint64_t offset;
	bool jvm;
};

struct pc_cache {
	struct pc_cache_ent e[PC_CACHE_SLOTS];
};

static struct pc_cache_ent *pc_cache_slot(struct symbolizer *sz,
					  uint64_t gen, uint64_t pc)
{
	if (!sz->pc_cache && !(sz->pc_cache = calloc(1, sizeof(*sz->pc_cache))))
		return NULL;
	return &sz->pc_cache->e[sym_cache_slot(pc, gen) & (PC_CACHE_SLOTS - 1)];
}

int symbolizer__native(struct symbolizer *sz, pid_t pid, uint64_t pc,
		       struct frame *out)
{
	struct pc_cache_ent *e = NULL;
	struct proc *p;
	struct pmap *m;

	out->symbol = NULL;
	out->module = NULL;
	out->offset = 0;
	if (!sz)
		return -ENOENT;
	p = proc_get(sz, pid, false);
	if (p && p->gen && (e = pc_cache_slot(sz, p->gen, pc)) &&
	    e->gen == p->gen && e->pc == pc) {
		out->symbol = e->symbol;
		out->module = e->module;
		out->offset = e->offset;
		if (e->jvm)
			out->flags |= FRAME_F_JVM_CPP;
		return out->symbol ? 0 : -ENOENT;
	}
	m = find_pmap(sz, pid, pc);
	if (!m)
		return native_jit(sz, pid, pc, out);
	out->module = m->m.path;
	out->offset = pc - m->m.bias;
	if (m->m.is_jvm)
		out->flags |= FRAME_F_JVM_CPP;
	if (!m->mod || !m->mod->elf)
		return native_jit(sz, pid, pc, out);
	out->symbol = native_name(sz, m->mod->elf, out->offset);
	/* the maps the name came from: find_pmap may have read them again */
	p = proc_get(sz, pid, false);
	if (p && p->gen && (e = pc_cache_slot(sz, p->gen, pc))) {
		e->gen = p->gen;
		e->pc = pc;
		e->symbol = out->symbol;
		e->module = out->module;
		e->offset = out->offset;
		e->jvm = m->m.is_jvm;
	}
	return out->symbol ? 0 : -ENOENT;
}

/*
 * Inlined functions and lines by (module, file vaddr looked up): a hot
 * loop's few pcs come back in every sample, and each lookup walks the
 * DIEs of a compile unit. Direct-mapped; the chains it keeps take at most
 * INL_CACHE_BYTES (past it an answer is not kept, and counted). Keys are
 * module ids, never reused, so a freed module's entries only wait to be
 * replaced. Strings are interned.
 */
#define INL_CACHE_SLOTS	8192	/* 1 << 13: the top 13 bits of a hash */
#define INL_CACHE_BYTES	(16u << 20)
/* a module's debug sections read for its DWARF, at most (inflated) */
#define DWARF_BYTES_MAX	(1ull << 30)

struct inl_ent {
	const char *name;		/* display name; NULL: unknown */
	const char *file;
	int32_t line;			/* -1: unknown */
};

struct inl_slot {
	uint64_t mod_id;		/* 0: empty */
	uint64_t vaddr;
	uint32_t n;			/* 0: no DWARF there */
	struct inl_ent *e;		/* n entries, the function last */
};

struct inl_cache {
	struct inl_slot s[INL_CACHE_SLOTS];
	size_t bytes;			/* of the entries kept */
};

static void inl_cache_free(struct inl_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < INL_CACHE_SLOTS; i++)
		free(c->s[i].e);
	free(c);
}

static struct inl_slot *inl_slot(struct symbolizer *sz, uint64_t id,
				 uint64_t vaddr)
{
	if (!sz->inl_cache &&
	    !(sz->inl_cache = calloc(1, sizeof(*sz->inl_cache))))
		return NULL;
	return &sz->inl_cache->s[((vaddr ^ id * 0x9e3779b97f4a7c15ull) *
				  0xff51afd7ed558ccdull) >> 51];
}

/* the same file as the one m was loaded from */
static bool module_same_file(const struct module *m, int fd,
			     const struct stat *st)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	int n;

	if (m->st_ino && st->st_dev == m->st_dev && st->st_ino == m->st_ino)
		return true;
	if (!m->build_id_len)
		return false;
	n = elf_read_build_id(fd, id, sizeof(id));
	return n == (int)m->build_id_len && !memcmp(id, m->build_id, n);
}

/*
 * The module's file opened again (for its DWARF): through the process's
 * root while it lives, else by its path on the host (a recording's
 * processes, gone ones), then the mapped file itself; only the file the
 * module was loaded from. *root_fd gets the root used (the caller closes
 * it, when >= 0): its /usr/lib/debug is searched too.
 */
static int module_reopen(struct proc *p, const struct pmap *pm, int *root_fd)
{
	bool live = !p->offline && !p->gone;
	char mf[96];
	struct stat st;
	int fd;

	*root_fd = live ? safe_open__root(p->pid) : -1;
	if (*root_fd < 0)
		*root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = safe_open(*root_fd, pm->m.path, 0, ELF_FILE_MAX, &st, NULL, 0);
	if (fd >= 0 && module_same_file(pm->mod, fd, &st))
		return fd;
	if (fd >= 0)
		close(fd);
	if (!live)
		return -ENOENT;
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)p->pid,
		 (unsigned long long)pm->m.start, (unsigned long long)pm->m.end);
	fd = safe_open(SAFE_OPEN_HOST, mf, SAFE_OPEN_PROC_LINK, ELF_FILE_MAX,
		       &st, NULL, 0);
	if (fd >= 0 && module_same_file(pm->mod, fd, &st))
		return fd;
	if (fd >= 0)
		close(fd);
	return -ENOENT;
}

/* m's DWARF dw, read in ns: kept when the limits allow (else counted) */
static void module_install_dwarf(struct symbolizer *sz, struct module *m,
				 struct dwarf_lines *dw, uint64_t ns)
{
	size_t bytes = dwarf_lines__bytes(dw);

	sz->stats.dwarf_ns += ns;
	if (!budget_room(sz, m->cost_uid, bytes)) {
		dwarf_lines__free(dw);
		sz->stats.dwarf_refused++;
		return;
	}
	m->dw = dw;
	m->dw_bytes = bytes;
	m->cost += bytes;
	sz->mod_bytes += bytes;
	if (m->cost_uid)
		set_owner_bytes(sz, m->cost_uid,
				owner_bytes(sz, m->cost_uid) + bytes);
	sz->stats.dwarf_modules++;
	sz->stats.dwarf_bytes += bytes;
	if (bytes > sz->stats.dwarf_max_bytes)
		sz->stats.dwarf_max_bytes = bytes;
}

/*
 * The module's DWARF, once: from its file when that has .debug_info, else
 * from its separate debug file (as its symbols find one), else, with
 * debuginfod servers, from them. What it holds is charged to the file's
 * owner like the module's other tables; past the limits it is not kept
 * (counted in dwarf_refused). With the debug loader the files are opened
 * here and read on its thread: the module is held (refs) until its
 * result is taken (symbolizer__poll_debug).
 */
static void module_load_dwarf(struct symbolizer *sz, struct proc *p,
			      struct pmap *pm)
{
	struct module *m = pm->mod;
	uint64_t t0 = clock__mono_ns(), max;
	struct dwarf_lines *dw = NULL;
	int fd = -1, dfd = -1, root_fd = -1;
	struct elf_module_opts o = {
		.debug_root = sz->debug_root,
		.path = pm->m.path,
	};

	m->dw_tried = true;
	if (m == sz->vdso || !pm->m.path || pm->m.path[0] != '/')
		return;
	max = m->cost_uid ? sz->user_bytes_max : sz->mod_bytes_max;
	if (max > DWARF_BYTES_MAX)
		max = DWARF_BYTES_MAX;
	fd = module_reopen(p, pm, &root_fd);
	if (fd < 0)
		goto cleanup;
	o.root_fd = root_fd;
	if (sz->loader) {
		struct debug_job j = { .key = m, .fd = fd, .max_bytes = max };
		size_t idlen = m->build_id_len;

		j.debug_fd = elf_debug_file_open(fd, &o);
		if (j.debug_fd < 0)
			j.debug_fd = -1;
		if (idlen <= sizeof(j.build_id)) {
			memcpy(j.build_id, m->build_id, idlen);
			j.build_id_len = idlen;
		}
		fd = -1;	/* the loader's now */
		if (debug_loader__submit(sz->loader, &j))
			goto cleanup;
		m->refs++;
		m->dw_loading = true;
		sz->dw_loading++;
		goto cleanup;
	}
	dw = dwarf_lines__open(fd, max);
	if (!dw && errno == ENOENT) {
		dfd = elf_debug_file_open(fd, &o);
		if (dfd >= 0) {
			dw = dwarf_lines__open(dfd, max);
			close(dfd);
		}
	}
	if (!dw) {
		if (errno == EFBIG || errno == ENOTSUP)
			sz->stats.dwarf_refused++;
		sz->stats.dwarf_ns += clock__mono_ns() - t0;
		goto cleanup;
	}
	module_install_dwarf(sz, m, dw, clock__mono_ns() - t0);
cleanup:
	if (fd >= 0)
		close(fd);
	if (root_fd >= 0)
		close(root_fd);
}

/*
 * Symbols from a debug file debuginfod gave for a module that had only
 * its dynamic ones: names cached from before are dropped (the frames
 * already named keep theirs).
 */
static void module_add_symbols(struct symbolizer *sz, struct module *m,
			       int fd)
{
	size_t before = m->cost, after;

	if (!m->elf || elf_module__add_debug_symbols(m->elf, fd) != 1)
		return;
	m->sym_gen++;
	sz->names_epoch++;
	sz->stats.debuginfod_symbols++;
	after = module_cost(m);
	uncharge(sz, m);
	m->cost = before;
	charge(sz, m, m->cost_uid, after);
	if (sz->sym_cache)
		memset(sz->sym_cache->native, 0, sizeof(sz->sym_cache->native));
	if (sz->pc_cache)
		memset(sz->pc_cache, 0, sizeof(*sz->pc_cache));
}

void symbolizer__set_debug_loader(struct symbolizer *sz,
				  struct debug_loader *l)
{
	if (sz)
		sz->loader = l;
}

size_t symbolizer__poll_debug(struct symbolizer *sz, uint64_t wait_ns)
{
	struct debug_result r[16];
	size_t n, got = 0;

	if (!sz || !sz->loader || !sz->dw_loading)
		return 0;
	do {
		n = debug_loader__poll(sz->loader, r, 16, got ? 0 : wait_ns);
		for (size_t i = 0; i < n; i++) {
			struct module *m = r[i].key;

			m->dw_loading = false;
			sz->dw_loading--;
			if (r[i].fetched_fd >= 0) {
				module_add_symbols(sz, m, r[i].fetched_fd);
				close(r[i].fetched_fd);
			}
			if (r[i].dw)
				module_install_dwarf(sz, m, r[i].dw,
						     r[i].read_ns);
			else if (r[i].err == EFBIG || r[i].err == ENOTSUP)
				sz->stats.dwarf_refused++;
			if (m->refs)
				m->refs--;
		}
		got += n;
	} while (n == 16);
	return got;
}

size_t symbolizer__debug_loading(const struct symbolizer *sz)
{
	return sz ? sz->dw_loading : 0;
}

/* a DWARF function name as frames show names: demangled, short */
static const char *inl_name(struct symbolizer *sz, const char *raw)
{
	char buf[NAME_MAX_LEN];

	if (!raw || demangle__short(raw, buf, sizeof(buf)) < 0)
		return NULL;
	return strtab__intern(sz->st, buf);
}

/* the chain at vaddr of m from its DWARF, kept in slot when there is room */
static uint32_t inl_lookup(struct symbolizer *sz, struct module *m,
			   uint64_t vaddr, struct inl_slot *slot,
			   struct inl_ent *e)
{
	struct dwarf_line_frame df[DWARF_LINES_MAX];
	int n = dwarf_lines__find(m->dw, vaddr, df, DWARF_LINES_MAX);
	struct inl_cache *c = sz->inl_cache;
	size_t need;

	if (n < 0)
		n = 0;
	for (int i = 0; i < n; i++) {
		e[i].name = inl_name(sz, df[i].name);
		e[i].file = df[i].file ? strtab__intern(sz->st, df[i].file) :
					 NULL;
		e[i].line = df[i].line > 0 ? df[i].line : -1;
	}
	if (!slot || !c)
		return (uint32_t)n;
	need = (size_t)n * sizeof(*e);
	c->bytes -= slot->n * sizeof(*e);
	free(slot->e);
	*slot = (struct inl_slot){ 0 };
	if (c->bytes + need > INL_CACHE_BYTES) {
		sz->stats.inline_cache_full++;
		return (uint32_t)n;
	}
	if (n && !(slot->e = malloc(need)))
		return (uint32_t)n;
	if (n)
		memcpy(slot->e, e, need);
	slot->mod_id = m->id;
	slot->vaddr = vaddr;
	slot->n = (uint32_t)n;
	c->bytes += need;
	return (uint32_t)n;
}

void symbolizer__set_inlines(struct symbolizer *sz, bool on)
{
	if (sz)
		sz->inlines = on;
}

/*
 * The module of native frame f of pid whose DWARF may name f's inlined
 * functions (its load started here at its first frame), and the file
 * vaddr to look up: for a return address (call), the call before it.
 */
static struct module *inl_module(struct symbolizer *sz, pid_t pid,
				 const struct frame *f, bool call,
				 uint64_t *vaddr)
{
	struct module *m;
	struct pmap *pm;
	struct proc *p;

	if (!sz || !sz->inlines || f->type != FRAME_NON_JAVA || !f->pc ||
	    (f->flags & (FRAME_F_STUB | FRAME_F_INLINED)))
		return NULL;
	pm = find_pmap(sz, pid, f->pc);
	p = proc_get(sz, pid, false);
	if (!pm || !p || !pm->m.exec || !(m = pm->mod) || !m->elf)
		return NULL;
	if (!m->dw_tried)
		module_load_dwarf(sz, p, pm);
	*vaddr = f->offset - (call && f->offset ? 1 : 0);
	return m;
}

/* f's chain at vaddr of m (f as symbolizer__inlines says) */
static uint32_t inl_expand(struct symbolizer *sz, struct module *m,
			   uint64_t vaddr, struct frame *f, struct frame *out,
			   uint32_t max)
{
	struct inl_ent buf[DWARF_LINES_MAX];
	const struct inl_ent *e = buf;
	struct inl_slot *slot;
	uint32_t n, k;

	if (!m->dw)
		return 0;
	slot = inl_slot(sz, m->id, vaddr);
	if (slot && slot->mod_id == m->id && slot->vaddr == vaddr) {
		sz->stats.inline_hits++;
		n = slot->n;
		e = slot->e;
	} else {
		sz->stats.inline_misses++;
		n = inl_lookup(sz, m, vaddr, slot, buf);
	}
	if (!n)
		return 0;
	f->source = e[n - 1].file;
	f->line = e[n - 1].line;
	if (!f->symbol && e[n - 1].name)
		f->symbol = e[n - 1].name;
	for (k = 0; k + 1 < n && k < max; k++)
		out[k] = (struct frame){
			.type = FRAME_NON_JAVA,
			.comp_level = -1,
			.bci = -1,
			.flags = FRAME_F_INLINED |
				 (f->flags & FRAME_F_JVM_CPP),
			.line = e[k].line,
			.pc = f->pc,
			.offset = f->offset,
			.symbol = e[k].name,
			.module = f->module,
			.source = e[k].file,
		};
	return k;
}

uint32_t symbolizer__inlines(struct symbolizer *sz, pid_t pid,
			     struct frame *f, bool call, struct frame *out,
			     uint32_t max)
{
	uint64_t vaddr;
	struct module *m = inl_module(sz, pid, f, call, &vaddr);

	if (m && m->dw_loading)
		sz->inl_unready++;
	if (!m || m->dw_loading)
		return 0;
	return inl_expand(sz, m, vaddr, f, out, max);
}

uint64_t symbolizer__inlines_unready(const struct symbolizer *sz)
{
	return sz ? sz->inl_unready : 0;
}

bool symbolizer__inline_ref(struct symbolizer *sz, pid_t pid,
			    const struct frame *f, bool call,
			    struct sym_ref *ref)
{
	uint64_t vaddr;
	struct module *m = inl_module(sz, pid, f, call, &vaddr);

	if (!m)
		return false;
	m->refs++;
	ref->mod = m;
	ref->vaddr = vaddr;
	ref->sym_gen = m->sym_gen;
	return true;
}

bool symbolizer__ref_ready(const struct sym_ref *ref)
{
	const struct module *m = ref->mod;

	return !m || !m->dw_loading;
}

uint32_t symbolizer__ref_inlines(struct symbolizer *sz,
				 const struct sym_ref *ref, struct frame *f,
				 struct frame *out, uint32_t max)
{
	struct module *m = ref->mod;

	if (!m || m->dw_loading)
		return 0;
	/* named before its debug file came: named again from it */
	if (m->sym_gen != ref->sym_gen && m->elf) {
		const char *name = native_name(sz, m->elf, f->offset);

		if (name)
			f->symbol = name;
	}
	return inl_expand(sz, m, ref->vaddr, f, out, max);
}

void symbolizer__unref(struct symbolizer *sz, struct sym_ref *ref)
{
	struct module *m = ref->mod;

	(void)sz;
	if (m && m->refs)
		m->refs--;
	ref->mod = NULL;
}

uint64_t symbolizer__names_stamp(struct symbolizer *sz, pid_t pid,
				 uint64_t *epoch)
{
	struct proc *p = proc_get(sz, pid, false);

	*epoch = sz->names_epoch;
	return p ? p->gen : 0;
}

uint64_t symbolizer__jit_lookups(const struct symbolizer *sz)
{
	return sz->jit_lookups;
}

int symbolizer__cfi(struct symbolizer *sz, pid_t pid, uint64_t pc,
		    struct cfi_row *row)
{
	struct pmap *m;

	if (!sz)
		return -ESRCH;
	m = find_pmap(sz, pid, pc);
	if (!m || !m->m.exec)
		return -ESRCH;
	if (!m->mod || !m->mod->cfi)
		return -ENODATA;
	if (!sz->cfi_cache)
		sz->cfi_cache = cfi_cache__new(CFI_CACHE_ROWS);
	return cfi_cache__find(sz->cfi_cache, m->mod->cfi, pc - m->m.bias, row);
}

/* a kernel pc's name, module and offset: the cache's, else looked up */
static int kernel_name(struct symbolizer *sz, uint64_t pc, struct frame *out)
{
	struct sym_cache *c = sym_cache_get(sz);
	struct sym_cache_kernel *e = NULL;
	const char *name, *mod = NULL;
	uint64_t off = 0;

	if (c) {
		e = &c->kernel[sym_cache_slot(pc, 0)];
		if (e->pc == pc && pc) {
			if (!e->symbol)
				return -ENOENT;
			out->symbol = e->symbol;
			out->module = e->module;
			out->offset = e->off;
			return 0;
		}
	}
	name = kallsyms__lookup(sz->ks, pc, &off, &mod);
	if (name) {
		out->symbol = strtab__intern(sz->st, name);
		out->module = mod ? strtab__intern(sz->st, mod) : NULL;
		out->offset = off;
	}
	if (e && (!name || out->symbol)) {
		e->pc = pc;
		e->symbol = out->symbol;
		e->module = name ? out->module : NULL;
		e->off = name ? off : 0;
	}
	return out->symbol ? 0 : -ENOENT;
}

int symbolizer__kernel(struct symbolizer *sz, uint64_t pc, struct frame *out)
{
	out->symbol = NULL;
	if (!sz)
		return -ENOENT;
	if (!sz->ks_tried) {
		sz->ks_tried = true;
		/* another table (symbolizer__set_kallsyms_path): other names */
		if (sz->sym_cache)
			memset(sz->sym_cache->kernel, 0,
			       sizeof(sz->sym_cache->kernel));
		sz->ks = kallsyms__load(sz->kallsyms_path);
		sz->names_epoch++;
		if (!sz->ks)
			fprintf(stderr, "warning: cannot read %s (%s): kernel frames will not be symbolized\n",
				sz->kallsyms_path ? sz->kallsyms_path :
				"/proc/kallsyms", strerror(errno));
		else if (kallsyms__restricted(sz->ks))
			fprintf(stderr, "warning: kernel symbols unavailable (addresses hidden by kernel.kptr_restrict; run as root or set it to 0)\n");
	}
	return kernel_name(sz, pc, out);
}

/*
 * Forgetting exited processes (symbolizer__forget). A module is held by
 * the mappings of the processes cached (module->refs); one no process maps
 * any more stays for a while, in case the same program runs again (a shell
 * loop of short commands), but at most MOD_IDLE_MAX of them and
 * MOD_IDLE_BYTES of their tables: the longest idle are freed first.
 */
#define MOD_IDLE_MAX	32
#define MOD_IDLE_BYTES	(4u << 20)	/* of symbol tables and CFI */

/* about what a module's tables take (a symbol: its entry and name) */
static size_t module_cost(const struct module *m)
{
	return (m->elf ? elf_module__nsyms(m->elf) * 64 : 0) +
	       (m->cfi ? cfi_table__bytes(m->cfi) : 0) + m->dw_bytes +
	       sizeof(*m);
}

static void module_unlink(struct symbolizer *sz, struct module *m)
{
	struct module **pp;

	for (pp = &sz->modules; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	if (m->in_bids) {
		uint32_t h = 0;

		for (size_t i = 0; i < m->build_id_len; i++)
			h = h * 31 + m->build_id[i];
		pp = &sz->bids[h % MOD_BUCKETS];
		for (; *pp; pp = &(*pp)->bid_next)
			if (*pp == m) {
				*pp = m->bid_next;
				break;
			}
	}
	/* the files that led to it lead nowhere now: looked up again */
	for (size_t i = 0; i < MOD_BUCKETS; i++) {
		struct devino **dp = &sz->devinos[i];

		while (*dp) {
			struct devino *d = *dp;

			if (d->mod == m) {
				*dp = d->next;
				free(d);
			} else {
				dp = &d->next;
			}
		}
	}
}

static void module_destroy(struct symbolizer *sz, struct module *m)
{
	uncharge(sz, m);
	module_unlink(sz, m);
	if (m->cfi) {
		size_t b = cfi_table__bytes(m->cfi);

		sz->stats.cfi_modules -= sz->stats.cfi_modules ? 1 : 0;
		sz->stats.cfi_bytes -= sz->stats.cfi_bytes >= b ?
				       b : sz->stats.cfi_bytes;
		cfi_table__free(m->cfi);
	}
	if (m->dw) {
		sz->stats.dwarf_modules -= sz->stats.dwarf_modules ? 1 : 0;
		sz->stats.dwarf_bytes -= sz->stats.dwarf_bytes >= m->dw_bytes ?
					 m->dw_bytes : sz->stats.dwarf_bytes;
		dwarf_lines__free(m->dw);
	}
	elf_module__free(m->elf);
	free(m);
	sz->nmodules--;
	sz->stats.modules_freed++;
	sz->names_epoch++;
}

/* idle modules over MOD_IDLE_MAX or MOD_IDLE_BYTES freed, the longest
 * idle first */
static void modules_trim(struct symbolizer *sz)
{
	uint64_t now = clock__mono_ns();

	for (;;) {
		struct module *m, *oldest = NULL;
		size_t idle = 0, bytes = 0;

		for (m = sz->modules; m; m = m->next) {
			if (m->refs || m == sz->vdso)
				continue;
			if (!m->idle_since)
				m->idle_since = now;
			idle++;
			bytes += module_cost(m);
			if (!oldest || m->idle_since < oldest->idle_since)
				oldest = m;
		}
		if (idle <= MOD_IDLE_MAX && bytes <= MOD_IDLE_BYTES)
			break;
		module_destroy(sz, oldest);
	}
	/* held again since: idle from the next time they are let go */
	for (struct module *m = sz->modules; m; m = m->next)
		if (m->refs)
			m->idle_since = 0;
}

void symbolizer__forget(struct symbolizer *sz, pid_t pid)
{
	struct proc **pp, *p;

	if (!sz)
		return;
	pp = &sz->procs[hash64((uint64_t)pid) % PROC_BUCKETS];
	for (; (p = *pp); pp = &p->next)
		if (p->pid == pid)
			break;
	if (!p)
		return;
	*pp = p->next;
	if (sz->last_proc == p)
		sz->last_proc = NULL;
	maps_hold(p->maps, p->nmaps, false);
	free_proc_maps(p);
	perfmap__free(p->jit);
	free(p);
	sz->stats.procs -= sz->stats.procs ? 1 : 0;
	sz->stats.procs_forgotten++;
	modules_trim(sz);
}

void symbolizer__set_maps_fallback(struct symbolizer *sz,
				   symbolizer_maps_fn fn, void *ctx)
{
	if (!sz)
		return;
	sz->maps_fallback = fn;
	sz->maps_fallback_ctx = ctx;
}
