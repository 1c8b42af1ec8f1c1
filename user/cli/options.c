// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Option tables to getopt_long and to --help (see options.h). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "symbols/debug_loader.h"
#include "profile/filter.h"
#include "util/err.h"

/* the column the help text starts in, unless the command says */
#define HELP_COL	26
/* getopt's value of a long-only option: its row, past any char */
#define LONG_VAL	256

static void *field_of(const struct cli_call *c)
{
	return (char *)c->args + c->opt->field;
}

int options__flag(const struct cli_call *c, const char *arg)
{
	(void)arg;
	*(bool *)field_of(c) = true;
	return CLI_OK;
}

int options__string(const struct cli_call *c, const char *arg)
{
	*(const char **)field_of(c) = arg;
	return CLI_OK;
}

int options__filter(const struct cli_call *c, const char *arg)
{
	char err[256];

	if (filter__option(field_of(c), c->opt->name, arg, err, sizeof(err)))
		return options__error(c->cmd, "%s", err);
	return CLI_OK;
}

int options__help(const struct cli_call *c, const char *arg)
{
	(void)c;
	(void)arg;
	return CLI_HELP;
}

int options__error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err__vsay(cmd->name, fmt, ap);
	va_end(ap);
	return CLI_BAD;
}

/* "  LEFT", the help from column col (or two spaces on), its lines under it */
static void print_row(FILE *f, int col, const char *left, const char *help)
{
	int n = fprintf(f, "  %s", left);
	const char *nl;

	fprintf(f, "%*s", n < col ? col - n : 2, "");
	while ((nl = strchr(help, '\n'))) {
		fprintf(f, "%.*s\n%*s", (int)(nl - help), help, col, "");
		help = nl + 1;
	}
	fprintf(f, "%s\n", help);
}

void options__usage(const struct cli_command *cmd, FILE *f)
{
	int col = cmd->help_col ? cmd->help_col : HELP_COL;

	fputs(cmd->usage, f);
	for (size_t i = 0; i < cmd->nopts; i++) {
		const struct cli_option *o = &cmd->opts[i];
		char left[64];

		if (!o->help)
			continue;
		if (!o->name && !o->arg) {
			fprintf(f, "%s\n", o->help);
			continue;
		}
		if (!o->name)
			snprintf(left, sizeof(left), "%s", o->arg);
		else
			snprintf(left, sizeof(left), "%c%c%c --%s%s%s",
				 o->key ? '-' : ' ', o->key ? o->key : ' ',
				 o->key ? ',' : ' ', o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		print_row(f, col, left, o->help);
	}
}

/* getopt_long's tables from the rows; 0 or -ENOMEM */
static int make_getopt(const struct cli_command *cmd, struct option **lo,
		       char **so)
{
	size_t nl = 0, ns = 0;

	*lo = calloc(cmd->nopts + 1, sizeof(**lo));
	*so = malloc(2 + 2 * cmd->nopts);
	if (!*lo || !*so)
		return -ENOMEM;
	if (cmd->in_order)
		(*so)[ns++] = '+';
	for (size_t i = 0; i < cmd->nopts; i++) {
		const struct cli_option *o = &cmd->opts[i];

		if (!o->name)
			continue;
		(*lo)[nl].name = o->name;
		(*lo)[nl].has_arg = o->arg ? required_argument : no_argument;
		(*lo)[nl].val = o->key ? o->key : LONG_VAL + (int)i;
		nl++;
		if (!o->key)
			continue;
		(*so)[ns++] = o->key;
		if (o->arg)
			(*so)[ns++] = ':';
	}
	(*so)[ns] = '\0';
	return 0;
}

/* the row getopt_long's c stands for */
static const struct cli_option *row_of(const struct cli_command *cmd, int c)
{
	if (c >= LONG_VAL && (size_t)(c - LONG_VAL) < cmd->nopts)
		return &cmd->opts[c - LONG_VAL];
	for (size_t i = 0; i < cmd->nopts; i++)
		if (cmd->opts[i].name && cmd->opts[i].key &&
		    cmd->opts[i].key == c)
			return &cmd->opts[i];
	return NULL;
}

static int bad_option(const struct cli_command *cmd, char **argv)
{
	const char *a = argv[optind - 1];

	/* a short one may stand in a group ("-qx"): name it alone */
	if (optopt > 0 && optopt < LONG_VAL && strncmp(a, "--", 2))
		fprintf(stderr, "asgst-bpf %s: unknown or incomplete option "
			"'-%c'; see 'asgst-bpf %s --help'\n", cmd->name,
			optopt, cmd->name);
	else
		fprintf(stderr, "asgst-bpf %s: unknown or incomplete option "
			"'%s'; see 'asgst-bpf %s --help'\n", cmd->name, a,
			cmd->name);
	return CLI_BAD;
}

int options__parse(const struct cli_command *cmd, int argc, char **argv,
		   void *args)
{
	struct cli_call call = { .cmd = cmd, .args = args };
	struct option *lo = NULL;
	char *so = NULL;
	int c, rc = CLI_OK;

	if (make_getopt(cmd, &lo, &so)) {
		rc = options__error(cmd, "out of memory");
		goto cleanup;
	}
	opterr = 0;
	/* 0, not 1: getopt starts afresh, '+' of this table included */
	optind = 0;
	while (rc == CLI_OK &&
	       (c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		call.opt = row_of(cmd, c);
		rc = call.opt ? call.opt->set(&call, optarg) :
				bad_option(cmd, argv);
	}
	if (rc == CLI_HELP)
		options__usage(cmd, stdout);
cleanup:
	free(lo);
	free(so);
	return rc;
}

const char *cli_debuginfod(const char *urls, bool no_debuginfod, bool quiet)
{
	char err[512];
	const char *u;

	if (no_debuginfod)
		return NULL;
	u = debug_loader__env(urls, 0, err, sizeof(err));
	if (!u && err[0] && !quiet)
		fprintf(stderr, "asgst-bpf: %s; debug files are not fetched\n",
			err);
	return u;
}
