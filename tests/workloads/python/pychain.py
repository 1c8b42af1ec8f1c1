"""A CPython program with a known call chain, for tests/integration/
test_python_*.sh. The busy thread runs, over and over:

  main -> Runner.run (a method) -> recurse(3) -> recurse(2) -> recurse(1)
  -> recurse(0) -> leaf work from a generator under a lambda:
     consume -> <lambda> -> gen (a generator) -> spin   (pure Python)
     consume -> <lambda> -> squeeze -> zlib.compress    (a C extension)

A second thread samples the busy thread's frames with
sys._current_frames() and counts the innermost Python function: the
program's own view of where it spends its time, written to argv[2] as
JSON at the end ({"looks": {function: n}, "cpu_ns": {function: ns}}).
argv[1]: seconds to run. It prints "ready PID" when it
has started.
"""
import json
import os
import random
import sys
import threading
import time
import zlib

BLOB = random.Random(7).randbytes(1 << 18)


def spin(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def gen(n):
    for i in range(n):
        yield spin(4000)


def squeeze():
    return len(zlib.compress(BLOB, 6))


def consume(k):
    if k % 2:
        f = lambda: sum(gen(40))
    else:
        f = lambda: squeeze()
    return f()


def recurse(d, k):
    if d == 0:
        return consume(k)
    return recurse(d - 1, k)


class Runner:
    def __init__(self, until):
        self.until = until

    def run(self):
        k = 0
        while time.monotonic() < self.until:
            recurse(3, k)
            k += 1


def observe(tid, until, counts, cpu):
    """Each look at the busy thread's innermost frame counts once, and
    weighs the CPU time that thread used since the last look: the
    looks land where the GIL can be had, and the busy thread holds it
    while it waits for a CPU in Python code but not in zlib, so on a
    loaded host plain looks lean towards squeeze. The profiler samples
    CPU time: the weighted view is the one to compare."""
    rnd = random.Random(11)  # not periodic: no aliasing with the loop
    clk = time.pthread_getcpuclockid(tid)
    last = time.clock_gettime_ns(clk)
    while time.monotonic() < until:
        f = sys._current_frames().get(tid)
        now = time.clock_gettime_ns(clk)
        if f is not None:
            name = f.f_code.co_qualname
            counts[name] = counts.get(name, 0) + 1
            cpu[name] = cpu.get(name, 0) + now - last
        last = now
        time.sleep(rnd.expovariate(1 / 0.0037))


def main():
    # GIL hand-offs every 0.1 ms: the observer takes its look within
    # that of waking, not at the next GIL release (zlib's), which would
    # skew its view towards squeeze
    sys.setswitchinterval(0.0001)
    secs = float(sys.argv[1])
    out = sys.argv[2] if len(sys.argv) > 2 else None
    until = time.monotonic() + secs
    counts, cpu = {}, {}
    me = threading.get_ident()
    obs = threading.Thread(target=observe, args=(me, until, counts, cpu))
    obs.start()
    print("ready", os.getpid(), flush=True)
    Runner(until).run()
    obs.join()
    if out:
        with open(out, "w") as fh:
            json.dump({"looks": counts, "cpu_ns": cpu}, fh)


if __name__ == "__main__":
    main()
