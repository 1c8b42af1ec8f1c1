// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * C++ demangling through libstdc++'s __cxa_demangle (the Makefile links
 * -lstdc++), then a small scanner that removes the parameter list and the
 * return type. We keep "Foo<int>::bar" and drop "(int) const": async-profiler
 * prints the full signature, but libjvm frames read better as
 * "JavaCalls::call_helper", and overloads merging in a flame graph is what
 * a profile reader wants.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"

/* libstdc++'s C ABI entry point (cxxabi.h is C++ only) */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

char *demangle__full(const char *name)
{
	int status = 0;
	char *s;

	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	s = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(s);
		return NULL;
	}
	return s;
}

static bool starts_with(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/*
 * Length of an operator name starting at s ("operator()", "operator<<=",
 * "operator new[]", "operator unsigned long"), so its brackets are not taken
 * as nesting; 0 when s is not "operator" followed by an operator.
 */
static size_t operator_len(const char *s)
{
	static const char *const ops[] = {
		"()", "[]", "<<=", ">>=", "<=>", "->*", "->", "<<", ">>",
		"<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=",
		"*=", "/=", "%=", "&=", "|=", "^=", "<", ">", "+", "-", "*",
		"/", "%", "&", "|", "^", "~", "!", "=", ",",
		" new[]", " delete[]", " new", " delete", " co_await",
	};
	const char *p;
	size_t i;

	if (!starts_with(s, "operator"))
		return 0;
	p = s + 8;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (starts_with(p, ops[i]))
			return 8 + strlen(ops[i]);
	if (starts_with(p, "\"\" "))	/* user-defined literal */
		return 11;
	if (*p == ' ') {
		/* conversion operator: the type runs to the parameter list */
		const char *q = p;
		int depth = 0;

		while (*q && !(depth == 0 && *q == '(')) {
			if (*q == '<')
				depth++;
			else if (*q == '>' && depth > 0)
				depth--;
			q++;
		}
		return q - s;
	}
	return 0;
}

void demangle__strip(char *s)
{
	size_t n = strlen(s), i = 0;
	long last_open = -1;	/* the last top-level '(' : parameter list */
	long name_start = 0;	/* after the last top-level ' ': return type */
	int depth = 0;		/* <>, (), [], {} together */

	while (i < n) {
		size_t op;

		if (depth == 0 && starts_with(s + i, "(anonymous namespace)")) {
			i += 21;
			continue;
		}
		if ((i == 0 || s[i - 1] == ':' || s[i - 1] == ' ' ||
		     s[i - 1] == '~') && (op = operator_len(s + i)) > 0) {
			i += op;
			continue;
		}
		switch (s[i]) {
		case '<': case '[': case '{':
			depth++;
			break;
		case '>': case ']': case '}':
			if (depth > 0)
				depth--;
			break;
		case '(':
			if (depth == 0)
				last_open = i;
			depth++;
			break;
		case ')':
			if (depth > 0)
				depth--;
			break;
		case ' ':
			/* "[clone .cold]" and cv-qualifiers follow the params */
			/* "operator< <int>": a template after an operator */
			if (depth == 0 && last_open < 0 && s[i + 1] != '<')
				name_start = i + 1;
			break;
		}
		i++;
	}
	if (last_open > 0)
		s[last_open] = '\0';
	if (name_start > 0 && name_start < (long)strlen(s))
		memmove(s, s + name_start, strlen(s + name_start) + 1);
}

int demangle__short(const char *name, char *buf, size_t len)
{
	static const char plt[] = "@plt";
	size_t n, stem = 0;
	char *full, *tmp;

	if (!name || !buf || len == 0)
		return -1;
	/* a PLT stub's name (elf_symbols.c): the function's, then "@plt" */
	n = strlen(name);
	if (n > sizeof(plt) - 1 && !strcmp(name + n - (sizeof(plt) - 1), plt))
		stem = n - (sizeof(plt) - 1);
	tmp = stem ? strndup(name, stem) : NULL;
	full = demangle__full(tmp ? tmp : name);
	free(tmp);
	if (!full) {
		strncpy(buf, name, len - 1);
		buf[len - 1] = '\0';
		return 0;
	}
	demangle__strip(full);
	snprintf(buf, len, "%s%s", full, stem ? plt : "");
	free(full);
	return 1;
}
