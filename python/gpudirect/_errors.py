# SPDX-License-Identifier: MIT
"""The package's one exception class."""

from __future__ import annotations

import errno as _errno


# Where two names share a number, the one the library's man pages use.
_NAMES = {_errno.EOPNOTSUPP: "EOPNOTSUPP"}


class GdrError(OSError):
    """Every failure of the package: an OSError whose ``errno`` is the
    errno the library set (``EINVAL``, ``EOPNOTSUPP``, ``EFAULT``, ...) and
    whose ``strerror`` is the library's sentence (``gdr_last_error()``:
    the cause and what to do), or, for what Python checks before calling
    the library (a wrong type, a negative size, a closed object), a
    sentence of the same kind. ``call`` names the C call (or Python
    operation) that failed.

    ``str(e)`` is ``"[Errno 22] gdr_register_ex: <sentence>"``.
    """

    call: str

    def __init__(self, err: int, sentence: str, call: str = "") -> None:
        super().__init__(err, sentence)
        self.call = call

    @property
    def sentence(self) -> str:
        """The library's words (gdr_last_error()), or the package's."""
        return str(self.strerror or "")

    def __str__(self) -> str:
        name = _NAMES.get(self.errno or 0) or \
            _errno.errorcode.get(self.errno or 0, str(self.errno))
        where = f"{self.call}: " if self.call else ""
        return f"[Errno {self.errno}] {where}{self.sentence} ({name})"

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (GdrError, (self.errno, self.sentence, self.call))


def argument(sentence: str, call: str = "") -> GdrError:
    """An argument Python refuses before the library sees it (EINVAL)."""
    return GdrError(_errno.EINVAL, sentence, call)


def closed(what: str, why: str, call: str = "") -> GdrError:
    """Use of an object after its close() (EBADF)."""
    return GdrError(_errno.EBADF, f"{what} is closed{why}", call)
