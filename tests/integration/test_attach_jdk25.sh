#!/bin/sh
# Late attach to a running JDK 25 JVM ("return code: N" replies).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"
need_root
need_jdk25
need_built
basic_attach "$JDK25/bin/java"
echo "PASS"
