#!/bin/sh
# A servlet container nobody here wrote: Debian's Tomcat 10 (catalina.sh
# run, stock flags) serving a JSP page and a static file to a bounded
# loopback HTTP client loop; the agent comes by late attach. The request
# threads' stacks must decode whole (realapp_check.py: >= 99.8 %; one
# failure in about 17000 samples over fourteen runs) on JDK 17 and, when
# present, JDK 25. Then a few seconds of -e alloc,lock under the same load
# (realapp_events_check.py): the request threads allocate, >= 99 % of the
# alloc stacks whole, each event's class its leaf frame, sane estimates;
# the top allocation and lock sites printed. Last, with the load stopped,
# two recorders of -e cpu,offcpu at once, every switch's stack and the
# default off-CPU sampling, over REALAPP_OFFCPU_SECONDS of the same load
# (realapp_lib.sh, realapp_offcpu): the server threads' off-CPU stacks,
# grouped by thread pool and their innermost Java frames, have in the
# sampled recording the shares of the full one within 5 points
# (realapp_offcpu_check.py; a run where one recording was not the truth
# for the other, the check says why, is made once more).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/realapp_lib.sh"
need_jdk17
need_realapp_tools
TC=/usr/share/tomcat10
[ -x "$TC/bin/catalina.sh" ] && [ -f "$TC/lib/jasper.jar" ] ||
	skip_or_fail "Tomcat 10 not installed (tomcat10-common, libtomcat10-java: make deps)"
MIN=${REALAPP_MIN_TOMCAT:-99.8}

# a CATALINA_BASE: one HTTP connector, the default and JSP servlets, a page.
# selectorTimeout: an idle poller waits in its select() up to 30 s, not 1 s,
# so that with no load the server threads do not leave the CPU: the second
# off-CPU recorder then starts where the first one is, with no wait begun
# between the two attaches that only the first would count
tc_base() { # DIR PORT
	mkdir -p "$1/conf" "$1/logs" "$1/temp" "$1/work" "$1/webapps/ROOT"
	cat > "$1/conf/server.xml" <<EOF
<Server port="-1" shutdown="SHUTDOWN">
  <Service name="Catalina">
    <Connector port="$2" address="127.0.0.1" protocol="HTTP/1.1"
               maxThreads="8" selectorTimeout="30000" />
    <Engine name="Catalina" defaultHost="localhost">
      <Host name="localhost" appBase="webapps" autoDeploy="false"
            unpackWARs="false" />
    </Engine>
  </Service>
</Server>
EOF
	cat > "$1/conf/web.xml" <<'EOF'
<web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
  <servlet>
    <servlet-name>default</servlet-name>
    <servlet-class>org.apache.catalina.servlets.DefaultServlet</servlet-class>
    <load-on-startup>1</load-on-startup>
  </servlet>
  <servlet>
    <servlet-name>jsp</servlet-name>
    <servlet-class>org.apache.jasper.servlet.JspServlet</servlet-class>
    <load-on-startup>3</load-on-startup>
  </servlet>
  <servlet-mapping>
    <servlet-name>default</servlet-name>
    <url-pattern>/</url-pattern>
  </servlet-mapping>
  <servlet-mapping>
    <servlet-name>jsp</servlet-name>
    <url-pattern>*.jsp</url-pattern>
  </servlet-mapping>
</web-app>
EOF
	cat > "$1/webapps/ROOT/index.jsp" <<'EOF'
<%@ page import="java.util.*" %>
<html><body><%
	Map<String, Integer> words = new TreeMap<>();
	String q = request.getParameter("q");
	StringBuilder sb = new StringBuilder();
	for (int i = 0; i < 300; i++)
		sb.append(Integer.toHexString((i * 7919) ^ (q == null ? 1 : q.hashCode()))).append(' ');
	for (String w : sb.toString().split(" "))
		words.merge(w.substring(0, Math.min(2, w.length())), 1, Integer::sum);
	for (Map.Entry<String, Integer> e : words.entrySet()) {
%><p><%= e.getKey() %>: <%= e.getValue() %></p><%
	}
	session.setAttribute("n", words.size());
%></body></html>
EOF
	python3 -c 'print("static text line\n" * 2000)' > "$1/webapps/ROOT/static.txt"
}

# http_load PORT SECONDS: keep-alive clients on the loopback until the time
# is up (bounded: each request times out, the loop ends on its own)
http_load() {
	python3 - "$1" "$2" <<'EOF' &
import http.client, sys, threading, time
port, end = int(sys.argv[1]), time.time() + float(sys.argv[2])
def run(k):
    c, i = None, 0
    while time.time() < end:
        try:
            if c is None:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            path = "/index.jsp?q=%d" % i if i % 4 else "/static.txt"
            c.request("GET", path)
            c.getresponse().read()
        except Exception:
            c = None
            time.sleep(0.05)
        i += 1
ts = [threading.Thread(target=run, args=(k,)) for k in range(3)]
for t in ts: t.start()
for t in ts: t.join()
EOF
	LOADPID=$!
	bg "$LOADPID"
}

# the load of the off-CPU comparison: on until 3 s after the recorders
# stop
offcpu_load() {
	http_load "$port" $((REALAPP_OFFCPU_SECONDS + 3))
}

rc=0
jdks=$(test_jdks) || rc=1
for jdk in $jdks; do
	v=$(basename "$jdk")
	port=$(free_port)
	base="$TMP/tc-$v"
	tc_base "$base" "$port"
	JAVA_HOME=$jdk CATALINA_HOME=$TC CATALINA_BASE=$base \
		CATALINA_PID= JAVA_OPTS= CATALINA_OPTS= \
		sh "$TC/bin/catalina.sh" run > "$TMP/tc-$v.out" 2>&1 &
	tpid=$!
	bg "$tpid"
	wait_up "$tpid" 60 python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/index.jsp').read()" ||
		{ tail -n 30 "$TMP/tc-$v.out"; fail "$v: Tomcat did not serve"; }
	# catalina.sh run execs java: the JVM is the shell's pid
	jpid=$tpid
	http_load "$port" $((REALAPP_SECONDS + REALAPP_EVENT_SECONDS + 40))
	sleep 5			# warm up: JIT compiles the request path
	realapp_record "tomcat-$v" "$jpid"
	echo "INFO: $v: $(grep -c . "$TMP/tc-$v.out") lines of Tomcat log"
	$RCHECK "$TMP/tomcat-$v.json" --name "tomcat $v" \
		--thread '^http-nio-.*-exec-' --min "$MIN" || rc=1
	kill -0 "$LOADPID" 2>/dev/null || fail "$v: the HTTP load ended before -e alloc,lock"
	realapp_events "tomcat-$v" "$jpid" '^http-nio-.*-exec-' || rc=1
	kill "$LOADPID" 2>/dev/null
	wait "$LOADPID" 2>/dev/null
	realapp_offcpu "tomcat-$v" "$jpid" '^http-nio-' offcpu_load
	orc=$?
	wait "$LOADPID" 2>/dev/null
	case $orc in
	0) ;;
	3)	echo "INFO: $v: one off-CPU recording was not the truth for the other: once more"
		realapp_offcpu "tomcat-$v-2" "$jpid" '^http-nio-' offcpu_load ||
			{ rc=1; echo "FAIL: $v: off-CPU shares, twice"; }
		wait "$LOADPID" 2>/dev/null ;;
	*) rc=1 ;;
	esac
	stop_app "$jpid"
done
exit $rc
