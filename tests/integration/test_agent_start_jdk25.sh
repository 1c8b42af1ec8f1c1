#!/bin/sh
# Same as test_agent_start.sh on JDK 25 (skipped visibly where absent).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_common.sh"
need_jdk25
agent_run_check "$JDK25" jdk25
echo "PASS"
