"""--compare: several model runs over the same questions, side by side.

In: the results.json of each run (its scored cells; each model's prompts counted by its own tokenizer). Out: the
comparison (comparison.json) and comparison.md. Cells are paired across runs by COMPARE_KEY; only what every run has
is compared, and the report says what was left out. Per model: the leaderboard and its own gate; across models: the
paired difference on the same questions and the formats every model's gate accepts.
"""

from __future__ import annotations

import itertools
import json
import operator
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, cast

from . import charts
from ._article import MANIFEST_SCHEMA_VERSION, BenchmarkError, display, git_state, json_bytes, publish
from .aggregates import Latency, Rate, aggregate
from .artifacts import held_outputs
from .frameworks import FRAMEWORK_FORMATS
from .gate import DEFAULT_ABSTENTION_TOLERANCE, DEFAULT_TOLERANCE, TODAY, Paired, baseline_words, verdicts
from .matrix import group_key
from .options import RunConfig, check_out_folder
from .report import render_report
from .results import TOOL_VERSION
from .runner.config import public_argv
from .scoring import DIAGNOSES, Cell

BASELINE_VERDICTS = ("baseline", f"baseline: {TODAY}")  # a row of the baseline; of a framework's own layout
COMPARE_KEY = ("size", "ids", "mode", "format", "permutation", "question_id", "repeat")
CompareKey = tuple[Any, ...]  # a cell's values of COMPARE_KEY, as results.json holds them
compare_key: Callable[[Cell], CompareKey] = operator.attrgetter(*COMPARE_KEY)


class Run(NamedTuple):
    folder: Path
    label: str  # the model's name, with the folder when two runs share a model
    results: dict[str, Any]  # results.json less its cells
    cells: dict[CompareKey, Cell]  # COMPARE_KEY -> cell, of the run's first encoding
    encoding: str


@dataclass(slots=True, frozen=True)
class BoardRow:
    """One format of one model in a group, over the cells every run has (_run_board)."""

    size: str
    ids: str
    mode: str
    format: str
    model: str  # Run.label
    encoding: str
    path_exact: Rate
    answer_correct: Rate
    prompt_tokens: float | None  # the mean, by the model's own tokenizer
    saving: float | None  # against the model's baseline
    cost: float | None
    latency_s: Latency | None
    cells: int
    diagnoses: dict[str, int]
    verdict: str | None  # the model's own gate: accept, reject, undecided, or baseline
    blocked_by: list[str]

    def as_json(self) -> dict[str, Any]:
        """The row as comparison.json and the page hold it."""
        return {
            "size": self.size,
            "ids": self.ids,
            "mode": self.mode,
            "format": self.format,
            "model": self.model,
            "encoding": self.encoding,
            "questions": self.path_exact.questions,
            "path_exact": _figure(self.path_exact),
            "answer_correct": _figure(self.answer_correct),
            "prompt_tokens": self.prompt_tokens,
            "saving": self.saving,
            "cost": self.cost,
            "latency_s": self.latency_s._asdict() if self.latency_s else None,
            "cells": self.cells,
            "diagnoses": self.diagnoses,
            "verdict": self.verdict,
            "blocked_by": self.blocked_by,
        }


def _figure(r: Rate) -> dict[str, Any]:
    """A rate as the leaderboard shows it."""
    return {"rate": r.rate, "ci95": r.ci95, "questions": r.questions, "method": r.method}


@dataclass(slots=True, frozen=True)
class Accepted:
    """Of a group's formats, those every model accepts, and why each other is not."""

    size: str
    ids: str
    mode: str
    formats: list[str]
    not_accepted: dict[str, list[str]]  # format -> 'model: verdict' of the models that do not accept it


@dataclass(slots=True, frozen=True)
class Difference:
    """Two models' paired difference in exact paths on one group and format, over the shared questions."""

    size: str
    ids: str
    mode: str
    format: str
    model: str
    other: str
    metric: str
    questions: int
    difference: float
    ci95: list[float]
    method: str


@dataclass(slots=True, frozen=True)
class Compared:
    """One run as the comparison names it."""

    folder: str
    model: str
    encoding: str
    cells: int
    compared: int  # the cells every run has
    prices_per_million: object  # as its results.json gives them


@dataclass(slots=True, frozen=True)
class ModelGate:
    """The gate a model's rows were judged by: its own run's settings."""

    model: str
    baseline: str
    tolerance: float
    abstention_tolerance: float


@dataclass(slots=True, frozen=True)
class Comparison:
    """What --compare finds (compare_runs): comparison.json is as_json, comparison.md and .svg are drawn from it."""

    runs: list[Compared]
    notes: list[str]
    gates: list[ModelGate]
    leaderboard: list[BoardRow]
    accepted_for_every_model: list[Accepted]
    model_differences: list[Difference]

    def as_json(self) -> dict[str, Any]:
        return {
            "tool_version": TOOL_VERSION,
            "runs": [asdict(r) for r in self.runs],
            "notes": self.notes,
            "gates": [asdict(g) for g in self.gates],
            "leaderboard": [e.as_json() for e in self.leaderboard],
            "accepted_for_every_model": [asdict(a) for a in self.accepted_for_every_model],
            "model_differences": [asdict(d) for d in self.model_differences],
        }

    def group_rows(self, accepted: Accepted) -> list[BoardRow]:
        """The leaderboard's rows of one group."""
        return [e for e in self.leaderboard if (e.size, e.ids, e.mode) == (accepted.size, accepted.ids, accepted.mode)]


def load_run(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    path = folder / "results.json"
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchmarkError(
            f"{display(folder)}: no results.json; compare the --out folders of model runs (or of --score)"
        ) from None
    except (OSError, ValueError, RecursionError) as e:
        raise BenchmarkError(f"{display(path)}: cannot read it ({e}); run or score that model again") from None
    if isinstance(results, dict) and results.get("kind") == "logged":
        raise BenchmarkError(
            f"{display(folder)} is the output of a --from-prompts run: it counts logged prompts and scores no answers; "
            "compare the --out folders of model runs over a graph (--model NAME)"
        )
    if (
        not isinstance(results, dict)
        or not isinstance(results.get("cells"), list)
        or not isinstance(results.get("model"), dict)
    ):
        raise BenchmarkError(
            f"{display(path)}: not a results.json of this tool; compare the --out folders of model runs"
        )
    return results, results.pop("cells")


def read_runs(folders: list[Path]) -> list[Run]:
    """Each folder's run, checked: the same tool version, the same questions under each (size, ids)."""
    loaded = [(folder, *load_run(folder)) for folder in folders]
    versions = {display(folder): results.get("tool_version") for folder, results, _ in loaded}
    if len(set(versions.values())) > 1:
        shown = ", ".join(
            f"{name} {version or 'before tool_version was recorded'}" for name, version in versions.items()
        )
        raise BenchmarkError(
            f"the runs were scored by different versions of the tool ({shown}); score each log again with this "
            "one (--score DIR/requests.jsonl with the run's flags) before comparing"
        )
    names = Counter(str(results["model"].get("model")) for _, results, _ in loaded)
    runs = []
    for folder, results, cells in loaded:
        encodings = (results.get("run") or {}).get("encodings") or []
        encoding = str(encodings[0] if encodings else next((c.get("encoding") for c in cells), ""))
        model = str(results["model"].get("model"))
        read = [Cell.from_json(c) for c in cells if isinstance(c, dict)]
        mine = {compare_key(c): c for c in read if c.encoding == encoding}
        runs.append(Run(folder, model if names[model] == 1 else f"{model} ({folder.name})", results, mine, encoding))
    for a, b in itertools.combinations(runs, 2):
        for variant in set(a.results.get("questions_sha256") or {}) & set(b.results.get("questions_sha256") or {}):
            if a.results["questions_sha256"][variant] != b.results["questions_sha256"][variant]:
                raise BenchmarkError(
                    f"{display(a.folder)} and {display(b.folder)} ask different questions under "
                    f"{variant.replace('/', ' · ')}; compare runs over the same questions"
                )
    return runs


def compare_runs(folders: list[Path]) -> Comparison:
    """The comparison of runs over the cells they all have."""
    runs = read_runs(folders)
    shared, notes = _shared_cells(runs)
    board: list[BoardRow] = []
    gates = []
    for run in runs:
        rows, gate = _run_board(run, shared)
        board += rows
        gates.append(gate)
    accepted, differences = [], []
    for group in dict.fromkeys((e.size, e.ids, e.mode) for e in board):
        mine = [e for e in board if (e.size, e.ids, e.mode) == group]
        formats = list(dict.fromkeys(e.format for e in mine))
        accepted.append(_accepted_for_every_model(group, mine, formats))
        for fmt in formats:
            differences += _model_differences(runs, shared, group, fmt)
    notes += [
        f"{g.model}: the baseline is {baseline_words(g.baseline)}" for g in gates if g.baseline in FRAMEWORK_FORMATS
    ]
    compared = [
        Compared(display(r.folder), r.label, r.encoding, len(r.cells), len(shared), r.results.get("prices_per_million"))
        for r in runs
    ]
    return Comparison(compared, notes, gates, board, accepted, differences)


def _shared_cells(runs: list[Run]) -> tuple[set[CompareKey], list[str]]:
    """The answered cells every run has, and a note for each run with more; none shared is an error."""
    shared = set.intersection(*(set(k for k, c in run.cells.items() if c.status != "NOT_RUN") for run in runs))
    if not shared:
        formats = [sorted({k[3] for k in run.cells}) for run in runs]
        raise BenchmarkError(
            f"{', '.join(display(r.folder) for r in runs)} share no answered question of the same size, ids, mode "
            f"and format (formats: {'; '.join(','.join(f) for f in formats)}); compare runs of the same command"
        )
    notes = []
    for run in runs:
        extra = len([k for k, c in run.cells.items() if c.status != "NOT_RUN"]) - len(shared)
        if extra:
            left = sorted({k[3] for k in run.cells} - {k[3] for k in shared})
            notes.append(
                f"{display(run.folder)}: {extra} answered cell(s) no other run has are left out"
                + (f" (formats {', '.join(left)} are not in every run)" if left else "")
            )
    return shared, notes


def _run_board(run: Run, shared: set[CompareKey]) -> tuple[list[BoardRow], ModelGate]:
    """One run's rows of the leaderboard over the shared cells, judged by its own gate, and that gate."""
    cells = [run.cells[k] for k in sorted(shared, key=_compare_order)]
    given = run.results.get("prices_per_million") or {}
    prices = (given.get("input"), given.get("output"), given.get("cached_input"))
    table = aggregate(cells, prices)
    spec: dict[str, Any] = next(iter(run.results.get("verdicts") or []), {})
    baseline = spec.get("baseline") or table[0].format
    tolerance, abstention = (
        spec.get("tolerance", DEFAULT_TOLERANCE),
        spec.get("abstention_tolerance", DEFAULT_ABSTENTION_TOLERANCE),
    )
    gate = verdicts(cells, table, baseline, tolerance, None, abstention)
    verdict = {(group_key(v)[1:], v.format): v for v in gate}
    base_tokens = {group_key(e)[1:]: e.prompt_tokens for e in table if e.format == baseline}
    # a framework's own layout as the baseline is named in the user's words
    as_baseline = f"baseline: {TODAY}" if baseline in FRAMEWORK_FORMATS else "baseline"
    rows = []
    for e in table:
        group = group_key(e)[1:]
        v = verdict.get((group, e.format))
        rows.append(
            BoardRow(
                e.size,
                e.ids,
                e.mode,
                e.format,
                run.label,
                run.encoding,
                e.metrics.path_exact,
                e.metrics.answer_correct,
                e.prompt_tokens,
                _saving(e.prompt_tokens, base_tokens.get(group)),
                e.cost,
                e.latency_s,
                e.n,
                e.diagnoses,
                as_baseline if e.format == baseline else v.verdict if v else None,
                v.blocked_by if v else [],
            )
        )
    return rows, ModelGate(run.label, baseline, tolerance, abstention)


def _saving(tokens: float | None, base: float | None) -> float | None:
    return round(1 - (tokens or 0) / base, 4) if base else None


def _accepted_for_every_model(group: tuple[str, str, str], mine: list[BoardRow], formats: list[str]) -> Accepted:
    """Of a group's formats, those every model accepts (none
    rejecting, one at least accepting), and why the others not."""
    every = [
        f
        for f in formats
        if all(e.verdict == "accept" or e.verdict in BASELINE_VERDICTS for e in mine if e.format == f)
        and any(e.verdict == "accept" for e in mine if e.format == f)
    ]
    why = {
        f: sorted(
            f"{e.model}: {e.verdict}"
            for e in mine
            if e.format == f and e.verdict != "accept" and e.verdict not in BASELINE_VERDICTS
        )
        for f in formats
        if f not in every and any(e.verdict not in BASELINE_VERDICTS for e in mine if e.format == f)
    }
    return Accepted(*group, every, why)


def _model_differences(
    runs: list[Run], shared: set[CompareKey], group: tuple[str, str, str], fmt: str
) -> list[Difference]:
    """For one group and format, each pair of models' paired difference in exact paths over the shared questions."""
    out = []
    for a, b in itertools.combinations(runs, 2):
        runs_by_q: dict[str, list[tuple[bool, bool]]] = {}
        for key in shared:
            if (key[0], key[1], key[2], key[3]) == (*group, fmt) and not a.cells[key].insufficient:
                runs_by_q.setdefault(key[5], []).append((bool(a.cells[key].path_exact), bool(b.cells[key].path_exact)))
        if not runs_by_q:
            continue
        paired = Paired(runs_by_q)
        diff, lower, upper = paired.bounds(0.025)
        out.append(
            Difference(
                *group,
                fmt,
                a.label,
                b.label,
                "path_exact",
                len(runs_by_q),
                round(diff, 4),
                [round(lower, 4), round(upper, 4)],
                paired.method,
            )  # fmt: skip
        )
    return out


def _compare_order(key: CompareKey) -> CompareKey:
    return tuple("" if v is None else v for v in key)


def comparison_markdown(c: Comparison) -> str:
    models = [r.model for r in c.runs]
    lines = [
        "# Models compared",
        "",
        f"{len(models)} runs over the same questions: "
        + "; ".join(f"{r.model} ({r.folder}, counted with {r.encoding})" for r in c.runs)
        + ".",
        "Each cell: path exact over the positive questions [95% interval over questions] · mean prompt tokens by the "
        "model's "
        "own tokenizer (saving against its baseline) · cost of every request at its prices · median latency · the "
        "model's "
        "gate on the questions compared.",
        "",
    ]
    lines += [f"- {note}" for note in c.notes] + ([""] if c.notes else [])
    for acc in c.accepted_for_every_model:
        group = (acc.size, acc.ids, acc.mode)
        mine = c.group_rows(acc)
        lines += [
            f"## {' · '.join(group)}",
            "",
            "| format | " + " | ".join(models) + " |",
            "|---|" + "---|" * len(models),
        ]
        for fmt in dict.fromkeys(e.format for e in mine):
            row = []
            for model in models:
                e = next((x for x in mine if x.format == fmt and x.model == model), None)
                row.append("" if e is None else _board_cell(e))
            lines.append(f"| {fmt} | " + " | ".join(row) + " |")
        lines.append("")
        if acc.formats:
            lines.append(f"**Accepted for every model:** {', '.join(acc.formats)}.")
        else:
            reasons = _not_accepted(acc)
            lines.append(f"**No format is accepted for every model** ({reasons}).")
        lines += compared_diagnoses(mine, models)
        diffs = [d for d in c.model_differences if (d.size, d.ids, d.mode) == group]
        if diffs:
            lines += [
                "",
                "Paired differences in path exact between models, on the same questions (95% interval):",
                "",
                "| format | models | questions | difference | 95% interval |",
                "|---|---|---:|---:|---|",
            ]
            lines += [
                f"| {d.format} | {d.model} − {d.other} | {d.questions} | {d.difference:+.3f} | "
                f"[{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}] |"
                for d in diffs
            ]
        lines.append("")
    lines += ["![Path exact per format and model](comparison.svg)", ""]
    return "\n".join(lines)


def _board_cell(e: BoardRow) -> str:
    """A model's cell of the table: path exact [interval] · tokens (saving) · cost · latency · verdict."""
    ci, rate = e.path_exact.ci95, e.path_exact.rate
    saving = f" ({e.saving:+.0%})".replace("+", "−" if e.saving > 0 else "+") if e.saving else ""
    return (
        f"{rate:.2f}"
        + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
        + f" · {e.prompt_tokens:,.0f}{saving}"
        + (f" · ${e.cost:.4f}" if e.cost is not None else "")
        + (f" · {e.latency_s.median:g} s" if e.latency_s else "")
        + f" · {e.verdict}"
    )


def _not_accepted(acc: Accepted) -> str:
    return "; ".join(f"{fmt}: {', '.join(why)}" for fmt, why in acc.not_accepted.items()) or "only the baseline was run"


def compared_diagnoses(mine: list[BoardRow], models: list[str]) -> list[str]:
    """Why answers failed, per model and format: cells of each diagnosis, share of the cells in brackets."""
    names = [name for name in DIAGNOSES if any(name in e.diagnoses for e in mine)]
    if not names:
        return []
    lines = [
        "",
        "Why answers failed, per model (README: Why answers fail); cells of each diagnosis, share in brackets:",
        "",
        "| model | format | cells | " + " | ".join(n.replace("_", " ") for n in names) + " |",
        "|---|---|---:|" + "---:|" * len(names),
    ]
    for model in models:
        for e in (x for x in mine if x.model == model):
            cells = [f"{e.diagnoses[n]} ({e.diagnoses[n] / e.cells:.0%})" if n in e.diagnoses else "" for n in names]
            lines.append(f"| {model} | {e.format} | {e.cells} | " + " | ".join(cells) + " |")
    return lines


# -----------------------------------------------------------------------------
# comparison.svg and report.html


def comparison_svg(c: Comparison) -> str:
    """One panel per group: formats along x, one mark per model beside each other, whiskers the 95% interval."""
    models = [r.model for r in c.runs]
    panels: list[charts.Panel] = []
    for acc in c.accepted_for_every_model:
        mine = [e for e in c.group_rows(acc) if e.path_exact.rate is not None]
        formats = list(dict.fromkeys(e.format for e in mine))
        spread = min(0.6 / max(len(models), 1), 0.2)
        points = []
        for e in mine:
            k = models.index(e.model)
            rate = cast(float, e.path_exact.rate)
            low, high = e.path_exact.ci95 or (rate, rate)
            data = {"format": e.format, "model": e.model, "rate": rate, "low": low, "high": high, "verdict": e.verdict}
            x = formats.index(e.format) + (k - (len(models) - 1) / 2) * spread
            filled = e.verdict == "accept" or e.verdict in BASELINE_VERDICTS  # a framework's baseline as well
            points.append(charts.Point(e.format, x, rate, data, "", low, high, filled, charts.model_style(k)))
        group = " · ".join((acc.size, acc.ids, acc.mode))
        panels.append(
            charts.Panel(group, "format", "path exact", list(enumerate(formats)), (-0.05, 1.05, False), points)
        )
    legend = [(model, "", charts.model_style(k)) for k, model in enumerate(models)]
    return charts.svg_chart(
        "Path exact per format, one mark per model",
        panels,
        legend,
        "filled: accepted by that model's gate (or its baseline); hollow: not accepted; whiskers: 95% interval over "
        "questions",
    )


def comparison_report(c: Comparison, svg: str, diagnoses: dict[str, tuple[str, str]]) -> bytes:
    """report.html of --compare: the leaderboard (sortable) and why answers failed, per model and format."""
    names = [name for name in diagnoses if any(name in e.diagnoses for e in c.leaderboard)]
    models = ", ".join(r.model for r in c.runs)
    data = {
        "kind": "compare",
        "title": f"graphrag-format-benchmark · {models} compared",
        "baseline": "",
        "sizes": [],
        "tokens": [],
        "prompts": {"heads": {}, "graphs": {}, "questions": [], "encoding": "", "distractors": []},
        "model": None,
        "compare": {"leaderboard": [e.as_json() for e in c.leaderboard], "diagnosis_names": names},
        "notes": c.notes,
    }
    return render_report(data, svg)


def run_compare(run_config: RunConfig) -> str:
    """--compare: read the runs, write comparison.json, .md and .svg into --out, and say what every model accepts."""
    given = [
        flag
        for flag, value in (
            ("--model", run_config.model),
            ("--score", run_config.score),
            ("--export-batch", run_config.export_batch),
        )
        if value
    ]
    if given:
        raise BenchmarkError(f"--compare reads finished runs: leave out {', '.join(given)}")
    folders = run_config.compare or ()
    if len(folders) < 2:
        raise BenchmarkError("--compare needs two runs or more (their --out folders)")
    check_out_folder(run_config.out)
    if any(run_config.out.resolve() == folder.resolve() for folder in folders):
        raise BenchmarkError(
            f"--out {display(run_config.out)} is one of the compared runs: its files would be replaced; name another "
            "folder"
        )
    comparison = compare_runs(list(folders))
    with held_outputs(run_config.out) as (staging, lock):
        staging.add("comparison.json", json_bytes(comparison.as_json()))
        staging.add("comparison.md", comparison_markdown(comparison).encode("utf-8"))
        svg = comparison_svg(comparison)
        staging.add("comparison.svg", svg.encode("utf-8"))
        staging.add("report.html", comparison_report(comparison, svg, DIAGNOSES))
        manifest = {
            "schema_version": MANIFEST_SCHEMA_VERSION,
            "tool": "graphrag-format-benchmark",
            "tool_version": TOOL_VERSION,
            "generated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "git": git_state(),
            "command": ["benchmark.py", *public_argv(run_config.argv)],
            "compared": [asdict(r) for r in comparison.runs],
            "outputs": dict(sorted(staging.sha.items())),
        }
        publish(staging, manifest, lock.release)
    lines = [f"{note}" for note in comparison.notes]
    for acc in comparison.accepted_for_every_model:
        group = " · ".join((acc.size, acc.ids, acc.mode))
        if acc.formats:
            lines.append(f"{group}: accepted for every model: {', '.join(acc.formats)}")
        else:
            lines.append(f"{group}: no format is accepted for every model ({_not_accepted(acc)})")
    return "\n".join(lines + [f"comparison: {display(run_config.out / 'comparison.md')}"])
