"""graphrag-format-benchmark: which serialization of a retrieved subgraph gives the best answers per token.

    $ python benchmark.py --encoding o200k_base

reads data/graph.json and data/questions.json, writes the graph in five formats (json, jsonl, tsv,
edge_list, dsl), proves that each one parses back to the same graph (the round-trip check), builds one
prompt per format and question, counts tokens with tiktoken and writes, into outputs/:

    graph.<format>.txt          the serialized graph (NFC, no trailing newline)
    prompt.<format>.<qid>.txt   the full prompt for one question
    size_report.json            one row per format and question: bytes, graph and prompt tokens
    manifest.json               how the run was made: versions, flags, SHA-256 of every input and output

This is the measurement of the article "Как формат графа влияет на стоимость и точность GraphRAG"
(sections 3-8). Its data, prompt template and the bytes of its five formats are protocol: on the
article's data every file above except manifest.json is byte-identical to what its script writes.
The code is ours. Where the article's script was loose we are strict, on purpose:
- values that contain a format's own delimiters are escaped (edge_list, dsl) or quoted (tsv), so any
  graph the validator accepts round-trips; the article's data contains none, so its bytes do not move;
- input is validated up front (one-line errors, exit code 2) and outputs appear only when a run
  succeeds; nothing is written if any check fails;
- tokens are counted with encode_ordinary: text that looks like a special token ("<|endoftext|>")
  is counted as the ordinary text an API would see, instead of crashing the run.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, NamedTuple

try:
    import tiktoken
except ImportError:  # main() says how to install it, instead of a traceback
    tiktoken = None

# -----------------------------------------------------------------------------
# constants and the prompt template

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data"
OUTPUTS = ROOT / "outputs"
TIKTOKEN_DIR = DATA / "tiktoken"  # shipped BPE files, named as tiktoken's cache names them

MANIFEST_SCHEMA_VERSION = 1
NORMALIZATION = "NFC"
PROMPT_SCOPE = (
    "prompt_tokens: the whole prompt text (instruction, answer schema, graph, question) as one "
    "user message; no system message; chat framing tokens not counted"
)

# The article's prompt, byte for byte (section 6, build_prompt).
PROMPT_TEMPLATE = """Ты выполняешь точный обход направленного графа.

Формат графа: {format_name}.
Используй только явно записанные рёбра.
Не обращай направление связи.
Не добавляй отсутствующие факты.
Если полного пути нет, верни INSUFFICIENT_DATA.

Верни только JSON:
{{
  "answer": "краткий ответ или INSUFFICIENT_DATA",
  "path": [индексы рёбер по порядку],
  "evidence": [
    {{"source":"id","relation":"TYPE","target":"id"}}
  ]
}}

ГРАФ
{graph}

ВОПРОС
{question}
"""


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


@dataclass(frozen=True)
class Graph:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]  # order matters: question paths index into it


@dataclass(frozen=True)
class Question:
    id: str  # safe as part of a file name
    question: str  # the text put into the prompt
    answer: str  # gold short answer, or INSUFFICIENT_DATA
    path: tuple[int, ...]  # gold path as indices into Graph.edges of the input graph
    insufficient: bool  # True: the right answer is to abstain


# -----------------------------------------------------------------------------
# load and validate the inputs


def display(path: Path) -> str:
    """Path as a user reads it in a message: relative to the current folder when it is inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        key = next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise BenchmarkError(f"key {key!r} appears twice in one object")
    return result


def read_json(path: Path, flag: str) -> tuple[object, bytes]:
    """Parsed JSON and the raw bytes (for the manifest's SHA-256) of an input file."""
    where = display(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise BenchmarkError(f"{where}: cannot read it ({e.strerror}); pass a readable file with {flag}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BenchmarkError(f"{where}: the byte at offset {e.start} is not UTF-8; save the file as UTF-8") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys), raw
    except json.JSONDecodeError as e:
        raise BenchmarkError(f"{where}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}; fix the file") from None
    except BenchmarkError as e:
        raise BenchmarkError(f"{where}: {e}; keep one value per key") from None
    except RecursionError:
        raise BenchmarkError(f"{where}: JSON nested too deeply; fix the file") from None


def check_text(value: object, where: str) -> str:
    """A string that every format can carry exactly: UTF-8 encodable and already in NFC."""
    if not isinstance(value, str):
        shown = json.dumps(value, ensure_ascii=False)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise BenchmarkError(f"{where} is {shown}, expected a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise BenchmarkError(f"{where} contains the lone surrogate U+{ord(value[e.start]):04X}; fix the string") from None
    if not unicodedata.is_normalized(NORMALIZATION, value):
        raise BenchmarkError(
            f"{where} is not in Unicode {NORMALIZATION} form; normalize the file to {NORMALIZATION} "
            "(formats are compared code point for code point)"
        )
    return value


def _record(item: object, where: str, fields: tuple[str, ...], kind: str) -> tuple[str, ...]:
    if not isinstance(item, dict):
        raise BenchmarkError(f"{where} is not a JSON object; each {kind} is {{{', '.join(map(repr, fields))}}}")
    for field in fields:
        if field not in item:
            raise BenchmarkError(f"{where} has no {field!r}; each {kind} needs string fields {', '.join(fields)}")
    return tuple(check_text(item[field], f"{where}.{field}") for field in fields)


def validate_graph(data: object, src: str) -> Graph:
    """Graph from parsed graph.json: {"nodes": [{id, name, type}], "edges": [{source, relation, target}]}."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list) or not isinstance(data.get("edges"), list):
        raise BenchmarkError(f'{src}: expected a JSON object with "nodes" and "edges" lists')
    nodes, first_index = [], {}  # node id -> index of the node that defines it
    extra = set()
    for i, item in enumerate(data["nodes"]):
        node = Node(*_record(item, f"{src}: nodes[{i}]", Node._fields, "node"))
        if node.id in first_index:
            raise BenchmarkError(
                f"{src}: nodes[{i}].id {node.id!r} duplicates nodes[{first_index[node.id]}]; node ids must be unique"
            )
        first_index[node.id] = i
        nodes.append(node)
        extra |= item.keys() - set(Node._fields)
    edges = []
    for i, item in enumerate(data["edges"]):
        edge = Edge(*_record(item, f"{src}: edges[{i}]", Edge._fields, "edge"))
        for end in ("source", "target"):
            if getattr(edge, end) not in first_index:
                raise BenchmarkError(
                    f"{src}: edges[{i}].{end} {getattr(edge, end)!r} is not a node id; add that node or fix the edge"
                )
        edges.append(edge)
        extra |= item.keys() - set(Edge._fields)
    if extra:
        warn(f"{src}: fields {', '.join(sorted(extra))} are not carried by the formats and are ignored")
    return Graph(tuple(nodes), tuple(edges))


UNSAFE_IN_FILE_NAMES = '/\\:*?"<>|'


def check_question_id(qid: str, where: str) -> None:
    bad = [c for c in qid if c in UNSAFE_IN_FILE_NAMES or unicodedata.category(c) == "Cc"]
    if not qid or bad or ".." in qid or qid.startswith("."):
        reason = f"contains {bad[0]!r}" if bad else "is empty" if not qid else "starts with '.' or contains '..'"
        raise BenchmarkError(
            f"{where}.id {qid!r} {reason}, but it becomes part of a file name (prompt.<format>.<id>.txt); "
            "use letters, digits, '_' and '-'"
        )


def validate_questions(data: object, src: str, graph: Graph) -> tuple[Question, ...]:
    """Questions from parsed questions.json: [{id, question, answer, path, insufficient}]."""
    if not isinstance(data, list):
        raise BenchmarkError(f"{src}: expected a JSON list of questions")
    questions, seen = [], {}
    n_edges = len(graph.edges)
    for i, item in enumerate(data):
        where = f"{src}: questions[{i}]"
        qid, text, answer = _record(item, where, ("id", "question", "answer"), "question")
        check_question_id(qid, where)
        if qid in seen:
            raise BenchmarkError(f"{where}.id {qid!r} duplicates questions[{seen[qid]}]; question ids must be unique")
        seen[qid] = i
        path = item.get("path")
        if not isinstance(path, list) or not all(type(x) is int for x in path):
            raise BenchmarkError(f"{where}.path must be a list of edge indices (integers), e.g. [0, 3, 6]")
        for j, index in enumerate(path):
            if not 0 <= index < n_edges:
                raise BenchmarkError(
                    f"{where}.path[{j}] = {index} is out of range: the graph has {n_edges} edges, "
                    f"indices 0..{n_edges - 1}; fix the path"
                )
        insufficient = item.get("insufficient")
        if type(insufficient) is not bool:
            raise BenchmarkError(f"{where}.insufficient must be true or false")
        questions.append(Question(qid, text, answer, tuple(path), insufficient))
    return tuple(questions)


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


# -----------------------------------------------------------------------------
# formats: one serializer and one parser each, registered in FORMATS at the end
#
# Parsers read only what the serializers write; anything else raises BenchmarkError naming the line.
# The line-based formats split on "\n" alone (str.splitlines would also split on U+2028, \x85, ...).


def _fail(fmt: str, line_no: int, message: str) -> BenchmarkError:
    return BenchmarkError(f"{fmt} line {line_no}: {message}")


def _graph_dict(graph: Graph) -> dict:
    return {"nodes": [n._asdict() for n in graph.nodes], "edges": [e._asdict() for e in graph.edges]}


def _from_records(fmt: str, records: object) -> Graph:
    """Graph from the parsed JSON of the json format, checking its exact shape."""
    if not isinstance(records, dict) or set(records) != {"nodes", "edges"}:
        raise _fail(fmt, 1, 'expected an object with exactly "nodes" and "edges"')
    parts = []
    for key, cls in (("nodes", Node), ("edges", Edge)):
        items = records[key]
        if not isinstance(items, list):
            raise _fail(fmt, 1, f"{key!r} is not a list")
        for i, item in enumerate(items):
            if not isinstance(item, dict) or set(item) != set(cls._fields) or not all(isinstance(v, str) for v in item.values()):
                raise _fail(fmt, 1, f"{key}[{i}] is not an object of string fields {', '.join(cls._fields)}")
        parts.append(tuple(cls(**item) for item in items))
    return Graph(*parts)


def serialize_json(graph: Graph) -> str:
    return json.dumps(_graph_dict(graph), ensure_ascii=False, indent=2, sort_keys=True)


def parse_json(text: str) -> Graph:
    try:
        return _from_records("json", json.loads(text))
    except json.JSONDecodeError as e:
        raise _fail("json", e.lineno, e.msg) from None


# jsonl: {"k":"n","i":id,"n":name,"t":type} and {"k":"e","s":source,"r":relation,"t":target}, one per line
JSONL_NODE_KEYS = ("k", "i", "n", "t")
JSONL_EDGE_KEYS = ("k", "s", "r", "t")


def _json_line(values: dict) -> str:
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def serialize_jsonl(graph: Graph) -> str:
    lines = [_json_line({"k": "n", "i": n.id, "n": n.name, "t": n.type}) for n in graph.nodes]
    lines += [_json_line({"k": "e", "s": e.source, "r": e.relation, "t": e.target}) for e in graph.edges]
    return "\n".join(lines)


def parse_jsonl(text: str) -> Graph:
    nodes, edges = [], []
    for line_no, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            raise _fail("jsonl", line_no, e.msg) from None
        kind = item.get("k") if isinstance(item, dict) else None
        keys = JSONL_NODE_KEYS if kind == "n" else JSONL_EDGE_KEYS if kind == "e" else None
        if keys is None or tuple(item) != keys or not all(isinstance(v, str) for v in item.values()):
            raise _fail("jsonl", line_no, 'expected {"k":"n","i","n","t"} or {"k":"e","s","r","t"} with string values')
        if kind == "n":
            nodes.append(Node(item["i"], item["n"], item["t"]))
        else:
            edges.append(Edge(item["s"], item["r"], item["t"]))
    return Graph(tuple(nodes), tuple(edges))


# tsv: a header, then node and edge rows in four columns. A field holding a tab, quote, \n or \r is
# quoted as csv.QUOTE_MINIMAL does (csv.writer itself leaves a lone \r unquoted with lineterminator
# "\n", which its reader then rejects, so we quote by hand).
TSV_HEADER = ("kind", "id/source", "name/relation", "type/target")


def _tsv_field(value: str) -> str:
    if any(c in value for c in '\t"\n\r'):
        return '"' + value.replace('"', '""') + '"'
    return value


def serialize_tsv(graph: Graph) -> str:
    rows = [TSV_HEADER]
    rows += [("node", *n) for n in graph.nodes]
    rows += [("edge", *e) for e in graph.edges]
    return "\n".join("\t".join(map(_tsv_field, row)) for row in rows)


def parse_tsv(text: str) -> Graph:
    nodes, edges = [], []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", strict=True)
    try:
        header = next(reader, None)
        if tuple(header or ()) != TSV_HEADER:
            raise _fail("tsv", 1, f"expected the header {chr(9).join(TSV_HEADER)!r}")
        for row in reader:
            if len(row) != 4 or row[0] not in ("node", "edge"):
                raise _fail("tsv", reader.line_num, "expected 4 tab-separated fields starting with node or edge")
            (nodes if row[0] == "node" else edges).append((Node if row[0] == "node" else Edge)(*row[1:]))
    except csv.Error as e:
        raise _fail("tsv", reader.line_num, str(e)) from None
    return Graph(tuple(nodes), tuple(edges))


# edge_list and dsl: '|'-separated fields with backslash escapes. "\\" stands for a backslash, "\n"
# and "\r" for newline and carriage return, and a backslash before any other character makes that
# character literal ("\|" is a pipe inside a value). Values without these characters are unchanged.


def _escape(value: str, specials: str = "") -> str:
    value = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    for c in specials:
        value = value.replace(c, "\\" + c)
    return value


def _lex(fmt: str, line_no: int, line: str) -> list[tuple[str, bool]]:
    """Characters of an escaped line as (char, literal): 'a\\|b' -> [('a', F), ('|', T), ('b', F)]."""
    out, i = [], 0
    while i < len(line):
        c = line[i]
        if c != "\\":
            out.append((c, False))
            i += 1
            continue
        if i + 1 == len(line):
            raise _fail(fmt, line_no, "line ends with a lone backslash")
        nxt = line[i + 1]
        out.append(({"n": "\n", "r": "\r"}.get(nxt, nxt), True))
        i += 2
    return out


def _text(chars: list[tuple[str, bool]]) -> str:
    return "".join(c for c, _ in chars)


def _split_fields(fmt: str, line_no: int, chars: list[tuple[str, bool]], count: int) -> list[str]:
    fields, current = [], []
    for c, literal in chars:
        if c == "|" and not literal:
            fields.append(_text(current))
            current = []
        else:
            current.append((c, literal))
    fields.append(_text(current))
    if len(fields) != count:
        raise _fail(fmt, line_no, f"expected {count} '|'-separated fields, found {len(fields)}")
    return fields


def _pipe_row(values: tuple[str, ...]) -> str:
    return "|".join(_escape(v, "|") for v in values)


# edge_list: "NODES", id|name|type lines, "EDGES", then "source -RELATION-> target" lines. In an edge
# line the source escapes the '-' of " -" and the relation the '-' of "->", so the first unescaped
# " -" and the next unescaped "-> " are the arrow; the target needs no escapes beyond the common ones.


def serialize_edge_list(graph: Graph) -> str:
    lines = ["NODES", *(_pipe_row(n) for n in graph.nodes), "EDGES"]
    for e in graph.edges:
        source = _escape(e.source).replace(" -", " \\-")
        relation = _escape(e.relation).replace("->", "\\->")
        lines.append(f"{source} -{relation}-> {_escape(e.target)}")
    return "\n".join(lines)


def _parse_arrow(line_no: int, chars: list[tuple[str, bool]]) -> Edge:
    raw = [None if literal else c for c, literal in chars]  # unescaped characters, None where escaped
    dash = next((i for i in range(1, len(raw)) if raw[i] == "-" and raw[i - 1] == " "), None)
    if dash is None:
        raise _fail("edge_list", line_no, "expected 'source -RELATION-> target' (no ' -' found)")
    head = next((i for i in range(dash + 1, len(raw) - 2) if raw[i : i + 3] == ["-", ">", " "]), None)
    if head is None:
        raise _fail("edge_list", line_no, "expected 'source -RELATION-> target' (no '-> ' found)")
    return Edge(_text(chars[: dash - 1]), _text(chars[dash + 1 : head]), _text(chars[head + 3 :]))


def parse_edge_list(text: str) -> Graph:
    nodes, edges, section = [], [], None
    for line_no, line in enumerate(text.split("\n"), 1):
        if line in ("NODES", "EDGES"):
            section = line
        elif not line:
            continue
        elif section == "NODES":
            nodes.append(Node(*_split_fields("edge_list", line_no, _lex("edge_list", line_no, line), 3)))
        elif section == "EDGES":
            edges.append(_parse_arrow(line_no, _lex("edge_list", line_no, line)))
        else:
            raise _fail("edge_list", line_no, "record before the NODES line")
    return Graph(tuple(nodes), tuple(edges))


# dsl: two comment lines with the grammar, "@ id|name|type" per node, "> source|relation|target" per edge.
DSL_HEADER = ("# @ id|name|type", "# > source|relation|target")


def serialize_dsl(graph: Graph) -> str:
    lines = [*DSL_HEADER]
    lines += ["@ " + _pipe_row(n) for n in graph.nodes]
    lines += ["> " + _pipe_row(e) for e in graph.edges]
    return "\n".join(lines)


def parse_dsl(text: str) -> Graph:
    nodes, edges = [], []
    for line_no, line in enumerate(text.split("\n"), 1):
        if not line or line.startswith("#"):
            continue
        marker, payload = line[:2], line[2:]
        if marker not in ("@ ", "> "):
            raise _fail("dsl", line_no, f"unknown marker {line[:2]!r}; lines start with '@ ', '> ' or '#'")
        fields = _split_fields("dsl", line_no, _lex("dsl", line_no, payload), 3)
        (nodes if marker == "@ " else edges).append((Node if marker == "@ " else Edge)(*fields))
    return Graph(tuple(nodes), tuple(edges))


# name -> (serialize, parse). The order is the report order; the article's five come first.
FORMATS: dict[str, tuple[Callable[[Graph], str], Callable[[str], Graph]]] = {
    "json": (serialize_json, parse_json),
    "jsonl": (serialize_jsonl, parse_jsonl),
    "tsv": (serialize_tsv, parse_tsv),
    "edge_list": (serialize_edge_list, parse_edge_list),
    "dsl": (serialize_dsl, parse_dsl),
}
ARTICLE_FORMATS = ("json", "jsonl", "tsv", "edge_list", "dsl")

# -----------------------------------------------------------------------------
# round-trip check (article 4.3, 8.1): what a format writes must parse back to the same graph


def first_difference(expected: Graph, actual: Graph) -> str | None:
    """The first record whose count differs between two graphs (as multisets), or None if they are equal."""
    for label, want, got in (("node", expected.nodes, actual.nodes), ("edge", expected.edges, actual.edges)):
        want_count, got_count = Counter(want), Counter(got)
        if want_count == got_count:
            continue
        for record in (*want, *got):
            if want_count[record] != got_count[record]:
                return (
                    f"{label} {tuple(record)!r} appears {want_count[record]} time(s) in the input "
                    f"and {got_count[record]} time(s) after parsing"
                )
    return None


def serialize_checked(fmt: str, graph: Graph) -> str:
    """The graph in format fmt, NFC-normalized, after proving it parses back to the same graph."""
    serialize, parse = FORMATS[fmt]
    text = unicodedata.normalize(NORMALIZATION, serialize(graph))
    try:
        difference = first_difference(graph, parse(text))
    except BenchmarkError as e:
        difference = f"its own output does not parse ({e})"
    if difference:
        raise BenchmarkError(f"round-trip check failed for format {fmt}: {difference}; nothing was written")
    return text


# -----------------------------------------------------------------------------
# prompts


def build_prompt(graph_text: str, question: str, format_name: str) -> str:
    return PROMPT_TEMPLATE.format(format_name=format_name, graph=graph_text, question=question)


def sha256_hex(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


# -----------------------------------------------------------------------------
# tokenizers: tiktoken, offline
#
# tiktoken downloads an encoding's BPE file on first use and caches it under TIKTOKEN_CACHE_DIR as
# sha1(url). The files of o200k_base and cl100k_base ship in data/tiktoken under those names, so a
# fresh clone counts tokens with no network. A user's own TIKTOKEN_CACHE_DIR that holds the file wins.

# encoding -> (url of its BPE file, SHA-256 that tiktoken checks), as in tiktoken_ext/openai_public.py
BPE_FILES = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
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


@dataclass(frozen=True)
class Tokenizer:
    name: str  # tiktoken encoding name
    encoding: tiktoken.Encoding
    bpe_sha256: str | None  # SHA-256 of the BPE file, None when tiktoken does not tell us
    bpe_source: str  # where the BPE file came from

    def count(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))


def load_tokenizer(name: str) -> Tokenizer:
    known = tiktoken.list_encoding_names()
    if name not in known:
        raise BenchmarkError(f"unknown encoding {name!r} in --encoding; tiktoken knows {', '.join(known)}")
    url, sha = BPE_FILES.get(name, (None, None))
    user_dir = os.environ.get("TIKTOKEN_CACHE_DIR")
    key = bpe_cache_name(url) if url else None
    shipped = TIKTOKEN_DIR / key if key else None
    if shipped and shipped.is_file() and not (user_dir and (Path(user_dir) / key).is_file()):
        actual = sha256_hex(shipped.read_bytes())
        if actual != sha:
            raise BenchmarkError(
                f"{display(shipped)} ({name}) has SHA-256 {actual}, tiktoken expects {sha}; restore it with "
                f"'git checkout -- {display(shipped)}' (it is stored as binary, see .gitattributes)"
            )
        # tiktoken reads TIKTOKEN_CACHE_DIR on each load; point it at our files for this call only.
        os.environ["TIKTOKEN_CACHE_DIR"] = str(TIKTOKEN_DIR)
        try:
            encoding = tiktoken.get_encoding(name)
        finally:
            if user_dir is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = user_dir
        return Tokenizer(name, encoding, sha, f"data/tiktoken/{key}")
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
    return Tokenizer(name, encoding, sha, source)


# -----------------------------------------------------------------------------
# the size report (article section 6 and 7.1)


@dataclass(frozen=True)
class RunInputs:
    graph: Graph
    questions: tuple[Question, ...]
    files: dict  # display path -> raw bytes, for the manifest


def load_inputs(graph_path: Path, questions_path: Path) -> RunInputs:
    graph_data, graph_raw = read_json(graph_path, "--graph")
    graph = validate_graph(graph_data, display(graph_path))
    questions_data, questions_raw = read_json(questions_path, "--questions")
    questions = validate_questions(questions_data, display(questions_path), graph)
    return RunInputs(graph, questions, {display(graph_path): graph_raw, display(questions_path): questions_raw})


def size_report(inputs: RunInputs, formats: list[str], tokenizer: Tokenizer) -> tuple[list[dict], dict[str, bytes]]:
    """Rows of size_report.json and the files to write (name -> bytes), for one graph and encoding."""
    rows, files = [], {}
    library = f"tiktoken {tiktoken.__version__}"
    for fmt in formats:
        text = serialize_checked(fmt, inputs.graph)
        data = text.encode("utf-8")
        files[f"graph.{fmt}.txt"] = data
        graph_tokens, graph_sha = tokenizer.count(text), sha256_hex(data)
        for q in inputs.questions:
            prompt = build_prompt(text, q.question, fmt)
            files[f"prompt.{fmt}.{q.id}.txt"] = prompt.encode("utf-8")
            rows.append(
                {
                    "format": fmt,
                    "question_id": q.id,
                    "bytes": len(data),
                    "graph_tokens": graph_tokens,
                    "prompt_tokens": tokenizer.count(prompt),
                    "roundtrip_ok": True,  # serialize_checked raised otherwise
                    "graph_sha256": graph_sha,
                    "encoding": tokenizer.name,
                    "prompt_sha256": sha256_hex(prompt),
                    "tokenizer": library,
                    "normalization": NORMALIZATION,
                    "prompt_scope": PROMPT_SCOPE,
                }
            )
    files["size_report.json"] = (json.dumps(rows, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    return rows, files


def console_table(rows: list[dict], formats: list[str]) -> str:
    """The article's console table: format, graph tokens, min and max prompt tokens."""
    lines = ["format\tgraph_tokens\tprompt_tokens_min\tprompt_tokens_max"]
    for fmt in formats:
        mine = [r for r in rows if r["format"] == fmt]
        if mine:
            prompt_tokens = [r["prompt_tokens"] for r in mine]
            lines.append(f"{fmt}\t{mine[0]['graph_tokens']}\t{min(prompt_tokens)}\t{max(prompt_tokens)}")
    return "\n".join(lines)


# -----------------------------------------------------------------------------
# artifacts: written only when the whole run succeeded, never mixed with an earlier run's
#
# Files go to a staging folder inside the output folder first. Then the old manifest.json is removed,
# each file is moved into place (os.replace is atomic per file), files that the previous manifest
# listed and this run does not write are removed, and the new manifest.json is moved in last: a folder
# with a manifest holds exactly one run's files, and one without it is incomplete.

MANIFEST = "manifest.json"


def git_state() -> dict:
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


def build_manifest(config: dict, tokenizers: list[Tokenizer], inputs: RunInputs, files: dict[str, bytes]) -> dict:
    return {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "tool": "graphrag-format-benchmark",
        "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git": git_state(),
        "environment": {
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
            "platform": platform.platform(),
            "tiktoken": tiktoken.__version__,
        },
        "command": ["benchmark.py", *config["argv"]],
        "config": {k: v for k, v in config.items() if k != "argv"},
        "encodings": [
            {"name": t.name, "bpe_sha256": t.bpe_sha256, "bpe_source": t.bpe_source} for t in tokenizers
        ],
        "measurement": {"normalization": NORMALIZATION, "graph_tokens": "the serialized graph alone", "prompt_scope": PROMPT_SCOPE},
        "inputs": {name: {"sha256": sha256_hex(raw), "bytes": len(raw)} for name, raw in sorted(inputs.files.items())},
        "outputs": {name: sha256_hex(data) for name, data in sorted(files.items())},
    }


def _previous_outputs(out_dir: Path) -> list[str]:
    try:
        previous = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
        names = list(previous["outputs"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [n for n in names if isinstance(n, str) and "/" not in n and "\\" not in n and not n.startswith(".")]


def publish(out_dir: Path, files: dict[str, bytes], manifest: dict) -> None:
    """Write files and the manifest into out_dir, replacing the previous run's files as a whole."""
    staging = None
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        stale = [n for n in _previous_outputs(out_dir) if n not in files]
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=out_dir))
        for name, data in files.items():
            (staging / name).write_bytes(data)
        (staging / MANIFEST).write_bytes((json.dumps(manifest, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        (out_dir / MANIFEST).unlink(missing_ok=True)
        for name in files:
            os.replace(staging / name, out_dir / name)
        for name in stale:
            (out_dir / name).unlink(missing_ok=True)
        os.replace(staging / MANIFEST, out_dir / MANIFEST)
    except OSError as e:
        raise BenchmarkError(f"{display(out_dir)}: cannot write the outputs ({e}); choose another folder with --out") from None
    finally:
        if staging is not None:
            for leftover in staging.glob("*"):
                leftover.unlink(missing_ok=True)
            staging.rmdir()


# -----------------------------------------------------------------------------
# command line


def parse_names(value: str, known: list[str] | tuple[str, ...], flag: str) -> list[str]:
    """Comma-separated names, each known and listed once: 'json,dsl' -> ['json', 'dsl']."""
    names = [v.strip() for v in value.split(",")]
    for name in names:
        if name not in known:
            raise BenchmarkError(f"unknown name {name!r} in {flag}; choose from {', '.join(known)}")
    if len(set(names)) != len(names):
        raise BenchmarkError(f"{flag} lists a name twice: {value!r}")
    return names


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="benchmark.py",
        description="Serialize a graph in several formats, check each round-trips, build prompts, count tokens.",
    )
    parser.add_argument("--encoding", default="o200k_base", help="tiktoken encoding (default: o200k_base)")
    parser.add_argument("--graph", type=Path, default=DATA / "graph.json", help="graph file (default: data/graph.json)")
    parser.add_argument(
        "--questions", type=Path, default=DATA / "questions.json", help="questions file (default: data/questions.json)"
    )
    parser.add_argument("--out", type=Path, default=OUTPUTS, help="output folder (default: outputs/)")
    parser.add_argument(
        "--formats",
        default=",".join(ARTICLE_FORMATS),
        help=f"comma-separated formats, in report order (default: {','.join(ARTICLE_FORMATS)}; known: {','.join(FORMATS)})",
    )
    return parser


def run(args: argparse.Namespace, argv: list[str]) -> str:
    """Do the whole run; return what goes to stdout."""
    formats = parse_names(args.formats, list(FORMATS), "--formats")
    inputs = load_inputs(args.graph, args.questions)
    tokenizer = load_tokenizer(args.encoding)
    rows, files = size_report(inputs, formats, tokenizer)
    config = {
        "argv": argv,
        "encoding": args.encoding,
        "graph": display(args.graph),
        "questions": display(args.questions),
        "out": display(args.out),
        "formats": formats,
    }
    publish(args.out, files, build_manifest(config, [tokenizer], inputs, files))
    return console_table(rows, formats)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = make_parser().parse_args(argv)
    if tiktoken is None:
        print("error: the tiktoken package is not installed; run: pip install -r requirements.lock.txt", file=sys.stderr)
        return 2
    try:
        print(run(args, argv))
    except BenchmarkError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
