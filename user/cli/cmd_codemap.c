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
#include "util/err.h"

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

/* consts[i] in vm: an address, or an offset or value (int32) widened */
static uint64_t const_value(const struct cm_vm_consts *vm, size_t i)
{
	const char *base = (const char *)vm + consts[i].off;
	uint64_t a;
	int32_t v;

	if (consts[i].addr) {
		memcpy(&a, base, sizeof(a));
		return a;
	}
	memcpy(&v, base, sizeof(v));
	return (uint64_t)(int64_t)v;
}

static void thread_flags(char *buf, size_t n, uint32_t f)
{
	snprintf(buf, n, "%s%s%s",
		 f & CM_THREAD_VIRTUAL ? "virtual" : "platform",
		 f & CM_THREAD_CARRIER ? ",carrier" : "",
		 f & CM_THREAD_DAEMON ? ",daemon" : "");
}

/* a number of the header or summary line, by the name both formats use */
struct field {
	const char *name;
	uint64_t v;
	bool flags;		/* CM_F_*: text names the bits */
};

#define HEADER_FIELDS	11
static void header_fields(const struct cm_file_header *h,
			  struct field f[HEADER_FIELDS])
{
	f[0] = (struct field){ "version", h->version, false };
	f[1] = (struct field){ "header_size", h->header_size, false };
	f[2] = (struct field){ "writer_pid", h->writer_pid, false };
	f[3] = (struct field){ "flags", h->flags, true };
	f[4] = (struct field){ "max_size", h->max_size, false };
	f[5] = (struct field){ "write_pos", h->write_pos, false };
	f[6] = (struct field){ "start_ns", h->start_ns, false };
	f[7] = (struct field){ "dropped", h->dropped, false };
	f[8] = (struct field){ "generation", h->generation, false };
	f[9] = (struct field){ "gen_start_ns", h->gen_start_ns, false };
	f[10] = (struct field){ "snapshot_end", h->snapshot_end, false };
}

#define SUMMARY_FIELDS	16
static void summary_fields(const struct codemap *cm,
			   struct field f[SUMMARY_FIELDS])
{
	struct codemap_stats st;

	codemap__stats(cm, &st);
	f[0] = (struct field){ "records", st.records, false };
	f[1] = (struct field){ "bytes", st.bytes, false };
	f[2] = (struct field){ "methods", st.methods, false };
	f[3] = (struct field){ "blobs", st.blobs, false };
	f[4] = (struct field){ "stubs", st.stubs, false };
	f[5] = (struct field){ "threads", st.threads, false };
	f[6] = (struct field){ "unloads", st.unloads, false };
	f[7] = (struct field){ "dropped", st.dropped, false };
	f[8] = (struct field){ "last_ns", st.last_record_ns, false };
	f[9] = (struct field){ "generation", st.generation, false };
	f[10] = (struct field){ "handovers", st.handovers, false };
	f[11] = (struct field){ "gens_missed", st.gens_missed, false };
	f[12] = (struct field){ "reconciled", st.reconciled, false };
	f[13] = (struct field){ "strings", st.strings, false };
	f[14] = (struct field){ "classes", st.classes, false };
	f[15] = (struct field){ "reader_bytes", codemap__mem_bytes(cm), false };
}

static const char *map_status(const struct codemap *cm)
{
	return codemap__ok(cm) ? "ok" : "error";
}

/*
 * An output format: print_map() walks the map once, in this order, and
 * calls these; i counts the items of a list from 0.
 */
struct map_format {
	void (*path)(FILE *o, const char *path);
	void (*header)(FILE *o, const struct cm_file_header *h);
	void (*no_vm)(FILE *o);		/* before a VM record */
	void (*vm_begin)(FILE *o, const struct codemap *cm);
	void (*vm_const)(FILE *o, size_t i, uint64_t v);
	void (*vm_end)(FILE *o);
	void (*list_begin)(FILE *o, const char *name);
	void (*list_end)(FILE *o);
	void (*method)(FILE *o, size_t i, const struct codemap_method *m);
	void (*stub)(FILE *o, size_t i, const struct codemap_blob *b);
	void (*code)(FILE *o, size_t i, const struct codemap *cm,
		     const struct codemap_blob *b);
	void (*thread)(FILE *o, size_t i, const struct codemap_thread *t);
	void (*summary)(FILE *o, const struct codemap *cm);
};

static void print_vm(FILE *o, const struct codemap *cm,
		     const struct map_format *fmt)
{
	const struct cm_vm_consts *vm = codemap__vm(cm);

	if (!vm) {
		fmt->no_vm(o);
		return;
	}
	fmt->vm_begin(o, cm);
	for (size_t i = 0; i < sizeof(consts) / sizeof(consts[0]); i++)
		fmt->vm_const(o, i, const_value(vm, i));
	fmt->vm_end(o);
}

static void print_map(FILE *o, const struct codemap *cm,
		      const struct map_format *fmt)
{
	fmt->path(o, codemap__path(cm));
	fmt->header(o, codemap__header(cm));
	print_vm(o, cm, fmt);
	fmt->list_begin(o, "methods");
	for (size_t i = 0; i < codemap__nmethods(cm); i++)
		fmt->method(o, i, codemap__method_at(cm, i));
	fmt->list_end(o);
	fmt->list_begin(o, "blobs");
	for (size_t i = 0; i < codemap__nblobs(cm); i++) {
		const struct codemap_blob *b = codemap__blob_at(cm, i);

		if (b->type == CODEMAP_BLOB_STUB)
			fmt->stub(o, i, b);
		else
			fmt->code(o, i, cm, b);
	}
	fmt->list_end(o);
	fmt->list_begin(o, "threads");
	for (size_t i = 0; i < codemap__nthreads(cm); i++)
		fmt->thread(o, i, codemap__thread_at(cm, i));
	fmt->list_end(o);
	fmt->summary(o, cm);
}

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

/* " name=value" each */
static void put_fields(FILE *o, const struct field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fprintf(o, " %s=", f[i].name);
		if (f[i].flags)
			put_flags(o, (uint32_t)f[i].v);
		else
			fprintf(o, "%" PRIu64, f[i].v);
	}
}

static void text_path(FILE *o, const char *path)
{
	fputs("codemap ", o);
	put_token(o, path);
	fputc('\n', o);
}

static void text_header(FILE *o, const struct cm_file_header *h)
{
	struct field f[HEADER_FIELDS];

	header_fields(h, f);
	fputs("header", o);
	put_fields(o, f, HEADER_FIELDS);
	if (h->flags & CM_F_DISABLED) {
		fputs(" disabled_reason=", o);
		put_quoted(o, h->disabled_reason);
	}
	fputc('\n', o);
}

static void text_cont(FILE *o, const struct cm_cont *c)
{
	fprintf(o, "cont entry_cont=%d cont_tail=%d chunk_size=%d "
		"chunk_sp=%d chunk_argsize=%d chunk_bottom=%d "
		"chunk_stack=%d entry_size=%d oop_size=%u "
		"oop_shift=%u oop_base=0x%" PRIx64 " chunk_parent=%d\n",
		c->entry_cont, c->cont_tail, c->chunk_size, c->chunk_sp,
		c->chunk_argsize, c->chunk_bottom, c->chunk_stack,
		c->entry_size, c->oop_size, c->oop_shift, c->oop_base,
		c->chunk_parent);
}

static void text_vm_begin(FILE *o, const struct codemap *cm)
{
	fprintf(o, "vm jdk=%u version=", codemap__jdk_major(cm));
	put_quoted(o, codemap__vm_version(cm));
	fputc('\n', o);
	if (codemap__cont(cm))
		text_cont(o, codemap__cont(cm));
}

static void text_vm_const(FILE *o, size_t i, uint64_t v)
{
	if (consts[i].addr)
		fprintf(o, "const %s 0x%" PRIx64 "\n", consts[i].name, v);
	else
		fprintf(o, "const %s %d\n", consts[i].name, (int32_t)v);
}

/* text has no lists and no VM object to open or close */
static void text_none(FILE *o)
{
	(void)o;
}

static void text_list_begin(FILE *o, const char *name)
{
	(void)o;
	(void)name;
}

static void text_method(FILE *o, size_t i, const struct codemap_method *m)
{
	(void)i;
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

static void text_stub(FILE *o, size_t i, const struct codemap_blob *b)
{
	(void)i;
	fprintf(o, "stub 0x%" PRIx64 "-0x%" PRIx64 " ", b->start, b->end);
	put_quoted(o, b->name);
	fprintf(o, " kind=%s frame=%d", stub_kind(b->kind), b->frame_size);
	put_offset(o, "complete", b->frame_complete);
	fprintf(o, " blob=0x%" PRIx64, b->blob);
	put_time(o, "load", b->load_ns);
	fputc('\n', o);
}

/* "  pc +0xOFF: CLASS.NAME@BCI <- ..." per PcDesc, innermost first */
static void text_pcs(FILE *o, const struct codemap *cm,
		     const struct codemap_blob *b)
{
	for (uint32_t j = 0; j < b->n_pcs; j++) {
		const struct codemap_pcdesc *d = &b->pcs[j];

		fprintf(o, "  pc +0x%x:", d->pc_off);
		for (uint32_t k = 0; k < d->depth; k++) {
			const struct cm_frame *f = &d->frames[k];

			fputs(k ? " <- " : " ", o);
			put_method_name(o, cm, b->method_pool[f->method_idx]);
			fprintf(o, "@%d", f->bci);
		}
		fputc('\n', o);
	}
}

static void text_code(FILE *o, size_t i, const struct codemap *cm,
		      const struct codemap_blob *b)
{
	(void)i;
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
	text_pcs(o, cm, b);
}

static void text_thread(FILE *o, size_t i, const struct codemap_thread *t)
{
	char tf[64];

	(void)i;
	fprintf(o, "thread %u ", t->tid);
	put_quoted(o, t->name);
	fprintf(o, " jt=0x%" PRIx64, t->java_thread);
	put_time(o, "start", t->start_ns);
	put_time(o, "end", t->end_ns);
	thread_flags(tf, sizeof(tf), t->flags);
	fprintf(o, " flags=%s\n", tf);
}

static void text_summary(FILE *o, const struct codemap *cm)
{
	struct field f[SUMMARY_FIELDS];

	summary_fields(cm, f);
	fputs("summary", o);
	put_fields(o, f, SUMMARY_FIELDS);
	fprintf(o, " status=%s\n", map_status(cm));
}

static const struct map_format text_format = {
	.path = text_path,
	.header = text_header,
	.no_vm = text_none,
	.vm_begin = text_vm_begin,
	.vm_const = text_vm_const,
	.vm_end = text_none,
	.list_begin = text_list_begin,
	.list_end = text_none,
	.method = text_method,
	.stub = text_stub,
	.code = text_code,
	.thread = text_thread,
	.summary = text_summary,
};

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

/* "name":value, comma separated */
static void json_fields(FILE *o, const struct field *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(o, "%s\"%s\":%" PRIu64, i ? "," : "", f[i].name,
			f[i].v);
}

static void json_path(FILE *o, const char *path)
{
	fputs("{\"path\":", o);
	json_str(o, path);
}

static void json_header(FILE *o, const struct cm_file_header *h)
{
	struct field f[HEADER_FIELDS];

	header_fields(h, f);
	fputs(",\"header\":{", o);
	json_fields(o, f, HEADER_FIELDS);
	fputs(",\"disabled_reason\":", o);
	if (h->flags & CM_F_DISABLED)
		json_str(o, h->disabled_reason);
	else
		fputs("null", o);
	fputc('}', o);
}

static void json_no_vm(FILE *o)
{
	fputs(",\n\"vm\":null", o);
}

static void json_vm_begin(FILE *o, const struct codemap *cm)
{
	fprintf(o, ",\n\"vm\":{\"jdk\":%u,\"version\":",
		codemap__jdk_major(cm));
	json_str(o, codemap__vm_version(cm));
	fputs(",\"consts\":{", o);
}

static void json_vm_const(FILE *o, size_t i, uint64_t v)
{
	fprintf(o, "%s\"%s\":", i ? "," : "", consts[i].name);
	if (consts[i].addr)
		fprintf(o, "\"0x%" PRIx64 "\"", v);
	else
		fprintf(o, "%d", (int32_t)v);
}

static void json_vm_end(FILE *o)
{
	fputs("}}", o);
}

static void json_list_begin(FILE *o, const char *name)
{
	fprintf(o, ",\n\"%s\":[", name);
}

static void json_list_end(FILE *o)
{
	fputc(']', o);
}

static void json_method(FILE *o, size_t i, const struct codemap_method *m)
{
	fprintf(o, "%s\n{\"method\":\"0x%" PRIx64 "\",\"const_method\":"
		"\"0x%" PRIx64 "\",\"class\":", i ? "," : "", m->method,
		m->const_method);
	json_str(o, m->klass);
	fputs(",\"name\":", o);
	json_str(o, m->name);
	fputs(",\"signature\":", o);
	json_str(o, m->signature);
	fputs(",\"source\":", o);
	json_str(o, m->source);
	fprintf(o, ",\"modifiers\":%u,\"native\":%s,\"lines\":[",
		m->modifiers, m->flags & CM_METHOD_NATIVE ? "true" : "false");
	for (uint32_t j = 0; j < m->n_lines; j++)
		fprintf(o, "%s[%u,%u]", j ? "," : "", m->lines[j].bci,
			m->lines[j].line);
	fputs("]}", o);
}

/* what stubs and code have alike, the object left open */
static void json_blob_begin(FILE *o, size_t i, const struct codemap_blob *b,
			    const char *type, const char *kind)
{
	fprintf(o, "%s\n{\"type\":\"%s\",\"kind\":\"%s\",\"start\":"
		"\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64 "\",\"blob\":"
		"\"0x%" PRIx64 "\",\"frame_size\":%d,"
		"\"frame_complete\":%d,\"load_ns\":", i ? "," : "", type, kind,
		b->start, b->end, b->blob, b->frame_size, b->frame_complete);
	json_time(o, b->load_ns);
	fputs(",\"unload_ns\":", o);
	json_time(o, b->unload_ns);
}

static void json_stub(FILE *o, size_t i, const struct codemap_blob *b)
{
	json_blob_begin(o, i, b, "stub", stub_kind(b->kind));
	fputs(",\"name\":", o);
	json_str(o, b->name);
	fputc('}', o);
}

/* [method_pool index, bci] per frame of each PcDesc */
static void json_pcs(FILE *o, const struct codemap_blob *b)
{
	fputs("\"pcs\":[", o);
	for (uint32_t j = 0; j < b->n_pcs; j++) {
		const struct codemap_pcdesc *d = &b->pcs[j];

		fprintf(o, "%s{\"pc_off\":%u,\"frames\":[", j ? "," : "",
			d->pc_off);
		for (uint32_t k = 0; k < d->depth; k++)
			fprintf(o, "%s[%u,%d]", k ? "," : "",
				d->frames[k].method_idx, d->frames[k].bci);
		fputs("]}", o);
	}
	fputc(']', o);
}

static void json_code(FILE *o, size_t i, const struct codemap *cm,
		      const struct codemap_blob *b)
{
	(void)cm;
	json_blob_begin(o, i, b, "code", code_kind(b->kind));
	fprintf(o, ",\"method\":\"0x%" PRIx64 "\",\"comp_level\":%d,"
		"\"verified_entry\":\"0x%" PRIx64 "\",\"method_pool\":[",
		b->method, b->comp_level, b->verified_entry);
	for (uint32_t j = 0; j < b->n_methods; j++)
		fprintf(o, "%s\"0x%" PRIx64 "\"", j ? "," : "",
			b->method_pool[j]);
	fputs("],", o);
	json_pcs(o, b);
	fputc('}', o);
}

static void json_thread(FILE *o, size_t i, const struct codemap_thread *t)
{
	char tf[64];

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

static void json_summary(FILE *o, const struct codemap *cm)
{
	struct field f[SUMMARY_FIELDS];

	summary_fields(cm, f);
	fputs(",\n\"summary\":{", o);
	json_fields(o, f, SUMMARY_FIELDS);
	fprintf(o, ",\"status\":\"%s\"}}\n", map_status(cm));
}

static const struct map_format json_format = {
	.path = json_path,
	.header = json_header,
	.no_vm = json_no_vm,
	.vm_begin = json_vm_begin,
	.vm_const = json_vm_const,
	.vm_end = json_vm_end,
	.list_begin = json_list_begin,
	.list_end = json_list_end,
	.method = json_method,
	.stub = json_stub,
	.code = json_code,
	.thread = json_thread,
	.summary = json_summary,
};

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
		err__say("codemap", "%s", err);
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
	print_map(stdout, cm, args.json ? &json_format : &text_format);
	ret = codemap__ok(cm) ? 0 : 1;
	if (!ret && fflush(stdout)) {
		fprintf(stderr, "asgst-bpf codemap: writing output: %s\n",
			strerror(errno));
		ret = 1;
	}
	codemap__free(cm);
	return ret;
}
