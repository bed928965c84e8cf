"""What the answers say about the endpoint (Endpoint), and how an error reads.

In: each attempt's outcome. Out: whether the run goes on: until one request succeeds, a connection that fails or an
error repeated on the first requests stops the run with the reason (url_hint on a 404); a timeout halves the
requests in flight; a server that goes away after answering stops the run. Error texts are one printable line.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import urllib.parse
from collections import Counter
from typing import TYPE_CHECKING

from .._article import BenchmarkError, warn
from .config import STRUCTURED_FORMS, public_url
from .pacing import Pacer
from .transport import ProxyFailure

if TYPE_CHECKING:
    from .config import ModelConfig


RETRY_STATUSES = {408, 409, 429}  # and every 5xx
TRANSIENT_STATUSES = {408, 409, 429, 502, 503, 504}  # load, not a fault of the request: never a reason to stop the run
SAME_ERROR_STOP = 3  # requests ended by one non-transient error, before any success, that stop the run


def error_code(body: object) -> str:
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("code") or error.get("type") or "") if isinstance(error, dict) else ""


SERVER_DOWN_AFTER = 3  # connection failures in a row, once the server has answered, that stop the run


class Endpoint:
    """What the answers say about the endpoint. Until one request succeeds, a connection that fails (no server
    there) or HTTP 401, 403 or 404 (key rejected, unknown model or URL) closes the endpoint: the run stops at once
    with that reason, instead of spending every prompt's retries on it. Once it has answered, SERVER_DOWN_AFTER
    connection failures in a row mean the server went away: the run stops too (stopped), keeps what it has,
    and a re-run resumes."""

    def __init__(self, config: ModelConfig) -> None:
        self.config, self.opened = config, threading.Event()
        self.reason: str | None = None
        self.lock = threading.Lock()
        self.limit, self.active, self.room = config.concurrency, 0, threading.Condition()  # requests in flight
        self.errors: Counter[str] = Counter()  # non-transient errors that ended a request, before the first success
        self.halt = threading.Event()  # set with reason or stopped: wakes every retry wait
        self.stopped: str | None = None  # why a run that had answers stopped sending
        self.down_in_a_row = 0
        self.tickets = itertools.count()
        self.pending: set[int] = set()  # attempts sent and not yet answered, by the order they were sent in
        self.parallel = False  # seen to work on several requests at once: an answer came before an earlier request's
        self.pacer = Pacer(config.tokens_per_minute, config.requests_per_minute)

    def begin(self) -> int:
        """An attempt is about to be sent: its place in the order of sending."""
        with self.lock:
            ticket = next(self.tickets)
            self.pending.add(ticket)
            return ticket

    def end(self, ticket: int, answered: bool) -> None:
        """An attempt was answered. A server that works one request at a time (llama.cpp with one slot, Ollama by
        default) answers in the order it was sent; an answer that overtakes an earlier request shows several at work.
        Until one does, a request that timed out is not sent again: the server is still computing it, and a copy
        would queue behind it (and the requests after it behind both)."""
        with self.lock:
            self.pending.discard(ticket)
            if answered and not self.parallel and self.pending and min(self.pending) < ticket:
                self.parallel = True

    def success(self) -> None:
        self.opened.set()
        with self.lock:
            self.down_in_a_row = 0

    def down(self, error: str) -> bool:
        """A connection failed after the server had answered: True
        once it has failed SERVER_DOWN_AFTER times in a row."""
        with self.lock:
            self.down_in_a_row += 1
            if self.down_in_a_row >= SERVER_DOWN_AFTER and not self.stopped:
                self.stopped = (
                    f"the server at {public_url(self.config.base_url)} stopped answering ({self.down_in_a_row} "
                    f"connection failures in a row, the last: {error})"
                )
                self.halt.set()
            return self.stopped is not None

    def enter(self) -> None:
        """Wait for a place among the requests in flight (fewer than --concurrency once the server is slow)."""
        with self.room:
            while self.active >= self.limit and not self.reason:
                self.room.wait(0.5)
            self.active += 1

    def leave(self) -> None:
        with self.room:
            self.active -= 1
            self.room.notify_all()

    def slow(self) -> None:
        """A request timed out: the server queues more than it serves, so halve the requests in flight (and say
        so) rather than send more into a full queue. At one in flight there is nothing to halve."""
        with self.room:
            if self.limit > 1:
                self.limit //= 2
                warn(
                    f"a request timed out after {self.config.timeout:g} s: the server queues requests; going on with "
                    f"{self.limit} in flight instead of {self.limit * 2} (set --concurrency {self.limit} next time, or "
                    "raise --timeout)"
                )

    def fail(self, reason: str) -> bool:
        """Close the endpoint with reason unless a request has succeeded already; True if it is closed now."""
        if self.opened.is_set():
            return False
        with self.lock:
            self.reason = self.reason or reason
        self.halt.set()
        return True

    def repeated(self, error: str) -> None:
        """A request ended with a non-transient error: the same one on the first several requests stops the run."""
        with self.lock:
            self.errors[error] += 1
            n = self.errors[error]
        if n >= SAME_ERROR_STOP:
            self.fail(
                f"the first {n} requests to {public_url(self.config.base_url)} ended with the same error ({error}); "
                "fix its cause (see the log) before sending the rest"
            )

    def http_failure(self, status: int, error: str) -> bool:
        where = f"{public_url(self.config.base_url)} answered {error}"
        form = self.config.structured
        if (
            form
            and status in (400, 422, 500)
            and re.search(r"response_format|json_schema|json_object|schema", error, re.I)
        ):
            other = next(f for f in STRUCTURED_FORMS if f != form)
            return self.fail(
                f"{where}: it refuses structured output as {form}; try --structured {other}, or leave --structured out"
            )
        if status in (401, 403):
            if self.config.api_key_env is None:
                return self.fail(
                    f"{where}: the endpoint wants a key; name the variable that holds it with --api-key-env"
                )
            return self.fail(
                f"{where}: the key was rejected; set {self.config.api_key_env} to a valid key (or name another "
                "variable with --api-key-env)"
            )
        if status == 404:
            return self.fail(
                f"{where}: the model or the URL is unknown; check --model {self.config.model!r} and --base-url"
                + url_hint(self.config.base_url)
            )
        return False


def url_hint(base_url: str) -> str:
    """What is likely wrong with a --base-url a server answered 404 to: the tool adds /chat/completions itself, and
    OpenAI-compatible servers serve under /v1."""
    path = urllib.parse.urlsplit(base_url).path.rstrip("/")
    if path.endswith("/chat/completions"):
        return (
            " (give it without /chat/completions, which the tool adds: "
            f"{public_url(base_url).rstrip('/').removesuffix('/chat/completions')})"
        )
    if not path.endswith("/v1"):
        return f" (OpenAI-compatible servers answer under /v1: try {public_url(base_url).rstrip('/')}/v1)"
    return ""


CONTEXT_REFUSAL = re.compile(
    r"context_length_exceeded|context length|context window|maximum context|too many tokens|"
    r"exceeds? the (?:model's )?(?:maximum )?(?:context|input)",
    re.I,
)


def context_refusal(error: object) -> bool:
    """The server refused the prompt as longer than its context window (llama.cpp, vLLM and OpenAI say so as an
    HTTP 400): the article's CONTEXT_OVERFLOW, found on the server's side rather than by the local count."""
    return isinstance(error, str) and error.startswith("HTTP 4") and CONTEXT_REFUSAL.search(error) is not None


def failure_kind(error: str) -> str:
    """An error as the failure summary groups it: after the status, numbers of three digits or more stand as N,
    so that the refusals of prompts of every length are one line ('... context length is N tokens ...')."""
    head, sep, rest = error.partition(": ")
    return head + sep + re.sub(r"\d{3,}", "N", rest)


def no_server(e: BaseException) -> bool:
    """Nothing listens there (refused, unknown host, unreachable), as opposed to a server that cut an answer."""
    import socket

    return isinstance(e, (ConnectionRefusedError, socket.gaierror, ProxyFailure)) or getattr(e, "errno", None) in (
        101,
        113,
    )


def check_server(base_url: str, timeout: float = 5.0) -> None:
    """Before any work: is anything listening at --base-url? A run against no server built every cell first (45 s for
    1,000) to learn it from its first request. Only a certain absence (no_server: refused, unknown host, unreachable)
    stops the run, with one line; a slow or odd answer is the runner's to judge, and behind a proxy from the
    environment the server is the proxy's to reach, so nothing is asked here."""
    import socket
    import urllib.request

    url = urllib.parse.urlsplit(base_url)
    if url.scheme not in ("http", "https") or not url.hostname or urllib.request.getproxies().get(url.scheme):
        return
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
        socket.create_connection((url.hostname, port), timeout=timeout).close()
    except (OSError, ValueError) as e:
        if isinstance(e, OSError) and no_server(e):
            raise BenchmarkError(
                f"--base-url {public_url(base_url)}: no server answers there ({e.strerror or e}); start it, or "
                "fix --base-url; nothing was measured or sent"
            ) from None


def timed_out(e: BaseException) -> bool:
    return isinstance(e, TimeoutError) or isinstance(getattr(e, "reason", None), TimeoutError)


def error_text(status: int | None, parsed: object, raw_text: str) -> str:
    """'HTTP 400 (code): the server's own words': error.message, else detail, else the body; one line."""
    code = error_code(parsed)
    error = parsed.get("error") if isinstance(parsed, dict) else None
    words = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    detail = parsed.get("detail") if isinstance(parsed, dict) else None
    if not words and detail:
        words = detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False)
    if not words and parsed is None:
        words = raw_text
    words = printable(" ".join(str(words or "").split()))
    code = printable(code[:80])
    return f"HTTP {status}" + (f" ({code})" if code else "") + (f": {words[:300]}" if words else "")


def printable(text: str) -> str:
    """Text from a server, safe to print on a terminal: control and format characters (an escape sequence that would
    retitle the window, clear the screen or set the clipboard) shown as \\xNN instead of acted on."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}" for c in text)
