/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The JEP 435 AsyncGetStackTrace shapes, implemented outside the JVM.
 *
 * JEP 435 proposes
 *
 *   void AsyncGetStackTrace(ASGST_CallTrace *trace, jint depth,
 *                           void *ucontext, uint32_t options);
 *
 * called inside the JVM with the ucontext of the thread to walk. asgst-bpf
 * runs in another process: the "ucontext" is a captured kernel sample
 * (registers ip/sp/bp/rbx/r13, a window of raw stack bytes from sp, the
 * JavaThread anchor words; bpf/sampler.h) and the JVM's internal knowledge
 * (which code is where, frame sizes, inline tables, Method* -> names) comes
 * from the agent's code map (agent/codemap_format.h). So
 *
 *   asgst_decode(ctx, sample, trace, depth, options)
 *
 * is AsyncGetStackTrace(trace, depth, ucontext, options) with ctx standing
 * for "the JVM" and sample for "ucontext". The differences:
 *  - ASGST_Method is the Method* value of the sampled JVM (an address in
 *    that process, never dereferenced here); ASGST_GetMethodInfo_cm()
 *    answers from the code map the caller names. There is no jmethodID
 *    mapping.
 *  - env_id carries the walked thread's JavaThread* when the code map knows
 *    the thread (JNIEnv* sits at a fixed offset inside it), else 0.
 *  - On a failed walk num_frames is the (negative) error code as in the
 *    JEP, but the frames walked before the failure stay in frames[] and
 *    asgst_decode() returns how many there are, so nothing is lost; the
 *    context says where and why the walk stopped (asgst_ctx.stop_pc,
 *    asgst_ctx.reason).
 *  - ASGST_WALK_SAME_THREAD has no meaning out of process and is ignored.
 *  - Every frame is 16 bytes, as in the JEP.
 */
#ifndef ASGST_ASGST_H
#define ASGST_ASGST_H

#include <stdbool.h>
#include <stdint.h>

struct codemap;
struct cm_vm_consts;
struct sample;

/* implementation-defined method id: the sampled JVM's Method* */
typedef uint64_t ASGST_Method;

enum ASGST_Options {
	ASGST_INCLUDE_NON_JAVA_FRAMES = 1,
	ASGST_WALK_SAME_THREAD = 2,	/* accepted, ignored out of process */
};

/*
 * Trace kinds, powers of two so that a non-zero trace->kind on entry is a
 * mask of accepted kinds. Only ASGST_JAVA_TRACE holds Java frames.
 */
enum ASGST_TRACE_KIND {
	ASGST_JAVA_TRACE = 1,		/* a Java thread (JavaThread) */
	ASGST_JVM_TRACE = 2,		/* JVM-internal thread: GC, compiler,
					 * VM thread, ...: only C/C++ frames */
	ASGST_NATIVE_TRACE = 4,		/* not a JVM, or a JVM without a
					 * usable code map: C frames only */
};

/*
 * Errors. 0..-4 are the JEP's; below -5 are this implementation's, one per
 * way a walk can fail.
 */
enum ASGST_Error {
	ASGST_NO_JAVA_FRAME = 0,
	ASGST_THREAD_EXIT = -1,		/* the thread was exiting */
	ASGST_NO_THREAD = -2,		/* no thread to walk */
	ASGST_WRONG_STATE = -3,		/* state not in the accepted mask */
	ASGST_WRONG_KIND = -4,		/* kind not in the accepted mask */
	/* implementation codes */
	ASGST_NO_CODEMAP = -6,		/* no (valid) code map: agent not
					 * loaded, map unreadable or bad */
	ASGST_UNKNOWN_CODE = -7,	/* pc in the code cache, but the map
					 * has no code there at that time */
	ASGST_NOT_WALKABLE = -8,	/* a frame whose sender cannot be
					 * found (no frame size, prologue or
					 * epilogue shape not recognised) */
	ASGST_WINDOW_SHORT = -9,	/* a frame needs stack bytes beyond
					 * the captured window */
	ASGST_NO_WINDOW = -10,		/* the sample has no stack window */
	ASGST_BAD_SENDER = -11,		/* a sender pc is not code, or sp did
					 * not grow: stack inconsistent */
	ASGST_DEPTH = -12,		/* more frames than depth: cut */
	ASGST_UNKNOWN_METHOD = -13,	/* interpreted frame whose Method* the
					 * map does not know */
	ASGST_NATIVE_LOST = -14,	/* native frames without frame
					 * pointers hid the Java frames */
	ASGST_CONT_FROZEN = -15,	/* the rest of a virtual thread's
					 * frames is frozen in the heap */
};

/* the smallest and largest error codes; for tables */
#define ASGST_ERROR_MIN		ASGST_CONT_FROZEN

enum ASGST_FrameTypeId {
	ASGST_FRAME_JAVA = 1,		/* JIT compiled and interpreted */
	ASGST_FRAME_JAVA_INLINED = 2,	/* inlined JIT compiled */
	ASGST_FRAME_JAVA_NATIVE = 3,	/* barrier between Java and C/C++ */
	ASGST_FRAME_NON_JAVA = 4,	/* C/C++/stub frames */
};

#define ASGST_BCI_UNKNOWN	65535

typedef struct {
	uint8_t type;		/* frame type */
	int8_t comp_level;	/* 0 interpreted, 1-3 C1, 4 C2, -1 unknown */
	uint16_t bci;		/* 65535 if >= 65535 or not available */
	ASGST_Method method;
} ASGST_JavaFrame;		/* FRAME_JAVA, _JAVA_INLINED, _JAVA_NATIVE */

typedef struct {
	uint8_t type;		/* frame type */
	void *pc;		/* pc in this frame (an address of the
				 * sampled process); NULL when unknown, e.g.
				 * native frames skipped for lack of frame
				 * pointers */
} ASGST_NonJavaFrame;		/* FRAME_NON_JAVA */

typedef union {
	uint8_t type;		/* to tell JavaFrame and NonJavaFrame apart */
	ASGST_JavaFrame java_frame;
	ASGST_NonJavaFrame non_java_frame;
} ASGST_CallFrame;

/*
 * Per-frame detail JEP 435's 16-byte frames have no room for (an addition
 * of this implementation): how the stack crossed between Java and C at a
 * frame. Written to asgst_ctx.frame_flags[i] for frames[i] when the caller
 * sets that array. An FFM downcall has no Java method of its own: its
 * ASGST_FRAME_JAVA_NATIVE frame is the nep_invoker_blob stub, and its
 * method field holds the stub's pc instead of a Method*.
 */
enum ASGST_FrameFlags {
	ASGST_FF_DOWNCALL_JNI = 1 << 0,	/* JAVA_NATIVE: JNI native wrapper */
	ASGST_FF_DOWNCALL_FFM = 1 << 1,	/* JAVA_NATIVE: FFM downcall stub */
	ASGST_FF_DOWNCALL_CRIT = 1 << 2,/* with _FFM: Linker.Option.critical,
					 * the thread stays in Java state */
	ASGST_FF_UPCALL_JNI = 1 << 3,	/* NON_JAVA call stub: C called back
					 * into Java (JNI Call*Method, JavaCalls) */
	ASGST_FF_UPCALL_FFM = 1 << 4,	/* NON_JAVA: FFM upcall stub */
	ASGST_FF_FROZEN = 1 << 5,	/* a virtual thread's frame read from
					 * its heap stack chunk, not the stack */
};

/*
 * JVMTI thread-state bits (jvmti->GetThreadState) used for trace->state,
 * derived from JavaThread::_thread_state when the sample carries it.
 */
#define ASGST_STATE_ALIVE		0x0001
#define ASGST_STATE_RUNNABLE		0x0004
#define ASGST_STATE_BLOCKED		0x0400	/* ..._ON_MONITOR_ENTER */
#define ASGST_STATE_IN_NATIVE		0x400000

typedef struct {
	uint64_t env_id;	/* JavaThread* of the thread when known */
	int32_t num_frames;	/* frames, or < 0: an ASGST_Error */
	uint8_t kind;		/* in: 0 or mask of accepted kinds; out: kind */
	int32_t state;		/* in: 0 or mask of accepted states; out:
				 * JVMTI state bits, -1 for non-Java kinds */
	ASGST_CallFrame *frames;/* callee first */
	void *frame_info;	/* NULL */
} ASGST_CallTrace;

struct ASGST_MethodInfo {
	char *class_name;		/* dotted binary name */
	int32_t class_name_len;
	char *generic_class_name;	/* "" (not in the code map) */
	int32_t generic_class_name_len;
	char *method_name;
	int32_t method_name_len;
	char *signature;
	int32_t signature_len;
	char *generic_signature;	/* "" (not in the code map) */
	int32_t generic_signature_len;
	int32_t modifiers;
};
typedef struct ASGST_MethodInfo ASGST_MethodInfo;

/*
 * The JVM a trace is decoded against: its code map (may be NULL: then only
 * native traces come out) and, after a walk, where and why it stopped.
 */
struct cfi_row;

struct asgst_ctx {
	const struct codemap *cm;
	const struct cm_vm_consts *vm;	/* NULL until the map has a VM record */
	/* optional: pc is in an executable mapping of the process; lets the
	 * frame-pointer walk of native code stop at garbage return pcs */
	bool (*is_text)(void *arg, uint64_t pc);
	void *text_arg;
	/* optional: the call-frame information row at a user pc
	 * (symbolizer__cfi's contract), called with text_arg; native frames
	 * are then unwound by CFI, by frame pointers where it has none */
	int (*cfi)(void *arg, uint64_t pc, struct cfi_row *row);
	/* optional: depth entries, ASGST_FF_* of each frame written */
	uint16_t *frame_flags;
	/* optional: depth entries, each frame's code address: for a compiled
	 * Java frame (and its inlined ones) the pc of the PcDesc that names
	 * its bci in the nmethod, stable per call site and bci; else 0 */
	uint64_t *frame_pcs;
	/*
	 * optional (walk.c, walk_tail_*): the native frames below each
	 * thread's entry into Java as its last walk found them, kept while
	 * tail_stamp (the caller's: what the process's maps, CFI and code
	 * map answer) stays and the sample's time and theirs are at or after
	 * tail_horizon (the code map's newest record)
	 */
	struct walk_tails *tails;
	uint64_t tail_stamp[3];
	uint64_t tail_horizon;
	/* after asgst_decode(): */
	int32_t error;			/* 0 or ASGST_Error */
	uint64_t stop_pc;		/* pc where the walk stopped */
	const char *reason;		/* static string, NULL when ok */
	uint32_t steps;			/* frames stepped over */
	uint32_t window_used;		/* window bytes the walk needed */
	bool java_thread;		/* the map knows the thread */
	bool whole;			/* reached the thread's first frame */
};

void asgst_ctx__init(struct asgst_ctx *ctx, const struct codemap *cm);

/*
 * Walk one sample (see above). frames must have room for depth entries.
 * Returns the number of frames in trace->frames (>= 0), also after a failed
 * walk; trace->num_frames is that number or the error code. -EINVAL for
 * bad arguments (then trace is untouched).
 */
int asgst_decode(struct asgst_ctx *ctx, const struct sample *s,
		 ASGST_CallTrace *trace, int32_t depth, uint32_t options);

/* "ASGST_NOT_WALKABLE" etc.; "ASGST_UNKNOWN_ERROR" for other codes */
const char *asgst_error_name(int32_t code);

/*
 * Method info from the code map. JEP 435's function takes no context (it
 * lives in the JVM); out of process it needs the map. Strings point into
 * the map (valid while it is); missing fields are "" with length 0.
 * Returns 0, or -ENOENT (all fields "") when the map does not know method.
 */
int ASGST_GetMethodInfo_cm(const struct codemap *cm, ASGST_Method method,
			   ASGST_MethodInfo *info);

#endif /* ASGST_ASGST_H */
