"""The second core: a share of a large piece of work done on a forked process while this one does its own.

In: a function and its arguments, which the forked process inherits (never pickled: a 100,000-answer dict costs
nothing to hand over). Out: its result, pickled back, when the caller asks for it. Where the platform cannot fork or
the machine has one core, the function runs in this process when its result is asked for, so the same calls give the
same result everywhere. Used by answers.collect_batch (half of a Batch file parsed) and scoring.score_cells (half of
the cells scored and encoded).
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar, cast

T = TypeVar("T")
_FORKED: tuple[Any, ...] = ()  # what the forked process runs: set just before the fork, inherited, never pickled


def two_cores() -> bool:
    """Whether a share of the work can go to a forked process on another core."""
    return (os.cpu_count() or 1) >= 2 and "fork" in multiprocessing.get_all_start_methods()


@contextmanager
def forked(fn: Callable[..., T], *args: object, fork: bool = True) -> Iterator[Callable[[], T]]:
    """with forked(fn, *args) as theirs: ...mine...; theirs() is fn(*args), computed on a forked process from the
    moment the block opens (on two cores), or here when theirs() is first called (on one, or with fork False: work
    too small to pay for a fork). An exception of fn is raised by theirs(); the process is gone when the block ends,
    however it ends. One at a time."""
    global _FORKED
    if not fork or not two_cores():
        done: list[T] = []

        def here() -> T:
            if not done:
                done.append(fn(*args))
            return done[0]

        yield here
        return
    _FORKED = (fn, args)
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
            later = pool.submit(_run_forked)  # the fork happens here, so _FORKED is what it inherits
            _FORKED = ()
            yield lambda: cast(T, later.result())
    finally:
        _FORKED = ()


def _run_forked() -> object:
    fn, args = _FORKED
    result: object = fn(*args)
    return result
