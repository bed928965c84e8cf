"""One status line on stderr for work that takes more than a few seconds (PROGRESS_AFTER).

In: counts of work done. Out: a line with what is being done and, once something is done, the time left.
"""

from __future__ import annotations

import sys
import time

PROGRESS_AFTER = 3.0  # seconds before a run starts to show its progress on stderr


def duration(seconds: float) -> str:
    """'45 s', '12 min', '3.5 h': a time left, as precise as an estimate can be."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """One status line on stderr, only for runs that take more than a few seconds."""

    def __init__(self, total: int, unit: str = "cells") -> None:
        self.total, self.done, self.delay, self.unit = total, 0, PROGRESS_AFTER, unit
        self.start = self.last = time.monotonic()
        self.shown = False

    def advance(self, n: int, label: str, eta: bool = False) -> None:
        """n more done; the status line at most once a second, and at the end (with eta, the time left)."""
        self.done += n
        now = time.monotonic()
        if now - self.start >= self.delay and (now - self.last >= 1.0 or self.done == self.total):
            self.show(now, label, eta)

    def show(self, now: float, label: str, eta: bool = False) -> None:
        """The status line; with eta, the time left at the pace so far (once something is done)."""
        self.last, self.shown = now, True
        end = "\r" if sys.stderr.isatty() else "\n"
        left = ""
        if eta and 0 < self.done < self.total:
            left = f", about {duration((now - self.start) / self.done * (self.total - self.done))} left"
        print(
            f"{self.done}/{self.total} {self.unit}, {now - self.start:.0f} s, {label}{left}",
            end=end,
            file=sys.stderr,
            flush=True,
        )

    def close(self) -> None:
        if self.shown and sys.stderr.isatty():
            print(file=sys.stderr)
