/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * In-process VMStructs lookup: the JVM's own gHotSpotVM* tables, read by
 * plain memory reads. Every offset the agent uses comes from here, looked
 * up by name, so a field that a JDK lacks is simply absent (-1).
 */
#ifndef ASGST_AGENT_VMSTRUCTS_H
#define ASGST_AGENT_VMSTRUCTS_H

#include <stdint.h>
#include <stdbool.h>

/* 0 on success; -1 when libjvm's tables are not found */
int vms__init(void);
/* byte offset of a non-static field, -1 when absent */
int vms__offset(const char *type, const char *field);
/* address of a static field, 0 when absent */
uintptr_t vms__static_addr(const char *type, const char *field);
/* the field's declared type string ("int", "int16_t", ...), NULL if absent */
const char *vms__field_type(const char *type, const char *field);
/* sizeof(type) from gHotSpotVMTypes, -1 when absent */
int vms__type_size(const char *type);
/* integer constant; false when absent */
bool vms__int_const(const char *name, int32_t *out);
/* size in bytes of a field's declared type (types table), 0 if unknown */
int vms__field_size(const char *type, const char *field);

#endif /* ASGST_AGENT_VMSTRUCTS_H */
