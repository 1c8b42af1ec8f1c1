// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A JVM's JavaThreads and continuation layout, pushed to the sampler. */
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
	struct u64map pushed;	/* tid -> JavaThread* pushed */
	const struct codemap *cm;
	bool failed;		/* map full or gone: said nothing, stop */
	bool cont_pushed;	/* the JVM's virtual-thread layout */
};

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

	if (j->failed || !vm || !th->java_thread || !th->tid)
		return;
	if (!alive) {
		if (u64map__get(&j->pushed, th->tid) != th->java_thread)
			return;	/* its tid went to a newer thread */
		u64map__put(&j->pushed, th->tid, 1);	/* 1: none */
		capture__set_jthread(j->cap, j->pid, th->tid, NULL);
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
	if (capture__set_jthread(j->cap, j->pid, th->tid, &v) ||
	    u64map__put(&j->pushed, th->tid, th->java_thread))
		j->failed = true;
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
	codemap__set_thread_cb(cm, on_thread, j);
	jthreads__sync_cont(j);
	return j;
}

void jthreads__free(struct jthreads *j)
{
	if (!j)
		return;
	u64map__free(&j->pushed);
	free(j);
}
