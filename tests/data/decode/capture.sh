#!/bin/sh
# Re-creates the decoder's captured test data (README.md). Root, BPF, a
# built tree (make BUILD=... all workloads). Usage, from the top of the tree:
#   BUILD=build tests/data/decode/capture.sh [set...]
# sets: chain-17 chain-17-xint chain-17-c1 chain-25 jni-17 ffm-25
#       stubs-17 stubs-17-c1 stubs-25 (recorded by late attach, capture --kinds)
# (tomcat-17 and tomcat-25 come from a recording: README.md, capture --raw;
# epilogue-* from realapp recordings, capture --pick)
set -eu
BUILD=${BUILD:-build}
D=tests/data/decode
JDK17=${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}
JDK25=${JDK25:-$(ls -d /usr/lib/jvm/*25* 2>/dev/null | head -n 1)}
WL=$BUILD/workloads
AGENT=$(pwd)/$BUILD/libasgst-agent.so
T=$(mktemp -d /tmp/asgst-cap.XXXXXX)
trap 'rm -rf "$T"' EXIT
cc -std=gnu11 -O1 -g -D_GNU_SOURCE -I"$BUILD" -Ibpf -Iagent -Iuser -Itests \
	$D/capture.c "$BUILD/libasgst.a" -lbpf -lelf -lz -lstdc++ -lpthread \
	-o "$T/capture"

one() { # name jdk maxrec java-args...
	name=$1 jdk=$2 max=$3; shift 3
	"$jdk/bin/java" -agentpath:"$AGENT" "$@" > "$T/$name.out" 2>&1 &
	jp=$!
	until grep -q '^READY' "$T/$name.out"; do sleep 0.1; done
	sleep 2
	"$T/capture" "$jp" 20 "$max" 199 "$T/$name.rec" "$T/$name.map"
	case $name in jni-17) lib=libjnichain.so ;; ffm-25) lib=libffmchain.so ;;
	*) lib= ;; esac
	if [ -n "$lib" ]; then
		lib=$(readlink -f "$WL/$lib")
		base=$(awk -v l="$lib" '$6 == l && $3 == "00000000" {print $1; exit}' \
			/proc/$jp/maps | cut -d- -f1)
		{ echo "base $base"; nm -S --defined-only "$lib" |
			awk '$3 == "T" || $3 == "t" {print $1, $2, $4}'; } > $D/$name.syms
	fi
	kill "$jp"; wait "$jp" 2>/dev/null || true
	gzip -9 -n -c "$T/$name.rec" > $D/$name.rec.gz
	gzip -9 -n -c "$T/$name.map" > $D/$name.map.gz
	case $name in chain*)
		"$jdk/bin/javap" -c -p -cp "$WL/classes" Chain 'Chain$Worker' \
			> $D/$name.javap ;;
	esac
}

# StubKinds recorded by asgst-bpf (late attach) at 499 Hz for 15 s, then
# one whole sample of each kind of generated code and stub name
kinds() { # name jdk java-args...
	name=$1 jdk=$2; shift 2
	"$jdk/bin/java" -Xmx256m -XX:CompileCommand=quiet \
		-XX:CompileCommand=exclude,StubKinds::interp* \
		-XX:CompileCommand=dontinline,StubKinds::leaf* \
		-XX:CompileCommand=dontinline,StubKinds::tiny "$@" \
		-cp "$WL/classes" StubKinds 40 > "$T/$name.out" 2>&1 &
	jp=$!
	until grep -q '^READY' "$T/$name.out"; do sleep 0.1; done
	sleep 6
	"$BUILD/asgst-bpf" record -p "$jp" -F 499 -d 15 -q -o "$T/$name.asgst"
	kill "$jp"; wait "$jp" 2>/dev/null || true
	"$T/capture" --kinds "$T/$name.asgst" "$jp" 1 "$T/$name.rec" "$T/$name.map"
	gzip -9 -n -c "$T/$name.rec" > $D/$name.rec.gz
	gzip -9 -n -c "$T/$name.map" > $D/$name.map.gz
}

sets=${*:-chain-17 chain-17-xint chain-17-c1 chain-25 jni-17 ffm-25}
for s in $sets; do
	case $s in
	stubs-17) kinds $s "$JDK17" ;;
	stubs-17-c1) kinds $s "$JDK17" -XX:TieredStopAtLevel=1 ;;
	stubs-25) kinds $s "$JDK25" ;;
	chain-17) one $s "$JDK17" 700 -cp "$WL/classes" Chain 60 ;;
	chain-17-xint) one $s "$JDK17" 400 -Xint -cp "$WL/classes" Chain 60 ;;
	chain-17-c1) one $s "$JDK17" 400 -XX:TieredStopAtLevel=1 -cp "$WL/classes" Chain 60 ;;
	chain-25) one $s "$JDK25" 500 -cp "$WL/classes" Chain 60 ;;
	jni-17) one $s "$JDK17" 600 -Djava.library.path="$WL" -cp "$WL/classes" JniChain 60 ;;
	ffm-25)
		mkdir -p "$T/ffm-classes"
		"$JDK25/bin/javac" -d "$T/ffm-classes" tests/workloads/jdk25/FfmChain.java
		one $s "$JDK25" 600 --enable-native-access=ALL-UNNAMED \
			-cp "$T/ffm-classes" FfmChain "$(pwd)/$WL/libffmchain.so" 60 ;;
	esac
done
ls -l $D
