"""Writing a file whole or not at all, for the course's Python scripts (as common/paths.c
does for its programs)."""
import os
import tempfile


def write_atomically(path, text):
    """Writes text (str, as UTF-8, or bytes) to path whole or not at all: into a temporary
    file in the same folder (so the rename is atomic), forced to disk, then renamed over
    path. A crash or an error leaves the previous file as it was, never half of the new one."""
    folder, name = os.path.split(os.path.abspath(path))
    descriptor, temp = tempfile.mkstemp(prefix=name + ".tmp.", dir=folder)
    try:
        binary = isinstance(text, bytes)
        with os.fdopen(descriptor, "wb" if binary else "w", encoding=None if binary else "utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        mask = os.umask(0)  # the only way to read it is to set it: put it straight back
        os.umask(mask)
        os.chmod(temp, 0o666 & ~mask)  # mkstemp makes 0600; give what open() would
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise
