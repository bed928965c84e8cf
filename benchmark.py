"""The article's benchmark: one graph in five formats, proven to round-trip, with its prompts and token counts.

    $ python benchmark.py --encoding o200k_base

reads data/graph.json and data/questions.json, writes the graph in the article's five formats (json, jsonl, tsv,
edge_list, dsl), proves that each one parses back to the same graph (the round-trip check), builds one prompt per
format and question, counts tokens with tiktoken and writes, into outputs/:

    graph.<format>.txt          the serialized graph (NFC, no trailing newline)
    prompt.<format>.<qid>.txt   the full prompt for one question
    size_report.json            one row per format and question: bytes, graph and prompt tokens
    manifest.json               how the run was made: versions, flags, SHA-256 of every input and output

This is the measurement of the article "Как формат графа влияет на стоимость и точность GraphRAG" (sections 3-8).
Its data, prompt template and the bytes of its five formats are protocol: on the article's data the graph and
prompt files are byte-identical to what its script writes. This file needs the standard library and tiktoken only,
and runs alone when copied with data/.

Beside it, the package graphrag_format_benchmark/ does everything else the tool does: other graph files and
formats, the control solver and the leakage checks, contexts, distractors, pseudonyms, generated questions, model
runs and their scoring, the acceptance gate, the reports. When the package is there, main() hands the command line
to it (the one place this file knows it), and the same run also runs those checks and writes report.html:

    $ python benchmark.py --model solver          # any flag beyond --encoding, --graph, --questions, --out

The code is ours, and stricter than the article's script where that was loose (docs/architecture.md says how):
delimiters in values are escaped or quoted, so any graph the validator accepts round-trips; every problem is reported
at once before the first token is counted; tokens are counted as an API sees the text (encode_ordinary); properties,
edge ids, several answers and conditions on hops are carried by every format.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import csv
import difflib
import functools
import hashlib
import importlib.util
import io
import itertools
import json
import math
import operator
import os
import platform
import re
import stat
import subprocess
import sys
import tempfile
import threading
import types
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, NamedTuple, NoReturn, Protocol, cast

try:
    import tiktoken as tiktoken  # "as": the package imports it from here (mypy: an explicit re-export)
except ImportError:  # main() says how to install it, instead of a traceback
    tiktoken = None  # type: ignore[assignment]


# -----------------------------------------------------------------------------
# constants and the prompt templates

ROOT = Path(__file__).resolve().parent
PACKAGE = "graphrag_format_benchmark"  # beside this file (or installed): it runs every command line (main)
# A clone has data/ beside this file; `pip install .` ships this file inside the package as _article.py (no top-level
# module of its own) beside data/ (the article's graph and questions, the shipped BPE files), and writes outputs/ in the
# working folder. In a clone the package's _article.py is a link to this file: one module under both names.
INSTALLED = ROOT.name == PACKAGE
DATA, OUTPUTS = ROOT / "data", Path("outputs") if INSTALLED else ROOT / "outputs"
if not INSTALLED and __name__ in ("benchmark", f"{PACKAGE}._article"):
    sys.modules.setdefault("benchmark", sys.modules[__name__]), sys.modules.setdefault(f"{PACKAGE}._article", sys.modules[__name__])
TIKTOKEN_DIR = DATA / "tiktoken"  # shipped BPE files, named as tiktoken's cache names them
MANIFEST_SCHEMA_VERSION = 1
NORMALIZATION: Final = "NFC"
ABSTAIN = "INSUFFICIENT_DATA"  # the abstention label; every prompt names it, so it leaks nothing

PROMPT_SCOPE = (
    "prompt_tokens: the whole prompt text (instruction, answer schema, graph, question) as one "
    "user message; no system message; chat framing tokens not counted"
)

# The article's prompt, byte for byte (section 6, build_prompt); the package adds an English rendering (--prompt en).
# Braces are literal; the three fields are filled in one pass (see Template), so a graph or question that contains
# "{question}" stays as it is.
PROMPT_TEMPLATES = {
    "ru": """Ты выполняешь точный обход направленного графа.

Формат графа: {format_name}.
Используй только явно записанные рёбра.
Не обращай направление связи.
Не добавляй отсутствующие факты.
Если полного пути нет, верни INSUFFICIENT_DATA.

Верни только JSON:
{
  "answer": "краткий ответ или INSUFFICIENT_DATA",
  "path": [индексы рёбер по порядку],
  "evidence": [
    {"source":"id","relation":"TYPE","target":"id"}
  ]
}

ГРАФ
{graph}

ВОПРОС
{question}
""",
}

TEMPLATE_FIELDS = ("format_name", "graph", "question")


class BenchmarkError(ValueError):
    """Bad input or a failed check; main() prints the message on one line and exits with code 2."""


# -----------------------------------------------------------------------------
# data types


class Node(NamedTuple):
    id: str
    name: str
    type: str


class Edge(NamedTuple):
    source: str
    relation: str
    target: str


# A record's properties: (key, value) pairs sorted by key, each value a str, int, float or bool (a date is its
# ISO string): (("description", "A city on the Volga"), ("founded", 1005)). Ordered pairs, not a dict, so that
# a record with its properties stays hashable and comparable.
Props = tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Graph:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]  # order matters: question paths index into it
    edge_ids: tuple[str, ...] = ()  # with --edge-ids: a stable id per edge ('e1', ...), shown in every format
    node_props: tuple[Props, ...] = ()  # one Props per node, or () when no node has any
    edge_props: tuple[Props, ...] = ()  # one Props per edge, or () when no edge has any

    def __post_init__(self) -> None:
        for name in ("node_props", "edge_props"):  # one form for "no properties": () whatever a builder passed
            props = getattr(self, name)
            if props and not any(props):
                object.__setattr__(self, name, ())

    def pick(self, positions: Iterable[int]) -> Graph:
        """The edges at positions, in that order, with their ids and properties, and every node: g.pick([2, 0])."""
        positions = positions if isinstance(positions, (list, tuple, range)) else list(positions)
        ids = tuple(self.edge_ids[i] for i in positions) if self.edge_ids else ()
        props = tuple(self.edge_props[i] for i in positions) if self.edge_props else ()
        return Graph(self.nodes, tuple(self.edges[i] for i in positions), ids, self.node_props, props)

    def nodes_with_props(self) -> Iterator[tuple[Node, Props]]:
        return zip(self.nodes, self.node_props or itertools.repeat(()))

    def edges_with_props(self) -> Iterator[tuple[Edge, Props]]:
        return zip(self.edges, self.edge_props or itertools.repeat(()))

    @property
    def has_props(self) -> bool:
        return bool(self.node_props or self.edge_props)

    @functools.cached_property
    def names(self) -> dict[str, str]:
        """node id -> name."""
        return {n.id: n.name for n in self.nodes}

    @functools.cached_property
    def props_by_node(self) -> dict[str, Props]:
        """node id -> its properties (only nodes that have some)."""
        return {n.id: p for n, p in zip(self.nodes, self.node_props) if p}


class Condition(NamedTuple):
    """A hop follows only edges whose property key compares to value by op: ('since', '<=', 2010)."""

    key: str
    op: str  # one of CONDITION_OPS
    value: object  # a str, int, float or bool; a string compares with strings (ISO dates in order), a number with numbers


class Hop(NamedTuple):
    relation: str
    direction: str  # "out" follows source -> target; "in" follows an existing edge back from target to source
    where: tuple[Condition, ...] = ()  # every condition holds on the edge followed


class Ask(NamedTuple):
    """What a question asks for at the end of its walk instead of the node: a property of the node reached
    (of_="node") or of the last edge followed (of_="edge")."""

    of_: str
    key: str


@dataclass(frozen=True)
class Query:
    start: str  # node id
    hops: tuple[Hop, ...]
    ask: Ask | None = None  # None: the answer is the node reached


class GivenContext(NamedTuple):
    """A question's own subgraph, as a retriever wrote it: edges (indices, in the order given) and nodes (ids, idle ones
    included) of the input graph; or a graph of its own, which its paths, answer ids and query then refer to."""

    edges: tuple[int, ...] = ()
    nodes: tuple[str, ...] = ()
    graph: Graph | None = None


class GraphScope(NamedTuple):
    """What a question's paths, answer ids and query may refer to: edges by index or by their "id" in the file."""

    n_edges: int
    node_ids: set[str]
    edge_names: dict[str, int]  # an edge's "id" in the file -> its index


# A question's "context" -> (GivenContext, the scope its paths refer to when it brings a graph of its own, else None):
# read_context(value, where, scope, not_nfc). The package reads contexts (inputs.read_given_context).
ReadContext = Callable[[object, str, GraphScope, list[str]], tuple[GivenContext, GraphScope | None]]


@dataclass(frozen=True)
class Question:
    id: str  # safe as part of a file name
    question: str  # the text put into the prompt
    answers: tuple[str, ...]  # every acceptable short answer; (INSUFFICIENT_DATA,) for an abstention question
    paths: tuple[tuple[int, ...], ...]  # gold paths as indices into Graph.edges (of the graph variant it belongs to)
    insufficient: bool  # True: the right answer is to abstain
    answer_ids: tuple[str, ...] = ()  # nodes the gold paths end at; () for an abstention question or when not given
    query: Query | None = None  # the machine-readable question the control solver answers
    context: GivenContext | None = None  # the subgraph its prompt shows, as the questions file gives it

    def moved(self, position: Mapping[int, int] | Sequence[int]) -> Question:
        """The same question with every gold path re-indexed: edge i is now at position[i]."""
        return replace(self, paths=tuple(tuple(position[i] for i in p) for p in self.paths))

    @property
    def several(self) -> bool:
        """More than one acceptable answer or gold path."""
        return len(self.paths) > 1 or len(self.answers) > 1 or len(self.answer_ids) > 1


# -----------------------------------------------------------------------------
# helpers: paths in messages, hashes, JSON bytes


def display(path: Path) -> str:
    """Path as a user reads it in a message: relative to the current folder when it is inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):  # outside the folder, or a symlink that loops
        return str(path)


def sha256_hex(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def json_bytes(value: object) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


# -----------------------------------------------------------------------------
# inputs: graph.json and questions.json, read and checked
#
# In: graph.json, questions.json. Out: RunInputs, or every problem found at once: each bad record adds a line to
# Problems, and the end of the reading (or the package's preflight) decides whether the run stops (exit 2, nothing
# written) or, with --skip-invalid-questions, drops the questions at fault.

MAX_SHOWN_PROBLEMS = 50  # lines printed; the rest are counted


class Problems:
    """Every problem found in the inputs, one line each; a question's problems carry its key so it can be skipped."""

    def __init__(self) -> None:
        self.lines: list[tuple[str | None, str]] = []  # (question key or None for the whole run, message)
        self.not_nfc: list[str] = []  # where a string was normalized to NFC, in reading order

    def add(self, message: str, question: str | None = None) -> None:
        self.lines.append((question, message))

    def questions(self) -> dict[str, list[str]]:
        """question key -> its problems, in the order found."""
        out: dict[str, list[str]] = {}
        for key, message in self.lines:
            if key is not None:
                out.setdefault(key, []).append(message)
        return out

    def fatal(self) -> list[str]:
        return [message for key, message in self.lines if key is None]


class InputProblems(BenchmarkError):
    """Several problems at once; main() prints one line each."""

    def __init__(self, lines: list[str], hint: str) -> None:
        grouped = grouped_problems(lines)
        shown = grouped[:MAX_SHOWN_PROBLEMS]
        if len(grouped) > len(shown):
            shown.append(f"... and {len(grouped) - len(shown)} more problems")
        if len(lines) > 1:
            shown.append(f"{len(lines)} problems found; nothing was written{hint}")
        self.lines = shown
        super().__init__("\n".join(shown))


_POSITION = re.compile(r"\b\w+\[\d+\](?:\.\w+(?:\[\d+\])?)*|\bline \d+")  # where a problem is: nodes[12], edges[3].source, line 40
GROUPED_FROM = 4  # the same problem at this many places or more is said once


def grouped_problems(lines: list[str]) -> list[str]:
    """The same problem at GROUPED_FROM places or more said once, in the order first found: "graph.json: nodes[0] has no
    'type'" 10,318 times -> "graph.json: nodes[0], nodes[1], nodes[2] and 10,315 more (10,318 in all) have no 'type'"."""
    groups: dict[str, list[tuple[str, re.Match[str] | None]]] = {}
    for line in lines:
        groups.setdefault(_POSITION.sub("#", line), []).append((line, _POSITION.search(line)))
    out: list[str] = []
    for members in groups.values():
        line, first = members[0]
        if len(members) < GROUPED_FROM or first is None:
            out.extend(m[0] for m in members)
            continue
        places = ", ".join(m.group(0) for _, m in members[:3] if m is not None)
        more = f" and {len(members) - 3:,} more ({len(members):,} in all)"
        rest = line[first.end():].replace(" has ", " have ", 1).replace(" is ", " are ", 1)
        out.append(line[:first.start()] + places + more + rest)
    return out


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        key = next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise BenchmarkError(f"key {key!r} appears twice in one object")
    return result


MAX_INPUT_BYTES = 2_000_000_000  # an input file past this is refused before it fills the memory


def read_input(path: Path, flag: str) -> bytes:
    """The bytes of an input file: a regular file (never a device, FIFO or folder, which could read forever or
    hang) of at most MAX_INPUT_BYTES."""
    where = display(path)
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as f:  # a FIFO must not block the open
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise BenchmarkError(f"{where} is not a regular file; pass a file with {flag}")
            if info.st_size > MAX_INPUT_BYTES:
                raise BenchmarkError(f"{where} takes {info.st_size:,} bytes, over the {MAX_INPUT_BYTES:,} this tool reads; pass a smaller file")
            return f.read(MAX_INPUT_BYTES + 1)
    except IsADirectoryError:
        store = " (a framework's store folder is read by the package graphrag_format_benchmark, beside this script)" if flag == "--graph" else ""
        raise BenchmarkError(f"{where} is a folder; pass a file with {flag}{store}") from None
    except FileNotFoundError:
        store = (", or a framework's store folder (LightRAG's rag_storage, GraphRAG's output, LlamaIndex's storage)"
                 if flag == "--graph" else "")
        raise BenchmarkError(f"{where}: no such file or folder; pass a readable file{store} with {flag}") from None
    except OSError as e:
        raise BenchmarkError(f"{where}: cannot read it ({e.strerror}); pass a readable file with {flag}") from None


def read_text(path: Path, flag: str) -> tuple[str, bytes]:
    """An input file's text (UTF-8, a byte order mark dropped) and its raw bytes, for the manifest's SHA-256."""
    raw = read_input(path, flag)
    try:
        return raw.decode("utf-8-sig"), raw
    except UnicodeDecodeError as e:
        raise BenchmarkError(f"{display(path)}: the byte at offset {e.start} is not UTF-8; save the file as UTF-8") from None


def read_json(path: Path, flag: str) -> tuple[object, bytes]:
    """Parsed JSON and the raw bytes (for the manifest's SHA-256) of an input file."""
    where = display(path)
    text, raw = read_text(path, flag)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys), raw
    except json.JSONDecodeError as e:
        raise BenchmarkError(f"{where}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}; fix the file") from None
    except BenchmarkError as e:
        raise BenchmarkError(f"{where}: {e}; keep one value per key") from None
    except RecursionError:
        raise BenchmarkError(f"{where}: JSON nested too deeply; fix the file") from None
    except ValueError as e:  # an integer literal of thousands of digits, which Python refuses to convert
        raise BenchmarkError(f"{where}: {str(e).split(';')[0]}; fix the file") from None


def check_text(value: object, where: str, not_nfc: list[str] | None = None) -> str:
    """A string that every format can carry exactly: UTF-8 encodable, in NFC (normalized here, and noted
    in not_nfc, since the article's serialization is NFC; refused when there is no list to note it in)."""
    if not isinstance(value, str):
        shown = json.dumps(value, ensure_ascii=False)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise BenchmarkError(f"{where} is {shown}, expected a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise BenchmarkError(f"{where} contains the lone surrogate U+{ord(value[e.start]):04X}; fix the string") from None
    if not unicodedata.is_normalized(NORMALIZATION, value):
        if not_nfc is None:
            raise BenchmarkError(f"{where} is not in Unicode {NORMALIZATION} form; normalize it to {NORMALIZATION}")
        not_nfc.append(f"{where} {value!r}")
        value = unicodedata.normalize(NORMALIZATION, value)
    return value


def _record(item: object, where: str, fields: tuple[str, ...], kind: str, not_nfc: list[str] | None = None) -> tuple[str, ...]:
    if not isinstance(item, dict):
        raise BenchmarkError(f"{where} is not a JSON object; each {kind} is {{{', '.join(map(repr, fields))}}}")
    for name in fields:
        if name not in item:
            untyped = "; an untyped graph: give each node \"type\": \"entity\", as the TSV reader does" if name == "type" else ""
            raise BenchmarkError(f"{where} has no {name!r}; each {kind} needs string fields {', '.join(fields)}{untyped}")
    return tuple(check_text(item[name], f"{where}.{name}", not_nfc) for name in fields)


def validate_graph(data: object, src: str, problems: Problems) -> Graph:
    """Graph from parsed graph.json: {"nodes": [{id, name, type, ...}], "edges": [{source, relation, target, ...}]};
    other fields are properties (read_props), an edge's "id" names it. Bad records become problems and are left out."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list) or not isinstance(data.get("edges"), list):
        raise BenchmarkError(f'{src}: expected a JSON object with "nodes" and "edges" lists')
    graph = _sound_graph(data, src)
    return graph if graph is not None else _checked_graph(data, src, problems)


NODE_FIELDS = frozenset(Node._fields)
EDGE_FIELDS = frozenset((*Edge._fields, "id"))  # an edge's id names it in the file; it is not shown


def _sound_graph(data: dict[str, Any], src: str) -> Graph | None:
    """validate_graph in C loops over all records at once, or None when anything may be wrong (for _checked_graph to
    name). Strings are checked joined by newlines: a newline composes with nothing, so the text is NFC and encodes
    exactly when every string does. Properties, when records have any, are read record by record."""
    node_items, edge_items = data["nodes"], data["edges"]
    try:
        nodes = tuple(map(functools.partial(tuple.__new__, Node), map(operator.itemgetter(*Node._fields), node_items)))
        edges = tuple(map(functools.partial(tuple.__new__, Edge), map(operator.itemgetter(*Edge._fields), edge_items)))
        node_extra = set(itertools.chain.from_iterable(map(dict.keys, node_items))) - NODE_FIELDS
        edge_extra = set(itertools.chain.from_iterable(map(dict.keys, edge_items))) - EDGE_FIELDS
    except (TypeError, KeyError):  # a record that is not an object, or lacks a field
        return None
    values = list(itertools.chain(itertools.chain.from_iterable(nodes), itertools.chain.from_iterable(edges)))
    if not set(map(type, values)) <= {str}:
        return None
    text = "\n".join(values)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    ids = set(map(operator.attrgetter("id"), nodes))
    if (not unicodedata.is_normalized(NORMALIZATION, text) or len(ids) != len(nodes)
            or not ids.issuperset(map(operator.attrgetter("source"), edges)) or not ids.issuperset(map(operator.attrgetter("target"), edges))):
        return None
    node_props: tuple[Props, ...] = ()
    edge_props: tuple[Props, ...] = ()
    nulls: list[str] = []
    try:
        if node_extra:
            node_props = tuple(read_props(item, NODE_FIELDS, "", None, nulls) for item in node_items)
        if edge_extra:
            edge_props = tuple(read_props(item, EDGE_FIELDS, "", None, nulls) for item in edge_items)
    except BenchmarkError:
        return None
    _warn_nulls(src, nulls)
    return Graph(nodes, edges, (), node_props, edge_props)


def _checked_graph(data: dict[str, Any], src: str, problems: Problems) -> Graph:
    """validate_graph record by record: each problem named, bad records left out."""
    nodes: list[Node] = []
    node_props: list[Props] = []
    first_index: dict[str, int] = {}  # node id -> index of the node that defines it
    nulls: list[str] = []
    for i, item in enumerate(data["nodes"]):
        where = f"{src}: nodes[{i}]"
        try:
            node = Node(*_record(item, where, Node._fields, "node", problems.not_nfc))
            if node.id in first_index:
                j = first_index[node.id]
                same = " after NFC normalization" if data["nodes"][j]["id"] != item["id"] else ""
                raise BenchmarkError(f"{src}: nodes[{i}].id {node.id!r} duplicates nodes[{j}]{same}; node ids must be unique")
            props = read_props(item, NODE_FIELDS, where, problems.not_nfc, nulls)
        except BenchmarkError as e:
            problems.add(str(e))
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                first_index.setdefault(item["id"], i)  # known, though broken: its edges add no problem of their own
            continue
        first_index[node.id] = i
        nodes.append(node)
        node_props.append(props)
    edges, edge_props, valid = [], [], {n.id for n in nodes}
    for i, item in enumerate(data["edges"]):
        where = f"{src}: edges[{i}]"
        try:
            edge = Edge(*_record(item, where, Edge._fields, "edge", problems.not_nfc))
            for end in ("source", "target"):
                if getattr(edge, end) not in first_index:
                    raise BenchmarkError(
                        f"{src}: edges[{i}].{end} {getattr(edge, end)!r} is not a node id; add that node or fix the edge"
                    )
            props = read_props(item, EDGE_FIELDS, where, problems.not_nfc, nulls)
        except BenchmarkError as e:
            problems.add(str(e))
            continue
        if {edge.source, edge.target} - valid:
            continue  # touches a broken node, already reported
        edges.append(edge)
        edge_props.append(props)
    _warn_nulls(src, nulls)
    return Graph(tuple(nodes), tuple(edges), (), tuple(node_props), tuple(edge_props))


PROP_KEY = re.compile(r"[^\W\d]\w*(?:[.-]\w+)*")  # letters, digits and '_', with '.' or '-' inside: founded, valid.from
RESERVED_KEYS = frozenset(("kind", "edge_id", "properties"))  # what the formats name their own columns and nesting


def read_props(item: dict[str, Any], fixed: frozenset[str], where: str, not_nfc: list[str] | None, nulls: list[str]) -> Props:
    """The properties of an input record: its fields beyond the fixed ones, and those of a nested "properties" object,
    sorted by key: {"id": "kazan", ..., "founded": 1005, "description": "A city"} -> (("description", "A city"),
    ("founded", 1005)). A null is left out (noted in nulls: no format tells null from absent)."""
    pairs = [(k, v) for k, v in item.items() if k not in fixed and k != "properties"]
    if "properties" in item:
        nested = item["properties"]
        if not isinstance(nested, dict):
            raise BenchmarkError(f"{where}.properties is not an object; give the properties as fields of the record, or as one object")
        twice = next((k for k in nested if k in item), None)
        if twice is not None:
            raise BenchmarkError(f"{where} gives the property {twice!r} both as a field and in properties; keep one")
        pairs += nested.items()
    if not pairs:
        return ()
    props = []
    for key, value in pairs:
        if key in fixed or key in RESERVED_KEYS or not PROP_KEY.fullmatch(key):
            raise BenchmarkError(
                f"{where} has a property named {key!r}, which the formats cannot carry (a property name is letters, digits "
                "and '_', with '.' or '-' inside, and none of id, name, type, source, relation, target, kind, edge_id, "
                "properties); rename it")
        if value is None:
            nulls.append(f"{where}.{key}")
            continue
        props.append((key, check_value(value, f"{where}.{key}", not_nfc)))
    return tuple(sorted(props))


def check_value(value: object, where: str, not_nfc: list[str] | None) -> object:
    """A property value every format can carry: a string (as check_text), a whole or finite number, a boolean."""
    if isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BenchmarkError(f"{where} is {value}; a property number must be finite")
        return value
    if isinstance(value, str):
        return check_text(value, where, not_nfc)
    kind = "a list" if isinstance(value, list) else "an object"
    raise BenchmarkError(f"{where} is {kind}; a property is a string, a number or a boolean (a date as its ISO string): "
                         "join it into one string or split it into several properties")


def _warn_nulls(src: str, nulls: list[str]) -> None:
    if nulls:
        warn(f"{src}: {len(nulls)} null property value(s) left out, as no format tells null from absent (the first: {nulls[0]})")


def edge_names(data: dict[str, Any], src: str, problems: Problems) -> dict[str, int]:
    """An edge's "id" in the file -> its index, for questions and contexts that name edges; each id once."""
    names: dict[str, int] = {}
    for i, item in enumerate(data["edges"]):
        if isinstance(item, dict) and "id" in item:
            name = item["id"]
            if not isinstance(name, str):
                problems.add(f"{src}: edges[{i}].id is not a string; name edges with strings (or leave the id out)")
            elif name in names:
                problems.add(f"{src}: edges[{i}].id {name!r} duplicates edges[{names[name]}]; edge ids must be unique")
            else:
                names[name] = i
    return names


UNSAFE_IN_FILE_NAMES = '/\\:*?"<>|'


def check_question_id(qid: str, where: str) -> None:
    bad = [c for c in qid if c in UNSAFE_IN_FILE_NAMES or unicodedata.category(c) == "Cc"]
    if not qid or bad or ".." in qid or qid.startswith("."):
        reason = f"contains {bad[0]!r}" if bad else "is empty" if not qid else "starts with '.' or contains '..'"
        raise BenchmarkError(
            f"{where}.id {qid!r} {reason}, but it becomes part of a file name (prompt.<format>.<id>.txt); "
            "use letters, digits, '_' and '-'"
        )


def _one_or_many(item: dict[str, Any], where: str, singular: str, plural: str, read: Callable[[object, str], object]) -> list[Any] | None:
    """The values of a field given as singular (one value) or plural (a non-empty list), or None if neither:
    'answer': 'A' -> ['A']; 'answers': ['A', 'B'] -> ['A', 'B']. Both given: they must agree."""
    one = [read(item[singular], f"{where}.{singular}")] if singular in item else None
    many = None
    if plural in item:
        values = item[plural]
        if not isinstance(values, list) or not values:
            raise BenchmarkError(f"{where}.{plural} must be a non-empty list; or give one value as {singular!r}")
        many = [read(v, f"{where}.{plural}[{k}]") for k, v in enumerate(values)]
        if len(set(map(json.dumps, many))) != len(many):
            raise BenchmarkError(f"{where}.{plural} lists a value twice; list each once")
    if one is not None and many is not None and one != many:
        raise BenchmarkError(f"{where} gives both {singular!r} and {plural!r} and they disagree; keep one of them")
    return many if many is not None else one


def validate_questions(data: object, src: str, scope: GraphScope, problems: Problems, read_context: ReadContext | None = None
                       ) -> tuple[Question, ...]:
    """Questions from [{id, question, answer(s), path(s), insufficient, answer_id(s), query, context}]; a question with a
    problem is reported and left out; a context is read by read_context (the package's), and refused without it."""
    if not isinstance(data, list):
        raise BenchmarkError(f"{src}: expected a JSON list of questions")
    if not data:
        problems.add(f"{src}: the list of questions is empty; add at least one, or draw them with --generate-questions N")
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(data):
        where = f"{src}: questions[{i}]"
        key = item.get("id") if isinstance(item, dict) and isinstance(item.get("id"), str) else f"questions[{i}]"
        try:
            q = _question(item, where, scope, problems.not_nfc, read_context)
            if q.id in seen:
                raise BenchmarkError(f"{where}.id {q.id!r} duplicates questions[{seen[q.id]}]; question ids must be unique")
        except BenchmarkError as e:
            problems.add(str(e), key)
            continue
        seen[q.id] = i
        questions.append(q)
    given = [q for q in questions if q.context]
    if given and len(given) < len(questions):
        for q in questions:
            if not q.context:
                problems.add(f"{src}: question {q.id} has no context while {given[0].id} and {len(given) - 1} other(s) have one; "
                             "give every question its context, or none", q.id)
    return tuple(questions)


def _question(item: object, where: str, scope: GraphScope, not_nfc: list[str], read_context: ReadContext | None) -> Question:
    if not isinstance(item, dict):
        raise BenchmarkError(f"{where} is not a JSON object; each question has id, question, answer, path, insufficient")
    for name in ("id", "question"):
        if name not in item:
            raise BenchmarkError(f"{where} has no {name!r}; each question needs id, question, answer, path, insufficient")
    qid, text = check_text(item["id"], f"{where}.id"), check_text(item["question"], f"{where}.question", not_nfc)
    check_question_id(qid, where)
    answers = _one_or_many(item, where, "answer", "answers", lambda v, w: check_text(v, w, not_nfc))
    if answers is None:
        raise BenchmarkError(f"{where} has no 'answer'; give the short answer, or several as 'answers'")
    context = None
    if "context" in item:
        if read_context is None:
            raise BenchmarkError(f"{where}.context: a question's own context is read by the {PACKAGE} package, which is not "
                                 "beside this copy of benchmark.py; leave the contexts out, or add the package")
        context, own = read_context(item["context"], f"{where}.context", scope, not_nfc)
        scope = own or scope  # a context with a graph of its own: the question's paths and ids refer to it
    paths = _one_or_many(item, where, "path", "paths", lambda v, w: read_path(v, w, scope))
    if paths is None:
        raise BenchmarkError(f"{where}.path must be a list of edge indices (integers), e.g. [0, 3, 6]")
    insufficient = item.get("insufficient")
    if type(insufficient) is not bool:
        raise BenchmarkError(f"{where}.insufficient must be true or false")
    if insufficient != (ABSTAIN in answers) or (insufficient and len(answers) > 1):
        raise BenchmarkError(
            f"{where}: answer {_shown(answers)} and insufficient {str(insufficient).lower()} disagree; an abstention "
            f"question has the one answer {ABSTAIN} and insufficient true, any other question neither"
        )
    answer_ids = _answer_ids(item, where, scope.node_ids, insufficient)
    query = validate_query(item["query"], f"{where}.query", scope.node_ids) if "query" in item else None
    if query and not insufficient and not answer_ids:
        raise BenchmarkError(f"{where} has a query but no answer_id; name the node its gold path ends at")
    return Question(qid, text, tuple(answers), tuple(map(tuple, paths)), insufficient, tuple(answer_ids), query, context)


def _shown(values: list[str]) -> str:
    return repr(values[0]) if len(values) == 1 else repr(values)


def read_path(value: object, where: str, scope: GraphScope) -> list[int]:
    """Edge indices from a list of indices or of the edges' ids in the file: [0, 3, 6] or ["e1", "e4", "e7"]."""
    if not isinstance(value, list) or not all(type(x) is int or isinstance(x, str) for x in value):
        raise BenchmarkError(f"{where} must be a list of edge indices (integers) or edge ids, e.g. [0, 3, 6]")
    path = []
    for j, x in enumerate(value):
        if isinstance(x, str):
            if x not in scope.edge_names:
                raise BenchmarkError(f"{where}[{j}] = {x!r} is not the id of an edge of the graph; fix the path")
            x = scope.edge_names[x]
        elif not 0 <= x < scope.n_edges:
            raise BenchmarkError(f"{where}[{j}] = {x} is out of range: the graph has {scope.n_edges} edges, "
                                 f"indices 0..{scope.n_edges - 1}; fix the path")
        path.append(x)
    return path


def _answer_ids(item: dict[str, Any], where: str, node_ids: set[str], insufficient: bool) -> list[str]:
    if insufficient:
        if item.get("answer_id") is not None or item.get("answer_ids"):
            raise BenchmarkError(f"{where}.answer_id must be null: the question is marked insufficient")
        return []
    if item.get("answer_id", 0) is None and "answer_ids" not in item:
        return []

    def read(value: object, at: str) -> str:
        answer_id = check_text(value, at)
        if answer_id not in node_ids:
            raise BenchmarkError(f"{at} {answer_id!r} is not a node id; name the node the gold path ends at")
        return answer_id

    return _one_or_many(item, where, "answer_id", "answer_ids", read) or []


CONDITION_OPS = ("=", "!=", "<", "<=", ">", ">=")


def validate_query(query: object, where: str, node_ids: set[str]) -> Query:
    """Query from {"start": id, "hops": [{"relation": R, "direction": "out" | "in", "where": [conditions]}, ...],
    "ask": {"property": K, "of": "node" | "edge"}}; "where" and "ask" are optional. A condition is
    {"property": K, "op": "<=", "value": 2010}: the hop follows only edges whose property K compares so."""
    if not isinstance(query, dict) or not isinstance(query.get("hops"), list) or not query["hops"]:
        raise BenchmarkError(f'{where} must be {{"start": node id, "hops": [{{"relation": R, "direction": "out" or "in"}}, ...]}}')
    start = check_text(query.get("start"), f"{where}.start")
    if start not in node_ids:
        raise BenchmarkError(f"{where}.start {start!r} is not a node id; start the query at a node of the graph")
    hops = []
    for j, hop in enumerate(query["hops"]):
        relation, direction = _record(hop, f"{where}.hops[{j}]", ("relation", "direction"), "hop")
        if direction not in ("out", "in"):
            raise BenchmarkError(f"{where}.hops[{j}].direction is {direction!r}; use \"out\" or \"in\"")
        conditions = hop.get("where", [])
        if not isinstance(conditions, list):
            raise BenchmarkError(f'{where}.hops[{j}].where must be a list of {{"property": K, "op": "<=", "value": V}}')
        hops.append(Hop(relation, direction, tuple(_condition(c, f"{where}.hops[{j}].where[{k}]") for k, c in enumerate(conditions))))
    ask = query.get("ask")
    if ask is not None:
        key, of = _record(ask, f"{where}.ask", ("property", "of"), "ask")
        if of not in ("node", "edge") or not PROP_KEY.fullmatch(key):
            raise BenchmarkError(f'{where}.ask must be {{"property": a property name, "of": "node" or "edge"}}')
        ask = Ask(of, key)
    return Query(start, tuple(hops), ask)


def _condition(item: object, where: str) -> Condition:
    if not isinstance(item, dict) or set(item) != {"property", "op", "value"} or item["op"] not in CONDITION_OPS:
        raise BenchmarkError(f'{where} must be {{"property": K, "op": one of {", ".join(CONDITION_OPS)}, "value": a string, number or boolean}}')
    key = check_text(item["property"], f"{where}.property")
    if not PROP_KEY.fullmatch(key):
        raise BenchmarkError(f"{where}.property {key!r} is not a property name")
    return Condition(key, item["op"], check_value(item["value"], f"{where}.value", None))


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


@dataclass(frozen=True)
class RunInputs:
    graph: Graph
    questions: tuple[Question, ...]
    files: dict[str, bytes]  # display path -> raw bytes, for the manifest
    questions_file: str = "questions.json"  # display path, for messages
    skipped: tuple[dict[str, Any], ...] = ()  # questions left out by --skip-invalid-questions: {"question", "reasons"}
    generated: dict[int, int] | None = None  # with --generate-questions: hop count -> questions drawn
    generated_bytes: bytes | None = None  # questions.generated.json, written with the outputs
    graph_format: str = "json"  # what --graph was read as (GRAPH_FORMATS)
    kinds: dict[str, str] = field(default_factory=dict)  # the package's stores: node id -> a type the store holds and no format shows
    derived_queries: tuple[str, ...] = ()  # the package's: questions whose query was derived from their gold path


GENERATED_QUESTIONS = "questions.generated.json"
DEFAULT_QUESTIONS = DATA / "questions.json"


def load_inputs(graph_path: Path, questions_path: Path, problems: Problems | None = None,
                generate: Callable[[Graph, str], tuple[list[dict[str, Any]], dict[int, int]]] | None = None,
                read_graph: Callable[[Path], tuple[object, bytes, str]] | None = None,
                reorder: Callable[[Graph], tuple[Graph, dict[int, int]]] | None = None, read_context: ReadContext | None = None
                ) -> RunInputs:
    """The inputs, every record-level problem collected in problems (raised at once when it is None). The package's
    callables: read_graph(path) -> (records, raw bytes, format); generate draws the questions from the graph;
    reorder(graph) -> (graph, old edge index -> new), which paths and contexts follow; read_context reads contexts."""
    own = problems is None
    problems = Problems() if problems is None else problems
    graph_data, graph_raw, graph_format = (read_graph or read_graph_json)(graph_path)
    if generate is None:
        questions_data, questions_raw = read_json(questions_path, "--questions")
    graph = validate_graph(graph_data, display(graph_path), problems)
    position = None
    if reorder is not None and not problems.lines:
        graph, position = reorder(graph)
    generated = None
    if generate is not None:
        if problems.lines:  # a broken graph: there is nothing to draw from
            raise InputProblems([m for _, m in problems.lines], "")
        questions_data, generated = generate(graph, display(graph_path))
        questions_raw, questions_path = json_bytes(questions_data), Path(GENERATED_QUESTIONS)
    graph_data = cast(dict[str, Any], graph_data)  # a graph's records: validate_graph has refused anything else
    n_edges = len(graph_data["edges"])  # of the file: a broken edge does not move the others' indices
    named = {item["id"] for item in graph_data["nodes"] if isinstance(item, dict) and isinstance(item.get("id"), str)}
    scope = GraphScope(n_edges, named, edge_names(graph_data, display(graph_path), problems))
    questions = validate_questions(questions_data, display(questions_path), scope, problems, read_context)
    if position is not None and generate is None:  # paths and contexts name the file's edges: follow them to their new places
        questions = tuple(replace(q.moved(position), context=q.context._replace(edges=tuple(position[i] for i in q.context.edges))
                                  if q.context and q.context.graph is None else q.context) for q in questions)
    if problems.not_nfc:
        warn(
            f"{len(problems.not_nfc)} string(s) were not in Unicode {NORMALIZATION} form and were normalized "
            f"(the formats are compared in {NORMALIZATION}), the first: {problems.not_nfc[0]}"
        )
    if own and problems.lines:
        raise InputProblems([m for _, m in problems.lines], "")
    files = {display(graph_path): graph_raw}
    if generate is None:
        files[display(questions_path)] = questions_raw
    return RunInputs(graph, questions, files, display(questions_path), generated=generated, generated_bytes=questions_raw if generate else None,
                     graph_format=graph_format)


def read_graph_json(path: Path) -> tuple[object, bytes, str]:
    """--graph as the article gives it: a JSON file of nodes and edges (read_json), its raw bytes, and "json"."""
    data, raw = read_json(path, "--graph")
    return data, raw, "json"


# -----------------------------------------------------------------------------
# formats: one serializer and one parser each, registered in FORMATS at the end
#
# Parsers read only what the serializers write; anything else raises BenchmarkError naming the line.
# The line-based formats split on "\n" alone (str.splitlines would also split on U+2028, \x85, ...).


def format_error(fmt: str, line_no: int, message: str) -> BenchmarkError:
    return BenchmarkError(f"{fmt} line {line_no}: {message}")


# Properties in formats with no types of their own (tsv, edge_list, dsl, ...) are scalar text: a number or boolean as
# JSON writes it, a string as it is unless it would read as something else (then a JSON literal): "1969", "", " a ".
JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def scalar_text(value: object) -> str:
    """A property value as text: 1969 -> '1969'; '1969' -> '"1969"'; True -> 'true'; 'Kazan' -> 'Kazan'."""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    text = cast(str, value)  # the one kind left
    if (not text or text != text.strip() or text[0] == '"' or text in ("true", "false", "null")
            or JSON_NUMBER.fullmatch(text)):
        return json.dumps(text, ensure_ascii=False)
    return text


def scalar_value(fmt: str, line_no: int, text: str) -> object:
    """The value scalar_text wrote: '1969' -> 1969; '"1969"' -> '1969'; 'true' -> True; 'Kazan' -> 'Kazan'."""
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if not isinstance(value, str):
            raise format_error(fmt, line_no, f"a property value that starts with a quote must be one JSON string, not {text[:40]!r}")
        return value
    if text in ("true", "false"):
        return text == "true"
    if JSON_NUMBER.fullmatch(text):
        return json.loads(text)
    if not text or text == "null" or text != text.strip():
        raise format_error(fmt, line_no, f"the property value {text!r} must be written as a JSON string")
    return text


def prop_key(fmt: str, line_no: int, key: str) -> str:
    if not PROP_KEY.fullmatch(key) or key in RESERVED_KEYS:
        raise format_error(fmt, line_no, f"{key!r} is not a property name")
    return key


def _read_pairs(fmt: str, line_no: int, fields: list[str]) -> Props:
    """Props from 'key=value' fields (the value as scalar_text wrote it): ['founded=1005'] -> (('founded', 1005),)."""
    props = {}
    for pair in fields:
        key, sep, text = pair.partition("=")
        if not sep:
            raise format_error(fmt, line_no, f"expected key=value after the record's fields, found {pair[:40]!r}")
        if prop_key(fmt, line_no, key) in props:
            raise format_error(fmt, line_no, f"the property {key!r} is given twice")
        props[key] = scalar_value(fmt, line_no, text)
    return tuple(sorted(props.items()))


def _pairs(props: Props) -> list[str]:
    """['key=value', ...] of props, values as scalar_text (the caller escapes them for its format)."""
    return [f"{k}={scalar_text(v)}" for k, v in props]


def prop_columns(props: tuple[Props, ...]) -> list[str]:
    """Every property name of some records, sorted: the columns of a table format."""
    return sorted({k for p in props for k, _ in p})


def _typed(props: Props) -> tuple[tuple[str, bool, Any], ...]:
    """Props as the round trip compares them: a boolean is never equal to a number (True == 1 in Python), while
    1 and 1.0 are the same number (TOON writes 1.0 as 1)."""
    return tuple((k, type(v) is bool, v) for k, v in props)


def from_records(fmt: str, records: object, flat: bool = False) -> Graph:
    """Graph from the parsed JSON of the json format (properties nested under "properties"), or with flat from
    records whose fields beyond their own are properties (yaml, toon, markdown_kv: a null is an absent one),
    checking the exact shape."""
    if not isinstance(records, dict) or set(records) != {"nodes", "edges"}:
        raise format_error(fmt, 1, 'expected an object with exactly "nodes" and "edges"')
    parts = []
    edges = records["edges"] if isinstance(records["edges"], list) else []
    with_ids = bool(edges) and isinstance(edges[0], dict) and "id" in edges[0]
    for key, cls in (("nodes", Node), ("edges", Edge)):
        items = records[key]
        if not isinstance(items, list):
            raise format_error(fmt, 1, f"{key!r} is not a list")
        fields = {*cls._fields, "id"} if cls is Edge and with_ids else set(cls._fields)
        try:  # the shape of every item checked in C loops; the slow loop below reads properties or names the first bad item
            good = (all(map(operator.eq, map(dict.keys, items), itertools.repeat(fields)))
                    and set(map(type, itertools.chain.from_iterable(map(dict.values, items)))) <= {str})
        except TypeError:  # an item that is not an object
            good = False
        props = () if good else tuple(_record_props(fmt, key, i, item, fields, flat) for i, item in enumerate(items))
        parts.append((tuple(map(functools.partial(tuple.__new__, cls), map(operator.itemgetter(*cls._fields), items))), props))
    (nodes, node_props), (edge_list, edge_props) = parts
    return Graph(cast(tuple[Node, ...], nodes), cast(tuple[Edge, ...], edge_list), tuple(item["id"] for item in edges) if with_ids else (),
                 node_props, edge_props)


def _record_props(fmt: str, key: str, i: int, item: object, fields: set[str], flat: bool) -> Props:
    """The properties of one parsed record, after checking its own fields are strings."""
    if not isinstance(item, dict) or not fields <= item.keys() or not all(isinstance(item[f], str) for f in fields):
        raise format_error(fmt, 1, f"{key}[{i}] is not an object of string fields {', '.join(sorted(fields))}")
    extra = {k: v for k, v in item.items() if k not in fields}
    if extra and not flat:
        if set(extra) != {"properties"} or not isinstance(extra["properties"], dict) or not extra["properties"]:
            raise format_error(fmt, 1, f"{key}[{i}] is not an object of string fields {', '.join(sorted(fields))} and perhaps a "
                                "non-empty properties object")
        extra = extra["properties"]
    props = []
    for name, value in extra.items():
        if value is None and flat:
            continue  # a table's empty cell: this record has no such property
        if not PROP_KEY.fullmatch(str(name)) or name in RESERVED_KEYS or not is_scalar(value):
            raise format_error(fmt, 1, f"{key}[{i}].{name} is not a property of a string, number or boolean")
        props.append((name, value))
    return tuple(sorted(props))


def is_scalar(value: object) -> bool:
    return isinstance(value, (str, bool, int)) or isinstance(value, float) and math.isfinite(value)


_quote = json.encoder.encode_basestring  # a JSON string literal, as json.dumps(ensure_ascii=False) writes it


def _json_props(props: Props, indent: str) -> str:
    """The "properties" member of a record as json.dumps(indent=2, sort_keys=True) writes it at that indent."""
    inner = ",\n".join(f"{indent}  {_quote(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in props)
    return f'\n{indent}"properties": {{\n{inner}\n{indent}}},'


def serialize_json(graph: Graph) -> str:
    """json.dumps(graph, ensure_ascii=False, indent=2, sort_keys=True), written out by hand because the
    indenting encoder is pure Python and large graphs spend most of their time in it (a test checks
    that both give the same bytes). Properties are a nested "properties" object, on the records that have any."""
    q = _quote
    ids = [f'\n      "id": {q(i)},' for i in graph.edge_ids] if graph.edge_ids else [""] * len(graph.edges)
    if graph.edge_props:
        ids = [i + (_json_props(p, "      ") if p else "") for i, p in zip(ids, graph.edge_props)]
    edges = ",\n".join(
        f'    {{{i}\n      "relation": {q(e.relation)},\n      "source": {q(e.source)},\n      "target": {q(e.target)}\n    }}'
        for i, e in zip(ids, graph.edges)
    )
    props = [_json_props(p, "      ") if p else "" for p in graph.node_props] if graph.node_props else [""] * len(graph.nodes)
    nodes = ",\n".join(
        f'    {{\n      "id": {q(n.id)},\n      "name": {q(n.name)},{p}\n      "type": {q(n.type)}\n    }}' for n, p in zip(graph.nodes, props)
    )
    edges = f"[\n{edges}\n  ]" if graph.edges else "[]"
    nodes = f"[\n{nodes}\n  ]" if graph.nodes else "[]"
    return f'{{\n  "edges": {edges},\n  "nodes": {nodes}\n}}'


def parse_json(text: str, fmt: str = "json") -> Graph:
    try:
        return from_records(fmt, json.loads(text))
    except json.JSONDecodeError as e:
        raise format_error(fmt, e.lineno, e.msg) from None


# jsonl: {"k":"n","i":id,"n":name,"t":type} and {"k":"e","s":source,"r":relation,"t":target}, one per line; a
# record's properties as "p":{...} at its end.
JSONL_NODE_KEYS = ("k", "i", "n", "t")
JSONL_EDGE_KEYS = ("k", "s", "r", "t")
JSONL_EDGE_ID_KEYS = ("k", "i", "s", "r", "t")  # with --edge-ids: {"k":"e","i":edge id,"s":...}


def _jsonl_props(props: Props) -> str:
    return ',"p":' + json.dumps(dict(props), ensure_ascii=False, separators=(",", ":")) if props else ""


def serialize_jsonl(graph: Graph) -> str:
    """Each line as json.dumps(record, ensure_ascii=False, separators=(",", ":")) writes it."""
    q = _quote
    node_props = map(_jsonl_props, graph.node_props) if graph.node_props else itertools.repeat("")
    edge_props = map(_jsonl_props, graph.edge_props) if graph.edge_props else itertools.repeat("")
    lines = [f'{{"k":"n","i":{q(n.id)},"n":{q(n.name)},"t":{q(n.type)}{p}}}' for n, p in zip(graph.nodes, node_props)]
    if graph.edge_ids:
        lines += [f'{{"k":"e","i":{q(i)},"s":{q(e.source)},"r":{q(e.relation)},"t":{q(e.target)}{p}}}'
                  for i, e, p in zip(graph.edge_ids, graph.edges, edge_props)]
    else:
        lines += [f'{{"k":"e","s":{q(e.source)},"r":{q(e.relation)},"t":{q(e.target)}{p}}}' for e, p in zip(graph.edges, edge_props)]
    return "\n".join(lines)


def parse_jsonl(text: str) -> Graph:
    try:  # one call of the C decoder for the whole text; any problem (or a property) is found again, by line, below
        lines = [line for line in text.split("\n") if line]
        items = json.loads("[" + ",".join(lines) + "]")
        if len(items) == len(lines) and all(type(d) is dict and (tuple(d) == JSONL_NODE_KEYS and d["k"] == "n" or tuple(d) == JSONL_EDGE_KEYS
                                            and d["k"] == "e") and all(type(v) is str for v in d.values()) for d in items):
            nodes = tuple(Node(d["i"], d["n"], d["t"]) for d in items if d["k"] == "n")
            return Graph(nodes, tuple(Edge(d["s"], d["r"], d["t"]) for d in items if d["k"] == "e"))
    except ValueError:
        pass
    return _parse_jsonl_lines(text)


def _new_records() -> tuple[list[Node], list[Edge], list[str], list[Props], list[Props]]:
    return [], [], [], [], []  # a parser's nodes, edges, edge ids, node and edge properties


def _parse_jsonl_lines(text: str) -> Graph:
    """parse_jsonl line by line: a graph with edge ids or properties, or the line that is wrong."""
    nodes, edges, ids, node_props, edge_props = _new_records()
    for line_no, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            raise format_error("jsonl", line_no, e.msg) from None
        kind = item.get("k") if isinstance(item, dict) else None
        keys = JSONL_NODE_KEYS if kind == "n" else (JSONL_EDGE_ID_KEYS if "i" in item else JSONL_EDGE_KEYS) if kind == "e" else None
        props = item.pop("p", None) if keys is not None else None
        if (keys is None or tuple(item) != keys or not all(isinstance(v, str) for v in item.values())
                or (kind == "e" and edges and bool(ids) != ("i" in item))):
            raise format_error("jsonl", line_no, 'expected {"k":"n","i","n","t"} or {"k":"e",("i"),"s","r","t"} with string values, '
                                          'and "p":{properties} at the end')
        if props is not None and (not isinstance(props, dict) or not props or not all(
                PROP_KEY.fullmatch(k) and k not in RESERVED_KEYS and is_scalar(v) for k, v in props.items())):
            raise format_error("jsonl", line_no, '"p" is not an object of properties (strings, numbers, booleans)')
        props = tuple(sorted(props.items())) if props else ()
        if kind == "n":
            nodes.append(Node(item["i"], item["n"], item["t"]))
            node_props.append(props)
        else:
            edges.append(Edge(item["s"], item["r"], item["t"]))
            edge_props.append(props)
            if "i" in item:
                ids.append(item["i"])
    return Graph(tuple(nodes), tuple(edges), tuple(ids), tuple(node_props), tuple(edge_props))


# tsv: a header, then node and edge rows in four columns. A field holding a tab, quote, \n or \r is quoted as
# csv.QUOTE_MINIMAL does, by hand (csv.writer leaves a lone \r unquoted, which its reader rejects). Properties are
# columns after the fixed ones, one per name, shared by nodes and edges: scalar_text, or an empty cell where absent.
TSV_HEADER = ("kind", "id/source", "name/relation", "type/target")
TSV_HEADER_LINE = "\t".join(TSV_HEADER)
TSV_ID_HEADER = (*TSV_HEADER, "edge_id")  # with --edge-ids: a fifth column, empty on node rows


def _tsv_field(value: str) -> str:
    if "\t" in value or '"' in value or "\n" in value or "\r" in value:
        return '"' + value.replace('"', '""') + '"'
    return value


def prop_cells(props: Props, columns: list[str]) -> tuple[str, ...]:
    """A record's property cells under the columns: scalar_text, or '' where it has none."""
    have = dict(props)
    return tuple(scalar_text(have[c]) if c in have else "" for c in columns)


def serialize_tsv(graph: Graph) -> str:
    columns = prop_columns((*graph.node_props, *graph.edge_props))
    node_cells = [prop_cells(p, columns) for _, p in graph.nodes_with_props()] if columns else itertools.repeat(())
    edge_cells = [prop_cells(p, columns) for _, p in graph.edges_with_props()] if columns else itertools.repeat(())
    if graph.edge_ids:
        rows = [(*TSV_ID_HEADER, *columns), *(("node", *n, "", *c) for n, c in zip(graph.nodes, node_cells)),
                *(("edge", *e, i, *c) for e, i, c in zip(graph.edges, graph.edge_ids, edge_cells))]
    else:
        rows = [(*TSV_HEADER, *columns), *(("node", *n, *c) for n, c in zip(graph.nodes, node_cells)),
                *(("edge", *e, *c) for e, c in zip(graph.edges, edge_cells))]
    return "\n".join("\t".join(map(_tsv_field, row)) for row in rows)


def parse_tsv(text: str) -> Graph:
    nodes, edges, ids, node_props, edge_props = _new_records()
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", strict=True)
    limit = csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))  # a long name is a value, not an attack: the text is ours
    try:
        header = tuple(next(reader, []))
        fixed = TSV_ID_HEADER if header[:5] == TSV_ID_HEADER else TSV_HEADER
        if header[: len(fixed)] != fixed:
            raise format_error("tsv", 1, f"expected the header {TSV_HEADER_LINE!r}")
        columns = [prop_key("tsv", 1, c) for c in header[len(fixed):]]
        if len(set(columns)) != len(columns):
            raise format_error("tsv", 1, "a property column is named twice")
        width = len(header)
        for row in reader:
            if len(row) != width or row[0] not in ("node", "edge") or (len(fixed) == 5 and row[0] == "node" and row[4]):
                raise format_error("tsv", reader.line_num, f"expected {width} tab-separated fields starting with node or edge")
            is_node = row[0] == "node"
            if is_node:
                nodes.append(Node(*row[1:4]))
            else:
                edges.append(Edge(*row[1:4]))
            if len(fixed) == 5 and not is_node:
                ids.append(row[4])
            cells = row[len(fixed):]
            props = tuple((c, scalar_value("tsv", reader.line_num, v)) for c, v in sorted(zip(columns, cells)) if v)
            (node_props if is_node else edge_props).append(props)
    except csv.Error as e:
        raise format_error("tsv", reader.line_num, str(e)) from None
    finally:
        csv.field_size_limit(limit)
    return Graph(tuple(nodes), tuple(edges), tuple(ids), tuple(node_props), tuple(edge_props))


# edge_list and dsl: '|'-separated fields with backslash escapes: "\\" a backslash, "\n" and "\r" newline and carriage
# return, a backslash before any other character makes it literal ("\|" is a pipe inside a value); other values are
# unchanged. A record's properties follow its fields as more '|'-separated key=value fields.
ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r"})
PIPE_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r", "|": "\\|"})


def lex(fmt: str, line_no: int, line: str) -> list[tuple[str, bool]]:
    """Characters of an escaped line as (char, literal): 'a\\|b' -> [('a', F), ('|', T), ('b', F)]."""
    out, i = [], 0
    while i < len(line):
        c = line[i]
        if c != "\\":
            out.append((c, False))
            i += 1
            continue
        if i + 1 == len(line):
            raise format_error(fmt, line_no, "line ends with a lone backslash")
        nxt = line[i + 1]
        out.append(({"n": "\n", "r": "\r"}.get(nxt, nxt), True))
        i += 2
    return out


def lexed_text(chars: list[tuple[str, bool]]) -> str:
    return "".join(c for c, _ in chars)


def split_fields(fmt: str, line_no: int, line: str, count: int, more: bool = False) -> list[str]:
    """The '|'-separated, unescaped fields of a line: 'a\\|b|c|d' -> ['a|b', 'c', 'd']; count of them, or with
    more at least count (the rest are key=value properties)."""
    if "\\" not in line:  # the common case needs no lexer
        fields = line.split("|")
    else:
        fields, current = [], cast(list[tuple[str, bool]], [])
        for c, literal in lex(fmt, line_no, line):
            if c == "|" and not literal:
                fields.append(lexed_text(current))
                current = []
            else:
                current.append((c, literal))
        fields.append(lexed_text(current))
    if len(fields) != count and not (more and len(fields) > count):
        raise format_error(fmt, line_no, f"expected {'at least ' if more else ''}{count} '|'-separated fields, found {len(fields)}")
    return fields


def _pipe_row(values: tuple[str, ...]) -> str:
    return "|".join(v.translate(PIPE_ESCAPES) for v in values)


def pipe_rows(graph: Graph) -> Callable[[tuple[str, ...]], str]:
    """_pipe_row, or a plain join when no value of the graph holds a character to escape (most graphs: it
    saves a translate per value), '-' after a space or before '>' included for edge_list."""
    text = "\x00".join(v for record in (*graph.nodes, *graph.edges) for v in record)
    plain = not any(s in text for s in ("\\", "\n", "\r", "|", " -", "->"))
    return "|".join if plain else _pipe_row


def _with_pairs(row: Callable[[tuple[str, ...]], str], record: tuple[str, ...], props: Props) -> str:
    """A record's '|'-joined fields, its properties as key=value fields after them, each escaped."""
    return row(record) + "".join("|" + pair.translate(PIPE_ESCAPES) for pair in _pairs(props))


# edge_list: "NODES", id|name|type lines, "EDGES", then "source -RELATION-> target" lines. In an edge
# line the source escapes the '-' of " -" and the relation the '-' of "->", so the first unescaped
# " -" and the next unescaped "-> " are the arrow; the target escapes '|', so the first unescaped '|'
# after it starts the edge's properties.
def serialize_edge_list(graph: Graph) -> str:
    """With --edge-ids each edge line starts with its id in brackets: '[e1] a -R-> b'."""
    row = pipe_rows(graph)
    lines = ["NODES", *(_with_pairs(row, n, p) for n, p in graph.nodes_with_props()), "EDGES"]
    heads = [f"[{i}] " for i in graph.edge_ids] if graph.edge_ids else [""] * len(graph.edges)
    tails = [_with_pairs("".join, (), p) for p in graph.edge_props] if graph.edge_props else [""] * len(graph.edges)  # pairs alone
    if row is not _pipe_row and not any(e.source.startswith("[") for e in graph.edges):
        lines += [f"{h}{e.source} -{e.relation}-> {e.target}{t}" for h, e, t in zip(heads, graph.edges, tails)]
        return "\n".join(lines)
    for h, e, t in zip(heads, graph.edges, tails):
        source = e.source.translate(ESCAPES).replace(" -", " \\-")
        source = "\\" + source if source.startswith("[") else source  # not taken for an id
        relation = e.relation.translate(ESCAPES).replace("->", "\\->")
        lines.append(f"{h}{source} -{relation}-> {e.target.translate(PIPE_ESCAPES)}{t}")
    return "\n".join(lines)


def _parse_arrow(line_no: int, line: str) -> tuple[Edge, Props]:
    if "\\" not in line:  # no escapes: the first " -" and the next "-> " are the arrow
        chars, raw = None, line  # type: list[tuple[str, bool]] | None, str | list[str | None]
        dash = line.find(" -") + 1 or None
        head = line.find("-> ", dash + 1) if dash else -1
    else:
        chars = lex("edge_list", line_no, line)
        raw = [None if literal else c for c, literal in chars]  # unescaped characters, None where escaped
        dash = next((i for i in range(1, len(raw)) if raw[i] == "-" and raw[i - 1] == " "), None)
        head = next((i for i in range(dash + 1, len(raw) - 2) if raw[i : i + 3] == ["-", ">", " "]), -1) if dash else -1
    if dash is None:
        raise format_error("edge_list", line_no, "expected 'source -RELATION-> target' (no ' -' found)")
    if head < 0:
        raise format_error("edge_list", line_no, "expected 'source -RELATION-> target' (no '-> ' found)")
    if chars is None:
        target, *pairs = line[head + 3 :].split("|")
        return Edge(line[: dash - 1], line[dash + 1 : head], target), _read_pairs("edge_list", line_no, pairs)
    fields: list[str] = []
    current: list[tuple[str, bool]] = []
    for c, literal in chars[head + 3 :]:
        if c == "|" and not literal:
            fields.append(lexed_text(current))
            current = []
        else:
            current.append((c, literal))
    target, *pairs = [*fields, lexed_text(current)]
    return Edge(lexed_text(chars[: dash - 1]), lexed_text(chars[dash + 1 : head]), target), _read_pairs("edge_list", line_no, pairs)


def parse_edge_list(text: str) -> Graph:
    nodes, edges, ids, node_props, edge_props = _new_records()
    section: str | None = None
    with_ids = False
    for line_no, line in enumerate(text.split("\n"), 1):
        if line in ("NODES", "EDGES"):
            section = line
        elif not line:
            continue
        elif section == "NODES":
            fields = split_fields("edge_list", line_no, line, 3, more=True)
            nodes.append(Node(*fields[:3]))
            node_props.append(_read_pairs("edge_list", line_no, fields[3:]))
        elif section == "EDGES":
            if not edges:
                with_ids = line.startswith("[")  # an escaped source starts with "\\["
            if line.startswith("[") != with_ids or with_ids and "] " not in line:
                raise format_error("edge_list", line_no, "expected every edge line with an '[id] ' in front, or none")
            if with_ids:
                edge_id, line = line[1:].split("] ", 1)
                ids.append(edge_id)
            edge, props = _parse_arrow(line_no, line)
            edges.append(edge)
            edge_props.append(props)
        else:
            raise format_error("edge_list", line_no, "record before the NODES line")
    return Graph(tuple(nodes), tuple(edges), tuple(ids), tuple(node_props), tuple(edge_props))


# dsl: two comment lines with the grammar, "@ id|name|type" per node, "> source|relation|target" per edge;
# each grammar line ends with "|key=value..." when the graph has properties.
DSL_HEADER = ("# @ id|name|type", "# > source|relation|target")
DSL_ID_HEADER = ("# @ id|name|type", "# > id|source|relation|target")  # with --edge-ids
DSL_PROPS = "|key=value..."


def serialize_dsl(graph: Graph) -> str:
    row = pipe_rows(graph)
    header = DSL_ID_HEADER if graph.edge_ids else DSL_HEADER
    lines = [line + DSL_PROPS for line in header] if graph.has_props else [*header]
    lines += ["@ " + _with_pairs(row, n, p) for n, p in graph.nodes_with_props()]
    if graph.edge_ids:
        lines += ["> " + _with_pairs(row, (i, *e), p) for i, (e, p) in zip(graph.edge_ids, graph.edges_with_props())]
    else:
        lines += ["> " + _with_pairs(row, e, p) for e, p in graph.edges_with_props()]
    return "\n".join(lines)


def parse_dsl(text: str) -> Graph:
    nodes, edges, ids, node_props, edge_props = [], [], [], [], []
    with_ids = text.split("\n", 2)[1:2] in ([DSL_ID_HEADER[1]], [DSL_ID_HEADER[1] + DSL_PROPS])
    for line_no, line in enumerate(text.split("\n"), 1):
        if not line or line.startswith("#"):
            continue
        marker, payload = line[:2], line[2:]
        if marker not in ("@ ", "> "):
            raise format_error("dsl", line_no, f"unknown marker {line[:2]!r}; lines start with '@ ', '> ' or '#'")
        count = 4 if with_ids and marker == "> " else 3
        fields = split_fields("dsl", line_no, payload, count, more=True)
        props = _read_pairs("dsl", line_no, fields[count:])
        if marker == "@ ":
            nodes.append(Node(*fields[:3]))
            node_props.append(props)
        else:
            ids += fields[: count - 3]
            edges.append(Edge(*fields[count - 3 : count]))
            edge_props.append(props)
    return Graph(tuple(nodes), tuple(edges), tuple(ids), tuple(node_props), tuple(edge_props))


class Format(NamedTuple):
    """One format: how a graph is written and read back, the library it needs ((module, package), imported only when
    the format is asked for), and, when it cannot carry an edge id, why not."""

    serialize: Callable[[Graph], str]
    parse: Callable[[str], Graph]
    library: tuple[str, str] | None = None
    no_edge_ids: str | None = None


# name -> Format. The order is the report order: the article's five, then the formats others register here.
FORMATS: dict[str, Format] = {
    "json": Format(serialize_json, parse_json),
    "jsonl": Format(serialize_jsonl, parse_jsonl),
    "tsv": Format(serialize_tsv, parse_tsv),
    "edge_list": Format(serialize_edge_list, parse_edge_list),
    "dsl": Format(serialize_dsl, parse_dsl),
}

ARTICLE_FORMATS = ("json", "jsonl", "tsv", "edge_list", "dsl")


# -----------------------------------------------------------------------------
# round-trip check (article 4.3, 8.1): what a format writes must parse back to the same graph


def first_difference(expected: Graph, actual: Graph) -> str | None:
    """The first record whose count differs between two graphs (as multisets), or None if they are equal. A
    record is a node or an edge with its properties (and its id with --edge-ids)."""
    if expected == actual and not expected.has_props:  # the same records in the same order: the common case, at C speed
        return None
    for label, want, got in (("node", *map(_node_records, (expected, actual))), ("edge", *map(_edge_records, (expected, actual)))):
        if want == got:
            continue
        want_count, got_count = Counter(want), Counter(got)
        if want_count == got_count:
            continue
        for record in (*want, *got):
            if want_count[record] != got_count[record]:
                return (
                    f"{label} {_shown_record(record)} appears {want_count[record]} time(s) in the input "
                    f"and {got_count[record]} time(s) after parsing"
                )
    return None


def _node_records(graph: Graph) -> tuple[tuple[Any, ...], ...]:
    return tuple(zip(graph.nodes, map(_typed, graph.node_props))) if graph.node_props else tuple((n, ()) for n in graph.nodes)


def _edge_records(graph: Graph) -> tuple[tuple[Any, ...], ...]:
    props = tuple(map(_typed, graph.edge_props)) if graph.edge_props else ((),) * len(graph.edges)
    if graph.edge_ids:
        return tuple(zip(graph.edge_ids, graph.edges, props))
    return tuple(zip(graph.edges, props))


def _shown_record(record: Sequence[Any]) -> str:
    """('e1', Edge(a, R, b), props) -> "('e1', 'a', 'R', 'b')", properties after it when it has any."""
    *head, props = record
    fields = tuple(itertools.chain.from_iterable(v if isinstance(v, tuple) else (v,) for v in head))
    return repr(fields) + (f" with properties {dict((k, v) for k, _, v in props)!r}" if props else "")


def serialized(fmt: str, graph: Graph) -> str:
    """The format's text, NFC-normalized (unchecked). Where an escape meets a combining mark ('a\\n' + U+0301 is written
    as backslash, 'n', U+0301, and NFC makes 'ń'), the text is left as written unless its normal form reads back the same."""
    text = FORMATS[fmt].serialize(graph)
    if unicodedata.is_normalized(NORMALIZATION, text):
        return text
    normal = unicodedata.normalize(NORMALIZATION, text)
    try:
        return normal if first_difference(graph, FORMATS[fmt].parse(normal)) is None else text
    except BenchmarkError:
        return text


def check_roundtrip(fmt: str, graph: Graph, text: str) -> None:
    """Raise unless text, the graph in format fmt, parses back to the same graph."""
    try:
        difference = first_difference(graph, FORMATS[fmt].parse(text))
    except BenchmarkError as e:
        difference = f"its own output does not parse ({e})"
    if difference:
        raise BenchmarkError(f"round-trip check failed for format {fmt}: {difference}; nothing was written")


def serialize_checked(fmt: str, graph: Graph) -> str:
    """The graph in format fmt, NFC-normalized, after proving it parses back to the same graph."""
    text = serialized(fmt, graph)
    check_roundtrip(fmt, graph, text)
    return text


# -----------------------------------------------------------------------------
# prompts: the template a graph and a question are put into
#
# In: a template's text. Out: Template, which renders a prompt in one pass and tells the parts of a
# prompt apart (head + graph + middle + question + end), so that the shared part is counted once.


@dataclass(frozen=True)
class Template:
    name: str  # ru, en, or the file it was read from
    text: str
    parts: tuple[str, ...]  # literal, field, literal, field, literal, field, literal

    @classmethod
    def parse(cls, name: str, text: str) -> Template:
        """The template cut at its fields, each of which it holds once (the package checks a user's template first)."""
        return cls(name, text, tuple(re.split(r"\{(" + "|".join(TEMPLATE_FIELDS) + r")\}", text)))

    def render(self, format_name: str, graph: str, question: str) -> str:
        values = {"format_name": format_name, "graph": graph, "question": question}
        return "".join(values[p] if k % 2 else p for k, p in enumerate(self.parts))

    def around(self, format_name: str) -> tuple[str, str, str] | None:
        """(head, middle, end) such that a prompt is head + graph + middle + question + end, or None when the
        question comes before the graph (such a prompt is counted whole)."""
        fields = self.parts[1::2]
        if fields.index("graph") > fields.index("question"):
            return None
        g, q = 2 * fields.index("graph") + 1, 2 * fields.index("question") + 1

        def fill(start: int, stop: int | None) -> str:
            return "".join(format_name if k % 2 and p == "format_name" else p for k, p in list(enumerate(self.parts))[start:stop])

        return fill(0, g), fill(g + 1, q), fill(q + 1, None)

    @property
    def sha256(self) -> str:
        return sha256_hex(self.text)


ARTICLE_TEMPLATE = Template.parse("ru", PROMPT_TEMPLATES["ru"])

# -----------------------------------------------------------------------------
# tokens: tiktoken, offline, and counting a prompt by parts
#
# tiktoken caches an encoding's BPE file under TIKTOKEN_CACHE_DIR as sha1(url); o200k_base's and cl100k_base's ship in
# data/tiktoken under those names, so a fresh clone counts offline. A user's TIKTOKEN_CACHE_DIR that holds the file wins.
# encoding -> (url of its BPE file, SHA-256 that tiktoken checks), as in tiktoken_ext/openai_public.py
BPE_FILES = {
    "o200k_base": ("https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    "cl100k_base": ("https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
                   "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "r50k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    ),
    "p50k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken",
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    ),
}

BPE_FILES["o200k_harmony"] = BPE_FILES["o200k_base"]
BPE_FILES["p50k_edit"] = BPE_FILES["p50k_base"]
SHIPPED_ENCODINGS = ("o200k_base", "cl100k_base")


def bpe_cache_name(url: str) -> str:
    return hashlib.sha1(url.encode()).hexdigest()


class Encoder(Protocol):
    """What counts tokens: tiktoken.Encoding, or the package's HFEncoding (a Hugging Face tokenizer.json)."""

    def encode_ordinary(self, text: str) -> list[int]: ...


@dataclass(frozen=True)
class Tokenizer:
    name: str  # tiktoken encoding name, or hf:<file name>@<first 8 of its SHA-256> for a Hugging Face tokenizer.json
    encoding: Encoder  # tiktoken.Encoding or HFEncoding: encode_ordinary(text) -> token ids
    bpe_sha256: str | None  # SHA-256 of the BPE (or tokenizer.json) file, None when tiktoken does not tell us
    bpe_source: str  # where the BPE file came from
    library: str = ""  # what counts, with its version, for the rows: "tiktoken 0.14.0", "tokenizers 0.23.3"

    def count(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))

    @functools.cached_property
    def splits(self) -> bool:
        """Its regex is one of SPLIT_PATTERNS: a prompt can be counted by parts."""
        return sha256_hex(getattr(self.encoding, "_pat_str", "")) in SPLIT_PATTERNS


_SHIPPED: dict[str, tiktoken.Encoding] = {}
_SHIPPED_LOCK = threading.Lock()


def shipped_encoding(name: str, bpe: bytes) -> tiktoken.Encoding:
    """tiktoken's own constructor of the encoding, its BPE file read from bpe (the shipped file's bytes) instead of
    tiktoken's cache or a download. The constructor runs in a copy of its module's globals whose load_tiktoken_bpe
    parses bpe as tiktoken's does, so nothing process-wide changes (TIKTOKEN_CACHE_DIR used to be set for the whole
    process around the load). Made once per name."""
    with _SHIPPED_LOCK:
        if name not in _SHIPPED:
            tiktoken.list_encoding_names()  # finds the constructors
            constructor = (tiktoken.registry.ENCODING_CONSTRUCTORS or {})[name]
            ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in bpe.splitlines() if line)}
            scope = dict(constructor.__globals__, load_tiktoken_bpe=lambda *_, **__: dict(ranks))
            for key, value in list(scope.items()):  # o200k_harmony calls o200k_base: every function of the module, rebound
                if isinstance(value, types.FunctionType) and value.__globals__ is constructor.__globals__:
                    scope[key] = types.FunctionType(value.__code__, scope, value.__name__, value.__defaults__, value.__closure__)
            _SHIPPED[name] = tiktoken.Encoding(**scope[constructor.__name__]())
        return _SHIPPED[name]


def load_tokenizer(name: str) -> Tokenizer:
    known = tiktoken.list_encoding_names()
    if name not in known:
        raise BenchmarkError(f"unknown encoding {name!r} in --encoding; tiktoken knows {', '.join(known)}")
    url, sha = BPE_FILES.get(name, (None, None))
    user_dir = os.environ.get("TIKTOKEN_CACHE_DIR")
    key = bpe_cache_name(url) if url else None
    shipped = TIKTOKEN_DIR / key if key else None
    if key and shipped and shipped.is_file() and not (user_dir and (Path(user_dir) / key).is_file()):
        data = shipped.read_bytes()
        actual = sha256_hex(data)
        if actual != sha:
            raise BenchmarkError(
                f"{display(shipped)} ({name}) has SHA-256 {actual}, tiktoken expects {sha}; restore it with "
                f"'git checkout -- {display(shipped)}' (it is stored as binary, see .gitattributes)"
            )
        return Tokenizer(name, shipped_encoding(name, data), sha, f"data/tiktoken/{key}", f"tiktoken {tiktoken.__version__}")
    try:
        encoding = tiktoken.get_encoding(name)
    except Exception as e:  # tiktoken raises whatever its download raised
        first_line = (str(e).splitlines() or [""])[0][:160]
        raise BenchmarkError(
            f"encoding {name!r} is not shipped with this repo and tiktoken could not load it "
            f"({type(e).__name__}: {first_line}); put its BPE file, named {key or 'as tiktoken names it'}, in a "
            f"folder and set TIKTOKEN_CACHE_DIR to it, or use a shipped encoding: {', '.join(SHIPPED_ENCODINGS)}"
        ) from None
    source = f"TIKTOKEN_CACHE_DIR ({user_dir})" if user_dir else "tiktoken's default cache or download"
    return Tokenizer(name, encoding, sha, source, f"tiktoken {tiktoken.__version__}")


# Counting a prompt by parts. encode_ordinary cuts a text into pieces with the encoding's regex and
# encodes each piece alone, so count(a + b) == count(a) + count(b) whenever the regex must end a piece
# between a and b. For the patterns below it must when a ends with a character that is not whitespace,
# then "\n", and b starts with a character that is neither whitespace nor "/". Proof, alternative by
# alternative: letters and numbers take at most a space or one non-newline character in front, so no
# piece of b reaches back over the newline; punctuation runs end with newlines (cl100k) or newlines and
# "/" (o200k: hence the "/"); the whitespace alternatives end at the newline because b does not start
# with whitespace; and the piece that holds the newline is the same with or without b after it (after a
# non-space character it is "\n" alone, or the punctuation run that ends with it), since no pattern has
# a lookbehind and the only lookaheads, (?!\S) and $, decide between alternatives that match "\n" alike.
# A prompt is head + graph + middle + question + end: the templates' head and middle end with a word
# and "\n", so the graph is tokenized once per format and each question once per encoding; anything
# else (a template or question that breaks the rule, an unknown pattern) is counted whole.
SPLIT_PATTERNS = {  # SHA-256 of the regex -> the encodings that use it
    "2d1b8dc11e89af71459b36004f698ab3693f59fd84f63e8ec2b49564ab857420": "o200k_base, o200k_harmony",
    "f021c3d976978e62ee64cdad150cc3405c2e3d6e3b40407850bb9e8d9eb65899": "cl100k_base",
    "bf51d578af57187876ec1c8a34fb0ee2fb3025c50ce663ac154b633ae39de092": "r50k_base, p50k_base, p50k_edit",
}

SPLIT_SEARCH = 256  # newlines tried from the end of a graph text for its last split point


def splits_between(left: str, right: str) -> bool:
    """The pre-tokenizer of a SPLIT_PATTERNS encoding ends a piece between left and right:
    ('ГРАФ\\n', '{') -> True; ('}\\n\\n', 'B') -> False (whitespace before the newline)."""
    if not left or not right:
        return True
    return left[-1] == "\n" and len(left) > 1 and not left[-2].isspace() and not right[0].isspace() and right[0] != "/"


def last_split(text: str) -> int | None:
    """The last position p inside text with splits_between(text[:p], text[p:]), or None."""
    p, tries = text.rfind("\n"), 0
    while p > 0 and tries < SPLIT_SEARCH:
        if p + 1 < len(text) and splits_between(text[max(p - 1, 0) : p + 1], text[p + 1 : p + 2]):
            return p + 1
        p, tries = text.rfind("\n", 0, p), tries + 1
    return None


class TokenCounts:
    """Token counts by (encoding, SHA-256 of the text): each distinct text is tokenized once per encoding."""

    def __init__(self) -> None:
        self.cache: dict[tuple[str, str], int] = {}

    def count(self, tokenizer: Tokenizer, text: str, sha: str | None = None) -> int:
        key = (tokenizer.name, sha or sha256_hex(text))
        if key not in self.cache:
            self.cache[key] = tokenizer.count(text)
        return self.cache[key]

    def around(self, tokenizer: Tokenizer, head: str, graph: str, graph_sha: str, middle: str) -> int:
        """Tokens of head + graph + middle, tokenizing the graph itself only once (as graph_sha) where the
        proven boundaries allow: after head, and at the graph's last split point before middle."""
        if tokenizer.splits and splits_between(head, graph):
            p = last_split(graph) if graph else None
            if p is not None:
                tail = graph[p:]
                whole = self.count(tokenizer, graph, graph_sha)
                return self.count(tokenizer, head) + whole - self.count(tokenizer, tail) + self.count(tokenizer, tail + middle)
        return self.count(tokenizer, head + graph + middle)

    def prompt(self, tokenizer: Tokenizer, before: str, before_tokens: int, question: str) -> int:
        """Tokens of before + question, given before's count: question counted alone where the boundary holds."""
        if tokenizer.splits and splits_between(before[-2:], question):
            return before_tokens + self.count(tokenizer, question)
        return tokenizer.count(before + question)


class FormattedGraph:
    """One graph text in one format, as the run's template puts it before every question."""

    def __init__(self, template: Template, fmt: str, text: str, sha: str | None = None) -> None:
        self.template, self.fmt, self.text = template, fmt, text
        data = text.encode("utf-8")
        self.sha, self.bytes = sha or sha256_hex(data), len(data)
        parts = template.around(fmt)
        self.before: str | None = None  # None: the template puts the graph nowhere a question follows it
        self.head = self.middle = self.end = ""
        if parts:
            self.head, self.middle, self.end = parts
            self.before = self.head + text + self.middle  # shared by every prompt of this text
            self._hash = hashlib.sha256(self.before.encode("utf-8"))
        self._before_tokens: dict[str, int] = {}  # encoding -> tokens of before

    def prompt(self, question: str) -> str:
        return self.template.render(self.fmt, self.text, question)

    def prompt_sha256(self, question: str) -> str:
        if self.before is None:
            return sha256_hex(self.prompt(question))
        h = self._hash.copy()
        h.update((question + self.end).encode("utf-8"))
        return h.hexdigest()

    def graph_tokens(self, counts: TokenCounts, tokenizer: Tokenizer) -> int:
        return counts.count(tokenizer, self.text, self.sha)

    def tokens(self, counts: TokenCounts, tokenizer: Tokenizer, question: str) -> int:
        """Exact tokens of the whole prompt for question; the graph is tokenized once for all questions."""
        if self.before is None:
            return tokenizer.count(self.prompt(question))
        if tokenizer.name not in self._before_tokens:
            self._before_tokens[tokenizer.name] = counts.around(tokenizer, self.head, self.text, self.sha, self.middle)
        return counts.prompt(tokenizer, self.before, self._before_tokens[tokenizer.name], question + self.end)


# -----------------------------------------------------------------------------
# the size report: size_report.json's rows and the console table (article 4.1, 4.2, 7.1)

CONTEXT_WINDOW = 128_000  # tokens: a prompt longer than this overflows (the package's --context-window)
PROMPT_FILES_MAX_BYTES = 50_000_000  # prompt files are written by default up to this much: 15,000 edges and 100 questions make a gigabyte


def size_report_row(text: FormattedGraph, q: Question, tokenizer: Tokenizer, *, graph_tokens: int, prompt_tokens: int,
                    prompt_sha256: str, order_sha256: str, edges: int, included: int | None = None, answerable: bool | None,
                    context_window: int = CONTEXT_WINDOW, size: str = "small", ids: str = "original", context: str = "",
                    permutation: int = 0, mode: str = "A", budget: int | None = None) -> dict[str, Any]:
    """One row of size_report.json: the article's fields (format to encoding), then where the prompt stands in the
    package's matrix and how much of the graph and gold path it shows (included: all edges but in a mode B pack;
    answerable: the solver's outcome on them, None without a query)."""
    included = edges if included is None else included
    return {  # the article's fields (its script's rows), then ours; the text was proven to round-trip before it was counted
        "format": text.fmt, "question_id": q.id, "bytes": text.bytes, "graph_tokens": graph_tokens, "prompt_tokens": prompt_tokens,
        "roundtrip_ok": True, "graph_sha256": text.sha, "encoding": tokenizer.name,
        "prompt_sha256": prompt_sha256, "tokenizer": tokenizer.library, "normalization": NORMALIZATION, "prompt_scope": PROMPT_SCOPE,
        "size": size, "ids": ids, **({"context": context} if context else {}), "permutation": permutation,
        "edge_order_sha256": order_sha256, "mode": mode, "budget": budget, "context_window": context_window,
        "edges_total": edges, "edges_included": included, "gold_path": list(q.paths[0]) if q.paths else [],
        **({"gold_paths": [list(p) for p in q.paths]} if len(q.paths) > 1 else {}),
        "gold_edges_included": max((sum(i < included for i in p) for p in q.paths), default=0),
        "answerable": answerable, "overflow": prompt_tokens > context_window,
    }


def prompt_files_bytes(texts: Iterable[FormattedGraph], questions: tuple[Question, ...], template: Template) -> int:
    """The bytes of every prompt file of these graph texts and questions, exactly, before any is made."""
    fixed = len(template.render("", "", "").encode("utf-8"))
    asked = sum(len(q.question.encode("utf-8")) for q in questions)
    return sum((fixed + len(text.fmt.encode("utf-8")) + text.bytes) * len(questions) + asked for text in texts)


def prompt_files(texts: Iterable[FormattedGraph], questions: tuple[Question, ...], template: Template, hint: str = "") -> dict[str, Any]:
    """{"write": bool, "bytes": n}: the prompt files are written while they take at most PROMPT_FILES_MAX_BYTES."""
    size = prompt_files_bytes(texts, questions, template)
    write = size <= PROMPT_FILES_MAX_BYTES
    if not write:
        warn(f"prompt files are not written: they would take {size / 1e6:,.0f} MB, over the {PROMPT_FILES_MAX_BYTES / 1e6:,.0f} MB "
             f"written by default{hint}")
    return {"write": write, "bytes": size}


def question_counts(questions: tuple[Question, ...]) -> dict[str, Any]:
    """What the manifest says of the questions measured."""
    return {"measured": len(questions), "several_answers_or_paths": sum(q.several for q in questions),
            "abstention": sum(q.insufficient for q in questions)}


def console_table(rows: Sequence[Mapping[str, Any]], formats: list[str]) -> str:
    """The article's console table: format, graph tokens, min and max prompt tokens; and how many prompts overflow."""
    lines = ["format\tgraph_tokens\tprompt_tokens_min\tprompt_tokens_max\toverflow"]
    for fmt in formats:
        mine = [r for r in rows if r["format"] == fmt]
        if mine:
            prompt_tokens = [r["prompt_tokens"] for r in mine]
            overflow = f"{sum(r['overflow'] for r in mine)}/{len(mine)}"
            lines.append(f"{fmt}\t{mine[0]['graph_tokens']}\t{min(prompt_tokens)}\t{max(prompt_tokens)}\t{overflow}")
    return "\n".join(lines)


# -----------------------------------------------------------------------------
# artifacts: written only when the whole run succeeded, never mixed with an earlier run's
#
# Files are staged as they are made (Staging), then publish() removes the old manifest.json, moves each file into
# place, removes the previous run's files this run does not write, and moves the new manifest in last: a folder with a
# manifest holds exactly one run's files, and one without it is incomplete.

MANIFEST = "manifest.json"


def git_state() -> dict[str, Any]:
    """Commit of the checkout that holds benchmark.py, and whether tracked files differ from it."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": os.environ.get("GITHUB_SHA") or "unknown", "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def build_manifest(config: dict[str, Any], tokenizers: list[Tokenizer], inputs: RunInputs, outputs: dict[str, str], preflight: dict[str, Any],
                   command: list[str], libraries: dict[str, str]) -> dict[str, Any]:
    """manifest.json: how the run was made (versions, flags, the SHA-256 of every input and output). command: the flags as
    they may be written down; libraries: the version of each library a measured format was written with."""
    return {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "tool": "graphrag-format-benchmark",
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git": git_state(),
        "environment": {"python": platform.python_version(), "implementation": platform.python_implementation(),
                        "platform": platform.platform(), "tiktoken": tiktoken.__version__, **libraries},
        "command": ["benchmark.py", *command],
        "config": {k: v for k, v in config.items() if k != "argv"},
        "encodings": [{"name": t.name, "bpe_sha256": t.bpe_sha256, "bpe_source": t.bpe_source} for t in tokenizers],
        "measurement": {"normalization": NORMALIZATION, "graph_tokens": "the serialized graph alone", "prompt_scope": PROMPT_SCOPE},
        "preflight": preflight,
        "inputs": {name: {"sha256": sha256_hex(raw), "bytes": len(raw)} for name, raw in sorted(inputs.files.items())},
        "outputs": dict(sorted(outputs.items())),
    }


def previous_outputs(out_dir: Path) -> list[str]:
    try:
        previous = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
        names = list(previous["outputs"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [n for n in names if isinstance(n, str) and "/" not in n and "\\" not in n and not n.startswith(".")]


class Staging:
    """The run's output files, written as they are made into a hidden folder inside the output folder, so
    that memory never holds them all; publish() moves them into place, discard() removes them."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir, self.folder = out_dir, cast("Path | None", None)
        self.made_out_dir = not out_dir.exists()
        self.sha: dict[str, str] = {}  # name -> SHA-256, in the order written

    def add(self, name: str, data: bytes) -> None:
        try:
            with open(self.staged(name), "wb") as f:
                f.write(data)
        except OSError as e:
            raise self.cannot_write(e) from None
        self.sha[name] = sha256_hex(data)

    def staged(self, name: str) -> Path:
        """Where a file is written until publish(): the staging folder, made when the first file comes."""
        if self.folder is None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self.folder = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.out_dir))
        return self.folder / name

    def cannot_write(self, e: OSError) -> BenchmarkError:
        return BenchmarkError(f"{display(self.out_dir)}: cannot write the outputs ({e.strerror or e}); free some space or fix the "
                              "folder, and run the same command again (a model run's log is kept), or choose another folder with --out")

    def read(self, name: str) -> bytes:
        return self.staged(name).read_bytes()

    def discard(self) -> None:
        """Remove every staged file, and the output folder if this run made it and it is empty."""
        if self.folder is not None:
            for leftover in self.folder.glob("*"):
                leftover.unlink(missing_ok=True)
            self.folder.rmdir()
            self.folder = None
        if self.made_out_dir:
            with contextlib.suppress(OSError):
                self.out_dir.rmdir()


def publish(staging: Staging, manifest: dict[str, Any], release: Callable[[], None] | None = None) -> None:
    """Move the staged files and the manifest into the output folder, replacing the previous run's files as a whole;
    release (the package's lock on the folder), if given, is called before the staging folder goes."""
    out_dir = staging.out_dir
    staging.add(MANIFEST, json_bytes(manifest))
    try:
        stale = [n for n in previous_outputs(out_dir) if n not in staging.sha]
        (out_dir / MANIFEST).unlink(missing_ok=True)
        for name in staging.sha:
            if name != MANIFEST:
                os.replace(staging.staged(name), out_dir / name)
        for name in stale:
            (out_dir / name).unlink(missing_ok=True)
        os.replace(staging.staged(MANIFEST), out_dir / MANIFEST)
    except OSError as e:
        raise BenchmarkError(f"{display(out_dir)}: cannot write the outputs ({e}); choose another folder with --out") from None
    finally:
        staging.made_out_dir = False
        if release is not None:
            release()
        staging.discard()


def missing_tiktoken(root: Path, python: str) -> str:
    """What to do when this Python has no tiktoken: most often it is not the venv the set-up line made."""
    venv = root / ".venv" / "bin" / "python"
    if venv.exists() and Path(python).absolute() != venv.absolute():
        return (f"the tiktoken package is not installed for {python}; run this with {display(venv)}, the venv the set-up "
                "line made, or: pip install -r requirements.lock.txt")
    return "the tiktoken package is not installed; run: pip install -r requirements.lock.txt"


# -----------------------------------------------------------------------------
# command line: the article's flags and run, and the one hand-off to the package


class Parser(argparse.ArgumentParser):
    """argparse with a short error: the one line and, for a flag it does not know, the flag it is closest to,
    instead of the whole usage (which --help prints); hint is added to an unknown flag's message."""

    hint = ""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments: "):
            known = [o for action in self._actions for o in action.option_strings if o.startswith("--")]
            guesses = [(w, difflib.get_close_matches(w.split("=", 1)[0], known, n=1, cutoff=0.6))
                       for w in message.removeprefix("unrecognized arguments: ").split() if w.startswith("-")]
            message += self.hint or "".join(f"; {w.split('=', 1)[0]}: did you mean {g[0]}?" for w, g in guesses if g)
        run = f"python {self.prog}" if self.prog.endswith(".py") else self.prog
        self.exit(2, f"{self.prog}: error: {message} ({run} --help lists every flag)\n")


def article_parser() -> Parser:
    """The article's flags: the ones its script has, and where the files are."""
    parser = Parser(prog="benchmark.py", allow_abbrev=False,
                    description="The article's measurement: the graph in five formats, proven to round-trip, with its "
                                "prompts and token counts.",
                    epilog=f"exit codes: 0 done; 2 bad input or flags, nothing written. Every other flag is run by the {PACKAGE} "
                           "package, which is not beside this copy of benchmark.py.")
    parser.hint = (f" (this copy of benchmark.py runs the article's measurement alone; the {PACKAGE} package, which is not "
                   "beside it, runs every other flag)")
    add = parser.add_argument
    add("--encoding", default="o200k_base", help="tiktoken encoding (default: o200k_base)")
    add("--graph", type=Path, default=DATA / "graph.json", help="graph file, JSON (default: data/graph.json)")
    add("--questions", type=Path, default=DEFAULT_QUESTIONS, help="questions file (default: data/questions.json)")
    add("--out", type=Path, default=OUTPUTS, help="output folder (default: outputs/)")
    return parser


def measure_article(inputs: RunInputs, tokenizer: Tokenizer, counts: TokenCounts, add_file: Callable[[str, bytes], None]
                    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows of size_report.json for the article's run (4.1, 4.2, 7.1) and prompt_files' answer: the whole graph in
    each format, proven to round-trip, before every question; graph and prompt files go to add_file as they are made."""
    graph, questions = inputs.graph, inputs.questions
    order_sha256 = sha256_hex(json_bytes(list(range(len(graph.edges)))))  # the file's own order, as the package names it
    texts = [FormattedGraph(ARTICLE_TEMPLATE, fmt, serialize_checked(fmt, graph)) for fmt in ARTICLE_FORMATS]
    prompts = prompt_files(texts, questions, ARTICLE_TEMPLATE)
    rows = []
    for text in texts:
        add_file(f"graph.{text.fmt}.txt", text.text.encode("utf-8"))
        graph_tokens = text.graph_tokens(counts, tokenizer)
        for q in questions:
            if prompts["write"]:
                add_file(f"prompt.{text.fmt}.{q.id}.txt", text.prompt(q.question).encode("utf-8"))
            rows.append(size_report_row(text, q, tokenizer, graph_tokens=graph_tokens, prompt_tokens=text.tokens(counts, tokenizer, q.question),
                                        prompt_sha256=text.prompt_sha256(q.question), order_sha256=order_sha256, edges=len(graph.edges),
                                        answerable=True if q.query else None))  # mode A shows every edge of the gold paths
    return rows, prompts


def article_run(args: argparse.Namespace, argv: list[str]) -> str:
    """The article's run into --out, published whole or not at all; returns the console table."""
    if args.graph.suffix.lower() not in ("", ".json"):
        raise BenchmarkError(f"{display(args.graph)}: this copy of benchmark.py reads a JSON graph; the {PACKAGE} package reads "
                             "other graph files (TSV/CSV triples, RDF, GraphML, Neo4j)")
    inputs = load_inputs(args.graph, args.questions)
    given = next((q.id for q in inputs.questions if q.context), None)
    if given is not None:
        raise BenchmarkError(f"{inputs.questions_file}: question {given} gives its own context; contexts are measured by the "
                             f"{PACKAGE} package, which is not beside this copy of benchmark.py")
    tokenizer = load_tokenizer(args.encoding)
    staging = Staging(args.out)
    try:
        rows, prompts = measure_article(inputs, tokenizer, TokenCounts(), staging.add)
        staging.add("size_report.json", json_bytes(rows))
        config = {"argv": argv, "encodings": [tokenizer.name], "graph": display(args.graph), "graph_format": "json",
                  "questions": display(args.questions), "out": display(args.out), "formats": list(ARTICLE_FORMATS),
                  "sizes": ["small"], "ids": ["original"], "permutations": 1, "budget": None, "context_window": CONTEXT_WINDOW,
                  "prompt": {"template": ARTICLE_TEMPLATE.name, "sha256": ARTICLE_TEMPLATE.sha256}, "write_prompts": prompts}
        preflight = {"questions": question_counts(inputs.questions),
                     "not_run": f"the control solver (article 8.5) and the leakage checks (8.3) run with the {PACKAGE} package"}
        publish(staging, build_manifest(config, [tokenizer], inputs, staging.sha, preflight, argv, {}))
    except BaseException:
        staging.discard()
        raise
    return console_table(rows, list(ARTICLE_FORMATS))


def main(argv: list[str] | None = None) -> int:
    """The command line. With the package beside this file (or installed), it runs every flag: the one hand-off."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if importlib.util.find_spec(PACKAGE) is not None:
        return cast(int, importlib.import_module(f"{PACKAGE}.cli").main(argv))
    args = article_parser().parse_args(argv)
    if tiktoken is None:
        print(f"error: {missing_tiktoken(ROOT, sys.executable)}", file=sys.stderr)
        return 2
    try:
        print(article_run(args, argv))
    except BenchmarkError as e:
        for line in getattr(e, "lines", [str(e)]):
            print(f"error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
