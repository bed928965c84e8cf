"""The OpenAI Batch API: request files (--export-batch), and a whole run through the API (--batch).

In: the measured items and the ModelConfig. Out: request files within the API's limits (export_batch); with --batch,
each part uploaded and its batch created once (the ids kept in --out/batch/state.json, so a re-run resumes and never
submits twice), polled, and the output and error files downloaded for scoring.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import re
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard, overload

from .._article import BenchmarkError, display, json_bytes, sha256_hex
from ..progress import duration
from .config import Redactor, auth_headers, key_and_redactor, public_url
from .endpoint import RETRY_STATUSES, error_text, printable, url_hint
from .jobs import plan_jobs
from .pacing import retry_wait
from .transport import server_count, untrusted_json

if TYPE_CHECKING:
    from ..measure import Measurement
    from .config import ModelConfig


def file_mode() -> int:
    """The mode a new file gets under the current umask (mkstemp's own files are 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, data: bytes) -> None:
    try:
        _put_whole(path, [data])
    except OSError as e:
        raise BenchmarkError(f"{display(path)}: cannot write it ({e.strerror}); choose another path") from None


def _put_whole(path: Path, chunks: Iterable[bytes]) -> None:
    """A file written into a temporary one beside it, then put in place whole (never half a file under its name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(slots=True, frozen=True)
class RequestFile:
    """One Batch API request file that export_batch wrote."""

    file: str  # its path, as shown
    requests: int  # its lines, one request each
    bytes: int  # its size
    sha256: str  # of its bytes

    def to_dict(self) -> dict[str, Any]:
        """As the manifest lists it."""
        return asdict(self)


def export_batch(
    measured: Measurement, config: ModelConfig, path: Path, max_requests: int, max_bytes: int
) -> list[RequestFile]:
    """The prompts as OpenAI Batch API request files, each within max_requests lines and max_bytes; custom_id
    is the prompt's SHA-256 prefix and repeat. One file is written as path; several as path's stem with
    .001-of-003 and so on. Lines are streamed to disk: no more than one prompt is in memory at a time."""
    parts: list[tuple[Path, int, int, str]] = []  # (temp file, requests, bytes, sha256)
    handle, count, size, digest = None, 0, 0, hashlib.sha256()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for job in plan_jobs(measured.items, config):
            line = (
                json.dumps(
                    {
                        "custom_id": f"{job.sha[:40]}-r{job.repeat}",
                        "method": "POST",
                        "url": "/v1/chat/completions",
                        "body": config.body(job.item.prompt(), job.repeat),
                    },
                    ensure_ascii=False,
                )
                + "\n"
            ).encode("utf-8")
            if len(line) > max_bytes:
                row = job.item.row
                raise BenchmarkError(
                    f"the request for question {row.question_id} ({row.format}, {row.size}) takes "
                    f"{len(line):,} bytes, over --batch-max-bytes {max_bytes:,}; raise it, or leave that size or "
                    "format out"
                )
            if handle is not None and (count == max_requests or size + len(line) > max_bytes):
                handle.close()
                parts.append((Path(handle.name), count, size, digest.hexdigest()))
                handle = None
            if handle is None:
                handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 (open across lines: one part file at a time)
                    "wb", prefix=f".{path.name}.", dir=path.parent, delete=False
                )
                count, size, digest = 0, 0, hashlib.sha256()
            handle.write(line)
            digest.update(line)
            count, size = count + 1, size + len(line)
        if handle is not None:
            handle.close()
            parts.append((Path(handle.name), count, size, digest.hexdigest()))
            handle = None
        names = (
            [path]
            if len(parts) <= 1
            else [
                path.with_name(f"{path.stem}.{k:03d}-of-{len(parts):03d}{path.suffix}")
                for k in range(1, len(parts) + 1)
            ]
        )
        if not parts:
            write_atomic(path, b"")
        for (tmp, *_), name in zip(parts, names):
            os.chmod(tmp, file_mode())
            os.replace(tmp, name)
        for old in [path, *export_files(path)]:  # an earlier export's parts would be uploaded by mistake
            if old not in names:
                old.unlink(missing_ok=True)
    except OSError as e:
        raise BenchmarkError(f"{display(path)}: cannot write it ({e.strerror}); choose another path") from None
    finally:
        if handle is not None:
            handle.close()
        for tmp, *_ in parts:
            Path(tmp).unlink(missing_ok=True)
    return [RequestFile(display(name), n, b, sha) for (_, n, b, sha), name in zip(parts, names)] or [
        RequestFile(display(path), 0, 0, sha256_hex(b""))
    ]


def export_files(path: Path) -> list[Path]:
    """The files of an export to path that exist: path, then its numbered parts (stem.001-of-003.suffix ...)."""
    split = re.compile(rf"{re.escape(path.stem)}\.\d{{3}}-of-\d{{3}}{re.escape(path.suffix)}")
    parts = sorted(p for p in path.parent.iterdir() if split.fullmatch(p.name)) if path.parent.is_dir() else []
    return ([path] if path.exists() else []) + parts


# Batch jobs end to end (--batch): the export above, then OpenAI's Files and Batches endpoints at --base-url.
# Every id the provider gives is in --out/batch/state.json before the next step, so a killed command resumes
# where it was (polling, or downloading) and never uploads or pays for a batch twice.
BATCH_DIR = "batch"
BATCH_STATE = "state.json"
BATCH_FINAL = ("completed", "failed", "expired", "cancelled")


class BatchAPI:
    """The Files and Batches endpoints, through httpx2 (proxies and certificates as for a run). Load and
    connection faults are retried like a request's (--max-retries, backoff or the server's Retry-After);
    any other answer stops the command with the server's words."""

    def __init__(self, config: ModelConfig, key: str, redact: Redactor) -> None:
        import httpx2

        self.config, self.redact, self.httpx = config, redact, httpx2
        headers = {**auth_headers(key), "Accept-Encoding": "identity"}
        self.client = httpx2.Client(headers=headers, follow_redirects=False, trust_env=True, timeout=config.timeout)
        self.rng = random.Random(f"{config.seed}/batch")

    @overload
    def call(self, method: str, path: str, what: str, *, stream_to: Path, **kwargs: Any) -> None: ...
    @overload
    def call(self, method: str, path: str, what: str, *, stream_to: None = None, **kwargs: Any) -> dict[str, Any]: ...
    def call(self, method: str, path: str, what: str, **kwargs: Any) -> dict[str, Any] | None:
        """The parsed JSON answer (or, with stream_to, the body written there); BenchmarkError when it fails."""
        url = self.config.base_url.rstrip("/") + path
        target = kwargs.pop("stream_to", None)
        for attempt in itertools.count(1):
            wait_headers: dict[str, str] = {}
            try:
                with self.client.stream(method, url, **kwargs) as response:
                    status, wait_headers = response.status_code, dict(response.headers)
                    if 200 <= status < 300 and target is not None:
                        _put_whole(target, response.iter_bytes())  # written as it comes
                        return None
                    raw = response.read()
                if 200 <= status < 300:
                    parsed = untrusted_json(raw.decode("utf-8", errors="replace"))
                    if isinstance(parsed, dict):
                        return parsed
                    error, retry = f"HTTP {status}: the answer is not a JSON object", False
                else:
                    raw_text = raw.decode("utf-8", errors="replace")
                    error = error_text(status, untrusted_json(raw_text), raw_text)
                    retry = status in RETRY_STATUSES or status >= 500
                    if status in (301, 302, 303, 307, 308):
                        error += " (a redirect: not followed, the key goes to the host of --base-url only)"
                    if status == 404:
                        error += url_hint(self.config.base_url)
            except (self.httpx.HTTPError, OSError) as e:
                error, retry = f"connection error: {type(e).__name__}: {e}", True
            if not retry or attempt > self.config.max_retries:
                raise BenchmarkError(
                    self.redact(
                        f"{what} at {public_url(url)} failed: {printable(error)}; run the same command again "
                        "to resume (what the provider has is recorded in the batch folder of --out)"
                    )
                )
            time.sleep(retry_wait(wait_headers, attempt, self.rng))
        raise AssertionError("unreachable: itertools.count never ends")  # what mypy cannot see

    def close(self) -> None:
        self.client.close()


@dataclass(slots=True)
class Part:
    """A part of a --batch run as --out/batch/state.json keeps it: filled in step by step, each id saved before the
    next step (to_dict). None: not known yet."""

    file: str  # the request file's name, in the batch folder
    sha256: str  # of its bytes: a part already submitted is found again by it
    requests: int  # its requests
    input_file_id: str | None = None  # the upload's file id
    batch_id: str | None = None  # the batch made of it
    status: str | None = None  # the batch's, as last polled (saved with batch_id, even when None)
    total: int | None = None  # the batch's request counts, as last polled
    completed: int | None = None
    failed: int | None = None
    output_file_id: str | None = None  # the batch's output and error files, once it has them
    error_file_id: str | None = None
    errors: list[str] | None = None  # why the batch failed, in the provider's words (at most 5)
    output_path: str | None = None  # the names the output and error files were downloaded as
    errors_path: str | None = None

    @classmethod
    def of(cls, entry: dict[str, Any]) -> Part:
        """A part as state.json holds it (with PART_KEYS at least)."""
        return cls(**{f.name: entry[f.name] for f in fields(cls) if f.name in entry})

    def to_dict(self) -> dict[str, Any]:
        """The fields known so far, in the order they become known (status from the batch's creation on)."""
        return {
            f.name: value
            for f in fields(self)
            if (value := getattr(self, f.name)) is not None or (f.name == "status" and self.batch_id is not None)
        }


PART_KEYS = {"file", "sha256", "requests"}  # what a part of state.json has from the start


def batch_state(folder: Path) -> list[Part]:
    """The parts that state.json in folder records (none when it is missing)."""
    path = folder / BATCH_STATE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as e:
        raise BenchmarkError(
            f"{display(path)}: cannot read it ({e}); it holds the ids of batches already paid for: restore it, "
            "or move it aside to submit again"
        ) from None
    parts = state.get("parts") if isinstance(state, dict) else None
    if not isinstance(parts, list) or not all(isinstance(p, dict) and p.keys() >= PART_KEYS for p in parts):
        raise BenchmarkError(
            f"{display(path)}: not a batch state of this tool; restore it, or move it aside to submit again"
        )
    return [Part.of(p) for p in parts]


def run_batch(
    measured: Measurement, config: ModelConfig, out_dir: Path, poll_interval: float, max_requests: int, max_bytes: int
) -> tuple[list[Path], list[Part]]:
    """--batch: export the requests into --out/batch, upload each part and create its batch (once: the ids are
    recorded before the next step), poll until every batch has ended, download the output and error files.
    Returns the files to score and each part's record."""
    folder = out_dir / BATCH_DIR
    key, redact = key_and_redactor(config)
    state = batch_state(folder)
    written = export_batch(measured, config, folder / "input.jsonl", max_requests, max_bytes)
    parts = []
    for request_file in filter(lambda f: f.requests, written):
        # a part already submitted (same bytes) is taken up where it was, never submitted again
        part = next((p for p in state if p.sha256 == request_file.sha256), None)
        if part is None:
            part = Part(Path(request_file.file).name, request_file.sha256, request_file.requests)
            state.append(part)
        parts.append(part)

    def save() -> None:
        write_atomic(folder / BATCH_STATE, json_bytes({"parts": [p.to_dict() for p in state]}))

    api = BatchAPI(config, key, redact)
    try:
        for k, part in enumerate(parts, 1):
            _submit(api, part, f"batch {k}/{len(parts)}", folder, save)
        _poll(api, parts, poll_interval, save)
        files = []
        for k, part in enumerate(parts, 1):
            files += _download(api, part, f"batch {k}/{len(parts)}", folder, save)
    finally:
        api.close()
    return files, parts


def _submit(api: BatchAPI, part: Part, label: str, folder: Path, save: Callable[[], None]) -> None:
    """A part's file uploaded and its batch created, each step once: its id saved before the next step."""
    if not part.input_file_id:
        with open(folder / part.file, "rb") as f:
            uploaded = api.call(
                "POST",
                "/files",
                f"{label}: uploading {part.file}",
                data={"purpose": "batch"},
                files={"file": (part.file, f, "application/jsonl")},
            )
        part.input_file_id = _batch_id(uploaded, "the upload")
        save()
        _say(f"{label}: uploaded {part.file} ({part.requests} requests) as {part.input_file_id}")
    if not part.batch_id:
        created = api.call(
            "POST",
            "/batches",
            f"{label}: creating the batch",
            json={
                "input_file_id": part.input_file_id,
                "endpoint": "/v1/chat/completions",
                "completion_window": "24h",
                "metadata": {"tool": "graphrag-format-benchmark", "sha256": part.sha256[:16]},
            },
        )
        part.batch_id = _batch_id(created, "the new batch")
        status = created.get("status")
        part.status = status if isinstance(status, str) else None
        save()
        _say(
            f"{label}: created {part.batch_id}; its id is kept in {display(folder / BATCH_STATE)}: a killed "
            "command "
            "resumes polling it"
        )


def _poll(api: BatchAPI, parts: list[Part], poll_interval: float, save: Callable[[], None]) -> None:
    """Every part's batch polled until each has ended; a line for each change."""
    shown: dict[str, str] = {}
    started = time.monotonic()
    while True:
        for k, part in enumerate(parts, 1):
            if part.status in BATCH_FINAL:
                continue
            batch_id = str(part.batch_id)
            batch = api.call(
                "GET", f"/batches/{urllib.parse.quote(batch_id, safe='')}", f"batch {k}/{len(parts)}: polling"
            )
            _take_batch(part, batch)
            line = (
                f"batch {k}/{len(parts)} {batch_id}: {part.status}, {part.completed or 0}/"
                f"{part.total or part.requests} done, {part.failed or 0} failed"
            )
            if shown.get(batch_id) != line:
                save()
                shown[batch_id] = line
                _say(f"{line} ({duration(time.monotonic() - started)})")
        if all(part.status in BATCH_FINAL for part in parts):
            return
        time.sleep(poll_interval)


def _download(api: BatchAPI, part: Part, label: str, folder: Path, save: Callable[[], None]) -> list[Path]:
    """An ended batch's output and error files, each downloaded once into folder."""
    files = []
    for file_id, stem in ((part.output_file_id, "output"), (part.error_file_id, "errors")):
        if not file_id:
            continue
        name = f"{stem}.{part.file.removeprefix('input.')}"
        if (part.output_path if stem == "output" else part.errors_path) != name or not (folder / name).exists():
            api.call(
                "GET",
                f"/files/{urllib.parse.quote(file_id, safe='')}/content",
                f"{label}: downloading its {stem} file",
                stream_to=folder / name,
            )
            if stem == "output":
                part.output_path = name
            else:
                part.errors_path = name
            save()
        files.append(folder / name)
    return files


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _batch_id(answer: dict[str, Any], what: str) -> str:
    """The id of the object the provider made (answer: its JSON); BenchmarkError when it has none (_an_id)."""
    value = answer.get("id")
    if not _an_id(value):
        raise BenchmarkError(f"{what} came back without an id the tool can keep: {printable(json.dumps(answer)[:200])}")
    return value


def _an_id(value: object) -> TypeGuard[str]:
    """Whether a value from the provider can be kept as an id: printable text of 1 to 200 characters."""
    return isinstance(value, str) and bool(value) and len(value) <= 200 and value.isprintable()


def _take_batch(part: Part, batch: dict[str, Any]) -> None:
    """A batch object's fields that matter here, each checked before it is kept (a count or an id that is not one
    leaves what was kept)."""
    status = batch.get("status")
    part.status = status if isinstance(status, str) and status.isprintable() and len(status) < 40 else "unknown"
    counts = batch.get("request_counts")
    if isinstance(counts, dict):
        total, completed, failed = (server_count(counts.get(name)) for name in ("total", "completed", "failed"))
        part.total = part.total if total is None else total
        part.completed = part.completed if completed is None else completed
        part.failed = part.failed if failed is None else failed
    output_file_id, error_file_id = batch.get("output_file_id"), batch.get("error_file_id")
    part.output_file_id = output_file_id if _an_id(output_file_id) else part.output_file_id
    part.error_file_id = error_file_id if _an_id(error_file_id) else part.error_file_id
    errors = batch.get("errors")
    data = errors.get("data") if isinstance(errors, dict) else None
    if isinstance(data, list) and data:
        part.errors = [
            printable(" ".join(f"{e.get('code', '')}: {e.get('message', '')}".split()))[:300]
            for e in data[:5]
            if isinstance(e, dict)
        ]
