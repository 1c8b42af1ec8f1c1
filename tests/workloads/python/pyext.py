"""C extensions under Python functions, for tests/integration/
test_python_stacks.sh: encode() runs json's C encoder, digest()
hashlib's sha256 (OpenSSL), for argv[1] seconds. Prints "ready PID".
"""
import hashlib
import json
import os
import sys
import time

DATA = {"k%d" % i: [i, str(i), {"x": i}] for i in range(20000)}
BLOB = b"x" * (1 << 22)


def encode():
    return json.dumps(DATA)


def digest():
    return hashlib.sha256(BLOB).hexdigest()


def main():
    until = time.monotonic() + float(sys.argv[1])
    print("ready", os.getpid(), flush=True)
    while time.monotonic() < until:
        encode()
        digest()


if __name__ == "__main__":
    main()
