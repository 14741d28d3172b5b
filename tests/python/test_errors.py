# SPDX-License-Identifier: MIT
"""One exception class, an OSError with the library's errno and words,
for every failure: wrong types, sizes, addresses, options. Nothing
returns None for a failure, and nothing crashes the interpreter."""

from __future__ import annotations

import errno
import pickle

import gpudirect
from gpudirect import GdrError

from support import DEVICE, raises


def test_gdr_error_is_an_oserror():
    assert issubclass(GdrError, OSError)
    e = GdrError(errno.EFAULT, "the range is not mapped", "gdr_register_ex")
    assert e.errno == errno.EFAULT and e.sentence == "the range is not mapped"
    assert e.strerror == e.sentence and e.call == "gdr_register_ex"
    assert str(e) == ("[Errno 14] gdr_register_ex: the range is not mapped "
                      "(EFAULT)")
    f = pickle.loads(pickle.dumps(e))
    assert (f.errno, f.sentence, f.call) == (e.errno, e.sentence, e.call)
    assert GdrError.__module__ == "gpudirect"
    assert "EOPNOTSUPP" in str(GdrError(errno.EOPNOTSUPP, "x"))


def test_wrong_objects_are_refused_with_a_sentence():
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        cases = [
            (None, None, "NoneType"), ("text", None, "str"),
            ([1, 2], None, "list"), (1.5, None, "float"),
            ({"a": 1}, None, "dict"), (True, 8, "bool"),
            (b"read only", None, "read-only"), (bytearray(), None, "empty"),
            (bytearray(8), -1, "nbytes is -1"), (bytearray(8), 2.0, "float"),
            (bytearray(8), True, "bool"), (0x1000, None, "needs nbytes"),
            (-4096, 10, "not a pointer"), (1 << 64, 10, "not a pointer"),
            (bytearray(8), 1 << 64, "more than a size_t"),
            (object(), None, "object"),
        ]
        for obj, n, words in cases:
            e = raises(GdrError, pd.register, obj, n)
            assert e.errno == errno.EINVAL, (obj, e)
            assert words in e.sentence, (obj, words, e.sentence)
            assert isinstance(e, OSError)


def test_library_failures_carry_its_errno_and_words():
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        e = raises(GdrError, pd.register, 4096, 4096)  # nothing mapped
        assert e.errno == errno.EFAULT and e.call == "gdr_register_ex"
        assert "standin0" in e.sentence and "pass memory" in e.sentence
        e = raises(GdrError, pd.register, 0, 0)  # NULL, 0 bytes
        assert e.errno == errno.EINVAL and e.sentence
        e = raises(GdrError, pd.register_dmabuf, 99999, 0, 4096, 0x1000)
        assert e.errno in (errno.EBADF, errno.EINVAL) and e.sentence
        raises(GdrError, pd.register_dmabuf, -1, 0, 4096, 0)
        raises(GdrError, pd.import_register, "not an export")


def test_the_library_missing_is_an_error_not_an_import_failure():
    from support import run_python

    r = run_python("import gpudirect\n"
                   "try:\n    gpudirect.devices()\n"
                   "except gpudirect.GdrError as e:\n"
                   "    print(e.errno, e.sentence)\n",
                   env={"GPUDIRECT_LIBRARY": "/nonexistent/libgpudirect.so.1"})
    assert r.returncode == 0, r.stderr
    err, words = r.stdout.split(" ", 1)
    assert int(err) == errno.ELIBACC and "GPUDIRECT_LIBRARY" in words
