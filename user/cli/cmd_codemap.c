// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * asgst-bpf codemap PID|FILE [--json]: print a JVM's code map.
 *
 * PID (all digits) reads /proc/PID/root/dev/shm/asgst-<nspid>.map; anything
 * else is a map file. Exit 0 when the map is valid, 1 when it is not (one
 * line on stderr says why), 2 on a usage error.
 *
 * Text format (stable: tests grep it). One line per item, first word = kind,
 * fields separated by one space, numbers decimal unless 0x-prefixed, "-"
 * for an unknown/absent value. Unquoted strings (class, name, signature,
 * source) have bytes outside 0x21..0x7e and '\' written as \xNN; quoted
 * strings ("...") have bytes outside 0x20..0x7e, '"' and '\' as \xNN.
 * Blobs (code and stub lines) come in record (load) order.
 *
 *   codemap PATH
 *   header version=V header_size=N writer_pid=P flags=0xF(ready,full,disabled,closed,superseded)
 *          max_size=N write_pos=N start_ns=T dropped=N generation=G
 *          gen_start_ns=T snapshot_end=N[ disabled_reason="..."]
 *   vm jdk=17 version="17.0.15+6-..."          (absent until a VM record)
 *   cont entry_cont=N cont_tail=N chunk_size=N chunk_sp=N chunk_argsize=N
 *          chunk_bottom=N chunk_stack=N entry_size=N oop_size=N oop_shift=N
 *          oop_base=0xB chunk_parent=N
 *                                              (JDK 21+: virtual-thread layout)
 *   const NAME VALUE                           one per cm_vm_consts field:
 *                                              offsets decimal (-1 absent),
 *                                              addresses 0x...
 *   method 0xMETHOD CLASS NAME SIGNATURE SOURCE|- lines=N modifiers=0xM
 *          const=0xC[ native]
 *   code 0xSTART-0xEND level=L frame=F complete=0xC|-1 method=0xM
 *          CLASS.NAME|? pcs=N kind=nmethod|native|osr entry=0xV blob=0xB
 *          methods=N load=T unload=T|-
 *     pc +0xOFF: CLASS.NAME@BCI <- CLASS.NAME@BCI ...   (innermost first;
 *          an unknown Method* prints as 0xMETHOD@BCI)
 *   stub 0xSTART-0xEND "NAME" kind=K frame=F complete=0xC|-1 blob=0xB load=T
 *          K: other interpreter call_stub adapter nep_invoker upcall cont
 *          runtime
 *   thread TID "NAME" jt=0xJ start=T end=T|- flags=platform|virtual[,carrier][,daemon]
 *   summary records=N bytes=N methods=N blobs=N stubs=N threads=N unloads=N
 *          dropped=N last_ns=T generation=G handovers=N gens_missed=N
 *          reconciled=N strings=N classes=N reader_bytes=N status=ok|error
 *          (strings, classes: ids of version 3 maps read; reader_bytes:
 *          the memory the reader holds for the map)
 * (each entry above is one line; the indentation here only wraps it)
 *
 * --json prints one JSON object with the same content: {"path", "header",
 * "vm" (null before a VM record), "methods", "blobs", "threads",
 * "summary"}; addresses are "0x..." strings, times and counts numbers.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvm/codemap.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "util/json.h"

struct codemap_args {
	bool json;
};

static const struct cli_option codemap_opts[] = {
	CLI_ROW("PID", "a host pid: reads its map in /proc/PID/root/dev/shm\n"
		"(asgst-<nspid>-<pidns>.map, or an older asgst-<nspid>.map)"),
	CLI_ROW("FILE", "a code-map file"),
	CLI_FLAG("json", 0, "one JSON object instead of text",
		 struct codemap_args, json),
	CLI_HELP_OPT(NULL),	/* not listed */
};

static const struct cli_command codemap_cmd = {
	.name = "codemap",
	.usage =
"Usage: asgst-bpf codemap PID|FILE [--json]\n"
"Print the code map a JVM's asgst agent publishes, as text or JSON.\n",
	.opts = codemap_opts,
	.nopts = CLI_NOPTS(codemap_opts),
	.help_col = 11,
};

static const char *stub_kinds[] = {
	"other", "interpreter", "call_stub", "adapter", "nep_invoker",
	"upcall", "cont", "runtime",
};

static const char *code_kind(uint32_t k)
{
	switch (k) {
	case CM_CODE_NMETHOD: return "nmethod";
	case CM_CODE_NATIVE: return "native";
	case CM_CODE_OSR: return "osr";
	}
	return "?";
}

static const char *stub_kind(uint32_t k)
{
	return k < sizeof(stub_kinds) / sizeof(stub_kinds[0]) ? stub_kinds[k] :
								"?";
}

#define C32(f) { #f, offsetof(struct cm_vm_consts, f), 0 }
#define C64(f) { #f, offsetof(struct cm_vm_consts, f), 1 }
static const struct {
	const char *name;
	size_t off;
	int addr;
} consts[] = {
	C32(blob_name), C32(blob_size), C32(blob_frame_size),
	C32(blob_frame_complete), C32(blob_frame_complete_sz),
	C32(blob_code_begin), C32(blob_code_offset), C32(blob_kind),
	C32(blob_header_size), C32(nm_method), C32(nm_comp_level),
	C32(nm_entry_bci), C32(nm_verified_entry_point),
	C32(nm_verified_entry_offset), C32(method_const),
	C32(sizeof_const_method), C32(sizeof_method), C32(jt_anchor),
	C32(jt_thread_state), C32(jt_osthread), C32(jt_cont_entry),
	C32(jt_vthread), C32(jt_stack_base), C32(jt_stack_size),
	C32(osthread_thread_id), C32(anchor_last_sp), C32(anchor_last_pc),
	C32(anchor_last_fp), C32(jcw_anchor), C32(upcall_frame_data),
	C32(upcall_fd_jfa), C32(if_method), C32(if_bcp), C32(if_sender_sp),
	C32(if_locals), C32(entry_frame_call_wrapper),
	C32(thread_state_in_java), C32(thread_state_in_native),
	C32(thread_state_in_vm), C32(thread_state_blocked),
	C64(call_stub_return), C64(interp_begin), C64(interp_end),
	C64(code_low), C64(code_high), C64(cont_return_barrier),
	C64(cont_return_pc),
};

/* ---- text ------------------------------------------------------------- */

static void put_token(FILE *o, const char *s)
{
	if (!s || !*s) {
		fputc('-', o);
		return;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x21 || *p > 0x7e || *p == '\\')
			fprintf(o, "\\x%02x", *p);
		else
			fputc(*p, o);
	}
}

static void put_quoted(FILE *o, const char *s)
{
	fputc('"', o);
	for (const unsigned char *p = (const unsigned char *)(s ? s : "");
	     *p; p++) {
		if (*p < 0x20 || *p > 0x7e || *p == '\\' || *p == '"')
			fprintf(o, "\\x%02x", *p);
		else
			fputc(*p, o);
	}
	fputc('"', o);
}

static void put_time(FILE *o, const char *key, uint64_t t)
{
	if (t == UINT64_MAX)
		fprintf(o, " %s=-", key);
	else
		fprintf(o, " %s=%" PRIu64, key, t);
}

static void put_offset(FILE *o, const char *key, int32_t v)
{
	if (v < 0)
		fprintf(o, " %s=%d", key, v);
	else
		fprintf(o, " %s=0x%x", key, (unsigned)v);
}

static void put_method_name(FILE *o, const struct codemap *cm, uint64_t mp)
{
	const struct codemap_method *m = codemap__method(cm, mp);

	if (!m) {
		fprintf(o, "0x%" PRIx64, mp);
		return;
	}
	put_token(o, m->klass);
	fputc('.', o);
	put_token(o, m->name);
}

static void put_flags(FILE *o, uint32_t f)
{
	const char *names[] = { "ready", "full", "disabled", "closed",
				"superseded" };
	bool first = true;

	fprintf(o, "0x%x(", f);
	for (int i = 0; i < 5; i++) {
		if (!(f & (1u << i)))
			continue;
		fprintf(o, "%s%s", first ? "" : ",", names[i]);
		first = false;
	}
	fputc(')', o);
}

static void thread_flags(char *buf, size_t n, uint32_t f)
{
	snprintf(buf, n, "%s%s%s", f & CM_THREAD_VIRTUAL ? "virtual" : "platform",
		 f & CM_THREAD_CARRIER ? ",carrier" : "",
		 f & CM_THREAD_DAEMON ? ",daemon" : "");
}

static void print_text(FILE *o, const struct codemap *cm)
{
	const struct cm_file_header *h = codemap__header(cm);
	const struct cm_vm_consts *vm = codemap__vm(cm);
	struct codemap_stats st;
	char tf[64];

	fprintf(o, "codemap ");
	put_token(o, codemap__path(cm));
	fputc('\n', o);
	fprintf(o, "header version=%u header_size=%u writer_pid=%u flags=",
		h->version, h->header_size, h->writer_pid);
	put_flags(o, h->flags);
	fprintf(o, " max_size=%" PRIu64 " write_pos=%" PRIu64
		" start_ns=%" PRIu64 " dropped=%" PRIu64 " generation=%" PRIu64
		" gen_start_ns=%" PRIu64 " snapshot_end=%" PRIu64, h->max_size,
		h->write_pos, h->start_ns, h->dropped, h->generation,
		h->gen_start_ns, h->snapshot_end);
	if (h->flags & CM_F_DISABLED) {
		fputs(" disabled_reason=", o);
		put_quoted(o, h->disabled_reason);
	}
	fputc('\n', o);
	if (vm) {
		fprintf(o, "vm jdk=%u version=", codemap__jdk_major(cm));
		put_quoted(o, codemap__vm_version(cm));
		fputc('\n', o);
		if (codemap__cont(cm)) {
			const struct cm_cont *c = codemap__cont(cm);

			fprintf(o, "cont entry_cont=%d cont_tail=%d chunk_size=%d "
				"chunk_sp=%d chunk_argsize=%d chunk_bottom=%d "
				"chunk_stack=%d entry_size=%d oop_size=%u "
				"oop_shift=%u oop_base=0x%" PRIx64
				" chunk_parent=%d\n",
				c->entry_cont, c->cont_tail, c->chunk_size,
				c->chunk_sp, c->chunk_argsize, c->chunk_bottom,
				c->chunk_stack, c->entry_size,
				c->oop_size, c->oop_shift, c->oop_base,
				c->chunk_parent);
		}
		for (size_t i = 0; i < sizeof(consts) / sizeof(consts[0]); i++) {
			const char *base = (const char *)vm + consts[i].off;

			if (consts[i].addr) {
				uint64_t v;

				memcpy(&v, base, sizeof(v));
				fprintf(o, "const %s 0x%" PRIx64 "\n",
					consts[i].name, v);
			} else {
				int32_t v;

				memcpy(&v, base, sizeof(v));
				fprintf(o, "const %s %d\n", consts[i].name, v);
			}
		}
	}
	for (size_t i = 0; i < codemap__nmethods(cm); i++) {
		const struct codemap_method *m = codemap__method_at(cm, i);

		fprintf(o, "method 0x%" PRIx64 " ", m->method);
		put_token(o, m->klass);
		fputc(' ', o);
		put_token(o, m->name);
		fputc(' ', o);
		put_token(o, m->signature);
		fputc(' ', o);
		put_token(o, m->source);
		fprintf(o, " lines=%u modifiers=0x%x const=0x%" PRIx64 "%s\n",
			m->n_lines, m->modifiers, m->const_method,
			m->flags & CM_METHOD_NATIVE ? " native" : "");
	}
	for (size_t i = 0; i < codemap__nblobs(cm); i++) {
		const struct codemap_blob *b = codemap__blob_at(cm, i);

		if (b->type == CODEMAP_BLOB_STUB) {
			fprintf(o, "stub 0x%" PRIx64 "-0x%" PRIx64 " ",
				b->start, b->end);
			put_quoted(o, b->name);
			fprintf(o, " kind=%s frame=%d", stub_kind(b->kind),
				b->frame_size);
			put_offset(o, "complete", b->frame_complete);
			fprintf(o, " blob=0x%" PRIx64, b->blob);
			put_time(o, "load", b->load_ns);
			fputc('\n', o);
			continue;
		}
		fprintf(o, "code 0x%" PRIx64 "-0x%" PRIx64 " level=%d frame=%d",
			b->start, b->end, b->comp_level, b->frame_size);
		put_offset(o, "complete", b->frame_complete);
		fprintf(o, " method=0x%" PRIx64 " ", b->method);
		if (codemap__method(cm, b->method))
			put_method_name(o, cm, b->method);
		else
			fputc('?', o);
		fprintf(o, " pcs=%u kind=%s entry=0x%" PRIx64 " blob=0x%" PRIx64
			" methods=%u", b->n_pcs, code_kind(b->kind),
			b->verified_entry, b->blob, b->n_methods);
		put_time(o, "load", b->load_ns);
		put_time(o, "unload", b->unload_ns);
		fputc('\n', o);
		for (uint32_t j = 0; j < b->n_pcs; j++) {
			const struct codemap_pcdesc *d = &b->pcs[j];

			fprintf(o, "  pc +0x%x:", d->pc_off);
			for (uint32_t k = 0; k < d->depth; k++) {
				const struct cm_frame *f = &d->frames[k];

				fputs(k ? " <- " : " ", o);
				put_method_name(o, cm,
						b->method_pool[f->method_idx]);
				fprintf(o, "@%d", f->bci);
			}
			fputc('\n', o);
		}
	}
	for (size_t i = 0; i < codemap__nthreads(cm); i++) {
		const struct codemap_thread *t = codemap__thread_at(cm, i);

		fprintf(o, "thread %u ", t->tid);
		put_quoted(o, t->name);
		fprintf(o, " jt=0x%" PRIx64, t->java_thread);
		put_time(o, "start", t->start_ns);
		put_time(o, "end", t->end_ns);
		thread_flags(tf, sizeof(tf), t->flags);
		fprintf(o, " flags=%s\n", tf);
	}
	codemap__stats(cm, &st);
	fprintf(o, "summary records=%" PRIu64 " bytes=%" PRIu64
		" methods=%" PRIu64 " blobs=%" PRIu64 " stubs=%" PRIu64
		" threads=%" PRIu64 " unloads=%" PRIu64 " dropped=%" PRIu64
		" last_ns=%" PRIu64 " generation=%" PRIu64 " handovers=%" PRIu64
		" gens_missed=%" PRIu64 " reconciled=%" PRIu64
		" strings=%" PRIu64 " classes=%" PRIu64 " reader_bytes=%zu"
		" status=%s\n",
		st.records, st.bytes, st.methods, st.blobs, st.stubs, st.threads,
		st.unloads, st.dropped, st.last_record_ns, st.generation,
		st.handovers, st.gens_missed, st.reconciled, st.strings,
		st.classes, codemap__mem_bytes(cm),
		codemap__ok(cm) ? "ok" : "error");
}

/* ---- JSON ------------------------------------------------------------- */

/* the JSON writer's string escaping (writers.h), "" for an absent string */
static void json_str(FILE *o, const char *s)
{
	json__put_string(o, s ? s : "", false);
}

static void json_time(FILE *o, uint64_t t)
{
	if (t == UINT64_MAX)
		fputs("null", o);
	else
		fprintf(o, "%" PRIu64, t);
}

static void print_json(FILE *o, const struct codemap *cm)
{
	const struct cm_file_header *h = codemap__header(cm);
	const struct cm_vm_consts *vm = codemap__vm(cm);
	struct codemap_stats st;
	char tf[64];

	fputs("{\"path\":", o);
	json_str(o, codemap__path(cm));
	fprintf(o, ",\"header\":{\"version\":%u,\"header_size\":%u,"
		"\"writer_pid\":%u,\"flags\":%u,\"max_size\":%" PRIu64
		",\"write_pos\":%" PRIu64 ",\"start_ns\":%" PRIu64
		",\"dropped\":%" PRIu64 ",\"generation\":%" PRIu64
		",\"gen_start_ns\":%" PRIu64 ",\"snapshot_end\":%" PRIu64
		",\"disabled_reason\":", h->version,
		h->header_size, h->writer_pid, h->flags, h->max_size,
		h->write_pos, h->start_ns, h->dropped, h->generation,
		h->gen_start_ns, h->snapshot_end);
	if (h->flags & CM_F_DISABLED)
		json_str(o, h->disabled_reason);
	else
		fputs("null", o);
	fputs("},\n\"vm\":", o);
	if (vm) {
		fprintf(o, "{\"jdk\":%u,\"version\":", codemap__jdk_major(cm));
		json_str(o, codemap__vm_version(cm));
		fputs(",\"consts\":{", o);
		for (size_t i = 0; i < sizeof(consts) / sizeof(consts[0]); i++) {
			const char *base = (const char *)vm + consts[i].off;

			fprintf(o, "%s\"%s\":", i ? "," : "", consts[i].name);
			if (consts[i].addr) {
				uint64_t v;

				memcpy(&v, base, sizeof(v));
				fprintf(o, "\"0x%" PRIx64 "\"", v);
			} else {
				int32_t v;

				memcpy(&v, base, sizeof(v));
				fprintf(o, "%d", v);
			}
		}
		fputs("}}", o);
	} else {
		fputs("null", o);
	}
	fputs(",\n\"methods\":[", o);
	for (size_t i = 0; i < codemap__nmethods(cm); i++) {
		const struct codemap_method *m = codemap__method_at(cm, i);

		fprintf(o, "%s\n{\"method\":\"0x%" PRIx64 "\",\"const_method\":"
			"\"0x%" PRIx64 "\",\"class\":", i ? "," : "",
			m->method, m->const_method);
		json_str(o, m->klass);
		fputs(",\"name\":", o);
		json_str(o, m->name);
		fputs(",\"signature\":", o);
		json_str(o, m->signature);
		fputs(",\"source\":", o);
		json_str(o, m->source);
		fprintf(o, ",\"modifiers\":%u,\"native\":%s,\"lines\":[",
			m->modifiers,
			m->flags & CM_METHOD_NATIVE ? "true" : "false");
		for (uint32_t j = 0; j < m->n_lines; j++)
			fprintf(o, "%s[%u,%u]", j ? "," : "", m->lines[j].bci,
				m->lines[j].line);
		fputs("]}", o);
	}
	fputs("],\n\"blobs\":[", o);
	for (size_t i = 0; i < codemap__nblobs(cm); i++) {
		const struct codemap_blob *b = codemap__blob_at(cm, i);
		bool stub = b->type == CODEMAP_BLOB_STUB;

		fprintf(o, "%s\n{\"type\":\"%s\",\"kind\":\"%s\",\"start\":"
			"\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64 "\",\"blob\":"
			"\"0x%" PRIx64 "\",\"frame_size\":%d,"
			"\"frame_complete\":%d,\"load_ns\":", i ? "," : "",
			stub ? "stub" : "code",
			stub ? stub_kind(b->kind) : code_kind(b->kind),
			b->start, b->end, b->blob, b->frame_size,
			b->frame_complete);
		json_time(o, b->load_ns);
		fputs(",\"unload_ns\":", o);
		json_time(o, b->unload_ns);
		if (stub) {
			fputs(",\"name\":", o);
			json_str(o, b->name);
			fputc('}', o);
			continue;
		}
		fprintf(o, ",\"method\":\"0x%" PRIx64 "\",\"comp_level\":%d,"
			"\"verified_entry\":\"0x%" PRIx64 "\",\"method_pool\":[",
			b->method, b->comp_level, b->verified_entry);
		for (uint32_t j = 0; j < b->n_methods; j++)
			fprintf(o, "%s\"0x%" PRIx64 "\"", j ? "," : "",
				b->method_pool[j]);
		fputs("],\"pcs\":[", o);
		for (uint32_t j = 0; j < b->n_pcs; j++) {
			const struct codemap_pcdesc *d = &b->pcs[j];

			fprintf(o, "%s{\"pc_off\":%u,\"frames\":[", j ? "," : "",
				d->pc_off);
			for (uint32_t k = 0; k < d->depth; k++)
				fprintf(o, "%s[%u,%d]", k ? "," : "",
					d->frames[k].method_idx,
					d->frames[k].bci);
			fputs("]}", o);
		}
		fputs("]}", o);
	}
	fputs("],\n\"threads\":[", o);
	for (size_t i = 0; i < codemap__nthreads(cm); i++) {
		const struct codemap_thread *t = codemap__thread_at(cm, i);

		thread_flags(tf, sizeof(tf), t->flags);
		fprintf(o, "%s\n{\"tid\":%u,\"name\":", i ? "," : "", t->tid);
		json_str(o, t->name);
		fprintf(o, ",\"java_thread\":\"0x%" PRIx64 "\",\"flags\":\"%s\","
			"\"start_ns\":", t->java_thread, tf);
		json_time(o, t->start_ns);
		fputs(",\"end_ns\":", o);
		json_time(o, t->end_ns);
		fputc('}', o);
	}
	codemap__stats(cm, &st);
	fprintf(o, "],\n\"summary\":{\"records\":%" PRIu64 ",\"bytes\":%" PRIu64
		",\"methods\":%" PRIu64 ",\"blobs\":%" PRIu64 ",\"stubs\":%"
		PRIu64 ",\"threads\":%" PRIu64 ",\"unloads\":%" PRIu64
		",\"dropped\":%" PRIu64 ",\"last_ns\":%" PRIu64
		",\"generation\":%" PRIu64 ",\"handovers\":%" PRIu64
		",\"gens_missed\":%" PRIu64 ",\"reconciled\":%" PRIu64
		",\"strings\":%" PRIu64 ",\"classes\":%" PRIu64
		",\"reader_bytes\":%zu"
		",\"status\":\"%s\"}}\n", st.records, st.bytes, st.methods,
		st.blobs, st.stubs, st.threads, st.unloads, st.dropped,
		st.last_record_ns, st.generation, st.handovers, st.gens_missed,
		st.reconciled, st.strings, st.classes, codemap__mem_bytes(cm),
		codemap__ok(cm) ? "ok" : "error");
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* the map of a host pid (all digits) or of a file; 0, 1 or 2 (said) */
static int open_target(struct codemap **cm, const char *target)
{
	char err[600], *abs = NULL;
	int ret;

	if (all_digits(target)) {
		long pid = strtol(target, NULL, 10);

		if (pid <= 0 || pid > INT_MAX)
			return options__error(&codemap_cmd, "bad pid '%s'",
					      target);
		ret = codemap__open_pid(cm, (pid_t)pid, err, sizeof(err));
	} else {
		/* resolved under "/" like a pid's root, so relative to cwd */
		if (target[0] != '/') {
			char cwd[PATH_MAX];

			if (!getcwd(cwd, sizeof(cwd)) ||
			    asprintf(&abs, "%s/%s", cwd, target) < 0) {
				fprintf(stderr, "asgst-bpf codemap: %s: %s\n",
					target, strerror(errno));
				return 1;
			}
		}
		ret = codemap__open(cm, "/", abs ? abs : target, err,
				    sizeof(err));
		free(abs);
	}
	if (ret) {
		fprintf(stderr, "asgst-bpf codemap: %s\n", err);
		return 1;
	}
	return 0;
}

/* the one PID or FILE; 0, or 2 with the usage said on stderr */
static int check_target(int argc)
{
	if (argc - optind > 1)
		fputs("asgst-bpf codemap: one PID or FILE only\n", stderr);
	if (argc - optind != 1) {
		options__usage(&codemap_cmd, stderr);
		return 2;
	}
	return 0;
}

int cmd_codemap(int argc, char **argv)
{
	struct codemap_args args = { 0 };
	struct codemap *cm = NULL;
	int ret;

	ret = options__parse(&codemap_cmd, argc, argv, &args);
	if (ret != CLI_OK)
		return ret == CLI_HELP ? 0 : 2;
	ret = check_target(argc);
	if (!ret)
		ret = open_target(&cm, argv[optind]);
	if (ret)
		return ret;
	if (args.json)
		print_json(stdout, cm);
	else
		print_text(stdout, cm);
	ret = codemap__ok(cm) ? 0 : 1;
	if (!ret && fflush(stdout)) {
		fprintf(stderr, "asgst-bpf codemap: writing output: %s\n",
			strerror(errno));
		ret = 1;
	}
	codemap__free(cm);
	return ret;
}
