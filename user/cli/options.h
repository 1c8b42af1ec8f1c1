/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A command's options as one table: getopt_long's struct option[] and
 * optstring, the --help text and what each option does all come from the
 * same rows, so the help cannot drift from what is parsed.
 */
#ifndef ASGST_OPTIONS_H
#define ASGST_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct cli_command;
struct cli_option;

/* what parsing, and each option's set(), returns */
enum {
	CLI_OK = 0,
	CLI_HELP = 1,	/* --help: the usage went to stdout */
	CLI_BAD = 2,	/* a usage error, said on stderr: exit 2 */
};

/* what an option's set() is handed, besides its argument */
struct cli_call {
	const struct cli_command *cmd;
	const struct cli_option *opt;	/* the row */
	void *args;			/* what options__parse() fills */
};

/* apply the option (arg: its argument, NULL if it takes none) */
typedef int (*cli_set_fn)(const struct cli_call *c, const char *arg);

struct cli_option {
	const char *name;	/* long name; NULL: a line of help only */
	char key;		/* short name, 0: none */
	const char *arg;	/* its argument's name, NULL: takes none */
	const char *help;	/* lines after the first follow a '\n';
				 * NULL: not in --help */
	cli_set_fn set;		/* what to do with it */
	size_t field;		/* where in args set() puts it */
};

struct cli_command {
	const char *name;	/* messages start "asgst-bpf NAME: " */
	const char *usage;	/* --help's text before the table */
	const struct cli_option *opts;
	size_t nopts;
	bool in_order;		/* stop at the first non-option */
	int help_col;		/* the column help text starts in; 0: 26 */
};

/*
 * Parse argv by cmd's table into args. CLI_OK with optind at the first
 * argument left, CLI_HELP or CLI_BAD.
 */
int options__parse(const struct cli_command *cmd, int argc, char **argv,
		   void *args);
void options__usage(const struct cli_command *cmd, FILE *f);
/* "asgst-bpf NAME: " and the message on stderr; CLI_BAD */
int options__error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* set()s for the common cases, by what the row's field is in args */
/* bool: set to true */
int options__flag(const struct cli_call *c, const char *arg);
/* const char *: the argument */
int options__string(const struct cli_call *c, const char *arg);
/* struct filter: filter__option() by the long name */
int options__filter(const struct cli_call *c, const char *arg);
/* none: CLI_HELP */
int options__help(const struct cli_call *c, const char *arg);

/*
 * Rows. CLI_OPT's set() finds its own way into args; the others are told
 * the member they set (m, of args' type T).
 */
#define CLI_TEXT(text)	{ .help = (text) }
/* a help row that is no option (left: what stands for the option) */
#define CLI_ROW(left, text)	{ .arg = (left), .help = (text) }
#define CLI_OPT(name, key, arg, help, set) \
	{ (name), (key), (arg), (help), (set), 0 }
#define CLI_FIELD(name, key, arg, help, set, T, m) \
	{ (name), (key), (arg), (help), (set), offsetof(T, m) }
#define CLI_FLAG(name, key, help, T, m) \
	CLI_FIELD(name, key, NULL, help, options__flag, T, m)
#define CLI_STRING(name, key, arg, help, T, m) \
	CLI_FIELD(name, key, arg, help, options__string, T, m)
#define CLI_FILTER(name, arg, help, T, m) \
	CLI_FIELD(name, 0, arg, help, options__filter, T, m)
#define CLI_HELP_OPT(help) \
	CLI_OPT("help", 'h', NULL, help, options__help)

/* the stack filters record and report share (filter__option's names) */
#define CLI_FILTERS(T, m) \
	CLI_FILTER("tid", "TID[,TID...]", "only these threads", T, m), \
	CLI_FILTER("thread", "REGEX", "only threads whose name matches", \
		   T, m), \
	CLI_FILTER("include", "REGEX", \
		   "only stacks with a frame matching REGEX", T, m), \
	CLI_FILTER("exclude", "REGEX", \
		   "no stacks with a frame matching REGEX", T, m), \
	CLI_FILTER("kind", "KIND[,KIND]", \
		   "java, jvm (JVM-internal threads) or native", T, m), \
	CLI_FILTER("state", "STATE[,...]", \
		   "Java thread state at the sample: in_java,\n" \
		   "in_native, in_vm, blocked, unknown", T, m), \
	CLI_FILTER("vthreads", "VIEW", \
		   "merged (default: a virtual thread's frames, then\n" \
		   "its carrier's), virtual or carrier", T, m), \
	CLI_FILTER("java-only", NULL, \
		   "keep only the Java frames of each stack", T, m), \
	CLI_FILTER("reverse", NULL, \
		   "frames root first (an inverted flame graph)", T, m)

#define CLI_NOPTS(tab)	(sizeof(tab) / sizeof((tab)[0]))

/*
 * --inline's debuginfod servers: urls (--debuginfod), else
 * DEBUGINFOD_URLS; none with no_debuginfod. Sets libdebuginfod's
 * environment (call it before any thread starts); a cache that cannot be
 * used is said in one line, and nothing is fetched. NULL: none.
 */
const char *cli_debuginfod(const char *urls, bool no_debuginfod, bool quiet);

#endif /* ASGST_OPTIONS_H */
