"""What a run of the package writes beyond the article's run: one run per output folder, large files in pieces.

In: benchmark.Staging's files. Out: the same folder, held by one run at a time (OutLock: a flock the kernel drops
when the process ends, however it ends), a file written as its pieces are made (Outputs.add_chunks: results.json and
cells.csv of 100,000 cells), what report.html shows beside the measurement (Outputs.report), and the versions of the
libraries the measured formats were written with, for the manifest. benchmark.publish then moves them into place as a
whole.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from ._article import FORMATS, BenchmarkError, Staging, display
from .formats import WRITES_THROUGH

LOCK_NAME = ".benchmark.lock"


class OutLock:
    """One run per output folder: an exclusive flock on --out/.benchmark.lock, which the kernel drops when its process
    ends however it ends (kill -9 included), so a dead run's lock is never mistaken for a live one, nor a live one,
    still writing its pid, for a dead one. The file says who holds it, for the message a second run prints."""

    def __init__(self, out_dir: Path) -> None:
        self.path, self.held = out_dir / LOCK_NAME, False
        self.file: BinaryIO | None = None

    def acquire(self) -> None:
        import fcntl
        import socket

        me = f"{os.getpid()} {socket.gethostname()} {datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            while True:
                handle = open(self.path, "a+b")  # noqa: SIM115 (held for the run: the lock)
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.seek(0)
                    holder = handle.read(200).decode("utf-8", errors="replace").split()
                    handle.close()
                    raise BenchmarkError(
                        f"{display(self.path.parent)} is in use by another run of this tool (pid "
                        f"{holder[0] if holder else '?'}"
                        f"{', since ' + holder[2] if len(holder) > 2 else ''}); wait for it to end, or choose another "
                        "--out"
                    ) from None
                try:
                    current = os.stat(self.path)
                except FileNotFoundError:
                    current = None
                if current is not None and os.path.samestat(current, os.fstat(handle.fileno())):
                    break
                handle.close()  # the holder removed the file as we opened it: lock the file that is there now
            handle.truncate(0)
            handle.write(me.encode("utf-8"))
            handle.flush()
            self.file, self.held = handle, True
        except OSError as e:
            raise BenchmarkError(
                f"{display(self.path.parent)}: cannot write the outputs ({e.strerror}); choose another folder with "
                "--out"
            ) from None
        for leftover in self.path.parent.glob(".staging-*"):  # a dead run's half-written outputs: nobody else is here
            shutil.rmtree(leftover, ignore_errors=True)

    def release(self) -> None:
        if self.held and self.file is not None:
            # while still locked: a run that opened it meanwhile sees it gone and retries
            self.path.unlink(missing_ok=True)
            self.file.close()
            self.held, self.file = False, None


class Outputs(Staging):
    """benchmark.Staging for a run of the package: a file written in pieces (add_chunks), and report, what report.html
    shows beside the measurement: "model" (results.report_model), "svg" (results.svg)."""

    def __init__(self, out_dir: Path) -> None:
        super().__init__(out_dir)
        self.report: dict[str, Any] = {}

    def add_chunks(self, name: str, chunks: Iterator[bytes]) -> None:
        """add(), for a file made in pieces (results.json and cells.csv of 100,000 cells): each written and hashed as
        it comes, so memory holds one piece at a time."""
        digest = hashlib.sha256()
        try:
            with open(self.staged(name), "wb") as f:
                for chunk in chunks:
                    f.write(chunk)
                    digest.update(chunk)
        except OSError as e:
            raise self.cannot_write(e) from None
        self.sha[name] = digest.hexdigest()


@contextmanager
def held_outputs(out_dir: Path) -> Iterator[tuple[Outputs, OutLock]]:
    """One run's outputs: the folder held (OutLock) and its files staged until benchmark.publish(staging, manifest,
    lock.release) moves them into place; on any failure (Ctrl-C included) the lock is let go and every staged file
    removed, so the previous run's outputs stand as they were."""
    staging, lock = Outputs(out_dir), OutLock(out_dir)
    try:
        lock.acquire()
        yield staging, lock
    except BaseException:
        lock.release()
        staging.discard()
        raise
    finally:
        lock.release()


def format_library_versions(formats: list[str]) -> dict[str, str]:
    """The version of each library a measured format was written and read with, and of those it writes through:
    {'toon-format': '1.2.0'}; isongraph -> {'ison-graph': '1.4.0', 'ison-py': '1.2.0'}."""
    out = {}
    for fmt in formats:
        library = FORMATS[fmt].library
        if library is not None:
            # only for such a format: it takes 10 ms to import
            from importlib.metadata import PackageNotFoundError, version

            for package in (library[1], *WRITES_THROUGH.get(library[1], ())):
                try:
                    out[package] = version(package)
                except PackageNotFoundError:
                    out[package] = "unknown"
    return out
