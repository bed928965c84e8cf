"""One run, from the flags to the published folder (run).

In: the checked flags. Out: the output folder: the preflight (inputs, solver, leakage), the measurement, the size
reports, then, with a model, the answers (sent, scored from --score files, or through the Batch API) and the
results; report.html and manifest.json last. Files are staged and published together, or not at all.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from benchmark import (
    DEFAULT_QUESTIONS,
    GENERATED_QUESTIONS,
    MANIFEST,
    PROMPT_TEMPLATES,
    BenchmarkError,
    InputProblems,
    Problems,
    build_manifest,
    console_table,
    display,
    git_state,
    json_bytes,
    previous_outputs,
    publish,
    question_counts,
    read_input,
    warn,
)

from .answers import Answers, Collected, batch_notes, collect_batch, files_sha256, log_info, log_summary, other_models
from .artifacts import LOCK_NAME, OutLock, Outputs, format_library_versions
from .charts import size_report_svg
from .inputs import load_inputs
from .leakage import leakage_checks
from .matrix import build_variants, group_key, input_contexts, planned_files
from .measure import ThreadedCounts, measure
from .options import check_flags, make_gate_spec, make_generate_spec, make_model_config, make_parser, make_plan
from .questions import question_drawer
from .report import report_html
from .results import ResultsReport, write_results
from .runner.batch import BATCH_DIR, BATCH_STATE, export_batch, run_batch
from .runner.config import SOLVER_MODEL, public_argv, public_url
from .runner.jobs import left_out, run_model
from .runner.log import LOG_NAME, LOG_SCHEMA_VERSION, file_lines
from .runner.transport import MAX_RESPONSE_BYTES, untrusted_json
from .scoring import gc_paused
from .sizes import budget_hints, console_summary, markdown_report, part_cost_line, skipped_text, summarize
from .solver import check_questions
from .variants.contexts import Context, context_problems
from .variants.names import script

if TYPE_CHECKING:
    from benchmark import RunInputs

    from .gate import GateSpec
    from .matrix import GroupKey, Plan
    from .measure import Measurement
    from .runner.config import ModelConfig
    from .variants.contexts import Variant


def check_export_target(path: Path, inputs: list[Path], out_dir: Path, overwrite: bool, planned: list[str] = ()) -> None:
    """--export-batch writes only where nothing of value is: never over an input or a file of the output folder (the
    run's own outputs included), and over an earlier export (the file or its numbered parts) only with
    --overwrite-batch, and only over files that are batch request files."""
    target = path.resolve()
    if any(target == p.resolve() for p in inputs):
        raise BenchmarkError(f"--export-batch {display(path)} is an input of this run; write the batch elsewhere")
    if target.parent == out_dir.resolve() and (path.name in (*EXTRA_OUTPUTS, LOG_NAME + ".torn", LOCK_NAME, GENERATED_QUESTIONS, *planned)
                                               or path.name in previous_outputs(out_dir)):
        raise BenchmarkError(f"--export-batch {display(path)} is a file of --out {display(out_dir)}; write the batch elsewhere")
    split = re.compile(rf"{re.escape(path.stem)}\.\d{{3}}-of-\d{{3}}{re.escape(path.suffix)}")
    existing = [p for p in ([path] if path.exists() else []) + (sorted(path.parent.glob(f"{path.stem}.*")) if path.parent.is_dir() else [])
                if p == path or split.fullmatch(p.name)]
    if path.is_dir():
        raise BenchmarkError(f"--export-batch {display(path)} is a folder; name a file")
    if existing and not overwrite:
        raise BenchmarkError(f"--export-batch: {display(existing[0])} exists; choose a new path, or pass --overwrite-batch to "
                             "replace an earlier export and its numbered parts")
    foreign = next((p for p in existing if not is_batch_export(p)), None)
    if foreign is not None:
        raise BenchmarkError(f"--export-batch: {display(foreign)} exists and is not a batch request file; --overwrite-batch replaces "
                             "only earlier exports: move it, or choose another path")


def is_batch_export(path: Path) -> bool:
    """The file is a Batch API request file (its first line has custom_id, method, url and body), or empty."""
    try:
        with open(path, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return False
            first = f.readline(MAX_RESPONSE_BYTES)
    except OSError:
        return False
    record = untrusted_json(first.decode("utf-8", errors="replace")) if first.strip() else {"custom_id": "", "method": "", "url": "", "body": ""}
    return isinstance(record, dict) and {"custom_id", "method", "url", "body"} <= record.keys()


EXTRA_OUTPUTS = ("size_report.json", "size_report.md", "size_report.svg", "size_summary.json", MANIFEST, LOG_NAME, "results.json",
                 "results.md", "results.svg")


def preflight(args: argparse.Namespace, plan: Plan) -> tuple[RunInputs, dict]:
    """Read and check everything before the first token is counted: the inputs, every question against the
    solver, the leakage checks. Every problem is reported at once; --skip-invalid-questions drops the
    questions at fault instead (and says which, and why). Returns the inputs to measure and the record."""
    problems = Problems()
    spec = make_generate_spec(args, plan)
    inputs = load_inputs(args.graph, args.questions or DEFAULT_QUESTIONS, problems, question_drawer(spec) if spec else None,
                         args.graph_format, args.graph_order)
    if args.relation_phrases is not None and spec is not None:  # read already: its SHA-256 goes to the manifest with the others
        inputs.files[display(args.relation_phrases)] = read_input(args.relation_phrases, "--relation-phrases")
    if inputs.generated is not None:
        drawn = sum(inputs.generated.values())
        if drawn < args.generate_questions:
            per_hop = ", ".join(f"{h} hop(s): {n}" for h, n in inputs.generated.items()) or "none"
            warn(f"the graph yields {drawn} of the {args.generate_questions} questions asked for ({per_hop})")
    src = inputs.questions_file
    if not problems.fatal():
        check_questions(inputs.graph, inputs.questions, src, problems)
        context_problems(inputs.graph, inputs.questions, src, problems)
        given = next((q.id for q in inputs.questions if q.context), None)
        if given and plan.context == "khop":
            problems.add(f"{src}: question {given} gives its own context, and --context khop would cut another; leave --context "
                         "khop out to use the given ones, or remove them")
        if not given and plan.context == "given":
            problems.add(f"{src}: --context given, but no question gives a 'context'; give each one, or use --context khop")
        if set(plan.sizes) - {"small"}:
            for q in inputs.questions:
                if q.query is None:
                    problems.add(f"{src}: question {q.id} has no 'query': distractor graphs need every question's query "
                                 "to prove they leave its answer alone (see README, questions); add it or use --sizes small", q.id)
        names = [*planned_files(plan, inputs.questions), *EXTRA_OUTPUTS]
        for check in leakage_checks(inputs.questions, [("input", (Context("", inputs.graph, inputs.questions),))], plan.template, names):
            if check["result"] == "fail" and args.leakage == "fail":
                for found in check["found"]:
                    if found["question"]:
                        where, fix = f"{src}: question {found['question']}", "fix the question"
                    elif check["check"] == "ids_are_neutral":
                        where, fix = display(args.graph), "rename the id"
                    else:
                        where, fix = plan.template.name, "fix the template"
                    problems.add(f"{where}: leakage check {check['check']} failed: {found['found']}; {fix}, or pass --leakage "
                                 "warn to measure anyway", found["question"])
    by_question, fatal = problems.questions(), problems.fatal()
    if fatal or (by_question and not args.skip_invalid_questions):
        hint = "; pass --skip-invalid-questions to drop the questions at fault and go on" if by_question and not fatal else ""
        raise InputProblems([m for _, m in problems.lines], hint)
    skipped = [{"question": key, "reasons": reasons} for key, reasons in by_question.items()]
    if skipped:
        kept = tuple(q for q in inputs.questions if q.id not in by_question)
        for s in skipped:
            warn(f"skipped question {s['question']}: {'; '.join(s['reasons'])}")
        if not kept:
            raise BenchmarkError(f"{src}: every question was skipped ({len(skipped)} with problems); nothing was written")
        warn(f"{len(skipped)} question(s) skipped, {len(kept)} kept")
        inputs = replace(inputs, questions=kept, skipped=tuple(skipped))
    if args.prompt is None and not any(script(n.name) == "CYRILLIC" for n in inputs.graph.nodes):
        warn("the graph's names hold no Cyrillic, but the prompt is the article's Russian one (the default, --prompt ru); "
             "for an English graph try --prompt en")
    questions = inputs.questions
    record = {"questions": question_counts(questions), "skipped_questions": skipped}
    return inputs, record


def variant_checks(args: argparse.Namespace, plan: Plan, inputs: RunInputs, variants: list[Variant]) -> list[dict]:
    """The leakage checks on every graph variant, as recorded; with --leakage warn, failures become warnings."""
    names = [*planned_files(plan, inputs.questions), *EXTRA_OUTPUTS]
    checks = leakage_checks(inputs.questions, [(v.name, v.contexts) for v in variants], plan.template, names)
    for check in checks:
        if check["result"] == "fail":
            if args.leakage == "fail":
                raise BenchmarkError(f"leakage check {check['check']} failed ({check['detail']}); nothing was written")
            check["result"] = "warn"
        if check["result"] == "warn":
            warn(f"leakage check {check['check']}: {check['detail']}")
    return checks


def check_verdict_possible(rows: list[dict], hints: dict[GroupKey, str], baseline: str, allow: bool) -> None:
    """Before the first request: the groups where no verdict can come out whatever the model answers (every
    baseline prompt over --context-window, or a mode B budget that leaves a whole gold path out of most prompts).
    When that is every group the run stops, saying what to change, unless allow; else each is named on stderr."""
    blocked: dict[GroupKey, str] = {}
    for group in dict.fromkeys(map(group_key, rows)):
        mine = [r for r in rows if group_key(r) == group and r["format"] == baseline]
        if mine and all(r["overflow"] for r in mine):
            smallest = min(r["prompt_tokens"] for r in mine)
            blocked[group] = (f"every {baseline} prompt (the baseline) of {' · '.join(group)} is over --context-window "
                              f"{mine[0]['context_window']:,} (the smallest takes {smallest:,} tokens), so none is sent; show each "
                              "question less of the graph (--context khop, --budget N, a smaller graph), or raise --context-window "
                              "if the model takes more")
        elif group in hints:
            blocked[group] = hints[group]
    if not blocked:
        return
    if len(blocked) == len(dict.fromkeys(map(group_key, rows))) and not allow:
        raise BenchmarkError(f"no verdict is possible, so nothing was sent: {next(iter(blocked.values()))}; or pass --allow-no-verdict "
                             "to send the prompts anyway")
    for reason in blocked.values():
        warn(f"no verdict is possible for this group: {reason}")


def run_config(args: argparse.Namespace, argv: list[str], plan: Plan, inputs: RunInputs, measured: Measurement) -> dict:
    """The resolved configuration of a run, for its manifest: every flag as used, what generated questions drew."""
    return {
        "argv": argv,
        "encodings": [t.name for t in plan.tokenizers],
        "graph": display(args.graph),
        "graph_format": inputs.graph_format,
        "graph_order": args.graph_order,
        "context": {"kind": plan.context, "hops": plan.context_hops, "edges": plan.context_edges} if plan.context == "khop" else plan.context,
        "questions": display(args.questions or DEFAULT_QUESTIONS) if args.generate_questions is None else GENERATED_QUESTIONS,
        "generate_questions": None if args.generate_questions is None else {
            "n": args.generate_questions, "hops": args.hops, "abstain_share": args.abstain_share, "drawn": inputs.generated},
        "out": display(args.out),
        "formats": plan.formats,
        "sizes": plan.sizes,
        "ids": plan.ids,
        "permutations": plan.permutations,
        "budget": plan.budget,
        "context_window": plan.context_window,
        "seed": plan.seed,
        "prompt": {"template": plan.template.name, "sha256": plan.template.sha256},
        "leakage": args.leakage,
        "skip_invalid_questions": args.skip_invalid_questions,
        **measured.facts,
    }


def run(args: argparse.Namespace, argv: list[str]) -> tuple[str, str | None]:
    """Do the whole run; return what goes to stdout, and why the run did not fully succeed (exit code 1)
    when some requests failed after their retries."""
    check_flags(args)
    plan = make_plan(args)
    model = make_model_config(args)
    gate_spec = make_gate_spec(args, plan)
    inputs, record = preflight(args, plan)
    if model is not None and args.export_batch is not None:
        check_export_target(args.export_batch, [args.graph, args.questions or DEFAULT_QUESTIONS]
                            + ([Path(args.prompt)] if args.prompt and args.prompt not in PROMPT_TEMPLATES else []), args.out,
                            args.overwrite_batch, planned_files(replace(plan, write_prompts=None), inputs.questions))
    plan = replace(plan, context="given") if plan.context == "shared" and any(q.context for q in inputs.questions) else plan
    counts = ThreadedCounts()
    contexts, record["contexts"] = input_contexts(inputs, plan)
    variants = build_variants(inputs, plan, counts, contexts)
    record = {"solver": {v.name: "agrees" for v in variants}, "leakage": variant_checks(args, plan, inputs, variants), **record,
              "distractor_shortages": list(dict.fromkeys(v.shortage for v in variants if v.shortage))}
    staging = Outputs(args.out)
    lock = OutLock(args.out)
    try:
        lock.acquire()
        measured, hints, stdout = measured_sizes(args, plan, inputs, variants, counts, record, staging)
        config = run_config(args, argv, plan, inputs, measured)
        stdout, extra, failure = model_outputs(args, argv, model, measured, plan, staging, config, gate_spec, hints, record, stdout)
        staging.add("report.html", report_html(measured, plan, staging, "graphrag-format-benchmark" + (f" · {model.model}" if model else ""),
                                               {n.id for n in inputs.graph.nodes}))
        manifest = build_manifest(config, plan.tokenizers, inputs, staging.sha, record, public_argv(argv),
                                  format_library_versions(plan.formats))
        publish(staging, {**manifest, **extra}, lock.release)
    except BaseException:
        lock.release()
        staging.discard()
        raise
    finally:
        lock.release()
        counts.close()
    return stdout, failure


def measured_sizes(args: argparse.Namespace, plan: Plan, inputs: RunInputs, variants: list[Variant], counts: ThreadedCounts,
                   record: dict, staging: Outputs) -> tuple[Measurement, dict[GroupKey, str], str]:
    """The measurement and its size reports into staging (size_report.json; for a matrix run also size_summary.json,
    size_report.md and size_report.svg); the mode B groups whose budget blocks a verdict; and what stdout says."""
    if inputs.generated_bytes is not None:
        staging.add(GENERATED_QUESTIONS, inputs.generated_bytes)
    measured = measure(inputs, plan, staging, variants, counts)
    rows = measured.rows
    staging.add("size_report.json", json_bytes(rows))
    summary = summarize(rows)
    hints = budget_hints(measured.items, plan, counts) if plan.budget else {}
    record["budget_hints"] = list(hints.values())
    if not plan.article_layout:
        staging.add("size_summary.json", json_bytes(summary))
        staging.add("size_report.md", markdown_report(summary, rows, variants, record, plan, staging.sha, measured.facts).encode("utf-8"))
        staging.add("size_report.svg", size_report_svg(summary, plan).encode("utf-8"))
    stdout = console_table(rows, plan.formats) if plan.article_layout and len(plan.tokenizers) == 1 else (
        console_summary(summary) + "".join(f"\nnote: {hint}" for hint in record["budget_hints"])
        + f"\nreport: {display(args.out / ('size_report.json' if plan.article_layout else 'size_report.md'))}"
    )
    if plan.edge_ids:
        stdout += "\n" + part_cost_line(measured.facts["edge_id_graph_tokens"], "edge ids")
    if "property_graph_tokens" in measured.facts:
        stdout += "\n" + part_cost_line(measured.facts["property_graph_tokens"], "properties")
    if record["skipped_questions"]:
        skipped = record["skipped_questions"]
        stdout += f"\nskipped {len(skipped)} question(s) (--skip-invalid-questions): {skipped_text(skipped)}"
    return measured, hints, stdout


def model_outputs(args: argparse.Namespace, argv: list[str], model: ModelConfig | None, measured: Measurement, plan: Plan,
                  staging: Outputs, config: dict, gate_spec: GateSpec | None, hints: dict[GroupKey, str], record: dict,
                  stdout: str) -> tuple[str, dict, str | None]:
    """With a model: its answers, through the Batch API (--batch), as Batch request files (--export-batch), or sent and
    logged, and then their results. Returns what stdout says, what the manifest adds ("log", "batch"), and why
    the run did not fully succeed."""
    if model is None:
        return stdout, {}, None
    if model.model != SOLVER_MODEL and args.score is None:
        check_verdict_possible(measured.rows, hints, gate_spec.baseline if gate_spec else plan.formats[0], args.allow_no_verdict)
    if args.export_batch is not None and not args.batch:
        written = export_batch(measured, model, args.export_batch, args.batch_max_requests, args.batch_max_bytes)
        missing = left_out(measured.items, model)
        for part in written:
            stdout += f"\nbatch file: {part['file']} ({part['requests']} requests, {part['bytes']:,} bytes; nothing was sent)"
        if any(missing.values()):
            warn(f"not in the batch: {missing['over_context_window']} request(s) over --context-window and "
                 f"{missing['outside_limit']} outside --limit")
        return stdout, {"batch": {"files": written, "left_out": missing}}, None
    extra = {}
    if args.batch:
        files, parts = run_batch(measured, model, args.out, args.poll_interval, args.batch_max_requests, args.batch_max_bytes)
        extra["batch"] = {"parts": parts}
        ended = [f"{p['batch_id']} {p['status']}" + (f" ({'; '.join(p['errors'])})" if p.get("errors") else "")
                 for p in parts if p.get("status") != "completed"]
        if not files:
            raise BenchmarkError(f"no batch returned a file to score: {', '.join(ended) or 'nothing was planned'}; fix what the "
                                 f"errors say, then move {display(args.out / BATCH_DIR / BATCH_STATE)} aside to submit again")
        for line in ended:
            warn(f"batch {line}: its answers that came back are scored, the rest count as failed")
        args.score = files
    stdout, log, failure = model_results(args, argv, model, measured, plan, staging, config, gate_spec, hints, record["skipped_questions"])
    return stdout, {**({"log": log} if log is not None else {}), **extra}, failure


MATCHING_FLAGS = ("graph", "questions", "formats", "sizes", "ids", "permutations", "budget", "context_window", "seed", "prompt",
                  "encoding", "repeats", "graph_format", "graph_order", "context", "context_hops", "context_edges", "generate_questions",
                  "hops", "abstain_share", "property_share", "edge_ids", "pseudonymize", "limit")


def check_log_matches(collected: Collected, model: ModelConfig, argv: list[str], names: list[str]) -> None:
    """Stop unless some answer in the logs is to a prompt of this command, by this model, with this sampling;
    the error names what differs from the invocations that wrote the logs (their header lines)."""
    if collected.best:
        return
    here, differ = make_parser().parse_args(argv), []
    for header in collected.headers:
        if header.get("model") != model.model:
            differ.append(f"--model {header.get('model')} (here {model.model})")
        for key, value in (header.get("sampling") or {}).items():
            if model.sampling(0).get(key) != value:
                differ.append(f"{key} {json.dumps(value)} (here {json.dumps(model.sampling(0).get(key))})")
        try:
            there = make_parser().parse_args(list(header.get("command") or [])[1:])
        except SystemExit:
            continue
        for flag in MATCHING_FLAGS:
            if getattr(there, flag) != getattr(here, flag):
                differ.append(f"--{flag.replace('_', '-')} {getattr(there, flag)} (here {getattr(here, flag)})")
    shown = "; ".join(dict.fromkeys(differ)) or "no header line says how they were made"
    raise BenchmarkError(f"{', '.join(names)}: no answer to a prompt of this command; the log was written with {shown}; "
                         "pass the same flags as the run that wrote it")


def model_results(args, argv, model: ModelConfig, measured: Measurement, plan: Plan, out: Outputs, config: dict, gate_spec: GateSpec,
                  hints: dict[GroupKey, str], skipped: list[dict]) -> tuple[str, dict, str | None]:
    """Collect the answers (send the prompts, or read --score FILE), then score them and write the results."""
    config["model"] = {**asdict(model), "base_url": public_url(model.base_url)}
    answers = scored_answers(args, argv, model, measured) if args.score is not None else sent_answers(args, argv, model, measured, plan)
    prices = (args.input_price_per_million, args.output_price_per_million, args.cached_input_price_per_million)
    report = ResultsReport(measured, model, prices, gate_spec, hints, skipped, plan.context_window,
                           {"model": config["model"], "run": {k: v for k, v in config.items() if k not in ("argv", "model")},
                            "command": ["benchmark.py", *public_argv(argv)]})
    stdout, failure = write_results(out, answers, report)
    return stdout + f"\nresults: {display(args.out / 'results.md')}", answers.log, failure


def scored_answers(args, argv, model: ModelConfig, measured: Measurement) -> Answers:
    """--score: the answers of logs of this tool, or of Batch API output and error files, with no network. A file
    is a Batch file when its first readable line has a custom_id."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="sha256") as hasher:
        sha256 = hasher.submit(files_sha256, list(args.score))  # beside the parsing: both read the files
        collected, summary = _collect_scored(args, argv, model, measured)
    return Answers(collected.best, summary, log_info(list(args.score), collected.unreadable, sha256.result()))


def _collect_scored(args, argv, model: ModelConfig, measured: Measurement) -> tuple[Collected, dict]:
    """The answers of the --score files and their summary, as logs of this tool or as Batch files."""
    kinds = []
    for path in args.score:
        if not path.exists():
            raise BenchmarkError(f"{display(path)}: no such file; pass the requests.jsonl of a run, or Batch API output and error files")
        first = next((r for _, _, r in file_lines(path) if r is not None), None)
        kinds.append(first is not None and "custom_id" in first)
    if any(kinds):
        if not all(kinds):
            raise BenchmarkError("--score takes either logs of this tool or Batch API output and error files, not both at once")
        with gc_paused():
            collected, summary = collect_batch(list(args.score), measured.items, model)
        others = other_models(summary["models"], model.model)
        if others and not args.accept_other_model:
            raise BenchmarkError(f"{', '.join(summary['files'])}: the answers come from model {', '.join(others)}, not --model "
                                 f"{model.model} (only a dated snapshot, {model.model}-YYYY-MM-DD, is the same model); pass the "
                                 "model that answered as --model, or --accept-other-model to score them as its answers knowingly")
        summary.update(mode="batch", notes=batch_notes(summary, model))
    else:
        collected = Collected(measured.items, model)
        with gc_paused():
            for path in args.score:
                collected.log(path)
        check_log_matches(collected, model, argv, [display(p) for p in args.score])
        summary = {"mode": "log", "files": [display(p) for p in args.score], **log_summary(collected, measured.items, model)}
    for name, lines in collected.unreadable.items():
        warn(f"{name}: line(s) {', '.join(map(str, lines[:10]))}{' ...' if len(lines) > 10 else ''} cannot be read and are "
             "not scored; their prompts count as not run")
    for note in summary.get("notes", []):
        warn(note)
    return collected, summary


def sent_answers(args, argv, model: ModelConfig, measured: Measurement, plan: Plan) -> Answers:
    """A model run: send what the log lacks, then every answer the log holds for this command."""
    import tiktoken

    log_path = args.out / LOG_NAME
    header = {
        "schema_version": LOG_SCHEMA_VERSION, "tool": "graphrag-format-benchmark",
        "started_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "model": model.model, "base_url": None if model.model == SOLVER_MODEL else public_url(model.base_url),
        "sampling": model.sampling(0),
        "repeats": model.repeats, "concurrency": model.concurrency, "limit": model.limit, "timeout": model.timeout,
        "max_retries": model.max_retries, "python": platform.python_version(), "tiktoken": tiktoken.__version__,
        "git": git_state(), "command": ["benchmark.py", *public_argv(argv)],
    }
    summary = {"mode": "run", **run_model(measured, model, plan.tokenizers[0], header, args.out)}
    collected = Collected(measured.items, model)
    with gc_paused():
        collected.log(log_path)
    summary["log"] = log_summary(collected, measured.items, model)  # every invocation, not only this one
    return Answers(collected.best, summary, log_info([log_path], collected.unreadable, files_sha256([log_path])))
