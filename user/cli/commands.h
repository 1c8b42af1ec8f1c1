/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The asgst-bpf subcommands; each returns the process exit code. */
#ifndef ASGST_COMMANDS_H
#define ASGST_COMMANDS_H

int cmd_record(int argc, char **argv);	/* cmd_record.c */
int cmd_report(int argc, char **argv);	/* cmd_report.c */
int cmd_codemap(int argc, char **argv);	/* cmd_codemap.c */
int cmd_attach(int argc, char **argv);	/* cmd_attach.c */
int cmd_jvms(int argc, char **argv);	/* cmd_jvms.c */

#endif /* ASGST_COMMANDS_H */
