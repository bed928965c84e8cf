"""requests.jsonl: the append-only log of a model run (Log), and reading it back a line at a time (file_lines).

In: outcome records from every worker. Out: one JSON line each, flushed and fsynced before write() returns (lines that
arrive together share one fsync). request_key is what makes two requests the same for resuming; RunLine is a
run line read back.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .._article import BenchmarkError, display, warn
from .transport import loads

if TYPE_CHECKING:
    from .config import Redactor


LOG_NAME = "requests.jsonl"
LOG_SCHEMA_VERSION = 1


def request_key(sha: object, model: object, sampling: object, repeat: object) -> str:
    """What makes two requests the same for resuming: prompt, model, sampling and repeat (as a log line holds them:
    any JSON values)."""
    return json.dumps([sha, model, sampling, repeat], sort_keys=True, ensure_ascii=False)


@dataclass(slots=True, frozen=True)
class RunLine:
    """A run line of the log (type "run": the header each invocation writes first) as read back: how the log was
    made, for the error when it answers none of a command's prompts. Any JSON values, unchecked, but where said."""

    model: object  # --model
    sampling: dict[str, Any]  # ModelConfig.sampling(0); {} when it is no object
    command: list[Any]  # the command line (public_argv); [] when absent
    commit: object  # git.commit, when git is an object
    tool_version: object  # the version of this tool that wrote it
    questions_sha256: object  # questions_sha256() of the measurement

    @classmethod
    def of(cls, record: dict[str, Any]) -> RunLine:
        """The run line of a log line whose type is "run"."""
        sampling, command, git = record.get("sampling"), record.get("command"), record.get("git")
        return cls(
            record.get("model"),
            sampling if isinstance(sampling, dict) else {},
            list(command) if isinstance(command, (list, str, dict)) else [],  # what list() takes, not a crash
            git.get("commit") if isinstance(git, dict) else None,
            record.get("tool_version"),
            record.get("questions_sha256"),
        )


def file_lines(path: Path) -> Iterator[tuple[int, bytes, dict[str, Any] | None]]:
    """Each non-blank line of a log or a Batch file, streamed: its number, its bytes and its record, None when the
    line is not a JSON object (a torn last line from a killed run, or a line damaged by hand). A missing file
    has no lines."""
    for line_no, line in numbered_lines(path):
        yield line_no, line, record_of(line)


def numbered_lines(path: Path, offset: int = 0, before: int = 0) -> Iterator[tuple[int, bytes]]:
    """Each non-blank line of a file and its number, from 1, streamed; a missing file has no lines. offset: where a
    line begins, the before-th line's end (a reading that goes on where another stopped)."""
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed by the generator's finally)
    except FileNotFoundError:
        return
    except OSError as e:
        raise BenchmarkError(
            f"{display(path)}: cannot read the log ({e.strerror}); choose another --out or --score file"
        ) from None
    with f:
        f.seek(offset)
        for line_no, line in enumerate(f, before + 1):
            if not line.isspace():  # blank (a line from iterating a file is never empty); isspace copies nothing
                yield line_no, line


def record_of(line: bytes) -> dict[str, Any] | None:
    """A line's JSON object; None when it is not one."""
    try:
        record = loads(line)
    except (ValueError, RecursionError):  # UnicodeDecodeError included; a line nested past what json reads
        return None
    return record if type(record) is dict else None


def _last_line_start(f: IO[bytes], size: int) -> int:
    """Where the last line of an open file begins: after the last newline, looked for backwards block by block."""
    end = size
    while end > 0:
        begin = max(end - 65536, 0)
        f.seek(begin)
        block = f.read(end - begin)
        k = block.rfind(b"\n")
        if k >= 0:
            return begin + k + 1
        end = begin
    return 0


class Log:
    """requests.jsonl, thread-safe: write() returns once its line is on disk (flushed and fsynced). Lines written
    by several workers at once share one write and one fsync (group commit): the first to arrive writes what
    is waiting, the others wait for it, so the disk's cost per line falls as the requests in flight rise."""

    def __init__(self, path: Path, redact: Redactor) -> None:
        self.path, self.redact = path, redact
        self.broken: str | None = None
        self.cond = threading.Condition()
        self.waiting: list[bytes] = []  # lines not yet written
        self.queued = self.durable = 0  # lines handed to write(), lines on disk
        self.flushing = False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a+b") as f:
                size = f.seek(0, os.SEEK_END)
                f.seek(max(size - 1, 0))
                if size and f.read(1) != b"\n":  # a line torn by a kill or a full disk: moved aside, then cut
                    start = _last_line_start(f, size)
                    f.seek(start)
                    torn = f.read()
                    with open(path.with_name(path.name + ".torn"), "ab") as aside:
                        aside.write(torn + b"\n")
                        aside.flush()
                        os.fsync(aside.fileno())
                    f.truncate(start)
                    warn(
                        f"{display(path)}: its last line was torn ({len(torn):,} bytes); it is kept in "
                        f"{path.name}.torn and "
                        "its request will be sent again"
                    )
            self.file = open(path, "ab")  # noqa: SIM115 (the log, held for the run)
        except OSError as e:
            raise BenchmarkError(
                f"{display(path)}: cannot append to the log ({e.strerror}); what it holds is kept: free some space "
                "or fix the folder's permissions, and run the same command again"
            ) from None

    def write(self, record: dict[str, Any]) -> None:
        """Append one record and return once it is on disk; after a failed write (a full disk) nothing more is
        written, and every write() waiting on it raises."""
        # every form of a secret, in one pass
        line = (self.redact(json.dumps(record, ensure_ascii=False)) + "\n").encode("utf-8")
        with self.cond:
            self.waiting.append(line)
            self.queued += 1
            mine = self.queued
            while self.durable < mine:
                if self.broken:
                    raise OSError(self.broken)
                if self.flushing:
                    self.cond.wait()
                    continue
                self._flush()

    def _flush(self) -> None:
        """Write every waiting line, with the lock released while the disk works; called with the lock held."""
        lines, upto, self.waiting, self.flushing = self.waiting, self.queued, [], True
        self.cond.release()
        error, written = None, False
        try:
            self.file.write(b"".join(lines))
            self.file.flush()
            os.fsync(self.file.fileno())
            written = True
        except OSError as e:
            error = e
        except ValueError:  # the file was closed under us (the run was abandoned): the line is not on disk
            error = OSError("the log was closed")
        finally:
            self.cond.acquire()
            self.flushing = False
            if written:
                self.durable = upto
            elif error is not None:
                self.broken = error.strerror or str(error)
            else:
                self.waiting = lines + self.waiting  # interrupted (Ctrl-C): the lines wait for the next writer
            self.cond.notify_all()
        if error is not None:
            raise error

    def close(self) -> None:
        with contextlib.suppress(OSError):  # a full disk: what could be written is on disk, the rest was reported
            self.file.close()
