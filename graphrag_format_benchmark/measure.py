"""The measurement: every variant, permutation, format, encoding and question, in modes A and B.

In: the proven variants and the Plan. Out: the rows of size_report.json (with an Item per row, which can rebuild its
prompt for the runner), and the graph and prompt files streamed into benchmark.Staging as they are made. No prompt is
kept in memory: a row keeps the prompt's SHA-256 and token count, computed from the parts that all prompts of a graph
text share (benchmark.FormattedGraph). Mode B (article 7.3) packs each prompt into --budget tokens (pack).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from ._article import (
    SPLIT_SEARCH,
    BenchmarkError,
    FormattedGraph,
    TokenCounts,
    json_bytes,
    prompt_files,
    prompt_files_bytes,
    serialized,
    sha256_hex,
    size_report_row,
    splits_between,
)
from .formats import Proven, check_roundtrip_once, graph_dict
from .matrix import (
    GroupKey,
    build_variants,
    cut_near,
    graph_file,
    largest_fitting,
    prompt_file,
    variant_file,
)
from .progress import Progress
from .questions import question_dict
from .solver import EdgeIndex, answerable, edge_index
from .variants.contexts import edge_order, subgraph

TOKENIZER_THREADS = min(4, os.cpu_count() or 1)

if TYPE_CHECKING:
    from ._article import Graph, Question, RunInputs, Staging, Template, Tokenizer
    from .matrix import Plan
    from .variants.contexts import Context, Variant


@dataclass(slots=True, frozen=True, kw_only=True)
class SizeRow:
    """One row of size_report.json, made from benchmark.size_report_row's dict (the one place a row is made, so that
    the package's rows are the article script's, field for field): its fields in the file's order. record() gives the
    dict back for the file."""

    format: str
    question_id: str
    bytes: int  # of the graph text, UTF-8
    graph_tokens: int  # of the graph text alone
    prompt_tokens: int  # of the whole prompt
    roundtrip_ok: bool  # always true: the text was proven to parse back before it was counted
    graph_sha256: str  # of the graph text
    encoding: str  # the tokenizer's name
    prompt_sha256: str  # of the whole prompt: the key of its answers in the log
    tokenizer: str  # the library that counted (tiktoken, tokenizers)
    normalization: str  # of the text before counting (NFC)
    prompt_scope: str  # what prompt_tokens cover
    size: str  # small, medium or large
    ids: str  # original, short or pseudonyms
    context: str = ""  # a given or khop context's name; "" (absent from the file) for the shared graph
    permutation: int  # the edge order, 0 the canonical one
    edge_order_sha256: str  # of the displayed order
    mode: str  # "A": the whole graph; "B": packed into the budget
    budget: int | None  # mode B's token budget; None in mode A
    context_window: int
    edges_total: int  # of the context
    edges_included: int  # shown: all of them in mode A, a prefix in mode B
    gold_path: list[int]  # the first gold path, in displayed positions
    gold_paths: list[list[int]] | None = None  # every gold path, only when there are several (else absent)
    gold_edges_included: int  # the most edges of one gold path the prompt shows
    answerable: bool | None  # the solver's outcome on what the prompt shows; None without a query
    overflow: bool  # prompt_tokens over context_window

    @property
    def group(self) -> GroupKey:
        """The table the row is drawn in (matrix.group_key of the row)."""
        return GroupKey(self.encoding, self.size, self.ids, self.mode)

    def record(self) -> dict[str, Any]:
        """The row as size_report.json holds it: benchmark.size_report_row's dict, context and gold_paths only when
        set."""
        return {name: getattr(self, name) for name in SIZE_ROW_FIELDS[bool(self.context), self.gold_paths is not None]}


# (a context is named, several gold paths) -> the fields size_report.json has, in order
SIZE_ROW_FIELDS = {
    (named, several): tuple(
        f.name for f in fields(SizeRow) if (named or f.name != "context") and (several or f.name != "gold_paths")
    )
    for named in (False, True)
    for several in (False, True)
}


@dataclass(frozen=True)
class Item:
    """One row of size_report.json with what it takes to rebuild its prompt and to score an answer to it."""

    row: SizeRow
    variant: Variant
    context: Context  # the graph the prompt shows part or all of
    order: list[int]  # the context's edge indices in displayed order
    question: Question  # paths in displayed positions
    template: Template
    undirected: bool = False  # the graph's edges have no direction: evidence may name an edge's ends either way

    def shown(self) -> Graph:
        """What the prompt shows: every node in mode A, exactly the used ones in a mode B pack."""
        shown = self.context.graph.pick(self.order[: self.row.edges_included])
        return shown if self.row.mode == "A" else subgraph(shown)

    def prompt(self) -> str:
        fmt = self.row.format
        text = self.template.render(fmt, serialized(fmt, self.shown()), self.question.question)
        if sha256_hex(text) != self.row.prompt_sha256:
            raise AssertionError(f"rebuilt prompt differs from the measured one: {self.row}")  # an internal bug
        return text


@dataclass(frozen=True)
class Measurement:
    """What measure() gives: the rows and their items, the variants, and what the manifest says of them (facts())."""

    rows: list[SizeRow]  # size_report.json
    items: list[Item]  # one per row, same order
    variants: list[Variant]
    large_branches: int | None  # distractor branches of the large variant; None without one
    write_prompts: dict[str, Any]  # {"write": bool, "bytes": n}: whether prompt files were written (and their size)
    pseudonyms: dict[str, Any] | None  # --pseudonymize: {"seed", "mapping_sha256": size -> SHA-256}; None without
    edge_ids: PartCost | None  # what --edge-ids cost; None without the flag
    properties: PartCost | None  # what properties cost; None when no graph has any
    # format|context|edges -> the text report.html shows (first variant, order 0)
    shown: dict[str, str] = field(default_factory=dict)

    def facts(self) -> dict[str, Any]:
        """The resolved values the manifest's config ends with."""
        return {
            "large_branches": self.large_branches,
            "write_prompts": self.write_prompts,
            **({"pseudonyms": self.pseudonyms} if self.pseudonyms else {}),
            **({"edge_id_graph_tokens": self.edge_ids.record()} if self.edge_ids else {}),
            **({"property_graph_tokens": self.properties.record()} if self.properties else {}),
        }


@dataclass(frozen=True)
class Cell:
    """One prompt, measured: what a size_report row says of it besides the run's constants."""

    variant: Variant
    context: Context
    permutation: int
    mode: str  # "A": the whole graph; "B": packed into the token budget
    question: Question  # paths in displayed positions
    shown: FormattedGraph
    edges_included: int
    edges_total: int
    answerable: bool | None  # the solver's outcome on what the prompt shows; None without a query
    graph_tokens: int
    prompt_tokens: int
    prompt_sha256: str


# A large text need not be tokenized whole: it can be cut where the pre-tokenizer must end a piece whatever follows,
# and the pieces' tokens are the text's (ThreadedCounts counts a large text a chunk at a time; report.html tokenizes
# only the start it draws). benchmark.last_split finds such a place for every encoding
# of SPLIT_PATTERNS: a newline after a character that is not whitespace, before one that is not either. For o200k_base
# and cl100k_base the next line may also start with spaces or tabs (JSON's indentation) that a character other than
# whitespace ends: their patterns take a newline alone (\s*[\r\n]+, backtracking to the newline when no newline
# follows the spaces) or at the end of the punctuation before it ([^\s\p{L}\p{N}]+[\r\n/]*), both before any
# whitespace alternative, so the piece with the newline ends at it; and a piece that starts there is matched as in
# the text alone, since no pattern looks behind. (GPT-2's pattern, of r50k and p50k, would join the newline to the
# spaces: the strict rule only.)
INDENT_SPLITS = (
    "2d1b8dc11e89af71459b36004f698ab3693f59fd84f63e8ec2b49564ab857420",  # o200k_base, o200k_harmony
    "f021c3d976978e62ee64cdad150cc3405c2e3d6e3b40407850bb9e8d9eb65899",  # cl100k_base
)
INDENTED_LINE = re.compile(r"[ \t]+[^\s]")  # a line that starts with spaces or tabs, then something else


def token_cut(tokenizer: Tokenizer, text: str, size: int, start: int = 0) -> int | None:
    """A place in text after start and at or before size where the tokens of text[:place] are the first tokens of
    text (see above), or None when none is found among the last SPLIT_SEARCH newlines."""
    indent = sha256_hex(getattr(tokenizer.encoding, "_pat_str", "")) in INDENT_SPLITS
    p, tries = text.rfind("\n", start + 1, size), 0
    while p > start and tries < SPLIT_SEARCH:
        if (
            not text[p - 1].isspace()
            and p + 1 < len(text)
            and (splits_between(text[p - 1 : p + 1], text[p + 1]) or indent and INDENTED_LINE.match(text, p + 1))
        ):
            return p + 1
        p, tries = text.rfind("\n", start + 1, p), tries + 1
    return None


COUNT_CHUNK = 1 << 22  # characters tokenized at a time: a text's token ids never take more memory than a chunk's


def chunked_count(tokenizer: Tokenizer, text: str, chunk: int = COUNT_CHUNK) -> int:
    """Tokenizer.count of a text, a chunk of about COUNT_CHUNK characters at a time, cut where token_cut proves the
    tokens are the whole text's: the same count, without the whole text's token ids in memory at once (a 150,000-edge
    json graph is 5 million tokens, 40 bytes each in a list)."""
    total, start = 0, 0
    while len(text) - start > chunk:
        cut = token_cut(tokenizer, text, start + chunk, start)
        if cut is None:
            break
        total, start = total + tokenizer.count(text[start:cut]), cut
    return total + tokenizer.count(text[start:])


class ThreadedCounts(TokenCounts):
    """benchmark.TokenCounts that begins counting a large text on other threads (tiktoken releases the GIL), so that
    the measurement proves the text's round trip meanwhile; count() collects the result. close() ends the threads."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: dict[tuple[str, str], Future[int]] = {}  # counts under way on the pool's threads
        self.pool: ThreadPoolExecutor | None = None

    def count(self, tokenizer: Tokenizer, text: str, sha: str | None = None) -> int:
        key = (tokenizer.name, sha or sha256_hex(text))
        if key not in self.cache and key in self.pending:
            self.cache[key] = self.pending.pop(key).result()
        return super().count(tokenizer, text, key[1])

    def start(self, tokenizer: Tokenizer, text: str, sha: str) -> None:
        key = (tokenizer.name, sha)
        if key in self.cache or key in self.pending:
            return
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=TOKENIZER_THREADS, thread_name_prefix="tokens")
        self.pending[key] = self.pool.submit(chunked_count, tokenizer, text)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None


@dataclass
class Measuring:
    """What one measurement carries from cell to cell."""

    plan: Plan
    counts: ThreadedCounts
    add_file: Callable[[str, bytes], None]  # a graph or prompt file, as it is made
    progress: Progress
    costs: PartCosts
    items: list[Item] = field(default_factory=list)  # one per row of size_report.json
    # {"write": bool, "bytes": n}: whether prompt files are written
    prompts: dict[str, Any] = field(default_factory=dict)
    # prompt files written (a mode A prompt is the same for every encoding)
    written: set[str] = field(default_factory=set)
    # mode B: the last cut per variant, format and encoding
    hints: dict[tuple[str, str, str], int] = field(default_factory=dict)
    shown: dict[str, str] = field(default_factory=dict)  # the first variant's mode A texts of order 0, for report.html
    # questions whose query the package derived from their gold path: their mode A rows say what benchmark.py alone
    # says of a question without a query (answerable null), so the article's own files give the same bytes either way
    derived: frozenset[str] = frozenset()

    def add_row(self, tokenizer: Tokenizer, cell: Cell, order: list[int], order_sha: str) -> None:
        """The cell's row of size_report.json (benchmark.size_report_row) and its Item; its prompt file when they are
        written."""
        q, plan = cell.question, self.plan
        row = size_report_row(
            cell.shown,
            q,
            tokenizer,
            graph_tokens=cell.graph_tokens,
            prompt_tokens=cell.prompt_tokens,
            prompt_sha256=cell.prompt_sha256,
            order_sha256=order_sha,
            edges=cell.edges_total,
            included=cell.edges_included,
            answerable=cell.answerable,
            context_window=plan.context_window,
            size=cell.variant.size,
            ids=cell.variant.ids,
            context=cell.context.id,
            permutation=cell.permutation,
            mode=cell.mode,
            budget=plan.budget if cell.mode == "B" else None,
        )
        self.items.append(Item(SizeRow(**row), cell.variant, cell.context, order, q, plan.template, plan.undirected))
        if self.prompts["write"]:
            name = prompt_file(plan, cell.variant, cell.permutation, cell.mode, tokenizer.name, cell.shown.fmt, q.id)
            if name not in self.written:
                self.written.add(name)
                self.add_file(name, cell.shown.prompt(q.question).encode("utf-8"))


def row_order(plan: Plan, variants: list[Variant]) -> Callable[[SizeRow], tuple[int, int, int, int, str, int, int]]:
    """Rows sorted by encoding, size, ids, permutation, mode, then format and question as given."""
    encodings, sizes, ids, formats, questions = (
        {name: i for i, name in enumerate(names)}
        for names in (
            [t.name for t in plan.tokenizers],
            plan.sizes,
            plan.ids,
            plan.formats,
            [q.id for q in variants[0].questions],
        )
    )
    return lambda r: (
        encodings[r.encoding],
        sizes[r.size],
        ids[r.ids],
        r.permutation,
        r.mode,
        formats[r.format],
        questions[r.question_id],
    )


def measure(
    inputs: RunInputs,
    plan: Plan,
    out: Staging | None = None,
    variants: list[Variant] | None = None,
    counts: ThreadedCounts | None = None,
) -> Measurement:
    """Every row of size_report.json, with the files it writes into out (none without it) and what the runner
    needs. variants: already built and checked (built here when not given)."""
    if counts is None:  # a measurement on its own (tests, bench/): its counting threads end with it
        with closing(ThreadedCounts()) as counts:
            return measure(inputs, plan, out, variants, counts)
    variants = build_variants(inputs, plan, counts) if variants is None else variants
    add_file = out.add if out is not None else lambda name, data: None
    n_cells = sum(len(v.questions) for v in variants) * plan.permutations * len(plan.formats) * len(plan.tokenizers)
    # None: decided on the first graph texts (write_prompts_by_default)
    state = Measuring(
        plan,
        counts,
        add_file,
        Progress(n_cells * (2 if plan.budget else 1)),
        PartCosts(plan, counts),
        prompts={"write": plan.write_prompts},
        derived=frozenset(inputs.derived_queries),
    )
    orders: dict[tuple[str, int], dict[str, list[int]]] = {}  # (size, permutation) -> context id -> displayed order
    for variant in variants:
        if not plan.article_layout:
            if variant.shared:
                add_file(variant_file(variant, "json"), json_bytes(graph_dict(variant.contexts[0].graph, flat=True)))
            add_file(
                variant_file(variant, "questions"),
                json_bytes(
                    [
                        question_dict(q, None if variant.shared else c.graph)
                        for c in variant.contexts
                        for q in c.questions
                    ]
                ),
            )
        for context in variant.contexts:
            proven: Proven = {}  # round trips that prove the context's other edge orders' (check_roundtrip_once)
            for k in range(plan.permutations):
                order = orders.setdefault((variant.size, k), {}).setdefault(
                    context.id, edge_order(context, variant.size, k, plan.seed)
                )
                measure_order(variant, context, k, order, state, proven, keep=variant is variants[0] and k == 0)
    if not plan.article_layout:
        for (size, k), by_context in orders.items():
            add_file(f"order.{size}.p{k}.json", json_bytes(by_context.get("", by_context)))
    state.progress.close()
    key = row_order(plan, variants)
    items = sorted(state.items, key=lambda item: key(item.row))
    pseudonyms = {v.size: v.mapping_sha256 for v in variants if v.mapping_sha256}
    costs = state.costs
    return Measurement(
        [item.row for item in items],
        items,
        variants,
        next((v.branches for v in variants if v.size == "large"), None),
        state.prompts,
        {"seed": plan.seed, "mapping_sha256": pseudonyms} if pseudonyms else None,
        costs.cost(costs.edge_ids, "with_ids") if plan.edge_ids else None,
        costs.cost(costs.properties, "with") if costs.properties else None,
        state.shown,
    )


def measure_order(
    variant: Variant, context: Context, k: int, order: list[int], state: Measuring, proven: Proven, keep: bool
) -> None:
    """The rows of one context in one edge order: every format and encoding, in modes A and B. keep: the texts are
    kept for report.html (Measurement.shown)."""
    plan, counts = state.plan, state.counts
    order_sha = sha256_hex(json_bytes(order))
    questions = context.questions
    position = {old: new for new, old in enumerate(order)}
    shown = context.graph.pick(order)
    moved = [q.moved(position) for q in questions]
    texts = {}
    for fmt in plan.formats:  # each text is tokenized on other threads while this one goes on
        texts[fmt] = text = FormattedGraph(plan.template, fmt, serialized(fmt, shown))
        for tokenizer in plan.tokenizers:
            counts.start(tokenizer, text.text, text.sha)
        if keep:
            state.shown[f"{fmt}|{context.id}|{len(order)}"] = text.text
    if state.prompts["write"] is None:
        state.prompts.update(write_prompts_by_default(texts.values(), questions, plan))
    for fmt, text in texts.items():
        check_roundtrip_once(fmt, shown, text.text, proven)
        if k == 0:
            if variant.shared:
                state.add_file(graph_file(plan, variant, fmt), text.text.encode("utf-8"))
            if variant.ids == plan.ids[0]:
                state.costs.add(variant.size, fmt, shown, text)
    # mode A counts every format's text (and every encoding's) at once, on other threads, so the status line names the
    # order and context it is at, not the format that happened to finish last (the first, which waits for the others)
    where = f"{variant.name} p{k}{' ' + context.id if context.id else ''}"
    encodings = plan.tokenizers[0].name if len(plan.tokenizers) == 1 else f"{len(plan.tokenizers)} encodings"
    for fmt, text in texts.items():
        shas = [text.prompt_sha256(q.question) for q in moved]
        for tokenizer in plan.tokenizers:
            graph_tokens = text.graph_tokens(counts, tokenizer)
            for q, sha in zip(moved, shas):
                # the preflight proved each question
                cell = Cell(
                    variant,
                    context,
                    k,
                    "A",
                    q,
                    text,
                    len(order),
                    len(order),
                    True if q.query and q.id not in state.derived else None,
                    graph_tokens,
                    text.tokens(counts, tokenizer, q.question),
                    sha,
                )
                state.add_row(tokenizer, cell, order, order_sha)
            state.progress.advance(len(moved), f"{where} ({len(texts)} formats) {encodings} A")
            if plan.budget:
                for cell in pack(variant, context, k, text, shown, moved, plan, tokenizer, counts, state.hints):
                    state.add_row(tokenizer, cell, order, order_sha)
                state.progress.advance(len(moved), f"{where} {fmt} {tokenizer.name} B")  # packed one by one


@dataclass(frozen=True)
class PartCost:
    """What an optional part of the graph text costs in graph tokens (first encoding, canonical order, first id
    variant), summed over the contexts of a size; record() is the manifest's dict."""

    encoding: str
    ids: str
    with_name: str  # the manifest's name of the count with the part: "with_ids" (edge ids) or "with" (properties)
    by_size: dict[str, dict[str, list[int]]]  # size -> format -> [graph tokens with the part, without it]

    def record(self) -> dict[str, Any]:
        return {
            "encoding": self.encoding,
            "ids": self.ids,
            "by_size": {
                size: {fmt: {self.with_name: whole, "without": without} for fmt, (whole, without) in by_format.items()}
                for size, by_format in self.by_size.items()
            },
        }


class PartCosts:
    """PartCost's counts as the measurement goes, for the edge ids of --edge-ids and for the properties: size ->
    format -> [with, without]."""

    def __init__(self, plan: Plan, counts: TokenCounts) -> None:
        self.plan, self.counts = plan, counts
        self.edge_ids: dict[str, dict[str, list[int]]] = {}
        self.properties: dict[str, dict[str, list[int]]] = {}

    def add(self, size: str, fmt: str, shown: Graph, text: FormattedGraph) -> None:
        tokenizer = self.plan.tokenizers[0]
        whole = text.graph_tokens(self.counts, tokenizer)
        parts = [
            (self.edge_ids, replace(shown, edge_ids=())) if shown.edge_ids else None,
            (self.properties, replace(shown, node_props=(), edge_props=())) if shown.has_props else None,
        ]
        for by_size, without in filter(None, parts):
            cost = by_size.setdefault(size, {}).setdefault(fmt, [0, 0])
            cost[0] += whole
            cost[1] += self.counts.count(tokenizer, serialized(fmt, without))

    def cost(self, by_size: dict[str, dict[str, list[int]]], with_name: str) -> PartCost:
        return PartCost(self.plan.tokenizers[0].name, self.plan.ids[0], with_name, by_size)


def write_prompts_by_default(
    texts: Iterable[FormattedGraph], questions: tuple[Question, ...], plan: Plan
) -> dict[str, Any]:
    """The article's layout writes a prompt file per format and question, as its script does, while they stay small
    (benchmark.prompt_files); a matrix run writes none unless --write-prompts. {"write": bool, "bytes": n}"""
    if plan.article_layout:
        return prompt_files(texts, questions, plan.template, "; pass --write-prompts to write them anyway")
    return {"write": False, "bytes": prompt_files_bytes(texts, questions, plan.template)}


def pack(
    variant: Variant,
    context: Context,
    k: int,
    whole: FormattedGraph,
    shown: Graph,
    questions: list[Question],
    plan: Plan,
    tokenizer: Tokenizer,
    counts: ThreadedCounts,
    hints: dict[tuple[str, str, str], int],
) -> list[Cell]:
    """Mode B (article 7.3): per question, the longest prefix of the displayed edges, with exactly the
    nodes they use, whose whole prompt fits the budget; the next edge would not fit.

    hints: (variant, format, encoding) -> the last cut, a close guess for the next question or permutation."""
    m, fmt, budget = len(shown.edges), whole.fmt, plan.budget
    if budget is None:  # mode B runs only with --budget
        raise AssertionError("a mode B pack without a budget")  # an internal bug
    # The whole pack is mode A's text only when every node is on an edge: a pack shows exactly the nodes its edges use.
    texts: dict[int, FormattedGraph] = {m: whole} if len(subgraph(shown).nodes) == len(shown.nodes) else {}
    hint_key = (variant.name, fmt, tokenizer.name)
    indexes: dict[int, tuple[Graph, EdgeIndex]] = {}

    def text(n: int) -> FormattedGraph:
        if n not in texts:
            texts[n] = FormattedGraph(plan.template, fmt, serialized(fmt, subgraph(shown.pick(range(n)))))
        return texts[n]

    packed = []
    for q in questions:

        def tokens(n: int, q: Question = q) -> int:
            return text(n).tokens(counts, tokenizer, q.question)

        what = f"{fmt} prompt for question {q.id} with an empty graph ({tokenizer.name})"
        cut = _pack_cut(
            tokens,
            m,
            m not in texts,
            functools.partial(whole.tokens, counts, tokenizer, q.question),
            budget,
            hints,
            hint_key,
            what,
        )
        if cut not in indexes and q.query:
            packed_graph = shown.pick(range(cut))
            indexes[cut] = (packed_graph, edge_index(packed_graph.edges))  # shared by the questions with the same cut
        ok = answerable(indexes[cut][0], q, indexes[cut][1]) if q.query else None
        t = text(cut)
        graph_tokens, prompt_tokens = t.graph_tokens(counts, tokenizer), tokens(cut)
        packed.append(
            Cell(variant, context, k, "B", q, t, cut, m, ok, graph_tokens, prompt_tokens, t.prompt_sha256(q.question))
        )
    return packed


def _pack_cut(
    tokens: Callable[[int], int],
    m: int,
    searched: bool,
    whole_tokens: Callable[[], int],
    budget: int,
    hints: dict[tuple[str, str, str], int],
    hint_key: tuple[str, str, str],
    what: str,
) -> int:
    """How many of the m edges a mode B pack keeps: the most whose prompt (tokens(n)) fits the budget, found near the
    last cut (hints) or by interpolation. searched: the pack of every edge is not mode A's text, so it is made only
    if the search reaches it."""
    if not searched and tokens(m) <= budget:
        return m
    if tokens(0) > budget:
        raise BenchmarkError(f"--budget {budget} is below the {tokens(0)} tokens of the {what}; raise --budget")
    if searched:

        def capped(n: int) -> int:
            return tokens(n) if n <= m else budget + 1  # past every edge: nothing more fits

        guess = hints.get(hint_key) or max(1, m * budget // max(whole_tokens(), 1))
        cut, _ = cut_near(capped, budget, min(guess, m), 0, tokens(0), None, None)
    elif hint_key in hints:
        cut, _ = cut_near(tokens, budget, hints[hint_key], 0, tokens(0), m, tokens(m))
    else:
        cut, _ = largest_fitting(tokens, budget, 0, tokens(0), m, tokens(m))
    hints[hint_key] = cut
    return cut
