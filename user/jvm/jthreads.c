// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A JVM's JavaThreads and continuation layout, pushed to the sampler.
 *
 * The sampler's "jthreads" map (ASGST_JTHREADS_MAX entries) is shared by
 * every JVM, and how many threads a JVM reports is up to its code map,
 * which the recorder does not trust. So:
 *
 * - the map is a plain hash, not an LRU: the kernel never evicts an entry
 *   to make room. An LRU would let one JVM's flood of threads push out
 *   other JVMs' threads, whose Java stacks would then decode wrong without
 *   a word. User space deletes what it pushed: a thread's entry at its
 *   end, all of a JVM's when its jthreads is freed, or capture__forget
 *   sweeps them when the process leaves (jthreads__forget);
 * - each JVM has a share: max(JT_MIN_SHARE, entries / JVMs followed now).
 *   A new thread of a JVM at its share is refused (counted; its samples
 *   decode without the JavaThread's words, as for a thread the map never
 *   named). While the map has room a JVM below its share takes it; when
 *   it is full, it takes an entry back from a JVM above its share (which
 *   it got while there were fewer JVMs), never from one within its share
 *   (counted as reclaimed from that JVM). So a JVM, however many threads
 *   it reports, cannot take entries from another within its share, and a
 *   JVM that came later gets its share back from the ones that flooded
 *   first.
 *
 * The accounting is one table for the recorder (one sampler); every
 * decision is O(1) but the take-back, which looks at the JVMs followed
 * and (amortized) a few slots of the one it takes from.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "jvm/codemap.h"
#include "jvm/jthreads.h"
#include "util/u64map.h"

struct jthreads {
	struct capture *cap;
	pid_t pid;
	struct u64map pushed;	/* tid -> JavaThread* pushed: what it holds */
	const struct codemap *cm;
	bool failed;		/* out of memory, or forgotten: stop */
	bool listed;		/* in pool.all */
	bool cont_pushed;	/* the JVM's virtual-thread layout */
	struct jthreads *prev, *next;	/* in pool.all */
	size_t cursor;		/* where a take-back looks next in pushed */
	struct jthreads_stats st;
};

static struct {
	struct jthreads *all;
	size_t jvms;		/* followed now */
	size_t used;		/* entries pushed and not deleted */
	size_t entries;		/* the map's size */
	struct jthreads_stats st;	/* every JVM's, freed ones too */
} pool = { .entries = ASGST_JTHREADS_MAX };

static size_t share(void)
{
	size_t s = pool.jvms ? pool.entries / pool.jvms : pool.entries;

	return s > JT_MIN_SHARE ? s : JT_MIN_SHARE;
}

void jthreads__sync_cont(struct jthreads *j)
{
	const struct cm_cont *c;
	struct asgst_jvm_cont v;

	if (j->cont_pushed || !(c = codemap__cont(j->cm)))
		return;
	memset(&v, 0, sizeof(v));
	v.entry_cont = c->entry_cont;
	v.cont_tail = c->cont_tail;
	v.chunk_size = c->chunk_size;
	v.chunk_sp = c->chunk_sp;
	v.chunk_argsize = c->chunk_argsize;
	v.chunk_bottom = c->chunk_bottom;
	v.chunk_stack = c->chunk_stack;
	v.oop_size = c->oop_size;
	v.oop_base = c->oop_base;
	v.oop_shift = c->oop_shift;
	v.chunk_parent = c->chunk_parent;
	j->cont_pushed = !capture__set_jvm_cont(j->cap, j->pid, &v);
}

/* delete the entry of tid, which j pushed */
static void drop(struct jthreads *j, uint32_t tid)
{
	if (!u64map__del(&j->pushed, tid))
		return;
	pool.used--;
	capture__set_jthread(j->cap, j->pid, tid, NULL);
}

/* take one entry back from v (above its share): true if one was */
static bool take_back(struct jthreads *v)
{
	struct u64map *m = &v->pushed;

	for (size_t k = 0; k < m->cap; k++) {
		size_t i = (v->cursor + k) & (m->cap - 1);

		if (!m->vals[i])
			continue;
		v->cursor = i + 1;
		drop(v, (uint32_t)m->keys[i]);
		v->st.reclaimed++;
		pool.st.reclaimed++;
		return true;
	}
	return false;
}

/* may j push one more thread: within its share, and room in the map */
static bool room(struct jthreads *j)
{
	size_t s = share();

	if (j->pushed.n >= s)
		return false;
	if (pool.used < pool.entries)
		return true;
	for (struct jthreads *v = pool.all; v; v = v->next)
		if (v != j && v->pushed.n > s && take_back(v))
			return true;
	return false;
}

/* a field of a struct inside the JavaThread; -1 (CM_ABSENT) if either is */
static int32_t jt_off(int32_t base, int32_t field)
{
	return base < 0 || field < 0 ? -1 : base + field;
}

static void on_thread(void *ctx, const struct codemap_thread *th, bool alive)
{
	struct jthreads *j = ctx;
	const struct cm_vm_consts *vm = codemap__vm(j->cm);
	struct asgst_jthread v;
	bool held;

	if (j->failed || !vm || !th->java_thread || !th->tid)
		return;
	held = u64map__get(&j->pushed, th->tid) != 0;
	if (!alive) {
		if (u64map__get(&j->pushed, th->tid) == th->java_thread)
			drop(j, th->tid);	/* else: a newer thread's tid */
		return;
	}
	if (!held && !room(j)) {
		j->st.refused++;
		pool.st.refused++;
		return;
	}
	memset(&v, 0, sizeof(v));
	v.java_thread = th->java_thread;
	/* CM_ABSENT is -1, which the sampler reads as absent too */
	v.off_state = vm->jt_thread_state;
	v.off_last_sp = jt_off(vm->jt_anchor, vm->anchor_last_sp);
	v.off_last_pc = jt_off(vm->jt_anchor, vm->anchor_last_pc);
	v.off_last_fp = jt_off(vm->jt_anchor, vm->anchor_last_fp);
	v.off_cont_entry = vm->jt_cont_entry;
	/* a failed update (counted by capture) leaves what was there */
	if (capture__set_jthread(j->cap, j->pid, th->tid, &v))
		return;
	if (u64map__put(&j->pushed, th->tid, th->java_thread)) {
		capture__set_jthread(j->cap, j->pid, th->tid, NULL);
		j->failed = true;
		return;
	}
	if (!held)
		pool.used++;
}

struct jthreads *jthreads__new(struct capture *cap, pid_t pid,
			       struct codemap *cm)
{
	struct jthreads *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->cap = cap;
	j->pid = pid;
	j->cm = cm;
	j->next = pool.all;
	if (pool.all)
		pool.all->prev = j;
	pool.all = j;
	j->listed = true;
	pool.jvms++;
	codemap__set_thread_cb(cm, on_thread, j);
	jthreads__sync_cont(j);
	return j;
}

/* out of the pool: what it holds is no longer counted */
static void unlist(struct jthreads *j)
{
	if (!j->listed)
		return;
	j->listed = false;
	pool.used -= j->pushed.n;
	u64map__free(&j->pushed);
	if (j->prev)
		j->prev->next = j->next;
	else
		pool.all = j->next;
	if (j->next)
		j->next->prev = j->prev;
	j->prev = j->next = NULL;
	pool.jvms--;
}

void jthreads__forget(struct jthreads *j)
{
	if (!j)
		return;
	j->failed = true;
	unlist(j);
}

void jthreads__free(struct jthreads *j)
{
	struct u64map *m;

	if (!j)
		return;
	m = &j->pushed;
	for (size_t i = 0; j->listed && i < m->cap; i++)
		if (m->vals[i])
			capture__set_jthread(j->cap, j->pid,
					     (uint32_t)m->keys[i], NULL);
	unlist(j);
	free(j);
}

void jthreads__stats(const struct jthreads *j, struct jthreads_stats *out)
{
	*out = j ? j->st : pool.st;
	if (j) {
		out->held = j->pushed.n;
		out->share = share();
	} else {
		out->held = pool.used;
		out->share = pool.entries;
	}
}

void jthreads__set_entries(size_t entries)
{
	pool.entries = entries ? entries : ASGST_JTHREADS_MAX;
}
