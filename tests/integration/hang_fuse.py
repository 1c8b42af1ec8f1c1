#!/usr/bin/python3
# A read-only FUSE file system showing the folder $HF_SRC, answering every
# request normally until the file $HF_TRIGGER exists, then never answering
# any (each request sleeps forever): a FUSE server that hangs on purpose.
# Run: hang_fuse.py MOUNTPOINT -f -o ro,attr_timeout=0,entry_timeout=0[,...]
import errno
import os
import sys
import time

import fuse

fuse.fuse_python_api = (0, 2)
SRC = os.environ["HF_SRC"]
TRIGGER = os.environ["HF_TRIGGER"]


def gate():
    if os.path.exists(TRIGGER):
        while True:
            time.sleep(3600)


def real(path):
    return SRC + path


class HangFS(fuse.Fuse):
    def getattr(self, path):
        gate()
        try:
            st = os.lstat(real(path))
        except OSError as e:
            return -e.errno
        r = fuse.Stat()
        for k in ("st_mode", "st_ino", "st_dev", "st_nlink", "st_uid",
                  "st_gid", "st_size", "st_atime", "st_mtime", "st_ctime"):
            setattr(r, k, getattr(st, k))
        return r

    def readdir(self, path, offset):
        gate()
        for n in [".", ".."] + os.listdir(real(path)):
            yield fuse.Direntry(n)

    def readlink(self, path):
        gate()
        try:
            return os.readlink(real(path))
        except OSError as e:
            return -e.errno

    def open(self, path, flags):
        gate()
        if flags & (os.O_WRONLY | os.O_RDWR):
            return -errno.EROFS
        if not os.path.isfile(real(path)):
            return -errno.ENOENT
        return 0

    def read(self, path, size, offset):
        gate()
        with open(real(path), "rb") as f:
            f.seek(offset)
            return f.read(size)

    def statfs(self):
        gate()
        return os.statvfs(SRC)


if __name__ == "__main__":
    fs = HangFS(usage="hang_fuse.py MOUNTPOINT [options]")
    fs.parse(errex=1)
    fs.main()
    sys.exit(0)
