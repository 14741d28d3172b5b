# SPDX-License-Identifier: MIT
"""Closing an object while other threads use it.

A C pointer (a PD, a cache) may be freed only when no thread is inside a
call that uses it. A ``Gate`` counts the threads inside without a lock on
the way in and out: a list's ``append`` and ``pop`` are each one atomic
step for the interpreter, and a thread enters by appending first and then
checking ``closed``, while ``shut()`` sets ``closed`` first and then waits
for the list to empty. Whichever comes first, either the entering thread
sees ``closed`` and backs out, or ``shut()`` sees it inside and waits.
The calls inside are C calls that release the GIL, so waiting is short
and lets them finish. (A thread never waits for itself: nothing between
``enter`` and ``leave`` can close the object it is using.)
"""

from __future__ import annotations

import time
from typing import List, Optional


class Gate:
    __slots__ = ("closed", "_inside")

    def __init__(self) -> None:
        self.closed = False
        self._inside: List[None] = []

    def enter(self) -> bool:
        """False when the object is closed (nothing to leave then)."""
        self._inside.append(None)
        if self.closed:
            self._inside.pop()
            return False
        return True

    def leave(self) -> None:
        self._inside.pop()

    def shut(self, timeout: Optional[float] = None) -> bool:
        """Refuse new entries and wait for those inside to leave (at most
        @timeout seconds). Returns False when some are still inside."""
        self.closed = True
        return self.drain(timeout)

    def drain(self, timeout: Optional[float] = None) -> bool:
        end = None if timeout is None else time.monotonic() + timeout
        delay = 1e-5
        while self._inside:
            if end is not None and time.monotonic() > end:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 1e-3)
        return True
