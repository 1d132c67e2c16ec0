"""Writing a file whole or not at all, for the course's Python scripts (as common/paths.c
does for its programs)."""
import os
import tempfile


def write_whole(path, write):
    """Has write(temporary_path) write the file into a temporary file in path's folder (so
    the rename is atomic), forces it to disk, gives it the mode open() would, and renames it
    over path. A crash or an error leaves the previous file as it was, never half of the new
    one, and no temporary file."""
    folder, name = os.path.split(os.path.abspath(path))
    descriptor, temp = tempfile.mkstemp(prefix=name + ".tmp.", dir=folder)
    os.close(descriptor)
    try:
        write(temp)
        with open(temp, "rb") as written:
            os.fsync(written.fileno())
        mask = os.umask(0)  # the only way to read it is to set it: put it straight back
        os.umask(mask)
        os.chmod(temp, 0o666 & ~mask)  # mkstemp makes 0600; give what open() would
        os.replace(temp, path)  # a folder named path is an error, not a place to move into
    except BaseException:
        os.unlink(temp)
        raise


def write_atomically(path, text):
    """Writes text (str, as UTF-8, or bytes) to path whole or not at all (write_whole)."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")

    def write(temp):
        with open(temp, "wb") as out:
            out.write(data)

    write_whole(path, write)
