"""With --model: each logged question asked again with its context in every format, and how often the answer agrees
with the answer to the prompt as it was sent.

In: the logged file (read again, a line at a time), the formats, the ModelConfig. Out: requests.jsonl in --out (every
request and its answer, appended as it comes; a request already answered there is not sent again, so a stopped run
resumes), and per format the agreement: the two answers equal after the article's normalization (solver.fold_answer:
trimmed, casefolded, ё as е), failures counted apart, every disagreement kept for reading by hand. Logged questions have
no gold answer: agreement is not accuracy (docs/logged-prompts.md says where accuracy comes from).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import urllib.parse
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

from benchmark import BenchmarkError, display

from ..runner.config import ModelConfig, Redactor, public_url
from ..runner.endpoint import TRANSIENT_STATUSES, Endpoint, context_refusal
from ..runner.log import LOG_NAME, LOG_SCHEMA_VERSION, Log, file_lines
from ..runner.send import outcome_record, send
from ..runner.transport import http_post
from ..solver import fold_answer
from ..statistics import wilson
from .measure import LOGGED, Prepared, prepare_logged
from .read import Unread, parse_line, raw_lines

IN_FLIGHT = 64  # requests built ahead of the senders: memory holds at most these


@dataclass(frozen=True)
class Ask:
    """One request: a logged line's prompt with its context in one format (LOGGED: as it was sent)."""

    line: int
    id: str
    question: str
    format: str
    body: dict
    key: str  # the SHA-256 of the body: the request's identity in the log


def asks(path: Path, formats: list[str], config: ModelConfig, not_sent: dict[str, int] | None = None) -> Iterator[Ask]:
    """Every request, line by line: what was sent, then each format in its place. A request that held a part that is
    not text (an image) is not sent again without it: counted in not_sent by its reason."""
    # the logged prompt asks in its own words
    sampling = {k: v for k, v in config.sampling(0).items() if k != "response_format"}
    for line_no, raw in raw_lines(path):
        logged = None if isinstance(raw, Unread) else parse_line(line_no, raw)
        if logged is None or isinstance(logged, Unread):
            continue
        prepared = prepare_logged(logged, formats)
        if not isinstance(prepared, Prepared):
            continue
        if logged.other_parts:
            reason = f"it held a part that is not text ({', '.join(logged.other_parts)}): not sent again without it"
            if not_sent is not None:
                not_sent[reason] = not_sent.get(reason, 0) + 1
            continue
        for fmt in (LOGGED, *formats):
            if fmt == prepared.own:  # the logged layout's own row is the logged request: sent once, as LOGGED
                continue
            messages = [{"role": role, "content": text} for role, text in logged.messages]
            if fmt != LOGGED:
                messages[prepared.message]["content"] = prepared.prompt_text(fmt)
            body = {"model": config.model, "messages": messages, **sampling}
            key = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
            yield Ask(logged.line, logged.id, logged.question, fmt, body, key)


def answered(log_path: Path) -> dict[str, dict]:
    """The log's answers by request key (a request that failed is sent again; its last outcome is kept)."""
    found = {}
    for _, _, record in file_lines(log_path):
        if record and record.get("type") == "logged_request" and isinstance(record.get("key"), str):
            if record.get("error") is None or record["key"] not in found:
                found[record["key"]] = record
    return found


@dataclass
class Agreement:
    """Per format, the logged questions whose two answers agree, disagree, or could not be compared."""

    agree: dict[str, int] = field(default_factory=dict)
    compared: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    disagreements: list[dict] = field(default_factory=list)  # every one: line, id, question, format, the two answers

    def add(self, line: int, line_id: str, question: str, answers: dict[str, dict]) -> None:
        base = answers.get(LOGGED)
        for fmt, outcome in answers.items():
            if fmt == LOGGED:
                continue
            if not base or base.get("content") is None or outcome.get("content") is None:
                self.failed[fmt] = self.failed.get(fmt, 0) + 1
                continue
            self.compared[fmt] = self.compared.get(fmt, 0) + 1
            if fold_answer(base["content"]) == fold_answer(outcome["content"]):
                self.agree[fmt] = self.agree.get(fmt, 0) + 1
            else:
                self.disagreements.append(
                    {
                        "line": line,
                        "id": line_id,
                        "question": question[:400],
                        "format": fmt,
                        "sent": base["content"],
                        "answer": outcome["content"],
                    }
                )

    def rows(self, formats: list[str]) -> list[dict]:
        out = []
        for fmt in formats:
            n, k = self.compared.get(fmt, 0), self.agree.get(fmt, 0)
            low, high = (wilson(k, n) if n else None) or (None, None)
            out.append(
                {
                    "format": fmt,
                    "compared": n,
                    "agree": k,
                    "rate": round(k / n, 4) if n else None,
                    "low": low,
                    "high": high,
                    "failed": self.failed.get(fmt, 0),
                }
            )
        return out


def ask_all(
    path: Path, formats: list[str], config: ModelConfig, out_dir: Path, post: Callable = http_post
) -> tuple[Agreement, dict]:
    """Send every request the log has no answer to, --concurrency at a time, each logged at once; then the agreement."""
    key = os.environ.get(config.api_key_env, "") if config.api_key_env else ""
    parts = urllib.parse.urlsplit(config.base_url)
    redact = Redactor([key, parts.password or "", parts.query])
    log_path = out_dir / LOG_NAME
    log = Log(log_path, redact)
    asker = _Asker(config, post, key, log, answered(log_path))
    agreement = Agreement()
    print(
        f"asking {config.model} at {public_url(config.base_url)} each logged question in {len(formats) + 1} layouts, "
        f"{config.concurrency} at a time ({len(asker.done):,} answers already in {display(log_path)})",
        file=sys.stderr,
        flush=True,
    )
    try:
        with ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="ask") as pool:
            pending: deque[tuple[Ask, Future]] = deque()
            line: tuple[int, str, str] | None = None
            answers: dict[str, dict] = {}
            for ask in asks(path, formats, config, asker.counts["not_sent"]):
                pending.append((ask, pool.submit(asker.ask, ask)))
                while len(pending) > IN_FLIGHT:
                    line, answers = _collect(pending.popleft(), line, answers, agreement)
            while pending:
                line, answers = _collect(pending.popleft(), line, answers, agreement)
            if line is not None:
                agreement.add(*line, answers)
    except KeyboardInterrupt:
        asker.endpoint.halt.set()
        raise
    finally:
        log.close()
    counts = asker.counts
    if asker.endpoint.reason and not counts["sent"] - counts["failed"] and not counts["already"]:
        raise BenchmarkError(f"{redact(asker.endpoint.reason)}; no answer came")
    return agreement, counts


class _Asker:
    """One request of ask_all at a time, from any worker thread: the log's answer when it has one, else sent and
    logged at once; counted."""

    def __init__(self, config: ModelConfig, post: Callable, key: str, log: Log, done: dict[str, dict]) -> None:
        self.config, self.post, self.log, self.done = config, post, log, done
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self.headers = {
            "Content-Type": "application/json",
            "User-Agent": "graphrag-format-benchmark",
            **({"Authorization": f"Bearer {key}"} if key else {}),
        }
        self.endpoint, self.lock = Endpoint(config), threading.Lock()
        self.counts: dict = {"sent": 0, "already": 0, "failed": 0, "not_sent": {}}

    def ask(self, ask: Ask) -> dict:
        config, endpoint = self.config, self.endpoint
        if ask.key in self.done and self.done[ask.key].get("error") is None:
            with self.lock:
                self.counts["already"] += 1
            return self.done[ask.key]
        if endpoint.halt.is_set():
            return {"content": None, "error": f"not sent: {endpoint.reason}"}
        endpoint.enter()
        try:
            outcome = send(config, self.post, self.url, self.headers, ask.body, f"{config.seed}/{ask.key}", endpoint)
        except Exception as e:  # every request ends in the log, even on a bug of ours
            outcome = outcome_record(None, None, f"internal error: {type(e).__name__}: {e}", None, 1, 0.0)
        finally:
            endpoint.leave()
        if (
            outcome["error"]
            and outcome["status"] not in (None, *TRANSIENT_STATUSES)
            and not context_refusal(outcome["error"])
        ):
            endpoint.repeated(outcome["error"])
        self.log.write(
            {
                "type": "logged_request",
                "schema_version": LOG_SCHEMA_VERSION,
                "key": ask.key,
                "line": ask.line,
                "id": ask.id,
                "format": ask.format,
                "model": config.model,
                "time": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                **outcome,
            }
        )
        with self.lock:
            self.counts["sent"] += 1
            self.counts["failed"] += outcome["error"] is not None
        return outcome


def _collect(
    entry: tuple[Ask, Future], line: tuple[int, str, str] | None, answers: dict, agreement: Agreement
) -> tuple[tuple[int, str, str], dict]:
    """One request's outcome into its line's answers; a line's answers compared when the next line begins."""
    ask, future = entry
    here = (ask.line, ask.id, ask.question)
    if line is not None and line != here:
        agreement.add(*line, answers)
        answers = {}
    answers[ask.format] = future.result()
    return here, answers
