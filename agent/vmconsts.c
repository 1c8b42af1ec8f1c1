// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * All offsets here come from VMStructs by name. Fields that moved between
 * classes across releases are looked up in each candidate (presence, not
 * version numbers).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "vmconsts.h"
#include "vmstructs.h"

struct cm_vm_consts vmc;

/* internal offsets not published in the map */
static struct {
	int heaps;		/* unused: static */
	int ga_len, ga_data;
	int heap_memory, heap_segmap, heap_log2;
	int vs_low, vs_high;
	int sizeof_heapblock;
	int hb_used;
	int comp_level_sz;
	int frame_complete_sz;
	int verified_off_sz;
	int tid_sz;
	int kind_runtime[6];
	int n_runtime;
	uintptr_t heaps_addr, low_addr, high_addr, interp_code_addr;
	int sq_buffer, sq_limit;
	int flag_addr, flag_name, flag_size;
	uintptr_t flags_addr, num_flags_addr;
	int cp_size;
	int cm_sig_index, cm_name_index;
	int cm_constants;
	int sym_length, sym_body;
} in;

static int off2(const char *t1, const char *t2, const char *f)
{
	int o = vms__offset(t1, f);

	return o >= 0 || !t2 ? o : vms__offset(t2, f);
}

static uintptr_t rd_ptr(uintptr_t a)
{
	return a ? *(const uintptr_t *)a : 0;
}

static int64_t rd_sized(uintptr_t a, int sz, bool is_signed)
{
	switch (sz) {
	case 1: return is_signed ? *(const int8_t *)a : *(const uint8_t *)a;
	case 2: return is_signed ? *(const int16_t *)a : *(const uint16_t *)a;
	case 8: return *(const int64_t *)a;
	default: return is_signed ? (int64_t)*(const int32_t *)a
				   : (int64_t)*(const uint32_t *)a;
	}
}

static int32_t iconst(const char *name)
{
	int32_t v;

	return vms__int_const(name, &v) ? v : CM_ABSENT;
}

const char *vmc__init(void)
{
	static const char *const rt_kinds[] = {
		"CodeBlobKind::RuntimeStub", "CodeBlobKind::Deoptimization",
		"CodeBlobKind::Safepoint", "CodeBlobKind::Exception",
		"CodeBlobKind::UncommonTrap", "CodeBlobKind::Upcall",
	};
	unsigned i;
	int n;

	if (vms__init())
		return "VMStructs tables not found in libjvm";
	memset(&vmc, 0xff, offsetof(struct cm_vm_consts, call_stub_return));
	vmc.blob_name = vms__offset("CodeBlob", "_name");
	vmc.blob_size = vms__offset("CodeBlob", "_size");
	vmc.blob_frame_size = vms__offset("CodeBlob", "_frame_size");
	vmc.blob_frame_complete = vms__offset("CodeBlob", "_frame_complete_offset");
	n = vms__field_size("CodeBlob", "_frame_complete_offset");
	vmc.blob_frame_complete_sz = n ? n : 4;
	vmc.blob_code_begin = vms__offset("CodeBlob", "_code_begin");
	vmc.blob_code_offset = vms__offset("CodeBlob", "_code_offset");
	vmc.blob_kind = vms__offset("CodeBlob", "_kind");
	vmc.blob_header_size = vms__type_size("CodeBlob");
	vmc.nm_method = off2("nmethod", "CompiledMethod", "_method");
	vmc.nm_comp_level = vms__offset("nmethod", "_comp_level");
	n = vms__field_size("nmethod", "_comp_level");
	in.comp_level_sz = n ? n : 4;
	vmc.nm_entry_bci = vms__offset("nmethod", "_entry_bci");
	vmc.nm_verified_entry_point = vms__offset("nmethod", "_verified_entry_point");
	vmc.nm_verified_entry_offset = vms__offset("nmethod", "_verified_entry_offset");
	n = vms__field_size("nmethod", "_verified_entry_offset");
	in.verified_off_sz = n ? n : 2;
	vmc.method_const = vms__offset("Method", "_constMethod");
	vmc.sizeof_const_method = vms__type_size("ConstMethod");
	vmc.sizeof_method = vms__type_size("Method");
	vmc.jt_anchor = vms__offset("JavaThread", "_anchor");
	vmc.jt_thread_state = vms__offset("JavaThread", "_thread_state");
	vmc.jt_osthread = off2("JavaThread", "Thread", "_osthread");
	vmc.jt_cont_entry = vms__offset("JavaThread", "_cont_entry");
	vmc.jt_vthread = vms__offset("JavaThread", "_vthread");
	vmc.jt_stack_base = off2("JavaThread", "Thread", "_stack_base");
	vmc.jt_stack_size = off2("JavaThread", "Thread", "_stack_size");
	vmc.osthread_thread_id = vms__offset("OSThread", "_thread_id");
	n = vms__field_size("OSThread", "_thread_id");
	in.tid_sz = n ? n : 4;
	vmc.anchor_last_sp = vms__offset("JavaFrameAnchor", "_last_Java_sp");
	vmc.anchor_last_pc = vms__offset("JavaFrameAnchor", "_last_Java_pc");
	vmc.anchor_last_fp = vms__offset("JavaFrameAnchor", "_last_Java_fp");
	vmc.jcw_anchor = vms__offset("JavaCallWrapper", "_anchor");
	vmc.upcall_frame_data = vms__offset("UpcallStub", "_frame_data_offset");
	vmc.upcall_fd_jfa = vms__offset("UpcallStub::FrameData", "jfa");
	/* x86_64 HotSpot frame layout (frame_x86.hpp), stable since JDK 9 */
	vmc.if_method = -3;
	vmc.if_bcp = -8;
	vmc.if_sender_sp = -1;
	vmc.if_locals = -7;
	vmc.entry_frame_call_wrapper = -6;
	vmc.thread_state_in_java = iconst("_thread_in_Java");
	vmc.thread_state_in_native = iconst("_thread_in_native");
	vmc.thread_state_in_vm = iconst("_thread_in_vm");
	vmc.thread_state_blocked = iconst("_thread_blocked");
	vmc.pad0 = 0;
	memset(vmc.reserved, 0, sizeof(vmc.reserved));

	in.ga_len = vms__offset("GrowableArrayBase", "_len");
	in.ga_data = vms__offset("GrowableArray<int>", "_data");
	in.heap_memory = vms__offset("CodeHeap", "_memory");
	in.heap_segmap = vms__offset("CodeHeap", "_segmap");
	in.heap_log2 = vms__offset("CodeHeap", "_log2_segment_size");
	in.vs_low = vms__offset("VirtualSpace", "_low");
	in.vs_high = vms__offset("VirtualSpace", "_high");
	in.sizeof_heapblock = vms__type_size("HeapBlock");
	in.hb_used = vms__offset("HeapBlock::Header", "_used");
	n = vms__offset("HeapBlock", "_header");
	if (in.hb_used >= 0 && n >= 0)
		in.hb_used += n;
	in.heaps_addr = vms__static_addr("CodeCache", "_heaps");
	in.low_addr = vms__static_addr("CodeCache", "_low_bound");
	in.high_addr = vms__static_addr("CodeCache", "_high_bound");
	in.interp_code_addr = vms__static_addr("AbstractInterpreter", "_code");
	in.sq_buffer = vms__offset("StubQueue", "_stub_buffer");
	in.sq_limit = vms__offset("StubQueue", "_buffer_limit");
	for (i = 0; i < sizeof(rt_kinds) / sizeof(rt_kinds[0]); i++) {
		int32_t v;

		if (vms__int_const(rt_kinds[i], &v))
			in.kind_runtime[in.n_runtime++] = v;
	}
	in.flag_addr = vms__offset("JVMFlag", "_addr");
	in.flag_name = vms__offset("JVMFlag", "_name");
	in.flag_size = vms__type_size("JVMFlag");
	in.flags_addr = vms__static_addr("JVMFlag", "flags");
	in.num_flags_addr = vms__static_addr("JVMFlag", "numFlags");
	in.cp_size = vms__type_size("ConstantPool");
	in.cm_sig_index = vms__offset("ConstMethod", "_signature_index");
	in.cm_name_index = vms__offset("ConstMethod", "_name_index");
	in.cm_constants = vms__offset("ConstMethod", "_constants");
	in.sym_length = vms__offset("Symbol", "_length");
	in.sym_body = vms__offset("Symbol", "_body");

	/* what the agent cannot work without */
	if (vmc.blob_frame_size < 0 || vmc.nm_method < 0 ||
	    vmc.method_const < 0 || vmc.sizeof_const_method <= 0 ||
	    (vmc.blob_code_begin < 0 && vmc.blob_code_offset < 0))
		return "VMStructs lacks CodeBlob/nmethod/Method fields";
	vmc__refresh();
	return NULL;
}

void vmc__refresh(void)
{
	uintptr_t a, q;

	a = vms__static_addr("StubRoutines", "_call_stub_return_address");
	vmc.call_stub_return = rd_ptr(a);
	vmc.code_low = rd_ptr(in.low_addr);
	vmc.code_high = rd_ptr(in.high_addr);
	q = rd_ptr(in.interp_code_addr);
	if (q && in.sq_buffer >= 0 && in.sq_limit >= 0) {
		vmc.interp_begin = rd_ptr(q + in.sq_buffer);
		vmc.interp_end = vmc.interp_begin +
				 (uint32_t)*(const int32_t *)(q + in.sq_limit);
	}
	a = vms__static_addr("StubRoutines", "_cont_returnBarrier");
	if (a && rd_ptr(a))
		vmc.cont_return_barrier = rd_ptr(a);
	a = vms__static_addr("ContinuationEntry", "_return_pc");
	vmc.cont_return_pc = rd_ptr(a);
}

uintptr_t vmc__find_blob(uintptr_t pc)
{
	uintptr_t heaps = rd_ptr(in.heaps_addr), data;
	int len, i;

	if (!heaps || in.ga_len < 0 || in.ga_data < 0 || in.heap_memory < 0 ||
	    in.heap_segmap < 0 || in.heap_log2 < 0 || in.vs_low < 0 ||
	    in.vs_high < 0 || in.sizeof_heapblock <= 0)
		return 0;
	len = *(const int *)(heaps + in.ga_len);
	data = rd_ptr(heaps + in.ga_data);
	if (!data || len <= 0 || len > 64)
		return 0;
	for (i = 0; i < len; i++) {
		uintptr_t h = rd_ptr(data + 8 * (unsigned)i), low, high, hb;
		const uint8_t *map;
		size_t seg;
		int log2, n;

		if (!h)
			continue;
		low = rd_ptr(h + in.heap_memory + in.vs_low);
		high = rd_ptr(h + in.heap_memory + in.vs_high);
		if (pc < low || pc >= high)
			continue;
		map = (const uint8_t *)rd_ptr(h + in.heap_segmap + in.vs_low);
		log2 = *(const int *)(h + in.heap_log2);
		if (!map || log2 < 0 || log2 > 20)
			return 0;
		seg = (pc - low) >> log2;
		if (map[seg] == 0xff)
			return 0;
		/* each byte says how far back the block start is (bounded) */
		for (n = 0; map[seg] > 0 && n < (1 << 16); n++) {
			if (map[seg] == 0xff || map[seg] > seg)
				return 0;
			seg -= map[seg];
		}
		if (map[seg] != 0)
			return 0;
		hb = low + (seg << log2);
		if (in.hb_used >= 0 && !*(const uint8_t *)(hb + in.hb_used))
			return 0;
		return hb + (unsigned)in.sizeof_heapblock;
	}
	return 0;
}

uintptr_t vmc__blob_code_begin(uintptr_t blob)
{
	if (vmc.blob_code_begin >= 0)
		return rd_ptr(blob + vmc.blob_code_begin);
	return blob + (uint32_t)*(const int32_t *)(blob + vmc.blob_code_offset);
}

int vmc__blob_frame_size(uintptr_t blob)
{
	return *(const int32_t *)(blob + vmc.blob_frame_size);
}

int vmc__blob_frame_complete(uintptr_t blob)
{
	if (vmc.blob_frame_complete < 0)
		return -1;
	return (int)rd_sized(blob + vmc.blob_frame_complete,
			     vmc.blob_frame_complete_sz, true);
}

int vmc__blob_kind(uintptr_t blob)
{
	return vmc.blob_kind >= 0 ? *(const uint8_t *)(blob + vmc.blob_kind) : -1;
}

bool vmc__blob_is_runtime_stub(uintptr_t blob)
{
	int k = vmc__blob_kind(blob), i;

	for (i = 0; k >= 0 && i < in.n_runtime; i++)
		if (in.kind_runtime[i] == k)
			return true;
	return false;
}

uintptr_t vmc__nm_method(uintptr_t nm)
{
	return rd_ptr(nm + vmc.nm_method);
}

int vmc__nm_comp_level(uintptr_t nm)
{
	if (vmc.nm_comp_level < 0)
		return -1;
	return (int)rd_sized(nm + vmc.nm_comp_level, in.comp_level_sz, true);
}

int vmc__nm_entry_bci(uintptr_t nm)
{
	return vmc.nm_entry_bci >= 0 ? *(const int32_t *)(nm + vmc.nm_entry_bci)
				     : -1;
}

uintptr_t vmc__nm_verified_entry(uintptr_t nm)
{
	if (vmc.nm_verified_entry_point >= 0)
		return rd_ptr(nm + vmc.nm_verified_entry_point);
	if (vmc.nm_verified_entry_offset >= 0)
		return vmc__blob_code_begin(nm) +
		       (uint64_t)rd_sized(nm + vmc.nm_verified_entry_offset,
					  in.verified_off_sz, false);
	return 0;
}

uint32_t vmc__jt_tid(uintptr_t jt)
{
	uintptr_t os;

	if (!jt || vmc.jt_osthread < 0 || vmc.osthread_thread_id < 0)
		return 0;
	os = rd_ptr(jt + vmc.jt_osthread);
	if (!os)
		return 0;
	return (uint32_t)rd_sized(os + vmc.osthread_thread_id, in.tid_sz, false);
}

/*
 * The continuation / stack-chunk layout (struct cm_cont) from the field
 * offsets the caller got from JNI and the VM's own tables. A local JNI
 * reference is a pointer to the oop; the mirror's klass field gives the
 * StackChunk Klass, whose layout helper is its instance size: where the VM
 * appends the chunk's stack. false when anything looks wrong.
 */
bool vmc__cont_layout(struct cm_cont *c, const void *chunk_class_ref)
{
	uintptr_t ko = vms__static_addr("java_lang_Class", "_klass_offset");
	uintptr_t base = vms__static_addr("CompressedOops", "_base");
	uintptr_t shift = vms__static_addr("CompressedOops", "_shift");
	int lh_off = vms__offset("Klass", "_layout_helper");
	uintptr_t mirror, klass;
	int32_t lh;

	if (!ko || lh_off < 0 || !chunk_class_ref ||
	    vms__type_size("ContinuationEntry") < 16)
		return false;
	mirror = rd_ptr((uintptr_t)chunk_class_ref & ~(uintptr_t)3);
	if (!mirror || (mirror & 7))
		return false;
	klass = rd_ptr(mirror + (uintptr_t)*(const int32_t *)ko);
	if (!klass || (klass & 7))
		return false;
	lh = *(const int32_t *)(klass + (uintptr_t)lh_off);
	/* an instance klass's layout helper is its size in bytes (> 0), the
	 * low bit set for slow-path allocation (a StackChunk's size varies) */
	if (lh <= 0 || lh > 4096 || (lh & 6))
		return false;
	c->chunk_stack = lh & ~7;
	/*
	 * _parent, then _cont; JDK 22+ put a platform part first (empty on
	 * x86_64, one padded word), which makes sizeof 64 instead of 56
	 */
	c->entry_cont = vms__type_size("ContinuationEntry") >= 64 ? 16 : 8;
	c->entry_size = (vms__type_size("ContinuationEntry") + 15) & ~15;
	c->oop_base = c->oop_size == 4 && base ? rd_ptr(base) : 0;
	c->oop_shift = c->oop_size == 4 && shift ?
		       (uint32_t)*(const int32_t *)shift : 0;
	return c->oop_shift <= 8;
}

int vmc__set_bool_flag(const char *name, bool value)
{
	uintptr_t flags = rd_ptr(in.flags_addr);
	size_t n, i;

	if (!flags || !in.num_flags_addr || in.flag_addr < 0 ||
	    in.flag_name < 0 || in.flag_size <= 0)
		return -1;
	n = *(const size_t *)in.num_flags_addr;
	for (i = 0; i < n && i < 100000; i++) {
		uintptr_t f = flags + i * (unsigned)in.flag_size;
		const char *fn = (const char *)rd_ptr(f + in.flag_name);
		bool *addr;

		if (!fn || strcmp(fn, name))
			continue;
		addr = (bool *)rd_ptr(f + in.flag_addr);
		if (!addr)
			return -1;
		*addr = value;
		return 0;
	}
	return -1;
}

/* where process_vm_readv is filtered out (seccomp): write() into a pipe
 * reports an unreadable source as EFAULT too */
static int pipe_read(uintptr_t addr, void *buf, size_t len)
{
	int fds[2], ret = -1;

	if (len > 4096 || pipe2(fds, O_CLOEXEC | O_NONBLOCK))
		return -1;
	if (write(fds[1], (const void *)addr, len) == (ssize_t)len &&
	    read(fds[0], buf, len) == (ssize_t)len)
		ret = 0;
	close(fds[0]);
	close(fds[1]);
	return ret;
}

int vmc__safe_read(uintptr_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)addr, .iov_len = len };
	ssize_t n;

	if (addr < 4096 || !len)
		return -1;
	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n < 0 && (errno == ENOSYS || errno == EPERM))
		return pipe_read(addr, buf, len);
	return n == (ssize_t)len ? 0 : -1;
}

/* plain loads, or through vmc__safe_read when the pointer is not yet known
 * to be a Method* (the jmethodID probe) */
static int sym_read(uintptr_t addr, void *buf, size_t len, bool checked)
{
	if (checked)
		return vmc__safe_read(addr, buf, len);
	memcpy(buf, (const void *)addr, len);
	return 0;
}

static bool method_symbol(uintptr_t method, int index_off, char *buf,
			  size_t len, bool checked)
{
	uintptr_t cm = 0, cp = 0, sym = 0;
	uint16_t idx, slen;

	if (!method || in.cp_size <= 0 || in.cm_sig_index < 0 ||
	    in.cm_constants < 0 || in.sym_length < 0 || in.sym_body < 0 ||
	    index_off < 0 || !len)
		return false;
	if (sym_read(method + vmc.method_const, &cm, sizeof(cm), checked) ||
	    !cm || sym_read(cm + in.cm_constants, &cp, sizeof(cp), checked) ||
	    !cp || sym_read(cm + index_off, &idx, sizeof(idx), checked))
		return false;
	/* constant-pool slots follow the ConstantPool header; a symbol
	 * slot holds the Symbol* itself */
	if (sym_read(cp + (unsigned)in.cp_size + 8u * idx, &sym, sizeof(sym),
		     checked) || !sym ||
	    sym_read(sym + in.sym_length, &slen, sizeof(slen), checked))
		return false;
	if (slen >= len || slen == 0 ||
	    sym_read(sym + in.sym_body, buf, slen, checked))
		return false;
	buf[slen] = 0;
	return true;
}

bool vmc__method_signature(uintptr_t method, char *buf, size_t len)
{
	return method_symbol(method, in.cm_sig_index, buf, len, false) &&
	       buf[0] == '(';
}

bool vmc__method_name(uintptr_t method, char *buf, size_t len)
{
	return method_symbol(method, in.cm_name_index, buf, len, false);
}

bool vmc__method_name_checked(uintptr_t method, char *buf, size_t len)
{
	return method_symbol(method, in.cm_name_index, buf, len, true);
}
