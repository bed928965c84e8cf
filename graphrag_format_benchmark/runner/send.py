"""One request with bounded retries (send), as the log records it; the control solver as a model (--model solver).

In: a prompt, the ModelConfig, the Endpoint and the Pacer. Out: its Outcome: status, attempts, latency, the response
(or its text, or the error), and the usage the server reported.
"""

from __future__ import annotations

import json
import random
import time
import urllib.parse
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, cast

from .._article import ABSTAIN
from ..frameworks import cited_order
from ..solver import EdgeIndex, asked, edge_index, solve, value_text
from .config import SOLVER_MODEL, public_url
from .endpoint import RETRY_STATUSES, TRANSIENT_STATUSES, Endpoint, error_code, error_text, no_server, timed_out
from .pacing import retry_wait
from .transport import MAX_JSON_DEPTH, Post, ProxyFailure, ResponseTooLarge, json_depth, untrusted_json

if TYPE_CHECKING:
    from .._article import Graph
    from ..measure import Item
    from .config import ModelConfig


TRUNCATION_RATIO = 0.6  # server prompt_tokens below this share of the local count: the server cut the prompt
# (variant, id of the context, id of the edge order, mode, edges included) -> (the graph shown, its edge index)
SolverCache = dict[tuple[str, int, int, str, int], tuple["Graph", EdgeIndex]]


def send(
    config: ModelConfig,
    post: Post,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
    seed: str,
    endpoint: Endpoint,
    tokens: int = 0,
) -> Outcome:
    """One request with bounded retries: its Outcome, with rate_wait_s when it waited for the rate limit (tokens: what
    it counts against it). A timeout is sent again once at most, and only to a server seen to work on several requests
    at once (Endpoint.end)."""
    paced = [0.0]
    outcome = _attempts(config, post, url, headers, body, seed, endpoint, tokens, paced)
    return replace(outcome, rate_wait_s=round(paced[0], 3)) if paced[0] >= 0.001 else outcome


def _attempts(
    config: ModelConfig,
    post: Post,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
    seed: str,
    endpoint: Endpoint,
    tokens: int,
    paced: list[float],
) -> Outcome:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    first = time.monotonic()
    attempt = timeouts = 0
    previous, rng = None, None  # the last attempt's HTTP error
    while True:
        attempt += 1
        paced[0] += endpoint.pacer.acquire(tokens, endpoint.halt)  # seconds waited for the rate limit
        started = time.monotonic()  # latency is the last attempt's; earlier attempts and waits are retry_wait_s
        wait_headers: dict[str, str]
        status, parsed, raw_text, wait_headers = None, None, None, {}
        ticket = endpoint.begin()
        try:
            status, wait_headers, raw = post(url, headers, data, config.timeout)
        except OSError as e:  # refused, reset, timed out, DNS, a malformed answer...
            endpoint.pacer.settle(tokens)
            endpoint.end(ticket, answered=False)
            error, retry, timeouts, stop = _connection_failure(e, config, endpoint, timeouts)
            if stop:
                return outcome_record(None, None, error, None, attempt, started, first)
        else:
            endpoint.end(ticket, answered=True)
            endpoint.pacer.settle(tokens)
            endpoint.pacer.observe(wait_headers)
            raw_text = raw.decode("utf-8", errors="replace")
            parsed = untrusted_json(raw_text)
            answer_error, retry, stop = _response_failure(
                status, parsed, raw_text, wait_headers, config, endpoint, previous
            )
            if answer_error is None:
                endpoint.success()
                return outcome_record(parsed, raw_text, None, status, attempt, started, first)
            error = answer_error
            if stop:
                return outcome_record(parsed, raw_text, error, status, attempt, started, first)
            if status >= 400:
                previous = error
        if not retry or attempt > config.max_retries or endpoint.halt.is_set():
            if retry and not endpoint.halt.is_set():
                error += f"; gave up after {attempt} attempts"
            return outcome_record(parsed, raw_text, error, status, attempt, started, first)
        rng = rng or random.Random(seed)  # jitter, seeded like everything else; made only when a retry needs it
        if endpoint.halt.wait(retry_wait(wait_headers, attempt, rng)):  # the run stops: no more retries
            return outcome_record(parsed, raw_text, error, status, attempt, started, first)


def _connection_failure(
    e: OSError, config: ModelConfig, endpoint: Endpoint, timeouts: int
) -> tuple[str, bool, int, bool]:
    """An attempt that got no response: its error, whether it is retried, the timeouts so far, and whether the run
    stops sending to the endpoint now (no server, a broken proxy, the endpoint down)."""
    error, retry = f"connection error: {type(e).__name__}: {e}", True
    if isinstance(e, ResponseTooLarge):
        return f"connection error: {e}", False, timeouts, False
    if timed_out(e):
        timeouts += 1
        if endpoint.parallel:  # sent again, once: the server works on several at a time, so the copy is not queued
            error = (
                f"timed out after {config.timeout:g} s ({timeouts} time(s)): a server that queues requests answers "
                "late; lower --concurrency or raise --timeout"
            )
            retry = timeouts < 2
        else:  # a server that works one request at a time is still computing this one: a copy would queue behind it
            error = (
                f"timed out after {config.timeout:g} s: not sent again, since the server answers one request at a time "
                "and is still computing it; raise --timeout or cap --max-output-tokens"
            )
            retry = False
        endpoint.slow()
        return error, retry, timeouts, False
    if isinstance(e, ProxyFailure):
        stop = endpoint.fail(
            f"{e} on the way to {public_url(config.base_url)}; fix the proxy variable "
            "(HTTPS_PROXY, HTTP_PROXY, ALL_PROXY), or name the host in NO_PROXY"
        )
        if stop:
            return error, retry, timeouts, True
    if not no_server(e):
        return error, retry, timeouts, False  # a reset or a cut body: the server is there; retried like load
    stop = endpoint.fail(
        f"no server answers at {public_url(config.base_url)} ({type(e).__name__}: {e}); start it, or fix --base-url"
    ) or endpoint.down(f"{type(e).__name__}: {e}")
    return error, retry, timeouts, stop


def _response_failure(
    status: int,
    parsed: object,
    raw_text: str,
    wait_headers: dict[str, str],
    config: ModelConfig,
    endpoint: Endpoint,
    previous: str | None,
) -> tuple[str | None, bool, bool]:
    """An attempt that got a response: its error (None for a chat completion with a message), whether it is retried,
    and whether the run stops sending to the endpoint now (a redirect, a key refused, a model unknown)."""
    if 200 <= status < 300:
        carries_error = isinstance(parsed, dict) and bool(parsed.get("error"))  # a failure, whatever else it holds
        if reply(parsed) is not None and not carries_error:
            return None, False, False
        error = "the response is not a chat completion with a message"
        if carries_error:
            error = f"{error_text(status, parsed, raw_text)} (in a response marked successful)"
        return error, False, False
    if 300 <= status < 400:
        where = urllib.parse.urlsplit(wait_headers.get("location", "")).netloc or "another address"
        error = (
            f"HTTP {status}: redirected to {where}, not followed: the key goes to the host of --base-url "
            "only; give the final address as --base-url"
        )
        return error, False, endpoint.fail(f"{public_url(config.base_url)} answered {error}")
    error = error_text(status, parsed, raw_text)
    if endpoint.http_failure(status, error):
        return error, False, True
    code = error_code(parsed)
    retry = (status in RETRY_STATUSES or status >= 500) and code != "insufficient_quota"  # quota: no point
    if retry and status not in TRANSIENT_STATUSES and error == previous and not endpoint.opened.is_set():
        retry = False  # the same 500 twice before anything worked: deterministic, not load
    return error, retry, False


def reply(parsed: object) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The first choice of a chat completion and its message, when the message is an object; else None."""
    try:
        choice = cast(Any, parsed)["choices"][0]
        message = choice["message"]
    except (TypeError, KeyError, IndexError):
        return None
    return (choice, message) if isinstance(message, dict) else None


@dataclass(slots=True, frozen=True)
class Outcome:
    """How one request ended, as its log line records it after the cell fields (to_dict)."""

    status: int | None  # the last attempt's HTTP status; None when no attempt got an answer
    attempts: int  # attempts sent
    latency_s: float  # seconds of the last attempt
    retry_wait_s: float  # seconds before the last attempt: the earlier attempts and the waits between them
    response: object  # the parsed body; its text when it is not JSON or nests past MAX_JSON_DEPTH; None without one
    content: str | None  # the first choice's message content
    usage: object  # the body's usage as the server sent it (Usage.of reads its counts)
    system_fingerprint: str | None  # the body's, when text
    finish_reason: str | None  # the first choice's, when text
    error: str | None  # why the request failed; None for an answer
    rate_wait_s: float | None = None  # seconds waited for the rate limit, when 1 ms or more (only then logged)

    def to_dict(self) -> dict[str, Any]:
        """The fields as the log line holds them, in this order; rate_wait_s only when it waited."""
        waited = self.rate_wait_s is not None
        return {f.name: getattr(self, f.name) for f in fields(self) if waited or f.name != "rate_wait_s"}


def outcome_record(
    parsed: object,
    raw_text: str | None,
    error: str | None,
    status: int | None,
    attempts: int,
    started: float,
    first: float | None = None,
) -> Outcome:
    """The Outcome of a request's last attempt (started at started; the first at first): parsed, its body as JSON,
    raw_text, its text."""
    found = reply(parsed)
    choice, message = found if found is not None and found[1] else ({}, {})  # an empty message: no content, no finish
    content, finish = message.get("content"), choice.get("finish_reason")
    shallow = parsed is not None and json_depth(parsed) <= MAX_JSON_DEPTH  # a deeper body is logged as its text
    fingerprint = parsed.get("system_fingerprint") if isinstance(parsed, dict) else None
    return Outcome(
        status,
        attempts,
        round(time.monotonic() - started, 3),
        round(started - first, 3) if first is not None else 0.0,
        parsed if shallow else raw_text,
        content if isinstance(content, str) else None,
        parsed.get("usage") if isinstance(parsed, dict) and shallow else None,
        fingerprint if isinstance(fingerprint, str) else None,
        finish if isinstance(finish, str) else None,
        error,
    )


def solver_answer(item: Item, cache: SolverCache | None = None) -> dict[str, Any]:
    """What the control solver answers to a prompt: the first complete path it finds, or INSUFFICIENT_DATA.
    cache: shown graph key -> (graph, edge index), shared by the prompts that show the same edges."""
    key = (item.variant.name, id(item.context), id(item.order), item.row.mode, item.row.edges_included)
    cache = {} if cache is None else cache
    if key not in cache:
        shown = item.shown()
        cache[key] = (shown, edge_index(shown.edges))
    (shown, index), q = cache[key], item.question
    found = solve(shown, q.query, index) if q.query else []
    if not found or q.query is None:  # every complete walk is a gold path: the first one will do
        return {"answer": ABSTAIN, "path": [], "evidence": []}
    path, end = found[0]
    answer = value_text(asked(shown, q.query.ask, found[0])) if q.query.ask else shown.names[end]
    order = cited_order(item.row.format, shown)  # a format that shows the edges in an order of its own
    place = {edge: k for k, edge in enumerate(order)} if order is not None else None
    cited = [shown.edge_ids[i] for i in path] if shown.edge_ids else [place[i] for i in path] if place else list(path)
    return {"answer": answer, "path": cited, "evidence": [shown.edges[i]._asdict() for i in path]}


def solver_outcome(item: Item, cache: SolverCache) -> Outcome:
    """The solver's answer as a chat completion. It has no usage: the solver reads no tokens, and its counts must not
    pass for a model's own."""
    content = json.dumps(solver_answer(item, cache), ensure_ascii=False)
    completion = {
        "object": "chat.completion",
        "model": SOLVER_MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }
    return outcome_record(completion, None, None, 200, 1, time.monotonic())
