"""Waiting: the backoff before a retry, and sending paced to a provider's rate limits.

In: the server's rate-limit headers and each request's size. Out: how long a request waits. A Bucket per limit
(tokens, requests) refills continuously, as providers replenish; the Pacer learns the limits from the headers.
"""

from __future__ import annotations

import math
import random
import re
import threading
import time

from .transport import MAX_COUNT

RETRY_BASE_DELAY = 0.5  # seconds before the first retry; doubles each time, with full jitter
RETRY_MAX_DELAY = 30.0


def retry_wait(headers: dict[str, str], attempt: int, rng: random.Random) -> float:
    """Seconds to wait before retry number attempt: the server's retry-after-ms or Retry-After if given,
    else exponential backoff with full jitter."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            wait = float(headers[name]) * scale
        except (KeyError, ValueError, OverflowError):
            continue
        if math.isfinite(wait):  # 'nan' or 'inf' says nothing: back off as if it were not there
            return min(max(wait, 0.0), RETRY_MAX_DELAY)
    return rng.uniform(0, min(RETRY_BASE_DELAY * 2 ** (attempt - 1), RETRY_MAX_DELAY))


RATE_WINDOW = 60.0  # seconds a --tokens-per-minute budget is for


def reset_seconds(value: str | None) -> float | None:
    """An x-ratelimit-reset-* header as seconds: OpenAI writes '6m0s', '1s', '20ms', '1h2m3.5s'; others a number."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        parts = re.fullmatch(
            r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?", value.strip()
        )
        if not parts or not any(parts.groups()):
            return None
        h, m, sec, ms = (float(g) if g else 0.0 for g in parts.groups())
        seconds = h * 3600 + m * 60 + sec + ms / 1000
    return min(seconds, RETRY_MAX_DELAY * 10) if math.isfinite(seconds) and seconds >= 0 else None


class Bucket:
    """One rate limit: capacity units per RATE_WINDOW, refilled continuously (how providers replenish), filled up to
    its capacity less the units in flight: the server counts a request when it arrives, not when it is sent, and
    while it is full it gains nothing from the time in between (at a run's start, 2 of 62 requests were refused
    without this rule). No capacity: no limit known yet."""

    def __init__(self, capacity: int | None) -> None:
        self.capacity = float(capacity) if capacity else None
        self.level = self.capacity or 0.0
        self.in_flight = 0
        self.stamp = time.monotonic()

    def refill(self, now: float) -> None:
        if self.capacity is not None:
            top = self.capacity - self.in_flight
            if self.level < top:
                self.level = min(top, self.level + (now - self.stamp) * self.capacity / RATE_WINDOW)
        self.stamp = now

    def wait(self, units: int) -> float:
        """Seconds until units may go (a request larger than the whole bucket waits for a full one)."""
        if self.capacity is None:
            return 0.0
        need = min(units, self.capacity)
        return (need - self.level) * RATE_WINDOW / self.capacity if self.level < need else 0.0

    def take(self, units: int) -> None:
        if self.capacity is not None:
            self.level -= units
        self.in_flight += units

    def learn(self, limit: int | None, remaining: int | None) -> None:
        """The server's limit and what it says remains: a limit learnt from the headers alone starts the bucket
        (less what is in flight, which the remaining count may not hold yet); a remaining count lowers it."""
        if self.capacity is None and limit:
            self.capacity = float(limit)
            self.level = float(min(limit, limit if remaining is None else remaining)) - self.in_flight
        elif remaining is not None and self.capacity is not None:
            self.level = min(self.level, float(remaining))


class Pacer:
    """Sending paced to a provider's rate limits, so that 429s are rare rather than retried: a Bucket of
    tokens_per_minute tokens, each request taking its prompt tokens and its output cap before it goes (OpenAI
    counts max_tokens against the limit), and one of requests_per_minute requests. The server's x-ratelimit
    headers, when it sends them, correct both (x-ratelimit-limit-tokens / -requests set a limit the flags did
    not, -remaining-tokens / -requests lower the level), and remaining requests of 0 hold sending until
    x-ratelimit-reset-requests."""

    def __init__(self, tokens_per_minute: int | None, requests_per_minute: int | None = None) -> None:
        self.tokens, self.requests = Bucket(tokens_per_minute), Bucket(requests_per_minute)
        self.hold_until = 0.0  # no request before this (the server's requests ran out)
        self.lock = threading.Lock()

    def settle(self, tokens: int) -> None:
        """An attempt that acquire() let go has its answer (or failed)."""
        with self.lock:
            now = time.monotonic()
            for bucket, units in ((self.tokens, tokens), (self.requests, 1)):
                bucket.refill(now)
                bucket.in_flight -= units

    def acquire(self, tokens: int, halt: threading.Event) -> float:
        """Wait until the request may go (or the run stops); the seconds waited."""
        started = time.monotonic()
        while True:
            with self.lock:
                now = time.monotonic()
                self.tokens.refill(now)
                self.requests.refill(now)
                wait = max(self.hold_until - now, self.tokens.wait(tokens), self.requests.wait(1), 0.0)
                if wait <= 0:
                    self.tokens.take(tokens)
                    self.requests.take(1)
                    return now - started
            if halt.wait(min(wait, 1.0)):
                return time.monotonic() - started

    def observe(self, headers: dict[str, str]) -> None:
        """What the server says of its limits, after each answer (a 429's included)."""
        if not headers or not any(name.startswith("x-ratelimit-") for name in headers):
            return
        with self.lock:
            now = time.monotonic()
            for bucket, unit in ((self.tokens, "tokens"), (self.requests, "requests")):
                bucket.refill(now)
                bucket.learn(
                    _count_header(headers.get(f"x-ratelimit-limit-{unit}")),
                    _count_header(headers.get(f"x-ratelimit-remaining-{unit}")),
                )
            if _count_header(headers.get("x-ratelimit-remaining-requests")) == 0:
                reset = reset_seconds(headers.get("x-ratelimit-reset-requests"))
                if reset:
                    self.hold_until = max(self.hold_until, now + reset)


def _count_header(value: str | None) -> int | None:
    try:
        n = int(value) if value is not None else None
    except ValueError:
        return None
    return n if n is not None and 0 <= n <= MAX_COUNT else None
