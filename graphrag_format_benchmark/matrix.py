"""The experiment matrix: what a run measures (Plan), its graph variants, and the names of the files it writes.

In: the checked inputs and the run's flags as a Plan (formats, tokenizers, sizes, id variants, permutations, budget,
template, contexts). Out: every (size, ids) variant, each proven by the control solver (build_variants; size large
grows until the most compact format's prompts just fit the context window), and the file names of a run, known
before anything is measured. GroupKey is what every table of sizes and results is drawn per.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ._article import ARTICLE_TEMPLATE, BenchmarkError, FormattedGraph, serialized, warn
from .frameworks import records
from .solver import edge_index, solver_problem
from .variants.contexts import Context, ContextSummary, KHop, TokenBudget, Variant, context_summary, given_context
from .variants.distractors import Distractors, with_distractors
from .variants.ids import with_edge_ids, with_short_ids
from .variants.names import Namer
from .variants.pseudonyms import Pseudonyms, with_pseudonyms

if TYPE_CHECKING:
    from ._article import Graph, Question, RunInputs, Template, TokenCounts, Tokenizer


class GroupKey(NamedTuple):
    """What a table of results or sizes is drawn for: every format is compared within one group."""

    encoding: str
    size: str
    ids: str
    mode: str


class Grouped(Protocol):
    """What has a group: a size_report row, a scored cell, an aggregate, a verdict."""

    @property
    def encoding(self) -> str: ...
    @property
    def size(self) -> str: ...
    @property
    def ids(self) -> str: ...
    @property
    def mode(self) -> str: ...


def group_key(row: Grouped) -> GroupKey:
    """The group of a size_report row, a scored cell, an aggregate or a verdict."""
    return GroupKey(row.encoding, row.size, row.ids, row.mode)


HOP_BUCKETS = ("1", "2", "3", "4+", "abstention")


def hop_bucket(q: Question) -> str:
    """'1', '2', '3', '4+' by the hops of a positive question (its query's, else its first gold path's), or
    'abstention'."""
    if q.insufficient:
        return "abstention"
    n = len(q.query.hops) if q.query else len(q.paths[0]) if q.paths else 0
    return str(n) if n < 4 else "4+"


@dataclass(frozen=True)
class Plan:
    formats: list[str]
    tokenizers: list[Tokenizer]
    sizes: list[str]
    ids: list[str]
    permutations: int  # edge orders per variant; 0 is the canonical one
    budget: int | None  # mode B token budget; None: mode A only
    context_window: int
    seed: int
    write_prompts: bool | None  # None: the article's layout writes them while they are small (write_prompts_by_default)
    template: Template = ARTICLE_TEMPLATE
    edge_ids: bool = False  # --edge-ids: every edge shown with a stable id, which "path" cites
    context: str = "shared"  # shared: one graph for every question; given: each question's own; khop: cut per question
    context_hops: int | None = None  # khop: the depth of the neighbourhood; None: each question's own hop count
    context_edges: int = 300  # khop: the most edges a context holds besides its gold paths' own
    context_tokens: int | None = None  # khop: the most a context's graph counts (context_tokens_unit) in that format
    context_tokens_format: str = "json"  # the format the budget is counted in: the baseline's, or the framework's
    context_tokens_unit: str = "tokens"  # tokens of the first encoding, or records (frameworks.records: its rows)
    # a framework store without direction (stores.UNDIRECTED): evidence may name an edge either way
    undirected: bool = False

    @property
    def article_layout(self) -> bool:
        """The article's own run (one small graph as given, no budget): files keep the article's names."""
        return (
            self.sizes == ["small"]
            and self.ids == ["original"]
            and self.permutations == 1
            and self.budget is None
            and self.context == "shared"
        )


def largest_fitting(
    f: Callable[[int], int], limit: int, lo: int, f_lo: int, hi: int, f_hi: int | None
) -> tuple[int, int]:
    """Largest k with f(k) <= limit < f(k + 1), given f(lo) <= limit < f(hi): interpolation search, with a
    bisection after every third guess in a row that fails to halve the interval, so O(log(hi - lo)) calls
    of f at worst and a handful when f grows about linearly (tokens per edge). Returns (k, f(k)). f_hi None (not
    measured): bisection until it is."""
    slow_steps = 0
    while hi - lo > 1:
        if slow_steps >= 3 or f_hi is None or f_hi == f_lo:
            k, slow_steps = (lo + hi) // 2, 0
        else:
            k = min(max(lo + (limit - f_lo) * (hi - lo) // (f_hi - f_lo), lo + 1), hi - 1)
        width, value = hi - lo, f(k)
        if value <= limit:
            lo, f_lo = k, value
        else:
            hi, f_hi = k, value
        slow_steps = slow_steps + 1 if 2 * (hi - lo) > width else 0
    return lo, f_lo


def cut_near(
    f: Callable[[int], int], limit: int, hint: int, lo: int, f_lo: int, hi: int | None, f_hi: int | None
) -> tuple[int, int]:
    """largest_fitting, after bracketing the answer around a guess: the guess and its neighbour first (a
    good hint, such as the previous question's cut, costs two calls of f), then, going up with no known
    bound (hi None), steps along the secant of the last two points, so near-linear growth costs a few."""
    if hi is not None and hi - lo <= 1:
        return lo, f_lo
    hint = max(hint, lo + 1) if hi is None else min(max(hint, lo + 1), hi - 1)
    value = f(hint)
    if value > limit:
        hi, f_hi = hint, value
        if hi - 1 > lo:
            value = f(hi - 1)
            if value <= limit:
                return hi - 1, value
            hi, f_hi = hi - 1, value
        return largest_fitting(f, limit, lo, f_lo, hi, f_hi)
    last, f_last, lo, f_lo = lo, f_lo, hint, value
    step = 1
    while hi is None or hi - lo > 1:
        nxt = lo + step if hi is None else min(lo + step, hi - 1)
        value = f(nxt)
        if value > limit:
            hi, f_hi = nxt, value
            break
        last, f_last, lo, f_lo = lo, f_lo, nxt, value
        slope = (f_lo - f_last) / (lo - last)
        step = int((limit - f_lo) / slope) + 1 if slope > 0 else 2 * step
    if hi is None:  # the loop ends only once hi is found
        raise AssertionError("cut_near ended without an upper bound")  # an internal bug
    return largest_fitting(f, limit, lo, f_lo, hi, f_hi)


class _Spent(Exception):
    """The distractor stream has no more branches than this: a large graph cannot grow past it."""


def large_branches(context: Context, stream: Distractors, plan: Plan, counts: TokenCounts) -> tuple[int, bool]:
    """Distractor branches of a context's large graph: the most compact format's prompts just fit the context
    window; and whether the stream ran out before that (the graph's names are too few), so large is smaller.

    Sized with the first encoding, so every encoding measures the same graph."""
    tokenizer, window = plan.tokenizers[0], plan.context_window
    questions = context.questions
    longest = max(questions, key=lambda q: (tokenizer.count(q.question), q.id))
    texts: dict[tuple[int, str], FormattedGraph] = {}

    def tokens(n: int, fmt: str, q: Question = longest) -> int:
        if len(stream.first(n)) < n:
            raise _Spent
        if (n, fmt) not in texts:
            grown, _ = with_distractors(context, stream, "large", n, plan.seed)
            grown = with_edge_ids(grown) if plan.edge_ids else grown
            texts[(n, fmt)] = FormattedGraph(plan.template, fmt, serialized(fmt, grown.graph))
        return texts[(n, fmt)].tokens(counts, tokenizer, q.question)

    def all_fit(n: int, fmt: str) -> bool:
        return all(tokens(n, fmt, q) <= window for q in questions)

    lo = medium = len(stream.first(stream.medium))
    compact = min(plan.formats, key=lambda fmt: tokens(lo, fmt))
    if tokens(lo, compact) > window:
        raise BenchmarkError(
            f"--context-window {window} is too small for a large graph: the medium graph's most compact prompt "
            f"({compact}) already takes {tokens(lo, compact)} tokens; raise --context-window or drop large from --sizes"
        )
    while True:
        f_lo = tokens(lo, compact)
        per_branch = max((f_lo - tokens(0, compact)) / max(lo, 1), 1.0)  # tokens grow about linearly
        guess = lo + int((window - f_lo) / per_branch)
        cap = len(stream.first(2 * guess + 2))  # as many as the names allow, up to twice the guess
        hi: int | None = None if cap == 2 * guess + 2 else cap
        f_hi: int | None = None
        if hi is not None:
            f_hi = tokens(cap, compact)
            if f_hi <= window:
                return cap, True  # the names ran out before the window filled
        try:
            lo, _ = cut_near(
                functools.partial(tokens, fmt=compact), window, min(guess, hi - 1) if hi else guess, lo, f_lo, hi, f_hi
            )
        except _Spent:
            return len(stream.first(2 * guess + 2)), True
        while lo > medium and not all_fit(lo, compact):  # the longest question was only a proxy
            lo -= 1
        # Other formats: their prompts at lo are measured in mode A anyway; only one that fits there can
        # be more compact at lo + 1.
        try:
            bigger = [fmt for fmt in plan.formats if fmt != compact and all_fit(lo, fmt) and all_fit(lo + 1, fmt)]
        except _Spent:
            return lo, True
        for key in [key for key in texts if key[0] not in (0, lo, lo + 1)]:
            del texts[key]  # keep memory to a few graph texts
        if not bigger:
            return lo, False
        compact, lo = bigger[0], lo + 1  # another format is more compact at this size: keep growing


def input_contexts(inputs: RunInputs, plan: Plan) -> tuple[list[Context], ContextSummary | None]:
    """The contexts of the inputs, before any distractor, and what the retrieval did (for the reports)."""
    questions = inputs.questions
    if plan.context == "khop":
        tokens = None
        if plan.context_tokens is not None:
            fmt, tokenizer = plan.context_tokens_format, plan.tokenizers[0]
            count = (
                records
                if plan.context_tokens_unit == "records"
                else lambda graph: tokenizer.count(serialized(fmt, graph))
            )
            tokens = TokenBudget(count, plan.context_tokens, largest_fitting)
        retriever = KHop(inputs.graph, plan.context_hops, plan.context_edges, plan.seed, tokens)
        contexts = [retriever.context(q) for q in questions]
        return contexts, retriever.summary(contexts)
    if plan.context == "given":
        contexts = [given_context(inputs.graph, q) for q in questions]
        return contexts, context_summary(contexts, "given")
    return [Context("", inputs.graph, questions)], None


def preflight_solver(variant: Variant, proven: Graph | None = None) -> None:
    """Stop the run unless the solver agrees with every question's gold data on this graph variant (a variant that
    fails here is a bug in building it). proven: the input graph, which check_questions proved already: a context that
    shows it as it is (the article's small, original variant) is not proven again."""
    for context in variant.contexts:
        if context.graph is proven:
            continue
        index = edge_index(context.graph.edges)
        for q in context.questions:
            problem = solver_problem(context.graph, q, index) if q.query else None
            if problem:
                where = f"graph variant {variant.name}" + (f", context {context.id}" if context.id else "")
                raise BenchmarkError(f"control solver disagrees with question {q.id} on {where}: {problem}")


def build_variants(
    inputs: RunInputs, plan: Plan, counts: TokenCounts, contexts: list[Context] | None = None
) -> list[Variant]:
    """Every (size, ids) variant of the plan over the input's contexts (input_contexts, unless given), each proven
    by the solver preflight. A context's distractors are drawn for it alone, named apart from every name of the
    input graph."""
    bases = input_contexts(inputs, plan)[0] if contexts is None else contexts
    shared = len(bases) == 1 and not bases[0].id
    namer = (
        None
        if shared or plan.sizes == ["small"]
        else Namer(inputs.graph, random.Random(f"{plan.seed}/names"), inputs.kinds)
    )
    streams: dict[str, Distractors] = {}  # medium and large draw from one stream per context: large extends medium
    pseudonyms: Pseudonyms | None = None  # one renaming for every size and context
    variants = []
    for size in plan.sizes:
        sized, branches, notes = [], 0, []
        for base in bases:
            made, note = 0, ""
            if size != "small":
                stream = streams.get(base.id) or streams.setdefault(
                    base.id, Distractors(base.graph, base.questions, plan.seed, base.id, namer, inputs.kinds)
                )
                n, spent = large_branches(base, stream, plan, counts) if size == "large" else (stream.medium, False)
                base, made = with_distractors(base, stream, size, n, plan.seed)
                if size == "medium" and made < n or spent:
                    note = stream.shortage(size, made, n if size == "medium" else None)
            sized.append(with_edge_ids(base) if plan.edge_ids else base)
            branches += made
            notes += [(base.id, note)] if note else []
        shortage = (
            notes[0][1]
            if shared and notes
            else (
                f"{size}: {len(notes)} of {len(bases)} contexts got fewer distractor branches than they want; the "
                "first, "
                f"context {notes[0][0]}: {notes[0][1]}"
                if notes
                else ""
            )
        )
        if shortage:
            warn(shortage)
        base_variant = Variant(size, "original", tuple(sized), branches, shortage)
        for ids in plan.ids:
            if ids == "original":
                variant = base_variant
            elif ids == "short":
                variant = with_short_ids(base_variant, plan.seed)
            else:
                if pseudonyms is None:  # drawn once, for every size
                    pseudonyms = Pseudonyms(inputs.graph, plan.seed)
                variant = with_pseudonyms(base_variant, pseudonyms)
            preflight_solver(variant, inputs.graph)
            variants.append(variant)
    return variants


def graph_file(plan: Plan, variant: Variant, fmt: str) -> str:
    return f"graph.{fmt}.txt" if plan.article_layout else f"graph.{variant.size}.{variant.ids}.{fmt}.txt"


def variant_file(variant: Variant, kind: str) -> str:
    """graph.<size>.<ids>.json or questions.<size>.<ids>.json: a variant in the input's own format."""
    return f"{'graph' if kind == 'json' else 'questions'}.{variant.size}.{variant.ids}.json"


def prompt_file(plan: Plan, variant: Variant, permutation: int, mode: str, encoding: str, fmt: str, qid: str) -> str:
    if plan.article_layout:
        return f"prompt.{fmt}.{qid}.txt"
    mode = "A" if mode == "A" else f"B.{encoding.replace(':', '-')}"  # a packed prompt depends on the encoding
    return f"prompt.{variant.size}.{variant.ids}.p{permutation}.{mode}.{fmt}.{qid}.txt"


def planned_files(plan: Plan, questions: tuple[Question, ...]) -> list[str]:
    """The names of every file a run of plan writes, known before anything is measured (the leakage check
    of file names runs on them)."""
    stand_ins = [Variant(size, ids, (), 0) for size in plan.sizes for ids in plan.ids]
    shared = plan.context == "shared"
    names = [graph_file(plan, v, fmt) for v in stand_ins for fmt in plan.formats] if shared else []
    if not plan.article_layout:
        names += [
            variant_file(v, kind) for v in stand_ins for kind in ("json", "questions") if shared or kind == "questions"
        ]
        names += [f"order.{size}.p{k}.json" for size in plan.sizes for k in range(plan.permutations)]
    if plan.write_prompts is not False:  # written, or perhaps (decided once the graph texts are known)
        modes = [("A", "")] + [("B", t.name) for t in plan.tokenizers if plan.budget]
        names += [
            prompt_file(plan, v, k, mode, encoding, fmt, q.id)
            for v in stand_ins
            for k in range(plan.permutations)
            for mode, encoding in modes
            for fmt in plan.formats
            for q in questions
        ]
    return names
