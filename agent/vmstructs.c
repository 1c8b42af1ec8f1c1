// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * VMStructs tables. libjvm exports the table pointers and, separately, the
 * entry stride and member offsets, so nothing about the entry layout is
 * assumed here either.
 */
#include <dlfcn.h>
#include <string.h>
#include "vmstructs.h"

struct vms_layout {
	const char *base;
	uint64_t stride;
};

static struct {
	bool ok;
	struct vms_layout st, ty, ic;
	uint64_t st_type, st_field, st_tstr, st_static, st_off, st_addr;
	uint64_t ty_name, ty_size;
	uint64_t ic_name, ic_value;
} g;

static void *sym(void *h, const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	if (!p && h)
		p = dlsym(h, name);
	return p;
}

static bool sym_u64(void *h, const char *name, uint64_t *out)
{
	uint64_t *p = sym(h, name);

	if (!p)
		return false;
	*out = *p;
	return true;
}

static bool sym_ptr(void *h, const char *name, const char **out)
{
	const char **p = sym(h, name);

	if (!p || !*p)
		return false;
	*out = *p;
	return true;
}

int vms__init(void)
{
	void *h = dlopen("libjvm.so", RTLD_NOW | RTLD_NOLOAD);
	bool ok = true;

	ok &= sym_ptr(h, "gHotSpotVMStructs", &g.st.base);
	ok &= sym_u64(h, "gHotSpotVMStructEntryArrayStride", &g.st.stride);
	ok &= sym_u64(h, "gHotSpotVMStructEntryTypeNameOffset", &g.st_type);
	ok &= sym_u64(h, "gHotSpotVMStructEntryFieldNameOffset", &g.st_field);
	ok &= sym_u64(h, "gHotSpotVMStructEntryTypeStringOffset", &g.st_tstr);
	ok &= sym_u64(h, "gHotSpotVMStructEntryIsStaticOffset", &g.st_static);
	ok &= sym_u64(h, "gHotSpotVMStructEntryOffsetOffset", &g.st_off);
	ok &= sym_u64(h, "gHotSpotVMStructEntryAddressOffset", &g.st_addr);
	ok &= sym_ptr(h, "gHotSpotVMTypes", &g.ty.base);
	ok &= sym_u64(h, "gHotSpotVMTypeEntryArrayStride", &g.ty.stride);
	ok &= sym_u64(h, "gHotSpotVMTypeEntryTypeNameOffset", &g.ty_name);
	ok &= sym_u64(h, "gHotSpotVMTypeEntrySizeOffset", &g.ty_size);
	ok &= sym_ptr(h, "gHotSpotVMIntConstants", &g.ic.base);
	ok &= sym_u64(h, "gHotSpotVMIntConstantEntryArrayStride", &g.ic.stride);
	ok &= sym_u64(h, "gHotSpotVMIntConstantEntryNameOffset", &g.ic_name);
	ok &= sym_u64(h, "gHotSpotVMIntConstantEntryValueOffset", &g.ic_value);
	if (h)
		dlclose(h);
	/* sanity: strides must hold the members we read */
	if (ok && (g.st.stride < 16 || g.st.stride > 4096 || g.ty.stride < 16 ||
		   g.ty.stride > 4096 || g.ic.stride < 8 || g.ic.stride > 4096))
		ok = false;
	g.ok = ok;
	return ok ? 0 : -1;
}

static const char *str_at(const char *e, uint64_t off)
{
	return *(const char *const *)(e + off);
}

/* the struct entry for type::field, NULL when absent */
static const char *struct_entry(const char *type, const char *field)
{
	const char *e;

	if (!g.ok)
		return NULL;
	for (e = g.st.base; str_at(e, g.st_type); e += g.st.stride) {
		const char *f = str_at(e, g.st_field);

		if (f && !strcmp(f, field) && !strcmp(str_at(e, g.st_type), type))
			return e;
	}
	return NULL;
}

int vms__offset(const char *type, const char *field)
{
	const char *e = struct_entry(type, field);

	if (!e || *(const int32_t *)(e + g.st_static))
		return -1;
	return (int)*(const uint64_t *)(e + g.st_off);
}

uintptr_t vms__static_addr(const char *type, const char *field)
{
	const char *e = struct_entry(type, field);

	if (!e || !*(const int32_t *)(e + g.st_static))
		return 0;
	return (uintptr_t)*(void *const *)(e + g.st_addr);
}

const char *vms__field_type(const char *type, const char *field)
{
	const char *e = struct_entry(type, field);

	return e ? str_at(e, g.st_tstr) : NULL;
}

int vms__type_size(const char *type)
{
	const char *e;

	if (!g.ok || !type)
		return -1;
	for (e = g.ty.base; str_at(e, g.ty_name); e += g.ty.stride)
		if (!strcmp(str_at(e, g.ty_name), type))
			return (int)*(const uint64_t *)(e + g.ty_size);
	return -1;
}

int vms__field_size(const char *type, const char *field)
{
	int n = vms__type_size(vms__field_type(type, field));

	return n > 0 ? n : 0;
}

bool vms__int_const(const char *name, int32_t *out)
{
	const char *e;

	if (!g.ok)
		return false;
	for (e = g.ic.base; str_at(e, g.ic_name); e += g.ic.stride)
		if (!strcmp(str_at(e, g.ic_name), name)) {
			*out = *(const int32_t *)(e + g.ic_value);
			return true;
		}
	return false;
}
