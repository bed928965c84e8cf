"""The second core: a share of a large piece of work done on a forked process while this one does its own.

In: a function and its arguments, which the forked process inherits (never pickled: a 100,000-answer dict costs
nothing to hand over). Out: its result, pickled back, when the caller asks for it. Where the platform cannot fork or
the machine has one core, the function runs in this process when its result is asked for, so the same calls give the
same result everywhere. forked: one result (scoring.score_cells: half of a log's cells scored; results.write_results:
the cells encoded). forked_steps: a generator's values, each as soon as it is made, while the forked process goes on
(halves: the second half of a Batch score, read, scored and encoded).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import threading
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager, suppress
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


class Steps:
    """The values of a generator run on a forked process (forked_steps), in order: next() waits for the next one;
    stop() ends the process, its remaining steps unmade."""

    def __init__(self, pull: Callable[[], Any], stop: Callable[[], None]) -> None:
        self._pull, self.stop = pull, stop

    def next(self) -> Any:
        return self._pull()


@contextmanager
def forked_steps(steps: Callable[..., Iterator[Any]], *args: object) -> Iterator[Steps]:
    """with forked_steps(gen, *args) as theirs: ...mine...; theirs.next() is the next value gen(*args) yields,
    made on a forked process that inherits the arguments and goes on to its next step while this one reads the value
    (on two cores); or made here when it is asked for (on one). An exception of gen is raised by the next(); the
    process is gone when the block ends, however it ends."""
    if not two_cores():
        made = steps(*args)
        yield Steps(lambda: next(made), lambda: None)
        return
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)
    process = context.Process(target=_send_steps, args=(writer, steps, args), daemon=True)
    process.start()
    writer.close()

    def pull() -> Any:
        try:
            made, value = pickle.loads(reader.recv_bytes())
        except (EOFError, OSError):
            process.join()
            raise ChildProcessError(
                f"the forked process ended without its result (exit code {process.exitcode})"
            ) from None
        if not made:
            raise value
        return value

    def stop() -> None:
        if process.is_alive():
            process.kill()

    try:
        yield Steps(pull, stop)
    finally:
        reader.close()
        stop()  # steps not asked for are not made
        process.join()


def _send_steps(writer: Any, steps: Callable[..., Iterator[Any]], args: tuple[object, ...]) -> None:
    """On the forked process: each step pickled here and sent by a thread, so the next step's work goes on while
    the pipe waits for its reader; an exception sent as the last step."""
    sent: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    # The sender takes the GIL back after every pipe's worth of a step (64 KiB by default) while the next step runs
    # Python here: a pipe of 1 MiB sends a 10 MB step in 10 turns, not 150.
    wide_pipes(writer)

    def send() -> None:
        while (data := sent.get()) is not None:
            try:
                writer.send_bytes(data)
            except OSError:  # nobody reads any more: the caller's block has ended
                return

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        for value in steps(*args):
            sent.put(pickle.dumps((True, value), pickle.HIGHEST_PROTOCOL))
    except BaseException as e:  # every failure goes to the caller
        sent.put(_failure(e))
    sent.put(None)
    sender.join()


def wide_pipes(*ends: Any) -> None:
    """Pipes of 1 MiB, where the platform allows: a 10 MB message crosses in 10 turns of its reader, not 150."""
    with suppress(ImportError, AttributeError, OSError):  # a platform without the call, or a smaller allowed maximum
        import fcntl  # a platform that forks has it

        for end in ends:
            fcntl.fcntl(end.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)


def _failure(e: BaseException) -> bytes:
    """An exception as the caller can read it back: itself; else its text as the nearest class above it that takes
    one (an error whose __init__ wants other arguments than its text cannot be unpickled as it is); else the text as a
    ChildProcessError."""
    for kind in type(e).__mro__:
        if not issubclass(kind, BaseException):
            continue
        try:
            data = pickle.dumps((False, e if kind is type(e) else kind(str(e))), pickle.HIGHEST_PROTOCOL)
            pickle.loads(data)
            return data
        except Exception:
            continue
    return pickle.dumps((False, ChildProcessError(f"{type(e).__name__}: {e}")), pickle.HIGHEST_PROTOCOL)
