#!/bin/sh
# A JVM language runtime nobody here wrote: Debian's JRuby running a Ruby
# script (its interpreter and its invokedynamic call sites: method handles,
# deep stacks), stock flags, the agent by late attach. The main thread's
# stacks must decode whole (realapp_check.py: >= 99.8 %; one failure in
# about 20000 samples over fourteen runs) on JDK 17 and, when present,
# JDK 25.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/realapp_lib.sh"
need_jdk17
need_realapp_tools
[ -x /usr/bin/jruby ] && [ -f /usr/share/java/jruby-core.jar ] ||
	skip_or_fail "JRuby not installed (jruby: make deps)"
MIN=${REALAPP_MIN_JRUBY:-99.8}

cat > "$TMP/load.rb" <<'EOF2'
# word counts, sorting, string building and recursion, forever
class Node
  attr_reader :l, :r, :v
  def initialize(v, l, r) @v = v; @l = l; @r = r end
  def sum() v + (l ? l.sum : 0) + (r ? r.sum : 0) end
end
def tree(d) d == 0 ? nil : Node.new(d, tree(d - 1), tree(d - 1)) end
def fib(n) n < 2 ? n : fib(n - 1) + fib(n - 2) end
text = (1..400).map { |i| "w#{(i * 7919) % 97} x#{i % 13}" }.join(" ")
$stdout.puts "READY"
$stdout.flush
loop do
  counts = Hash.new(0)
  text.split.each { |w| counts[w] += 1 }
  top = counts.sort_by { |k, v| [-v, k] }.first(10).map { |k, v| "#{k}=#{v}" }
  s = tree(10).sum + fib(18)
  out = top.join(",") + s.to_s
  out.gsub(/x(\d)/) { "y#{$1}" }.reverse
end
EOF2

rc=0
jdks=$(test_jdks) || rc=1
for jdk in $jdks; do
	v=$(basename "$jdk")
	JAVA_HOME=$jdk JAVACMD=$jdk/bin/java JRUBY_OPTS= JAVA_OPTS= \
		/usr/bin/jruby "$TMP/load.rb" > "$TMP/jruby-$v.out" 2>&1 &
	jpid=$!
	bg "$jpid"
	wait_up "$jpid" 60 grep -q '^READY' "$TMP/jruby-$v.out" ||
		{ tail -n 30 "$TMP/jruby-$v.out"; fail "$v: JRuby did not start"; }
	sleep 5			# warm up: JIT compiles the script's hot paths
	realapp_record "jruby-$v" "$jpid"
	$RCHECK "$TMP/jruby-$v.json" --name "jruby $v" --thread '^main$' \
		--min "$MIN" || rc=1
	stop_app "$jpid"
done
exit $rc
