// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The kernel features the sampler needs, probed before it is loaded. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "capture/kernel_features.h"
#include "util/err.h"

/*
 * What bpf/sampler.bpf.c and capture.c use, oldest first; versions from
 * the kernel's history (docs/kernels.md). BTF itself
 * (/sys/kernel/btf/vmlinux) is checked before, by capture__open.
 * Helpers are probed in a perf_event program: the sampler's tp_btf and
 * uprobe programs get the same helpers (bpf_tracing_func_proto).
 */
static const struct kfeat kfeats[] = {
	{ "uprobes through perf_event_open", "4.17", KFEAT_FILE, 0,
	  "/sys/bus/event_source/devices/uprobe/type", KFEAT_JVM },
	{ "bpf_get_stack", "4.18", KFEAT_HELPER, BPF_FUNC_get_stack, NULL,
	  KFEAT_ALL },
	/* (libbpf 1.1's program type probe says no to tracing programs even
	 * where they work: the tracepoints' BTF types came with them) */
	{ "BTF-typed tracepoint programs (tp_btf)", "5.5", KFEAT_BTF, 0,
	  "btf_trace_sched_switch", KFEAT_OFFCPU | KFEAT_FOLLOW },
	{ "bpf_probe_read_user", "5.5", KFEAT_HELPER, BPF_FUNC_probe_read_user,
	  NULL, KFEAT_ALL },
	{ "bpf_get_current_ancestor_cgroup_id", "5.6", KFEAT_HELPER,
	  BPF_FUNC_get_current_ancestor_cgroup_id, NULL, KFEAT_CGROUP },
	{ "the BPF ring buffer", "5.8", KFEAT_MAP, BPF_MAP_TYPE_RINGBUF, NULL,
	  KFEAT_ALL },
	{ "bpf_ringbuf_query", "5.8", KFEAT_HELPER, BPF_FUNC_ringbuf_query,
	  NULL, KFEAT_ALL },
	{ "task local storage", "5.11", KFEAT_MAP, BPF_MAP_TYPE_TASK_STORAGE,
	  NULL, KFEAT_ALL },
	{ "bpf_get_current_task_btf", "5.11", KFEAT_HELPER,
	  BPF_FUNC_get_current_task_btf, NULL, KFEAT_ALL },
	{ "task local storage in tracing programs", "5.13", KFEAT_HELPER,
	  BPF_FUNC_task_storage_get, NULL, KFEAT_ALL },
	{ "bpf_task_pt_regs", "5.15", KFEAT_HELPER, BPF_FUNC_task_pt_regs, NULL,
	  KFEAT_ALL },
	{ "bpf_loop", "5.17", KFEAT_HELPER, BPF_FUNC_loop, NULL, KFEAT_ALL },
	{ "bpf_find_vma", "5.17", KFEAT_HELPER, BPF_FUNC_find_vma, NULL,
	  KFEAT_ALL },
};

const struct kfeat *kernel_features__table(size_t *n)
{
	*n = sizeof(kfeats) / sizeof(kfeats[0]);
	return kfeats;
}

static int probe(const struct kfeat_ops *ops, const struct kfeat *f)
{
	switch (f->kind) {
	case KFEAT_MAP:
		return ops->map(f->id);
	case KFEAT_BTF:
		return ops->btf(f->what);
	case KFEAT_HELPER:
		return ops->helper(f->id);
	case KFEAT_FILE:
		return ops->file(f->what);
	}
	return -EINVAL;
}

const struct kfeat *kernel_features__first_missing(const struct kfeat_ops *ops,
						   uint32_t needs)
{
	for (size_t i = 0; i < sizeof(kfeats) / sizeof(kfeats[0]); i++) {
		const struct kfeat *f = &kfeats[i];

		if (f->needed_by != KFEAT_ALL && !(f->needed_by & needs))
			continue;
		/* < 0: the probe could not tell; the load will */
		if (probe(ops, f) == 0)
			return f;
	}
	return NULL;
}

int kernel_features__describe(const struct kfeat *f, const char *release,
			      char *err, size_t errlen)
{
	return err__set(err, errlen, -ENOTSUP,
			"this kernel (%s) lacks %s (Linux %s): asgst-bpf needs Linux 5.17 or later with BTF (docs/kernels.md)",
			release, f->name, f->since);
}

static int lb_map(int t)
{
	return libbpf_probe_bpf_map_type(t, NULL);
}

static int btf_has(const char *name)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int id;

	if (!btf)
		return -errno;
	id = btf__find_by_name(btf, name);
	btf__free(btf);
	return id > 0;
}

static int lb_helper(int id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, id, NULL);
}

static int has_file(const char *path)
{
	return access(path, R_OK) == 0 ? 1 : errno == ENOENT ? 0 : -errno;
}

static int assume_present(int id)
{
	(void)id;
	return 1;
}

static int assume_type(const char *name)
{
	(void)name;
	return 1;
}

static int check(const struct kfeat_ops *ops, uint32_t needs, char *err,
		 size_t errlen)
{
	const struct kfeat *f = kernel_features__first_missing(ops, needs);
	struct utsname u;

	if (!f)
		return 0;
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	return kernel_features__describe(f, u.release, err, errlen);
}

int kernel_features__check(uint32_t needs, char *err, size_t errlen)
{
	static const struct kfeat_ops ops = {
		.map = lb_map,
		.btf = btf_has,
		.helper = lb_helper,
		.file = has_file,
	};

	return check(&ops, needs, err, errlen);
}

bool kernel_features__release_at_least(const char *release, int major,
				       int minor)
{
	int ma, mi;

	if (!release || sscanf(release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

bool kernel_features__at_least(int major, int minor)
{
	struct utsname u;

	return !uname(&u) &&
	       kernel_features__release_at_least(u.release, major, minor);
}

int kernel_features__check_files(uint32_t needs, char *err, size_t errlen)
{
	static const struct kfeat_ops ops = {
		.map = assume_present,
		.btf = assume_type,
		.helper = assume_present,
		.file = has_file,
	};

	return check(&ops, needs, err, errlen);
}
