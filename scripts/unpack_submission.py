#!/usr/bin/env python3
"""Unpacks a student's archive for grading, refusing what could reach outside it.

    unpack_submission.py ARCHIVE DEST

ARCHIVE is a .tar.gz, .tgz, .tar or .zip file; DEST a folder that does not exist yet. Every
entry must be a plain file or a folder with a relative name that stays inside DEST: an
absolute name, a `..` part, a link (symbolic or hard), a device or a FIFO refuses the whole
archive with one line naming the entry, and nothing is written. So are more than 20000
entries or more than 512 MB unpacked. Files are written with mode 0644, folders 0755,
owned by whoever runs this. Python's own tarfile and zipfile read the archives.
"""
import os
import stat
import sys
import tarfile
import zipfile
import zlib

MAX_ENTRIES = 20000
MAX_BYTES = 512 << 20


class Refused(Exception):
    pass


def safe_parts(name):
    """The entry's path as parts, or Refused when it could land outside DEST."""
    if name.startswith("/") or name.startswith("\\") or (len(name) > 1 and name[1] == ":"):
        raise Refused(f"entry '{name}' has an absolute name")
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused(f"entry '{name}' has a '..' part")
    return parts


def tar_entries(archive):
    """(parts, is_dir, size, read) for each entry of an open tar archive."""
    members = archive.getmembers()
    for m in members:
        if not (m.isfile() or m.isdir()):
            raise Refused(f"entry '{m.name}' is a link or a special file")
    return [(safe_parts(m.name), m.isdir(), m.size, lambda m=m: archive.extractfile(m).read()) for m in members]


def zip_entries(archive):
    infos = archive.infolist()
    for info in infos:
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise Refused(f"entry '{info.filename}' is a link or a special file")
    return [(safe_parts(i.filename), i.is_dir(), i.file_size, lambda i=i: archive.read(i)) for i in infos]


def open_archive(path):
    """The open archive and its entries, every one checked."""
    if path.endswith((".tar.gz", ".tgz", ".tar")):
        archive = tarfile.open(path)
        return archive, tar_entries(archive)
    if path.endswith(".zip"):
        archive = zipfile.ZipFile(path)
        return archive, zip_entries(archive)
    raise Refused("not a .tar.gz, .tgz, .tar or .zip file")


def unpack(path, dest):
    archive, entries = open_archive(path)  # every entry checked before anything is written
    with archive:
        if len(entries) > MAX_ENTRIES:
            raise Refused(f"{len(entries)} entries, more than {MAX_ENTRIES}")
        if sum(size for _, _, size, _ in entries) > MAX_BYTES:
            raise Refused(f"more than {MAX_BYTES >> 20} MB unpacked")
        os.makedirs(dest, mode=0o755)
        for parts, is_dir, _, read in entries:
            write_entry(dest, parts, is_dir, read)


def write_entry(dest, parts, is_dir, read):
    if not parts:
        return
    target = os.path.join(dest, *parts)
    if is_dir:
        os.makedirs(target, mode=0o755, exist_ok=True)
        return
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    data = read()
    if len(data) > MAX_BYTES:
        raise Refused(f"entry '{'/'.join(parts)}' is larger than it says")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def main():
    if len(sys.argv) != 3:
        print("usage: unpack_submission.py ARCHIVE DEST", file=sys.stderr)
        return 2
    path, dest = sys.argv[1], sys.argv[2]
    if os.path.lexists(dest):
        print(f"unpack: {dest} exists already", file=sys.stderr)
        return 2
    try:
        unpack(path, dest)
    except Refused as why:
        print(f"unpack: {path}: {why}: refused", file=sys.stderr)
        return 1
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error):
        print(f"unpack: {path}: cannot be read: a damaged or truncated archive", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"unpack: {path}: cannot be read: {error.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
