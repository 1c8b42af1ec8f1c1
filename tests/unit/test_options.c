// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Option tables (user/cli/options.c) and the commands that parse by them
 * without touching a process: jvms, attach and codemap on bad arguments.
 */
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/commands.h"
#include "cli/options.h"

struct t_args {
	bool flag;
	const char *str;
};

static const struct cli_option t_opts[] = {
	CLI_ROW("ARG", "what it is\nand more"),
	CLI_FLAG("flag", 'f', "a flag", struct t_args, flag),
	CLI_STRING("str", 0, "S", "a string", struct t_args, str),
	CLI_HELP_OPT("this help"),
	CLI_TEXT("\nthe end"),
};

static struct cli_command t_cmd = {
	.name = "t",
	.usage = "Usage: t\n",
	.opts = t_opts,
	.nopts = CLI_NOPTS(t_opts),
};

/* what options__usage() prints for cmd; the caller frees it */
static char *usage_of(const struct cli_command *cmd)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	options__usage(cmd, f);
	fclose(f);
	return buf;
}

static int parse(struct cli_command *cmd, struct t_args *a, int argc,
		 char **argv)
{
	memset(a, 0, sizeof(*a));
	return options__parse(cmd, argc, argv, a);
}

static void test_parse(void **state)
{
	char *argv[] = { "t", "x", "-f", "--str", "v", "y", NULL };
	char *bad[] = { "t", "--nope", NULL };
	struct t_args a;

	(void)state;
	assert_int_equal(parse(&t_cmd, &a, 6, argv), CLI_OK);
	assert_true(a.flag);
	assert_string_equal(a.str, "v");
	/* permuted: the arguments left after the options */
	assert_int_equal(optind, 4);
	assert_string_equal(argv[optind], "x");
	assert_int_equal(parse(&t_cmd, &a, 2, bad), CLI_BAD);
}

static void test_in_order(void **state)
{
	char *argv[] = { "t", "-f", "x", "-f", NULL };
	struct cli_command cmd = t_cmd;
	struct t_args a;

	(void)state;
	cmd.in_order = true;
	assert_int_equal(parse(&cmd, &a, 4, argv), CLI_OK);
	assert_int_equal(optind, 2);
	assert_string_equal(argv[optind + 1], "-f");
}

static void test_usage_column(void **state)
{
	struct cli_command cmd = t_cmd;
	char *u;

	(void)state;
	u = usage_of(&cmd);
	assert_string_equal(u,
		"Usage: t\n"
		"  ARG                     what it is\n"
		"                          and more\n"
		"  -f, --flag              a flag\n"
		"      --str S             a string\n"
		"  -h, --help              this help\n"
		"\nthe end\n");
	free(u);
	cmd.help_col = 14;
	u = usage_of(&cmd);
	assert_string_equal(u,
		"Usage: t\n"
		"  ARG         what it is\n"
		"              and more\n"
		"  -f, --flag  a flag\n"
		"      --str S a string\n"
		"  -h, --help  this help\n"
		"\nthe end\n");
	free(u);
}

/* usage errors: exit 2 before anything is looked at */
static void test_commands_usage_errors(void **state)
{
	char *jvms_extra[] = { "jvms", "extra", NULL };
	char *jvms_bad[] = { "jvms", "--bogus", NULL };
	char *attach_none[] = { "attach", NULL };
	char *attach_three[] = { "attach", "1", "2", "3", NULL };
	char *attach_nopid[] = { "attach", "abc", NULL };
	char *attach_zero[] = { "attach", "-q", "0", NULL };
	char *codemap_none[] = { "codemap", "--json", NULL };
	char *codemap_two[] = { "codemap", "a", "b", NULL };
	char *codemap_pid[] = { "codemap", "99999999999", NULL };

	(void)state;
	assert_int_equal(cmd_jvms(2, jvms_extra), 2);
	assert_int_equal(cmd_jvms(2, jvms_bad), 2);
	assert_int_equal(cmd_attach(1, attach_none), 2);
	assert_int_equal(cmd_attach(4, attach_three), 2);
	assert_int_equal(cmd_attach(2, attach_nopid), 2);
	assert_int_equal(cmd_attach(3, attach_zero), 2);
	assert_int_equal(cmd_codemap(2, codemap_none), 2);
	assert_int_equal(cmd_codemap(3, codemap_two), 2);
	assert_int_equal(cmd_codemap(2, codemap_pid), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_usage_column),
		cmocka_unit_test(test_commands_usage_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
