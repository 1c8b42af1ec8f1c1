#!/bin/sh
# Every kind of code the JVM generates, live: StubKinds
# (tests/workloads/StubKinds.java) keeps one thread in each (arraycopy and
# other StubRoutines, runtime stubs and the VM behind them, GC barriers,
# i2c/c2i adapters, method handle intrinsics, vtable/itable stubs,
# deoptimization, small compiled frames in their prologue or epilogue),
# recorded by late attach on JDK 17 (C1 and C2), JDK 17 with C1 only
# (Runtime1 stubs), JDK 25, JDK 25 with ZGC and with
# -XX:+PreserveFramePointer (the barrier and the adapters threads alone
# whole in >= 99.5 % too). The sk-* threads' stacks must
# decode whole (realapp_check.py) and hold their thread's StubKinds method
# (sk-monitor1 runs StubKinds.monitor): a walk that skipped frames to
# reach the thread's root counts as not whole. Bar: 99.8 %.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/realapp_lib.sh"
need_jdk17
need_realapp_tools
[ -f "$WL/classes/StubKinds.class" ] || fail "StubKinds not built (make workloads)"
MIN=${STUBKINDS_MIN:-99.8}
SECS=${STUBKINDS_SECONDS:-15}

run_one() { # name jdk java-flags...
	sk_name=$1 sk_jdk=$2; shift 2
	"$sk_jdk/bin/java" -Xmx256m -XX:CompileCommand=quiet \
		-XX:CompileCommand=exclude,StubKinds::interp* \
		-XX:CompileCommand=dontinline,StubKinds::leaf* \
		-XX:CompileCommand=dontinline,StubKinds::tiny "$@" \
		-cp "$WL/classes" StubKinds $((SECS + 30)) > "$TMP/$sk_name.out" 2>&1 &
	sk_pid=$!
	bg "$sk_pid"
	wait_up "$sk_pid" 60 grep -q '^READY' "$TMP/$sk_name.out" ||
		{ tail -n 20 "$TMP/$sk_name.out"; fail "$sk_name: StubKinds did not start"; }
	sleep 5			# warm up: compiled code, stubs, adapters
	REALAPP_SECONDS=$SECS realapp_record "$sk_name" "$sk_pid"
	$RCHECK "$TMP/$sk_name.json" --name "$sk_name" --thread '^sk-' \
		--thread-method 'sk-=StubKinds' --min "$MIN" || rc=1
	# the thread the run is about, alone: its stacks are a small part
	# of all the threads'
	[ -z "${SK_THREAD:-}" ] ||
		$RCHECK "$TMP/$sk_name.json" --name "$sk_name $SK_THREAD" \
			--thread "^sk-$SK_THREAD\$" --thread-method 'sk-=StubKinds' \
			--min 99.5 || rc=1
	stop_app "$sk_pid"
}

rc=0
run_one stubkinds-17 "$JDK17"
run_one stubkinds-17-c1 "$JDK17" -XX:TieredStopAtLevel=1
if [ -n "$JDK25" ] && [ -x "$JDK25/bin/java" ]; then
	run_one stubkinds-25 "$JDK25"
	# ZGC: C2's out-of-line barrier stubs call the runtime with the live
	# registers saved below the compiled frame; the barrier thread's
	# stacks go through them (about 3 % of its samples)
	SK_THREAD=barriers run_one stubkinds-25-zgc "$JDK25" -XX:+UseZGC
	# compiled code keeping rbp as a frame pointer: a compiled callee's
	# prologue sets it before frame_complete, and an interpreted callee
	# entered from compiled code finds the caller's rbp pointing at a
	# frame (the adapters thread: about 2 % of its samples)
	SK_THREAD=adapters run_one stubkinds-25-pfp "$JDK25" \
		-XX:+PreserveFramePointer
elif [ "${CI:-}" = "true" ]; then
	fail "JDK 25 not present under /usr/lib/jvm (CI=true: required)"
fi
exit $rc
