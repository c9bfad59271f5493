"""How supertok writes a file it was given the path of (`train -o`, `export -o`, Encoding.save,
Encoding.export): one place decides, from what the path names, how it is written.

- A regular file, or a name that does not exist yet: written to a temporary file in the same
  directory, flushed to disk, then renamed over the path, so the path never holds a partial file
  (an error or Ctrl-C leaves what was there). A symbolic link is followed: its target is replaced
  and the link stays a link (a dangling link's target is created). A file that exists keeps its
  permission bits (and, where the process may, its owner); a new one gets 0666 less the umask.
- A character device (/dev/null, a terminal) or a named pipe, and a path that names an open
  descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N): written straight to it, appending, as a
  shell's redirection would; a rename would put a regular file in the device's place.
- Anything else (a directory, a socket, a block device): refused, naming the path.

An output that is the same file as one of the inputs (same device and inode: a hard link or a
symbolic link to it counts) is refused before anything is read: writing it would destroy the input.
"""
import errno
import os
import re
import stat

FILE, STREAM = "file", "stream"

_WHAT = ((stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"), (stat.S_ISBLK, "a block device"))
_FD_DIR = re.compile(r"^/proc/[^/]+/(task/[^/]+/)?fd$")


class SameFileError(ValueError):
    """The output path names the same file as an input (`path`, `input`)."""

    def __init__(self, path, input):
        super().__init__("%s: is the same file as the input %s: writing it would destroy the input; "
                         "choose another output" % (path, input))
        self.path, self.input = path, input


class Target:
    """Where a write goes: `kind` FILE (replaced through a temporary file renamed over `real`, the
    path with its symbolic links resolved) or STREAM (opened and written in place); `st` is the
    os.stat of what the path names now, or None when it does not exist yet."""
    __slots__ = ("path", "real", "kind", "st")

    def __init__(self, path, real, kind, st):
        self.path, self.real, self.kind, self.st = path, real, kind, st


def _names_descriptor(path):
    """True when path, or a symbolic link it leads through, is an entry of a /proc/<pid>/fd
    directory (/dev/stdout -> /proc/self/fd/1, /dev/fd/1): such an entry stands for an open
    descriptor (a shell's redirection), not for the file it happens to point to now."""
    p = os.path.abspath(path)
    for _ in range(40):
        if _FD_DIR.match(os.path.realpath(os.path.dirname(p))):
            return True
        try:
            link = os.readlink(p)
        except OSError:
            return False
        p = os.path.normpath(os.path.join(os.path.dirname(p), link))
    return False


def target(path):
    """The Target of path; OSError naming the path when it is no file supertok can write."""
    path = os.fsdecode(os.fspath(path))
    if not path:
        raise FileNotFoundError(errno.ENOENT, "the output path is empty", path)
    try:
        st = os.stat(path)  # through symbolic links
    except FileNotFoundError:
        st = None
    if st is None:
        real = os.path.realpath(path)  # a dangling link: its target is what gets created
        parent = os.path.dirname(real)
        if not os.path.isdir(parent):
            raise FileNotFoundError(errno.ENOENT, "the directory %s does not exist" % parent, path)
        return Target(path, real, FILE, None)
    mode = st.st_mode
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or _names_descriptor(path):
        if stat.S_ISREG(mode) or stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
            return Target(path, path, STREAM, st)
    elif stat.S_ISREG(mode):
        return Target(path, os.path.realpath(path), FILE, st)
    what = next((w for test, w in _WHAT if test(mode)), "a special file")
    raise (IsADirectoryError if stat.S_ISDIR(mode) else OSError)(
        errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
        "is %s: the output must be a regular file (or a new one), a character device or a named pipe" % what, path)


def identity(path, st):
    """An input as check_inputs takes it when the file was opened earlier: (name, st_dev, st_ino)."""
    return (os.fsdecode(os.fspath(path)), st.st_dev, st.st_ino)


def check_inputs(t, inputs):
    """SameFileError when the output t is the same file (st_dev, st_ino) as one of inputs: paths
    (a path that cannot be stat'ed now is no conflict) or identity() triples. Character devices
    are exempt: /dev/null in and out loses nothing."""
    if t.st is None or stat.S_ISCHR(t.st.st_mode):
        return
    for p in inputs:
        if p is None:
            continue
        if isinstance(p, tuple):
            name, dev, ino = p
        else:
            try:
                s = os.stat(p)
            except (OSError, ValueError, TypeError):
                continue
            name, dev, ino = os.fsdecode(os.fspath(p)), s.st_dev, s.st_ino
        if (dev, ino) == (t.st.st_dev, t.st.st_ino):
            raise SameFileError(t.path, name)


def check(path, inputs=()):
    """Everything that can be known about writing path before the work that produces the data:
    what it names (target()), that it is none of the inputs (check_inputs()) and that it can be
    written: for a file, a temporary file is made in its directory and removed again (this finds
    a read-only or missing location, for root too); for a device or a pipe, write permission.
    Returns the Target; raises OSError or SameFileError naming the path."""
    t = target(path)
    check_inputs(t, inputs)
    if t.kind == FILE:
        fd, tmp = _temp(t.real)
        os.close(fd)
        os.unlink(tmp)
    elif not os.access(t.path, os.W_OK):
        raise PermissionError(errno.EACCES, "Permission denied", t.path)
    return t


def _temp(real):
    """(fd, path) of a new empty file beside real, made with mode 0666 (the umask applies)."""
    d, base = os.path.split(real)
    for _ in range(100):
        tmp = os.path.join(d, ".%s.%s.tmp" % (base, os.urandom(4).hex()))
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666), tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise type(exc)(exc.errno, "cannot create a file in %s: %s" % (d or ".", exc.strerror), real) from None
    raise FileExistsError(errno.EEXIST, "no free temporary name in %s" % d, real)


def write(path, data, inputs=()):
    """Write the bytes data to path as the module's docstring says; returns the Target written.
    A failure leaves path as it was (a file) and raises OSError or SameFileError naming it."""
    t = target(path)
    check_inputs(t, inputs)
    if t.kind == STREAM:
        flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0)
        with open(os.open(t.path, flags), "wb", closefd=True) as f:
            f.write(data)
        return t
    fd, tmp = _temp(t.real)
    try:
        with open(fd, "wb", closefd=True) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if t.st is not None:
            # the replaced file's permission bits (its special bits are not carried over), and its
            # owner where the process may set it (root replacing another user's file)
            os.chmod(tmp, stat.S_IMODE(t.st.st_mode) & 0o777)
            if hasattr(os, "chown") and (t.st.st_uid, t.st.st_gid) != (os.geteuid(), os.getegid()):
                try:
                    os.chown(tmp, t.st.st_uid, t.st.st_gid)
                except OSError:
                    pass
        os.replace(tmp, t.real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return t
