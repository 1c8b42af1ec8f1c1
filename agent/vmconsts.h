/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The VM constants (struct cm_vm_consts) and the few in-process reads the
 * agent itself needs: code-heap blob lookup and nmethod/blob fields.
 */
#ifndef ASGST_AGENT_VMCONSTS_H
#define ASGST_AGENT_VMCONSTS_H

#include <stdint.h>
#include <stdbool.h>
#include "codemap_format.h"

extern struct cm_vm_consts vmc;

/* fill vmc from VMStructs; NULL on success, else a reason */
const char *vmc__init(void);
/* re-read the run-time addresses (CodeCache bounds, interpreter range) */
void vmc__refresh(void);
/* CodeBlob* holding pc, found through the code heap segment map; 0 if none */
uintptr_t vmc__find_blob(uintptr_t pc);
uintptr_t vmc__blob_code_begin(uintptr_t blob);
int vmc__blob_frame_size(uintptr_t blob);
int vmc__blob_frame_complete(uintptr_t blob);
/* CodeBlobKind where the JVM has it, -1 otherwise */
int vmc__blob_kind(uintptr_t blob);
bool vmc__blob_is_runtime_stub(uintptr_t blob);
uintptr_t vmc__nm_method(uintptr_t nm);
int vmc__nm_comp_level(uintptr_t nm);
int vmc__nm_entry_bci(uintptr_t nm);
uintptr_t vmc__nm_verified_entry(uintptr_t nm);
/* OS tid of a JavaThread*, 0 when unknown */
uint32_t vmc__jt_tid(uintptr_t jt);
/* set a bool JVM flag through JVMFlag::flags; 0 ok, -1 not found */
int vmc__set_bool_flag(const char *name, bool value);
/* copy a Method*'s signature symbol into buf (NUL-terminated); false if not */
bool vmc__method_signature(uintptr_t method, char *buf, size_t len);
bool vmc__method_name(uintptr_t method, char *buf, size_t len);
/* the same through vmc__safe_read: for a pointer not yet known to be one */
bool vmc__method_name_checked(uintptr_t method, char *buf, size_t len);
/* copy len bytes at addr through the kernel (an unmapped address is an
 * error, not a fault); 0 when copied */
int vmc__safe_read(uintptr_t addr, void *buf, size_t len);

/* fill the StackChunk offset and the heap-oop decoding of c (see the
 * comment in vmconsts.c); c's field offsets are the caller's */
bool vmc__cont_layout(struct cm_cont *c, const void *chunk_class_ref);

#endif
