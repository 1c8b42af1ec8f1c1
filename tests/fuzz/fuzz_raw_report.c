// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: asgst-bpf report over a raw recording, as a user runs it:
 * every pass (code maps rebuilt, processes, samples decoded offline) and a
 * writer. A bad file must end in a one-line error, never a crash.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/commands.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz_raw_report.XXXXXX";
	char *argv[] = { "report", "-q", "-f", "collapsed", "-o", "/dev/null",
			 "-i", path, NULL };
	int fd = mkstemp(path);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		close(fd);
		cmd_report(8, argv);
	} else {
		close(fd);
	}
	unlink(path);
	return 0;
}
