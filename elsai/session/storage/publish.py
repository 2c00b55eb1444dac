"""How a file written aside becomes visible under its key, atomically, at the lowest cost.

Two Linux calls do the same as the portable way with fewer directory changes:

- a new key (`anonymous_file` + `link_anonymous`): the bytes go into an unnamed file of the
  directory (`O_TMPFILE`) that `linkat` then names, failing if the name exists. The portable
  way creates a named temp file, links it and unlinks the temp name: two more directory
  changes. A killed writer leaves nothing behind (an unnamed file vanishes with its process).
- an existing key (`swap_in`): exchanging the two names (`renameat2(RENAME_EXCHANGE)`) is as
  atomic for readers as a rename over the key — the key names the old bytes, then the new,
  never neither — but a rename over an existing file makes ext4 (`auto_da_alloc`) start
  writing the new data out inside the rename: most of what replacing a small file costs on a
  real disk. The old file, now under the temp name, is unlinked by the caller.

Where a call is missing (another OS, an old C library, a filesystem or a sandbox without it)
the portable way is used, decided once per process. Durability is unchanged: with
`fsync=True` the caller fsyncs the data before it becomes visible and the directory after.
"""

from __future__ import annotations

import errno
import os
from typing import Any

_AT_FDCWD = -100
_AT_SYMLINK_FOLLOW = 0x400
_RENAME_EXCHANGE = 2
#: errors meaning "this call cannot be used here", never "this write failed"
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV,
                errno.EISDIR, errno.EPERM}  # fmt: skip
_calls: dict[str, Any] = {}  # C functions by name, loaded on first use; False: missing
_anonymous_ok = hasattr(os, "O_TMPFILE")


def _libc(name: str) -> Any:
    if name not in _calls:
        try:
            import ctypes

            _calls[name] = getattr(ctypes.CDLL(None, use_errno=True), name, False)
        except OSError:
            _calls[name] = False
    return _calls[name]


def _errno() -> int:
    import ctypes

    return ctypes.get_errno()


def anonymous_file(directory: str) -> int | None:
    """An unnamed file in `directory`, open for writing; None where that is not available."""
    global _anonymous_ok
    if not _anonymous_ok or not _libc("linkat"):
        return None
    try:
        return os.open(directory, os.O_WRONLY | os.O_TMPFILE | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno not in _UNSUPPORTED:
            raise
        _anonymous_ok = False
        return None


def link_anonymous(fd: int, path: str) -> bool:
    """Name the unnamed file `fd` as `path`; False where naming it is not possible here.

    Raises:
        OSError: The link failed (`FileExistsError`: `path` exists).
    """
    global _anonymous_ok
    source = f"/proc/self/fd/{fd}".encode()
    if _libc("linkat")(_AT_FDCWD, source, _AT_FDCWD, os.fsencode(path), _AT_SYMLINK_FOLLOW) == 0:
        return True
    code = _errno()
    if code in _UNSUPPORTED or (code == errno.ENOENT and not os.path.isdir("/proc/self/fd")):
        _anonymous_ok = False
        return False
    raise OSError(code, os.strerror(code), path)


def exchange(tmp: str, path: str) -> bool:
    """Exchange the names `tmp` and `path` in one step; False where that cannot be done here."""
    call = _libc("renameat2")
    if not call:
        return False
    if call(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), _RENAME_EXCHANGE) == 0:
        return True
    code = _errno()
    if code in _UNSUPPORTED or code == errno.ENOENT:  # ENOENT: the key vanished; rename makes it
        return False
    raise OSError(code, os.strerror(code), path)


def swap_in(tmp: str, path: str) -> bool:
    """Make `path` name `tmp`'s file.

    True if the names were exchanged (`tmp` now holds the old file, for the caller to unlink),
    False if `tmp` was renamed over `path`.
    """
    if exchange(tmp, path):  # a missing key makes it fall back to the rename
        return True
    os.replace(tmp, path)
    return False
