"""A model run: which prompts go, in which order, sent by which workers, and how it went (run_model).

In: the measured items and the ModelConfig. Out: every job the log lacks sent and logged, and the counts for the
summary. Jobs sharing a prompt prefix are grouped so a provider's prefix cache can serve them (Schedule: the first
of a group warms it, no worker waits idle); --limit deals the jobs round-robin over hop counts. Tally counts the
outcomes as they come and prints a heartbeat while a slow server works.
"""

from __future__ import annotations

import itertools
import operator
import sys
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .._article import BenchmarkError, display
from ..matrix import HOP_BUCKETS, hop_bucket
from ..progress import Progress
from .config import SOLVER_MODEL, Redactor, auth_headers, key_and_redactor, public_url
from .endpoint import TRANSIENT_STATUSES, Endpoint, context_refusal, failure_kind
from .log import LOG_NAME, LOG_SCHEMA_VERSION, Log, file_lines, request_key
from .send import Outcome, SolverCache, outcome_record, send, solver_outcome
from .transport import Post, Usage, http_post

if TYPE_CHECKING:
    from .._article import Tokenizer
    from ..measure import Item, Measurement
    from .config import ModelConfig


HEARTBEAT = 15.0  # seconds between status lines of a model run while no answer comes (a CPU server takes minutes)
# (encoding, size, ids, context, permutation, mode, format, repeat): prompts that share a prefix (Job.group)
JobGroup = tuple[str, str, str, str, int, str, str, int]


@dataclass(slots=True, frozen=True)
class Job:
    """One request to send: a distinct prompt and a repeat of it."""

    sha: str  # the prompt's SHA-256
    repeat: int  # 0 for the first; the sampling seed is the seed + repeat
    item: Item  # the first row with this prompt; others share the answer

    @property
    def group(self) -> JobGroup:
        """Prompts that share everything but the question: a provider's prefix cache can serve them all."""
        r = self.item.row
        return (
            r.encoding,
            r.size,
            r.ids,
            self.item.context.id,
            r.permutation,
            r.mode,
            r.format,
            self.repeat,
        )


def job_label(job: Job) -> str:
    """What a progress line calls a job: its format and question, and what differs from the default cell
    ('json q3', 'tsv q1 medium p2 r1')."""
    r = job.item.row
    parts = [
        r.format,
        r.question_id,
        r.size if r.size != "small" else "",
        r.ids if r.ids != "original" else "",
        f"mode {r.mode}" if r.mode != "A" else "",
        f"p{r.permutation}" if r.permutation else "",
        f"r{job.repeat}" if job.repeat else "",
    ]
    return " ".join(p for p in parts if p)


def plan_jobs(items: list[Item], config: ModelConfig) -> list[Job]:
    """One job per distinct prompt and repeat, grouped by shared prefix (Job.group) in row order; prompts that
    overflow are not sent (the control solver has no context window, so it answers them all: its scores
    check the pipeline, not a model). --limit N takes the first prompt of every group, then the second...,
    so that a dry slice covers every format, size and mode alike, and within a group every hop count."""
    prompts = [item for item in items if config.model == SOLVER_MODEL or not item.row.overflow]
    distinct = list({item.row.prompt_sha256: item for item in prompts}.values())
    groups: dict[JobGroup, list[Job]] = {}
    for repeat in range(config.repeats):
        for item in distinct:
            job = Job(item.row.prompt_sha256, repeat, item)
            groups.setdefault(job.group, []).append(job)
    if config.limit is not None:
        dealt = [
            job
            for round_ in itertools.zip_longest(*map(_across_hops, groups.values()))
            for job in round_
            if job is not None
        ]
        kept = {(job.sha, job.repeat) for job in dealt[: config.limit]}
        groups = {g: [job for job in jobs if (job.sha, job.repeat) in kept] for g, jobs in groups.items()}
    return [job for jobs in groups.values() for job in jobs]


def planned_keys(items: list[Item], config: ModelConfig) -> list[tuple[str, int]]:
    """(prompt SHA-256, repeat) of every job plan_jobs makes, in its order; without --limit, without making the jobs."""
    if config.limit is not None:
        return [(job.sha, job.repeat) for job in plan_jobs(items, config)]
    distinct = {item.row.prompt_sha256: item for item in items if config.model == SOLVER_MODEL or not item.row.overflow}
    groups: dict[tuple[str, str, str, str, int, str, str], list[str]] = {}
    for sha, item in distinct.items():
        r = item.row
        groups.setdefault((r.encoding, r.size, r.ids, item.context.id, r.permutation, r.mode, r.format), []).append(sha)
    return [(sha, repeat) for repeat in range(config.repeats) for shas in groups.values() for sha in shas]


def _across_hops(jobs: list[Job]) -> list[Job]:
    """The jobs dealt round-robin over hop counts and abstention, so a slice of them has some of each:
    hops 1, 1, 2, 3 -> 1, 2, 3, 1."""
    buckets: dict[str, list[Job]] = {}
    for job in jobs:
        buckets.setdefault(hop_bucket(job.item.question), []).append(job)
    ordered = [buckets[b] for b in HOP_BUCKETS if b in buckets]
    return [job for round_ in itertools.zip_longest(*ordered) for job in round_ if job is not None]


@dataclass(slots=True, frozen=True)
class LeftOut:
    """The requests (distinct prompts, each repeat) that a model run or a batch does not send."""

    over_context_window: int  # prompts over --context-window (the control solver sends them all)
    outside_limit: int  # prompts that --limit leaves out

    def to_dict(self) -> dict[str, int]:
        """As the manifest holds it."""
        return asdict(self)


def left_out(items: list[Item], config: ModelConfig) -> LeftOut:
    """What a model run or a batch of these items does not send."""
    distinct = {item.row.prompt_sha256: item for item in items}
    over = sum(1 for item in distinct.values() if item.row.overflow) if config.model != SOLVER_MODEL else 0
    return LeftOut(
        over * config.repeats, len(distinct) * config.repeats - over * config.repeats - len(plan_jobs(items, config))
    )


def run_model(
    measured: Measurement,
    config: ModelConfig,
    tokenizer: Tokenizer,
    header: dict[str, Any],
    out_dir: Path,
    post: Post = http_post,
) -> Sent:
    """Send every job not yet in the log; return what this invocation sent. Failures are logged, not raised."""
    key, redact = key_and_redactor(config)
    log_path = out_dir / LOG_NAME
    log = Log(log_path, redact)  # first: it repairs a torn last line
    try:
        jobs, skipped = pending_jobs(measured, config, log_path)
        tally = Tally(redact, len(jobs), config.max_output_tokens)
        sender = Sender(config, jobs, log, key, post, tally)
        log.write({**header, "type": "run", "jobs": len(jobs), "skipped": skipped})
        if config.model != SOLVER_MODEL:
            print(
                f"sending {len(jobs)} request(s) to {public_url(config.base_url)}, "
                f"{min(config.concurrency, len(jobs))} at a time"
                f" ({skipped} already answered in {display(log_path)})",
                file=sys.stderr,
                flush=True,
            )
        try:
            sender.start(min(config.concurrency, len(jobs)))
            sender.wait(lambda: tally.beat(sender.in_flight_text) if config.model != SOLVER_MODEL else None)
        except KeyboardInterrupt:
            # send nothing more; the requests in flight are paid, so their answers are logged
            sender.endpoint.halt.set()
            if sender.in_flight:
                print(
                    f"interrupted: waiting for the answers to the {sender.in_flight} request(s) in flight (at most "
                    "--timeout "
                    f"{config.timeout:g} s) so that none is paid and lost; Ctrl-C again to abandon them",
                    file=sys.stderr,
                )
                sender.wait()
            raise
        finally:
            sender.endpoint.halt.set()
            tally.progress.close()
        if sender.log_error:  # the log could not be written (a full disk): stopped before paying for more
            raise BenchmarkError(
                f"{display(log_path)}: cannot append to the log ({sender.log_error}); nothing more was "
                "sent, and what the log holds is kept: free some space and run the same command again"
            )
    finally:
        log.close()
    endpoint = sender.endpoint
    if endpoint.reason and not tally.answered:
        raise BenchmarkError(
            f"{redact(endpoint.reason)}; stopped after {tally.sent} request(s), {len(jobs) - tally.sent} not sent"
        )
    if endpoint.reason:  # requests in flight when it closed were answered: their results are written, the run stops
        endpoint.stopped = endpoint.reason
    return tally.summary(skipped, redact(endpoint.stopped) if endpoint.stopped else None, len(jobs) - tally.sent)


def pending_jobs(measured: Measurement, config: ModelConfig, log_path: Path) -> tuple[list[Job], int]:
    """The planned jobs the log has no answer to (an unreadable line stops the run: its answer would be paid
    again), and how many it has."""
    done, bad = set(), []
    for line_no, _, r in file_lines(log_path):
        if r is None:
            bad.append(line_no)
        elif r.get("type") == "request" and ((error := r.get("error")) is None or context_refusal(error)):
            # paid once, or never fits
            done.add(request_key(r.get("prompt_sha256"), r.get("model"), r.get("sampling"), r.get("repeat")))
    if bad:
        raise BenchmarkError(
            f"{display(log_path)}: line(s) {', '.join(map(str, bad[:10]))}{' ...' if len(bad) > 10 else ''} cannot "
            "be read, so their requests would be paid again; repair or remove them, then run again"
        )
    planned = plan_jobs(measured.items, config)
    jobs = [j for j in planned if request_key(j.sha, config.model, config.sampling(j.repeat), j.repeat) not in done]
    return jobs, len(planned) - len(jobs)


class Tally:
    """The outcomes of a run as they come, from every worker: sent, failed by reason, cut at the output cap,
    refused for context."""

    def __init__(self, redact: Redactor, total: int, cap: int) -> None:
        self.redact, self.progress, self.lock, self.cap = redact, Progress(total, "requests"), threading.Lock(), cap
        self.sent = self.cut = self.answered = 0
        # prompt + answer tokens (the server's counts) of answers cut short of the cap
        self.cut_before_cap: list[int] = []
        self.rate_waits: list[float] = []  # seconds each request that waited for the rate limit waited
        self.failures: Counter[str] = Counter()
        # prompt tokens, by our count, of the prompts the server refused for context
        self.refused_tokens: list[int] = []

    def add(self, outcome: Outcome, prompt_tokens: int) -> None:
        """One request's outcome, from any worker; prompt_tokens: its prompt's tokens by our count."""
        with self.lock:
            self.sent += 1
            if outcome.rate_wait_s:
                self.rate_waits.append(outcome.rate_wait_s)
            self.answered += outcome.error is None
            if context_refusal(outcome.error):
                self.refused_tokens.append(prompt_tokens)
            elif outcome.error:
                self.failures[failure_kind(self.redact(outcome.error))] += 1
            elif outcome.finish_reason == "length":
                self.cut += 1
                usage = Usage.of(outcome.usage)
                if end := context_end(usage.prompt_tokens, usage.completion_tokens, self.cap):
                    self.cut_before_cap.append(end)
            self.progress.advance(1, f"{sum(self.failures.values())} failed", eta=True)

    def beat(self, in_flight: Callable[[float], str]) -> None:
        """A status line when none came for HEARTBEAT seconds: a slow server is at work, not a hung run; in_flight(now)
        names what it is working on ('1 in flight: json q3 p1, 45 s')."""
        with self.lock:
            now = time.monotonic()
            if now - self.progress.last >= HEARTBEAT:
                waiting = (
                    "waiting for the first answer"
                    if not self.progress.done
                    else f"{sum(self.failures.values())} failed"
                )
                self.progress.show(now, f"{waiting}, {in_flight(now)}", eta=True)

    def summary(self, skipped: int, stopped: str | None, not_sent: int) -> Sent:
        refused = sorted(self.refused_tokens)
        waits = RateWaits(len(self.rate_waits), round(sum(self.rate_waits), 1), max(self.rate_waits, default=0.0))
        return Sent(
            self.sent,
            sum(self.failures.values()),
            dict(self.failures.most_common()),
            self.cut,
            Cuts.of(self.cut_before_cap),
            waits,
            len(refused),
            refused[:: max(len(refused) - 1, 1)],
            skipped,
            stopped,
            not_sent,
        )


def context_end(prompt: int | None, completion: int | None, cap: int) -> int | None:
    """Prompt and answer tokens together, by the server's counts (Usage), of an answer cut (finish_reason length) short
    of the output cap: the server's context window cut it (llama.cpp stops at n_ctx), not --max-output-tokens. None
    when the answer reached the cap or the server gave no counts."""
    return prompt + completion if prompt is not None and completion is not None and completion < cap else None


class Cuts(NamedTuple):
    """The answers cut short of the output cap (context_end), and the least and most tokens of prompt and answer they
    stopped at ([] when none)."""

    cut_before_cap: int
    cut_before_cap_at_tokens: list[int]

    @classmethod
    def of(cls, ends: list[int]) -> Cuts:
        return cls(len(ends), [min(ends), max(ends)] if ends else [])


class RateWaits(NamedTuple):
    """The requests that waited for the rate limit, the seconds in all, the longest wait."""

    requests: int
    seconds: float
    longest_s: float


@dataclass(slots=True, frozen=True)
class Sent:
    """What one invocation of a model run sent (run_model): results.json's request summary of a run, with the log's."""

    sent: int
    failed: int  # after their retries
    failures: dict[str, int]  # failure kind -> requests, the most first
    cut_by_length: int  # answers with finish_reason length
    cuts: Cuts
    rate_limit_waits: RateWaits
    context_overflow_by_server: int
    refused_prompt_tokens: list[int]  # the least and the most of the refused prompts, by the run's tokenizer
    skipped: int  # answered in the log already
    stopped: str | None  # why the run stopped early (the endpoint's reason), if it did
    not_sent: int

    def as_json(self) -> dict[str, Any]:
        return {
            "sent": self.sent,
            "failed": self.failed,
            "failures": self.failures,
            "cut_by_length": self.cut_by_length,
            **self.cuts._asdict(),
            "rate_limit_waits": self.rate_limit_waits._asdict(),
            "context_overflow_by_server": self.context_overflow_by_server,
            "refused_prompt_tokens": self.refused_prompt_tokens,
            "skipped": self.skipped,
            "stopped": self.stopped,
            "not_sent": self.not_sent,
        }


class RecentPrompts:
    """Prompt texts rebuilt from the measurement, the most recent kept up to a byte budget: the repeats and retries
    of a prompt go out close together, and rebuilding one (serializing its graph, checking its hash) cost more
    CPU than sending it. The budget keeps memory flat however many prompts a run has."""

    def __init__(self, budget: int = 64_000_000) -> None:
        self.texts: OrderedDict[str, str] = OrderedDict()
        self.budget, self.size, self.lock = budget, 0, threading.Lock()

    def get(self, item: Item) -> str:
        sha = item.row.prompt_sha256
        with self.lock:
            text = self.texts.get(sha)
            if text is not None:
                self.texts.move_to_end(sha)
                return text
        text = item.prompt()
        with self.lock:
            if sha not in self.texts:
                self.texts[sha] = text
                self.size += len(text)
                while self.size > self.budget and len(self.texts) > 1:
                    self.size -= len(self.texts.popitem(last=False)[1])
        return text


class Schedule:
    """Which job a free worker takes next. The first job of each prefix group is sent alone; the rest of its group
    become ready when its answer is in, so that a provider's prefix cache (or a one-slot server's KV cache)
    holds the shared graph for them. A free worker takes a ready job (cache-warm groups first, in order), else
    the first job of the next group not started; it waits only when neither exists. Without warming (the
    control solver) every job is ready at once."""

    def __init__(self, jobs: list[Job], warm: bool) -> None:
        groups: dict[JobGroup, deque[Job]] = {}
        for job in jobs:
            groups.setdefault(job.group, deque()).append(job)
        self.cond = threading.Condition()
        self.ready: deque[deque[Job]] = deque() if warm else deque(groups.values())
        self.unstarted: deque[deque[Job]] = deque(groups.values()) if warm else deque()
        self.warming = 0  # first jobs in flight

    def take(self, halt: threading.Event) -> tuple[Job, deque[Job] | None] | None:
        """The next job, and its group's other jobs when it is a first (hand them to warmed()); None when no job
        is left or the run stops."""
        with self.cond:
            while not halt.is_set():
                while self.ready:
                    if self.ready[0]:
                        return self.ready[0].popleft(), None
                    self.ready.popleft()
                if self.unstarted:
                    rest = self.unstarted.popleft()
                    self.warming += 1
                    return rest.popleft(), rest
                if not self.warming:
                    return None
                self.cond.wait(0.5)
            return None

    def warmed(self, rest: deque[Job]) -> None:
        """A group's first job has its answer: the rest of the group can go."""
        with self.cond:
            self.warming -= 1
            if rest:
                self.ready.append(rest)
            self.cond.notify_all()


class Sender:
    """Worker threads that send jobs in Schedule's order and log each outcome at once."""

    def __init__(self, config: ModelConfig, jobs: list[Job], log: Log, key: str, post: Post, tally: Tally) -> None:
        self.config, self.log, self.post, self.tally = config, log, post, tally
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self.headers = {"Content-Type": "application/json", **auth_headers(key)}
        self.endpoint = Endpoint(config)
        self.schedule = Schedule(jobs, warm=config.model != SOLVER_MODEL)
        self.log_error: str | None = None  # why the log could not be written: the run stops
        self.shown_graphs: SolverCache = {}  # for the solver: each shown graph and its index built once
        self.prompts = RecentPrompts()
        self.lock = threading.Lock()
        self.workers = self.in_flight = 0  # workers not yet ended; jobs being sent or logged
        self.flying: dict[int, tuple[str, float]] = {}  # id(job) -> (its label, when it was taken), for the heartbeat
        self.done = threading.Event()  # every worker has ended

    def start(self, n: int) -> None:
        """n worker threads. Daemon threads, counted here rather than joined: Thread.join interrupted by Ctrl-C
        can report a running thread as ended (before Python 3.13), and an abandoned run must not wait for them."""
        self.workers = n
        if n == 0:
            self.done.set()
        for i in range(n):
            threading.Thread(target=self.work, name=f"sender-{i}", daemon=True).start()

    def wait(self, beat: Callable[[], None] | None = None) -> None:
        """Until every worker has ended, in slices, so that Ctrl-C
        reaches the main thread at once; beat() between them."""
        while not self.done.wait(0.2):
            if beat is not None:
                beat()

    def work(self) -> None:
        """A worker: take jobs until none is left or the run stops."""
        try:
            while (taken := self.schedule.take(self.endpoint.halt)) is not None:
                job, rest = taken
                with self.lock:
                    self.in_flight += 1
                    self.flying[id(job)] = (job_label(job), time.monotonic())
                try:
                    outcome = self.send(job)
                except OSError as e:
                    self.log_error = e.strerror or str(e)
                    self.endpoint.halt.set()
                    return
                finally:
                    with self.lock:
                        self.in_flight -= 1
                        self.flying.pop(id(job), None)
                    if rest is not None:
                        self.schedule.warmed(rest)
                self.tally.add(outcome, job.item.row.prompt_tokens)
        finally:
            with self.lock:
                self.workers -= 1
                if self.workers == 0:
                    self.done.set()

    def in_flight_text(self, now: float) -> str:
        """'2 in flight: json q3, 45 s; tsv q1 p1, 3 s' (the longest-running first, three at most named)."""
        with self.lock:
            flying = sorted(self.flying.values(), key=operator.itemgetter(1))
        if not flying:
            return f"{self.in_flight} in flight"
        named = "; ".join(f"{label}, {now - start:.0f} s" for label, start in flying[:3])
        return f"{len(flying)} in flight: {named}" + ("; …" if len(flying) > 3 else "")

    def send(self, job: Job) -> Outcome:
        """Send one job and log its outcome at once, in this thread: an answer is on disk before the worker takes its
        next job, so a kill loses only the requests still in flight."""
        try:
            outcome = self._outcome(job)
        except Exception as e:  # every job ends in the log, even on a bug of ours
            outcome = outcome_record(None, None, f"internal error: {type(e).__name__}: {e}", None, 1, time.monotonic())
        row = job.item.row
        self.log.write(
            {
                "type": "request",
                "schema_version": LOG_SCHEMA_VERSION,
                "prompt_sha256": job.sha,
                "repeat": job.repeat,
                "model": self.config.model,
                "sampling": self.config.sampling(job.repeat),
                **{
                    k: getattr(row, k)
                    for k in ("format", "question_id", "size", "mode", "permutation", "ids", "encoding")
                },
                "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                **outcome.to_dict(),
            }
        )
        return outcome

    def _outcome(self, job: Job) -> Outcome:
        config, endpoint = self.config, self.endpoint
        if config.model == SOLVER_MODEL:
            return solver_outcome(job.item, self.shown_graphs)
        endpoint.enter()
        try:
            outcome = send(
                config,
                self.post,
                self.url,
                self.headers,
                config.body(self.prompts.get(job.item), job.repeat),
                f"{config.seed}/{job.sha}/{job.repeat}",
                endpoint,
                job.item.row.prompt_tokens + config.max_output_tokens,
            )
        finally:
            endpoint.leave()
        if outcome.error and outcome.status not in (None, *TRANSIENT_STATUSES) and not context_refusal(outcome.error):
            endpoint.repeated(outcome.error)  # here, before this worker takes its next job
        return outcome
