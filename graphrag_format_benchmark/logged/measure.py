"""One logged prompt measured in every format: its context read back (layouts.py), its subgraph written in each format,
and the prompt it would have been with that format in place of the logged context.

In: a Logged request (read.py), the formats, the tokenizers. Out: Measured (the layout, the subgraph's size, per
encoding and format the graph's and the whole prompt's tokens; the logged layout's row is the logged bytes' own
count), or Skipped with the reason and the character where the reading failed. A prompt whose context spans several
places (LlamaIndex's source-text groups) has the alternative written at the first and the others taken out.
"""

from __future__ import annotations

import bisect
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from .._article import (
    SPLIT_SEARCH,
    BenchmarkError,
    Edge,
    Graph,
    Node,
    Props,
    Tokenizer,
    last_split,
    serialize_checked,
    splits_between,
)
from ..stores import DEFAULT_TYPE
from .layouts import LayoutError, Span, find_spans, read_span
from .read import Logged, NotCall, Unread, parse_line, raw_lines

LOGGED = "logged"  # the row of the logged bytes themselves


@dataclass
class Measured:
    """A logged prompt read and measured."""

    logged: Logged
    layout: str  # the layout found: a framework's, or own:FORMAT for a prompt this tool made
    message: int  # the index of the message that holds the context
    nodes: int
    edges: int
    # encoding -> format -> (graph, prompt) tokens
    tokens: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    # format -> the prompt message with it in place (kept for a few only)
    texts: dict[str, str] = field(default_factory=dict)
    graph: Graph | None = None  # the subgraph it shows (for the union of the logged subgraphs)
    # format -> its text's UTF-8 bytes (LOGGED: the logged context's)
    graph_bytes: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Skipped:
    """A logged prompt left out of the measurement, and why."""

    logged: Logged
    reason: str
    at: int | None = None  # the character offset in its message where the reading failed
    message: int | None = None


def merged(graphs: list[Graph]) -> Graph:
    """The spans' subgraphs as one: each node once, every edge. A node that one span shows only as a relationship's end
    (no row: its name its id, no type, no property) takes the row another gives; a node shown twice with other values
    (two GraphRAG tables, each with its own description) is LayoutError: one subgraph cannot carry both, and keeping
    the first would drop a fact from every alternative."""
    seen: dict[str, tuple[Node, Props]] = {}  # in the order first shown
    edges: list[Edge] = []
    edge_props: list[Props] = []
    for g in graphs:
        for n, p in g.nodes_with_props():
            known = seen.setdefault(n.id, (n, p))
            if known != (n, p) and not _bare(*(n, p)):
                if not _bare(*known):
                    raise LayoutError(
                        f"the entity {n.id!r} is shown twice with other values (in two of its contexts): one subgraph "
                        "cannot carry both"
                    )
                seen[n.id] = (n, p)
        edges += g.edges
        edge_props += [p for _, p in g.edges_with_props()]
    nodes = list(seen.values())
    return Graph(tuple(n for n, _ in nodes), tuple(edges), (), tuple(p for _, p in nodes), tuple(edge_props))


def _bare(node: Node, props: Props) -> bool:
    """A node a context names only as a relationship's end: no row of its own."""
    return node.name == node.id and node.type == DEFAULT_TYPE and not props


def replaced(text: str, spans: list[Span], graph_text: str) -> tuple[str, str, str]:
    """(before, graph_text, after): graph_text in the first span's place, the later spans taken out."""
    rest, last = [], spans[0].end
    for s in spans[1:]:
        rest.append(text[last : s.start])
        last = s.end
    return text[: spans[0].start], graph_text, "".join(rest) + text[last:]


def first_split(text: str) -> int | None:
    """The first position p past text's first two characters with splits_between(text[:p], text[p:]), or None."""
    p, tries = text.find("\n"), 0
    while p != -1 and tries < SPLIT_SEARCH:
        if p >= 1 and splits_between(text[p - 1 : p + 1], text[p + 1 : p + 2]):
            return p + 1
        p, tries = text.find("\n", p + 1), tries + 1
    return None


class Around:
    """A prompt's text around its context, counted once: the tokens of before + graph + after for any graph, exactly,
    tokenizing of before and after only the pieces next to the graph. Where the tokenizer surely splits (benchmark's
    splits_between: a newline after a non-space, before a non-space) the count is the sum of the pieces' counts;
    where no such place is found near a boundary, the whole is counted."""

    def __init__(self, tokenizer: Tokenizer, before: str, after: str) -> None:
        self.tokenizer, self.before, self.after = tokenizer, before, after
        cut = last_split(before) if tokenizer.splits else None
        self.cut_b = cut if cut is not None and cut >= 2 else 0
        cut = first_split(after) if tokenizer.splits else None
        self.cut_a = cut if cut is not None else len(after)
        self.fixed = tokenizer.count(before[: self.cut_b]) + tokenizer.count(after[self.cut_a :])

    def count(self, graph: str, graph_tokens: int) -> int:
        count = self.tokenizer.count
        head, tail = self.before[self.cut_b :], self.after[: self.cut_a]
        f1, f2 = (first_split(graph), last_split(graph)) if self.tokenizer.splits else (None, None)
        if f1 is None or f2 is None or f1 > f2:
            return self.fixed + count(head + graph + tail)
        inner = graph_tokens - count(graph[:f1]) - count(graph[f2:])
        return self.fixed + count(head + graph[:f1]) + inner + count(graph[f2:] + tail)


@dataclass
class Prepared:
    """A logged prompt read back and written in every format, ready to be counted (count_prepared)."""

    logged: Logged
    layout: str
    message: int
    text: str  # the message that holds the context
    spans: list[Span]
    graph: Graph
    formats: list[str]  # the formats measured, in --formats order
    graph_texts: dict[str, str]  # format -> the subgraph in it, round-trip proven (the layout's own format aside)
    own: str | None = None  # the format of --formats that is the logged layout itself: its row is what was sent

    def prompt_text(self, fmt: str) -> str:
        """The message with fmt's text in the context's place (the logged layout's own format: as it was sent)."""
        return self.text if fmt == self.own else "".join(replaced(self.text, self.spans, self.graph_texts[fmt]))


def own_format(layout: str) -> str:
    """The format whose text a layout is: a framework's layout is its format, own:FORMAT this tool's FORMAT."""
    return layout.removeprefix("own:")


def _lf(text: str) -> tuple[str, Callable[[int], int]] | None:
    """A text whose lines all end in CRLF, as LF (the layouts are read so), and the map from an offset in it back to
    the text's; None for any other text."""
    crlf = text.count("\r\n")
    if not crlf or crlf != text.count("\n") or crlf != text.count("\r"):
        return None
    norm = text.replace("\r\n", "\n")
    newlines = [k for k, c in enumerate(norm) if c == "\n"]
    return norm, lambda at: at + bisect.bisect_left(newlines, at)


def _found(logged: Logged) -> tuple[int, str, list[Span], Callable[[int], int] | None] | Skipped | None:
    """The message whose context is read: (its index, its text as read, the spans in it, the map back to the logged
    text for a CRLF one): the first message holding a layout with its markers, else the first holding one without;
    None when no message holds any."""
    first = None
    for k, (_, text) in enumerate(logged.messages):
        lf = _lf(text)
        read = lf[0] if lf else text
        try:
            spans, marked = find_spans(read)
        except LayoutError as e:
            return Skipped(logged, e.reason, e.at, k)
        if spans and marked:
            return k, read, spans, lf[1] if lf else None
        if spans and first is None:
            first = k, read, spans, lf[1] if lf else None
    return first


def prepare_logged(logged: Logged, formats: list[str]) -> Prepared | Skipped:
    """The logged prompt's context found, read back exactly, and its subgraph written in every format."""
    found = _found(logged)
    if found is None:
        return Skipped(
            logged,
            "no graph context of a known layout (GraphRAG, LightRAG, LlamaIndex, LangChain, neo4j-graphrag, or this "
            "tool's "
            "own prompt) in its messages",
        )
    if isinstance(found, Skipped):
        return found
    k, text, spans, back = found
    try:
        for span in spans:
            read_span(span, text)
    except LayoutError as e:
        return Skipped(logged, e.reason, back(e.at) if back else e.at, k)
    except (
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        RecursionError,
        MemoryError,
    ) as e:  # a text no reader foresaw: said, not raised
        return Skipped(
            logged,
            f"its {spans[0].layout} context could not be read ({type(e).__name__}: {str(e)[:120]})",
            spans[0].start,
            k,
        )
    if back is not None:  # the spans where they stand in the text as logged (CRLF)
        text = logged.messages[k][1]
        for span in spans:
            span.start, span.end = back(span.start), back(span.end)
    try:
        graph = merged([s.graph for s in spans if s.graph is not None])  # every span read has its graph
    except LayoutError as e:
        return Skipped(logged, e.reason, spans[0].start, k)
    if not graph.edges:
        return Skipped(logged, f"its {spans[0].layout} context shows no relationship", spans[0].start, k)
    # the logged layout's own row is the logged text itself: read_span proved that its writer gives those bytes back
    # from the subgraph and what the layout shows that is not a fact of it (ids, ranks, element ids, key orders, which
    # entities had a row), where the format's serializer would make them anew
    own = own_format(spans[0].layout) if own_format(spans[0].layout) in formats else None
    graph_texts = {}
    for fmt in formats:
        if fmt == own:
            continue
        try:
            graph_texts[fmt] = serialize_checked(fmt, graph)
        except (BenchmarkError, ValueError, TypeError, RecursionError) as e:
            return Skipped(logged, f"its subgraph cannot be written in {fmt}: {e}")
    return Prepared(logged, spans[0].layout, k, text, spans, graph, list(formats), graph_texts, own)


def count_prepared(p: Prepared, tokenizers: list[Tokenizer], keep_texts: bool = False) -> Measured:
    """Every count of a prepared prompt: the logged context and prompt, and each format's graph and prompt (tiktoken
    releases the GIL: this runs on another thread while the next prompt is read)."""
    text, spans = p.text, p.spans
    measured = Measured(p.logged, p.layout, p.message, len(p.graph.nodes), len(p.graph.edges), graph=p.graph)
    others = [t for j, (_, t) in enumerate(p.logged.messages) if j != p.message]
    logged_graph = "".join(text[s.start : s.end] for s in spans)
    measured.graph_bytes = {
        LOGGED: len(logged_graph.encode("utf-8")),
        **{f: len(t.encode("utf-8")) for f, t in p.graph_texts.items()},
    }
    if p.own is not None:
        measured.graph_bytes[p.own] = measured.graph_bytes[LOGGED]
    measured.graph_bytes = {fmt: measured.graph_bytes[fmt] for fmt in (LOGGED, *p.formats)}
    for tokenizer in tokenizers:
        rest = sum(tokenizer.count(t) for t in others)
        logged_tokens = sum(tokenizer.count(text[s.start : s.end]) for s in spans)
        before, _, after = replaced(text, spans, "")
        around = Around(tokenizer, before, after)
        rows = {
            LOGGED: (
                logged_tokens,
                (tokenizer.count(text) if len(spans) > 1 else around.count(logged_graph, logged_tokens)) + rest,
            )
        }
        for fmt, graph_text in p.graph_texts.items():
            graph_tokens = tokenizer.count(graph_text)
            rows[fmt] = (graph_tokens, around.count(graph_text, graph_tokens) + rest)
        if p.own is not None:
            rows[p.own] = rows[LOGGED]
        measured.tokens[tokenizer.name] = {fmt: rows[fmt] for fmt in (LOGGED, *p.formats)}
    if keep_texts:
        measured.texts = {LOGGED: text, **{fmt: p.prompt_text(fmt) for fmt in p.formats}}
    return measured


# -----------------------------------------------------------------------------
# the file streamed: chunks of lines measured on both cores (forked workers), results in the file's order

CHUNK = 32  # lines a worker measures at a time
IN_FLIGHT = 4  # chunks under way at once: memory holds at most these
_WORK: tuple[list[str], list[Tokenizer]] = ([], [])  # what forked workers measure with, set before they are forked


def slim(result: Measured | Skipped) -> Measured | Skipped:
    """The result without its logged messages (the prompt texts stay where they were read)."""
    light = replace(result.logged, question=result.logged.question[:400], messages=(), answer=None)
    if isinstance(result, Measured):
        result.logged = light
        return result
    return replace(result, logged=light)


def measure_chunk(
    chunk: list[tuple[int, bytes | Unread]], keep: int = 0
) -> list[Measured | Skipped | Unread | NotCall]:
    """A chunk of raw lines parsed and measured (a line may hold several requests: a trace's LLM calls; a blank line
    none); the first keep measured ones keep their alternatives' texts."""
    formats, tokenizers = _WORK
    out: list[Measured | Skipped | Unread | NotCall] = []
    for line_no, raw in chunk:
        for item in [raw] if isinstance(raw, Unread) else parse_line(line_no, raw):
            if isinstance(item, (Unread, NotCall)):
                out.append(item)
                continue
            prepared = prepare_logged(item, formats)  # read back exactly, then measured in every format
            result = prepared if isinstance(prepared, Skipped) else count_prepared(prepared, tokenizers, keep > 0)
            keep -= isinstance(result, Measured)
            out.append(slim(result))
    return out


def measured_lines(
    path: Path, formats: list[str], tokenizers: list[Tokenizer], keep: int, workers: int
) -> Iterator[Measured | Skipped | Unread | NotCall]:
    """Each line of the file measured, in the file's order: in this process, or in chunks on forked workers (where the
    platform forks and workers > 1); the first chunk here, keeping the texts of its first keep measured prompts."""
    global _WORK
    _WORK = (formats, tokenizers)
    chunks = _chunks(raw_lines(path))
    first = next(chunks, None)
    if first is None:
        return
    yield from measure_chunk(first, keep)
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        for chunk in chunks:
            yield from measure_chunk(chunk)
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
        pending: deque[Future[list[Measured | Skipped | Unread | NotCall]]] = deque()
        for chunk in chunks:
            pending.append(pool.submit(measure_chunk, chunk))
            if len(pending) >= IN_FLIGHT * workers:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()


def _chunks(lines: Iterator[tuple[int, bytes | Unread]]) -> Iterator[list[tuple[int, bytes | Unread]]]:
    chunk = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
