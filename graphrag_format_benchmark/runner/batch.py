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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from .._article import BenchmarkError, display, json_bytes, sha256_hex
from ..progress import duration
from .config import Redactor, public_url
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
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except OSError as e:
        raise BenchmarkError(f"{display(path)}: cannot write it ({e.strerror}); choose another path") from None


def export_batch(
    measured: Measurement, config: ModelConfig, path: Path, max_requests: int, max_bytes: int
) -> list[dict[str, Any]]:
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
        split = re.compile(rf"{re.escape(path.stem)}\.\d{{3}}-of-\d{{3}}{re.escape(path.suffix)}")
        for old in [*path.parent.iterdir(), path]:  # an earlier export's parts would be uploaded by mistake
            if old not in names and (old == path or split.fullmatch(old.name)):
                old.unlink(missing_ok=True)
    except OSError as e:
        raise BenchmarkError(f"{display(path)}: cannot write it ({e.strerror}); choose another path") from None
    finally:
        if handle is not None:
            handle.close()
        for tmp, *_ in parts:
            Path(tmp).unlink(missing_ok=True)
    return [
        {"file": display(name), "requests": n, "bytes": b, "sha256": sha} for (_, n, b, sha), name in zip(parts, names)
    ] or [{"file": display(path), "requests": 0, "bytes": 0, "sha256": sha256_hex(b"")}]


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
        headers = {"User-Agent": "graphrag-format-benchmark", "Accept-Encoding": "identity"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
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
                        _stream_into(target, response)
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


def _stream_into(path: Path, response: Any) -> None:  # an httpx2 response: httpx2 ships no types
    """A downloaded file, written as it comes and put in place whole (never half a file under its name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in response.iter_bytes():
                f.write(chunk)
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def batch_state(folder: Path) -> dict[str, Any]:
    path = folder / BATCH_STATE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"parts": []}
    except (OSError, ValueError) as e:
        raise BenchmarkError(
            f"{display(path)}: cannot read it ({e}); it holds the ids of batches already paid for: restore it, "
            "or move it aside to submit again"
        ) from None
    if (
        not isinstance(state, dict)
        or not isinstance(state.get("parts"), list)
        or not all(isinstance(p, dict) for p in state["parts"])
    ):
        raise BenchmarkError(
            f"{display(path)}: not a batch state of this tool; restore it, or move it aside to submit again"
        )
    return state


def run_batch(
    measured: Measurement, config: ModelConfig, out_dir: Path, poll_interval: float, max_requests: int, max_bytes: int
) -> tuple[list[Path], list[dict[str, Any]]]:
    """--batch: export the requests into --out/batch, upload each part and create its batch (once: the ids are
    recorded before the next step), poll until every batch has ended, download the output and error files.
    Returns the files to score and each part's record."""
    folder = out_dir / BATCH_DIR
    key = os.environ.get(config.api_key_env, "") if config.api_key_env else ""
    url_parts = urllib.parse.urlsplit(config.base_url)
    redact = Redactor([key, url_parts.password or "", url_parts.query])
    state = batch_state(folder)
    written = export_batch(measured, config, folder / "input.jsonl", max_requests, max_bytes)
    written = [part for part in written if part["requests"]]
    parts = []
    for part in written:  # a part already submitted (same bytes) is taken up where it was, never submitted again
        entry = next((p for p in state["parts"] if p.get("sha256") == part["sha256"]), None)
        if entry is None:
            entry = {"file": Path(part["file"]).name, "sha256": part["sha256"], "requests": part["requests"]}
            state["parts"].append(entry)
        parts.append(entry)

    def save() -> None:
        write_atomic(folder / BATCH_STATE, json_bytes(state))

    api = BatchAPI(config, key, redact)
    try:
        for k, entry in enumerate(parts, 1):
            _submit(api, entry, f"batch {k}/{len(parts)}", folder, save)
        _poll(api, parts, poll_interval, save)
        files = []
        for k, entry in enumerate(parts, 1):
            files += _download(api, entry, f"batch {k}/{len(parts)}", folder, save)
    finally:
        api.close()
    return files, parts


def _submit(api: BatchAPI, entry: dict[str, Any], label: str, folder: Path, save: Callable[[], None]) -> None:
    """A part's file uploaded and its batch created, each step once: its id saved before the next step."""
    if not entry.get("input_file_id"):
        with open(folder / entry["file"], "rb") as f:
            uploaded = api.call(
                "POST",
                "/files",
                f"{label}: uploading {entry['file']}",
                data={"purpose": "batch"},
                files={"file": (entry["file"], f, "application/jsonl")},
            )
        entry["input_file_id"] = _batch_id(uploaded, "id", "the upload")
        save()
        _say(f"{label}: uploaded {entry['file']} ({entry['requests']} requests) as {entry['input_file_id']}")
    if not entry.get("batch_id"):
        created = api.call(
            "POST",
            "/batches",
            f"{label}: creating the batch",
            json={
                "input_file_id": entry["input_file_id"],
                "endpoint": "/v1/chat/completions",
                "completion_window": "24h",
                "metadata": {"tool": "graphrag-format-benchmark", "sha256": entry["sha256"][:16]},
            },
        )
        entry["batch_id"] = _batch_id(created, "id", "the new batch")
        entry["status"] = created.get("status") if isinstance(created.get("status"), str) else None
        save()
        _say(
            f"{label}: created {entry['batch_id']}; its id is kept in {display(folder / BATCH_STATE)}: a killed "
            "command "
            "resumes polling it"
        )


def _poll(api: BatchAPI, parts: list[dict[str, Any]], poll_interval: float, save: Callable[[], None]) -> None:
    """Every part's batch polled until each has ended; a line for each change."""
    shown: dict[str, str] = {}
    started = time.monotonic()
    while True:
        for k, entry in enumerate(parts, 1):
            if entry.get("status") in BATCH_FINAL:
                continue
            batch = api.call(
                "GET",
                f"/batches/{urllib.parse.quote(entry['batch_id'], safe='')}",
                f"batch {k}/{len(parts)}: polling",
            )
            _take_batch(entry, batch)
            line = (
                f"batch {k}/{len(parts)} {entry['batch_id']}: {entry['status']}, {entry.get('completed', 0)}/"
                f"{entry.get('total') or entry['requests']} done, {entry.get('failed', 0)} failed"
            )
            if shown.get(entry["batch_id"]) != line:
                save()
                shown[entry["batch_id"]] = line
                _say(f"{line} ({duration(time.monotonic() - started)})")
        if all(entry.get("status") in BATCH_FINAL for entry in parts):
            return
        time.sleep(poll_interval)


def _download(api: BatchAPI, entry: dict[str, Any], label: str, folder: Path, save: Callable[[], None]) -> list[Path]:
    """An ended batch's output and error files, each downloaded once into folder."""
    files = []
    for field, stem in (("output_file_id", "output"), ("error_file_id", "errors")):
        if not entry.get(field):
            continue
        name = f"{stem}.{entry['file'].removeprefix('input.')}"
        if entry.get(f"{stem}_path") != name or not (folder / name).exists():
            api.call(
                "GET",
                f"/files/{urllib.parse.quote(entry[field], safe='')}/content",
                f"{label}: downloading its {stem} file",
                stream_to=folder / name,
            )
            entry[f"{stem}_path"] = name
            save()
        files.append(folder / name)
    return files


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _batch_id(answer: dict[str, Any], field: str, what: str) -> str:
    value = answer.get(field)
    if not isinstance(value, str) or not value or len(value) > 200 or not value.isprintable():
        raise BenchmarkError(
            f"{what} came back without an {field} the tool can keep: {printable(json.dumps(answer)[:200])}"
        )
    return value


def _take_batch(entry: dict[str, Any], batch: dict[str, Any]) -> None:
    """A batch object's fields that matter here, each checked before it is kept."""
    status = batch.get("status")
    entry["status"] = status if isinstance(status, str) and status.isprintable() and len(status) < 40 else "unknown"
    counts: dict[str, Any] = batch["request_counts"] if isinstance(batch.get("request_counts"), dict) else {}
    for name in ("total", "completed", "failed"):
        if server_count(counts.get(name)) is not None:
            entry[name] = counts[name]
    for field in ("output_file_id", "error_file_id"):
        value = batch.get(field)
        if isinstance(value, str) and value and len(value) <= 200 and value.isprintable():
            entry[field] = value
    errors = batch.get("errors")
    data = errors.get("data") if isinstance(errors, dict) else None
    if isinstance(data, list) and data:
        entry["errors"] = [
            printable(" ".join(f"{e.get('code', '')}: {e.get('message', '')}".split()))[:300]
            for e in data[:5]
            if isinstance(e, dict)
        ]
