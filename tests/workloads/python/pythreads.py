"""Threads with Python chains of their own, for tests/integration/
test_python_stacks.sh: thread k runs work_k -> step_k -> burn, forever
until argv[1] seconds pass. Prints "thread NAME NATIVE_ID" for each,
then "ready PID".
"""
import os
import sys
import threading
import time


def burn(n):
    s = 0
    for i in range(n):
        s += i ^ (i >> 3)
    return s


def step_a(until):
    while time.monotonic() < until:
        burn(2000)


def step_b(until):
    while time.monotonic() < until:
        burn(3000)


def step_c(until):
    while time.monotonic() < until:
        burn(1000)


def work_a(until):
    step_a(until)


def work_b(until):
    step_b(until)


def work_c(until):
    step_c(until)


def main():
    until = time.monotonic() + float(sys.argv[1])
    ths = []
    for name, fn in (("a", work_a), ("b", work_b), ("c", work_c)):
        t = threading.Thread(target=fn, args=(until,), name=name)
        t.start()
        ths.append(t)
    time.sleep(0.2)
    for t in ths:
        print("thread", t.name, t.native_id, flush=True)
    print("ready", os.getpid(), flush=True)
    for t in ths:
        t.join()


if __name__ == "__main__":
    main()
