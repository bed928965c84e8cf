"""Collecting the answers that count: from logs of this tool, or from Batch API output and error files.

In: the files, read a line at a time, and the measured items. Out: per (prompt, repeat), the one answer that counts as
a compact Answer (Collected.best), and a summary of what the files held. A 100,800-line Batch output is never in
memory whole.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ._article import InputProblems, display
from .progress import Progress
from .runner.endpoint import context_refusal, error_text, failure_kind
from .runner.jobs import Cuts, Sent, context_end, planned_keys
from .runner.log import RunLine, file_lines, numbered_lines, record_of
from .runner.send import reply
from .runner.transport import Usage

if TYPE_CHECKING:
    from .measure import Item
    from .runner.config import ModelConfig


MISSING_FROM_BATCH = "missing_from_batch_output"
# an Answer's fields as a Batch line gives them (_fields): error, content, finish reason, no latency, no wait, usage
AnswerFields = tuple[str | None, str | None, str | None, None, float, int | None, int | None, int | None]


class Answer(NamedTuple):
    """One answer as scoring reads it: the log record's fields, its usage reduced to the three counts used."""

    error: str | None  # why the request failed; None for an answer
    content: object  # the message's content (scoring reads only text)
    finish_reason: str | None
    latency_s: float | None  # seconds of the last attempt (none for a Batch line)
    retry_wait_s: float | None  # seconds before it (0.0 for a Batch line)
    prompt_tokens: int | None  # the usage the server reported (Usage)
    completion_tokens: int | None
    cached_tokens: int | None

    @classmethod
    def of(cls, record: dict[str, Any]) -> Answer:
        """The answer of a log line; a field that is not what it can be (a count of 401 digits, a finish reason that is
        an object, an error that is not text) is read as absent, never trusted."""
        usage = Usage.of(record.get("usage"))
        error = record.get("error")
        error = error if error is None or isinstance(error, str) else "the log's error field is not text"
        return cls(
            error,
            record.get("content"),
            _text_or_none(record.get("finish_reason")),
            _seconds(record.get("latency_s")),
            _seconds(record.get("retry_wait_s")),
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.cached_tokens,
        )


class Collected:
    """The answers that count, gathered as the lines stream by, never the whole file in memory: for each
    (prompt, repeat) of this command, by its model with its sampling, the first success, else the last
    failure, as an Answer. Also the logs' run lines and the lines that could not be read."""

    def __init__(self, items: list[Item], config: ModelConfig) -> None:
        self.config = config
        self.shas = {item.row.prompt_sha256 for item in items}
        self.samplings = [config.sampling(r) for r in range(config.repeats)]
        self.best: dict[tuple[str, int], Answer] = {}
        self.headers: list[RunLine] = []
        self.unreadable: dict[str, list[int]] = {}

    def offer(self, sha: str, repeat: int, answer: Answer) -> None:
        old = self.best.get((sha, repeat))
        if old is None or old.error is not None:  # a success is never replaced
            self.best[(sha, repeat)] = answer

    def log(self, path: Path) -> None:
        """Every line of one log of this tool."""
        bad = []
        for line_no, _, r in file_lines(path):
            if r is None:
                bad.append(line_no)
                continue
            kind = r.get("type")
            if kind == "run":
                self.headers.append(RunLine.of(r))
            elif kind == "request" and r.get("model") == self.config.model:
                sha, repeat = r.get("prompt_sha256"), r.get("repeat")
                if (
                    type(repeat) is int
                    and 0 <= repeat < len(self.samplings)
                    and type(sha) is str
                    and sha in self.shas
                    and r.get("sampling") == self.samplings[repeat]
                ):
                    self.offer(sha, repeat, Answer.of(r))
        if bad:
            self.unreadable[display(path)] = bad


class BatchPart(NamedTuple):
    """What a reading of Batch files kept (read_batch): the answers that count, and what the summary and the errors
    need, each at its position (the file's index, the line)."""

    best: dict[tuple[str, int], Answer]
    problems: list[tuple[int, int, str]]  # (file, line, the error)
    unreadable: list[tuple[int, int]]  # (file, line) of a line that is not a JSON object
    lines: int  # custom_ids kept
    # the model that answered -> [lines, (file, line) of its first]: mixed types, in a list counted in place
    models: dict[str, list[Any]]
    failures: dict[str, list[Any]]  # failure -> [lines, (file, line) of its first]
    missing: int  # planned answers with no line, filled in best as failed (MISSING_FROM_BATCH)
    planned: int  # the planned answers, with a line or missing


def is_batch_file(path: Path) -> bool:
    """Whether a --score file is a Batch file: its first readable line has a custom_id."""
    first = next((r for _, _, r in file_lines(path) if r is not None), None)
    return first is not None and "custom_id" in first


READING = "reading the Batch lines"


@dataclass(slots=True, frozen=True)
class BatchSummary:
    """What the Batch files held (collect_batch)."""

    files: list[str]  # the files, as shown
    lines: int  # the answer lines kept (one per custom_id)
    planned: int  # the planned answers, with a line or missing
    missing: int  # planned answers with no line (failed: MISSING_FROM_BATCH)
    failed: int  # the planned answers that failed, missing ones included
    failures: dict[str, int]  # failure -> answers, the most first
    models: dict[str, int]  # the model that answered -> lines, the most first

    def to_dict(self, notes: list[str]) -> dict[str, Any]:
        """As results.json's request summary of a --score of Batch files holds it, with the notes (batch_notes)."""
        return {**asdict(self), "mode": "batch", "notes": notes}


def collect_batch(paths: list[Path], items: list[Item], config: ModelConfig) -> tuple[Collected, BatchSummary]:
    """OpenAI Batch API output and error files, in any order, streamed; and a summary. custom_id is
    '<prompt SHA-256 prefix>-r<repeat>'. Every planned prompt with no line becomes a failed request
    (missing_from_batch_output); a line that matches no prompt, a custom_id given twice with different
    bytes, and a line of the Batch input format are errors that name the file and line."""
    part = read_batch(paths, items, config, shown=READING)
    if part.problems:
        raise InputProblems([text for _, _, text in sorted(part.problems)], "")
    collected = Collected(items, config)
    collected.best = part.best
    for k, line_no in sorted(part.unreadable):
        collected.unreadable.setdefault(display(paths[k]), []).append(line_no)
    models, failures = _in_first_order(part.models), _in_first_order(part.failures)
    failures[MISSING_FROM_BATCH] += part.missing
    failures = +failures  # no zero count of missing lines
    summary = BatchSummary(
        [display(p) for p in paths],
        part.lines,
        part.planned,
        part.missing,
        sum(failures.values()),
        dict(failures.most_common()),
        dict(models.most_common()),
    )
    return collected, summary


def _in_first_order(counts: dict[str, list[Any]]) -> Counter[str]:
    """The counts, each key where its first line puts it (Counter.most_common breaks ties so)."""
    return Counter({key: counts[key][0] for _, key in sorted((first, key) for key, (_, first) in counts.items())})


def read_batch(paths: list[Path], items: list[Item], config: ModelConfig, shown: str | None = None) -> BatchPart:
    """Every line of the Batch files, one after the other, each read on its own. The planned answers that no line has
    are filled in as failed (MISSING_FROM_BATCH). shown: what the status line of a long reading says."""
    by_prefix = {item.row.prompt_sha256[:40]: item.row.prompt_sha256 for item in items}
    part = BatchPart({}, [], [], 0, {}, {}, 0, 0)
    seen: dict[str, tuple[str, int, int]] = {}  # custom_id -> (file, line, hash of the line's bytes)
    names = [display(path) for path in paths]
    sizes = [_size(path) for path in paths] if shown else []
    progress = Progress(-(-sum(sizes) >> 20), "MB of Batch files") if shown else None  # MB, rounded up
    for k, path in enumerate(paths):
        at = sum(sizes[:k])  # bytes before this file's next line (with shown)
        for line_no, line in numbered_lines(path):
            if progress is not None:
                at += len(line)
                if not line_no & 1023:
                    progress.advance((at >> 20) - progress.done, cast(str, shown))
            read: tuple[str, tuple[str | None, AnswerFields] | None] | None = _typed_line(line)
            if read is None:  # a line of another shape, or no msgspec: the same fields read from its dict
                r = record_of(line)
                if r is None:
                    part.unreadable.append((k, line_no))
                    continue
                read = (_custom_id(r), _answer_fields(r))
            # 64 bits of the line's bytes: no practical collision
            _keep(part, seen, by_prefix, config.repeats, (k, line_no, names[k]), (read[0], hash(line.strip()), read[1]))
    if progress is not None:
        progress.advance(progress.total - progress.done, cast(str, shown))
        progress.close()
    missing = [key for key in planned_keys(items, config) if key not in part.best]
    for key in missing:
        part.best[key] = Answer(MISSING_FROM_BATCH, None, None, None, 0.0, None, None, None)
    return part._replace(lines=len(seen), missing=len(missing), planned=len(part.best))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # the reading says what is wrong with it
        return 0


def _custom_id(r: dict[str, Any]) -> str:
    custom_id = r.get("custom_id")
    return custom_id if type(custom_id) is str else str(custom_id if custom_id is not None else "")


def _keep(
    part: BatchPart,
    seen: dict[str, tuple[str, int, int]],
    by_prefix: dict[str, str],
    repeats: int,
    at: tuple[int, int, str],
    line: tuple[str, int, tuple[str | None, AnswerFields] | None],
) -> None:
    """One line of a Batch file (its custom_id, the hash of its bytes, its _answer_fields) into part: its answer,
    unless it is the second of a (prompt, repeat) that already has a success, or an error of the files."""
    k, line_no, name = at
    custom_id, digest, read = line
    if read is None:
        part.problems.append(
            (
                k,
                line_no,
                f"{name} line {line_no} is a Batch input line (custom_id, method, url, body): pass the batch's output "
                "file and its error file, not the file that was uploaded",
            )
        )
        return
    prefix, _, number = custom_id.rpartition("-r")
    sha = by_prefix.get(prefix)
    repeat = int(number) if number.isdigit() and number.isascii() and len(number) <= 6 else repeats
    if sha is None or repeat >= repeats:
        part.problems.append(
            (
                k,
                line_no,
                f"{name} line {line_no}: custom_id {custom_id!r} matches no prompt of this command; pass the same "
                "--model, matrix and prompt flags as the --export-batch run, or the right file",
            )
        )
        return
    first = seen.get(custom_id)
    if first is not None:
        if first[2] != digest:
            part.problems.append(
                (
                    k,
                    line_no,
                    f"{name} line {line_no}: custom_id {custom_id!r} was given before, at {first[0]} line {first[1]}, "
                    "with other content; keep one of the two files",
                )
            )
        return
    seen[custom_id] = (name, line_no, digest)
    model, fields = read
    for counts, key in ((part.models, model), (part.failures, fields[0])):
        if key is not None:
            counts.setdefault(key, [0, (k, line_no)])[0] += 1
    old = part.best.get((sha, repeat))
    if old is None or old.error is not None:  # Collected.offer, inlined: a success is never replaced
        part.best[(sha, repeat)] = Answer(*fields)


@functools.cache
def _line_decoder() -> Any:
    """msgspec's decoder of a Batch output or error line into a typed record of the fields read_batch uses (the rest
    of the line is skipped unbuilt), or None where msgspec is not installed."""
    try:
        import msgspec
    except ImportError:
        return None

    unset = msgspec.UNSET  # a Batch input line has a method and a body
    choice = msgspec.defstruct("Choice", [("message", dict | None, None), ("finish_reason", Any, None)])
    choices = list[choice] | None  # type: ignore[valid-type]  # (a type made here: mypy cannot follow it)
    body = msgspec.defstruct("Body", [("model", Any, None), ("choices", choices, None), ("usage", Any, None)])
    response = msgspec.defstruct("Response", [("status_code", Any, None), ("body", body | None, None)])
    fields = [("custom_id", Any, None), ("response", response | None, None), ("error", Any, None)]
    line = msgspec.defstruct("Line", [*fields, ("method", Any, unset), ("body", Any, unset)])
    return msgspec.json.Decoder(line), unset


def _typed_line(line: bytes) -> tuple[str, tuple[str | None, AnswerFields]] | None:
    """(custom_id, _answer_fields) of a Batch line of the two shapes the Batch API writes, a success and an error file's
    line, decoded into typed records; None for any other (an input line, a failed response, a field of another type,
    what msgspec refuses), which read_batch reads as a dict: the same fields either way (100,800 lines: 0.66 s
    typed, 0.72-0.98 s as dicts)."""
    decoder = _line_decoder()
    try:
        r = decoder[0].decode(line) if decoder is not None else None
    except ValueError:  # msgspec.DecodeError and ValidationError
        return None
    if r is None or r.method is not decoder[1] or r.body is not decoder[1]:
        return None
    response, error = r.response, r.error
    body = response.body if response is not None else None
    choice = body.choices[0] if body is not None and body.choices else None
    message = choice.message if choice is not None else None
    if response is not None and response.status_code == 200 and message is not None and not error:
        failure = None
    elif isinstance(error, dict):  # a line of the error file
        failure = _batch_error(error)
    else:
        return None
    custom_id = r.custom_id
    custom_id = custom_id if type(custom_id) is str else str(custom_id if custom_id is not None else "")
    model = body.model if body is not None and type(body.model) is str else None
    return custom_id, (model, _fields(failure, message, choice, Usage.of(body.usage if body is not None else None)))


def _batch_error(error: dict[str, Any]) -> str:
    return f"batch: {error.get('code') or 'error'}: {' '.join(str(error.get('message') or '').split())}"


def _fields(error: str | None, message: dict[str, Any] | None, choice: Any, usage: Usage) -> AnswerFields:
    """An Answer's fields from a Batch line's parts: choice, the first choice (a dict or a typed record), read only
    when message, its message, is there."""
    counts = (usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)
    if message is None:
        return (error, None, None, None, 0.0, *counts)
    content = message.get("content")
    finish = choice.get("finish_reason") if type(choice) is dict else choice.finish_reason
    return (error, content if type(content) is str else None, _text_or_none(finish), None, 0.0, *counts)


def _answer_fields(r: dict[str, Any]) -> tuple[str | None, AnswerFields] | None:
    """The model that answered a Batch line and its Answer's fields; None for a line of the Batch input format."""
    if "method" in r or "body" in r:
        return None
    response, failure = r.get("response"), r.get("error")
    body, status = (response.get("body"), response.get("status_code")) if type(response) is dict else (None, None)
    model, found, usage = None, None, None
    if type(body) is dict:
        model = body.get("model")
        model = model if type(model) is str else None
        found = reply(body)
        usage = body.get("usage")
    choice, message = found if found is not None else (None, None)
    if status == 200 and message is not None and not failure:
        error = None
    elif isinstance(failure, dict):  # a line of the error file
        error = _batch_error(failure)
    else:
        error = f"batch: {error_text(status, body, json.dumps(body, ensure_ascii=False))}"
    return model, _fields(error, message, choice, Usage.of(usage))


def batch_notes(summary: BatchSummary, config: ModelConfig) -> list[str]:
    """What a user must know about a scored batch: prompts with no line, answers from another model."""
    notes = []
    if summary.missing:
        notes.append(
            f"{summary.missing} of {summary.planned} prompts have no answer line: pass the batch's error file "
            "too "
            f"(they count as failed tasks, reason {MISSING_FROM_BATCH})"
        )
    others = other_models(summary.models, config.model)
    if others:
        notes.append(
            f"answers come from model {', '.join(others)}, not --model {config.model} (accepted with "
            "--accept-other-model)"
        )
    return notes


def other_models(names: Iterable[str], model: str) -> list[str]:
    """The model names that are not model nor a dated snapshot of it: ('gpt-4o-2024-08-06', 'gpt-4o') -> [];
    ('gpt-4o-mini-2024-07-18', 'gpt-4o') -> that name (another model, whose name only starts the same)."""
    snapshot = re.compile(rf"{re.escape(model)}-(\d{{4}}-\d{{2}}-\d{{2}}|\d{{4}})")
    return [m for m in names if m != model and not snapshot.fullmatch(m)]


def _seconds(value: object) -> float | None:
    if type(value) not in (int, float):  # bool and any subclass are no count of seconds
        return None
    number = cast(float, value)
    return number if math.isfinite(number) and 0 <= number <= 10**7 else None


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Answers:
    """What a model run or --score collected: the answers that count, the request summary, and the files scored."""

    best: dict[tuple[str, int], Answer]  # Collected.best
    summary: Requests
    log: dict[str, Any]  # {"name", "sha256", "unreadable_lines"}: the files scored


def files_sha256(paths: list[Path]) -> str | None:
    """SHA-256 of the files' bytes one after the other, read in blocks (None when none exists). Reading and hashing
    release the GIL, so a caller can run this on a thread beside parsing the same files."""
    present = [p for p in paths if p.exists()]
    digest = hashlib.sha256()
    for path in present:
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
    return digest.hexdigest() if present else None


def log_info(paths: list[Path], unreadable: dict[str, list[int]], sha256: str | None) -> dict[str, Any]:
    """The files scored, their SHA-256 (files_sha256) and the lines that could not be read."""
    return {"name": ", ".join(display(p) for p in paths), "sha256": sha256, "unreadable_lines": unreadable}


@dataclass(slots=True, frozen=True)
class LogSummary:
    """Every invocation in a log, as the scorer sees them (log_summary)."""

    invocations: int
    planned: int
    answered: int
    failed: int
    not_run: int
    failures: dict[str, int]  # failure kind -> requests, the most first
    cut_by_length: int
    cuts: Cuts
    context_overflow_by_server: int

    def as_json(self) -> dict[str, Any]:
        return {
            "invocations": self.invocations,
            "planned": self.planned,
            "answered": self.answered,
            "failed": self.failed,
            "not_run": self.not_run,
            "failures": self.failures,
            "cut_by_length": self.cut_by_length,
            **self.cuts._asdict(),
            "context_overflow_by_server": self.context_overflow_by_server,
        }


def log_summary(collected: Collected, items: list[Item], config: ModelConfig) -> LogSummary:
    """Every invocation in a log, as the scorer sees them: planned requests, answered, failed, not yet run."""
    outcomes = [collected.best.get(key) for key in planned_keys(items, config)]
    failures = Counter(
        failure_kind(r.error) for r in outcomes if r is not None and r.error and not context_refusal(r.error)
    )
    cut = [r for r in outcomes if r is not None and not r.error and r.finish_reason == "length"]
    cap = config.max_output_tokens
    return LogSummary(
        len(collected.headers),
        len(outcomes),
        sum(1 for r in outcomes if r is not None and not r.error),
        sum(failures.values()),
        sum(1 for r in outcomes if r is None),
        dict(failures.most_common()),
        len(cut),
        Cuts.of([end for r in cut if (end := context_end(r.prompt_tokens, r.completion_tokens, cap))]),
        sum(1 for r in outcomes if r is not None and context_refusal(r.error)),
    )


@dataclass(slots=True, frozen=True)
class RunRequests:
    """results.json's request summary of a model run: this invocation's, then every invocation's in the log."""

    sent: Sent
    log: LogSummary

    def as_json(self) -> dict[str, Any]:
        return {"mode": "run", **self.sent.as_json(), "log": self.log.as_json()}


@dataclass(slots=True, frozen=True)
class ScoredLogs:
    """results.json's request summary of a --score of logs."""

    files: list[str]
    log: LogSummary

    def as_json(self) -> dict[str, Any]:
        return {"mode": "log", "files": self.files, **self.log.as_json()}


@dataclass(slots=True, frozen=True)
class ScoredBatch:
    """results.json's request summary of a --score of Batch files, with what the user must know (batch_notes)."""

    batch: BatchSummary
    notes: list[str]

    def as_json(self) -> dict[str, Any]:
        return self.batch.to_dict(self.notes)


Requests = RunRequests | ScoredLogs | ScoredBatch  # what a model run or --score says of its requests
