"""Collecting the answers that count: from logs of this tool, or from Batch API output and error files.

In: the files, read a line at a time, and the measured items. Out: per (prompt, repeat), the one answer that counts as
a compact Answer (Collected.best), and a summary of what the files held. A 100,800-line Batch output is never in
memory whole.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, NamedTuple, cast

from benchmark import InputProblems, display

from .cores import forked, two_cores
from .runner.endpoint import context_refusal, error_text, failure_kind
from .runner.jobs import context_end, cut_before_cap, planned_keys
from .runner.log import file_lines
from .runner.send import reply_message
from .runner.transport import server_count

if TYPE_CHECKING:
    from .measure import Item
    from .runner.config import ModelConfig


MISSING_FROM_BATCH = "missing_from_batch_output"


class Answer(NamedTuple):
    """One answer as scoring reads it: the log record's fields, its usage reduced to the three counts used."""

    error: str | None
    content: object
    finish_reason: object
    latency_s: object
    retry_wait_s: object
    prompt_tokens: object  # usage, as the server counted (any JSON value: checked where it is used)
    completion_tokens: object
    cached_tokens: int | None

    @classmethod
    def of(cls, record: dict) -> Answer:
        """The answer of a log line; a field that is not what it can be (a count of 401 digits, a finish reason that is
        an object, an error that is not text) is read as absent, never trusted."""
        usage = record.get("usage")
        counts = (
            (
                server_count(usage.get("prompt_tokens")),
                server_count(usage.get("completion_tokens")),
                _cached_tokens(usage),
            )
            if isinstance(usage, dict)
            else (None, None, None)
        )
        error = record.get("error")
        error = error if error is None or isinstance(error, str) else "the log's error field is not text"
        return cls(
            error,
            record.get("content"),
            _text_or_none(record.get("finish_reason")),
            _seconds(record.get("latency_s")),
            _seconds(record.get("retry_wait_s")),
            *counts,
        )


class Collected:
    """The answers that count, gathered as the lines stream by, never the whole file in memory: for each
    (prompt, repeat) of this command, by its model with its sampling, the first success, else the last
    failure, as an Answer. Also the logs' run lines and the lines that could not be read."""

    def __init__(self, items: list[Item], config: ModelConfig) -> None:
        self.config = config
        self.shas = {item.row["prompt_sha256"] for item in items}
        self.samplings = [config.sampling(r) for r in range(config.repeats)]
        self.best: dict[tuple[str, int], Answer] = {}
        self.headers: list[dict] = []
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
                self.headers.append(r)
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


FORK_BYTES = 8_000_000  # from this many bytes of Batch files, collect_batch reads the second half on a forked process


def collect_batch(paths: list[Path], items: list[Item], config: ModelConfig) -> tuple[Collected, dict]:
    """OpenAI Batch API output and error files, in any order, streamed; and a summary. custom_id is
    '<prompt SHA-256 prefix>-r<repeat>'. Every planned prompt with no line becomes a failed request
    (missing_from_batch_output); a line that matches no prompt, a custom_id given twice with different
    bytes, and a line of the Batch input format are errors that name the file and line. Each line is read on its own
    (batch_lines), the files' second half on a forked process (cores.forked), then taken in the files' order here."""
    collected = Collected(items, config)
    by_prefix = {item.row["prompt_sha256"][:40]: item.row["prompt_sha256"] for item in items}
    seen: dict[str, tuple[str, int, int]] = {}  # custom_id -> (file, line, hash of the line's bytes)
    problems: list[str] = []
    models: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    best, repeats = collected.best, config.repeats
    for path, read in _read_in_halves(paths):  # a file cut in two comes as its two parts, one after the other
        name = display(path)
        for line_no, custom_id, digest, model, fields in read:
            if custom_id is None:
                collected.unreadable.setdefault(name, []).append(line_no)
                continue
            if fields is None:
                problems.append(
                    f"{name} line {line_no} is a Batch input line (custom_id, method, url, body): pass the batch's "
                    "output file and its error file, not the file that was uploaded"
                )
                continue
            prefix, _, repeat = custom_id.rpartition("-r")
            sha = by_prefix.get(prefix)
            repeat = int(repeat) if repeat.isdigit() and repeat.isascii() and len(repeat) <= 6 else repeats
            if sha is None or repeat >= repeats:
                problems.append(
                    f"{name} line {line_no}: custom_id {custom_id!r} matches no prompt of this command; pass the same "
                    "--model, matrix and prompt flags as the --export-batch run, or the right file"
                )
                continue
            first = seen.get(custom_id)
            if first is not None:
                if first[2] != digest:
                    problems.append(
                        f"{name} line {line_no}: custom_id {custom_id!r} was given before, at {first[0]} line "
                        f"{first[1]}, "
                        "with other content; keep one of the two files"
                    )
                continue
            seen[custom_id] = (name, line_no, digest)
            if model is not None:
                models[model] += 1
            if fields[0] is not None:
                failures[fields[0]] += 1
            old = best.get((sha, repeat))
            if old is None or old.error is not None:  # Collected.offer, inlined: a success is never replaced
                best[(sha, repeat)] = Answer(*fields)
    if problems:
        raise InputProblems(problems, "")
    planned = planned_keys(items, config)
    missing = [key for key in planned if key not in collected.best]
    for sha, repeat in missing:
        collected.offer(sha, repeat, Answer.of({"error": MISSING_FROM_BATCH, "retry_wait_s": 0.0}))
    failures[MISSING_FROM_BATCH] += len(missing)
    failures = +failures  # no zero count of missing lines
    summary = {
        "files": [display(p) for p in paths],
        "lines": len(seen),
        "planned": len(collected.best),
        "missing": len(missing),
        "failed": sum(failures.values()),
        "failures": dict(failures.most_common()),
        "models": dict(models.most_common()),
    }
    return collected, summary


Segment = tuple[Path, int, "int | None", int]  # a file, the byte range of its lines read, and the lines before it


def _read_in_halves(paths: list[Path]) -> Iterator[tuple[Path, list[tuple]]]:
    """Each file's lines as batch_lines reads them, in the files' order, a line number each counted from the file's
    start: the second half of the bytes read on a forked process while this one reads the first."""
    first, second = _halves(paths)
    if not second:
        for segment in first:
            yield segment[0], batch_lines(segment)
        return
    with forked(lambda: [batch_lines(segment) for segment in second]) as theirs:
        mine = [batch_lines(segment) for segment in first]
        yield from zip([segment[0] for segment in (*first, *second)], (*mine, *theirs()))


def _halves(paths: list[Path]) -> tuple[list[Segment], list[Segment]]:
    """The files cut in two at the line that begins at or after half their bytes, from FORK_BYTES on two cores; else
    all in the first."""
    sizes = [path.stat().st_size if path.is_file() else 0 for path in paths]
    if sum(sizes) < FORK_BYTES or not two_cores():
        return [(path, 0, None, 0) for path in paths], []
    before, half = 0, sum(sizes) // 2
    for k, (path, size) in enumerate(zip(paths, sizes)):
        if before + size > half:
            cut = 0
            if half > before:
                with open(path, "rb") as f:
                    f.seek(half - before - 1)
                    f.readline()  # to the beginning of the line that begins at or after the half
                    cut = f.tell()
            first: list[Segment] = [(p, 0, None, 0) for p in paths[:k]] + [(path, 0, cut, 0)] * (cut > 0)
            second: list[Segment] = [(path, cut, None, _newlines(path, cut))] * (cut < size)
            return first, second + [(p, 0, None, 0) for p in paths[k + 1 :]]
        before += size
    return [(path, 0, None, 0) for path in paths], []


def _newlines(path: Path, end: int) -> int:
    """The lines of a file that end before byte end."""
    count = 0
    with open(path, "rb") as f:
        while end > 0:
            block = f.read(min(end, 1 << 20))
            if not block:
                break
            count += block.count(b"\n")
            end -= len(block)
    return count


def batch_lines(segment: Segment) -> list[tuple]:
    """Each line of a Batch file's segment read on its own, in order: (line number, custom_id, hash of its bytes, the
    model that answered, the Answer's fields: a plain tuple, which a forked reader pickles back at half the cost of a
    NamedTuple); custom_id None for a line that is not a JSON object, the fields None for a line of the Batch input
    format."""
    path, start, end, lines_before = segment
    read: list[tuple] = []
    for line_no, line, r in file_lines(path, start, end):
        line_no += lines_before
        if r is None:
            read.append((line_no, None, None, None, None))
            continue
        custom_id = r.get("custom_id")
        custom_id = custom_id if type(custom_id) is str else str(custom_id if custom_id is not None else "")
        if "method" in r or "body" in r:
            read.append((line_no, custom_id, None, None, None))
            continue
        response = r.get("response")
        body, status = (response.get("body"), response.get("status_code")) if type(response) is dict else (None, None)
        model, message, usage = None, None, None
        if type(body) is dict:
            model = body.get("model") if type(body.get("model")) is str else None
            message = reply_message(body)
            usage = body.get("usage")
        if status == 200 and message is not None and not r.get("error"):
            error = None
        elif isinstance(r.get("error"), dict):  # a line of the error file
            error = (
                f"batch: {r['error'].get('code') or 'error'}: {' '.join(str(r['error'].get('message') or '').split())}"
            )
        else:
            error = f"batch: {error_text(status, body, json.dumps(body, ensure_ascii=False))}"
        counts = (
            (
                server_count(usage.get("prompt_tokens")),
                server_count(usage.get("completion_tokens")),
                _cached_tokens(usage),
            )
            if type(usage) is dict
            else (None, None, None)
        )
        content = message.get("content") if message is not None else None
        fields = (
            error,
            content if type(content) is str else None,
            _text_or_none(cast(dict, body)["choices"][0].get("finish_reason")) if message is not None else None,
            None,
            0.0,
            *counts,
        )
        # the line's hash: 64 bits, a collision is no practical concern
        read.append((line_no, custom_id, hash(line.strip()), model, fields))
    return read


def batch_notes(summary: dict, config: ModelConfig) -> list[str]:
    """What a user must know about a scored batch: prompts with no line, answers from another model."""
    notes = []
    if summary["missing"]:
        notes.append(
            f"{summary['missing']} of {summary['planned']} prompts have no answer line: pass the batch's error file "
            "too "
            f"(they count as failed tasks, reason {MISSING_FROM_BATCH})"
        )
    others = other_models(summary["models"], config.model)
    if others:
        notes.append(
            f"answers come from model {', '.join(others)}, not --model {config.model} (accepted with "
            "--accept-other-model)"
        )
    return notes


def other_models(names, model: str) -> list[str]:
    """The model names that are not model nor a dated snapshot of it: ('gpt-4o-2024-08-06', 'gpt-4o') -> [];
    ('gpt-4o-mini-2024-07-18', 'gpt-4o') -> that name (another model, whose name only starts the same)."""
    snapshot = re.compile(rf"{re.escape(model)}-(\d{{4}}-\d{{2}}-\d{{2}}|\d{{4}})")
    return [m for m in names if m != model and not snapshot.fullmatch(m)]


def _cached_tokens(usage: object) -> int | None:
    """usage.prompt_tokens_details.cached_tokens (OpenAI, vLLM), the prompt tokens a prefix cache served."""
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    return server_count(details.get("cached_tokens")) if isinstance(details, dict) else None


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
    summary: dict  # mode run | log | batch, counts, failures by reason, notes
    log: dict  # {"name", "sha256", "unreadable_lines"}: the files scored


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


def log_info(paths: list[Path], unreadable: dict[str, list[int]], sha256: str | None) -> dict:
    """The files scored, their SHA-256 (files_sha256) and the lines that could not be read."""
    return {"name": ", ".join(display(p) for p in paths), "sha256": sha256, "unreadable_lines": unreadable}


def log_summary(collected: Collected, items: list[Item], config: ModelConfig) -> dict:
    """Every invocation in a log, as the scorer sees them: planned requests, answered, failed, not yet run."""
    outcomes = [collected.best.get(key) for key in planned_keys(items, config)]
    failures = Counter(
        failure_kind(r.error) for r in outcomes if r is not None and r.error and not context_refusal(r.error)
    )
    return {
        "invocations": len(collected.headers),
        "planned": len(outcomes),
        "answered": sum(1 for r in outcomes if r is not None and not r.error),
        "failed": sum(failures.values()),
        "not_run": sum(1 for r in outcomes if r is None),
        "failures": dict(failures.most_common()),
        "cut_by_length": sum(1 for r in outcomes if r is not None and not r.error and r.finish_reason == "length"),
        **cut_before_cap(
            [
                end
                for r in outcomes
                if r is not None
                and not r.error
                and r.finish_reason == "length"
                and (end := context_end(r.prompt_tokens, r.completion_tokens, config.max_output_tokens))
            ]
        ),
        "context_overflow_by_server": sum(1 for r in outcomes if r is not None and context_refusal(r.error)),
    }
