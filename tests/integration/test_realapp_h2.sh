#!/bin/sh
# An SQL engine nobody here wrote: Debian's H2 (org.h2.tools.RunScript,
# stock flags) running an SQL script on an in-memory database: inserts,
# joins, grouping, sorting, recursive queries; the agent by late attach.
# The main thread's stacks must decode whole (realapp_check.py: >= 99.8 %)
# on JDK 17 and, when present, JDK 25. Then a few seconds of -e alloc,lock
# (realapp_events_check.py): the main thread allocates, >= 99 % of the
# alloc stacks whole, each event's class its leaf frame, sane estimates;
# the top allocation and lock sites printed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/realapp_lib.sh"
need_jdk17
need_realapp_tools
H2JAR=/usr/share/java/h2.jar
[ -f "$H2JAR" ] || skip_or_fail "H2 not installed (libh2-java: make deps)"
MIN=${REALAPP_MIN_H2:-99.8}

# one round of queries; the script repeats it more often than a recording
# lasts (the test ends the JVM)
{
	echo "CREATE TABLE t(id INT PRIMARY KEY, g INT, s VARCHAR(64), d DOUBLE);"
	echo "CREATE TABLE u(id INT PRIMARY KEY, t_id INT, v VARCHAR(32));"
	echo "CREATE INDEX u_t ON u(t_id);"
	echo "SELECT 'READY';"
	i=0
	while [ "$i" -lt 600 ]; do
		cat <<'EOF2'
DELETE FROM u; DELETE FROM t;
INSERT INTO t SELECT x, MOD(x, 97), 'row ' || x || ' ' || RAND(), x * 1.5 FROM SYSTEM_RANGE(1, 20000);
INSERT INTO u SELECT x, MOD(x * 7, 20000) + 1, 'v' || MOD(x, 31) FROM SYSTEM_RANGE(1, 20000);
SELECT g, COUNT(*), SUM(d), MAX(s) FROM t GROUP BY g ORDER BY 3 DESC LIMIT 5;
SELECT u.v, COUNT(*), AVG(t.d) FROM t JOIN u ON u.t_id = t.id WHERE t.g < 50 GROUP BY u.v ORDER BY 2 DESC LIMIT 5;
SELECT COUNT(*) FROM t WHERE s LIKE '%7 0.1%' OR UPPER(s) LIKE 'ROW 1%';
WITH RECURSIVE r(n, f) AS (SELECT 1, CAST(1 AS BIGINT) UNION ALL SELECT n + 1, MOD(f * (n + 1), 1000003) FROM r WHERE n < 2000) SELECT MAX(f) FROM r;
UPDATE t SET d = d + 1 WHERE MOD(id, 3) = 0;
EOF2
		i=$((i + 1))
	done
} > "$TMP/load.sql"

rc=0
jdks=$(test_jdks) || rc=1
for jdk in $jdks; do
	v=$(basename "$jdk")
	"$jdk/bin/java" -cp "$H2JAR" org.h2.tools.RunScript \
		-url "jdbc:h2:mem:load" -script "$TMP/load.sql" -showResults \
		> "$TMP/h2-$v.out" 2>&1 &
	jpid=$!
	bg "$jpid"
	wait_up "$jpid" 60 grep -q "READY" "$TMP/h2-$v.out" ||
		{ tail -n 30 "$TMP/h2-$v.out"; fail "$v: H2 did not start"; }
	sleep 5			# warm up: JIT compiles the engine's hot paths
	kill -0 "$jpid" 2>/dev/null || fail "$v: H2 ended before the recording"
	realapp_record "h2-$v" "$jpid"
	kill -0 "$jpid" 2>/dev/null ||
		echo "INFO: $v: the script ended during the recording"
	$RCHECK "$TMP/h2-$v.json" --name "h2 $v" --thread '^main$' \
		--min "$MIN" || rc=1
	kill -0 "$jpid" 2>/dev/null || fail "$v: H2 ended before -e alloc,lock"
	realapp_events "h2-$v" "$jpid" '^main$' || rc=1
	stop_app "$jpid"
done
exit $rc
