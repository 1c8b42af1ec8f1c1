"""Imports the same standard modules again and again for argv[1] seconds
(each round drops them from sys.modules first), for tests/integration/
test_python_stacks.sh: a module's code object is freed once its body has
run, so the memory of one that a sample saw running is soon another code
object's. Prints "ready PID" at the end.
"""
import importlib
import os
import sys
import time

MODS = ["json", "email.mime.text", "http.server", "xml.dom.minidom",
        "asyncio", "unittest", "decimal", "queue", "base64"]
ROOTS = {m.split(".")[0] for m in MODS}


def main():
    end = time.monotonic() + float(sys.argv[1])
    while time.monotonic() < end:
        for m in list(sys.modules):
            if m.split(".")[0] in ROOTS:
                del sys.modules[m]
        for m in MODS:
            importlib.import_module(m)
    print("ready", os.getpid(), flush=True)


if __name__ == "__main__":
    main()
