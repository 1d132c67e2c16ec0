#!/usr/bin/env python3
"""Writes archives scripts/unpack_submission.py must refuse into folder DIR, one per way an
entry could reach outside where it is unpacked or stand for something that is not a file:

    unsafe_archives.py DIR
"""
import io
import os
import stat
import sys
import tarfile
import zipfile


def tar_with(path, kind, name="lessons/x.c", target="/etc/passwd"):
    with tarfile.open(path, "w:gz") as t:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.linkname = target
        t.addfile(info, io.BytesIO(b""))


def main():
    out = sys.argv[1]
    os.makedirs(out)
    tar_with(f"{out}/symlink.tar.gz", tarfile.SYMTYPE)
    tar_with(f"{out}/hardlink.tar.gz", tarfile.LNKTYPE)
    tar_with(f"{out}/fifo.tar.gz", tarfile.FIFOTYPE)
    tar_with(f"{out}/device.tar.gz", tarfile.CHRTYPE)
    tar_with(f"{out}/dotdot.tar.gz", tarfile.REGTYPE, name="lessons/../../x.c")
    with zipfile.ZipFile(f"{out}/symlink.zip", "w") as z:
        info = zipfile.ZipInfo("lessons/x.c")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
    with zipfile.ZipFile(f"{out}/absolute.zip", "w") as z:
        z.writestr("/tmp/x.c", "int x;")
    with open(f"{out}/truncated.tar.gz", "wb") as f:
        f.write(b"\x1f\x8b\x08\x00 not the rest of a gzip stream")
    with open(f"{out}/homework.rar", "wb") as f:
        f.write(b"Rar!")


if __name__ == "__main__":
    main()
