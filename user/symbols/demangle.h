/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * C++ symbol demangling for frames. The result is the qualified function
 * name without parameter list and without return type (namespaces, classes
 * and template arguments kept): "JavaCalls::call_helper", not
 * "JavaCalls::call_helper(JavaValue*, methodHandle const&, ...)". Flame
 * graphs then merge overloads, and libjvm frames read as the VM's names.
 */
#ifndef ASGST_DEMANGLE_H
#define ASGST_DEMANGLE_H

#include <stddef.h>

/*
 * Demangle name into buf (size len, NUL-terminated, truncated if needed).
 * Returns 1 when name was a C++ name and buf holds the short form, 0 when
 * name is not mangled (buf holds a copy), -1 on bad arguments.
 */
int demangle__short(const char *name, char *buf, size_t len);
/* the full __cxa_demangle output, malloc'ed; NULL when not a C++ name */
char *demangle__full(const char *name);
/* cut a demangled C++ name down to the short form described above, in place */
void demangle__strip(char *s);

#endif /* ASGST_DEMANGLE_H */
