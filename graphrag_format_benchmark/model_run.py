"""A run with a model, after the measurement: the answers and their results. Loaded only when --model is given.

In: the measured items, the ModelConfig and the gate's settings. Out: the answers (sent and logged, scored from
--score files, or through the Batch API with --batch; or only exported as Batch request files), results.json,
results.md and results.svg (results.write_results), and what the manifest adds ("log", "batch"). Before the first
request: where an export may write (check_export_target), and whether any verdict can come out (check_verdict_possible).
"""

from __future__ import annotations

import json
import os
import platform
import stat
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._article import GENERATED_QUESTIONS, BenchmarkError, display, git_state, previous_outputs, warn
from .answers import (
    Answers,
    Collected,
    Requests,
    RunRequests,
    ScoredBatch,
    ScoredLogs,
    batch_notes,
    collect_batch,
    files_sha256,
    is_batch_file,
    log_info,
    log_summary,
    other_models,
)
from .artifacts import LOCK_NAME
from .options import RunConfig, parse_config
from .results import TOOL_VERSION, ResultsReport, questions_sha256, write_results
from .runner.batch import BATCH_DIR, BATCH_STATE, export_batch, export_files, run_batch
from .runner.config import SOLVER_MODEL, public_argv, public_url
from .runner.jobs import left_out, run_model
from .runner.log import LOG_NAME, LOG_SCHEMA_VERSION
from .runner.transport import MAX_RESPONSE_BYTES, untrusted_json

if TYPE_CHECKING:
    from .artifacts import Outputs
    from .gate import GateSpec
    from .matrix import GroupKey, Plan
    from .measure import Measurement, SizeRow
    from .runner.config import ModelConfig
    from .runner.log import RunLine
    from .sizes import Preflight


def check_export_target(
    path: Path, inputs: list[Path], out_dir: Path, overwrite: bool, planned: list[str] | tuple[()] = ()
) -> None:
    """--export-batch writes only where nothing of value is: never over an input or a file of the output folder (the
    run's own outputs included), and over an earlier export (the file or its numbered parts) only with
    --overwrite-batch, and only over files that are batch request files."""
    target = path.resolve()
    if any(target == p.resolve() for p in inputs):
        raise BenchmarkError(f"--export-batch {display(path)} is an input of this run; write the batch elsewhere")
    if target.parent == out_dir.resolve() and (
        path.name in (LOG_NAME + ".torn", LOCK_NAME, GENERATED_QUESTIONS, *planned)
        or path.name in previous_outputs(out_dir)
    ):
        raise BenchmarkError(
            f"--export-batch {display(path)} is a file of --out {display(out_dir)}; write the batch elsewhere"
        )
    existing = export_files(path)
    if path.is_dir():
        raise BenchmarkError(f"--export-batch {display(path)} is a folder; name a file")
    if existing and not overwrite:
        raise BenchmarkError(
            f"--export-batch: {display(existing[0])} exists; choose a new path, or pass --overwrite-batch to "
            "replace an earlier export and its numbered parts"
        )
    foreign = next((p for p in existing if not is_batch_export(p)), None)
    if foreign is not None:
        raise BenchmarkError(
            f"--export-batch: {display(foreign)} exists and is not a batch request file; --overwrite-batch replaces "
            "only earlier exports: move it, or choose another path"
        )


def is_batch_export(path: Path) -> bool:
    """The file is a Batch API request file (its first line has custom_id, method, url and body), or empty."""
    try:
        with open(path, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return False
            first = f.readline(MAX_RESPONSE_BYTES)
    except OSError:
        return False
    record = (
        untrusted_json(first.decode("utf-8", errors="replace"))
        if first.strip()
        else {"custom_id": "", "method": "", "url": "", "body": ""}
    )
    return isinstance(record, dict) and {"custom_id", "method", "url", "body"} <= record.keys()


def check_verdict_possible(rows: list[SizeRow], hints: dict[GroupKey, str], baseline: str, allow: bool) -> None:
    """Before the first request: the groups where no verdict can come out whatever the model answers (every
    baseline prompt over --context-window, or a mode B budget that leaves a whole gold path out of most prompts).
    When that is every group the run stops, saying what to change, unless allow; else each is named on stderr."""
    blocked: dict[GroupKey, str] = {}
    for group in dict.fromkeys(r.group for r in rows):
        mine = [r for r in rows if r.group == group and r.format == baseline]
        if mine and all(r.overflow for r in mine):
            smallest = min(r.prompt_tokens for r in mine)
            blocked[group] = (
                f"every {baseline} prompt (the baseline) of {' · '.join(group)} is over --context-window "
                f"{mine[0].context_window:,} (the smallest takes {smallest:,} tokens), so none is sent; show each "
                "question less of the graph (--context khop, --budget N, a smaller graph), or raise --context-window "
                "if the model takes more"
            )
        elif group in hints:
            blocked[group] = hints[group]
    if not blocked:
        return
    if len(blocked) == len(dict.fromkeys(r.group for r in rows)) and not allow:
        raise BenchmarkError(
            f"no verdict is possible, so nothing was sent: {next(iter(blocked.values()))}; or pass --allow-no-verdict "
            "to send the prompts anyway"
        )
    for reason in blocked.values():
        warn(f"no verdict is possible for this group: {reason}")


def model_outputs(
    run_config: RunConfig,
    model: ModelConfig,
    measured: Measurement,
    plan: Plan,
    staging: Outputs,
    config: dict[str, Any],
    gate_spec: GateSpec | None,
    hints: dict[GroupKey, str],
    record: Preflight,
    stdout: str,
) -> tuple[str, dict[str, Any], str | None]:
    """The model's answers, through the Batch API (--batch), as Batch request files
    (--export-batch), or sent and logged, and then their results. Returns what stdout says,
    what the manifest adds ("log", "batch"), and why the run did not fully succeed."""
    if model.model != SOLVER_MODEL and run_config.score is None:
        check_verdict_possible(
            measured.rows, hints, gate_spec.baseline if gate_spec else plan.formats[0], run_config.allow_no_verdict
        )
    if run_config.export_batch is not None and not run_config.batch:
        written = export_batch(
            measured, model, run_config.export_batch, run_config.batch_max_requests, run_config.batch_max_bytes
        )
        missing = left_out(measured.items, model)
        for f in written:
            stdout += f"\nbatch file: {f.file} ({f.requests} requests, {f.bytes:,} bytes; nothing was sent)"
        if missing.over_context_window or missing.outside_limit:
            warn(
                f"not in the batch: {missing.over_context_window} request(s) over --context-window and "
                f"{missing.outside_limit} outside --limit"
            )
        return stdout, {"batch": {"files": [f.to_dict() for f in written], "left_out": missing.to_dict()}}, None
    extra, score = {}, run_config.score  # the files to score: --score's, or what --batch brought back
    if run_config.batch:
        files, parts = run_batch(
            measured,
            model,
            run_config.out,
            run_config.poll_interval,
            run_config.batch_max_requests,
            run_config.batch_max_bytes,
        )
        extra = {"batch": {"parts": [p.to_dict() for p in parts]}}
        ended = [
            f"{p.batch_id} {p.status}" + (f" ({'; '.join(p.errors)})" if p.errors else "")
            for p in parts
            if p.status != "completed"
        ]
        if not files:
            raise BenchmarkError(
                f"no batch returned a file to score: {', '.join(ended) or 'nothing was planned'}; fix what the "
                f"errors say, then move {display(run_config.out / BATCH_DIR / BATCH_STATE)} aside to submit again"
            )
        for line in ended:
            warn(f"batch {line}: its answers that came back are scored, the rest count as failed")
        score = tuple(files)
    if gate_spec is None:  # make_gate_spec gives one to every model run that is not --export-batch
        raise AssertionError("a model run without its acceptance gate")  # an internal bug
    stdout, log, failure = model_results(
        run_config, model, measured, plan, staging, config, gate_spec, hints, record.skipped, score
    )
    return stdout, {**({"log": log} if log is not None else {}), **extra}, failure


# the flags that make a log answer other prompts when they differ (check_log_matches names them)
MATCHING_FLAGS = tuple(
    "graph questions formats sizes ids permutations budget context_window seed prompt encoding repeats graph_format "
    "graph_order store_fields context context_hops context_edges context_tokens generate_questions hops "
    "abstain_share property_share edge_ids pseudonymize limit".split()
)


def check_log_matches(
    collected: Collected, model: ModelConfig, here: RunConfig, names: list[str], measured: Measurement
) -> None:
    """Stop unless some answer in the logs is to a prompt of this command, by this model, with this sampling;
    the error names what differs from the invocations that wrote the logs (their header lines), or, with the same
    flags, the version that wrote them and this one (versions_differ)."""
    if collected.best:
        return
    differ = []
    for header in collected.headers:
        if header.model != model.model:
            differ.append(f"--model {header.model} (here {model.model})")
        for key, value in header.sampling.items():
            if model.sampling(0).get(key) != value:
                differ.append(f"{key} {json.dumps(value)} (here {json.dumps(model.sampling(0).get(key))})")
        try:
            there = parse_config(header.command[1:])
        except SystemExit:
            continue
        for flag in MATCHING_FLAGS:
            if getattr(there, flag) != getattr(here, flag):
                differ.append(f"--{flag.replace('_', '-')} {_as_given(there, flag)} (here {_as_given(here, flag)})")
    if differ:
        raise BenchmarkError(
            f"{', '.join(names)}: no answer to a prompt of this command; the log was written with "
            f"{'; '.join(dict.fromkeys(differ))}; pass the same flags as the run that wrote it"
        )
    raise BenchmarkError(
        f"{', '.join(names)}: no answer to a prompt of this command; {versions_differ(collected.headers, measured)}"
    )


def _as_given(run_config: RunConfig, flag: str) -> object:
    """A flag's value as a command line gives it: a comma-separated flag's names joined again (('json', 'dsl') ->
    json,dsl)."""
    value = getattr(run_config, flag)
    return ",".join(value) if isinstance(value, tuple) else value


def versions_differ(headers: list[RunLine], measured: Measurement) -> str:
    """Why a log written with this command's flags answers none of its prompts: another version made them (its
    questions drawn or worded otherwise); both versions named, and what to do."""
    if not headers:
        return "the log has no header line to say how it was made; score it with the version and flags that wrote it"
    header = headers[-1]
    there = f"{header.tool_version or 'an earlier version (its header names none)'}" + (
        f", git {str(header.commit)[:12]}" if header.commit else ""
    )
    here_git = git_state().get("commit")
    here = f"{TOOL_VERSION}" + (f", git {here_git[:12]}" if here_git else "")
    same = header.questions_sha256 == questions_sha256(measured) if header.questions_sha256 else None
    what = (
        "its questions are this command's, so its prompts were laid out otherwise"
        if same
        else "its questions differ from this command's (drawn or worded otherwise)"
        if same is False
        else "its prompts are not this version's (questions drawn or worded otherwise, or another layout)"
    )
    return (
        f"the log was written with the same flags by graphrag-format-benchmark {there}, and this is {here}: {what}; "
        "score it "
        "with the version that wrote it, or run the same command with --model to send this version's prompts"
    )


def model_results(
    run_config: RunConfig,
    model: ModelConfig,
    measured: Measurement,
    plan: Plan,
    out: Outputs,
    config: dict[str, Any],
    gate_spec: GateSpec,
    hints: dict[GroupKey, str],
    skipped: list[dict[str, Any]],
    score: tuple[Path, ...] | None,
) -> tuple[str, dict[str, Any], str | None]:
    """Collect the answers (send the prompts, or read the files to score: --score's, or a batch's), then score them and
    write the results."""
    config["model"] = shown = {**asdict(model), "base_url": public_url(model.base_url)}
    prices = (
        run_config.input_price_per_million,
        run_config.output_price_per_million,
        run_config.cached_input_price_per_million,
    )
    report = ResultsReport(
        measured,
        model,
        prices,
        gate_spec,
        hints,
        skipped,
        plan.context_window,
        {
            "model": shown,
            "run": {k: v for k, v in config.items() if k not in ("argv", "model")},
            "command": ["benchmark.py", *public_argv(run_config.argv)],
        },
    )
    answers = (
        scored_answers(run_config, model, measured, score)
        if score is not None
        else sent_answers(run_config, model, measured, plan)
    )
    stdout, failure = write_results(out, answers, report)
    return stdout + f"\nresults: {display(run_config.out / 'results.md')}", answers.log, failure


def scored_answers(
    run_config: RunConfig, model: ModelConfig, measured: Measurement, score: tuple[Path, ...]
) -> Answers:
    """--score: the answers of logs of this tool, or of Batch API output and error files, with no network, and their
    summary. A file is a Batch file when its first readable line has a custom_id."""
    kinds, notes = [], []
    for path in score:
        if not path.exists():
            raise BenchmarkError(
                f"{display(path)}: no such file; pass the requests.jsonl of a run, or Batch API output and error files"
            )
        kinds.append(is_batch_file(path))
    if any(kinds):
        if not all(kinds):
            raise BenchmarkError(
                "--score takes either logs of this tool or Batch API output and error files, not both at once"
            )
        collected, batch = collect_batch(list(score), measured.items, model)
        others = other_models(batch.models, model.model)
        if others and not run_config.accept_other_model:
            raise BenchmarkError(
                f"{', '.join(batch.files)}: the answers come from model {', '.join(others)}, not --model "
                f"{model.model} (only a dated snapshot, {model.model}-YYYY-MM-DD, is the same model); pass the "
                "model that answered as --model, or --accept-other-model to score them as its answers knowingly"
            )
        notes = batch_notes(batch, model)
        summary: Requests = ScoredBatch(batch, notes)
    else:
        collected = Collected(measured.items, model)
        for path in score:
            collected.log(path)
        check_log_matches(collected, model, run_config, [display(p) for p in score], measured)
        summary = ScoredLogs([display(p) for p in score], log_summary(collected, measured.items, model))
    for name, lines in collected.unreadable.items():
        warn(
            f"{name}: line(s) {', '.join(map(str, lines[:10]))}{' ...' if len(lines) > 10 else ''} cannot be read and "
            "are "
            "not scored; their prompts count as not run"
        )
    for note in notes:
        warn(note)
    return Answers(collected.best, summary, log_info(list(score), collected.unreadable, files_sha256(list(score))))


def sent_answers(run_config: RunConfig, model: ModelConfig, measured: Measurement, plan: Plan) -> Answers:
    """A model run: send what the log lacks, then every answer the log holds for this command."""
    import tiktoken

    log_path = run_config.out / LOG_NAME
    header = {
        "schema_version": LOG_SCHEMA_VERSION,
        "tool": "graphrag-format-benchmark",
        "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "model": model.model,
        "base_url": None if model.model == SOLVER_MODEL else public_url(model.base_url),
        "sampling": model.sampling(0),
        "repeats": model.repeats,
        "concurrency": model.concurrency,
        "limit": model.limit,
        "timeout": model.timeout,
        "max_retries": model.max_retries,
        "python": platform.python_version(),
        "tiktoken": tiktoken.__version__,
        "git": git_state(),
        "command": ["benchmark.py", *public_argv(run_config.argv)],
        "tool_version": TOOL_VERSION,
        "questions_sha256": questions_sha256(measured),
    }
    sent = run_model(measured, model, plan.tokenizers[0], header, run_config.out)
    collected = Collected(measured.items, model)
    collected.log(log_path)
    # every invocation, not only this one
    summary = RunRequests(sent, log_summary(collected, measured.items, model))
    return Answers(collected.best, summary, log_info([log_path], collected.unreadable, files_sha256([log_path])))
