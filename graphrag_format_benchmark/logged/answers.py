"""With --model: each logged question asked again with its context in every format, and how often the answer agrees
with the answer to the prompt as it was sent.

In: the logged file (read again, a line at a time), the formats, the ModelConfig. Out: requests.jsonl in --out (every
request and its answer, appended as it comes; a request already answered there is not sent again, so a stopped run
resumes), and per format the agreement (agreement.py): by the entities the two answers name, and by their texts after
the article's normalization, failures counted apart, every disagreement kept for reading by hand. Logged questions have
no gold answer: agreement is not accuracy (docs/logged-prompts.md says where accuracy comes from). A status line comes
at least every HEARTBEAT seconds; Ctrl-C sends nothing more, waits for the requests in flight (Ctrl-C again abandons
them) and returns what was answered (Asked.stopped).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._article import BenchmarkError, display
from ..progress import Progress
from ..runner.config import ModelConfig, Redactor, public_url
from ..runner.endpoint import TRANSIENT_STATUSES, Endpoint, context_refusal
from ..runner.jobs import HEARTBEAT
from ..runner.log import LOG_NAME, LOG_SCHEMA_VERSION, Log, file_lines
from ..runner.send import outcome_record, send
from ..runner.transport import Post, http_post
from .agreement import Agreement, Names
from .measure import LOGGED, Prepared, prepare_logged
from .read import Logged, Unread, parse_line, raw_lines

IN_FLIGHT = 64  # requests built ahead of the senders: memory holds at most these


@dataclass(frozen=True)
class Ask:
    """One request: a logged line's prompt with its context in one format (LOGGED: as it was sent)."""

    line: int
    id: str
    question: str
    format: str
    body: dict[str, Any]
    key: str  # the SHA-256 of the body: the request's identity in the log
    names: Names  # the entities the line's context shows, shared by its requests
    prompt: str  # the message that held the context, as sent (an answer that echoes it is no answer)
    logged_answer: str | None = None  # what was sent's answer, as a trace logged it for this very model: not asked


def asks(path: Path, formats: list[str], config: ModelConfig, not_sent: dict[str, int]) -> Iterator[Ask]:
    """Every request, line by line: what was sent, then each format in its place (the logged layout's own format is
    what was sent: not asked twice). A request that held a part that is not text (an image) is not sent again without
    it: counted in not_sent by its reason."""
    # the logged prompt asks in its own words
    sampling = {k: v for k, v in config.sampling(0).items() if k != "response_format"}
    for logged in _requests(path):
        prepared = prepare_logged(logged, formats)
        if not isinstance(prepared, Prepared):
            continue
        if logged.other_parts:
            reason = f"it held a part that is not text ({', '.join(logged.other_parts)}): not sent again without it"
            not_sent[reason] = not_sent.get(reason, 0) + 1
            continue
        names = Names(prepared.graph)
        for fmt in (LOGGED, *formats):
            if fmt == prepared.own:  # the logged layout's own row is the logged request: sent once, as LOGGED
                continue
            at = prepared.message if fmt != LOGGED else -1  # the message that takes fmt's text
            messages = [
                {"role": role, "content": prepared.prompt_text(fmt) if k == at else text}
                for k, (role, text) in enumerate(logged.messages)
            ]
            body = {"model": config.model, "messages": messages, **sampling}
            key = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
            # the answer the trace logged is what was sent's when the model asked is the model that answered it
            given = logged.answer if fmt == LOGGED and logged.model == config.model else None
            yield Ask(logged.line, logged.id, logged.question, fmt, body, key, names, prepared.text, given)


def _requests(path: Path) -> Iterator[Logged]:
    """Every request the file holds, in order (a trace line's LLM calls one by one)."""
    for line_no, raw in raw_lines(path):
        if not isinstance(raw, Unread):
            yield from (item for item in parse_line(line_no, raw) if isinstance(item, Logged))


@dataclass(slots=True, frozen=True)
class Answer:
    """A request's outcome as requests.jsonl holds it, decoded: what the agreement reads of it."""

    content: str | None  # the answer's text (None: no text came)
    failed: bool  # the request failed: the next run sends it again


def answered(log_path: Path) -> dict[str, Answer]:
    """The log's answers by request key (a request that failed is sent again; its last outcome is kept)."""
    found: dict[str, Answer] = {}
    for _, _, record in file_lines(log_path):
        if not record or record.get("type") != "logged_request":
            continue
        key, content, failed = record.get("key"), record.get("content"), record.get("error") is not None
        if isinstance(key, str) and (not failed or key not in found):
            found[key] = Answer(content if isinstance(content, str) else None, failed)
    return found


@dataclass(slots=True)
class AskCounts:
    """A model run's requests, counted as they are done (results.json's counts.asked, in this order)."""

    sent: int = 0  # requests sent
    already: int = 0  # answered in requests.jsonl by an earlier run: not sent again
    failed: int = 0  # sent, and failed
    from_trace: int = 0  # answers to what was sent that the traces logged, by the model asked: not sent
    not_sent: dict[str, int] = field(default_factory=dict)  # measured lines not asked, by why

    def to_dict(self) -> dict[str, Any]:
        """The counts as results.json writes them: the fields in order."""
        return asdict(self)


@dataclass(slots=True, frozen=True)
class Asked:
    """What ask_all did: the agreement over the lines whose answers all came, the counts, and whether Ctrl-C (or
    SIGTERM) stopped it (the exception, raised again once the results are written)."""

    agreement: Agreement
    counts: AskCounts
    stopped: KeyboardInterrupt | None = None


def ask_all(
    path: Path, formats: list[str], config: ModelConfig, out_dir: Path, total: int, post: Post = http_post
) -> Asked:
    """Send every request the log has no answer to, --concurrency at a time, each logged at once; then the agreement.
    total: the requests to ask, for the status line."""
    key = os.environ.get(config.api_key_env, "") if config.api_key_env else ""
    parts = urllib.parse.urlsplit(config.base_url)
    redact = Redactor([key, parts.password or "", parts.query])
    log_path = out_dir / LOG_NAME
    log = Log(log_path, redact)
    asker = _Asker(config, post, key, log, answered(log_path), Progress(total, "requests"))
    agreement = Agreement()
    print(
        f"asking {config.model} at {public_url(config.base_url)} each logged question in {len(formats) + 1} layouts, "
        f"{config.concurrency} at a time ({len(asker.done):,} answers already in {display(log_path)})",
        file=sys.stderr,
        flush=True,
    )
    stopped = None
    try:
        pool = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="ask")
        try:
            _ask_in_order(pool, asks(path, formats, config, asker.counts.not_sent), asker, agreement)
        except KeyboardInterrupt as e:  # nothing more is sent; the requests in flight are paid: their answers logged
            stopped = e
            asker.endpoint.halt.set()
            pool.shutdown(wait=False, cancel_futures=True)
            _wait_in_flight(asker, pool, config)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    finally:
        asker.progress.close()
        log.close()
    counts = asker.counts
    if stopped is None and asker.endpoint.reason and not counts.sent - counts.failed and not counts.already:
        raise BenchmarkError(f"{redact(asker.endpoint.reason)}; no answer came")
    return Asked(agreement, counts, stopped)


def _ask_in_order(pool: ThreadPoolExecutor, requests: Iterator[Ask], asker: _Asker, agreement: Agreement) -> None:
    """Each request sent on the pool, IN_FLIGHT built ahead; a line's answers compared once they have all come, in the
    file's order; a status line at least every HEARTBEAT seconds while an answer is awaited."""
    pending: deque[tuple[Ask, Future[str | None]]] = deque()
    last: Ask | None = None  # the request last collected: its line's answers are those gathered so far
    answers: dict[str, str | None] = {}  # format -> its answer's text (None: none came)

    def compare(done: Ask) -> None:  # the line of done, whose answers have all come
        agreement.add(done.line, done.id, done.question, answers, done.names, done.prompt)

    def collect() -> None:
        nonlocal last, answers
        ask, future = pending.popleft()
        if last is not None and (last.line, last.id, last.question) != (ask.line, ask.id, ask.question):
            compare(last)
            answers = {}
        while True:
            try:
                answers[ask.format] = future.result(timeout=1.0)
                break
            except FutureTimeout:
                asker.beat()
        last = ask

    for ask in requests:
        pending.append((ask, pool.submit(asker.ask, ask)))
        while len(pending) > IN_FLIGHT:
            collect()
    while pending:
        collect()
    if last is not None:
        compare(last)


def _wait_in_flight(asker: _Asker, pool: ThreadPoolExecutor, config: ModelConfig) -> None:
    """After Ctrl-C: the answers to the requests in flight, which are paid, logged (at most --timeout); Ctrl-C again
    abandons them."""
    if asker.in_flight:
        print(
            f"interrupted: waiting for the answers to the {asker.in_flight} request(s) in flight (at most --timeout "
            f"{config.timeout:g} s) so that none is paid and lost; Ctrl-C again to abandon them",
            file=sys.stderr,
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            pool.shutdown(wait=True, cancel_futures=True)


class _Asker:
    """One request of ask_all at a time, from any worker thread: the log's answer when it has one, else sent and
    logged at once; counted."""

    def __init__(
        self, config: ModelConfig, post: Post, key: str, log: Log, done: dict[str, Answer], progress: Progress
    ) -> None:
        self.config, self.post, self.log, self.done, self.progress = config, post, log, done, progress
        self.in_flight = 0
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self.headers = {
            "Content-Type": "application/json",
            "User-Agent": "graphrag-format-benchmark",
            **({"Authorization": f"Bearer {key}"} if key else {}),
        }
        self.endpoint, self.lock = Endpoint(config), threading.Lock()
        self.counts = AskCounts()

    def ask(self, ask: Ask) -> str | None:
        """The answer's text (None: none came), from the trace, the log, or the endpoint (then logged)."""
        config, endpoint = self.config, self.endpoint
        if ask.logged_answer is not None:  # the trace holds it: not paid for again
            with self.lock:
                self.counts.from_trace += 1
                self._advance()
            return ask.logged_answer
        done = self.done.get(ask.key)
        if done is not None and not done.failed:
            with self.lock:
                self.counts.already += 1
                self._advance()
            return done.content
        if endpoint.halt.is_set():  # not sent: the run was stopped
            return None
        with self.lock:
            self.in_flight += 1
        endpoint.enter()
        try:
            outcome = send(config, self.post, self.url, self.headers, ask.body, f"{config.seed}/{ask.key}", endpoint)
        except Exception as e:  # every request ends in the log, even on a bug of ours
            outcome = outcome_record(None, None, f"internal error: {type(e).__name__}: {e}", None, 1, 0.0)
        finally:
            endpoint.leave()
            with self.lock:
                self.in_flight -= 1
        error, content = outcome.error, outcome.content
        if error and outcome.status not in (None, *TRANSIENT_STATUSES) and not context_refusal(error):
            endpoint.repeated(error)
        self.log.write(
            {
                "type": "logged_request",
                "schema_version": LOG_SCHEMA_VERSION,
                "key": ask.key,
                "line": ask.line,
                "id": ask.id,
                "format": ask.format,
                "model": config.model,
                "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                **outcome.to_dict(),
            }
        )
        with self.lock:
            self.counts.sent += 1
            self.counts.failed += error is not None
            self._advance()
        return content

    def _advance(self) -> None:
        """One request done, into the status line (under the lock)."""
        self.progress.advance(1, f"{self.counts.failed} failed, {self.in_flight} in flight")

    def beat(self) -> None:
        """A status line when none came for HEARTBEAT seconds: a slow server at work, not a hung run."""
        with self.lock:
            now = time.monotonic()
            if now - self.progress.last >= HEARTBEAT:
                waiting = f"{self.counts.failed} failed" if self.progress.done else "waiting for the first answer"
                self.progress.show(now, f"{waiting}, {self.in_flight} in flight", eta=True)
