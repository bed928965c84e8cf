"""What a run of the package writes beyond the article's run: one run per output folder, large files in pieces.

In: benchmark.Staging's files. Out: the same folder, held by one run at a time (OutLock: a flock the kernel drops
when the process ends, however it ends), files made in pieces written and hashed on another thread while the next
piece is made (Outputs.add_chunks), or on a thread of their own while the run goes on (Outputs.add_behind: the
results.json of 100,000 rows), what report.html shows beside the measurement (Outputs.report), and the versions of
the libraries the measured formats were written with, for the manifest. benchmark.publish then moves them into place
as a whole.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO, Iterator

from benchmark import FORMATS, BenchmarkError, Staging, display

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

        me = f"{os.getpid()} {socket.gethostname()} {datetime.now(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            while True:
                handle = open(self.path, "a+b")
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
    """benchmark.Staging for a run of the package: large files written in pieces (add_chunks), and report, what
    report.html shows beside the measurement: "model" (results.report_model), "svg" (results.svg)."""

    def __init__(self, out_dir: Path) -> None:
        super().__init__(out_dir)
        self.report: dict = {}
        self.behind: list[Future] = []  # files add_behind writes on a thread of their own

    def add_behind(self, name: str, parts: list[bytes | Path]) -> None:
        """A file made of byte strings and other files' bytes, one after the other (results.json: its figures around
        the cells' lines, which other processes wrote), written and hashed on a thread of its own while the run goes
        on (a reused buffer; reading, writing and hashing let the GIL go), in its place among the outputs. settle()
        waits for it: before the manifest is made, and before the staged files are discarded."""
        self.sha[name] = ""  # its place in the order written
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self.behind.append(pool.submit(self._joined, name, parts))
        pool.shutdown(wait=False)

    def _joined(self, name: str, parts: list[bytes | Path]) -> None:
        """The file of add_behind: each file part copied by the kernel (copy_file_range, one call that lets the GIL
        go) while another thread hashes the parts in order, each file through a few mapped windows (a call each).
        A thread that took the GIL back for every 8 MiB block took 0.36 s for 86 MB beside report.html; 0.21 s so,
        and report.html no longer waits for it (docs/figures.md)."""
        digest = hashlib.sha256()
        try:
            with (
                open(self.staged(name), "wb", buffering=0) as out,
                ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{name} sha256") as hasher,
            ):
                hashed = hasher.submit(_hash_parts, digest, parts)
                for part in parts:
                    if isinstance(part, bytes):
                        _write_all(out, part)
                    else:
                        _copy_into(out, part)
                hashed.result()
        except OSError as e:
            raise self.cannot_write(e) from None
        self.sha[name] = digest.hexdigest()

    def settle(self) -> None:
        """Wait for the files add_behind is writing; an error of one is raised here."""
        behind, self.behind = self.behind, []
        for written in behind:
            written.result()

    def discard(self) -> None:
        """Staging.discard, once no thread writes into the staging folder any more."""
        wait(self.behind)
        self.behind = []
        super().discard()

    def add_chunks(self, name: str, chunks: Iterator[bytes]) -> None:
        """add(), for a file made in pieces: each written and hashed on another thread while the next is made
        (both release the GIL), so memory holds two pieces at a time."""
        digest = hashlib.sha256()
        try:
            with (
                open(self.staged(name), "wb") as f,
                ThreadPoolExecutor(max_workers=1, thread_name_prefix="writer") as writer,
            ):
                pending = None

                def put(chunk: bytes) -> None:
                    f.write(chunk)
                    digest.update(chunk)

                for chunk in chunks:
                    if pending is not None:
                        pending.result()  # in order, and an error of the write raised here
                    pending = writer.submit(put, chunk)
                if pending is not None:
                    pending.result()
        except OSError as e:
            raise self.cannot_write(e) from None
        self.sha[name] = digest.hexdigest()

    def adopt(self, name: str, sha256: str) -> None:
        """A file another process wrote at staged(name) (cells.encode_cells, on a fork), with its SHA-256."""
        self.sha[name] = sha256


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


HASH_WINDOW = 1 << 25  # bytes of a file part mapped at a time to be hashed: the process's peak memory grows by no more


def _hash_parts(digest: hashlib._Hash, parts: list[bytes | Path]) -> None:
    """digest updated with the parts' bytes in order, a file's through windows of HASH_WINDOW mapped bytes (one call
    each that lets the GIL go, and no copy into a buffer)."""
    import mmap

    for part in parts:
        if isinstance(part, bytes):
            digest.update(part)
            continue
        with open(part, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            for start in range(0, size, HASH_WINDOW):
                with mmap.mmap(f.fileno(), min(HASH_WINDOW, size - start), access=mmap.ACCESS_READ, offset=start) as m:
                    digest.update(m)


def _write_all(out: BinaryIO, data: bytes | memoryview) -> None:
    """All of data into an unbuffered file (whose write may take less than it is given)."""
    view = memoryview(data)
    while view:
        view = view[out.write(view) or 0 :]


def _copy_into(out: BinaryIO, path: Path) -> None:
    """A file's bytes appended to out, by the kernel (copy_file_range) where it can, else through a buffer from where
    the kernel stopped (another platform, a file system that cannot)."""
    with open(path, "rb") as f:
        size, copied = os.fstat(f.fileno()).st_size, 0
        copy = getattr(os, "copy_file_range", None)
        try:
            while copy is not None and copied < size and (n := copy(f.fileno(), out.fileno(), size - copied)):
                copied += n
        except OSError:  # EXDEV, ENOSYS, EINVAL...: a real error of the disk comes back from write below
            pass
        f.seek(copied)
        while block := f.read(1 << 22):
            _write_all(out, block)
