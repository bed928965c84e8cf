"""The size reports of a matrix run: size_summary.json, size_report.md and the console summary.

In: the rows of size_report.json, the variants and the preflight record. Out: per encoding, size, ids, mode and
format, each figure's mean over questions and its spread over permutations; the tables of size_report.md (with what
edge ids and properties cost); budget_hints for mode B groups where the budget leaves the gold paths out.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._article import FormattedGraph, serialized
from .markdown import md_cell, percent
from .matrix import HOP_BUCKETS, GroupKey, hop_bucket, variant_file
from .statistics import summary_stats
from .variants.contexts import RELATION_FLOOR, subgraph

if TYPE_CHECKING:
    from ._article import Question, TokenCounts
    from .leakage import LeakageCheck
    from .matrix import Plan
    from .measure import Item, Measurement, PartCost, SizeRow
    from .variants.contexts import ContextSummary, Variant


@dataclass(frozen=True, slots=True)
class Spread:
    """A figure of a summary entry across permutations (statistics.summary_stats): the mean of its per-permutation
    means, their min and max, and their standard deviation (None for one permutation)."""

    mean: float
    min: float
    max: float
    sd: float | None


@dataclass(frozen=True, slots=True)
class SizeSummary:
    """One entry of size_summary.json (dataclasses.asdict gives the file's dict, in this order): per encoding, size,
    ids, mode and format, each figure's Spread across permutations, None where no row has it."""

    encoding: str
    size: str
    ids: str
    mode: str
    format: str
    permutations: int  # edge orders measured
    questions: int  # rows of the first permutation
    graph_tokens: Spread | None
    prompt_tokens: Spread | None
    edges_included: Spread | None
    gold_edges_included: Spread | None
    answerable: Spread | None  # a fraction of the questions with a query; None when none has one
    overflow: int  # prompts over the context window
    prompts: int  # rows, every permutation

    @property
    def group(self) -> GroupKey:
        """The table the entry is drawn in."""
        return GroupKey(self.encoding, self.size, self.ids, self.mode)


@dataclass
class Preflight:
    """What the preflight found, filled in as the run goes; record() is the manifest's "preflight"."""

    questions: dict[str, Any]  # benchmark.question_counts of the questions measured
    skipped: list[dict[str, Any]]  # {"question", "reasons"} of each question --skip-invalid-questions left out
    contexts: ContextSummary | None = None  # None: one graph shared by every question
    solver: list[str] = field(default_factory=list)  # the variants the control solver agrees with: every one
    leakage: list[LeakageCheck] = field(default_factory=list)  # the checks on every variant
    distractor_shortages: list[str] = field(default_factory=list)
    budget_hints: list[str] = field(default_factory=list)  # mode B groups whose budget leaves the gold paths out

    def record(self) -> dict[str, Any]:
        return {
            "solver": {name: "agrees" for name in self.solver},
            "leakage": [check.record() for check in self.leakage],
            "questions": self.questions,
            "skipped_questions": self.skipped,
            "contexts": self.contexts.record() if self.contexts else {},
            "distractor_shortages": self.distractor_shortages,
            "budget_hints": self.budget_hints,
        }


def summarize(rows: list[SizeRow]) -> list[SizeSummary]:
    """Per encoding, size, ids, mode and format: each figure's mean over questions, then its mean, min, max
    and standard deviation across permutations (article 8.4). answerable is a fraction of questions."""
    groups: dict[tuple[str, str, str, str, str], dict[int, list[SizeRow]]] = {}
    for r in rows:
        groups.setdefault((*r.group, r.format), {}).setdefault(r.permutation, []).append(r)
    return [_summary_entry(*key, by_perm) for key, by_perm in groups.items()]


def _summary_entry(
    encoding: str, size: str, ids: str, mode: str, fmt: str, by_perm: dict[int, list[SizeRow]]
) -> SizeSummary:
    """The SizeSummary of one group's rows, by permutation."""

    def spread(metric: str) -> Spread | None:
        per_perm = [
            statistics.fmean(values)
            for rows in by_perm.values()
            if (values := [v for r in rows if (v := getattr(r, metric)) is not None])
        ]
        return Spread(**summary_stats(per_perm)) if per_perm else None

    metrics = ("graph_tokens", "prompt_tokens", "edges_included", "gold_edges_included", "answerable")
    graph, prompt, edges, gold, share = map(spread, metrics)
    overflow, prompts = sum(r.overflow for rs in by_perm.values() for r in rs), sum(map(len, by_perm.values()))
    first = len(next(iter(by_perm.values())))
    return SizeSummary(
        encoding, size, ids, mode, fmt, len(by_perm), first, graph, prompt, edges, gold, share, overflow, prompts
    )


def _cell(spread: Spread | None, digits: int = 0) -> str:
    """'970' for one permutation, '970 (965–975, sd 4.1)' across several; empty when not measured."""
    if spread is None:
        return ""
    value = f"{spread.mean:,.{digits}f}"
    if spread.sd is None:
        return value
    return f"{value} ({spread.min:,.{digits}f}–{spread.max:,.{digits}f}, sd {spread.sd:,.{digits + 1}f})"


def _ratio(value: Spread | None, reference: Spread | None) -> str:
    if not value or not reference or not reference.mean:
        return ""
    return f"{value.mean / reference.mean:.2f}"


def markdown_report(
    measured: Measurement, summary: list[SizeSummary], preflight: Preflight, plan: Plan, shas: dict[str, str]
) -> str:
    """size_report.md: the run's settings, the graph variants, contexts, the preflight, what edge ids and properties
    cost, mode B's budget hints, and a table per encoding, size, ids and mode. shas: each written file's SHA-256."""
    import tiktoken

    variants = measured.variants

    reference = "json" if "json" in plan.formats else plan.formats[0]
    encodings = ", ".join(f"{t.name}" for t in plan.tokenizers)
    lines = [
        "# Size report",
        "",
        f"Encodings: {encodings} (tiktoken {tiktoken.__version__}). Seed: {plan.seed}. "
        f"Context window: {plan.context_window} tokens. Mode B budget: {plan.budget or 'not run'}"
        f"{' tokens' if plan.budget else ''}. Permutations: {plan.permutations}. "
        f"Prompt template: {plan.template.name} (SHA-256 `{plan.template.sha256[:16]}…`).",
        "",
        "Each figure is the mean over questions; with several permutations it is their mean, then "
        "(min–max, sd) across permutations. `vs " + reference + "` divides by the " + reference + " figure. "
        "`answerable` is the share of questions for which the control solver still finds a gold path in what "
        "the prompt shows (an abstention question stays answerable: INSUFFICIENT_DATA remains right). "
        "Every row of size_report.json holds the exact per-prompt numbers.",
        "",
        "![Prompt tokens and answerable share across graph sizes](size_report.svg)",
        "",
        "## Graph variants",
        "",
        *_variant_lines(variants, shas),
    ]
    lines += ["", *(f"- {note}." for note in dict.fromkeys(v.shortage for v in variants if v.shortage))]
    lines += _context_lines(preflight.contexts)
    lines += _preflight_lines(variants[0].questions, preflight)
    lines += _part_cost_lines(measured.edge_ids, "Edge ids", "the stable edge ids of --edge-ids")
    lines += _part_cost_lines(measured.properties, "Properties", "the properties of nodes and edges")
    if preflight.budget_hints:
        lines += ["", "## Mode B budget", "", *(f"- {hint}." for hint in preflight.budget_hints)]
    lines += _size_tables(summary, measured.rows, variants, plan, reference)
    return "\n".join(lines) + "\n"


def _preflight_lines(questions: tuple[Question, ...], preflight: Preflight) -> list[str]:
    """The preflight of size_report.md: questions, the solver's verdict, skipped questions, leakage checks."""
    n_solved = sum(1 for q in questions if q.query)
    several = sum(q.several for q in questions)
    lines = [
        "",
        "## Preflight",
        "",
        f"Questions: {len(questions)}, of which {several} have several acceptable answers or gold paths, and "
        f"{sum(q.insufficient for q in questions)} are abstention questions. Control solver: on every variant, "
        f"{n_solved} of {len(questions)} questions have a query, and the solver's complete paths are exactly the "
        "gold paths of each positive one, and none for each abstention one.",
    ]
    skipped = preflight.skipped
    if skipped:
        lines += [
            "",
            f"Skipped by --skip-invalid-questions: {len(skipped)} question(s).",
            "",
            "| question | reason |",
            "|---|---|",
        ]
        lines += [f"| {s['question']} | {md_cell('; '.join(s['reasons']))} |" for s in skipped]
    lines += [
        "",
        "| leakage check | result | detail |",
        "|---|---|---|",
        *(f"| {c.name} | {c.result} | {md_cell(c.detail)} |" for c in preflight.leakage),
    ]
    return lines


def _variant_lines(variants: list[Variant], shas: dict[str, str]) -> list[str]:
    """The table of graph variants: one graph each, or the sizes of their contexts."""
    if all(v.shared for v in variants):
        lines = ["| variant | nodes | edges | distractor branches | file | SHA-256 |", "|---|---:|---:|---:|---|---|"]
        for v in variants:
            name, graph = variant_file(v, "json"), v.contexts[0].graph
            lines.append(
                f"| {v.name} | {len(graph.nodes)} | {len(graph.edges)} | {v.branches} | {name} | `{shas[name]}` |"
            )
        return lines
    lines = [
        "One context per question: the graph its prompts show (the questions file holds each one, in the input's "
        "format).",
        "",
        "| variant | contexts | nodes per context (min–median–max) | edges per context (min–median–max) | distractor "
        "branches | file | SHA-256 |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for v in variants:
        name = variant_file(v, "questions")
        nodes, edges = (sorted(len(getattr(c.graph, part)) for c in v.contexts) for part in ("nodes", "edges"))
        spread = ["" if not xs else f"{xs[0]}–{statistics.median(xs):g}–{xs[-1]}" for xs in (nodes, edges)]
        lines.append(
            f"| {v.name} | {len(v.contexts)} | {spread[0]} | {spread[1]} | {v.branches} | {name} | `{shas[name]}` |"
        )
    return lines


def _context_lines(summary: ContextSummary | None) -> list[str]:
    """How the contexts were made: given or cut, their sizes, and what a model could read from their shape."""
    if not summary:
        return []
    lines = ["", "## Contexts", ""]
    if khop := summary.khop:
        lines.append(
            f"Cut by --context khop: the neighbourhood of each question's start, breadth first out to {khop.depth} "
            f"hop(s), each layer's edges in a seeded random order, at most {khop.edges} edges besides the gold "
            "paths', which are always inside (for an abstention question, the walks its query makes), and at least "
            f"{RELATION_FLOOR} edges of each relation a question names, searched past that depth when the "
            "neighbourhood has fewer."
        )
        if khop.beyond_depth:
            lines.append(
                f"In {len(khop.beyond_depth)} question(s) gold edges lie beyond that depth and were added after the "
                "rest: a model could pick them out as the only edges that far out; raise --context-hops to the "
                f"questions' hop count (first: {', '.join(khop.beyond_depth[:5])})."
            )
    else:
        lines.append("Given by the questions file, each question's own.")
    if summary.abstention_of:
        lines.append(
            "Abstention questions whose context shows an edge of the relation the failing hop asks for: "
            f"{summary.abstention_shown} of {summary.abstention_of} (the others can be answered from that relation's "
            "absence alone)."
        )
    return lines


def _part_cost_lines(cost: PartCost | None, title: str, what: str) -> list[str]:
    """What an optional part of the graph text costs in graph tokens, per size and format."""
    if not cost:
        return []
    lines = [
        "",
        f"## {title}",
        "",
        f"Graph tokens ({cost.encoding}, {cost.ids} ids, permutation 0, summed over contexts) with {what} "
        "and without them: what they cost is part of the trade-off.",
        "",
        "| size | format | with | without | cost |",
        "|---|---|---:|---:|---:|",
    ]
    for size, by_format in cost.by_size.items():
        for fmt, (whole, without) in by_format.items():
            lines.append(f"| {size} | {fmt} | {whole:,} | {without:,} | {_added(whole, without)} |")
    return lines


def _added(whole: int, without: int) -> str:
    """'+52 (6%)': what a part adds to the graph tokens without it."""
    return f"+{whole - without:,} ({percent(whole / without - 1 if without else 0)})"


def _size_tables(
    summary: list[SizeSummary], rows: list[SizeRow], variants: list[Variant], plan: Plan, reference: str
) -> list[str]:
    """A table per encoding, size, ids and mode: tokens in mode A, edges and answerable shares in mode B."""
    lines: list[str] = []
    by_table: dict[GroupKey, list[SizeSummary]] = {}
    for entry in summary:
        by_table.setdefault(entry.group, []).append(entry)
    for group, entries in by_table.items():
        encoding, size, ids, mode = group
        ref = next((e for e in entries if e.format == reference), None)
        if mode == "A":
            lines += [
                "",
                f"## {encoding} · {size} · {ids} · mode A (every edge)",
                "",
                f"| format | graph tokens | prompt tokens | vs {reference} | overflow (> {plan.context_window}) |",
                "|---|---:|---:|---:|---:|",
            ]
            for e in entries:
                lines.append(
                    f"| {e.format} | {_cell(e.graph_tokens)} | {_cell(e.prompt_tokens)} | "
                    f"{_ratio(e.prompt_tokens, ref.prompt_tokens if ref else None)} | {e.overflow}/{e.prompts} |"
                )
        else:
            lines += [
                "",
                f"## {encoding} · {size} · {ids} · mode B (budget {plan.budget})",
                "",
                f"| format | edges included | vs {reference} | gold edges included | answerable (all questions) | "
                "prompt tokens |",
                "|---|---:|---:|---:|---:|---:|",
            ]
            for e in entries:
                lines.append(
                    f"| {e.format} | {_cell(e.edges_included, 1)} | "
                    f"{_ratio(e.edges_included, ref.edges_included if ref else None)} | "
                    f"{_cell(e.gold_edges_included, 2)} | {_cell(e.answerable, 2)} | {_cell(e.prompt_tokens)} |"
                )
            lines += answerable_by_hops(
                [r for r in rows if r.group == group], {q.id: hop_bucket(q) for q in variants[0].questions}
            )
    return lines


def answerable_by_hops(rows: list[SizeRow], buckets: dict[str, str]) -> list[str]:
    """Mode B's answerable share per format and hop count (all permutations), as table lines."""
    shares: dict[str, dict[str, list[bool]]] = {}
    for r in rows:
        if r.answerable is not None:
            shares.setdefault(r.format, {}).setdefault(buckets[r.question_id], []).append(r.answerable)
    present = [b for b in HOP_BUCKETS if any(b in by for by in shares.values())]
    if not present:
        return []
    lines = [
        "",
        "Answerable per hop count:",
        "",
        "| format | " + " | ".join(present) + " |",
        "|---|" + "---:|" * len(present),
    ]
    for fmt, by in shares.items():
        lines.append(
            f"| {fmt} | " + " | ".join(f"{statistics.fmean(by[b]):.2f}" if b in by else "" for b in present) + " |"
        )
    return lines


def budget_hints(items: list[Item], plan: Plan, counts: TokenCounts) -> dict[GroupKey, str]:
    """Mode B groups where the budget leaves a whole gold path out of most positive prompts of every format:
    such a budget cannot tell formats apart. Each hint gives the budget from which the median question's
    gold path fits the reference format's prompt (json when measured)."""
    groups: dict[tuple[str, str, str], dict[str, list[Item]]] = {}
    for item in items:
        r, q = item.row, item.question
        if r.mode == "B" and not q.insufficient and q.query and r.answerable is not None:
            groups.setdefault((r.encoding, r.size, r.ids), {}).setdefault(r.format, []).append(item)
    reference = "json" if "json" in plan.formats else plan.formats[0]
    hints = {}
    for (encoding, size, ids), by_format in groups.items():
        shares = {fmt: statistics.fmean(not i.row.answerable for i in its) for fmt, its in by_format.items()}
        if min(shares.values()) <= 0.5 or reference not in by_format:
            continue
        first = sorted(
            (i for i in by_format[reference] if i.row.permutation == 0),
            key=lambda i: min(max(p) + 1 for p in i.question.paths if p),
        )
        item = first[len(first) // 2]  # the median question by the edges its gold path needs
        k = min(max(p) + 1 for p in item.question.paths if p)
        shown = subgraph(item.context.graph.pick(item.order[:k]))
        tokenizer = next(t for t in plan.tokenizers if t.name == encoding)
        need = FormattedGraph(plan.template, reference, serialized(reference, shown)).tokens(
            counts, tokenizer, item.question.question
        )
        hints[GroupKey(encoding, size, ids, "B")] = (
            f"{encoding} · {size} · {ids}: at --budget {plan.budget} most prompts of every format leave a whole gold "
            "path "
            f"out (from {1 - max(shares.values()):.2f} to {1 - min(shares.values()):.2f} of the positive questions "
            f"answerable), so mode B cannot tell the formats apart; the median question's gold path fits a "
            f"{reference} prompt from --budget {need:,}"
        )
    return hints


def part_cost_line(cost: PartCost, what: str) -> str:
    """'edge ids cost (graph tokens, o200k_base): small: json +52 (6%), ...': the price of a part of the graph text per
    format."""
    parts = [
        f"{size}: " + ", ".join(f"{fmt} {_added(whole, without)}" for fmt, (whole, without) in by_format.items())
        for size, by_format in cost.by_size.items()
    ]
    return f"{what} cost (graph tokens, {cost.encoding}): " + "; ".join(parts)


def skipped_text(skipped: list[dict[str, Any]]) -> str:
    """The questions --skip-invalid-questions left out, with their reasons: 'q3 (its reason); q7 (its reason)'."""
    return "; ".join(f"{s['question']} ({'; '.join(s['reasons'])})" for s in skipped)


def console_summary(summary: list[SizeSummary]) -> str:
    """One line per encoding, size, ids, mode and format, for matrix runs."""
    lines = ["encoding\tsize\tids\tmode\tformat\tprompt_tokens\tedges_included\tanswerable\toverflow"]
    for e in summary:
        answerable = "" if e.answerable is None else f"{e.answerable.mean:.2f}"
        prompt_tokens = e.prompt_tokens.mean if e.prompt_tokens else 0
        edges = e.edges_included.mean if e.edges_included else 0
        lines.append(
            f"{e.encoding}\t{e.size}\t{e.ids}\t{e.mode}\t{e.format}\t{prompt_tokens:.0f}\t{edges:.1f}\t{answerable}\t"
            f"{e.overflow}/{e.prompts}"
        )
    return "\n".join(lines)
