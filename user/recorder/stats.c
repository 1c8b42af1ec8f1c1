// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a recording tells as it goes and what it cost: the status line on
 * a terminal, and --stats at the end (for people and `make bench`).
 */
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "jvm/jthreads.h"
#include "profile/profile.h"
#include "profile/jvm_events.h"
#include "recorder/recorder_int.h"
#include "symbols/maplog.h"
#include "symbols/symbolize.h"

/* how often the status line is redrawn */
#define STATUS_EVERY_NS	250000000ull

/* a line on stderr redrawn in place, on a terminal only */
void recorder_status_line(struct recorder *r, uint64_t now)
{
	uint64_t st[ASGST_STAT_MAX] = { 0 };
	struct pipeline_stats ps;
	double secs = (double)(now - r->t0) / 1e9;

	if (!r->tty || now - r->last_status < STATUS_EVERY_NS)
		return;
	r->last_status = now;
	r->ops->stats(r->cap, st);
	pipeline__stats(r->pl, &ps);
	fprintf(stderr, "\r\033[K%6.1fs  %llu samples (%.0f/s)  lost %llu  "
		"%llu processes  %llu JVMs (%llu decoded, %llu attached)",
		secs, (unsigned long long)st[ASGST_STAT_SAMPLES],
		secs > 0 ? (double)st[ASGST_STAT_SAMPLES] / secs : 0.0,
		(unsigned long long)st[ASGST_STAT_LOST],
		(unsigned long long)ps.processes, (unsigned long long)ps.jvms,
		(unsigned long long)ps.jvms_decoded,
		(unsigned long long)ps.attached);
	if (r->push) {
		struct push_stats pst;

		recorder_push_stats(r, &pst, NULL, 0);
		fprintf(stderr, "  pushed %llu, queued %zu KiB, dropped %llu",
			(unsigned long long)pst.sent, pst.queued_bytes >> 10,
			(unsigned long long)(pst.dropped_full +
					     pst.dropped_end));
	}
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull +
	       (uint64_t)tv->tv_usec * 1000ull;
}

/*
 * --stats: the recorder's own CPU a sample (user + system, with the attach
 * helpers it ran), over the whole run and in the steady state (from the
 * end of the pipeline's warm-up), and the decode's CPU time a sample
 * (decode_ns_per_sample is wall time: on a busy host it also counts the
 * waits for a CPU).
 */
static void print_cpu_stats(const struct pipeline_stats *ps)
{
	struct rusage self, kids;
	struct timespec ts;
	uint64_t all, now, output = 0, n = ps->records;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	all = tv_ns(&self.ru_utime) + tv_ns(&self.ru_stime) +
	      tv_ns(&kids.ru_utime) + tv_ns(&kids.ru_stime);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	/* the steady state runs to the last decode, the outputs after it */
	if (ps->finish_cpu_ns && ps->finish_cpu_ns <= now) {
		output = now - ps->finish_cpu_ns;
		now = ps->finish_cpu_ns;
	}
	fprintf(stderr, "stats: records=%llu recorder_cpu_ns=%llu "
		"recorder_cpu_ns_per_sample=%.0f output_cpu_ns=%llu "
		"steady_records=%llu "
		"steady_cpu_ns_per_sample=%.0f decode_cpu_ns_per_sample=%.0f "
		"steady_decode_cpu_ns_per_sample=%.0f\n",
		(unsigned long long)n, (unsigned long long)all,
		n ? (double)all / (double)n : 0.0,
		(unsigned long long)output,
		ps->warm_cpu_ns ? (unsigned long long)(n - ps->warm_records) : 0,
		ps->warm_cpu_ns && n > ps->warm_records && now > ps->warm_cpu_ns ?
		(double)(now - ps->warm_cpu_ns) /
		(double)(n - ps->warm_records) : 0.0,
		ps->decoded ? (double)ps->decode_cpu_ns /
			      (double)ps->decoded : 0.0,
		ps->warm_cpu_ns && ps->decoded > ps->warm_decoded ?
		(double)(ps->decode_cpu_ns - ps->warm_decode_cpu_ns) /
		(double)(ps->decoded - ps->warm_decoded) : 0.0);
}

/* the sampler's own cost, the decode's, memory and what was pruned */
static void print_stats(struct recorder *r, const struct pipeline_stats *ps)
{
	struct capture *c = r->ops->capture(r->cap);
	uint64_t run_ns = 0, run_cnt = 0, decode_ns = r->decode_ns;
	uint64_t load_ns = 0, vinsns = 0, st[ASGST_STAT_MAX] = { 0 }, taken;
	struct jthreads_stats jts;
	struct rusage ru;

	jthreads__stats(NULL, &jts);
	capture__prog_stats(c, &run_ns, &run_cnt);
	capture__load_stats(c, &load_ns, &vinsns);
	r->ops->stats(r->cap, st);
	taken = st[ASGST_STAT_SAMPLES] + st[ASGST_STAT_LOST];
	getrusage(RUSAGE_SELF, &ru);
	/* a run of the program per timer tick and CPU, a sample taken or
	 * not (idle, not a target): bpf_stats' mean is over all of them;
	 * the program times the runs that took one itself */
	fprintf(stderr, "stats: bpf_run_ns=%llu bpf_run_cnt=%llu "
		"bpf_ns_per_run=%.0f bpf_ns_per_sample=%.0f "
		"decoded=%llu decode_ns_per_sample=%.0f "
		"decode_errors=%llu peak_rss_kib=%ld windows=%llu "
		"window_bytes_per_sample=%.0f record_bytes_per_sample=%.0f "
		"ring_copied=%llu ring_walked=%llu decoded_early=%llu "
		"attach_unheld=%llu attach_deferred=%llu stack_memo_hits=%llu "
		"stack_memo_kept=%llu walk_tail_hits=%llu\n",
		(unsigned long long)run_ns, (unsigned long long)run_cnt,
		run_cnt ? (double)run_ns / (double)run_cnt : 0.0,
		taken ? (double)st[ASGST_STAT_SAMPLE_NS] / (double)taken : 0.0,
		(unsigned long long)ps->decoded,
		ps->decoded ? (double)decode_ns / (double)ps->decoded : 0.0,
		(unsigned long long)ps->decode_errors, ru.ru_maxrss,
		(unsigned long long)ps->windows,
		ps->windows ? (double)ps->window_bytes /
			      (double)ps->windows : 0.0,
		ps->records ? (double)ps->record_bytes /
			      (double)ps->records : 0.0,
		(unsigned long long)ps->ring_copied,
		(unsigned long long)ps->ring_walked,
		(unsigned long long)ps->decoded_early,
		(unsigned long long)ps->attach_unheld,
		(unsigned long long)ps->attach_deferred,
		(unsigned long long)ps->memo_hits,
		(unsigned long long)ps->memo_kept,
		(unsigned long long)ps->tail_hits);
	print_cpu_stats(ps);
	/* what sampling cost before its first sample: the recorder's CPU
	 * until the sampler was on, and the share of it the load took */
	fprintf(stderr, "stats: startup_cpu_ns=%llu bpf_load_cpu_ns=%llu "
		"bpf_verified_insns=%llu\n",
		(unsigned long long)r->startup_cpu_ns,
		(unsigned long long)load_ns, (unsigned long long)vinsns);
	/* CPython processes (docs/decoding.md, Python frames) */
	fprintf(stderr, "stats: py_procs=%llu py_samples=%llu "
		"py_unnamed=%llu\n", (unsigned long long)ps->py_procs,
		(unsigned long long)ps->py_samples,
		(unsigned long long)ps->py_unnamed);
	/* memory bounded by what is alive (docs/architecture.md) */
	fprintf(stderr, "stats: procs_seen=%llu procs_live=%llu "
		"procs_dropped=%llu pid_reuses=%llu sym_procs=%llu "
		"sym_modules=%llu bpf_map_errors=%llu strtab_kib=%llu "
		"codemap_capped=%llu jthreads_refused=%llu "
		"jthreads_reclaimed=%llu\n",
		(unsigned long long)ps->processes,
		(unsigned long long)ps->procs_live,
		(unsigned long long)ps->procs_dropped,
		(unsigned long long)ps->pid_reuses,
		(unsigned long long)ps->sym_procs,
		(unsigned long long)ps->sym_modules,
		(unsigned long long)ps->map_errors,
		(unsigned long long)ps->strtab_bytes / 1024,
		(unsigned long long)ps->codemap_capped,
		(unsigned long long)jts.refused,
		(unsigned long long)jts.reclaimed);
	if (r->co.events & ASGST_EVMASK_JVM) {
		uint64_t st[ASGST_STAT_MAX] = { 0 };

		struct jvm_events_stats js;
		uint64_t ev_ns = 0, ev_cnt = 0;

		r->ops->stats(r->cap, st);
		capture__jvm_event_stats(c, &ev_ns, &ev_cnt);
		jvm_events__stats(r->jev, &js);
		fprintf(stderr, "stats: alloc_events=%llu lock_events=%llu "
			"jvm_events_lost=%llu jvm_events_throttled=%llu "
			"bpf_ns_per_jvm_event=%.0f jvms_asked=%llu "
			"jvms_refused=%llu agent_files_probed=%llu\n",
			(unsigned long long)st[ASGST_STAT_ALLOC],
			(unsigned long long)st[ASGST_STAT_LOCK],
			(unsigned long long)st[ASGST_STAT_JVM_EV_LOST],
			(unsigned long long)st[ASGST_STAT_JVM_EV_THROTTLED],
			ev_cnt ? (double)ev_ns / (double)ev_cnt : 0.0,
			(unsigned long long)js.jvms,
			(unsigned long long)js.refused,
			(unsigned long long)js.probes);
	}
	capture__offcpu_stats(c, &run_ns, &run_cnt);
	if (run_cnt) {
		uint64_t st[ASGST_STAT_MAX] = { 0 };

		r->ops->stats(r->cap, st);
		fprintf(stderr, "stats: bpf_offcpu_run_ns=%llu "
			"bpf_offcpu_run_cnt=%llu bpf_ns_per_switch=%.0f "
			"offcpu_capture_ns=%llu offcpu_no_switch_in=%llu "
			"offcpu_no_end=%llu offcpu_stray_end=%llu "
			"offcpu_switches=%llu offcpu_stacks=%llu "
			"offcpu_every_mean=%.1f offcpu_every_now=%u\n",
			(unsigned long long)run_ns, (unsigned long long)run_cnt,
			(double)run_ns / (double)run_cnt,
			(unsigned long long)st[ASGST_STAT_OFFCPU_CAPTURE_NS],
			(unsigned long long)st[ASGST_STAT_OFFCPU_NO_SWITCH_IN],
			(unsigned long long)ps->offcpu_no_end,
			(unsigned long long)ps->offcpu_stray_end,
			(unsigned long long)st[ASGST_STAT_OFFCPU_SWITCHES],
			(unsigned long long)st[ASGST_STAT_OFFCPU],
			st[ASGST_STAT_OFFCPU] ?
			(double)st[ASGST_STAT_OFFCPU_WEIGHT] /
			(double)st[ASGST_STAT_OFFCPU] : 0.0,
			capture__offcpu_every(c));
	}
}

/* --stats: what unwinding by CFI took in memory, and its row cache; the
 * maps of processes gone before /proc was read, from the side-band */
static void print_unwind_stats(const struct recorder *r,
			       const struct pipeline_stats *ps_)
{
	const struct pipeline_stats ps = *ps_;
	struct symbolizer_stats ss;
	struct sideband_stats sbs = { 0 };
	struct maplog_stats ms;

	pipeline__symbolizer_stats(r->pl, &ss);
	fprintf(stderr, "stats: modules=%zu cfi_modules=%zu cfi_kib=%zu "
		"cfi_rows_cached=%llu cfi_rows_looked_up=%llu module_kib=%zu "
		"modules_refused=%zu\n",
		ss.modules, ss.cfi_modules, ss.cfi_bytes / 1024,
		(unsigned long long)ss.cfi_hits,
		(unsigned long long)ss.cfi_misses, ss.module_bytes / 1024,
		ss.modules_refused);
	fprintf(stderr, "stats: dwarf_modules=%zu dwarf_kib=%zu "
		"dwarf_refused=%zu dwarf_read_ms=%.1f inline_cached=%llu "
		"inline_looked_up=%llu inline_cache_full=%llu\n",
		ss.dwarf_modules, ss.dwarf_bytes / 1024, ss.dwarf_refused,
		ss.dwarf_ns / 1e6, (unsigned long long)ss.inline_hits,
		(unsigned long long)ss.inline_misses,
		(unsigned long long)ss.inline_cache_full);
	fprintf(stderr, "stats: dwarf_max_kib=%zu dwarf_index_kib=%zu "
		"inline_held=%llu "
		"inline_held_peak=%zu inline_unready=%llu "
		"debuginfod_fetches=%llu debuginfod_fetched=%llu "
		"debuginfod_failed=%llu debuginfod_capped=%llu "
		"debuginfod_ms=%.1f debuginfod_symbols=%zu\n",
		ss.dwarf_max_bytes / 1024, ss.dwarf_index_bytes / 1024,
		(unsigned long long)ps.inline_held,
		ps.inline_held_peak, (unsigned long long)ps.inline_unready,
		(unsigned long long)ps.debuginfod_fetches,
		(unsigned long long)ps.debuginfod_fetched,
		(unsigned long long)ps.debuginfod_failed,
		(unsigned long long)ps.debuginfod_capped,
		ps.debuginfod_ns / 1e6, ss.debuginfod_symbols);
	if (r->sb)
		r->ops->sideband_stats(r->sb, &sbs);
	maplog__stats(r->ml, &ms);
	fprintf(stderr, "stats: sideband=%s sideband_records=%llu "
		"sideband_lost=%llu sideband_bad=%llu maplog_procs=%llu "
		"maplog_kib=%llu maplog_evicted=%llu maps_from_sideband=%zu\n",
		r->sb ? "on" : "off", (unsigned long long)sbs.records,
		(unsigned long long)sbs.lost, (unsigned long long)sbs.bad,
		(unsigned long long)ms.procs,
		(unsigned long long)ms.bytes / 1024,
		(unsigned long long)ms.evicted, ss.maps_fallback);
}

/* --push: the queue's figures; enqueued = sent + dropped_full +
 * dropped_end + rejected + queued */
static void print_push_stats(struct recorder *r)
{
	struct push_stats p;

	if (!recorder_push_stats(r, &p, NULL, 0))
		return;
	fprintf(stderr, "stats: push_enqueued=%llu push_sent=%llu "
		"push_bytes_sent=%llu push_retried=%llu push_dropped_full=%llu "
		"push_dropped_end=%llu push_rejected=%llu push_queued=%zu "
		"push_queued_bytes=%zu push_queue_bytes_max=%zu\n",
		(unsigned long long)p.enqueued, (unsigned long long)p.sent,
		(unsigned long long)p.bytes_sent,
		(unsigned long long)p.retried,
		(unsigned long long)p.dropped_full,
		(unsigned long long)p.dropped_end,
		(unsigned long long)p.rejected, p.queued, p.queued_bytes,
		p.queue_bytes_max);
}

void recorder__print_stats(struct recorder *r)
{
	struct pipeline_stats ps;

	pipeline__stats(r->pl, &ps);
	print_stats(r, &ps);
	print_unwind_stats(r, &ps);
	print_push_stats(r);
}
