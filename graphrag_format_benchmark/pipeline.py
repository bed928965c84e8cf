"""One run, from the checked flags to the published folder (run).

In: the flags. Out: the output folder, staged and published together or not at all: the preflight (the inputs, every
question against the control solver, the leakage checks), the graph variants, the measurement and its size reports
(measured_sizes), then, with --model, the answers and their results (model_run, loaded only then), and report.html and
manifest.json last.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._article import (
    DATA,
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
    json_bytes,
    publish,
    question_counts,
    read_input,
    warn,
)
from .artifacts import Outputs, format_library_versions, held_outputs
from .charts import size_report_svg
from .frameworks import FRAMEWORK_BUDGETS, FRAMEWORK_FORMATS
from .gate import GateSpec
from .inputs import STORES, derived_queries_note, load_inputs, undirected_template
from .leakage import LeakageCheck, leakage_checks
from .matrix import build_variants, input_contexts, planned_files
from .measure import ThreadedCounts, measure
from .options import (
    RunConfig,
    baseline_format,
    check_flags,
    make_gate_spec,
    make_generate_spec,
    make_model_config,
    make_plan,
)
from .questions import GenerateSpec, question_drawer
from .report import report_html
from .runner.config import SOLVER_MODEL, public_argv
from .runner.log import LOG_NAME
from .sizes import Preflight, budget_hints, console_summary, markdown_report, part_cost_line, skipped_text, summarize
from .solver import check_questions
from .stores import UNDIRECTED
from .variants.contexts import Context, context_problems
from .variants.names import script

if TYPE_CHECKING:
    from ._article import RunInputs
    from .matrix import GroupKey, Plan
    from .measure import Measurement
    from .variants.contexts import Variant


EXTRA_OUTPUTS = (
    "size_report.json",
    "size_report.md",
    "size_report.svg",
    "size_summary.json",
    MANIFEST,
    LOG_NAME,
    "results.json",
    "results.md",
    "results.svg",
)


def preflight(run_config: RunConfig, plan: Plan) -> tuple[RunInputs, Preflight]:
    """Read and check everything before the first token is counted: the inputs, every question against the
    solver, the leakage checks. Every problem is reported at once; --skip-invalid-questions drops the
    questions at fault instead (and says which, and why). Returns the inputs to measure and the record."""
    problems = Problems()
    spec = make_generate_spec(run_config, plan)
    inputs = load_inputs(
        run_config.graph,
        run_config.questions or DEFAULT_QUESTIONS,
        problems,
        question_drawer(spec) if spec else None,
        run_config.graph_format,
        run_config.graph_order,
        run_config.store_fields,
        (baseline_format(run_config.baseline, plan.formats), *plan.formats),
    )
    if run_config.store_fields != "sent" and inputs.graph_format not in STORES:
        warn(
            f"--store-fields {run_config.store_fields} reads a framework's store; --graph was read as "
            f"{inputs.graph_format}, "
            "whose fields are all read anyway"
        )
    if spec is not None:
        if run_config.relation_phrases is not None:  # read already: its SHA-256 goes to the manifest with the others
            inputs.files[display(run_config.relation_phrases)] = read_input(
                run_config.relation_phrases, "--relation-phrases"
            )
        _say_what_was_drawn(inputs, spec)
    if not problems.fatal():
        _check_questions(run_config, plan, inputs, problems)
    inputs, skipped = _skipped_or_refused(run_config, inputs, problems)
    if run_config.prompt is None and not any(script(n.name) == "CYRILLIC" for n in inputs.graph.nodes):
        warn(
            "the graph's names hold no Cyrillic, but the prompt is the article's Russian one (the default, --prompt "
            "ru); "
            "for an English graph try --prompt en"
        )
    if run_config.graph.resolve() != (DATA / "graph.json").resolve():
        # what was made of --graph (the article's goes unsaid)
        print(read_summary(inputs, run_config.graph), file=sys.stderr)
    return inputs, Preflight(question_counts(inputs.questions), skipped)


def _say_what_was_drawn(inputs: RunInputs, spec: GenerateSpec) -> None:
    """A warning when the graph yields fewer generated questions than asked for: per hop count, and why abstention
    questions fell short."""
    if inputs.generated is None:
        return
    drawn = sum(inputs.generated.values())
    if drawn < spec.n:
        per_hop = ", ".join(f"{h} hop(s): {n}" for h, n in inputs.generated.items()) or "none"
        abstaining = sum(q.insufficient for q in inputs.questions)
        asked = round(spec.n * spec.abstain_share)
        short = (
            f"; {abstaining} of the {asked} abstention questions: a near miss needs a relation that other nodes of the "
            "reached node's role have and it has not (its type's; on an untyped graph, the nodes' at the same end of "
            "its relation)"
            if abstaining < asked
            else ""
        )
        warn(f"the graph yields {drawn} of the {spec.n} questions asked for ({per_hop}){short}")


def _check_questions(run_config: RunConfig, plan: Plan, inputs: RunInputs, problems: Problems) -> None:
    """Every question against the graph, the solver, its context and the leakage checks, each problem added."""
    src = inputs.questions_file
    check_questions(inputs.graph, inputs.questions, src, problems)
    context_problems(inputs.graph, inputs.questions, src, problems)
    given = next((q.id for q in inputs.questions if q.context), None)
    if given and plan.context == "khop":
        problems.add(
            f"{src}: question {given} gives its own context, and --context khop would cut another; leave --context "
            "khop out to use the given ones, or remove them"
        )
    if not given and plan.context == "given":
        problems.add(f"{src}: --context given, but no question gives a 'context'; give each one, or use --context khop")
    if set(plan.sizes) - {"small"}:
        for q in inputs.questions:
            if q.query is None:
                problems.add(
                    f"{src}: question {q.id} has no 'query': distractor graphs need every question's query "
                    "to prove they leave its answer alone (see README, questions); add it or use --sizes small",
                    q.id,
                )
    names = [*planned_files(plan, inputs.questions), *EXTRA_OUTPUTS]
    for check in leakage_checks(
        inputs.questions, [("input", (Context("", inputs.graph, inputs.questions),))], plan.template, names
    ):
        if check.result == "fail" and run_config.leakage == "fail":
            for question, found in check.found:
                if question:
                    where, fix = f"{src}: question {question}", "fix the question"
                elif check.name == "ids_are_neutral":
                    where, fix = display(run_config.graph), "rename the id"
                else:
                    where, fix = plan.template.name, "fix the template"
                problems.add(
                    f"{where}: leakage check {check.name} failed: {found}; {fix}, or pass --leakage warn to measure "
                    "anyway",
                    question,
                )


def _skipped_or_refused(
    run_config: RunConfig, inputs: RunInputs, problems: Problems
) -> tuple[RunInputs, list[dict[str, Any]]]:
    """Every problem raised at once; or, with --skip-invalid-questions and only questions at fault, those questions
    dropped and said, the rest kept."""
    by_question, fatal = problems.questions(), problems.fatal()
    if fatal or (by_question and not run_config.skip_invalid_questions):
        hint = (
            "; pass --skip-invalid-questions to drop the questions at fault and go on"
            if by_question and not fatal
            else ""
        )
        raise InputProblems([m for _, m in problems.lines], hint)
    skipped = [{"question": key, "reasons": reasons} for key, reasons in by_question.items()]
    if skipped:
        kept = tuple(q for q in inputs.questions if q.id not in by_question)
        for key, reasons in by_question.items():
            warn(f"skipped question {key}: {'; '.join(reasons)}")
        if not kept:
            raise BenchmarkError(
                f"{inputs.questions_file}: every question was skipped ({len(skipped)} with problems); nothing was "
                "written"
            )
        warn(f"{len(skipped)} question(s) skipped, {len(kept)} kept")
        inputs = replace(inputs, questions=kept, skipped=tuple(skipped))
    return inputs, skipped


READ_AS = {
    "json": "the tool's graph JSON",
    "tsv": "TSV/CSV triples",
    "turtle": "Turtle",
    "ntriples": "N-Triples",
    "graphml": "GraphML",
    "neo4j": "a Neo4j APOC export",
    "lightrag": "LightRAG's GraphML store",
    "graphrag": "GraphRAG's parquet output",
    "llamaindex": "LlamaIndex's property graph store",
}


def read_summary(inputs: RunInputs, path: Path) -> str:
    """What --graph was read as, said on stderr, in the manifest and results.md: 'read 58 entities, 97 relations from
    rag_storage, LightRAG's GraphML store (undirected)'."""
    kind = inputs.graph_format
    direction = " (undirected: either end may come first)" if kind in UNDIRECTED else ""
    return (
        f"read {len(inputs.graph.nodes):,} entities, {len(inputs.graph.edges):,} relations from {display(path)}, "
        f"{READ_AS.get(kind, kind)}{direction}"
    )


def variant_checks(run_config: RunConfig, plan: Plan, inputs: RunInputs, variants: list[Variant]) -> list[LeakageCheck]:
    """The leakage checks on every graph variant, as recorded; with --leakage warn, failures become warnings."""
    names = [*planned_files(plan, inputs.questions), *EXTRA_OUTPUTS]
    checks = leakage_checks(inputs.questions, [(v.name, v.contexts) for v in variants], plan.template, names)
    for i, check in enumerate(checks):
        if check.result == "fail":
            if run_config.leakage == "fail":
                raise BenchmarkError(f"leakage check {check.name} failed ({check.detail}); nothing was written")
            checks[i] = check = replace(check, result="warn")
        if check.result == "warn":
            warn(f"leakage check {check.name}: {check.detail}")
    return checks


def manifest_config(run_config: RunConfig, plan: Plan, inputs: RunInputs, measured: Measurement) -> dict[str, Any]:
    """The resolved configuration of a run, for its manifest: every flag as used, what generated questions drew."""
    return {
        "argv": list(run_config.argv),
        "encodings": [t.name for t in plan.tokenizers],
        "graph": display(run_config.graph),
        "graph_format": inputs.graph_format,
        "graph_read": read_summary(inputs, run_config.graph),
        "graph_order": run_config.graph_order,
        "store_fields": run_config.store_fields,
        "context": {
            "kind": plan.context,
            "hops": plan.context_hops,
            "edges": plan.context_edges,
            **(
                {plan.context_tokens_unit: plan.context_tokens, "counted_in": plan.context_tokens_format}
                if plan.context_tokens
                else {}
            ),
        }
        if plan.context == "khop"
        else plan.context,
        "questions": display(run_config.questions or DEFAULT_QUESTIONS)
        if run_config.generate_questions is None
        else GENERATED_QUESTIONS,
        "generate_questions": None
        if run_config.generate_questions is None
        else {
            "n": run_config.generate_questions,
            "hops": run_config.hops,
            "abstain_share": run_config.abstain_share,
            "drawn": inputs.generated,
        },
        "out": display(run_config.out),
        "formats": plan.formats,
        "sizes": plan.sizes,
        "ids": plan.ids,
        "permutations": plan.permutations,
        "budget": plan.budget,
        "context_window": plan.context_window,
        "seed": plan.seed,
        "prompt": {"template": plan.template.name, "sha256": plan.template.sha256},
        "leakage": run_config.leakage,
        "skip_invalid_questions": run_config.skip_invalid_questions,
        **measured.facts(),
    }


def run(run_config: RunConfig) -> tuple[str, str | None]:
    """Do the whole run; return what goes to stdout, and why the run did not fully succeed (exit code 1)
    when some requests failed after their retries."""
    check_flags(run_config)
    plan = make_plan(run_config)
    model = make_model_config(run_config)
    gate_spec = make_gate_spec(run_config, plan)
    if model is not None and run_config.score is None and run_config.export_batch is None:
        from .runner.endpoint import check_server  # the runner is loaded only for a model run

        if model.model != SOLVER_MODEL:
            check_server(model.base_url)  # before the inputs are read and every cell built
    inputs, record = preflight(run_config, plan)
    if model is not None and model.model == SOLVER_MODEL and (note := derived_queries_note(inputs)):
        warn(note)
    if model is not None and run_config.export_batch is not None:
        _check_export_target(run_config.export_batch, run_config, plan, inputs)
    plan, gate_spec = _plan_for_inputs(run_config, plan, gate_spec, inputs, model is not None)
    counts = ThreadedCounts()
    contexts, record.contexts = input_contexts(inputs, plan)
    variants = build_variants(inputs, plan, counts, contexts)
    record.solver = [v.name for v in variants]
    record.leakage = variant_checks(run_config, plan, inputs, variants)
    record.distractor_shortages = list(dict.fromkeys(v.shortage for v in variants if v.shortage))
    try:
        with held_outputs(run_config.out) as (staging, lock):
            measured, hints, stdout = measured_sizes(run_config, plan, inputs, variants, counts, record, staging)
            config = manifest_config(run_config, plan, inputs, measured)
            extra: dict[str, Any] = {}
            failure = None
            if model is not None:
                # only here: a run without --model never loads the runner, scoring or the results
                from . import model_run

                stdout, extra, failure = model_run.model_outputs(
                    run_config, model, measured, plan, staging, config, gate_spec, hints, record, stdout
                )
            title = "graphrag-format-benchmark" + (f" · {model.model}" if model else "")
            staging.add("report.html", report_html(measured, plan, staging, title, {n.id for n in inputs.graph.nodes}))
            manifest = build_manifest(
                config,
                plan.tokenizers,
                inputs,
                staging.sha,
                record.record(),
                public_argv(run_config.argv),
                format_library_versions(plan.formats),
            )
            publish(staging, {**manifest, **extra}, lock.release)
    finally:
        counts.close()
    return stdout, failure


def _check_export_target(target: Path, run_config: RunConfig, plan: Plan, inputs: RunInputs) -> None:
    """--export-batch's file: never an input of the run nor one of its outputs."""
    from . import model_run  # only for a model run

    prompt_file = [Path(run_config.prompt)] if run_config.prompt and run_config.prompt not in PROMPT_TEMPLATES else []
    model_run.check_export_target(
        target,
        [run_config.graph, run_config.questions or DEFAULT_QUESTIONS, *prompt_file],
        run_config.out,
        run_config.overwrite_batch,
        [*planned_files(replace(plan, write_prompts=None), inputs.questions), *EXTRA_OUTPUTS],
    )


def _plan_for_inputs(
    run_config: RunConfig, plan: Plan, gate_spec: GateSpec | None, inputs: RunInputs, model_run: bool
) -> tuple[Plan, GateSpec | None]:
    """The plan and the gate as the inputs read make them: questions' own contexts, a store without direction, and a
    framework's store whose layout is measured, that layout the baseline."""
    if plan.context == "shared" and any(q.context for q in inputs.questions):
        plan = replace(plan, context="given")
    if inputs.graph_format in UNDIRECTED:  # a store without direction: its prompt says so, evidence may go either way
        plan = replace(plan, undirected=True, template=undirected_template(plan.template))
    if run_config.baseline is None and inputs.graph_format in FRAMEWORK_FORMATS and inputs.graph_format in plan.formats:
        if run_config.context_tokens not in FRAMEWORK_BUDGETS:  # a number of tokens: counted in the baseline's format
            plan = replace(plan, context_tokens_format=inputs.graph_format)
        if gate_spec is not None:  # None: no model run
            gate_spec = gate_spec._replace(baseline=inputs.graph_format)
        if model_run or plan.context_tokens:
            warn(
                f"--graph is {inputs.graph_format}'s store and --formats has its layout: {inputs.graph_format}, what "
                "your framework "
                "sends today, is the baseline (--baseline FORMAT for another)"
            )
    return plan, gate_spec


def measured_sizes(
    run_config: RunConfig,
    plan: Plan,
    inputs: RunInputs,
    variants: list[Variant],
    counts: ThreadedCounts,
    record: Preflight,
    staging: Outputs,
) -> tuple[Measurement, dict[GroupKey, str], str]:
    """The measurement and its size reports into staging (size_report.json; for a matrix run also size_summary.json,
    size_report.md and size_report.svg); the mode B groups whose budget blocks a verdict; and what stdout says."""
    if inputs.generated_bytes is not None:
        staging.add(GENERATED_QUESTIONS, inputs.generated_bytes)
    measured = measure(inputs, plan, staging, variants, counts)
    rows = measured.rows
    staging.add("size_report.json", json_bytes([r.record() for r in rows]))
    summary = summarize(rows)
    hints = budget_hints(measured.items, plan, counts) if plan.budget else {}
    record.budget_hints = list(hints.values())
    if not plan.article_layout:
        staging.add("size_summary.json", json_bytes([asdict(e) for e in summary]))
        staging.add(
            "size_report.md",
            markdown_report(measured, summary, record, plan, staging.sha).encode("utf-8"),
        )
        staging.add("size_report.svg", size_report_svg(summary, plan).encode("utf-8"))
    stdout = (
        console_table([r.record() for r in rows], plan.formats)  # the article's 30 rows
        if plan.article_layout and len(plan.tokenizers) == 1
        else (
            console_summary(summary)
            + "".join(f"\nnote: {hint}" for hint in record.budget_hints)
            + f"\nreport: {display(run_config.out / ('size_report.json' if plan.article_layout else 'size_report.md'))}"
        )
    )
    if measured.edge_ids:
        stdout += "\n" + part_cost_line(measured.edge_ids, "edge ids")
    if measured.properties:
        stdout += "\n" + part_cost_line(measured.properties, "properties")
    if record.skipped:
        skipped = record.skipped
        stdout += f"\nskipped {len(skipped)} question(s) (--skip-invalid-questions): {skipped_text(skipped)}"
    return measured, hints, stdout
