"""report.html: one page for what each format costs and what the model did with it (cells.csv is results.py's).

In: the measurement, the run's tokenizers, and what the results keep for the page (the scored cells, the verdicts,
the chart). Out: one file that opens from file:// with no network: plain HTML, CSS and a little JavaScript
(report_template.html). Every value from a graph, a question or an answer travels in one JSON block that the page reads
with JSON.parse and shows as text, never markup. The same inputs give the same bytes.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ._article import serialized
from .encodings import HFEncoding
from .matrix import hop_bucket
from .measure import token_cut
from .solver import value_text

if TYPE_CHECKING:
    from ._article import Graph, Tokenizer
    from .artifacts import Outputs
    from .matrix import Plan
    from .measure import Item, Measurement, SizeRow


# tokens per format and encoding whose boundaries the page draws (and splits); the counts cover all
REPORT_TOKENS_SHOWN = 4_000
REPORT_CELLS = 10_000  # model-run cells the page holds (their answers cut at REPORT_ANSWER_CHARS)
REPORT_ANSWER_CHARS = 4_000
PROMPT_HEAD, PROMPT_TAIL = (
    300,
    40,
)  # lines the page draws of a long prompt: its first and its last, the count of the rest
# bytes that continue a character: deleted, a token's bytes count its characters
UTF8_CONTINUATION = bytes(range(0x80, 0xC0))


def token_ends(tokenizer: Tokenizer, text: str) -> list[int]:
    """Where each token of the text ends, as a character offset: text[ends[k-1]:ends[k]] is token k, the pieces
    concatenating to the text. A token that ends inside a character (a byte-level token of part of 'ж') takes the whole
    character, and the next token may be empty. Each token's characters are its bytes less continuation bytes, counted
    in C (bytes.translate), so a million tokens cost a second, not a minute."""
    encoding = tokenizer.encoding
    if isinstance(encoding, HFEncoding):
        ends, last = [], 0
        for _, end in encoding.tokenizer.encode(text, add_special_tokens=False).offsets:
            last = max(last, min(end, len(text)))
            ends.append(last)
    else:
        ids = encoding.encode_ordinary(text)
        ends = list(itertools.accumulate(map(token_chars(tokenizer, ids).__getitem__, ids)))
    if ends:
        ends[-1] = len(text)
    return ends


_TOKEN_CHARS: dict[str, dict[int, int]] = {}  # tokenizer name -> token id -> the characters it starts


def token_chars(tokenizer: Tokenizer, ids: list[int]) -> dict[int, int]:
    """Token id -> the characters it starts (its bytes less UTF-8 continuation bytes), for these ids (each decoded once
    per tokenizer, not the whole vocabulary): a token's share of a text is the same wherever it stands."""
    table = _TOKEN_CHARS.setdefault(tokenizer.name, {})
    decode = cast(
        Any, tokenizer.encoding
    ).decode_single_token_bytes  # tiktoken's: token_ends reads HF tokenizers' offsets
    for i in set(ids).difference(table):
        table[i] = len(decode(i).translate(None, UTF8_CONTINUATION))
    return table


def shown_start(tokenizer: Tokenizer, text: str) -> tuple[str, list[int]]:
    """The start of text that holds its first REPORT_TOKENS_SHOWN tokens (all of a shorter text), and its token ends:
    the whole text's boundaries there, found without tokenizing the rest (measure.token_cut), so that the page costs the
    same for 15 edges and 150,000."""
    size = 8 * REPORT_TOKENS_SHOWN
    while size < len(text) and tokenizer.splits:
        cut = token_cut(tokenizer, text, size)
        if cut is not None:
            ends = token_ends(tokenizer, text[:cut])
            if len(ends) >= REPORT_TOKENS_SHOWN:
                return text[:cut], ends
        size *= 2
    return text, token_ends(tokenizer, text)


def value_words(graph: Graph) -> set[str]:
    """The words (runs of letters, digits and _) of a graph's ids, names, types, relations, edge ids and property
    values: what a format must say, against the syntax it says it in."""
    # each distinct text once
    texts = {t for n in graph.nodes for t in n} | {t for e in graph.edges for t in e} | set(graph.edge_ids)
    texts |= {value_text(v) for props in (*graph.node_props, *graph.edge_props) for _, v in props}
    return set(re.findall(r"\w+", "\n".join(texts)))


def syntax_split(text: str, ends: list[int], words: set[str]) -> dict[str, Any]:
    """Tokens spent on names and values against syntax (keys, quotes, delimiters, whitespace, indentation), counted from
    the token boundaries: a character is a name or value when it is in a word of value_words, and a token counts as
    one when at least half of its characters are."""
    table = {ord(c): 1 if re.match(r"\w", c) else 0 for c in set(text)}
    mask = bytearray(text.translate(table), "latin-1")  # 1 for each word character, in a C loop
    others = set(re.findall(r"\w+", text)) - words  # the few words of no value: keys, headers
    if others:
        for match in re.finditer(r"\w+", text):
            if match.group() in others:
                mask[match.start() : match.end()] = bytes(match.end() - match.start())
    count = bytes(mask).count
    content = sum(1 for a, b in zip([0, *ends], ends) if b > a and 2 * count(1, a, b) >= b - a)
    return {"tokens": len(ends), "names_and_values": content, "syntax": len(ends) - content}


def _size_groups(rows: list[SizeRow], baseline: str) -> list[dict[str, Any]]:
    """The size table per encoding, size, ids, permutation and mode: graph tokens, prompt tokens min and max, bytes,
    overflow, and the prompt tokens against the baseline's (mean over the group's questions)."""
    groups: dict[tuple[str, str, str, int, str], dict[str, list[SizeRow]]] = {}
    for r in rows:
        key = (r.encoding, r.size, r.ids, r.permutation, r.mode)
        groups.setdefault(key, {}).setdefault(r.format, []).append(r)
    out = []
    for key, by_format in groups.items():
        base = by_format.get(baseline) or next(iter(by_format.values()))
        base_mean = statistics.fmean(r.prompt_tokens for r in base)
        table = []
        for fmt, members in by_format.items():
            mean = statistics.fmean(r.prompt_tokens for r in members)
            table.append(
                {
                    "format": fmt,
                    "graph_tokens": round(statistics.fmean(r.graph_tokens for r in members), 1),
                    "prompt_min": min(r.prompt_tokens for r in members),
                    "prompt_max": max(r.prompt_tokens for r in members),
                    "bytes": round(statistics.fmean(r.bytes for r in members), 1),
                    "overflow": sum(r.overflow for r in members),
                    "prompts": len(members),
                    "vs_baseline": round(mean / base_mean - 1, 4) if base_mean else None,
                }
            )
        out.append({"group": f"{key[0]} · {key[1]} · {key[2]} · permutation {key[3]} · mode {key[4]}", "rows": table})
    return out


def _first_items(measured: Measurement) -> dict[str, Item]:
    """Per format, the first item of the first variant, permutation 0, mode A: the graph the token view shows."""
    first: dict[str, Item] = {}
    for item in measured.items:
        r = item.row
        if (
            item.variant is measured.variants[0]
            and r.permutation == 0
            and r.mode == "A"
            and r.encoding == measured.rows[0].encoding
        ):
            first.setdefault(r.format, item)
    return first


def _token_views(measured: Measurement, plan: Plan, texts: ReportTexts) -> tuple[list[dict[str, Any]], list[str]]:
    """Per format and encoding, the first graph's token boundaries and the split of those tokens into names and values
    against syntax: all of them, or the first REPORT_TOKENS_SHOWN of a larger graph (shown_start)."""
    first, views, notes = _first_items(measured), [], []
    base = measured.variants[0]
    graph_tokens = {
        (r.format, r.encoding, r.context): r.graph_tokens
        for r in measured.rows
        if r.permutation == 0 and r.mode == "A" and r.size == base.size and r.ids == base.ids
    }
    words: dict[tuple[str, int], set[str]] = {}
    for fmt, item in first.items():
        text = texts.get(item)
        key = (item.context.id, item.row.edges_included)
        if key not in words:
            words[key] = value_words(item.shown())
        for tokenizer in plan.tokenizers:
            start, ends = shown_start(tokenizer, text)
            shown, total = ends[:REPORT_TOKENS_SHOWN], graph_tokens[fmt, tokenizer.name, item.context.id]
            if total > len(shown):
                notes.append(
                    f"{fmt} ({tokenizer.name}): the first {len(shown):,} of its {total:,} graph tokens are drawn and "
                    "split "
                    "into names and values against syntax"
                )
            views.append(
                {
                    "format": fmt,
                    "encoding": tokenizer.name,
                    "pieces": [text[a:b] for a, b in zip([0, *shown], shown)],
                    **syntax_split(start, shown, words[key]),
                    "graph_tokens": total,
                    "context": item.context.id or "",
                    "variant": item.variant.name,
                }
            )
    return views, notes


class ReportTexts:
    """Each graph text the page shows, serialized once: key (format, context, edges shown) -> text; those the
    measurement kept (Measurement.shown) are not serialized again."""

    def __init__(self, kept: dict[str, str]) -> None:
        self.texts: dict[str, str] = dict(kept)

    @staticmethod
    def key(item: Item) -> str:
        return f"{item.row.format}|{item.context.id}|{item.row.edges_included}"

    def get(self, item: Item) -> str:
        key = self.key(item)
        if key not in self.texts:
            self.texts[key] = serialized(item.row.format, item.shown())
        return self.texts[key]


def drawn_lines(text: str) -> str | dict[str, Any]:
    """What the page holds of a graph (or a whole prompt) text: all of it, or of a long one only what a prompt of it
    draws (PROMPT_HEAD first and PROMPT_TAIL last lines; whatever precedes or follows the graph in the prompt takes
    lines the graph then does not need) and how many newlines it has: {"start", "end", "newlines"}."""
    newlines = text.count("\n")
    if newlines <= PROMPT_HEAD + PROMPT_TAIL:
        return text
    head = -1
    for _ in range(PROMPT_HEAD):
        head = text.index("\n", head + 1)
    tail = len(text)
    for _ in range(PROMPT_TAIL):
        tail = text.rindex("\n", 0, tail)
    return {"start": text[: head + 1], "end": text[tail + 1 :], "newlines": newlines}


def _prompt_views(measured: Measurement, texts: ReportTexts, input_ids: set[str]) -> tuple[dict[str, Any], list[str]]:
    """Per question, each format's prompt as head + graph + middle + question + end (graphs stored once each), the first
    encoding's token count, and the ids of distractor nodes (on no node of the input graph)."""
    encoding = measured.rows[0].encoding
    graphs: dict[str, str | dict[str, Any]] = {}
    questions: list[dict[str, Any]] = []
    cells: dict[str, dict[str, dict[str, Any]]] = {}  # question id -> format -> its prompt on the page
    heads: dict[str, list[str]] = {}
    base = measured.variants[0]
    for item in measured.items:
        r = item.row
        if item.variant is not base or r.permutation != 0 or r.mode != "A" or r.encoding != encoding:
            continue
        fmt = r.format
        around = item.template.around(fmt)
        q = item.question
        if q.id not in cells:
            cells[q.id] = {}
            questions.append(
                {
                    "id": q.id,
                    "text": q.question,
                    "hops": hop_bucket(q),
                    "context": item.context.id,
                    "cells": cells[q.id],
                }
            )
        if around is None:  # a template that puts the question before the graph: the prompt is stored whole
            key = f"{fmt}|{q.id}|whole"
            graphs[key] = drawn_lines(item.prompt())
            cells[q.id][fmt] = {"graph": key, "tokens": r.prompt_tokens, "whole": True}
            continue
        heads.setdefault(fmt, list(around))
        key = texts.key(item)
        if key not in graphs:
            graphs[key] = drawn_lines(texts.get(item))
        cells[q.id][fmt] = {"graph": key, "tokens": r.prompt_tokens}
    notes = []
    if any(not isinstance(g, str) for g in graphs.values()):
        notes.append(
            f"a prompt longer than {PROMPT_HEAD + PROMPT_TAIL + 1} lines shows its first {PROMPT_HEAD} and its last "
            f"{PROMPT_TAIL} lines (the prompt files and the token counts hold it all)"
        )
    shown_ids = {n.id for c in base.contexts for n in c.graph.nodes}
    # renamed ids are all new: nothing to tell
    distractors = sorted(shown_ids - input_ids) if base.ids == "original" else []
    return {
        "heads": heads,
        "graphs": graphs,
        "head": PROMPT_HEAD,
        "tail": PROMPT_TAIL,
        "questions": questions,
        "encoding": encoding,
        "distractors": distractors,
        "edge_ids": bool(base.contexts[0].graph.edge_ids),
    }, notes


def report_html(measured: Measurement, plan: Plan, staging: Outputs, title: str, input_ids: set[str]) -> bytes:
    """report.html of a run: sizes, where the tokens go, one question in every format, and the model run if any.
    input_ids: the input graph's node ids; a shown node outside them is a distractor."""
    model = staging.report.get("model")
    baseline = (model or {}).get("baseline_format") or plan.formats[0]  # the gate's, when a model run has one
    texts = ReportTexts(measured.shown)
    tokens, notes = _token_views(measured, plan, texts)
    prompts, more = _prompt_views(measured, texts, input_ids)
    data = {
        "kind": "run",
        "title": title,
        "baseline": baseline,
        "sizes": _size_groups(measured.rows, baseline),
        "tokens": tokens,
        "prompts": prompts,
        "model": model,
        "notes": notes + more + (model or {}).get("notes", []),
    }
    return render_report(data, staging.report.get("svg", ""))


def render_report(data: dict[str, Any], svg: str = "") -> bytes:
    """The page: report_template.html with the data as JSON ('<' written \\u003c, so no text in it can end the script
    block) and our own SVG chart."""
    payload = (
        json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        .replace("<", "\\u003c")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
    compare = data["kind"] == "compare"
    fill = {
        "TITLE": html_text(data["title"]),
        "SVG": "" if compare else svg,
        "COMPARE_SVG": svg if compare else "",
        "DATA": payload,
    }
    # one pass: no value is read again
    page = re.sub(r"@@(TITLE|SVG|COMPARE_SVG|DATA)@@", lambda m: fill[m.group(1)], report_template())
    return page.encode("utf-8")


@functools.cache
def report_template() -> str:
    """The page's HTML, CSS and JavaScript, with @@TITLE@@, @@SVG@@, @@COMPARE_SVG@@ and @@DATA@@ to fill: a file of
    its own (package data), so that it reads and lints as what it is."""
    return (Path(__file__).parent / "report_template.html").read_text(encoding="utf-8")


def html_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
