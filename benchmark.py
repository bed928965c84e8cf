"""graphrag-format-benchmark: which serialization of a retrieved subgraph gives the best answers per token.

    $ python benchmark.py --encoding o200k_base

reads data/graph.json and data/questions.json, writes the graph in five formats (json, jsonl, tsv,
edge_list, dsl), proves that each one parses back to the same graph (the round-trip check), builds one
prompt per format and question, counts tokens with tiktoken and writes, into outputs/:

    graph.<format>.txt          the serialized graph (NFC, no trailing newline)
    prompt.<format>.<qid>.txt   the full prompt for one question
    size_report.json            one row per format and question: bytes, graph and prompt tokens
    report.html                 one page to look at: sizes, where the tokens go, one question in every format
    manifest.json               how the run was made: versions, flags, SHA-256 of every input and output

This is the measurement of the article "Как формат графа влияет на стоимость и точность GraphRAG"
(sections 3-8). Its data, prompt template and the bytes of its five formats are protocol: on the
article's data every file above except manifest.json and report.html is byte-identical to what its script writes.
Opt-in flags run the rest of the article's protocol on the same script:

    $ python benchmark.py --sizes small,medium,large --ids original,short --permutations 5 --budget 8000
    $ python benchmark.py --model gpt-4o-mini            # or --base-url of any OpenAI-compatible server
    $ python benchmark.py --model solver                 # the control solver answers: offline, known scores

The first adds distractor graphs, short ids, edge permutations and equal-budget packing, all proven by
a control solver and leakage checks before anything is measured (size_report.md, size_summary.json);
the others send every prompt to a model, log each answer as it arrives (requests.jsonl, resumable) and
score answers and paths from that log alone (results.json, results.md).

Real knowledge graphs work too: untyped triples in any language, with properties on nodes and edges,
read from JSON, TSV/CSV triples, RDF, GraphML or a Neo4j export (--graph, --graph-format); questions with
several acceptable answers or gold paths (answers, answer_ids, paths), conditions on hops and properties
asked for, or drawn from the graph (--generate-questions); a context per question as a GraphRAG prompt has
it (given by the questions file, or cut by --context khop); --prompt en or a template file of your own,
--skip-invalid-questions to drop the questions that fail a check. Model runs end in a decision: verdicts against a baseline format (--baseline, --tolerance),
results per hop count, and SVG charts (results.svg, size_report.svg).

The code is ours. Where the article's script was loose we are strict, on purpose:
- values that contain a format's own delimiters are escaped (edge_list, dsl, pipe_table) or quoted
  (tsv), so any graph the validator accepts round-trips; the article's data contains none, so its
  bytes do not move;
- everything is checked before the first token is counted (records, the control solver, leakage), and
  every problem is reported at once (one line each, exit code 2); outputs appear only when a run
  succeeds, except the model log, which is append-only;
- tokens are counted with encode_ordinary: text that looks like a special token ("<|endoftext|>")
  is counted as the ordinary text an API would see, instead of crashing the run; a prompt is counted
  by parts at a boundary proven for tiktoken's patterns, so a graph is tokenized once per format.

Sections, in the order data flows through them:
  constants and the prompt templates   the article's prompt (ru) and its English rendering (en); path lines
  data types                           Node, Edge, Graph (edge ids, properties), GroupKey, Condition, Hop, Ask,
                                       Query, GivenContext, Question
  shared helpers                       whole words (mentioned: many at once), leaky id markers, hop buckets;
                                       untrusted JSON (depth-guarded), inputs that must be regular files
  load and validate the inputs         Problems, graph files (read_graph_file: JSON, triples, RDF, GraphML,
                                       Neo4j), graph.json (a sound file checked at once, else record by
                                       record), properties, questions.json with contexts, NFC, sorted_graph
  formats                              serializer and parser pairs, registered in FORMATS; properties in each
                                       (scalar_text where a format has no types); yaml joined record by record
                                       from cached PyYAML scalars (emoji kept, YAML 1.2 numbers quoted)
  round-trip check                     every format parses back to the same graph; another edge order's Turtle
                                       or YAML text proven from its parts (check_roundtrip_once)
  control solver                       complete walks of a query (conditions, asks); check_questions says what
                                       disagrees; generated question sets (--generate-questions), near-miss
                                       abstentions, questions about properties; their wording (Wording: natural
                                       from relation phrases, Phrase kinds, --relation-phrases; or templated)
  graph variants                       Context (shared, given, KHop), drawn distractors (KIND_POOLS and
                                       head_words for one-word names, Vocabulary, WordModel, English word
                                       pools, Namer with id_template, Distractors), short ids,
                                       Pseudonyms (one per entity for the run, shape kept, ids in the graph's
                                       scheme; an untyped graph's kinds from its relations by role_groups; a
                                       one-word name from KIND_POOLS, another of its group's (a derangement)
                                       or a head word, never a blend; still_named),
                                       edge ids, permutations
  prompts                              Template: --prompt ru | en | FILE
  tokenizers                           offline tiktoken, hf:tokenizer.json, TokenCounts, counting by parts
  leakage preflight                    whole-word checks of article 8.3
  measurement                          Plan, FormattedGraph, large sizing, build_variants, measure (per context,
                                       PartCosts), mode B packing
  reports                              console table, size_report.md, size_summary.json
  runner                               Chat Completions into requests.jsonl, resumable: http_post over httpx2
                                       (a client per worker, proxies from the environment; Deadlines and
                                       _Sockets: one thread ends attempts); Pacer (token and request rate
                                       limits, a Bucket each);
                                       Gate: fail fast (url_hint on 404), throttle on timeouts, no second copy
                                       of a timeout to a one-slot server, stop when the server goes away;
                                       Redactor (the key in every derived form);
                                       Log (group commit), pending_jobs, Tally, RecentPrompts, Schedule
                                       (prefix warm-up, no idle worker), Sender; Batch export, and
                                       --batch end to end (BatchAPI, run_batch, batch/state.json)
  scoring                              answers, paths and abstention, from the log alone, streamed: read_reply
                                       (the same reading for every format: fenced, in prose, json_as_asked),
                                       AnswerKey (one per prompt; evidence items matched to shown edges; one
                                       diagnosis per answer), cell_diagnosis, Answer, Collected (logs),
                                       collect_batch (Batch files), score_log, Answers, log_info, log_summary
  results                              DIAGNOSES (why answers fail, with the article's remedies) counted per
                                       group and hop count, tabled with an example each (diagnosis_table);
                                       statistics per group and hop count over question values (Wilson, the
                                       guarded t interval), the acceptance gate (Paired checks by Newcombe's
                                       method 11 or the guarded paired t, abstention and stability, Holm over
                                       a group's formats, questions_for_power), write_results: results.json,
                                       results.md, the console lines; the SVG charts (label placement, styles,
                                       legend and footnote inside the canvas)
  comparison                           --compare: runs over the same questions side by side (read_runs,
                                       compare_runs: leaderboard by each model's own tokenizer, each model's
                                       gate, paired differences between models, the formats every model
                                       accepts; why answers failed, per model), comparison.md and comparison.svg
  report                               report.html (REPORT_TEMPLATE: one offline page, data as JSON shown with
                                       textContent): sizes, token boundaries (token_ends) and the syntax split,
                                       one question in every format, the model run's cells with their
                                       diagnoses and evidence, a comparison's leaderboard; cells.csv
  artifacts                            Staging, OutLock (one run per folder, by flock), manifest.json, publish
  command line                         Parser (one line, did you mean), flags (checked up front), preflight,
                                       check_verdict_possible, run, model_results (collects the answers, sent or
                                       scored), run_compare, run_models (--models: one --out per model),
                                       main (SIGTERM and SIGHUP stop like Ctrl-C)
"""

from __future__ import annotations

import argparse
import copy
import csv
import difflib
import functools
import hashlib
import io
import itertools
import json
import math
import operator
import os
import platform
import random
import re
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile
import unicodedata
import urllib.parse
from collections import Counter, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, NamedTuple, NoReturn

try:
    import tiktoken
except ImportError:  # main() says how to install it, instead of a traceback
    tiktoken = None


ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data"
OUTPUTS = ROOT / "outputs"
TIKTOKEN_DIR = DATA / "tiktoken"  # shipped BPE files, named as tiktoken's cache names them

MANIFEST_SCHEMA_VERSION = 1
NORMALIZATION = "NFC"
ABSTAIN = "INSUFFICIENT_DATA"  # the abstention label; every prompt names it, so it leaks nothing
PROMPT_SCOPE = (
    "prompt_tokens: the whole prompt text (instruction, answer schema, graph, question) as one "
    "user message; no system message; chat framing tokens not counted"
)

# The article's prompt, byte for byte (section 6, build_prompt), and an English rendering of the same
# instruction, answer schema and rules in the same layout. Braces are literal; the three fields are
# filled in one pass (see Template), so a graph or question that contains "{question}" stays as it is.
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
    "en": """You are performing an exact traversal of a directed graph.

Graph format: {format_name}.
Use only the edges that are written out explicitly.
Do not reverse the direction of a relation.
Do not add facts that are missing.
If there is no complete path, return INSUFFICIENT_DATA.

Return only JSON:
{
  "answer": "short answer or INSUFFICIENT_DATA",
  "path": [edge indices in order, counting the edges from 0 in the order shown],
  "evidence": [
    {"source":"id","relation":"TYPE","target":"id"}
  ]
}

GRAPH
{graph}

QUESTION
{question}
""",
}
TEMPLATE_FIELDS = ("format_name", "graph", "question")
# The answer schema's path line, and what it says with --edge-ids instead.
PATH_LINES = {"ru": '"path": [индексы рёбер по порядку],', "en": '"path": [edge indices in order, counting the edges from 0 in the order shown],'}
EDGE_ID_PATH_LINES = {"ru": '"path": [id рёбер по порядку],', "en": '"path": [edge ids in order],'}


def fold_answer(text: str) -> str:
    """The article's answer normalization (4.5): trimmed, casefolded, ё as е."""
    return text.strip().casefold().replace("ё", "е")


class BenchmarkError(ValueError):
    """Bad input or a failed check; main() prints the message on one line and exits with code 2."""


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
Props = tuple


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

    def pick(self, positions) -> Graph:
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


class GroupKey(NamedTuple):
    """What a table of results or sizes is drawn for: every format is compared within one group."""

    encoding: str
    size: str
    ids: str
    mode: str


def group_key(row: dict) -> GroupKey:
    """The group of a size_report row, a scored cell, an aggregate or a verdict."""
    return GroupKey(row["encoding"], row["size"], row["ids"], row["mode"])


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
    """A question's own subgraph, as a retriever wrote it: edges (indices into the input graph, in the order
    given) and nodes (ids, idle ones included) of the input graph; or a graph of its own, which the question's
    paths, answer ids and query then refer to."""

    edges: tuple[int, ...] = ()
    nodes: tuple[str, ...] = ()
    graph: Graph | None = None


class GraphScope(NamedTuple):
    """What a question's paths, answer ids and query may refer to: edges by index or by their "id" in the file."""

    n_edges: int
    node_ids: set[str]
    edge_names: dict[str, int]  # an edge's "id" in the file -> its index


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

    def moved(self, position) -> Question:
        """The same question with every gold path re-indexed: edge i is now at position[i]."""
        return replace(self, paths=tuple(tuple(position[i] for i in p) for p in self.paths))

    @property
    def several(self) -> bool:
        """More than one acceptable answer or gold path."""
        return len(self.paths) > 1 or len(self.answers) > 1 or len(self.answer_ids) > 1


LEAKY_ID_WORDS = ("answer", "correct", "gold", "expected", "solution")  # markers an id must not add to its node


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


def file_mode() -> int:
    """The mode a new file gets under the current umask (mkstemp's own files are 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except OSError as e:
        raise BenchmarkError(f"{display(path)}: cannot write it ({e.strerror}); choose another path") from None


def mentioned(text: str, needles: dict | set) -> set[str]:
    """Every needle that occurs in text as a whole word (as _mentions says), in one pass over the text's word
    boundaries rather than one search per needle: mentioned('prompt.q1.kazan.txt', {'kazan', 'q2'}) -> {'kazan'}."""
    starts = [i for i in range(len(text)) if i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")]
    ends = [j for j in range(1, len(text) + 1) if j == len(text) or not (text[j].isalnum() or text[j] == "_")]
    longest = max(map(len, needles), default=0)
    found = set()
    for i in starts:
        for j in ends:
            if j > i and j - i <= longest and text[i:j] in needles and any(c.isalnum() for c in text[i:j]):
                found.add(text[i:j])
    return found


def mentions(text: str, needle: str) -> bool:
    """needle occurs in text as a whole word (both already folded): 'q1' is in 'prompt.q1.txt'; 'gold' is not
    in 'golden_gate', nor 'russia' in 'duke_of_russia'; '.' is in nothing."""
    if needle not in text or not any(c.isalnum() for c in needle):
        return False
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", text) is not None


HOP_BUCKETS = ("1", "2", "3", "4+", "abstention")


def hop_bucket(q: Question) -> str:
    """'1', '2', '3', '4+' by the hops of a positive question (its query's, else its first gold path's), or 'abstention'."""
    if q.insufficient:
        return "abstention"
    n = len(q.query.hops) if q.query else len(q.paths[0]) if q.paths else 0
    return str(n) if n < 4 else "4+"


def id_words(text: str) -> set[str]:
    """The words of an id or a name, split at '_', other non-letters and camelCase: 'goldMedal_1' -> {'gold', 'medal', '1'}."""
    return set(re.findall(r"[^\W_]+", re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text).casefold()))


def leaky_markers(node: Node) -> list[str]:
    """The leaky words an id adds beyond its node's own name: ('gold_1', 'Paris') -> ['gold']; ('Gold', 'Gold') -> []."""
    added = id_words(node.id) - id_words(node.name)
    return [w for w in LEAKY_ID_WORDS if w in added]


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
        shown = lines[:MAX_SHOWN_PROBLEMS]
        if len(lines) > len(shown):
            shown.append(f"... and {len(lines) - len(shown)} more problems")
        if len(lines) > 1:
            shown.append(f"{len(lines)} problems found; nothing was written{hint}")
        self.lines = shown
        super().__init__("\n".join(shown))


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
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
        raise BenchmarkError(f"{where} is a folder; pass a file with {flag}") from None
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


# Graph files as users have them. Each reader turns its file into the tool's own JSON records, which then go
# through the same checks (validate_graph), so a property, a duplicate id or a dangling edge is found and named
# the same way whatever the file was; the manifest hashes the file as given. Records keep the file's order.
DEFAULT_TYPE = "entity"  # a node's type when the file gives none
DEFAULT_RELATION = "related_to"  # an edge's relation when a GraphML file gives none (LightRAG and GraphRAG snapshots)
NAME_KEYS = ("name", "label", "title")  # where a node's name may be, in this order of preference
TYPE_KEYS = ("type", "entity_type", "labels", "kind")
RELATION_KEYS = ("relation", "label", "type", "predicate", "relationship")


def read_graph_file(path: Path, kind: str | None) -> tuple[dict, bytes, str]:
    """The graph of --graph as the tool's JSON records, its raw bytes, and the format it was read as: by
    --graph-format, else by the file's extension (GRAPH_FORMATS)."""
    if kind is None:
        kind = next((k for k, (extensions, _) in GRAPH_FORMATS.items() if path.suffix.lower() in extensions), "json")
    if kind == "json":
        data, raw = read_json(path, "--graph")
        return data, raw, kind
    text, raw = read_text(path, "--graph")
    return GRAPH_FORMATS[kind][1](text, display(path)), raw, kind


def _node_record(node_id: str, data: dict, where: str) -> dict:
    """A node as the tool's JSON has it: its name and type from the first of NAME_KEYS and TYPE_KEYS it has (its id
    and DEFAULT_TYPE otherwise), every other field a property."""
    data = dict(data)
    name = next((data.pop(k) for k in NAME_KEYS if k in data), node_id)
    kind = next((data.pop(k) for k in TYPE_KEYS if k in data), DEFAULT_TYPE)
    if isinstance(kind, list):  # Neo4j labels
        kind = ":".join(map(str, kind))
    if isinstance(kind, str) and kind.startswith(":"):  # Neo4j's GraphML export writes labels as ":Person"
        kind = kind[1:]
    if "id" in data:
        raise BenchmarkError(f"{where}: node {node_id!r} has a field 'id' besides its own id; rename it")
    return {"id": node_id, "name": name, "type": kind, **data}


def _edge_record(source: str, target: str, data: dict, where: str, edge_id: str | None = None, relation: str | None = None) -> dict:
    data = dict(data)
    if relation is None:
        relation = next((data.pop(k) for k in RELATION_KEYS if k in data), None)
    if relation is None:
        raise BenchmarkError(f"{where}: the edge {source!r} -> {target!r} has no relation ({', '.join(RELATION_KEYS)}); give it one")
    for fixed in ("id", "source", "target"):
        if fixed in data:
            raise BenchmarkError(f"{where}: the edge {source!r} -> {target!r} has a field {fixed!r} besides its own; rename it")
    return {**({"id": edge_id} if edge_id is not None else {}), "source": source, "relation": relation, "target": target, **data}


TRIPLE_COLUMNS = {"source": ("source", "subject", "head", "from", "src", "start"),
                  "relation": ("relation", "predicate", "relationship", "rel", "type", "label"),
                  "target": ("target", "object", "tail", "to", "dst", "end")}


def read_triples(text: str, where: str, delimiter: str) -> dict:
    """CSV or TSV triples with a header: a source, relation and target column (TRIPLE_COLUMNS names them), and
    optionally id (the edge's), source_name, source_type, target_name, target_type, source.KEY and target.KEY (node
    properties), every other column an edge property; an empty cell is no value, a cell that reads as a JSON number
    or true/false is one. A node's name is its id and its type DEFAULT_TYPE unless a column gives them."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = [h.strip() for h in next(reader, [])]
        folded = [h.casefold() for h in header]
        at = {}
        for role, names in TRIPLE_COLUMNS.items():
            at[role] = next((folded.index(n) for n in names if n in folded), None)
            if at[role] is None:
                raise BenchmarkError(f"{where}: the header has no {role} column ({', '.join(names)}); name the columns on its first line")
        nodes: dict[str, dict] = {}
        edges = []
        for row in reader:
            if not any(row):
                continue
            line = reader.line_num
            if len(row) != len(header):
                raise BenchmarkError(f"{where} line {line}: {len(row)} fields where the header has {len(header)}; fix the row")
            ends, edge = {}, {}
            node_fields: dict[str, dict] = {"source": {}, "target": {}}
            for k, (column, cell) in enumerate(zip(header, row)):
                if k in (at["source"], at["target"]):
                    ends["source" if k == at["source"] else "target"] = cell
                elif k == at["relation"]:
                    edge["relation"] = cell
                elif cell == "":
                    continue
                elif column.casefold() in ("source_name", "source_type", "target_name", "target_type"):
                    end, _, key = column.casefold().partition("_")
                    node_fields[end][key] = cell
                elif column.casefold().startswith(("source.", "target.")):
                    end, _, key = column.partition(".")
                    node_fields[end.casefold()][key] = _cell_value(cell)
                else:
                    edge[column] = cell if column == "id" else _cell_value(cell)
            for end in ("source", "target"):
                _merge_node(nodes, ends[end], node_fields[end], f"{where} line {line}")
            edges.append(_edge_record(ends["source"], ends["target"], {k: v for k, v in edge.items() if k not in ("relation", "id")}, f"{where} line {line}",
                                      edge.get("id"), edge["relation"]))
    except csv.Error as e:
        raise BenchmarkError(f"{where} line {reader.line_num}: {e}; fix the row") from None
    return {"nodes": [_node_record(i, data, where) for i, data in nodes.items()], "edges": edges}


def _cell_value(text: str) -> object:
    """A CSV cell's value: a JSON number or true/false as one, anything else as the text."""
    return json.loads(text) if text in ("true", "false") or JSON_NUMBER.fullmatch(text) else text


def _merge_node(nodes: dict[str, dict], node_id: str, fields: dict, where: str) -> None:
    """Add a node seen in a row, or check that what this row says of it agrees with what earlier rows said."""
    known = nodes.setdefault(node_id, {})
    for key, value in fields.items():
        if key in known and known[key] != value:
            raise BenchmarkError(f"{where}: node {node_id!r} has {key} {value!r} here and {known[key]!r} in an earlier row; make them agree")
        known[key] = value


def read_rdf(text: str, where: str, syntax: str = "turtle") -> dict:
    """RDF (Turtle or N-Triples, read by rdflib), in document order: every IRI or blank node that is a subject or an
    object is a node, its id the IRI's local name (percent-decoded), its name its one rdfs:label (or skos:prefLabel,
    schema:name, foaf:name; else its id), its type the local name of its one rdf:type (else DEFAULT_TYPE); a
    triple between two nodes is an edge named by its predicate's local name; a literal of a node is a property,
    and so is one of an RDF reification (rdf:subject, rdf:predicate, rdf:object) for its edge."""
    import rdflib
    from rdflib.namespace import RDF, RDFS

    class Ordered(rdflib.Graph):  # records triples as the parser reads them: the store does not keep their order
        def __init__(self) -> None:
            super().__init__()
            self.order: list = []

        def add(self, triple):  # noqa: ANN001
            self.order.append(triple)
            return super().add(triple)

    graph = Ordered()
    try:
        graph.parse(data=text, format=syntax)
    except Exception as e:  # rdflib raises its own errors for a text it cannot read
        raise BenchmarkError(f"{where}: not {syntax} ({str(e).splitlines()[0][:200]}); fix the file") from None
    labels = {RDFS.label, rdflib.URIRef("http://www.w3.org/2004/02/skos/core#prefLabel"),
              rdflib.URIRef("http://schema.org/name"), rdflib.URIRef("https://schema.org/name"), rdflib.URIRef("http://xmlns.com/foaf/0.1/name")}
    machinery = {RDF.subject, RDF.predicate, RDF.object}
    reified = {s for s, p, _ in graph.order if p in machinery}
    ids: dict[object, str] = {}
    blanks = itertools.count(1)

    def node_id(term: object) -> str:
        if term not in ids:
            ids[term] = f"b{next(blanks)}" if isinstance(term, rdflib.BNode) else _local_name(str(term))
        return ids[term]

    nodes: dict[str, dict] = {}
    edges, edge_props = [], {}
    for s, p, o in dict.fromkeys(graph.order):  # a triple read twice is one triple
        if s in reified or p == RDF.type and isinstance(o, rdflib.Literal):
            continue
        sid = node_id(s)
        record = nodes.setdefault(sid, {})
        if p == RDF.type:
            _set_once(record, "type", _local_name(str(o)), f"{where}: node {sid!r}", "rdf:type")
        elif isinstance(o, rdflib.Literal):
            key, value = ("name", str(o)) if p in labels else (_local_name(str(p)), _rdf_value(o))
            _set_once(record, key, value, f"{where}: node {sid!r}", str(p))
        else:
            nodes.setdefault(node_id(o), {})
            edges.append(_edge_record(sid, node_id(o), {}, where, relation=_local_name(str(p))))
    for r in reified:
        triple = (graph.value(r, RDF.subject), graph.value(r, RDF.predicate), graph.value(r, RDF.object))
        edge_props[triple] = {_local_name(str(p)): _rdf_value(o) for _, p, o in graph.triples((r, None, None))
                              if isinstance(o, rdflib.Literal)}
    if edge_props:
        keys = [(s, p, o) for s, p, o in dict.fromkeys(graph.order) if s not in reified and p != RDF.type and not isinstance(o, rdflib.Literal)]
        for edge, key in zip(edges, keys):
            edge.update(edge_props.get(key, {}))
    taken = Counter(ids.values())
    twice = next((term for term, i in ids.items() if taken[i] > 1), None)
    if twice is not None:
        other = next(t for t, i in ids.items() if i == ids[twice] and t != twice)
        raise BenchmarkError(f"{where}: {twice} and {other} share the local name {ids[twice]!r}, which is a node's id here; "
                             "give them distinct local names")
    return {"nodes": [{"id": i, "name": r.pop("name", i), "type": r.pop("type", DEFAULT_TYPE), **r} for i, r in nodes.items()], "edges": edges}


def _local_name(iri: str) -> str:
    """'http://example.org/people#ann_lee' -> 'ann_lee'; 'urn:graph:node:Caf%C3%A9' -> 'Café'."""
    cut = max(iri.rfind("#"), iri.rfind("/"), iri.rfind(":"))
    return urllib.parse.unquote(iri[cut + 1:] if cut + 1 < len(iri) else iri)


def _rdf_value(literal: object) -> object:
    """A literal's value as a property: a string, number or boolean; a date as its ISO text; anything else as its text."""
    value = literal.toPython()
    if isinstance(value, bool) or isinstance(value, int) or isinstance(value, float) and math.isfinite(value):
        return value
    if type(value).__name__ == "Decimal":
        return float(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(literal)


def _set_once(record: dict, key: str, value: object, where: str, what: str) -> None:
    if key in record and record[key] != value:
        raise BenchmarkError(f"{where} has {what} twice ({record[key]!r} and {value!r}); keep one")
    record[key] = value


def read_graphml(text: str, where: str) -> dict:
    """GraphML (what networkx, LightRAG and Microsoft GraphRAG write), read by networkx, in document order: a node's
    id is its GraphML id, its name and type from NAME_KEYS and TYPE_KEYS (Neo4j's ':Label' too), an edge's
    relation from RELATION_KEYS (DEFAULT_RELATION when it has none, with a warning), every other attribute a
    property, typed as the file's keys declare. An undirected graph's edges are read in the direction written."""
    try:
        import networkx
        from networkx.readwrite.graphml import GraphMLReader
    except ImportError:
        raise BenchmarkError(f"{where}: reading GraphML needs the networkx package, which is not installed; run: "
                             "pip install -r requirements.lock.txt") from None
    nodes, edges = [], []

    class Reader(GraphMLReader):  # records nodes and edges as networkx reads them, in the file's order
        def add_node(self, G, node_xml, graphml_keys, defaults):  # noqa: ANN001, N803
            super().add_node(G, node_xml, graphml_keys, defaults)
            nodes.append(self.node_type(node_xml.get("id")))

        def add_edge(self, G, edge_element, graphml_keys):  # noqa: ANN001, N803
            edges.append((self.node_type(edge_element.get("source")), self.node_type(edge_element.get("target")),
                          edge_element.get("id"), self.decode_data_elements(graphml_keys, edge_element)))
            super().add_edge(G, edge_element, graphml_keys)

    try:
        graphs = list(Reader(node_type=str)(string=text.encode("utf-8")))
    except Exception as e:  # networkx and the XML parser raise their own errors
        raise BenchmarkError(f"{where}: not GraphML ({str(e).splitlines()[0][:200]}); fix the file") from None
    if len(graphs) != 1:
        raise BenchmarkError(f"{where}: holds {len(graphs)} graphs; give one")
    graph = graphs[0]
    named = [i for _, _, i, _ in edges if i is not None]
    if len(set(named)) != len(named):  # networkx writes a multigraph's edge keys (0, 1, ... per node pair) as ids
        warn(f"{where}: edge ids repeat ({len(named) - len(set(named)):,} repeats), as networkx writes a multigraph's keys; "
             "they are read as keys, not edge ids")
        edges = [(s, t, None, data) for s, t, _, data in edges]
    if not graph.is_directed():
        warn(f"{where}: the graph is undirected; each edge is read in the direction its source and target are written")
    defaults = graph.graph.get("edge_default", {})
    unnamed = sum(not any(k in {**defaults, **data} for k in RELATION_KEYS) for _, _, _, data in edges)
    if unnamed:
        warn(f"{where}: {unnamed} edge(s) have no relation ({', '.join(RELATION_KEYS)}); they are read as {DEFAULT_RELATION!r}")
    return {"nodes": [_node_record(n, graph.nodes[n], where) for n in nodes],
            "edges": [_edge_record(s, t, {**defaults, **data} if any(k in {**defaults, **data} for k in RELATION_KEYS)
                                   else {**defaults, **data, "relation": DEFAULT_RELATION}, where, i) for s, t, i, data in edges]}


def read_neo4j(text: str, where: str) -> dict:
    """Neo4j's APOC JSON export (apoc.export.json): one object per line, {"type": "node", "id", "labels", "properties"}
    or {"type": "relationship", "id", "label", "start": {"id"}, "end": {"id"}, "properties"}; a node's type is its
    labels joined by ':', its name from NAME_KEYS among its properties (its id otherwise)."""
    nodes, edges = [], []
    for line_no, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as e:
            raise BenchmarkError(f"{where} line {line_no}: not JSON ({e}); fix the line") from None
        kind = item.get("type") if isinstance(item, dict) else None
        props = item.get("properties") or {} if isinstance(item, dict) else {}
        if kind == "node" and isinstance(props, dict):
            nodes.append(_node_record(str(item.get("id")), {**props, "type": item.get("labels") or DEFAULT_TYPE}, f"{where} line {line_no}"))
        elif kind == "relationship" and isinstance(props, dict) and isinstance(item.get("start"), dict) and isinstance(item.get("end"), dict):
            edges.append(_edge_record(str(item["start"].get("id")), str(item["end"].get("id")), props, f"{where} line {line_no}",
                                      str(item.get("id")), item.get("label")))
        else:
            raise BenchmarkError(f"{where} line {line_no}: expected a node or relationship of an APOC JSON export; fix the line")
    return {"nodes": nodes, "edges": edges}


# --graph-format name -> (file extensions it is taken for, reader of its text)
GRAPH_FORMATS: dict[str, tuple[tuple[str, ...], Callable[[str, str], dict] | None]] = {
    "json": ((".json",), None),
    "tsv": ((".tsv", ".tab"), functools.partial(read_triples, delimiter="\t")),
    "csv": ((".csv",), functools.partial(read_triples, delimiter=",")),
    "turtle": ((".ttl", ".turtle"), functools.partial(read_rdf, syntax="turtle")),
    "ntriples": ((".nt",), functools.partial(read_rdf, syntax="nt")),
    "graphml": ((".graphml",), read_graphml),
    "neo4j": ((".jsonl", ".ndjson"), read_neo4j),
}


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
            raise BenchmarkError(f"{where} has no {name!r}; each {kind} needs string fields {', '.join(fields)}")
    return tuple(check_text(item[name], f"{where}.{name}", not_nfc) for name in fields)


def validate_graph(data: object, src: str, problems: Problems) -> Graph:
    """Graph from parsed graph.json: {"nodes": [{id, name, type, ...}], "edges": [{source, relation, target, ...}]},
    where every other field of a record is one of its properties (read_props); an edge's "id" is its name in
    the file (for contexts that list edges), not a property.

    Bad records become problems and are left out; the edge count stays that of the file."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list) or not isinstance(data.get("edges"), list):
        raise BenchmarkError(f'{src}: expected a JSON object with "nodes" and "edges" lists')
    graph = _sound_graph(data, src)
    return graph if graph is not None else _checked_graph(data, src, problems)


NODE_FIELDS = frozenset(Node._fields)
EDGE_FIELDS = frozenset((*Edge._fields, "id"))  # an edge's id names it in the file; it is not shown


def _sound_graph(data: dict, src: str) -> Graph | None:
    """validate_graph for a file with nothing to report, in C loops over all records at once (a 150,000-edge
    graph took seconds record by record): the graph, or None when anything may be wrong, for _checked_graph
    to find and name. The strings are checked joined by newlines: a newline is a starter that composes with
    nothing, so the joined text is in NFC exactly when every string is, and it encodes to UTF-8 exactly when
    every string does. Properties, when records have any, are read record by record."""
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
    node_props = edge_props = ()
    nulls = []
    try:
        if node_extra:
            node_props = tuple(read_props(item, NODE_FIELDS, "", None, nulls) for item in node_items)
        if edge_extra:
            edge_props = tuple(read_props(item, EDGE_FIELDS, "", None, nulls) for item in edge_items)
    except BenchmarkError:
        return None
    _warn_nulls(src, nulls)
    return Graph(nodes, edges, (), node_props, edge_props)


def _checked_graph(data: dict, src: str, problems: Problems) -> Graph:
    """validate_graph record by record: each problem named, bad records left out."""
    nodes, node_props, first_index = [], [], {}  # node id -> index of the node that defines it
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


def read_props(item: dict, fixed: frozenset, where: str, not_nfc: list[str] | None, nulls: list[str]) -> Props:
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


def edge_names(data: dict, src: str, problems: Problems) -> dict[str, int]:
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


def _one_or_many(item: dict, where: str, singular: str, plural: str, read: Callable[[object, str], object]) -> list | None:
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


def validate_questions(data: object, src: str, scope: GraphScope, problems: Problems) -> tuple[Question, ...]:
    """Questions from parsed questions.json; a question with a problem is reported and left out.

    [{id, question, answer | answers, path | paths, insufficient, answer_id | answer_ids, query, context}]"""
    if not isinstance(data, list):
        raise BenchmarkError(f"{src}: expected a JSON list of questions")
    if not data:
        problems.add(f"{src}: the list of questions is empty; add at least one, or draw them with --generate-questions N")
    questions, seen = [], {}
    for i, item in enumerate(data):
        where = f"{src}: questions[{i}]"
        key = item.get("id") if isinstance(item, dict) and isinstance(item.get("id"), str) else f"questions[{i}]"
        try:
            q = _question(item, where, scope, problems.not_nfc)
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


def _question(item: object, where: str, scope: GraphScope, not_nfc: list[str]) -> Question:
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
    context = _given_context(item["context"], f"{where}.context", scope, not_nfc) if "context" in item else None
    if context is not None and context.graph is not None:  # the question is about its own graph
        scope = GraphScope(len(context.graph.edges), {n.id for n in context.graph.nodes}, context.graph_edge_names)
        context = GivenContext(graph=context.graph)
    paths = _one_or_many(item, where, "path", "paths", lambda v, w: _read_path(v, w, scope))
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


class _OwnGraph(NamedTuple):
    graph: Graph
    graph_edge_names: dict[str, int]


def _given_context(value: object, where: str, scope: GraphScope, not_nfc: list[str]) -> GivenContext | _OwnGraph:
    """A question's context: {"nodes": [node ids], "edges": [edge ids or indices]} of the input graph (nodes
    optional: the edges' ends), or {"graph": {"nodes": [...], "edges": [...]}} of its own."""
    if isinstance(value, dict) and set(value) == {"graph"}:
        problems = Problems()
        graph = validate_graph(value["graph"], where + ".graph", problems)
        if problems.lines:
            raise BenchmarkError(problems.lines[0][1] + (f" (and {len(problems.lines) - 1} more problem(s) in this context)" if len(problems.lines) > 1 else ""))
        not_nfc += problems.not_nfc
        names = edge_names(value["graph"], where + ".graph", problems)
        if problems.lines:
            raise BenchmarkError(problems.lines[0][1])
        return _OwnGraph(graph, names)
    if not isinstance(value, dict) or not value or not set(value) <= {"nodes", "edges"} or not all(isinstance(v, list) for v in value.values()):
        raise BenchmarkError(f'{where} must be {{"nodes": [node ids], "edges": [edge ids or indices]}} of the input graph, '
                             'or {"graph": {"nodes": [...], "edges": [...]}} of its own')
    edges = tuple(_read_path(value.get("edges", []), f"{where}.edges", scope))
    if len(set(edges)) != len(edges):
        raise BenchmarkError(f"{where}.edges lists an edge twice; list each once")
    nodes = tuple(check_text(v, f"{where}.nodes[{k}]") for k, v in enumerate(value.get("nodes", [])))
    unknown = next((v for v in nodes if v not in scope.node_ids), None)
    if unknown is not None:
        raise BenchmarkError(f"{where}.nodes names {unknown!r}, which is not a node id of the graph")
    if len(set(nodes)) != len(nodes):
        raise BenchmarkError(f"{where}.nodes lists a node twice; list each once")
    return GivenContext(edges, nodes)


def singular_or_plural(singular: str, plural: str, values: tuple | list) -> dict:
    """A field as a question file writes it: {'answer': 'A'} for one value, {'answers': ['A', 'B']} for more."""
    return {singular: values[0]} if len(values) == 1 else {plural: list(values)}


def _shown(values: list[str]) -> str:
    return repr(values[0]) if len(values) == 1 else repr(values)


def _read_path(value: object, where: str, scope: GraphScope) -> list[int]:
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


def _answer_ids(item: dict, where: str, node_ids: set[str], insufficient: bool) -> list[str]:
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


def holds(condition: Condition, props: Props) -> bool:
    """The condition holds on a record's properties: a missing property, or a value of another kind (a string
    against a number), never holds. holds(('since', '<=', 2010), (('since', 2005),)) -> True"""
    value = dict(props).get(condition.key, MISSING)
    wanted, op = condition.value, condition.op
    if value is MISSING or (type(value) is bool) != (type(wanted) is bool) or isinstance(value, str) != isinstance(wanted, str):
        return False
    if op in ("=", "!="):
        return (value == wanted) == (op == "=")
    if isinstance(value, bool):
        return False
    return {"<": value < wanted, "<=": value <= wanted, ">": value > wanted, ">=": value >= wanted}[op]


MISSING = object()


def prop_of(props: Props, key: str) -> object:
    """A property's value, or _MISSING."""
    for k, v in props:
        if k == key:
            return v
    return MISSING


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


@dataclass(frozen=True)
class RunInputs:
    graph: Graph
    questions: tuple[Question, ...]
    files: dict  # display path -> raw bytes, for the manifest
    questions_file: str = "questions.json"  # display path, for messages
    skipped: tuple[dict, ...] = ()  # questions left out by --skip-invalid-questions: {"question", "reasons"}
    generated: dict | None = None  # with --generate-questions: hop count -> questions drawn
    generated_bytes: bytes | None = None  # questions.generated.json, written with the outputs
    graph_format: str = "json"  # what --graph was read as (GRAPH_FORMATS)


GRAPH_ORDERS = ("file", "sorted")


def sorted_graph(graph: Graph) -> tuple[Graph, dict[int, int]]:
    """The graph with its nodes sorted by id and its edges by content (source, relation, target, properties), and
    where each edge went: one order for the same graph whatever file it came from (JSON, triples, RDF, GraphML)."""
    props = graph.edge_props
    order = sorted(range(len(graph.edges)), key=lambda i: (graph.edges[i], json.dumps(props[i], ensure_ascii=False) if props else ""))
    nodes = sorted(range(len(graph.nodes)), key=lambda k: graph.nodes[k].id)
    picked = graph.pick(order)
    return (replace(picked, nodes=tuple(graph.nodes[k] for k in nodes),
                    node_props=tuple(graph.node_props[k] for k in nodes) if graph.node_props else ()),
            {old: new for new, old in enumerate(order)})


GENERATED_QUESTIONS = "questions.generated.json"
DEFAULT_QUESTIONS = DATA / "questions.json"


def load_inputs(graph_path: Path, questions_path: Path, problems: Problems | None = None,
                generate: Callable[[Graph, str], tuple[list[dict], dict]] | None = None, graph_format: str | None = None,
                graph_order: str = "file") -> RunInputs:
    """The inputs with every record-level problem collected in problems (raised at once when it is None);
    with generate, the questions are drawn from the graph (and checked the same way) instead of read. With
    graph_order "sorted", nodes by id and edges by content, whatever order the file lists them in (sorted_graph)."""
    own = problems is None
    problems = Problems() if own else problems
    graph_data, graph_raw, graph_format = read_graph_file(graph_path, graph_format)
    if generate is None:
        questions_data, questions_raw = read_json(questions_path, "--questions")
    graph = validate_graph(graph_data, display(graph_path), problems)
    position = None
    if graph_order == "sorted" and not problems.lines:
        graph, position = sorted_graph(graph)
    generated = None
    if generate is not None:
        if problems.lines:  # a broken graph: there is nothing to draw from
            raise InputProblems([m for _, m in problems.lines], "")
        questions_data, generated = generate(graph, display(graph_path))
        questions_raw, questions_path = json_bytes(questions_data), Path(GENERATED_QUESTIONS)
    n_edges = len(graph_data["edges"])  # of the file: a broken edge does not move the others' indices
    named = {item["id"] for item in graph_data["nodes"] if isinstance(item, dict) and isinstance(item.get("id"), str)}
    scope = GraphScope(n_edges, named, edge_names(graph_data, display(graph_path), problems))
    questions = validate_questions(questions_data, display(questions_path), scope, problems)
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


def format_error(fmt: str, line_no: int, message: str) -> BenchmarkError:
    return BenchmarkError(f"{fmt} line {line_no}: {message}")


# Properties in the formats that have no types of their own (tsv, edge_list, dsl, pipe_table, markdown_kv) are
# written as scalar text: a number or a boolean as JSON writes it, a string as it is unless it would read as
# something else (a number, true, false, null, an empty or space-padded string, or one that starts with a
# quote), in which case it is a JSON string literal: 1969, 2.5, true, Kazan, "1969", "", " padded ".
JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def scalar_text(value: object) -> str:
    """A property value as text: 1969 -> '1969'; '1969' -> '"1969"'; True -> 'true'; 'Kazan' -> 'Kazan'."""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if (not value or value != value.strip() or value[0] == '"' or value in ("true", "false", "null")
            or JSON_NUMBER.fullmatch(value)):
        return json.dumps(value, ensure_ascii=False)
    return value


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
    for field in fields:
        key, sep, text = field.partition("=")
        if not sep:
            raise format_error(fmt, line_no, f"expected key=value after the record's fields, found {field[:40]!r}")
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


def _typed(props: Props) -> tuple:
    """Props as the round trip compares them: a boolean is never equal to a number (True == 1 in Python), while
    1 and 1.0 are the same number (TOON writes 1.0 as 1)."""
    return tuple((k, type(v) is bool, v) for k, v in props)


def graph_dict(graph: Graph, flat: bool = False, absent: object = ...) -> dict:
    """The graph as plain records in schema order, an edge's id first with --edge-ids; properties nested under
    "properties" (json), or with flat as fields after the record's own (yaml, toon, markdown_kv), every
    property name on every record (as absent) when absent is given (toon's tables)."""
    edges = [e._asdict() for e in graph.edges]
    if graph.edge_ids:
        edges = [{"id": i, **e} for i, e in zip(graph.edge_ids, edges)]
    nodes = [n._asdict() for n in graph.nodes]
    for records, all_props in ((nodes, graph.node_props), (edges, graph.edge_props)):
        if not all_props:
            continue
        names = prop_columns(all_props) if absent is not ... else []
        for record, props in zip(records, all_props):
            if flat:
                record.update({**dict.fromkeys(names, absent), **dict(props)})
            elif props:
                record["properties"] = dict(props)
    return {"nodes": nodes, "edges": edges}


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
    return Graph(nodes, edge_list, tuple(item["id"] for item in edges) if with_ids else (), node_props, edge_props)


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


# json_compact: the same object with no indentation and no spaces, as minified JSON travels.
def serialize_json_compact(graph: Graph) -> str:
    return json.dumps(graph_dict(graph), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def parse_json_compact(text: str) -> Graph:
    return parse_json(text, "json_compact")


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
        if len(items) == len(lines) and all(type(item) is dict and (tuple(item) == JSONL_NODE_KEYS and item["k"] == "n" or tuple(item) == JSONL_EDGE_KEYS
                                       and item["k"] == "e") and all(type(v) is str for v in item.values()) for item in items):
            nodes = tuple(Node(d["i"], d["n"], d["t"]) for d in items if d["k"] == "n")
            return Graph(nodes, tuple(Edge(d["s"], d["r"], d["t"]) for d in items if d["k"] == "e"))
    except ValueError:
        pass
    return _parse_jsonl_lines(text)


def _parse_jsonl_lines(text: str) -> Graph:
    """parse_jsonl line by line: a graph with edge ids or properties, or the line that is wrong."""
    nodes, edges, ids, node_props, edge_props = [], [], [], [], []
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


# tsv: a header, then node and edge rows in four columns. A field holding a tab, quote, \n or \r is
# quoted as csv.QUOTE_MINIMAL does (csv.writer itself leaves a lone \r unquoted with lineterminator
# "\n", which its reader then rejects, so we quote by hand). Properties are columns after the fixed ones,
# one per property name, shared by nodes and edges: a value as scalar_text, an empty cell where absent.
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
    nodes, edges, ids, node_props, edge_props = [], [], [], [], []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", strict=True)
    limit = csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))  # a long name is a value, not an attack: the text is ours
    try:
        header = tuple(next(reader, None) or ())
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
            (nodes if is_node else edges).append((Node if is_node else Edge)(*row[1:4]))
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


# edge_list and dsl: '|'-separated fields with backslash escapes. "\\" stands for a backslash, "\n"
# and "\r" for newline and carriage return, and a backslash before any other character makes that
# character literal ("\|" is a pipe inside a value). Values without these characters are unchanged.
# A record's properties follow its fields as more '|'-separated key=value fields.
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
        fields, current = [], []
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


def _with_pairs(row: Callable, record: tuple[str, ...], props: Props) -> str:
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
    tails = ["".join("|" + pair.translate(PIPE_ESCAPES) for pair in _pairs(p)) for p in graph.edge_props] if graph.edge_props else [""] * len(graph.edges)
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
        chars, raw = None, line
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
    fields, current = [], []
    for c, literal in chars[head + 3 :]:
        if c == "|" and not literal:
            fields.append(lexed_text(current))
            current = []
        else:
            current.append((c, literal))
    target, *pairs = [*fields, lexed_text(current)]
    return Edge(lexed_text(chars[: dash - 1]), lexed_text(chars[dash + 1 : head]), target), _read_pairs("edge_list", line_no, pairs)


def parse_edge_list(text: str) -> Graph:
    nodes, edges, ids, node_props, edge_props, section, with_ids = [], [], [], [], [], None, False
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


# pipe_table: GraphRAG's context tables. Entities carry the node id; each relationship row starts with
# a short row id, its position in the list, which is the index a model cites in "path". Properties are
# columns after the fixed ones (entities' and relationships' apart), a value as scalar_text, empty where absent.
PIPE_TABLE_SECTIONS = (("-----Entities-----", "id|name|type"), ("-----Relationships-----", "id|source|target|relation"))


def serialize_pipe_table(graph: Graph) -> str:
    (entities, entity_header), (relations, relation_header) = PIPE_TABLE_SECTIONS
    row = pipe_rows(graph)
    node_columns, edge_columns = prop_columns(graph.node_props), prop_columns(graph.edge_props)
    lines = [entities, "|".join([entity_header, *node_columns])]
    lines += [row(n) + "".join("|" + c.translate(PIPE_ESCAPES) for c in prop_cells(p, node_columns)) for n, p in graph.nodes_with_props()]
    lines += [relations, "|".join([relation_header, *edge_columns])]
    ids = graph.edge_ids or [str(i) for i in range(len(graph.edges))]  # an edge id, or the row's position
    lines += [row((i, e.source, e.target, e.relation)) + "".join("|" + c.translate(PIPE_ESCAPES) for c in prop_cells(p, edge_columns))
              for i, (e, p) in zip(ids, graph.edges_with_props())]
    return "\n".join(lines)


def _table_header(line_no: int, line: str, fixed: str) -> list[str]:
    """The property columns of a pipe_table header that starts with the fixed ones."""
    if line != fixed and not line.startswith(fixed + "|"):
        raise format_error("pipe_table", line_no, f"expected the header {fixed!r}")
    columns = [prop_key("pipe_table", line_no, c) for c in line[len(fixed) + 1:].split("|")] if line != fixed else []
    if len(set(columns)) != len(columns):
        raise format_error("pipe_table", line_no, "a property column is named twice")
    return columns


def _table_props(line_no: int, columns: list[str], cells: list[str]) -> Props:
    return tuple((c, scalar_value("pipe_table", line_no, v)) for c, v in sorted(zip(columns, cells)) if v)


def parse_pipe_table(text: str) -> Graph:
    lines = text.split("\n")
    (entities, entity_header), (relations, relation_header) = PIPE_TABLE_SECTIONS
    if lines[:1] != [entities] or len(lines) < 2 or relations not in lines:
        raise format_error("pipe_table", 1, f"expected the tables {entities} ({entity_header}) and {relations} ({relation_header})")
    node_columns = _table_header(2, lines[1], entity_header)
    split = lines.index(relations)
    edge_columns = _table_header(split + 2, lines[split + 1] if split + 1 < len(lines) else "", relation_header)
    nodes, node_props = [], []
    for i, line in enumerate(lines[2:split], 3):
        fields = split_fields("pipe_table", i, line, 3 + len(node_columns))
        nodes.append(Node(*fields[:3]))
        node_props.append(_table_props(i, node_columns, fields[3:]))
    edges, ids, edge_props = [], [], []
    for i, line in enumerate(lines[split + 2 :], split + 3):
        row_id, source, target, relation, *cells = split_fields("pipe_table", i, line, 4 + len(edge_columns))
        ids.append(row_id)
        edges.append(Edge(source, relation, target))
        edge_props.append(_table_props(i, edge_columns, cells))
    positions = [str(k) for k in range(len(ids))]
    if ids != positions and any(a == b for a, b in zip(ids, positions)):
        k = next(k for k, (a, b) in enumerate(zip(ids, positions)) if a == b)
        raise format_error("pipe_table", split + 3 + k, f"relationship id {ids[k]!r} is its row's position, but other ids are not: "
                                                 "ids are all positions or all edge ids")
    return Graph(tuple(nodes), tuple(edges), () if ids == positions else tuple(ids), tuple(node_props), tuple(edge_props))


# The peers' formats. Each is written and read with its own ecosystem's library where one exists, imported
# only when the format is asked for (FORMAT_LIBRARIES says which package; make_plan checks it is there).
# Properties are keys of their records, after the record's own.
def _from_plain(fmt: str, records: object) -> Graph:
    """Graph from {"nodes": [...], "edges": [...]} as a library read it back, checking its exact shape."""
    if not isinstance(records, dict) or set(records) != {"nodes", "edges"}:
        raise format_error(fmt, 1, 'expected "nodes" and "edges"')
    try:
        return from_records(fmt, {"nodes": records["nodes"] or [], "edges": records["edges"] or []}, flat=True)
    except (TypeError, KeyError, AttributeError) as e:
        raise format_error(fmt, 1, f"unexpected shape ({e})") from None


# toon: TOON's tabular arrays, nodes[N]{id,name,type}: and edges[M]{source,relation,target}:, one row each,
# written and read by the official toon-format package; a property is a column, null where a record has none.
def serialize_toon(graph: Graph) -> str:
    from toon_format import encode

    return encode(graph_dict(graph, flat=True, absent=None))


def parse_toon(text: str) -> Graph:
    from toon_format import ToonDecodeError, decode

    try:
        return _from_plain("toon", decode(text))
    except ToonDecodeError as e:
        raise format_error("toon", 1, str(e).splitlines()[0]) from None


# yaml: nodes: and edges: block lists, keys in schema order, Unicode kept, written and read by PyYAML's safe
# dumper and loader (its C versions when installed). Two things the library alone gets wrong for a prompt:
# libyaml escapes every character outside the BMP (an emoji costs ten characters, "\U0001F389"), and a string
# that YAML 1.1 reads as a string but YAML 1.2 as a number (1e3, 0o17) goes out unquoted. So characters outside
# the BMP are written through placeholders from the Private Use Area (printable to both emitters, so the
# pure-Python and the C dumper write the same bytes) and put back after, and YAML 1.2's number forms are
# resolved as numbers by the dumper, which quotes them. Line breaks other than \n (NEL, LS, PS) stay escaped:
# YAML 1.1 readers fold them.
YAML_12_NUMBERS = r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+|0o[0-7]+)$"
PRIVATE_USE = range(0xE000, 0xF900)


YAML_FOLDED_BREAKS = ("\x85", "\u2028", "\u2029")


@functools.lru_cache(maxsize=2)
def _yaml_dumper(base: type | None = None) -> type:
    """PyYAML's safe dumper (the C one when installed, or base) that quotes YAML 1.2's numbers and writes a string
    with NEL, LS or PS double-quoted, where both emitters escape them (\\N, \\L, \\P)."""
    import yaml

    class Dumper(base or getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
        pass

    def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = '"' if any(ch in value for ch in YAML_FOLDED_BREAKS) else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(YAML_12_NUMBERS), list("-+.0123456789"))
    Dumper.add_representer(str, represent_str)
    return Dumper


def serialize_yaml(graph: Graph) -> str:
    """The yaml text, record by record: each distinct key and value written once by PyYAML (as the value of a
    one-entry record, so in the same context and style as in the whole document) and cached, the block layout
    joined around them; the same bytes as yaml_dump_whole, which the tests compare it with, at a fraction of the
    cost of dumping a whole graph for every packed prefix (PyYAML's representer is Python). A key or value the
    joining cannot carry (an explicit '? ' key) sends the whole graph to yaml_dump_whole."""
    plain = graph_dict(graph, flat=True)
    lines = []
    try:
        for section, records in plain.items():
            if not records:
                lines.append(f"{section}: []")
                continue
            lines.append(f"{section}:")
            for record in records:
                lead = "- "
                for key, value in record.items():
                    lines.append(f"{lead}{_yaml_key(key)}: {_yaml_value(type(value).__name__, value)}")
                    lead = "  "
    except _NotJoinable:
        return yaml_dump_whole(graph)
    return "\n".join(lines)


class _NotJoinable(Exception):
    pass


@functools.lru_cache(maxsize=1 << 16)
def _yaml_value(kind: str, value: object) -> str:
    """A value as PyYAML writes it after 'key: ' in a block mapping of a block sequence (kind keeps True apart
    from 1 in the cache)."""
    text = _yaml_one({"k": value})
    if not text.startswith("- k: ") or not text.endswith("\n"):
        raise _NotJoinable
    return text[len("- k: "):-1]


@functools.lru_cache(maxsize=1 << 12)
def _yaml_key(key: str) -> str:
    text = _yaml_one({key: 0})
    if not text.startswith("- ") or not text.endswith(": 0\n") or "\n" in text[:-1] or text.startswith("- ? "):
        raise _NotJoinable
    return text[2:-4]


def _yaml_one(record: dict) -> str:
    return yaml_dump_whole(None, {"r": [record]}).split("\n", 1)[1] + "\n"


def yaml_dump_whole(graph: Graph | None, plain: dict | None = None, dumper: type | None = None) -> str:
    """The yaml text as PyYAML dumps the whole document (of graph, or of plain records); dumper: a PyYAML dumper
    class to build on instead of the C one (tests compare the two)."""
    import yaml

    plain = graph_dict(graph, flat=True) if plain is None else plain
    texts = [t for records in plain.values() for record in records for item in record.items() for t in item if isinstance(t, str)]
    wide = sorted({ch for t in texts for ch in t if ord(ch) > 0xFFFF})
    used = {ch for t in texts for ch in t if ord(ch) in PRIVATE_USE} if wide else set()
    stand_in = dict(zip(wide, (chr(c) for c in PRIVATE_USE if chr(c) not in used)))
    if len(stand_in) < len(wide):  # more distinct characters beyond the BMP than free placeholders: escaped
        stand_in = {}
    if stand_in:
        swap = str.maketrans(stand_in)
        plain = {key: [{k.translate(swap): v.translate(swap) if isinstance(v, str) else v for k, v in record.items()} for record in records]
                 for key, records in plain.items()}
    text = yaml.dump(plain, Dumper=_yaml_dumper(dumper), allow_unicode=True, sort_keys=False, default_flow_style=False,
                     width=2**31 - 1).rstrip("\n")  # one line per value, never folded
    return text.translate(str.maketrans({v: k for k, v in stand_in.items()})) if stand_in else text


def parse_yaml(text: str) -> Graph:
    import yaml

    try:
        return _from_plain("yaml", yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise format_error("yaml", (mark.line + 1) if mark else 1, str(getattr(e, "problem", e))) from None


# turtle: RDF Turtle, in the order the edges are shown: each node an IRI of one base namespace with
# rdfs:label (its name) and rdf:type (its type), each edge a triple whose predicate is its relation.
# Terms are written by rdflib (literals escaped as Turtle wants) and the text is read back by rdflib's
# parser. Ids, types and relations are percent-encoded into prefixed names, so any string is a valid
# IRI part. RDF is a set of triples: a graph with a duplicate edge, or --edge-ids, is refused. A node's
# properties are literals of its IRI under p:; an edge's hang off a reification of its triple (RDF 1.1's
# rdf:subject, rdf:predicate, rdf:object), written right after it.
TURTLE_PREFIXES = {"n": "urn:graph:node:", "t": "urn:graph:type:", "r": "urn:graph:relation:"}
TURTLE_PROPERTY = "urn:graph:property:"


def _local(value: str) -> str:
    """A Turtle prefixed name's local part for any string: letters, digits and '_' kept, the rest as %XX."""
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else "".join(f"%{b:02X}" for b in c.encode("utf-8"))
                   for c in value)


def _turtle_literal(value: object) -> str:
    """A property value as a Turtle literal: 1969 (xsd:integer), 2.5 (read back as a number), true, "text"."""
    from rdflib import Literal

    return Literal(value).n3() if isinstance(value, str) else scalar_text(value)  # a float's text has '.' or 'e


def _turtle_props(props: Props) -> str:
    return "".join(f" ; p:{_local(k)} {_turtle_literal(v)}" for k, v in props)


def serialize_turtle(graph: Graph) -> str:
    if graph.edge_ids:
        raise BenchmarkError("format turtle cannot carry --edge-ids (an RDF triple has no id of its own); leave turtle out of --formats")
    seen = Counter(graph.edges)
    twice = next((e for e in graph.edges if seen[e] > 1), None)
    if twice is not None:
        raise BenchmarkError(f"format turtle cannot carry the edge {tuple(twice)!r} twice: RDF keeps one copy of a triple; "
                             "leave turtle out of --formats or remove the duplicate")
    lines = [f"@prefix {p}: <{iri}> ." for p, iri in TURTLE_PREFIXES.items()]
    if graph.has_props:
        lines.append(f"@prefix p: <{TURTLE_PROPERTY}> .")
    if graph.edge_props:
        lines.append("@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .")
    lines += ["@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .", ""]
    from rdflib import Literal

    lines += [f"n:{_local(n.id)} a t:{_local(n.type)} ; rdfs:label {Literal(n.name).n3()}{_turtle_props(p)} ." for n, p in graph.nodes_with_props()]
    for e, p in graph.edges_with_props():
        triple = f"n:{_local(e.source)} r:{_local(e.relation)} n:{_local(e.target)}"
        lines.append(f"{triple} .")
        if p:
            lines.append(f"[ rdf:subject n:{_local(e.source)} ; rdf:predicate r:{_local(e.relation)} ; rdf:object n:{_local(e.target)} ]"
                         f"{_turtle_props(p)[2:]} .")
    return "\n".join(lines)


def parse_turtle(text: str) -> Graph:
    import rdflib
    from rdflib.namespace import RDF, RDFS

    rdf = rdflib.Graph()
    try:
        rdf.parse(data=text, format="turtle")
    except Exception as e:  # rdflib raises its own errors for a text that is not Turtle
        raise format_error("turtle", 1, str(e).splitlines()[0][:200]) from None
    decode = urllib.parse.unquote
    node, kind, relation = (TURTLE_PREFIXES[p] for p in ("n", "t", "r"))

    def local(term: object, namespace: str) -> str:
        if not isinstance(term, rdflib.URIRef) or not str(term).startswith(namespace):
            raise format_error("turtle", 1, f"{term} is not an IRI of {namespace}")
        return decode(str(term)[len(namespace):])

    props: dict[object, dict[str, object]] = {}  # node IRI or reification -> property -> value
    for s, p, o in rdf:
        if str(p).startswith(TURTLE_PROPERTY):
            key = local(p, TURTLE_PROPERTY)
            value = o.toPython() if isinstance(o, rdflib.Literal) else None
            value = str(value) if isinstance(value, str) else float(value) if type(value).__name__ == "Decimal" else value
            if not is_scalar(value) or key in props.setdefault(s, {}):
                raise format_error("turtle", 1, f"{s} has the property {key} twice, or not as a literal of a string, number or boolean")
            props[s][key] = value
    reified = {(rdf.value(r, RDF.subject), rdf.value(r, RDF.predicate), rdf.value(r, RDF.object)): r for r in rdf.subjects(RDF.subject)}
    labels = {s: str(o) for s, o in rdf.subject_objects(RDFS.label)}
    nodes = sorted((Node(local(s, node), labels.get(s, ""), local(o, kind)), tuple(sorted(props.get(s, {}).items())))
                   for s, o in rdf.subject_objects(RDF.type))
    edges = sorted((Edge(local(s, node), local(p, relation), local(o, node)), tuple(sorted(props.get(reified.get((s, p, o)), {}).items())))
                   for s, p, o in rdf if str(p).startswith(relation))
    return Graph(tuple(n for n, _ in nodes), tuple(e for e, _ in edges), (), tuple(p for _, p in nodes), tuple(p for _, p in edges))


# markdown_kv: one Markdown section per record kind, one "key: value" line per field, a blank line between
# records (the layout of the Markdown-KV study). Values escape backslash, newline and carriage return as
# dsl does; everything after "key: " is the value, spaces included. Properties are more lines, after the
# record's own fields, their values as scalar_text.
MARKDOWN_KV_SECTIONS = ("## Nodes", "## Edges")


def serialize_markdown_kv(graph: Graph) -> str:
    records = graph_dict(graph)
    blocks = []
    for title, key, all_props in zip(MARKDOWN_KV_SECTIONS, ("nodes", "edges"), (graph.node_props, graph.edge_props)):
        blocks.append(title)
        for record, props in zip(records[key], all_props or itertools.repeat(())):
            record.pop("properties", None)
            lines = [f"{k}: {v.translate(ESCAPES)}" for k, v in record.items()]
            blocks.append("\n".join([*lines, *(f"{k}: {scalar_text(v).translate(ESCAPES)}" for k, v in props)]))
    return "\n\n".join(blocks)


def parse_markdown_kv(text: str) -> Graph:
    records: dict[str, list[dict]] = {"nodes": [], "edges": []}
    fields = {"nodes": set(Node._fields), "edges": {*Edge._fields, "id"}}
    section, current, start = None, None, 1
    for line_no, line in enumerate(text.split("\n"), 1):
        if line in MARKDOWN_KV_SECTIONS:
            section, current = ("nodes", "edges")[MARKDOWN_KV_SECTIONS.index(line)], None
        elif not line:
            current = None
        elif section is None or ": " not in line:
            raise format_error("markdown_kv", line_no, "expected a '## Nodes' or '## Edges' section of 'key: value' lines")
        else:
            if current is None:
                current, start = {}, line_no
                records[section].append(current)
            key, value = line.split(": ", 1)
            if key in current:
                raise format_error("markdown_kv", line_no, f"{key!r} given twice in the record that starts at line {start}")
            value = lexed_text(lex("markdown_kv", line_no, value)) if "\\" in value else value
            current[key] = value if key in fields[section] else scalar_value("markdown_kv", line_no, value)
    return from_records("markdown_kv", records, flat=True)


# name -> (serialize, parse). The order is the report order; the article's five come first.
FORMATS: dict[str, tuple[Callable[[Graph], str], Callable[[str], Graph]]] = {
    "json": (serialize_json, parse_json),
    "jsonl": (serialize_jsonl, parse_jsonl),
    "tsv": (serialize_tsv, parse_tsv),
    "edge_list": (serialize_edge_list, parse_edge_list),
    "dsl": (serialize_dsl, parse_dsl),
    "json_compact": (serialize_json_compact, parse_json_compact),
    "pipe_table": (serialize_pipe_table, parse_pipe_table),
    "toon": (serialize_toon, parse_toon),
    "yaml": (serialize_yaml, parse_yaml),
    "turtle": (serialize_turtle, parse_turtle),
    "markdown_kv": (serialize_markdown_kv, parse_markdown_kv),
}
FORMAT_LIBRARIES = {"toon": ("toon_format", "toon-format"), "yaml": ("yaml", "PyYAML"), "turtle": ("rdflib", "rdflib")}  # format -> (module, package)
ARTICLE_FORMATS = ("json", "jsonl", "tsv", "edge_list", "dsl")


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


def _node_records(graph: Graph) -> tuple:
    return tuple(zip(graph.nodes, map(_typed, graph.node_props))) if graph.node_props else tuple((n, ()) for n in graph.nodes)


def _edge_records(graph: Graph) -> tuple:
    props = tuple(map(_typed, graph.edge_props)) if graph.edge_props else ((),) * len(graph.edges)
    if graph.edge_ids:
        return tuple(zip(graph.edge_ids, graph.edges, props))
    return tuple(zip(graph.edges, props))


def _shown_record(record: tuple) -> str:
    """('e1', Edge(a, R, b), props) -> "('e1', 'a', 'R', 'b')", properties after it when it has any."""
    *head, props = record
    fields = tuple(itertools.chain.from_iterable(v if isinstance(v, tuple) else (v,) for v in head))
    return repr(fields) + (f" with properties {dict((k, v) for k, _, v in props)!r}" if props else "")


def serialized(fmt: str, graph: Graph) -> str:
    """The format's text, NFC-normalized (unchecked: for graphs cut from a checked one, or to check next). The values
    are NFC already, so the text is too, but where an escape meets a combining mark: the newline of 'a\\n' + U+0301
    is written as backslash and 'n', and NFC would merge the 'n' with the mark into 'ń', changing what the text says.
    Such a text is left as written when its normal form does not read back the same (the round trip then proves the
    text as written), instead of refusing a valid name."""
    text = FORMATS[fmt][0](graph)
    if unicodedata.is_normalized(NORMALIZATION, text):
        return text
    normal = unicodedata.normalize(NORMALIZATION, text)
    try:
        return normal if first_difference(graph, FORMATS[fmt][1](normal)) is None else text
    except BenchmarkError:
        return text


def check_roundtrip(fmt: str, graph: Graph, text: str) -> None:
    """Raise unless text, the graph in format fmt, parses back to the same graph."""
    try:
        difference = first_difference(graph, FORMATS[fmt][1](text))
    except BenchmarkError as e:
        difference = f"its own output does not parse ({e})"
    if difference:
        raise BenchmarkError(f"round-trip check failed for format {fmt}: {difference}; nothing was written")


def turtle_statements(text: str) -> tuple[str, Counter] | None:
    """A text of serialize_turtle as its directives and the multiset of its statement lines, when each statement is one
    line (no long string: rdflib writes a literal with a newline between triple quotes, over several lines); else
    None. Turtle's statements are independent given its directives, and each anonymous blank node ([ ... ]) lives
    in one statement, so two texts with the same directives and the same statement lines, in any order, parse to
    the same RDF graph up to the names of blank nodes, which parse_turtle does not keep."""
    if '"""' in text:
        return None
    head, sep, body = text.partition("\n\n")
    return (head, Counter(body.split("\n"))) if sep else None


def yaml_items(text: str) -> tuple[tuple[str, ...], Counter] | None:
    """A text of serialize_yaml as its top-level keys and the multiset of (key, sequence item), when no anchor or alias
    can tie one item to another (a conservative test: any & or * that could start one); else None. Each item starts
    at a line '- ' in column 0 and takes the lines after it up to the next line in column 0 (a scalar's continuation
    lines are indented), and the items of a block sequence are independent nodes, so two texts with the same keys
    and the same items, in any order within each sequence, parse to the same records."""
    if re.search(r"(?:^|[\s\[{,])[&*]\S", text):
        return None
    keys, items, key = [], Counter(), None
    for part in re.split(r"\n(?=\S)", text):
        if part.startswith("- "):
            if key is None:
                return None
            items[key, part] += 1
        else:
            key = part
            keys.append(part)
    return tuple(keys), items


PERMUTATION_PROOFS = {"turtle": turtle_statements, "yaml": yaml_items}  # format -> the parts whose order cannot matter


def check_roundtrip_once(fmt: str, graph: Graph, text: str, proven: dict) -> None:
    """check_roundtrip, where it can be proven from a text checked before instead of parsed again: a Turtle or YAML
    text whose parts (PERMUTATION_PROOFS) are those of a text that round-tripped, in another order, for a graph with
    the same records (another edge order of it), round-trips too. Their parsers were the largest cost of a matrix
    (rdflib's 39 and PyYAML's 7.5 of 107 s profiled); every other format is parsed, every time. proven: what was
    checked, per format, in this context."""
    lines = PERMUTATION_PROOFS[fmt](text) if fmt in PERMUTATION_PROOFS else None
    known = proven.get(fmt) if lines is not None else None
    if known is not None and known[0] == lines and first_difference(known[1], graph) is None:
        return
    check_roundtrip(fmt, graph, text)
    if lines is not None:
        proven[fmt] = (lines, graph)


def serialize_checked(fmt: str, graph: Graph) -> str:
    """The graph in format fmt, NFC-normalized, after proving it parses back to the same graph."""
    text = serialized(fmt, graph)
    check_roundtrip(fmt, graph, text)
    return text


MAX_WALKS = 1_000_000  # partial paths a query may have before the solver gives up, instead of running for hours


def edge_index(edges: tuple[Edge, ...]) -> dict[tuple[str, str, str], list[int]]:
    """(node, relation, direction) -> indices of the edges one hop can follow from that node."""
    index: dict[tuple[str, str, str], list[int]] = {}
    for i, e in enumerate(edges):
        index.setdefault((e.source, e.relation, "out"), []).append(i)
        index.setdefault((e.target, e.relation, "in"), []).append(i)
    return index


def partial_walks(graph: Graph, query: Query, index: dict | None = None) -> list[list[tuple[tuple[int, ...], str]]]:
    """The walks of query after 0, 1, ... len(hops) hops, each as (edge indices, node reached); a hop with
    conditions follows only the edges they hold on. edges a-R->b, b-S->c; start a, hops [R out, S out] ->
    [[((), 'a')], [((0,), 'b')], [((0, 1), 'c')]]"""
    edges, props = graph.edges, graph.edge_props
    index = edge_index(edges) if index is None else index
    stages = [[((), query.start)]]
    for hop in query.hops:
        stages.append([
            (path + (i,), edges[i].target if hop.direction == "out" else edges[i].source)
            for path, node in stages[-1]
            for i in index.get((node, hop.relation, hop.direction), ())
            if not hop.where or all(holds(c, props[i] if props else ()) for c in hop.where)
        ])
        if len(stages[-1]) > MAX_WALKS:
            raise BenchmarkError(
                f"the query from {query.start!r} has over {MAX_WALKS:,} partial paths; give it more selective hops"
            )
    return stages


def asked(graph: Graph, ask: Ask, walk: tuple[tuple[int, ...], str]) -> object:
    """The value an ask question wants at the end of a walk (its end node's or last edge's property), or _MISSING."""
    path, end = walk
    if ask.of_ == "edge":
        return prop_of(graph.edge_props[path[-1]], ask.key) if graph.edge_props and path else MISSING
    return prop_of(graph.props_by_node.get(end, ()), ask.key)


def solve(graph: Graph, query: Query, index: dict | None = None) -> list[tuple[tuple[int, ...], str]]:
    """Every complete path of query as (edge indices, end node): the walks that made every hop (and, for a
    question that asks for a property, end where it has a value)."""
    return complete(graph, query, partial_walks(graph, query, index)[-1])


def complete(graph: Graph, query: Query, walks: list) -> list[tuple[tuple[int, ...], str]]:
    """The walks that made every hop, kept when they end where the property asked for has a value."""
    return [w for w in walks if asked(graph, query.ask, w) is not MISSING] if query.ask else walks


def value_text(value: object) -> str:
    """A property value as an answer names it: 'Kazan', '1969', '2.5', 'true'."""
    return value if isinstance(value, str) else scalar_text(value)


def gold_answers(graph: Graph, query: Query, walks: list) -> list[str]:
    """The answers complete walks give: the names of their end nodes, or the values they ask for."""
    if query.ask:
        return sorted({value_text(asked(graph, query.ask, w)) for w in walks})
    names = graph.names
    return sorted({names[end] for _, end in walks})


def incident_edges(graph: Graph, canonical: bool = False) -> dict[str, list[int]]:
    """node id -> the edges that touch it, in the file's order; with canonical, in the order of the edges' content
    (source, relation, target, properties), so that what is drawn from them is the same whatever order the file
    lists the edges in (generated questions and --context khop: the same graph read from JSON, triples, RDF or
    GraphML gives the same questions and contexts)."""
    order = range(len(graph.edges))
    if canonical:
        props = graph.edge_props
        order = sorted(order, key=lambda i: (graph.edges[i], json.dumps(props[i], ensure_ascii=False) if props else ""))
    incident: dict[str, list[int]] = {}
    for i in order:
        e = graph.edges[i]
        incident.setdefault(e.source, []).append(i)
        if e.target != e.source:
            incident.setdefault(e.target, []).append(i)
    return incident


def answerable(graph: Graph, q: Question, index: dict | None = None) -> bool:
    """The solver still finds the gold outcome on this graph: a gold path, or none at all to abstain on."""
    found = solve(graph, q.query, index)
    if q.insufficient:
        return not found
    gold = set(q.paths)
    return any(path in gold for path, _ in found)


def describe_path(edges: tuple[Edge, ...], path: tuple[int, ...]) -> str:
    """'[0, 3] (a -R-> b, b -S-> c)': the indices to write in a question, and the edges they stand for."""
    shown = ", ".join(f"{edges[i].source} -{edges[i].relation}-> {edges[i].target}" for i in path)
    return f"[{', '.join(map(str, path))}] ({shown})"


def _paths(edges: tuple[Edge, ...], paths: list[tuple[int, ...]]) -> str:
    shown = "; ".join(describe_path(edges, p) for p in paths[:3])
    return shown + (f"; and {len(paths) - 3} more" if len(paths) > 3 else "")


def solver_problem(graph: Graph, q: Question, index: dict) -> str | None:
    """What the solver finds that the question's gold data does not say, or None when they agree."""
    edges = graph.edges
    stages = partial_walks(graph, q.query, index)
    found = complete(graph, q.query, stages[-1])
    if q.insufficient:
        if found:
            return (f"an abstention question, but the query finds {len(found)} complete path(s): "
                    f"{_paths(edges, [p for p, _ in found])}; fix the query or make the question answerable")
        return None
    if not found:
        if stages[-1]:  # every hop was made: the ask is what fails
            ask = q.query.ask
            return (f"the query's walks end where no {ask.of_} has the property {ask.key!r} "
                    f"({_paths(edges, [p for p, _ in stages[-1]])}); ask for another property or fix the query")
        return hop_failure(graph, q.query, stages, index)
    walks, gold = {p for p, _ in found}, set(q.paths)
    if walks != gold:
        extra, missing = sorted(walks - gold), sorted(gold - walks)
        message = f"the query finds {len(walks)} complete path(s), the question lists {len(gold)} gold path(s)"
        if extra:
            message += f"; found but not listed: {_paths(edges, extra)}"
        if missing:
            message += f"; listed but not found: {_paths(edges, missing)}"
        fix = "list every complete path in `paths` or narrow the query" if not missing else "fix the paths or the query"
        return f"{message}; {fix}"
    ends = sorted({end for _, end in found})
    if ends != sorted(set(q.answer_ids)):
        return f"the gold paths end at {ends} but answer_ids are {sorted(set(q.answer_ids))}; make them the same"
    if q.query.ask:
        values = gold_answers(graph, q.query, found)
        stray = [a for a in q.answers if fold_answer(a) not in {fold_answer(v) for v in values}]
        if stray:
            return (f"answer {stray[0]!r} is not a value of {q.query.ask.key!r} where the gold paths end ({', '.join(map(repr, values[:3]))}); "
                    "make the answers those values")
    return None


def hop_failure(graph: Graph, query: Query, stages: list, index: dict) -> str:
    """Which hop found no edge, from how many nodes, and which relations leave those nodes instead."""
    edges = graph.edges
    j = next(k for k in range(1, len(stages)) if not stages[k]) - 1
    hop = query.hops[j]
    nodes = sorted({node for _, node in stages[j]})
    at = f"{len(nodes)} node(s) ({', '.join(nodes[:3])}{', ...' if len(nodes) > 3 else ''})" if j else f"the start {query.start!r}"
    leaving: dict[str, set[str]] = {"out": set(), "in": set()}
    wanted = set(nodes)
    for node, relation, direction in index:
        if node in wanted:
            leaving[direction].add(relation)
    way = "forwards (out)" if hop.direction == "out" else "backwards (in)"
    message = f"hop {j + 1} of {len(query.hops)} ({hop.relation} {hop.direction}) finds no edge from {at}"
    if hop.where and hop.relation in leaving[hop.direction]:
        shown = " and ".join(f"{c.key} {c.op} {value_text(c.value)}" for c in hop.where)
        return message + f" where {shown}; loosen the condition or fix the query"
    here = sorted(leaving[hop.direction])
    message += f"; relations they can follow {way}: {', '.join(here[:8])}{', ...' if len(here) > 8 else ''}" if here else f"; they have no edge to follow {way}"
    other = "in" if hop.direction == "out" else "out"
    if hop.relation in leaving[other]:
        message += f"; {hop.relation} leaves them in the other direction: use \"{other}\""
    else:
        close = difflib.get_close_matches(hop.relation, sorted({e.relation for e in edges}), n=1)
        if close:
            message += f"; did you mean {close[0]!r}?"
    return message


def walk_ends(edges: list[Edge]) -> set[str]:
    """End nodes of the walks that follow the edges in order, each forwards or backwards from where the
    previous one ended (never reversed as written); empty if the chain breaks.

    a-R->b, c-S->b -> {'c'} (b is reached forwards, then S is followed backwards to c)"""
    ends = set()
    for current in {edges[0].target, edges[0].source} if edges else ():
        for e in edges[1:]:
            if e.source == current:
                current = e.target
            elif e.target == current:
                current = e.source
            else:
                break
        else:
            ends.add(current)
    return ends


def check_questions(whole: Graph, questions: tuple[Question, ...], src: str, problems: Problems) -> None:
    """Each question against the graph (or the graph of its own context): answers name the answer nodes, a path
    without a query is a connected walk, and the solver's complete walks are the gold paths. One problem per
    question that fails."""
    whole_index = edge_index(whole.edges)
    for q in questions:
        where = f"{src}: question {q.id}"
        own = q.context.graph if q.context and q.context.graph is not None else None
        graph, index = (own, edge_index(own.edges)) if own is not None else (whole, whole_index)
        names = graph.names
        try:
            problem = _answer_problem(q, names)
            if problem is None and q.query is None:
                broken = [p for p in q.paths if p and not walk_ends([graph.edges[k] for k in p])]
                if broken:
                    problem = f"path {describe_path(graph.edges, broken[0])} is not a connected walk; fix the path"
            if problem is None and q.query is not None:
                problem = solver_problem(graph, q, index)
        except BenchmarkError as e:
            problem = str(e)
        if problem:
            problems.add(f"{where}: {problem}", q.id)


def _answer_problem(q: Question, names: dict[str, str]) -> str | None:
    if q.insufficient or not q.answer_ids or q.query and q.query.ask:  # an ask question's answers are values: the solver checks them
        return None
    named = {fold_answer(names[i]) for i in q.answer_ids} | {i.casefold() for i in q.answer_ids}
    stray = [a for a in q.answers if fold_answer(a) not in named]
    if not stray:
        return None
    nodes = ", ".join(f"{i!r} is named {names[i]!r}" for i in q.answer_ids[:3])
    return f"answer {stray[0]!r} is not the name of an answer node ({nodes}); make the answer the node's name"


# Generated question sets (--generate-questions N): positive questions are random walks from a random
# start, forwards or backwards along existing edges, never back over the edge just taken; every complete
# walk of the resulting query is a gold path, so answer sets come out as they are (up to MAX_ANSWERS).
# Abstention questions are near misses like the article's q6: a real walk, then a last hop whose relation
# nodes of the same role do have, but not the nodes reached, so that nothing but the facts tells the model
# to abstain. A node's role is its type; on an untyped graph (one type), the nodes at the same end of the
# relation it was reached by (the other targets of spouse, say), and for the start, of one of its edges.
# They are then validated and proven like a hand-written file.
QUESTION_TEXTS = {  # language -> (opening with the start's name, a hop forwards, a hop backwards, joiner, closing, closing for a set)
    "ru": ("Начни с {start}. Пройди по ", "{relation}", "{relation} в обратную сторону", ", затем по ", ". Какой узел получится?",
           ". Какие узлы получатся? Назови любой из них."),
    "en": ("Start at {start}. Follow ", "{relation}", "{relation} backwards", ", then ", ". Which node do you reach?",
           ". Which nodes do you reach? Name any one of them."),
}
ASK_TEXTS = {  # language -> (closing for a node's property, for a set of nodes, for the last edge's), and a hop's condition
    "ru": (". Каково значение {key} у узла, к которому ты придёшь?", ". Каковы значения {key} у узлов, к которым ты придёшь? "
           "Назови любое из них.", ". Каково значение {key} у последнего ребра пути?", "{hop} (только где {conditions})", " и "),
    "en": (". What is the {key} of the node you reach?", ". What is the {key} of the nodes you reach? Name any one of them.",
           ". What is the {key} of the last edge you follow?", "{hop} (only where {conditions})", " and "),
}
QUOTES = {"ru": ("«»", '""', "„“", "''"), "en": ('""', "''", "“”", "«»")}  # the first pair the name does not hold
GENERATION_DRAWS = 200  # draws per question before a hop count is given up as unable to yield more
MAX_GOLD_PATHS = 20  # a generated query with more complete walks than this is drawn again
MAX_ANSWERS = 5  # nor one with more answer nodes: a set a model can be asked to name one of
DEFAULT_PROPERTY_SHARE = 0.25  # of generated questions, on a graph with properties: about them


@dataclass(frozen=True)
class GenerateSpec:
    n: int
    hops: tuple[int, int]  # fewest and most hops
    abstain_share: float
    seed: int
    language: str  # ru or en: the question texts' language
    property_share: float = 0.0  # share of questions that ask for a property or put a condition on a hop
    wording: str = "natural"  # natural (English only; Russian is always templated) | template
    phrases: tuple[tuple[str, Phrase], ...] = ()  # --relation-phrases: relation -> how it reads


def quoted(language: str, name: str) -> str:
    """The name in quotes it does not contain: ('en', 'Tomsk') -> '"Tomsk"'; ('en', 'The "Best"') -> "'The \"Best\"'"."""
    pair = next((p for p in QUOTES[language] if p[0] not in name and p[1] not in name), QUOTES[language][0])
    return pair[0] + name + pair[1]


def question_text(language: str, start: str, hops: list[Hop], several: bool = False, ask: Ask | None = None) -> str:
    """'Start at "Tomsk". Follow LOCATED_IN backwards, then DEVELOPED_BY. Which node do you reach?'; a hop with
    conditions reads 'DEVELOPED_BY (only where since <= 2010)', an ask 'What is the founded of the node you reach?'"""
    opening, forwards, backwards, joiner, closing, closing_set = QUESTION_TEXTS[language]
    ask_node, ask_set, ask_edge, conditional, also = ASK_TEXTS[language]
    steps = [(forwards if h.direction == "out" else backwards).format(relation=h.relation) for h in hops]
    steps = [conditional.format(hop=step, conditions=also.join(f"{c.key} {c.op} {value_text(c.value)}" for c in h.where)) if h.where else step
             for step, h in zip(steps, hops)]
    if ask is not None:
        closing = (ask_edge if ask.of_ == "edge" else ask_set if several else ask_node).format(key=ask.key)
    elif several:
        closing = closing_set
    return opening.format(start=quoted(language, start)) + joiner.join(steps) + closing


# Natural wording (--wording natural, the default for English): the question a GraphRAG user asks, with no
# relation name verbatim. Each relation gets a phrase from its name (__people__person__nationality ->
# 'nationality', DEVELOPED_BY -> 'developed by', LEADS -> 'leads'), or from --relation-phrases FILE, and a
# kind that decides how a hop reads forwards and backwards:
#   noun    'the nationality of X'           backwards: 'the one whose nationality is X'
#   state   'what X is developed by'         backwards: 'the one developed by X'
#   act     'the one X leads'                backwards: 'the one that leads X'
#   made    'the characters created by X'    backwards: 'the one who created X'
#   pair    a user's phrase and inverse phrase, both nouns: 'the developer of X', backwards 'the product of X'
# A walk nests these from the start outwards; the last hop is the question ('What does Irina lead?').
# The wording only says what the query is; the query, its gold paths and the solver's proof are unchanged.
PREPOSITIONS = frozenset("by in of at to from on for with into as about under over within near".split())
STATE_WORDS = frozenset(("located based born contained included situated made part member published released married "
                         "employed involved set filmed buried educated headquartered written named known used owned "
                         "developed created produced directed founded designed built composed").split())
IRREGULAR_PARTICIPLES = frozenset("born made written known built held taken given begun done won sold shown drawn grown".split())
CONDITION_WORDS = {"=": "is", "!=": "is not", "<": "is less than", "<=": "is at most", ">": "is more than", ">=": "is at least"}


class Phrase(NamedTuple):
    """How one relation reads in a natural question: its words and their kind (see above)."""

    words: str
    kind: str  # noun | state | act | made | pair
    inverse: str = ""  # pair only: the noun for a hop backwards


def relation_words(name: str) -> list[str]:
    """The words of a relation or property name, namespace dropped: '__people__person__nationality' -> ['nationality'],
    'DEVELOPED_BY' -> ['developed', 'by'], 'http://x.org/ont#birthPlace' -> ['birth', 'place'], 'ex:hasParent' -> ['parent']."""
    last = re.split(r"__|[/#:.]", name.strip("_/#:. "))[-1] or name
    last = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", last)
    words = [w.lower() for w in re.split(r"[\s_\-]+", last) if w]
    if len(words) > 1 and words[0] in ("has", "is", "have"):
        words = words[1:]
    return words or [name]


def derive_phrase(relation: str) -> Phrase:
    """The phrase and kind of a relation from its name alone (what --relation-phrases overrides)."""
    words = relation_words(relation)
    text = " ".join(words)
    verb_case = relation.isupper() or relation.replace("_", "").isupper()
    if len(words) > 1 and words[-1] in ("created", "written", "directed", "produced", "composed", "designed", "founded", "edited"):
        return Phrase(text, "made")
    if words[-1] in PREPOSITIONS and len(words) > 1:
        return Phrase(text, "state" if words[0] in STATE_WORDS or words[0] in ("part", "member", "child", "subclass") else "act")
    if verb_case and (words[0].endswith(("s", "ed")) and not words[0].endswith("ss")):
        return Phrase(text, "act")
    return Phrase(text, "noun")


def third_person_base(verb: str) -> str:
    """'leads' -> 'lead', 'carries' -> 'carry', 'watches' -> 'watch', 'uses' -> 'use'."""
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "xes", "sses", "zes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb


def read_relation_phrases(path: Path) -> dict[str, Phrase]:
    """--relation-phrases FILE: one relation a line, 'relation<TAB>phrase<TAB>inverse phrase' (both nouns: 'developer',
    'product'); or one phrase alone, read in the kind the relation's name gives. Blank lines and '#' lines skipped."""
    phrases = {}
    for line_no, line in enumerate(read_text(path, "--relation-phrases")[0].splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) not in (2, 3) or not all(fields):
            raise BenchmarkError(f"{display(path)} line {line_no}: write 'relation<TAB>phrase' or 'relation<TAB>phrase<TAB>inverse phrase', "
                                 "tab-separated, each field not empty")
        if fields[0] in phrases:
            raise BenchmarkError(f"{display(path)} line {line_no}: relation {fields[0]!r} is given twice; keep one line")
        phrases[fields[0]] = Phrase(fields[1], "pair", fields[2]) if len(fields) == 3 else derive_phrase(fields[0])._replace(words=fields[1])
    return phrases


def _condition_words(where: tuple[Condition, ...]) -> str:
    """' (counting only links whose since is at most 2010)', or '' for a hop with no condition."""
    if not where:
        return ""
    said = " and ".join(f"{' '.join(relation_words(c.key))} {CONDITION_WORDS[c.op]} {value_text(c.value)}" for c in where)
    return f" (counting only links whose {said})"


# kind -> form -> (forwards, backwards): a hop as a noun phrase inside a longer one ("nested"), as the question of the
# last hop ("asked"), or as a sentence about an unknown in a longer walk ("stated"). {x}: what the hop starts from;
# {w}: the relation's phrase; {inv}: a pair's inverse phrase; {verb}: the phrase's last word; {c}: the hop's condition.
PHRASINGS = {
    "pair": {"nested": ("the {w} of {x}{c}", "the {inv} of {x}{c}"), "asked": ("What is the {w} of {x}{c}?", "What is the {inv} of {x}{c}?"),
             "stated": ("the {w} of {x}{c} is something.", "the {inv} of {x}{c} is something.")},
    "noun": {"nested": ("the {w} of {x}{c}", "the one whose {w} is {x}{c}"), "asked": ("What is the {w} of {x}{c}?", "Whose {w} is {x}{c}?"),
             "stated": ("the {w} of {x}{c} is something.", "something has {x} as its {w}{c}.")},
    "state": {"nested": ("the one {x} is {w}{c}", "the one {w} {x}{c}"), "asked": ("What is {x} {w}{c}?", "What is {w} {x}{c}?"),
              "stated": ("{x} is {w} something{c}.", "something is {w} {x}{c}.")},
    "made": {"nested": ("the {w} by {x}{c}", "the one who {verb} {x}{c}"), "asked": ("What are the {w} by {x}{c}?", "Who {verb} {x}{c}?"),
             "stated": ("something is among the {w} by {x}{c}.", "someone {verb} {x}{c}.")},
    "act": {"nested": ("the one {x} {w}{c}", "the one that {w} {x}{c}"), "asked": ("What is it that {x} {w}{c}?", "What {w} {x}{c}?"),
            "stated": ("{x} {w} something{c}.", "something {w} {x}{c}.")},
}


def phrase_hop(form: str, x: str, hop: Hop, p: Phrase) -> str:
    """One hop in one of PHRASINGS' forms: ('asked', 'Irina', LEADS out) -> 'What does Irina lead?' (an upper-case verb
    ending in s reads 'does ... lead'); ('nested', 'Irina', LEADS out) -> 'the one Irina leads'."""
    out = hop.direction == "out"
    first, *rest = p.words.split()
    if form == "asked" and p.kind == "act" and out and first.endswith("s") and not first.endswith("ss"):
        text = "What does {x} " + " ".join([third_person_base(first), *rest]) + "{c}?"
    else:
        text = PHRASINGS[p.kind][form][0 if out else 1]
    text = text.format(x=x, w=p.words, inv=p.inverse, verb=p.words.split()[-1], c=_condition_words(hop.where))
    return text[0].upper() + text[1:] if form == "stated" else text


NESTING_KINDS = frozenset(("noun", "pair", "made"))  # kinds whose walks read as one noun phrase: 'the nationality of the spouse of X'


def natural_question(start: str, hops: list[Hop], phrases: Callable[[str], Phrase], several: bool = False,
                     ask: Ask | None = None, dated: Callable[[str], bool] = lambda key: False) -> str:
    """A question as a user asks it: ('Matthew Lawrence', [nationality out]) -> 'What is the nationality of Matthew
    Lawrence?'; ('Mr Mann', [characters_created in]) -> 'Who created Mr Mann?'. Several answers: '... (There may be
    several; name any one.)'. An ask of a node's property: 'What is the population of <the walk>?'; when was for a
    participle key with dates (founded); of the last edge's: 'What is the since of the leads link from Irina?'."""
    if len(hops) > 1 and not {phrases(h.relation).kind for h in hops} <= NESTING_KINDS:
        return _sequential_question(start, hops, phrases, several, ask, dated)
    np = start
    for hop in hops[:-1]:
        np = phrase_hop("nested", np, hop, phrases(hop.relation))
    last = hops[-1]
    if ask is None:
        text = phrase_hop("asked", np, last, phrases(last.relation))
    elif ask.of_ == "edge":
        text = (f"What is the {' '.join(relation_words(ask.key))} of the {phrases(last.relation).words} link "
                f"{'from' if last.direction == 'out' else 'to'} {np}{_condition_words(last.where)}?")
    else:
        text = _property_question(phrase_hop("nested", np, last, phrases(last.relation)), ask.key, dated)
    return text + (" (There may be several; name any one.)" if several else "")


def _property_question(reached: str, key: str, dated: Callable[[str], bool]) -> str:
    """'What is the population of X?'; 'When was X founded?' for a participle key whose values are dates or years."""
    words = relation_words(key)
    if words[-1].endswith("ed") or words[-1] in IRREGULAR_PARTICIPLES:
        return f"When was {reached} {' '.join(words)}?" if dated(key) else f"What is the value of \"{' '.join(words)}\" for {reached}?"
    return f"What is the {' '.join(words)} of {reached}?"


def _sequential_question(start: str, hops: list[Hop], phrases: Callable[[str], Phrase], several: bool, ask: Ask | None,
                         dated: Callable[[str], bool]) -> str:
    """A longer walk with verbs, a sentence a hop: 'Irina leads something. That one uses something. What is that one
    developed by?'; an ask is put to the node reached ('... When was that one founded?')."""
    sentences, subject = [], start
    for hop in hops[:-1]:
        sentences.append(phrase_hop("stated", subject, hop, phrases(hop.relation)))
        subject = "that one"
    if ask is not None and ask.of_ == "node":
        sentences.append(phrase_hop("stated", subject, hops[-1], phrases(hops[-1].relation)))
        text = _property_question("that one", ask.key, dated) + (" (There may be several; name any one.)" if several else "")
        return " ".join(sentences) + " " + text
    return " ".join(sentences) + " " + natural_question(subject, hops[-1:], phrases, several, ask, dated)

class Wording:
    """The text of a generated question: natural (English; see natural_question) or the templated walk (question_text),
    the only one for Russian. phrases: --relation-phrases, over what relation names give."""

    def __init__(self, graph: Graph, spec: GenerateSpec) -> None:
        self.language, self.natural = spec.language, spec.wording == "natural" and spec.language == "en"
        self.phrases, self.derived = dict(spec.phrases), {}
        self.graph = graph
        self.dates: dict[str, bool] = {}

    def __call__(self, start: str, hops: list[Hop], several: bool = False, ask: Ask | None = None) -> str:
        if not self.natural:
            return question_text(self.language, start, hops, several=several, ask=ask)
        return natural_question(start, hops, self.phrase, several, ask, self.dated)

    def phrase(self, relation: str) -> Phrase:
        known = self.phrases.get(relation) or self.derived.get(relation)
        if known is None:
            known = self.derived[relation] = derive_phrase(relation)
        return known

    def dated(self, key: str) -> bool:
        """Whether a node property's values are dates or years (an ask reads 'When was X founded?')."""
        if key not in self.dates:
            values = [v for props in self.graph.props_by_node.values() for k, v in props if k == key]
            self.dates[key] = bool(values) and all(
                (isinstance(v, str) and re.match(r"\d{4}(-\d\d){0,2}(\b|T)", v)) or (type(v) is int and 1000 <= v <= 2100) for v in values)
        return self.dates[key]


class Roles:
    """Who else plays a node's part: nodes of its type, or on an untyped graph the nodes at the same end of the
    relation it was reached by; and which hops those peers can take."""

    def __init__(self, graph: Graph, index: dict) -> None:
        self.index = index
        self.type = {n.id: n.type for n in graph.nodes}
        self.typed = len(set(self.type.values())) > 1
        self.by_type: dict[str, list[str]] = {}
        for n in graph.nodes:
            self.by_type.setdefault(n.type, []).append(n.id)
        self.ends: dict[tuple[str, str], set[str]] = {}  # (relation, "out"|"in") -> nodes reached that way
        self.hops_of: dict[str, set[tuple[str, str]]] = {}  # node -> the (relation, direction) it can follow
        for node, relation, direction in index:
            self.hops_of.setdefault(node, set()).add((relation, direction))
            self.ends.setdefault((relation, "in" if direction == "out" else "out"), set()).add(node)

    def peers(self, nodes: set[str], came_by: Hop | None) -> tuple[str, set[str]]:
        """(how the role is named, its nodes) of the nodes reached (by the hop came_by, None at the start)."""
        if self.typed:
            types = sorted({self.type[v] for v in nodes})
            return f"type {', '.join(types)}", {p for t in types for p in self.by_type[t]}
        key = (came_by.relation, came_by.direction)
        return f"reached by {key[0]} {key[1]}", self.ends.get(key, set())

    def near_miss(self, nodes: set[str], came_by: Hop | None, rng: random.Random) -> tuple[Hop, dict] | None:
        """A hop the role's peers can take and none of nodes can, drawn in proportion to how many peers take it."""
        role, peers = self.peers(nodes, came_by)
        held = {h for v in nodes for h in self.hops_of.get(v, ())}
        counts = Counter(h for p in sorted(peers - nodes) for h in self.hops_of.get(p, ()) if h not in held)
        if not counts:
            return None
        options = sorted(counts)
        relation, direction = rng.choices(options, [counts[h] for h in options])[0]
        return Hop(relation, direction), {"role": role, "peers": len(peers), "peers_with_hop": counts[(relation, direction)]}

    def missing_property(self, nodes: set[str], came_by: Hop, graph: Graph, rng: random.Random) -> tuple[str, dict] | None:
        """A property the role's peers have and none of nodes has, drawn in proportion to how many peers have it."""
        if not nodes:
            return None
        role, peers = self.peers(nodes, came_by)
        props = graph.props_by_node
        held = {k for v in nodes for k, _ in props.get(v, ())}
        counts = Counter(k for p in sorted(peers - nodes) for k, v in props.get(p, ()) if k not in held and answerable_value(v))
        if not counts:
            return None
        options = sorted(counts)
        key = rng.choices(options, [counts[k] for k in options])[0]
        return key, {"role": role, "peers": len(peers), "peers_with_property": counts[key]}


def orderable(value: object) -> bool:
    """A value a generated condition may compare: a number, or a string that starts like an ISO date (1969, 2019-05-01)."""
    return not isinstance(value, bool) and (isinstance(value, (int, float)) or re.match(r"\d{4}(-\d\d){0,2}(\b|T)", value) is not None)


def answerable_value(value: object) -> bool:
    """A value a generated question may ask for: a number, a boolean, or a string of at most 3 words and 40 characters."""
    return not isinstance(value, str) or len(value) <= 40 and len(value.split()) <= 3


def question_drawer(spec: GenerateSpec) -> Callable[[Graph, str], tuple[list[dict], dict[int, int]]]:
    """What load_inputs calls to draw the questions of --generate-questions from the graph it read (named where)."""

    def draw(graph: Graph, where: str) -> tuple[list[dict], dict[int, int]]:
        questions, counts = generate_questions(graph, spec)
        if not questions:
            raise BenchmarkError(f"{where}: the graph yields no question of {spec.hops[0]}-{spec.hops[1]} hops (a start needs a "
                                 "name no other node has, and edges to walk); try other --hops")
        return questions, counts

    return draw


def generate_questions(graph: Graph, spec: GenerateSpec) -> tuple[list[dict], dict[int, int]]:
    """Questions in the input file's shape, drawn with a seeded random.Random; and how many per hop count."""
    rng = random.Random(f"{spec.seed}/questions")
    index = edge_index(graph.edges)
    incident = incident_edges(graph, canonical=True)
    names = {n.id: n.name for n in graph.nodes}
    name_count = Counter(fold_answer(n.name) for n in graph.nodes)
    starts = sorted(i for i in incident if name_count[fold_answer(names[i])] == 1)  # a start the text names unambiguously
    share = spec.property_share if graph.has_props else 0.0  # no draw is spent on it otherwise: the same questions as before
    word = Wording(graph, spec)
    draw = QuestionDraw(graph, index, incident, names, starts, Roles(graph, index), rng, word, share)
    lo, hi = spec.hops
    n_abstain = round(spec.n * spec.abstain_share)
    plan = [(lo + k % (hi - lo + 1), False) for k in range(spec.n - n_abstain)]
    plan += [(lo + k % (hi - lo + 1), True) for k in range(n_abstain)]
    made, seen, counts = [], set(), Counter()
    for hops_n, abstain in plan:
        for _ in range(GENERATION_DRAWS if starts else 0):
            q = draw(hops_n, abstain)
            if q is not None and (q["query"]["start"], json.dumps(q["query"]["hops"])) not in seen:
                seen.add((q["query"]["start"], json.dumps(q["query"]["hops"])))
                made.append(q)
                counts[hops_n] += 1
                break
    # An abstention question asks for "nodes" as often as a positive one has an answer set: the wording says nothing.
    positives = [q for q in made if not q["insufficient"]]
    share = sum("answers" in q for q in positives) / len(positives) if positives else 0.0
    for q in made:
        if q["insufficient"] and rng.random() < share:
            query = validate_query(q["query"], "", set(names))
            q["question"] = word(names[query.start], list(query.hops), several=True, ask=query.ask)
    ordered = sorted(made, key=lambda q: (len(q["query"]["hops"]), q["insufficient"]))
    for k, q in enumerate(ordered, 1):
        q["id"] = f"g{k:0{len(str(len(ordered)))}d}"
    return [{"id": q.pop("id"), **q} for q in ordered], dict(sorted(counts.items()))


@dataclass
class QuestionDraw:
    """One draw of a generated question: a walk from a random start, then a near miss for an abstention question."""

    graph: Graph
    index: dict
    incident: dict
    names: dict
    starts: list[str]
    roles: Roles
    rng: random.Random
    word: Wording
    property_share: float = 0.0

    def __call__(self, hops_n: int, abstain: bool) -> dict | None:
        rng, edges = self.rng, self.graph.edges
        start = rng.choice(self.starts)
        hops, node, came_by = [], start, None
        props = self.property_share and rng.random() < self.property_share  # a question about properties
        for _ in range(hops_n - abstain):
            choices = [i for i in self.incident[node] if i != came_by]
            if not choices:
                return None
            i = rng.choice(choices)
            hop = Hop(edges[i].relation, "out") if edges[i].source == node else Hop(edges[i].relation, "in")
            hops.append(hop._replace(where=self._condition(node, hop, i)) if props else hop)
            node, came_by = (edges[i].target if hop.direction == "out" else edges[i].source), i
        query = Query(start, tuple(hops))
        if abstain:
            return self._near_miss(query, props)
        if props:
            query = replace(query, ask=self._ask(node, came_by))
        found = solve(self.graph, query, self.index)
        ends = sorted({end for _, end in found})
        if not found or len(found) > MAX_GOLD_PATHS or len(ends) > MAX_ANSWERS:
            return None
        answers = gold_answers(self.graph, query, found)
        several = len(answers) > 1 if query.ask else len(ends) > 1
        if query.ask and query.ask.of_ == "edge" and several:
            return None  # "the last edge" is one edge: its value must be one
        text = self.word(self.names[start], list(query.hops), several=several, ask=query.ask)
        if any(mentions(fold_answer(text), a) for a in (*map(fold_answer, answers), *(e.casefold() for e in ends))):
            return None  # its wording would give the answer away (a walk back to the start)
        if several and rng.random() < 0.7:
            return None  # prefer one answer; keep some answer sets, never drop them all
        return {"id": "", "question": text, "insufficient": False, "query": _query_dict(query),
                **singular_or_plural("answer", "answers", answers), **singular_or_plural("answer_id", "answer_ids", ends),
                **singular_or_plural("path", "paths", [list(p) for p, _ in found])}

    def _condition(self, node: str, hop: Hop, i: int) -> tuple[Condition, ...]:
        """A condition on the edge i just drawn that it meets and another edge the hop could follow does not
        (the drawn edge's value the lowest, highest or only one of its kind: <=, >= or =), or none."""
        props = self.graph.edge_props
        if not props or not props[i]:
            return ()
        siblings = [j for j in self.index.get((node, hop.relation, hop.direction), ()) if j != i]
        options = []
        for key, value in props[i]:
            if not orderable(value):
                continue
            others = [v for j in siblings if (v := prop_of(props[j], key)) is not MISSING and isinstance(v, str) == isinstance(value, str)
                      and not isinstance(v, bool) and v != value]
            if others:
                op = "<=" if value < min(others) else ">=" if value > max(others) else "="
                options.append(Condition(key, op, value))
        return (self.rng.choice(options),) if options else ()

    def _ask(self, node: str, last: int) -> Ask | None:
        """A property of the node reached, or else of the last edge followed, to ask for instead of the node: one
        whose value a short answer can give (not a description)."""
        node_props = [k for k, v in self.graph.props_by_node.get(node, ()) if answerable_value(v)]
        if node_props:
            return Ask("node", self.rng.choice(node_props))
        edge_props = [k for k, v in self.graph.edge_props[last] if answerable_value(v)] if self.graph.edge_props and last is not None else []
        return Ask("edge", self.rng.choice(edge_props)) if edge_props else None

    def _near_miss(self, query: Query, props: bool = False) -> dict | None:
        """The walk of query, then one more hop that the reached nodes' role can take and they cannot; or, for a
        question about properties whose walk reaches nodes that lack a property their role's peers have, that
        property asked for."""
        if props and query.hops:
            reached = {end for _, end in solve(self.graph, query, self.index)}
            key = self.roles.missing_property(reached, query.hops[-1], self.graph, self.rng)
            if key is not None and not solve(self.graph, replace(query, ask=Ask("node", key[0])), self.index):
                query = replace(query, ask=Ask("node", key[0]))
                text = self.word(self.names[query.start], list(query.hops), ask=query.ask)
                return {"id": "", "question": text, "insufficient": True, "query": _query_dict(query), "answer": ABSTAIN,
                        "path": [], "answer_id": None, "near_miss": {"hop": "ask", **key[1]}}
        if query.hops:
            reached = {end for _, end in solve(self.graph, query, self.index)}
            came_by = query.hops[-1]
        else:
            reached = {query.start}
            e = self.graph.edges[self.rng.choice(self.incident[query.start])]  # the start's role: one of its edges
            came_by = Hop(e.relation, "out") if e.target == query.start else Hop(e.relation, "in")
        if not reached:
            return None
        missed = self.roles.near_miss(reached, came_by, self.rng)
        if missed is None:
            return None
        hop, why = missed
        query = Query(query.start, (*query.hops, hop))
        if solve(self.graph, query, self.index):
            return None
        text = self.word(self.names[query.start], list(query.hops))
        return {"id": "", "question": text, "insufficient": True, "query": _query_dict(query), "answer": ABSTAIN, "path": [],
                "answer_id": None, "near_miss": {"hop": len(query.hops), **why}}


def _query_dict(query: Query) -> dict:
    """A query in the input file's shape: 'where' only on hops that have conditions, 'ask' only when it asks."""
    hops = [{"relation": h.relation, "direction": h.direction,
             **({"where": [{"property": c.key, "op": c.op, "value": c.value} for c in h.where]} if h.where else {})} for h in query.hops]
    return {"start": query.start, "hops": hops, **({"ask": {"property": query.ask.key, "of": query.ask.of_}} if query.ask else {})}


def preflight_solver(variant: Variant) -> None:
    """Stop the run unless the solver agrees with every question's gold data on this graph variant (the input
    graph was checked by check_questions; a variant that fails here is a bug in building it)."""
    for context in variant.contexts:
        index = edge_index(context.graph.edges)
        for q in context.questions:
            problem = solver_problem(context.graph, q, index) if q.query else None
            if problem:
                where = f"graph variant {variant.name}" + (f", context {context.id}" if context.id else "")
                raise BenchmarkError(f"control solver disagrees with question {q.id} on {where}: {problem}")


SIZES = ("small", "medium", "large")
ID_VARIANTS = ("original", "short", "pseudonyms")
MEDIUM_BRANCHES = (10, 20)  # distractor branches per start node in medium: drawn from this range
BRANCH_LENGTHS = (1, 2, 2, 3)
BRANCH_DRAWS = 40  # draws per branch before an anchor is given up as unable to take one
NAME_DRAWS = 30  # draws from a vocabulary in a row that give no fresh name before it counts as spent
HELD_FOR_GOOD = 8  # times in a row a vocabulary's fresh names are all held back by the shares, with no new node of its
# type made between, before it counts as spent: the shares open only as the type grows (a hand-made graph's five
# organizations whose first words are all at their share stalled every anchor; the draws are random, so one miss is
# not proof)
WORD_MODEL_ORDER = 3  # characters of context of the word model that makes new one-word names
WORD_MODEL_MIN_WORDS = 12  # distinct words a word model needs; with fewer it would only copy them
TYPE_SHARE_SLACK = 1.6  # past medium, a type may be this many times as common among new nodes as among the input's
DEFAULT_SEED = 2026

# Names for the article's node types, used when the input names of that type are Cyrillic too, and only
# in the word counts the input's names of that type have (the article's persons are one first name each).
# None equals or extends a name of the input (checked as they are drawn). Every other role is named from
# the input's own words. A pool runs out: then the input's own words are recombined, then no name is made.
_FIRST_M = ("Алексей Александр Анатолий Андрей Антон Аркадий Арсений Артём Богдан Борис Вадим Валентин Валерий Василий "
            "Виктор Виталий Владимир Владислав Всеволод Вячеслав Геннадий Георгий Герман Глеб Григорий Даниил Денис "
            "Дмитрий Евгений Егор Захар Иван Игорь Илья Кирилл Константин Лев Леонид Марк Матвей Михаил Никита Николай "
            "Олег Павел Пётр Роман Руслан Святослав Семён Сергей Станислав Степан Тимофей Тимур Фёдор Филипп Юрий Ярослав")
_FIRST_F = ("Алина Алла Анастасия Ангелина Анна Валентина Валерия Варвара Вера Вероника Виктория Галина Дарья Диана Евгения "
            "Екатерина Елена Елизавета Жанна Зоя Злата Инна Карина Кира Ксения Лариса Лидия Любовь Людмила Маргарита Марина "
            "Мария Милана Надежда Наталья Нина Оксана Олеся Ольга Полина Раиса Римма Светлана Софья Таисия Тамара Ульяна Юлия Яна")
_SURNAMES = "Белов Волков Гусев Дроздов Егоров Жуков Зайцев Козлов Лебедев Морозов Никитин Орлов Павлов Соколов Титов Фролов Чернов Щукин Яковлев Громов"
_ORG_WORDS = ("Восток Запад Юг Меридиан Прогресс Квант Логос Интеграл Алгоритм Эврика Стрела Волна Исток Рассвет Полюс Байкал "
              "Урал Енисей Алтай Аврора Горизонт Зенит Импульс Спектр Сфера Орбита Кристалл Гранит Сапфир Титан Феникс Пегас "
              "Сокол Кондор Нева Волга Ока Кама Амур Тайга Фактор Синтез Матрица Формула Модуль Контур Ресурс Потенциал")
_METHOD_ADJECTIVES = ("Локальный Глобальный Иерархический Разреженный Плотный Адаптивный Инкрементальный Вероятностный "
                      "Спектральный Жадный Итеративный Рекурсивный Обратный Многоуровневый Лексический Кластерный "
                      "Статистический Эвристический Комбинаторный Градиентный Линейный Нелинейный Параллельный "
                      "Распределённый Стохастический Детерминированный Быстрый Точный Приближённый Марковский Байесовский")
NAME_POOLS = {
    "person": _FIRST_M.split() + _FIRST_F.split()
    + [f"{f} {s}" for f in _FIRST_M.split()[:20] for s in _SURNAMES.split()]
    + [f"{f} {s}а" for f in _FIRST_F.split()[:20] for s in _SURNAMES.split()],
    "project": (
        "Вега Сириус Альтаир Денеб Капелла Процион Регул Спика Антарес Ригель Поллукс Кастор Альдебаран Полярис "
        "Гелиос Зенит Квазар Меридиан Горизонт Импульс Спектр Сигма Омега Дельта Гамма Факел Маяк Компас Радуга "
        "Кристалл Сапфир Рубин Гранит Кварц Титан Феникс Пегас Сокол Беркут Кондор Ястреб Аргон Неон Ксенон Криптон "
        "Андромеда Аврора Арктур Беллатрикс Венера Веста Галактика Гидра Ирида Кассиопея Кентавр Лира Меркурий Нептун "
        "Орфей Персей Плутон Сатурн Юпитер Церера Эридан Янус Аполлон Гермес Прометей Икар Геракл Тесей Одиссей Ясон "
        "Кедр Клён Ясень Ольха Рябина Липа Тополь Вереск Лотос Ирис Астра Гиацинт Нарцисс Азимут Апогей Перигей "
        "Экватор Тропик Циклон Муссон Пассат Бриз Прибой Штиль Гейзер Вулкан Ледник Айсберг Каньон Фьорд Атолл Риф"
    ).split(),
    "method": [f"{adjective} {noun}"
               for noun in "анализ отбор индекс фильтр расчёт вывод разбор синтез обход поиск алгоритм подбор перебор спуск прогноз контроль".split()
               for adjective in _METHOD_ADJECTIVES.split()],
    "organization": [f"{kind} {word}" for word in _ORG_WORDS.split()
                     for kind in "Институт Центр Лаборатория Бюро Фонд Консорциум".split()],
    "city": (
        "Самара Пермь Уфа Омск Тверь Тула Курск Орёл Сочи Псков Вологда Кострома Ярославль Иваново Владимир Рязань "
        "Липецк Тамбов Воронеж Саратов Пенза Ульяновск Оренбург Челябинск Тюмень Курган Барнаул Кемерово Иркутск Чита "
        "Хабаровск Владивосток Мурманск Архангельск Калуга Брянск Смоленск Новгород Петрозаводск Сыктывкар Киров "
        "Ижевск Чебоксары Саранск Астрахань Волгоград Ставрополь Краснодар Белгород Новосибирск Красноярск Якутск "
        "Абакан Ангарск Арзамас Батайск Бийск Благовещенск Братск Владикавказ Выборг Гатчина Дербент Дзержинск Елец "
        "Ессентуки Златоуст Калининград Кисловодск Коломна Котлас Магадан Магнитогорск Майкоп Махачкала Миасс Муром "
        "Нальчик Находка Нижнекамск Новокузнецк Новороссийск Норильск Обнинск Орск Печора Пятигорск Рыбинск Салехард "
        "Северодвинск Серпухов Сургут Сызрань Таганрог Тобольск Тольятти Уссурийск Ухта Череповец Черкесск Элиста "
        "Энгельс Армавир Камышин Ачинск Канск Минусинск"
    ).split(),
}
# English words a role's names may be widened with, one pool per kind of word: when the words at one position
# of a role's names (its first names, its surnames, its one-word city names, the words of its titles) are
# largely of one pool, that pool's other words may take that position too. A hand-made graph of eight people
# whose ids are their first names ('person_ana') has no first name left to give a new person; the pool does.
_GIVEN = ("Aaron Abby Abdul Abigail Ada Adam Adele Adrian Ahmed Aidan Aisha Alan Albert Alex Alexa Alfie Ali Alice Alicia "
          "Alma Amara Amber Amelia Amir Amy Ana Andre Andrea Andrew Angela Anita Ann Anna Anne Anton Arjun Arthur Asha Ava "
          "Ben Benjamin Bianca Bill Bob Boris Brad Brenda Brian Bruce Bruno Caleb Camila Carl Carla Carlos Carmen Carol "
          "Caroline Celia Charles Charlie Chen Chloe Chris Claire Clara Colin Connor Dan Daniel Daria David Dean Deborah "
          "Dennis Dev Diana Diego Dina Donna Dylan Ed Eden Edgar Edward Eli Elena Eliza Ella Ellen Emil Emily Emma Eric "
          "Erin Ethan Eva Evan Felix Fiona Frank Fred Gabriel Gary George Georgia Grace Greg Hana Hannah Harry Hassan "
          "Hector Helen Henry Hugo Ian Ines Ingrid Ira Iris Isaac Isabel Ivan Ivy Jack Jacob Jade James Jamie Jana Jane "
          "Jason Jay Jean Jenny Jessica Jim Joan Joe John Jonas Jorge Jose Joseph Josh Joy Juan Julia Julian June Kai "
          "Karen Karl Kate Katie Keith Ken Kenji Kevin Kim Kira Kyle Lara Lars Laura Leah Lee Leila Leo Leon Liam Lily "
          "Lina Linda Lisa Liz Logan Lola Lucas Lucy Luis Luke Luna Maria Mara Marco Marcus Maria Marie Mark Martin Mary "
          "Mason Matt Max Maya Mei Mia Michael Mike Mila Milo Mira Nadia Naomi Nate Neil Nick Nina Noah Noel Nora Olga "
          "Oliver Olivia Omar Oscar Owen Pablo Pam Paul Paula Pedro Peter Petra Phil Priya Quinn Rachel Rafael Rahul Ray "
          "Rebecca Rita Rob Robert Rosa Rose Ross Ruby Ruth Ryan Sally Sam Sara Sarah Scott Sean Simon Sofia Sophie Stella "
          "Steve Susan Tara Ted Theo Thomas Tim Tina Tom Tony Uma Valerie Vera Victor Vincent Wade Walter Will Yara Yuki "
          "Zane Zara Zoe")
_FAMILY = ("Abbott Acosta Adams Ahmed Alexander Ali Allen Alvarez Andersen Anderson Bailey Baker Banks Barnes Bauer Becker "
           "Bell Bennett Berg Bishop Black Brandt Brooks Brown Bryant Burke Burns Butler Campbell Carter Castro Chan Chavez "
           "Chen Clark Cohen Cole Coleman Collins Cook Cooper Costa Cox Cruz Dalton Davies Davis Diaz Dixon Duarte Dunn "
           "Edwards Ellis Erikson Evans Farah Ferguson Fischer Fisher Fleming Flores Ford Foster Fox Garcia Gibson Gill "
           "Gomez Gonzalez Graham Grant Gray Green Griffin Gupta Haddad Hale Hall Hamilton Hansen Harris Hart Hayes "
           "Henderson Hernandez Hill Holm Horvat Howard Hughes Hunt Ito Jackson James Jansen Jensen Johnson Jones Jordan "
           "Kane Kaur Keller Kelly Kennedy Khan Kim King Klein Knight Kowalski Kumar Lang Larsen Lee Lewis Lin Long Lopez "
           "Lund Marsh Marshall Martin Martinez Mason Meyer Miller Mills Mitchell Moore Moreau Morgan Morris Murphy "
           "Murray Nakamura Nash Nelson Nguyen Nielsen Novak Okafor Olsen Ortiz Owens Park Parker Patel Perez Pereira "
           "Perry Peters Petrov Phillips Pike Porter Powell Price Quinn Ramos Reed Reyes Reynolds Richards Rivera "
           "Roberts Robinson Rodriguez Rogers Rossi Ruiz Russell Russo Ryan Sanchez Santos Sato Schmidt Scott Shah Shaw "
           "Silva Simmons Singh Smith Stewart Stone Strand Sullivan Suzuki Tanaka Taylor Thomas Thompson Torres Tran "
           "Turner Vance Vargas Vogel Wagner Walker Walsh Ward Watson Weber Wells West White Williams Wilson Wolf Wood "
           "Wright Young Zhang Ziegler")
_CITIES = ("Aarhus Accra Adelaide Algiers Amman Amsterdam Antwerp Athens Atlanta Auckland Austin Baku Baltimore Bangkok "
           "Barcelona Basel Beijing Beirut Belfast Belgrade Bergen Berlin Bern Bogota Bologna Bordeaux Boston Bratislava "
           "Bremen Brisbane Bristol Brno Bruges Brussels Bucharest Budapest Cairo Calgary Cardiff Chicago Cologne "
           "Copenhagen Cork Dakar Dallas Delft Delhi Denver Detroit Doha Dresden Dubai Dublin Durban Edinburgh Florence "
           "Frankfurt Gdansk Geneva Genoa Ghent Glasgow Gothenburg Graz Hamburg Hanoi Havana Helsinki Houston Istanbul "
           "Jakarta Kiev Krakow Kyoto Lagos Leeds Leipzig Lille Lima Linz Lisbon Liverpool London Lyon Madrid Malmo "
           "Manchester Manila Marseille Melbourne Memphis Miami Milan Montreal Moscow Mumbai Munich Nairobi Nantes Naples "
           "Nice Osaka Oslo Ottawa Oxford Palermo Paris Perth Phoenix Portland Porto Prague Quebec Reykjavik Riga Rome "
           "Rotterdam Salzburg Santiago Seattle Seoul Seville Shanghai Singapore Sofia Stockholm Sydney Tallinn Tampere "
           "Tbilisi Tokyo Toronto Toulouse Turin Utrecht Valencia Vancouver Venice Vienna Vilnius Warsaw Zagreb Zurich")
_TITLE_WORDS = ("Amber Anchor Arrow Ash Aurora Autumn Beacon Birch Bloom Blue Bright Bridge Canyon Cedar Circle Cloud Coast "
                "Comet Copper Coral Crest Crimson Crown Dawn Delta Desert Drift Dune Dusk Echo Eclipse Ember Falcon Field Fire "
                "Flint Frost Garden Glass Golden Granite Green Grove Harbor Harvest Haven Hollow Horizon Iron Island Ivory Jade "
                "Lantern Legacy Light Lights Lumen Maple Meadow Mirror Mist Moon Nomad North Nova Oak Ocean Orbit Pacific Peak "
                "Pine Pioneer Polar Prism Quiet Radiant River Rock Royal Sage Salt Shadow Signal Silver Sky Solar Spark Spring "
                "Star Steel Stone Storm Summit Sun Swift Thunder Tide Timber Titan Trail Vertex Vista Wave West Wild Willow "
                "Wind Winter Wolf Year Apex Atlas")
_KIND_WORDS = ("Films Pictures Studios Records Labs Works Group Media Press Books Systems Partners Holdings Industries "
               "Motors Airlines Bank Foundation Institute Society Company Capital Ventures Energy Foods Games Health "
               "Software Networks Logistics Publishing Entertainment Productions Theatre Gallery Museum College University")
WORD_POOLS = [set(pool.split()) for pool in (_GIVEN, _FAMILY, _CITIES, _TITLE_WORDS, _KIND_WORDS)]
POOL_SHARE = 0.3  # the share of a position's distinct words a pool must hold to lend that position its other words
POOL_OWN = 10  # a graph that uses this many of a pool's words anywhere lends only those: words it never uses would
# tell its new names from its real ones (an n-gram classifier learns them)
_TRANSLIT = {
    **dict(zip("абвгдеёжзийклмнопрстуфхцчшщыэюя", "a b v g d e e zh z i y k l m n o p r s t u f kh ts ch sh shch y e yu ya".split())),
    "ъ": "",
    "ь": "",
}


def slug(name: str) -> str:
    """An id fragment from a name: 'Анна Белова' -> 'anna_belova'."""
    out = "".join(_TRANSLIT.get(c, c) if not c.isascii() else c for c in name.lower())
    return "_".join("".join(c if c.isascii() and c.isalnum() else " " for c in out).split()) or "node"


def snake(name: str) -> str:
    """An id fragment that keeps the name's own script: 'Гран Тур' -> 'гран_тур'."""
    return "_".join(re.findall(r"[^\W_]+", name.lower()))


def words(name: str) -> str:
    """An id fragment that keeps the name's casing: 'Golden Gate' -> 'Golden_Gate'."""
    return "_".join(re.findall(r"[^\W_]+", name))


def underscored(name: str) -> str:
    """An id that is the name lower-cased with its spaces as underscores, punctuation kept (Freebase-derived KGs):
    'Ferdinand Georg of Saxe-Coburg-Gotha' -> 'ferdinand_georg_of_saxe-coburg-gotha'."""
    return "_".join(name.lower().split())


ID_SCHEMES = (slug, snake, words, underscored)  # how an id is made from its node's name, tried in this order


def script(text: str) -> str:
    """The script of a text's first letter: 'Kazan' -> 'LATIN', 'Казань' -> 'CYRILLIC', '42' -> ''."""
    letter = next((c for c in text if c.isalpha()), None)
    return unicodedata.name(letter, "OTHER ?").split()[0] if letter else ""


@dataclass(frozen=True)
class Context:
    """The graph some questions' prompts show: the whole graph for every question (the article's setting, id
    ""), or one question's own subgraph (its id), given by the questions file or cut by --context khop."""

    id: str
    graph: Graph  # in its canonical order (permutation 0)
    questions: tuple[Question, ...]  # paths index into graph.edges; ids follow any renaming

    def seed(self, seed: int, size: str, what: str) -> str:
        """The seed string of a random choice about this context: '2026/medium/interleave' for the shared graph (as
        ever), '2026/medium/q7/interleave' for question q7's own."""
        return f"{seed}/{size}/{self.id}/{what}" if self.id else f"{seed}/{size}/{what}"


@dataclass(frozen=True)
class Variant:
    size: str  # small | medium | large
    ids: str  # original | short | pseudonyms
    contexts: tuple[Context, ...]  # one shared graph, or one per question
    branches: int  # distractor branches added to the input graph, over every context
    shortage: str = ""  # why it has fewer branches than its size wants, when the graph's names ran out
    mapping_sha256: str = ""  # --pseudonymize: SHA-256 of the renaming (old id -> [new id, new name])

    @property
    def name(self) -> str:
        return f"{self.size}/{self.ids}"

    @property
    def questions(self) -> tuple[Question, ...]:
        return tuple(q for c in self.contexts for q in c.questions)

    @property
    def shared(self) -> bool:
        """One graph for every question: the article's setting."""
        return len(self.contexts) == 1 and not self.contexts[0].id


def shared_variant(graph: Graph, questions: tuple[Question, ...], size: str = "small", ids: str = "original") -> Variant:
    """The article's setting: one graph that every question is asked on."""
    return Variant(size, ids, (Context("", graph, questions),), 0)


def _first_word(name: str) -> str:
    return name.split(" ", 1)[0].casefold()


def word_shape(word: str) -> tuple[str, str]:
    """How a word looks, not what it says: ('title', ','), ('lower', ''), ('upper', '-')..."""
    letters = "".join(c for c in word if c.isalpha())
    case = "lower" if letters.islower() else "upper" if letters.isupper() and len(letters) > 1 else "title" if letters[:1].isupper() else "other"
    return case, "".join(c for c in word[-1:] if not c.isalnum())


def _has_digit(name: str) -> bool:
    return any(c.isdigit() for c in name)


class WordModel:
    """A character model of a role's one-word names, which draws new words with the same letter sequences:
    trained on 'Springton', 'Oakville', 'Brookdale'... it may draw 'Oakton' or 'Springdale'."""

    def __init__(self, words: list[str]) -> None:
        self.words = set(words)
        self.next: dict[str, list[str]] = {}  # the last WORD_MODEL_ORDER characters -> the characters that follow them
        k = WORD_MODEL_ORDER
        for word in sorted(self.words):
            padded = "\x02" * k + word + "\x03"
            for i in range(len(word) + 1):
                self.next.setdefault(padded[i : i + k], []).append(padded[i + k])
        lengths = sorted(len(w) for w in self.words)
        self.shortest, self.longest = lengths[0], lengths[-1]

    def draw(self, rng: random.Random) -> str | None:
        context, out = "\x02" * WORD_MODEL_ORDER, []
        while len(out) <= self.longest:
            c = rng.choice(self.next[context])
            if c == "\x03":
                word = "".join(out)
                return word if self.shortest <= len(word) and word not in self.words else None
            out.append(c)
            context = context[1:] + c
        return None


# Word pools of a role's kind, for an untyped graph whose one-word names cannot be varied from its own names (five
# countries give no sixth): a role is of a kind when at least half of its names are in that kind's pool (case aside),
# and its new one-word names (distractors) and pseudonyms are then other words of the pool, in its names' case, so
# that a country stays a country and a profession a profession (never a surname, never a made-up blend).
KIND_POOLS = {
    "country": ("albania algeria andorra angola argentina armenia australia austria azerbaijan bahrain bangladesh belarus "
                "belgium bolivia botswana brazil bulgaria cambodia cameroon canada chile china colombia croatia cuba cyprus "
                "denmark ecuador egypt eritrea estonia ethiopia finland france gabon georgia germany ghana greece guatemala "
                "honduras hungary iceland india indonesia iran iraq ireland israel italy jamaica japan jordan kazakhstan kenya "
                "kuwait latvia lebanon liberia libya lithuania luxembourg madagascar malawi malaysia mali malta mexico moldova "
                "monaco mongolia montenegro morocco mozambique namibia nepal netherlands nicaragua niger nigeria norway oman "
                "pakistan panama paraguay peru philippines poland portugal qatar romania russia rwanda scotland senegal serbia "
                "singapore slovakia slovenia somalia spain sudan sweden switzerland syria taiwan tanzania thailand tunisia turkey "
                "uganda ukraine uruguay uzbekistan venezuela vietnam wales yemen zambia zimbabwe").split(),
    "profession": ("accountant actor actress architect artist astronaut astronomer athlete author baker banker biologist "
                   "bishop boxer cartoonist chef chemist choreographer cinematographer comedian composer conductor dancer "
                   "designer diplomat director economist editor engineer entrepreneur explorer farmer film_producer "
                   "footballer geographer historian illustrator inventor journalist judge lawyer librarian linguist "
                   "lyricist mathematician merchant military_officer missionary model monk musician novelist nurse painter "
                   "philanthropist philosopher photographer physician physicist pianist pilot playwright poet politician "
                   "priest professor psychologist publisher rapper scientist screenwriter sculptor singer soldier sociologist "
                   "songwriter statesman surgeon teacher theologian translator violinist writer").replace("_", " ").split(" "),
    "language": ("albanian arabic armenian basque bengali bulgarian catalan chinese croatian czech danish dutch english "
                 "estonian finnish french georgian german greek hebrew hindi hungarian icelandic indonesian irish italian "
                 "japanese korean latin latvian lithuanian malay norwegian persian polish portuguese romanian russian serbian "
                 "slovak slovene spanish swahili swedish tamil thai turkish ukrainian urdu vietnamese welsh yiddish").split(),
}


def role_kind(names: list[str]) -> str | None:
    """The kind (KIND_POOLS) at least half of a role's names are words of, or None: ['portugal', 'france', 'narnia'] ->
    'country'."""
    folded = [n.casefold() for n in names]
    for kind, pool in KIND_POOLS.items():
        known = set(pool)
        if folded and 2 * sum(n in known for n in folded) >= len(folded):
            return kind
    return None


def in_case_of(word: str, like: str) -> str:
    """word in the case style of like: ('belgium', 'Portugal') -> 'Belgium'; ('belgium', 'PORTUGAL') -> 'BELGIUM'."""
    return word.upper() if like.isupper() else word.title() if like.istitle() else word


HEAD_WORD_SHARE = 0.02  # a word in more than this share of a group's names is a function word ('of', 'van'), no head


def head_words(names: list[str]) -> list[str]:
    """Real one-word names for a group whose one-word names are in use: the last words (the head of an English
    noun phrase: 'chartered accountant' -> 'accountant', 'saint petersburg' -> 'petersburg') of its names of
    several words, of four letters or more and in at most HEAD_WORD_SHARE of its names; sorted."""
    counts = Counter(w.casefold() for n in names for w in set(n.split(" ")))
    limit = max(HEAD_WORD_SHARE * len(names), 1)
    return sorted({n.split(" ")[-1] for n in names if " " in n and len(n.split(" ")[-1]) >= 4
                   and sum(c.isalpha() for c in n.split(" ")[-1]) >= 4 and counts[n.split(" ")[-1].casefold()] <= limit})


class Vocabulary:
    """The names of one role, and new names made of them: a real name picked as the template (so shapes are as
    common as in the input), each of its words replaced by the word at the same position of another name of the
    same shape, that is the same number of words, each cased and punctuated alike ('Golden Gate Bridge', 'Tower
    Hill Park' may give 'Tower Gate Bridge'; 'North of Nowhere' mixes only with names like it); a one-word name by
    a WordModel of the role's one-word names. No digit or word comes in that the role's names lack."""

    def __init__(self, names: list[str], graph_words: frozenset[str] = frozenset(), real_words: bool = False) -> None:
        self.names = sorted(n for n in set(names) if any(c.isalnum() for c in n))  # a name like "." carries no words
        self.slots: dict[tuple, list[list[str]]] = {}  # shape of a name -> the words at each position, over its names
        self.templates: list[list[list[str]] | None] = []  # per name: the slots of its shape, None for one word
        for name in self.names:
            split = name.split(" ")
            slots = self.slots.setdefault(tuple(map(word_shape, split)), [[] for _ in split])
            for k, word in enumerate(split):
                slots[k].append(word)
            self.templates.append(slots if len(split) > 1 else None)
        single = [w for shape, slots in self.slots.items() if len(shape) == 1 for w in slots[0]]
        self.model = WordModel(single) if len(single) >= WORD_MODEL_MIN_WORDS else None
        for shape, slots in self.slots.items():  # widened by the pool most of a position's words come from
            lent: list[set[str]] = []  # pools lent to earlier positions: a first name's pool is not a surname's
            for k, slot in enumerate(slots):
                slots[k] = slot + _pool_words(slot, shape[k], lent, graph_words)
        self.single = [w for shape, slots in self.slots.items() if len(shape) == 1 for w in slots[0]]
        if len(self.single) > len(single):  # a pool lends one-word names real words: drawn as they are, not modelled
            self.model = None
        # Untyped, or where the word model would draw: a one-word name is a real word of the kind (KIND_POOLS) or a
        # head word of the names of several words, never the word model's blend ('mozambodia', 'Freedland')
        self.real_words = bool(single) and (real_words or self.model is not None)
        if self.real_words:
            kind = role_kind(self.names)
            self.single = sorted({*head_words(self.names), *(KIND_POOLS[kind] if kind else ())})
            self.model = None

    def draw(self, rng: random.Random, like: str | None = None) -> str | None:
        """A new name: in the shape of a real name drawn as the template, or with like, in like's shape."""
        shape = tuple(map(word_shape, like.split(" "))) if like is not None else None
        if shape is not None and shape in self.slots:
            slots = self.slots[shape] if len(shape) > 1 else None
        else:
            slots = rng.choice(self.templates)  # a real name as the template: its shape's slots
        if slots is None:
            if self.model:
                return self.model.draw(rng)
            if not self.single:
                return None
            word = rng.choice(self.single)  # a pool's word, or a name in use (drawn again); a kind's words come
            return in_case_of(word, like or self.names[0]) if self.real_words else word  # lower-case: in the names' case
        return " ".join(rng.choice(words) for words in slots)


def _pool_words(slot: list[str], shape: tuple[str, str], lent: list[set[str]], graph_words: frozenset[str]) -> list[str]:
    """The words a word pool lends one position of a role's names: those of the pool, not lent to an earlier
    position, that holds the most of the position's distinct words, at least two and POOL_SHARE of them (only the
    ones the graph uses anywhere, when it uses POOL_OWN of them or more); none for words of another case or with
    punctuation. The pool is added to lent."""
    distinct = set(slot)
    if shape != ("title", "") or len(distinct) < 2:
        return []
    best = max((pool for pool in WORD_POOLS if pool not in lent), key=lambda pool: len(distinct & pool), default=set())
    if len(distinct & best) < 2 or len(distinct & best) < POOL_SHARE * len(distinct):
        return []
    lent.append(best)
    own = best & graph_words
    return sorted((own if len(own) >= POOL_OWN else best) - distinct)


class Namer:
    """New names and ids that look like the input's: the words, script, casing and id shape of the names of
    the same role (the node's type on a typed graph; on an untyped one, the names at the same end of the
    relation, then those of every role the copied node plays). When a role's names run out, no name is made
    (new_node returns None) rather than a numbered or blended one that a model could tell apart."""

    def __init__(self, graph: Graph, rng: random.Random) -> None:
        self.rng = rng
        self.names = {n.name.casefold() for n in graph.nodes}  # every name in use, folded
        self.input_names = set(self.names)
        self.graph_words = frozenset(w for n in graph.nodes for w in n.name.split(" "))
        self.ids = {n.id for n in graph.nodes}  # every id in use
        self.nodes = {n.id: n for n in graph.nodes}
        self.typed = len({n.type for n in graph.nodes}) > 1
        self.role_names: dict[tuple[str, str], list[str]] = {}  # (relation, "out"|"in") -> names at that end
        self.roles_of: dict[str, set[tuple[str, str]]] = {}  # node id -> the roles it plays
        for e in graph.edges:
            for role, end in (((e.relation, "out"), e.target), ((e.relation, "in"), e.source)):
                self.role_names.setdefault(role, []).append(self.nodes[end].name)
                self.roles_of.setdefault(end, set()).add(role)
        self.type_names: dict[str, list[str]] = {}
        for n in graph.nodes:
            self.type_names.setdefault(n.type, []).append(n.name)
        self.vocabularies: dict[object, Vocabulary] = {}  # never changed once made: forks share them
        self.spent: set = set()  # keys of the vocabularies that gave no fresh name in NAME_DRAWS draws
        self.held_made: dict = {}  # key -> (new nodes of its type, times in a row) when its fresh names were all held back
        self.id_prefix = os.path.commonprefix(sorted(self.ids)[:1] + sorted(self.ids)[-1:]) if len(self.ids) > 1 else ""
        self.heads = Counter(i.split("_", 1)[0] for i in self.ids if "_" in i)  # first words that prefix several ids
        made = Counter(k for n in graph.nodes for k, make in enumerate(ID_SCHEMES) if make(n.name) == n.id)
        self.id_schemes = sorted(ID_SCHEMES, key=lambda make: -made[ID_SCHEMES.index(make)])  # the graph's own scheme first
        self.id_chars = {kind: sorted({c for i in self.ids for c in i if self._kind(c) == kind}) for kind in ("lower", "upper", "digit")}
        self.pools = {}
        for t, pool in sorted(NAME_POOLS.items()):
            mine = self.type_names.get(t, [])
            if mine and Counter(map(script, mine)).most_common(1)[0][0] == "CYRILLIC":
                lengths = {len(n.split(" ")) for n in mine}
                self.pools[t] = rng.sample([p for p in pool if len(p.split(" ")) in lengths], len([p for p in pool if len(p.split(" ")) in lengths]))
        self.pool_position: dict[str, int] = {}
        self.unnamed: Counter = Counter()  # role description -> nodes that could not be named
        self.held = False  # the last new_node made none because a share was full, not because names are spent
        self.holds_input: re.Pattern | None = None  # with_pseudonyms: no new name may hold an input name of several words
        self.avoid: set[str] = set()  # with_pseudonyms: words (folded) the new name may not have: those of the name it replaces
        self.keep_shape = False  # with_pseudonyms: a new name has the shape of the name it replaces (words, case, punctuation)
        self.type_slack = TYPE_SHARE_SLACK
        # No first word (and no digit) may be more common among a type's new names than among its real ones.
        self.real_marks = {t: (Counter(_first_word(n) for n in names), sum(map(_has_digit, names)), len(names))
                           for t, names in self.type_names.items()}
        self.made_marks: dict[str, tuple[Counter, list[int]]] = {t: (Counter(), [0, 0]) for t in self.type_names}

    def fork(self, rng: random.Random) -> Namer:
        """A namer that starts from this one's state and makes its own choices: it shares what never changes (the
        input's roles and names, the vocabularies made so far) and has its own names and ids in use, spent
        vocabularies, pools and counts. One per context, forked from a namer of the whole input graph, costs a
        copy instead of reading the whole graph again."""
        other = copy.copy(self)
        other.rng, other.names, other.ids, other.spent = rng, set(self.names), set(self.ids), set(self.spent)
        other.pools = {t: list(pool) for t, pool in self.pools.items()}
        other.pool_position, other.unnamed, other.held = dict(self.pool_position), Counter(), False
        other.made_marks = {t: (Counter(), [0, 0]) for t in self.type_names}
        return other

    @staticmethod
    def _kind(c: str) -> str:
        return "digit" if c.isdigit() else "upper" if c.isupper() else "lower" if c.isalpha() else "other"

    def _vocabularies(self, like: Node, role: tuple[str, str]) -> list[tuple[object, list[str]]]:
        """(key, names) of the roles to name a copy of like from, narrowest first."""
        if self.typed:
            return [(("type", like.type), self.type_names[like.type])]
        wider = sorted(self.roles_of.get(like.id, ()))
        return [(role, self.role_names.get(role, [])),
                (("node", like.id), [name for r in wider for name in self.role_names[r]])]

    def new_node(self, like: Node, role: tuple[str, str]) -> Node | None:
        """A node that plays the role of the input node like (reached over role = (relation, direction)), or None:
        when the names of its role are spent, or (self.held) when its type or the names it could take are
        as common among the new nodes as they may be for now."""
        self.held = not self._type_has_room(like.type)
        if self.held:
            return None
        if like.type in self.pools:
            node = self._from_pool(like)
            if node is not None:
                return node
        for key, names in self._vocabularies(like, role):
            vocabulary = self.vocabularies.get(key) or self.vocabularies.setdefault(key, Vocabulary(names, self.graph_words, not self.typed))
            misses = held_back = 0
            while key not in self.spent and vocabulary.names and misses < NAME_DRAWS:
                name = vocabulary.draw(self.rng, like.name if self.keep_shape else None)
                if name is not None and self._fresh(name):
                    if not self._within_shares(like.type, name):
                        held_back += 1  # fresh, but its first word is common enough already: it may come later
                    else:
                        node = self._named(like, name)
                        if node is not None:
                            return node
                misses += 1
            if held_back:  # held back for now; but the shares open only as the type gets new nodes: held back
                made = self.made_marks[like.type][1][0]  # HELD_FOR_GOOD times in a row with none made, this draw
                last, times = self.held_made.get(key, (None, 0))  # names no node (not held: the branch takes other
                times = times + 1 if last == made else 1  # steps or its anchor gives up), and the vocabulary stays
                self.held_made[key] = (made, times)  # for when the type grows
                if times >= HELD_FOR_GOOD:
                    continue
            else:
                self.spent.add(key)
            self.held = self.held or bool(held_back)
        if not self.held:
            self.unnamed[f"type {like.type}" if self.typed else f"like {like.id}"] += 1
        return None

    def _type_has_room(self, node_type: str) -> bool:
        """The type is less common among the new nodes than type_slack times its share of the input's (one over)."""
        made = self.made_marks[node_type][1][0]
        all_made = sum(counts[0] for _, counts in self.made_marks.values())
        return made + 1 <= self.type_slack * self.real_marks[node_type][2] / len(self.nodes) * (all_made + 1) + 1

    def _from_pool(self, like: Node) -> Node | None:
        """The next name of the type's pool that is fresh and within the shares (looked for among the next
        NAME_DRAWS), moved to the head of what is left of the pool and taken."""
        pool, k = self.pools[like.type], self.pool_position.get(like.type, 0)
        while k < len(pool) and not self._fresh(pool[k]):
            k += 1
        self.pool_position[like.type] = k
        words = len(like.name.split(" "))
        for j in range(k, min(k + NAME_DRAWS, len(pool))):
            fits = self._fresh(pool[j]) and self._within_shares(like.type, pool[j]) and (not self.keep_shape or len(pool[j].split(" ")) == words)
            node = self._named(like, pool[j]) if fits else None
            if node is not None:
                pool[k], pool[j] = pool[j], pool[k]
                self.pool_position[like.type] = k + 1
                return node
        return None

    def _named(self, like: Node, name: str) -> Node | None:
        """The node named name, with an id in like's style, or None when no such id is free."""
        for longer in range(4):
            node_id = self._id(like, name, longer)
            if node_id is not None:
                self.names.add(name.casefold())
                self.ids.add(node_id)
                firsts, counts = self.made_marks[like.type]
                firsts[_first_word(name)] += 1
                counts[0] += 1
                counts[1] += _has_digit(name)
                return Node(node_id, name, like.type)
        return None

    def _within_shares(self, node_type: str, name: str) -> bool:
        """With name added, no first word is more common among the type's new names than it is among its real
        names or than a typical real first word is, and names with a digit are no more common than among the real
        ones (each one over the share allowed, so the first names can come)."""
        real_firsts, real_digits, n_real = self.real_marks[node_type]
        firsts, (made, digits) = self.made_marks[node_type]
        word = _first_word(name)
        if firsts[word] + 1 > max(real_firsts[word] / n_real, 1 / len(real_firsts)) * (made + 1) + 1:
            return False
        return not _has_digit(name) or digits + 1 <= real_digits / n_real * (made + 1) + 1

    def _fresh(self, name: str) -> bool:
        """Not a name in use, and not an input name followed by more words ('Kazan' -> 'Kazan River'), nor one that
        holds an input name of several words inside it (pseudonyms: 'Edward Martinez' holds 'Edward Martin')."""
        if not name.strip() or name.casefold() in self.names or self._extends(name):
            return False
        if self.avoid and any(w.casefold() in self.avoid for w in re.findall(r"[^\W_]+", name)):
            return False
        return self.holds_input is None or not self.holds_input.search(name.casefold())

    def _extends(self, name: str) -> bool:
        words = name.casefold().split(" ")
        return any(" ".join(words[:k]) in self.input_names for k in range(1, len(words)))

    def _id(self, like: Node, name: str, longer: int = 0) -> str | None:
        """An id for name in the style of like's id, or None if it would equal or extend one in use: the same
        prefix and word style ('person_irina' -> 'person_anna_belova', 'org_north' -> 'org_tsentr_vostok',
        'Golden_Gate' -> 'Tower_Hill'); an opaque id ('m.0abc1', 'Q42') keeps the prefix common to all ids and
        redraws each other character by kind, with `longer` more characters once the short ones run out."""
        node_id = None
        for make in self.id_schemes:
            made = make(like.name)
            if made and (like.id == made or like.id.endswith("_" + made) or like.id.startswith(made + "_")):
                prefix = like.id[: len(like.id) - len(made)] if like.id.endswith(made) else ""
                node_id = prefix + make(name)
                break
        if node_id is None and (template := id_template(like)) is not None:  # made of some words of the name
            if longer:
                return None  # no longer id: a shape no real id has; another name is drawn instead
            prefix, picks, make = template
            made = [make(w) for w in re.findall(r"[^\W_]+", name)]
            if len(made) < len(picks):
                return None
            if not all(-len(made) <= k < len(made) for k in picks) or len({k % len(made) for k in picks}) < len(picks):
                picks = range(len(picks))  # a shorter name than like's: its first words, as many (the id's shape is the same)
            node_id = prefix + "_".join(made[k] for k in picks)
        if node_id is None and re.fullmatch(r"[^\W_]+(?:_[^\W_]+)*", like.id):  # readable words, not made from the name
            head = like.id.split("_", 1)[0]
            prefix = f"{head}_" if "_" in like.id and self.heads[head] > 1 else ""
            make = slug if like.id.isascii() and like.id.islower() else snake if like.id.islower() else words
            node_id = prefix + make(name)
        if node_id is None:
            rest = like.id[len(self.id_prefix):]
            rest += (rest[-1:] or "0") * longer
            node_id = self.id_prefix + "".join(
                self.rng.choice(self.id_chars[k]) if (k := self._kind(c)) != "other" and self.id_chars[k] else c for c in rest
            )
        if node_id in self.ids:  # an id may extend an input id ('person_ines' -> 'person_ines_brandt'), as real ones do
            return None
        if leaky_markers(Node(node_id, name, like.type)):
            return None
        return node_id


def id_template(node: Node) -> tuple[str, tuple[int, ...], Callable[[str], str]] | None:
    """How a node's id is made of some of its name's words, after a prefix: 'person_ana' for 'Ana Ruiz' is
    ('person_', (0,), slug), the first word; 'org_lewis' for 'Carol Lewis' ('org_', (-1,), slug), the last; None
    when the id ends in no word of the name. The longest run of name words at the end of the id is taken."""
    found = re.findall(r"[^\W_]+", node.name)
    tokens = node.id.split("_")
    for make in ID_SCHEMES[:3]:
        made = [make(w) for w in found]
        picks: list[int] = []
        for token in reversed(tokens):
            if token not in made:
                break
            k = made.index(token)
            picks.insert(0, k - len(made) if k == len(made) - 1 and k > 0 else k)  # the last word stays the last
        if picks and len(set(picks)) == len(picks):
            return "_".join(tokens[: len(tokens) - len(picks)]) + ("_" if len(tokens) > len(picks) else ""), tuple(picks), make
    return None


HELD = "held"  # Distractors._branch: no branch for now, only because the shares of new names are full


class Branch(NamedTuple):
    """A distractor branch: new nodes and the edges that chain them to the anchor, with their properties."""

    nodes: list[Node]
    edges: list[Edge]
    node_props: list[Props]
    edge_props: list[Props]


class Distractors:
    """A seeded, endless stream of safe distractor branches; its first n items are the same for any n. key: the
    context they are drawn for ("" for the shared graph); namer: a namer of the whole input graph to fork, so that a
    context's new nodes are named from every name of their role and never by a name in use anywhere in it."""

    def __init__(self, graph: Graph, questions: tuple[Question, ...], seed: int, key: str = "", namer: Namer | None = None):
        self.rng = random.Random(f"{seed}/{key}/distractors" if key else f"{seed}/distractors")
        self.graph = graph
        self.incident: dict[str, list[int]] = {}  # node id -> the edges that touch it
        for i, e in enumerate(graph.edges):
            self.incident.setdefault(e.source, []).append(i)
            if e.target != e.source:
                self.incident.setdefault(e.target, []).append(i)
        self.reach = self._reach(graph, [q for q in questions if q.query])
        self.namer = Namer(graph, self.rng) if namer is None else namer.fork(self.rng)
        self.pools = self._property_pools(graph) if graph.has_props else None
        starts = list(dict.fromkeys(q.query.start for q in questions if q.query))
        self.anchors = [a for a in starts if a in self.incident]
        low, high = MEDIUM_BRANCHES
        self.medium_counts = [self.rng.randint(low, high) for _ in self.anchors]
        self.items: list[tuple[list[Node], list[Edge]]] = []
        self.failed: set[str] = set()  # anchors that can take no more branches
        self.unnamed: set[str] = set()  # of those, the ones whose branches could not be named
        self.exhausted = False  # a whole round of anchors made no branch: the stream ends here
        self._slots = self._slot_order()

    @staticmethod
    def _reach(graph: Graph, questions: list[Question]) -> dict[str, list[tuple[int, Query]]]:
        """node id -> [(j, query)]: some walk of query stands at that node after j < len(hops) hops."""
        index, reach = edge_index(graph.edges), {}
        for q in questions:
            for j, walks in enumerate(partial_walks(graph, q.query, index)[:-1]):
                for node in {node for _, node in walks}:
                    reach.setdefault(node, []).append((j, q.query))
        return reach

    @staticmethod
    def _property_pools(graph: Graph) -> dict[tuple, list]:
        """Where a new record's property values come from: (node type, key) -> [(value, name of its node)] and
        (relation, key) -> [(value, None)] over the input's records."""
        pools: dict[tuple, list] = {}
        for n, props in graph.nodes_with_props():
            for k, v in props:
                pools.setdefault(("node", n.type, k), []).append((v, n.name))
        for e, props in graph.edges_with_props():
            for k, v in props:
                pools.setdefault(("edge", e.relation, k), []).append((v, None))
        return pools

    def _props_like(self, kind: str, group: str, props: Props, name: str | None = None) -> Props:
        """Properties for a new record that copies one with props: the same keys, each value drawn from the values
        that key has on records of the same type (nodes) or relation (edges); a value that names its own node
        names the new one instead."""
        out = []
        for k, _ in props:
            value, owner = self.rng.choice(self.pools[(kind, group, k)])
            if isinstance(value, str) and owner and name and owner in value:
                value = value.replace(owner, name)
            out.append((k, value))
        return tuple(out)

    @property
    def medium(self) -> int:
        return sum(self.medium_counts)

    def _slot_order(self):
        """Anchors round-robin: first each anchor's medium count, then all of them forever."""
        round_no = 0
        while True:
            for a, anchor in enumerate(self.anchors):
                if round_no >= MEDIUM_BRANCHES[1] or round_no < self.medium_counts[a]:
                    yield anchor
            round_no += 1

    def first(self, n: int) -> list[tuple[list[Node], list[Edge]]]:
        """The first n branches, or all there can be when no anchor can take another (names spent or held back
        by the shares, or every branch would complete a question's path): fewer than n then, for any larger n.
        Medium's branches keep the article's count per start node whatever the mix of types; past them, no type
        grows much more common among new nodes than among the input's (Namer.type_slack)."""
        stalled = 0  # anchors in a row that took no branch only because the shares were full
        while len(self.items) < n and not self.exhausted:
            self.namer.type_slack = math.inf if len(self.items) < self.medium else TYPE_SHARE_SLACK
            live = len(self.anchors) - len(self.failed)
            if not live or stalled >= live:
                self.exhausted = True  # a whole round made nothing
                break
            anchor = next(self._slots)
            if anchor in self.failed:
                continue
            branch = self._branch(anchor)
            if branch is HELD:
                stalled += 1
            elif branch is None:
                self._give_up(anchor)
            else:
                stalled = 0
                self.items.append(branch)
        return self.items[:n]

    def _give_up(self, anchor: str) -> None:
        self.failed.add(anchor)
        if anchor not in self.unnamed:
            had = sum(1 for b in self.items if anchor in (b.edges[0].source, b.edges[0].target))
            warn(f"no distractor branch can hang off {anchor!r} without completing a question's path; it gets {'no more' if had else 'none'}")

    def shortage(self, size: str, made: int, wanted: int | None) -> str:
        """Why a size got fewer branches than it wanted (None: large, which wants to fill the window)."""
        roles = ", ".join(role for role, _ in self.namer.unnamed.most_common(3))
        why = (f"the graph's names are too few to vary into more new names without numbers or blends (spent first: "
               f"{roles})") if roles else "no anchor can take another branch without completing a question's path"
        if wanted is None:
            return f"large: {made} distractor branches could be made, fewer than it takes to fill --context-window: {why}"
        return f"{size}: {made} of the {wanted} distractor branches it needs could be made: {why}"

    def _draw(self, anchor: str) -> list[tuple[str, str, str, int]]:
        """Steps (relation, direction, input node it copies, input edge it copies) of a random walk over the input's edges."""
        steps, here, came_by = [], anchor, None
        for _ in range(self.rng.choice(BRANCH_LENGTHS)):
            choices = [i for i in self.incident.get(here, ()) if i != came_by]
            if not choices:
                break
            i = self.rng.choice(choices)
            e = self.graph.edges[i]
            step = (e.relation, "out", e.target, i) if e.source == here else (e.relation, "in", e.source, i)
            steps.append(step)
            here, came_by = step[2], i
        return steps

    def _safe(self, anchor: str, steps: list[tuple[str, str, str]]) -> bool:
        """False if a question's walk standing at the anchor could end inside the branch or come back out of it.
        Positions along the chain: 0 the anchor, k the k-th new node."""
        for j, query in self.reach.get(anchor, ()):
            positions = {0}
            for hop in query.hops[j:]:
                moved = set()
                for p in positions:
                    if p < len(steps) and steps[p][:2] == (hop.relation, hop.direction):
                        moved.add(p + 1)
                    if p > 0 and steps[p - 1][0] == hop.relation and steps[p - 1][1] != hop.direction:
                        moved.add(p - 1)
                if 0 in moved:
                    return False  # back at the anchor through the branch: it could go on from there
                positions = moved
            if positions:
                return False
        return True

    def _branch(self, anchor: str) -> Branch | None:
        """A safe branch off anchor with at least one named node; after BRANCH_DRAWS draws, HELD when a share held
        its names back for now, else None."""
        named_none = held = False
        for _ in range(BRANCH_DRAWS):
            drawn = self._draw(anchor)
            steps = next((drawn[:n] for n in range(len(drawn), 0, -1) if self._safe(anchor, drawn[:n])), None)
            if not steps:  # the longest safe start of the draw
                continue
            nodes, edges, current = [], [], anchor
            for relation, direction, like, copied in steps:  # a start of a safe chain is safe: a chain cut where names run out
                node = self.namer.new_node(self.namer.nodes[like], (relation, direction))
                if node is None:
                    break
                nodes.append(node)
                edges.append((Edge(current, relation, node.id) if direction == "out" else Edge(node.id, relation, current), like, copied))
                current = node.id
            if nodes:
                return self._with_props(nodes, edges)
            named_none = True
            held = held or self.namer.held
        if held:
            return HELD
        if named_none:
            self.unnamed.add(anchor)
        return None


    def _with_props(self, nodes: list[Node], edges: list[tuple[Edge, str, int]]) -> Branch:
        """The branch, its records given properties like the records they copy (none on a graph without any)."""
        if self.pools is None:
            return Branch(nodes, [e for e, _, _ in edges], [], [])
        by_node, copied_props = self.graph.props_by_node, self.graph.edge_props
        node_props = [self._props_like("node", self.namer.nodes[like].type, by_node.get(like, ()), node.name)
                      for node, (_, like, _) in zip(nodes, edges)]
        edge_props = [self._props_like("edge", e.relation, copied_props[i] if copied_props else ()) for e, _, i in edges]
        return Branch(nodes, [e for e, _, _ in edges], node_props, edge_props)


def interleave(originals: list, extras: list, rng: random.Random) -> tuple[list, list[int]]:
    """originals spread among extras at seeded positions, both keeping their order; and where each original went."""
    total = len(originals) + len(extras)
    positions = sorted(rng.sample(range(total), len(originals)))
    merged, extra_iter, slots = [], iter(extras), set(positions)
    original_iter = iter(originals)
    for i in range(total):
        merged.append(next(original_iter) if i in slots else next(extra_iter))
    return merged, positions


# Contexts: what each question's prompt shows. The article's setting is one shared graph. A GraphRAG prompt
# shows the subgraph retrieved for its question instead: given by the questions file ("context": edges and
# nodes of the input graph, or a graph of its own), or cut by --context khop. Either way a context is a small
# graph of its own, with its own edge order, and every size, id variant, permutation and mode works on it as
# on the shared graph; the solver proves each one.
CONTEXT_KINDS = ("shared", "given", "khop")
RELATION_FLOOR = 2  # khop: edges of each relation a question names that a context holds at least (where the graph has them)
RELATION_SEARCH = 20_000  # khop: nodes a search for such edges past the depth sees at most


def input_contexts(inputs: RunInputs, plan: Plan) -> tuple[list[Context], dict]:
    """The contexts of the inputs, before any distractor, and what the retrieval did (for the reports)."""
    questions = inputs.questions
    if plan.context == "khop":
        retriever = KHop(inputs.graph, plan.context_hops, plan.context_edges, plan.seed)
        contexts = [retriever.context(q) for q in questions]
        return contexts, retriever.summary(contexts)
    if plan.context == "given":
        contexts = [given_context(inputs.graph, q) for q in questions]
        return contexts, context_summary(contexts, "given")
    return [Context("", inputs.graph, questions)], {}


def cut_context(graph: Graph, q: Question, edges: list[int], nodes: list[str] = ()) -> Context:
    """The question's context of the graph's edges (in that order) and nodes (listed first; then every other end of
    those edges, in order of first appearance), properties with them; its paths re-indexed into it."""
    wanted = list(dict.fromkeys([*nodes, *(end for i in edges for end in (graph.edges[i].source, graph.edges[i].target))]))
    at = {n.id: k for k, n in enumerate(graph.nodes)}
    keep = [at[v] for v in wanted]
    picked = graph.pick(edges)
    sub = replace(picked, nodes=tuple(graph.nodes[k] for k in keep),
                  node_props=tuple(graph.node_props[k] for k in keep) if graph.node_props else ())
    position = {old: new for new, old in enumerate(edges)}
    return Context(q.id, sub, (replace(q.moved(position), context=None),))


def given_context(graph: Graph, q: Question) -> Context:
    """A question's context as its file gives it: its own graph, or edges and nodes of the input graph."""
    if q.context.graph is not None:
        return Context(q.id, q.context.graph, (replace(q, context=None),))
    return cut_context(graph, q, list(q.context.edges), list(q.context.nodes))


def context_problems(graph: Graph, questions: tuple[Question, ...], src: str, problems: Problems) -> None:
    """A given context of the input graph must hold the question's start and every edge of its gold paths."""
    for q in questions:
        if not q.context or q.context.graph is not None:
            continue
        edges = set(q.context.edges)
        missing = sorted({i for p in q.paths for i in p} - edges)
        nodes = set(q.context.nodes) | {end for i in edges for end in (graph.edges[i].source, graph.edges[i].target)}
        if missing:
            problems.add(f"{src}: question {q.id}: its context leaves out gold edge(s) {describe_path(graph.edges, tuple(missing))}; "
                         "add them to the context, or make the question an abstention one", q.id)
        elif q.query and q.query.start not in nodes:
            problems.add(f"{src}: question {q.id}: its context leaves out the start {q.query.start!r}; add it to the context", q.id)


class KHop:
    """--context khop: per question, the neighbourhood of its start node, cut from the input graph. Breadth first
    out to --context-hops (each question's own hop count when not given), over edges in either direction; the
    edges of each layer are taken in a seeded random order until --context-edges is reached. The gold paths'
    edges (for an abstention question, the walks its query makes before the hop that fails) are always inside,
    at the place the search reaches them; those beyond the depth follow the rest. As a retriever that matches
    the question's words would, a context holds at least RELATION_FLOOR edges of each relation the question
    names: where the neighbourhood has fewer, the search goes on past the depth for edges of that relation only
    (without it, a near-miss abstention's failing relation is missing from most contexts, and its absence alone
    would tell a model to abstain). The nodes are the edges' ends, the start first. Every edge is a real edge
    of the graph: the distractors a production prompt has."""

    def __init__(self, graph: Graph, hops: int | None, budget: int, seed: int) -> None:
        self.graph, self.hops, self.budget, self.seed = graph, hops, budget, seed
        self.index = edge_index(graph.edges)
        self.incident = incident_edges(graph, canonical=True)
        self.beyond: dict[str, int] = {}  # question id -> gold edges outside the searched depth

    def must(self, q: Question) -> list[int]:
        """The edges a question's context always holds, in order."""
        if not q.insufficient:
            return list(dict.fromkeys(i for p in q.paths for i in p))
        if q.query is None:
            return []
        stages = partial_walks(self.graph, q.query, self.index)[1:]  # the last is empty, or the walks an ask fails on
        return list(dict.fromkeys(i for walks in stages for path, _ in walks for i in path))[: self.budget]

    def start(self, q: Question) -> str | None:
        if q.query:
            return q.query.start
        if not q.paths or not q.paths[0]:
            return None
        first = self.graph.edges[q.paths[0][0]]
        if len(q.paths[0]) > 1:
            second = self.graph.edges[q.paths[0][1]]
            return first.source if first.target in (second.source, second.target) else first.target
        return first.source

    def context(self, q: Question) -> Context:
        rng = random.Random(f"{self.seed}/{q.id}/khop")
        must = self.must(q)
        needed = set(must)
        named = {h.relation for h in q.query.hops} if q.query else set()
        reserve = min(RELATION_FLOOR * len(named), max(self.budget - len(needed), 0))  # kept for _named_relations
        room = max(self.budget - len(needed) - reserve, 0)
        depth = self.hops if self.hops is not None else len(q.query.hops) if q.query else max(map(len, q.paths), default=1)
        start = self.start(q)
        taken: list[int] = []
        chosen: set[int] = set()
        frontier, reached = ([start], {start}) if start is not None else ([], set())
        for _ in range(depth):
            layer = list(dict.fromkeys(i for v in frontier for i in self.incident.get(v, ()) if i not in chosen))
            rng.shuffle(layer)
            frontier = []
            for i in layer:
                if i in needed:
                    pass
                elif room:
                    room -= 1
                else:
                    continue
                taken.append(i)
                chosen.add(i)
                for end in (self.graph.edges[i].source, self.graph.edges[i].target):
                    if end not in reached:
                        reached.add(end)
                        frontier.append(end)
        outside = [i for i in must if i not in chosen]
        self.beyond[q.id] = len(outside) if not q.insufficient else 0
        found = self._named_relations(q, start, taken + outside, room + reserve)
        return cut_context(self.graph, q, taken + found + outside, [start] if start is not None else [])

    def _named_relations(self, q: Question, start: str | None, have: list[int], room: int) -> list[int]:
        """Edges of the relations the question names that the context lacks (up to RELATION_FLOOR each, within
        room), nearest to the start first: a breadth-first search over the whole graph, seeing at most
        RELATION_SEARCH nodes."""
        if q.query is None or start is None or not room:
            return []
        counts = Counter(self.graph.edges[i].relation for i in have)
        wanted = {h.relation: RELATION_FLOOR - counts[h.relation] for h in q.query.hops if counts[h.relation] < RELATION_FLOOR}
        found, seen, chosen = [], {start}, set(have)
        queue = deque([start])
        while queue and wanted and len(found) < room and len(seen) < RELATION_SEARCH:
            for i in self.incident.get(queue.popleft(), ()):
                e = self.graph.edges[i]
                if i not in chosen and wanted.get(e.relation, 0) > 0 and len(found) < room:
                    found.append(i)
                    chosen.add(i)
                    wanted[e.relation] -= 1
                    if not wanted[e.relation]:
                        del wanted[e.relation]
                for end in (e.source, e.target):
                    if end not in seen:
                        seen.add(end)
                        queue.append(end)
        return found

    def summary(self, contexts: list[Context]) -> dict:
        facts = context_summary(contexts, "khop")
        beyond = [qid for qid, n in self.beyond.items() if n]
        facts.update(hops=self.hops if self.hops is not None else "each question's own hop count", edges=self.budget,
                     gold_beyond_depth=len(beyond), gold_beyond_depth_questions=beyond[:20])
        return facts


def context_summary(contexts: list[Context], kind: str) -> dict:
    """How large the contexts are, and for the abstention questions with a query, how many contexts show an edge of
    the relation whose hop fails (else a model could abstain from the relation's absence alone)."""
    sizes = sorted(len(c.graph.edges) for c in contexts)
    nodes = sorted(len(c.graph.nodes) for c in contexts)
    misses = [(c, q) for c in contexts for q in c.questions if q.insufficient and q.query]
    shown = sum(any(e.relation == q.query.hops[-1].relation for e in c.graph.edges) for c, q in misses)
    return {"kind": kind, "contexts": len(contexts),
            "edges": {"min": sizes[0], "median": statistics.median(sizes), "max": sizes[-1]} if sizes else None,
            "nodes": {"min": nodes[0], "median": statistics.median(nodes), "max": nodes[-1]} if nodes else None,
            "abstention_relation_shown": {"contexts": shown, "of": len(misses)}}


def with_distractors(context: Context, stream: Distractors, size: str, n: int, seed: int) -> tuple[Context, int]:
    """The context's graph plus the stream's first n branches, originals interleaved at seeded positions; and how
    many branches it got."""
    branches = stream.first(n) if n else []
    if not branches:
        return context, 0
    graph = context.graph
    rng = random.Random(context.seed(seed, size, "interleave"))
    new_edges = [(e, p) for b in branches for e, p in zip(b.edges, b.edge_props or itertools.repeat(()))]
    new_nodes = [(v, p) for b in branches for v, p in zip(b.nodes, b.node_props or itertools.repeat(()))]
    edges, edge_pos = interleave(list(graph.edges_with_props()), new_edges, rng)
    nodes, _ = interleave(list(graph.nodes_with_props()), new_nodes, rng)
    merged = Graph(tuple(n for n, _ in nodes), tuple(e for e, _ in edges), (),
                   tuple(p for _, p in nodes) if graph.has_props else (), tuple(p for _, p in edges) if graph.has_props else ())
    return replace(context, graph=merged, questions=tuple(q.moved(edge_pos) for q in context.questions)), len(branches)


def renamed_ids(context: Context, new_id: dict[str, str]) -> Context:
    """The context with every node id replaced by new_id[id]: edges, answer ids and query starts follow."""
    graph = context.graph
    renamed = replace(graph, nodes=tuple(n._replace(id=new_id[n.id]) for n in graph.nodes),
                      edges=tuple(Edge(new_id[e.source], e.relation, new_id[e.target]) for e in graph.edges))
    questions = tuple(
        replace(q, answer_ids=tuple(new_id[i] for i in q.answer_ids),
                query=replace(q.query, start=new_id[q.query.start]) if q.query else None)
        for q in context.questions
    )
    return replace(context, graph=renamed, questions=questions)


def with_short_ids(variant: Variant, seed: int) -> Variant:
    """Every node renamed n1, n2, ... in a seeded order, per context (article 12: short local ids); edges, gold
    answers and queries follow."""
    contexts = []
    for context in variant.contexts:
        order = list(range(len(context.graph.nodes)))
        random.Random(context.seed(seed, variant.size, "ids")).shuffle(order)
        contexts.append(renamed_ids(context, {context.graph.nodes[j].id: f"n{rank + 1}" for rank, j in enumerate(order)}))
    return replace(variant, ids="short", contexts=tuple(contexts))


SYLLABLES = "ba be bo da de do ka ke ko la le lo ma me mo na ne no ra re ro sa se so ta te to va ve vo".split()


ROLE_MERGE = 0.5  # two roles are one group when this share of the smaller role's nodes plays both
ROLE_MERGE_MIN = 3  # ... and the smaller role has at least this many nodes (one odd node does not join two kinds)


def role_groups(graph: Graph) -> dict[str, str]:
    """An untyped graph's kinds, read from its relations: node id -> the key of its group. Roles (relation,
    direction) whose nodes mostly play both are one group (union-find over roles, merged when ROLE_MERGE of the
    smaller role's nodes play the other too): a person is the source of nationality, profession and spouse
    alike; the targets of nationality and the sources of contains (countries) are one group, the targets of
    profession another. A node goes to the group most of its roles' nodes are in; the key names the group's
    largest role ('nationality>' : what nationality points to). Deterministic: sorted, no draw."""
    plays: dict[str, set[tuple[str, str]]] = {}
    for e in graph.edges:
        plays.setdefault(e.target, set()).add((e.relation, ">"))
        plays.setdefault(e.source, set()).add((e.relation, "<"))
    members: dict[tuple[str, str], int] = Counter(r for roles in plays.values() for r in roles)
    both: Counter = Counter(pair for roles in plays.values() for pair in itertools.combinations(sorted(roles), 2))
    parent = {r: r for r in members}

    def root(r):
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for (a, b), k in sorted(both.items()):
        smaller = min(members[a], members[b])
        if smaller >= ROLE_MERGE_MIN and k >= ROLE_MERGE * smaller:
            ra, rb = sorted((root(a), root(b)))
            parent[rb] = ra
    size: Counter = Counter()
    for r, k in members.items():
        size[root(r)] += k
    key = {}
    for r in sorted(members, key=lambda r: (-members[r], r)):  # each group named after its largest role
        key.setdefault(root(r), "".join(r[::-1]) if r[1] == "<" else "".join(r))
    groups = {}
    for node, roles in plays.items():
        weight: Counter = Counter()
        for r in roles:
            weight[root(r)] += members[r]
        groups[node] = key[min(weight, key=lambda g: (-weight[g], key[g]))]
    return groups


class Pseudonyms:
    """--pseudonymize's renaming, one per run: every entity gets one pseudonym, whatever the size, context,
    permutation or format it is shown in. The input's nodes are named first, in the input's order, so that
    their pseudonyms do not depend on the sizes asked for; a distractor is named when it first appears.
    A pseudonym is drawn like a distractor's name (words of the names of its role, in the same shape) and
    shares no word with the name it replaces ('Carol Lewis' never becomes 'Carol Torres')."""

    def __init__(self, graph: Graph, seed: int) -> None:
        self.namer = Namer(graph, random.Random(f"{seed}/pseudonyms"))
        self.namer.type_slack = math.inf  # every node is renamed: the mix of types is the input's by construction
        self.namer.keep_shape = True
        several = sorted({n.name.casefold() for n in graph.nodes if " " in n.name.strip()}, key=len, reverse=True)
        self.namer.holds_input = re.compile("|".join(map(re.escape, several))) if several else None
        self.rng = random.Random(f"{seed}/pseudonyms/fallback")
        self.kind_order: dict[str, list[str]] = {}  # kind -> its pool in a seeded order, drawn from in turn
        self.renamed: dict[str, Node] = {}  # entity id -> its pseudonym node
        self.real = graph.nodes  # the input's nodes: the names a question text may still hold
        self.warned: set[str] = set()  # questions already said to still name a real name (once, not once per size)
        self.everyone = Vocabulary([n.name for n in graph.nodes], self.namer.graph_words)  # the fallback: every name's words
        self.shapes: dict[tuple, list[str]] = {}  # ... then any word of the same shape, wherever it stands
        for n in graph.nodes:
            for w in n.name.split(" "):
                self.shapes.setdefault(word_shape(w), []).append(w)
        self.shapes = {k: sorted(set(v)) for k, v in self.shapes.items()}
        numbers = [int(n.name) for n in graph.nodes if n.name.isdecimal() and n.name.isascii()]
        self.numbers = (min(numbers), max(numbers)) if numbers else None  # names that are numbers (years) get numbers
        # node id -> its kind: its type, or on an untyped graph its role group, read from its relations
        self.groups = {n.id: n.type for n in graph.nodes} if self.namer.typed else role_groups(graph)
        by_group: dict[str, list[str]] = {}
        for n in graph.nodes:
            if n.id in self.groups:
                by_group.setdefault(self.groups[n.id], []).append(n.name)
        for group, names in by_group.items():
            self.namer.role_names[("group", group)] = names
        self.heads = {group: head_words(names) for group, names in by_group.items()}
        self.heads[""] = head_words([n.name for n in graph.nodes]) if self.groups else []  # then any group's
        self.swaps = self._swaps(graph)
        self.rename(graph)

    def rename(self, graph: Graph) -> dict[str, Node]:
        """Name the graph's nodes that have no pseudonym yet; the pseudonym of each of its nodes."""
        roles: dict[str, tuple[str, str]] = {}
        for e in graph.edges:
            roles.setdefault(e.target, (e.relation, "out"))
            roles.setdefault(e.source, (e.relation, "in"))
        for n in graph.nodes:
            if n.id not in self.renamed:
                role = ("group", self.groups[n.id]) if n.id in self.groups else roles.get(n.id, ("", "out"))
                self.renamed[n.id] = self._new(n, role)
        return {n.id: self.renamed[n.id] for n in graph.nodes}

    def _new(self, n: Node, role: tuple[str, str]) -> Node:
        namer = self.namer
        namer.avoid = {w.casefold() for w in re.findall(r"[^\W_]+", n.name)}
        try:
            one_word = len(n.name.split()) == 1  # a word of the role's kind first, if it has one (untyped), then another
            node = self._from_kind(n, role) if one_word and not namer.typed else None  # of its group's one-word names,
            node = node or (self.swaps.get(n.id) if one_word else None)  # then a head word of its group: never a blend
            node = node or (self._from_heads(n, role) if one_word else None)
            node = node or (None if one_word and role[0] == "group" else namer.new_node(n, role))
            if node is None and not namer.typed:  # the group's own names are spent: words of its kind, if it has one
                node = self._from_kind(n, role)
            for attempt in range(2 * NAME_DRAWS):  # the role's names are spent: a number for a number; the words at the same
                if node is not None:                # places of every name of its shape; then any word of each word's shape
                    return node
                if self.numbers and n.name.isdecimal() and n.name.isascii():
                    low, high = self.numbers
                    name = str(self.rng.randint(max(low - (high - low) // 2, 0), high + (high - low) // 2)).zfill(len(n.name))
                elif attempt < NAME_DRAWS and not (one_word and role[0] == "group"):  # no word model's blend for one word
                    name = self.everyone.draw(self.rng, n.name)
                else:
                    name = " ".join(self.rng.choice(self.shapes.get(word_shape(w)) or [w]) for w in n.name.split(" "))
                node = namer._named(n, name) if name and namer._fresh(name) else None
            while node is None:  # no word of that shape is left: a made-up word, in the input's script if Latin or Cyrillic
                word = "".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.randint(2, 3))).title()
                word = "".join(TO_CYRILLIC.get(c, c) for c in word) if script(n.name) == "CYRILLIC" else word
                node = namer._named(n, word) if namer._fresh(word) else None
            return node
        finally:
            namer.avoid = set()

    def _swaps(self, graph: Graph) -> dict[str, Node]:
        """The one-word names of each group (a type, or an untyped graph's role group), deranged among themselves (a
        seeded shuffle, each taking the name and id of the next one still free that is another word): a country
        becomes another of the graph's countries, 'male' 'female', a year another year; real words of the kind, as
        many of each as before. A group of one gets none (kind pool, head words)."""
        members: dict[tuple[str, int], list[Node]] = {}
        for n in graph.nodes:
            if n.id in self.groups and len(n.name.split()) == 1:
                members.setdefault((self.groups[n.id], 1), []).append(n)
        swaps = {}
        for key in sorted(members):
            order, taken = self.rng.sample(members[key], len(members[key])), set()
            for k, n in enumerate(order):
                own = {w.casefold() for w in n.name.split()}
                for step in range(1, len(order)):  # the next name after it that is free and shares no word with it
                    other = order[(k + step) % len(order)]
                    if other.id not in taken and not {w.casefold() for w in other.name.split()} & own:
                        swaps[n.id] = Node(other.id, other.name, n.type)
                        taken.add(other.id)
                        break
        return swaps

    def _from_heads(self, n: Node, role: tuple[str, str]) -> Node | None:
        """A head word (head_words) of the node's group, in its case, fresh, drawn in a seeded order, then one of
        the whole graph's (a real word still, if of another kind); else None."""
        mine = self.heads.get(role[1], []) if role[0] == "group" else []
        for word in [*self.rng.sample(mine, len(mine)), *self.rng.sample(self.heads[""], len(self.heads[""]))]:
            name = in_case_of(word, n.name)
            if name.isalpha() == n.name.isalpha() and self.namer._fresh(name):
                node = self.namer._named(n, name)
                if node is not None:
                    return node
        return None

    def _from_kind(self, n: Node, role: tuple[str, str]) -> Node | None:
        """A word of the role's kind (KIND_POOLS) with as many words as n's name, fresh, in its case, or None."""
        names = self.namer.role_names.get(role, [])
        kind = role_kind(names)
        if kind is None:
            return None
        pool = self.kind_order.setdefault(kind, self.rng.sample(KIND_POOLS[kind], len(KIND_POOLS[kind])))
        size = len(n.name.split())
        for word in pool:
            name = in_case_of(word, n.name)
            if len(name.split()) == size and self.namer._fresh(name) and not {w.casefold() for w in name.split()} & self.namer.avoid:
                node = self.namer._named(n, name)
                if node is not None:
                    return node
        return None


def with_pseudonyms(variant: Variant, pseudonyms: Pseudonyms) -> Variant:
    """--pseudonymize: every node renamed to its pseudonym (see Pseudonyms) with an id in its id's style; edges,
    gold answers, answer ids, queries, the question texts and the properties that quote a name follow; types,
    relations and gold paths stay. A model that answers from memory instead of the graph scores lower here than
    on the original names, on the same questions."""
    contexts, mappings = [], {}
    for context in variant.contexts:
        renamed, mapping = _pseudonyms(context, pseudonyms.rename(context.graph), pseudonyms)
        contexts.append(renamed)
        mappings[context.id] = mapping
    mapping = json_bytes(mappings[""] if variant.shared else mappings)
    return replace(variant, ids="pseudonyms", contexts=tuple(contexts), mapping_sha256=sha256_hex(mapping))


def _pseudonyms(context: Context, renamed: dict[str, Node], pseudonyms: Pseudonyms) -> tuple[Context, dict]:
    """with_pseudonyms for one context: the renamed context and its renaming (old id -> [new id, new name])."""
    graph = context.graph
    by_name = {n.name: renamed[n.id].name for n in graph.nodes}
    by_name.update({n.id: renamed[n.id].id for n in graph.nodes if len(n.id) > 2})  # an id quoted in a question
    pattern = re.compile("|".join(re.escape(k) for k in sorted(by_name, key=len, reverse=True) if k.strip())) if by_name else None
    folded = {fold_answer(n.name): renamed[n.id].name for n in graph.nodes}

    def text(value: str) -> str:
        return pattern.sub(lambda m: by_name[m.group(0)], value) if pattern else value

    def props(all_props: tuple[Props, ...]) -> tuple[Props, ...]:
        return tuple(tuple((k, text(v) if isinstance(v, str) else v) for k, v in p) for p in all_props)

    new_graph = Graph(tuple(renamed[n.id] for n in graph.nodes),
                      tuple(Edge(renamed[e.source].id, e.relation, renamed[e.target].id) for e in graph.edges), graph.edge_ids,
                      props(graph.node_props), props(graph.edge_props))
    questions = tuple(replace(
        q, question=text(q.question),
        answers=q.answers if q.insufficient else tuple(dict.fromkeys(folded.get(fold_answer(a), text(a)) for a in q.answers)),
        answer_ids=tuple(renamed[i].id for i in q.answer_ids),
        query=replace(q.query, start=renamed[q.query.start].id) if q.query else None) for q in context.questions)
    new_names = re.compile("|".join(re.escape(n.name) for n in sorted(new_graph.nodes, key=lambda n: -len(n.name)) if n.name.strip()) or "(?!)")
    for q in questions:
        left = still_named(new_names.sub(" ", q.question), pseudonyms.real)  # the pseudonyms' own words are no leftovers
        if left and q.id not in pseudonyms.warned:
            pseudonyms.warned.add(q.id)
            warn(f"--pseudonymize: the text of question {q.id} may still name {', '.join(map(repr, left[:3]))} in another "
                 "form than the graph's; rename it in the questions file, or use generated questions")
    mapping = {n.id: [renamed[n.id].id, renamed[n.id].name] for n in graph.nodes}
    return replace(context, graph=new_graph, questions=questions), mapping


def still_named(question: str, nodes: tuple[Node, ...]) -> list[str]:
    """The names a renamed question text (its pseudonyms taken out) may still hold: a word of a name of several words standing alone
    ('Thompson' of 'Karen Thompson'), or in Cyrillic an inflected form of a name's word ('Ирины' for 'Ирина': the
    same word but for its last one to three letters). Only capitalised words of four letters or more count, and
    never the text's first word: 'Which' is not 'White'."""
    found = re.findall(r"[^\W\d_]+", question)
    words = {w for w in found[1:] if len(w) >= 4 and w[0].isupper()}
    if not words:
        return []
    left = []
    for n in nodes:
        for part in n.name.split(" ") if " " in n.name.strip() else [n.name]:
            part = part.strip(",.;:()\"'")
            if len(part) < 4:
                continue
            if part in words and " " in n.name.strip():
                left.append(n.name)
            elif script(part) == "CYRILLIC" and len(part) >= 5 and any(
                    w != part and w[:-k] == part[:-k] and abs(len(w) - len(part)) <= 2 for w in words for k in (1, 2, 3) if len(w) > k + 2):
                left.append(n.name)
    return sorted(set(left))


TO_CYRILLIC = dict(zip("abdeklmnorstvBDKLMNORSTV", "абдеклмнорствБДКЛМНОРСТВ"))


def edge_order(context: Context, size: str, k: int, seed: int) -> list[int]:
    """Displayed order of a context's edges for permutation k (0 keeps the canonical order)."""
    order = list(range(len(context.graph.edges)))
    if k:
        random.Random(context.seed(seed, size, f"permutation/{k}")).shuffle(order)
    return order


def subgraph(graph: Graph) -> Graph:
    """The graph's edges with exactly the nodes they use, in the nodes' order: no dangling ids, no idle nodes."""
    used = {e.source for e in graph.edges} | {e.target for e in graph.edges}
    keep = [n.id in used for n in graph.nodes]
    return replace(graph, nodes=tuple(itertools.compress(graph.nodes, keep)),
                   node_props=tuple(itertools.compress(graph.node_props, keep)) if graph.node_props else ())


def with_edge_ids(context: Context) -> Context:
    """--edge-ids: each edge of the context gets the stable id e1, e2, ... in its canonical order, where the input's
    edges are interleaved with the distractors', so an id says nothing of which edges are gold. A permutation
    moves the edges and their ids together."""
    return replace(context, graph=replace(context.graph, edge_ids=tuple(f"e{k + 1}" for k in range(len(context.graph.edges)))))


@dataclass(frozen=True)
class Template:
    name: str  # ru, en, or the file it was read from
    text: str
    parts: tuple[str, ...]  # literal, field, literal, field, literal, field, literal

    @classmethod
    def parse(cls, name: str, text: str) -> Template:
        parts = tuple(re.split(r"\{(" + "|".join(TEMPLATE_FIELDS) + r")\}", text))
        fields = Counter(parts[1::2])
        for field_name in TEMPLATE_FIELDS:
            if fields[field_name] != 1:
                raise BenchmarkError(
                    f"{name}: the prompt template has {{{field_name}}} {fields[field_name]} times; put each of "
                    f"{', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)} in it exactly once (other braces are literal)"
                )
        unknown = sorted(set(re.findall(r"\{([A-Za-z_]\w*)\}", text)) - set(TEMPLATE_FIELDS))
        if unknown:
            raise BenchmarkError(
                f"{name}: the prompt template has the unknown field {{{unknown[0]}}}; it takes "
                f"{', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}; write the text itself instead"
            )
        return cls(name, text, parts)

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


MAX_TEMPLATE_BYTES = 1_000_000


def load_template(value: str, edge_ids: bool = False) -> Template:
    """--prompt: a built-in name (ru, the article's; en) or a UTF-8 file with the three fields. With edge_ids a
    built-in template asks for the path as edge ids (a file says what it says)."""
    if value in PROMPT_TEMPLATES:
        text = PROMPT_TEMPLATES[value]
        if edge_ids:
            text = text.replace(PATH_LINES[value], EDGE_ID_PATH_LINES[value])
        return Template.parse(value + ("+edge-ids" if edge_ids else ""), text)
    path = Path(value)
    where = display(path)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_TEMPLATE_BYTES + 1)
        if len(raw) > MAX_TEMPLATE_BYTES:
            raise BenchmarkError(f"{where}: the prompt template is over {MAX_TEMPLATE_BYTES:,} bytes; give a template, not a corpus")
        if raw.startswith(b"\xef\xbb\xbf"):
            warn(f"{where}: the byte order mark at the start of the template was dropped; it would begin every prompt")
            raw = raw[3:]
        text = raw.decode("utf-8")
    except OSError as e:
        raise BenchmarkError(
            f"--prompt {value!r}: cannot read it ({e.strerror}); give {', '.join(PROMPT_TEMPLATES)} or a template file"
        ) from None
    except UnicodeDecodeError as e:
        raise BenchmarkError(f"{where}: the byte at offset {e.start} is not UTF-8; save the template as UTF-8") from None
    return Template.parse(where, check_text(text, f"{where} (the prompt template)"))


ARTICLE_TEMPLATE = Template.parse("ru", PROMPT_TEMPLATES["ru"])


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
TOKENIZER_THREADS = min(4, os.cpu_count() or 1)


def bpe_cache_name(url: str) -> str:
    return hashlib.sha1(url.encode()).hexdigest()


@dataclass(frozen=True)
class Tokenizer:
    name: str  # tiktoken encoding name, or hf:<file name>@<first 8 of its SHA-256> for a Hugging Face tokenizer.json
    encoding: tiktoken.Encoding  # or HFEncoding: anything with encode_ordinary(text) -> token ids
    bpe_sha256: str | None  # SHA-256 of the BPE (or tokenizer.json) file, None when tiktoken does not tell us
    bpe_source: str  # where the BPE file came from
    library: str = ""  # what counts, with its version, for the rows: "tiktoken 0.14.0", "tokenizers 0.23.3"

    def count(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))

    @functools.cached_property
    def splits(self) -> bool:
        """Its regex is one of SPLIT_PATTERNS: a prompt can be counted by parts."""
        return sha256_hex(getattr(self.encoding, "_pat_str", "")) in SPLIT_PATTERNS


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
        return Tokenizer(name, encoding, sha, f"data/tiktoken/{key}", f"tiktoken {tiktoken.__version__}")
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
        self.pending: dict[tuple[str, str], Future] = {}  # counts under way on the pool's threads
        self.pool: ThreadPoolExecutor | None = None

    def count(self, tokenizer: Tokenizer, text: str, sha: str | None = None) -> int:
        key = (tokenizer.name, sha or sha256_hex(text))
        if key not in self.cache:
            pending = self.pending.pop(key, None)
            self.cache[key] = pending.result() if pending else tokenizer.count(text)
        return self.cache[key]

    def start(self, tokenizer: Tokenizer, text: str, sha: str) -> None:
        """Begin counting a large text on another thread (tiktoken releases the GIL), so the caller can do
        other work meanwhile, such as the round-trip check; count() collects the result."""
        key = (tokenizer.name, sha)
        if key in self.cache or key in self.pending:
            return
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=TOKENIZER_THREADS, thread_name_prefix="tokens")
        self.pending[key] = self.pool.submit(tokenizer.count, text)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None

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


LEAKAGE_MODES = ("fail", "warn")


def _path_forms(path: tuple[int, ...]) -> list[str]:
    return [sep.join(map(str, path)) for sep in (", ", ",", "-", "_", " ")] if len(path) > 1 else []


def _answer_forms(q: Question) -> list[str]:
    return list(dict.fromkeys(a for a in (*map(fold_answer, q.answers), *(i.casefold() for i in q.answer_ids)) if a))


def leakage_checks(questions: tuple[Question, ...], graphs: list[tuple[str, tuple[Context, ...]]], template: Template,
                   file_names: list[str]) -> list[dict]:
    """Each check of article 8.3 with its result (pass, fail or warn) and its findings [{question, found}];
    graphs: (variant name, its contexts), for the checks of node ids and node order."""
    text = fold_answer(template.render("", "", ""))
    positives = [q for q in questions if not q.insufficient]
    forms = {q.id: _answer_forms(q) for q in positives}
    checks = []

    def check(name: str, found: list[tuple[str | None, str]], detail: str, level: str = "fail") -> None:
        shown = ", ".join(f"{qid}: {what}" if qid else what for qid, what in found[:5])
        shown += f" and {len(found) - 5} more" if len(found) > 5 else ""
        checks.append({
            "check": name, "result": level if found else "pass", "detail": f"{detail}: {shown}" if found else detail,
            "found": [{"question": qid, "found": what} for qid, what in found],
        })

    check(
        "template_has_no_answer",
        [(q.id, repr(a)) for q in positives for a in forms[q.id] if mentions(text, a)],
        f"the instruction and answer schema hold no gold answer or answer id ({ABSTAIN}, the abstention label every prompt carries, is exempt)",
    )
    check(
        "question_has_no_answer",
        [(q.id, repr(a)) for q in positives for a in forms[q.id] if mentions(fold_answer(q.question), a)],
        "no question's wording contains its own answer or answer id",
    )
    check(
        "no_gold_path_outside_the_graph",
        [(q.id, repr(f)) for q in questions for p in q.paths for f in _path_forms(p) if f in text or f in q.question],
        "neither the template nor a question writes out a gold path",
    )
    owners: dict[str, list[str]] = {}  # answer form -> the questions it answers
    for q in positives:
        for a in forms[q.id]:
            owners.setdefault(a, []).append(q.id)
    check(
        "file_names_have_no_answer",
        [(qid, f"{name} has {a!r}") for name in sorted(set(file_names)) for a in sorted(mentioned(fold_answer(name), owners)) for qid in owners[a]],
        "no output file name contains a gold answer or answer id",
    )
    graph_list = [(name, c.graph, c.questions) for name, contexts in graphs for c in contexts]
    ids = sorted({n.id for _, g, _ in graph_list for n in g.nodes})
    check(
        "no_few_shot_examples",
        [(None, repr(i)) for i in ids if not i.isalpha() and mentions(text, i.casefold())],
        "the template quotes no node id of the graph, so no few-shot example can repeat a gold path (ids of letters "
        "alone, like 'target', are ordinary words and not counted)",
    )
    nodes = {n.id: n for _, g, _ in graph_list for n in g.nodes}
    check(
        "ids_are_neutral",
        [(None, f"node id {i!r} (named {nodes[i].name!r}) adds the word {', '.join(map(repr, leaky_markers(nodes[i])))}")
         for i in ids if leaky_markers(nodes[i])],
        f"no node id adds a marker word ({', '.join(LEAKY_ID_WORDS)}) that its node's name does not have: 'gold_1' for "
        "'Paris' would, 'Gold' for 'Gold' does not",
    )
    always_first = []
    for name, contexts in graphs:  # over every context of a variant: one question's own context is always "first" by chance
        led = firsts = 0
        for c in contexts:
            first, types = {}, {n.id: n.type for n in c.graph.nodes}
            for n in c.graph.nodes:
                first.setdefault(n.type, n.id)
            for q in c.questions:
                if q.answer_ids:
                    led += 1
                    firsts += any(first.get(types.get(a)) == a for a in q.answer_ids)
        if led and firsts == led and (len(contexts) == 1 or led > 1):
            always_first.append((None, name))
    check(
        "answer_not_always_first",
        always_first,
        "in every variant, some gold answer is not the first node of its type in the node list",
        level="warn",
    )
    return checks


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

    @property
    def article_layout(self) -> bool:
        """The article's own run (one small graph as given, no budget): files keep the article's names."""
        return (self.sizes == ["small"] and self.ids == ["original"] and self.permutations == 1 and self.budget is None
                and self.context == "shared")


class FormattedGraph:
    """One graph text in one format, as the run's template puts it before every question."""

    def __init__(self, template: Template, fmt: str, text: str, sha: str | None = None) -> None:
        self.template, self.fmt, self.text = template, fmt, text
        data = text.encode("utf-8")
        self.sha, self.bytes = sha or sha256_hex(data), len(data)
        parts = template.around(fmt)
        self.before = self.head = self.middle = self.end = None
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


def largest_fitting(f: Callable[[int], int], limit: int, lo: int, f_lo: int, hi: int, f_hi: int) -> tuple[int, int]:
    """Largest k with f(k) <= limit < f(k + 1), given f(lo) <= limit < f(hi): interpolation search, with a
    bisection after every third guess in a row that fails to halve the interval, so O(log(hi - lo)) calls
    of f at worst and a handful when f grows about linearly (tokens per edge). Returns (k, f(k))."""
    slow_steps = 0
    while hi - lo > 1:
        if slow_steps >= 3 or f_hi == f_lo:
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


def cut_near(f: Callable[[int], int], limit: int, hint: int, lo: int, f_lo: int, hi: int | None, f_hi: int | None) -> tuple[int, int]:
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
        hi, f_hi = (None, None) if cap == 2 * guess + 2 else (cap, None)
        if hi is not None:
            f_hi = tokens(cap, compact)
            if f_hi <= window:
                return cap, True  # the names ran out before the window filled
        try:
            lo, _ = cut_near(lambda n, fmt=compact: tokens(n, fmt), window, min(guess, hi - 1) if hi else guess, lo, f_lo, hi, f_hi)
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


def build_variants(inputs: RunInputs, plan: Plan, counts: TokenCounts, contexts: list[Context] | None = None) -> list[Variant]:
    """Every (size, ids) variant of the plan over the input's contexts (input_contexts, unless given), each proven
    by the solver preflight. A context's distractors are drawn for it alone, named apart from every name of the
    input graph."""
    bases = input_contexts(inputs, plan)[0] if contexts is None else contexts
    shared = len(bases) == 1 and not bases[0].id
    namer = None if shared or plan.sizes == ["small"] else Namer(inputs.graph, random.Random(f"{plan.seed}/names"))
    streams: dict[str, Distractors] = {}  # medium and large draw from one stream per context: large extends medium
    pseudonyms: Pseudonyms | None = None  # one renaming for every size and context
    variants = []
    for size in plan.sizes:
        sized, branches, notes = [], 0, []
        for base in bases:
            made, note = 0, ""
            if size != "small":
                stream = streams.get(base.id) or streams.setdefault(base.id, Distractors(base.graph, base.questions, plan.seed, base.id, namer))
                n, spent = large_branches(base, stream, plan, counts) if size == "large" else (stream.medium, False)
                base, made = with_distractors(base, stream, size, n, plan.seed)
                if size == "medium" and made < n or spent:
                    note = stream.shortage(size, made, n if size == "medium" else None)
            sized.append(with_edge_ids(base) if plan.edge_ids else base)
            branches += made
            notes += [(base.id, note)] if note else []
        shortage = notes[0][1] if shared and notes else (
            f"{size}: {len(notes)} of {len(bases)} contexts got fewer distractor branches than they want; the first, "
            f"context {notes[0][0]}: {notes[0][1]}" if notes else "")
        if shortage:
            warn(shortage)
        base_variant = Variant(size, "original", tuple(sized), branches, shortage)
        for ids in plan.ids:
            if ids == "pseudonyms" and pseudonyms is None:
                pseudonyms = Pseudonyms(inputs.graph, plan.seed)
            variant = base_variant if ids == "original" else with_short_ids(base_variant, plan.seed) if ids == "short" else with_pseudonyms(base_variant, pseudonyms)
            preflight_solver(variant)
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
        names += [variant_file(v, kind) for v in stand_ins for kind in ("json", "questions") if shared or kind == "questions"]
        names += [f"order.{size}.p{k}.json" for size in plan.sizes for k in range(plan.permutations)]
    if plan.write_prompts is not False:  # written, or perhaps (decided once the graph texts are known)
        modes = [("A", "")] + [("B", t.name) for t in plan.tokenizers if plan.budget]
        names += [
            prompt_file(plan, v, k, mode, encoding, fmt, q.id)
            for v in stand_ins for k in range(plan.permutations) for mode, encoding in modes for fmt in plan.formats for q in questions
        ]
    return names


def row_order(plan: Plan, variants: list[Variant]) -> Callable[[dict], tuple]:
    """Rows sorted by encoding, size, ids, permutation, mode, then format and question as given."""
    rank = {
        "encoding": {t.name: i for i, t in enumerate(plan.tokenizers)},
        "size": {s: i for i, s in enumerate(plan.sizes)},
        "ids": {s: i for i, s in enumerate(plan.ids)},
        "format": {f: i for i, f in enumerate(plan.formats)},
        "question_id": {q.id: i for i, q in enumerate(variants[0].questions)},
    }
    return lambda r: (
        rank["encoding"][r["encoding"]], rank["size"][r["size"]], rank["ids"][r["ids"]], r["permutation"], r["mode"],
        rank["format"][r["format"]], rank["question_id"][r["question_id"]],
    )


def question_dict(q: Question, graph: Graph | None = None) -> dict:
    """A question in the input file's shape (singular fields where there is one value), so a variant's
    questions can be fed back with --questions; with graph, its own context's graph goes with it."""
    item = {"id": q.id, "question": q.question, **singular_or_plural("answer", "answers", q.answers)}
    item.update(singular_or_plural("path", "paths", [list(p) for p in q.paths]) if q.paths else {"path": []})
    item["insufficient"] = q.insufficient
    if q.insufficient:
        item["answer_id"] = None
    elif q.answer_ids:
        item.update(singular_or_plural("answer_id", "answer_ids", q.answer_ids))
    if q.query is not None:
        item["query"] = _query_dict(q.query)
    if graph is not None:
        item["context"] = {"graph": graph_dict(graph, flat=True)}
    return item


def console_table(rows: list[dict], formats: list[str]) -> str:
    """The article's console table: format, graph tokens, min and max prompt tokens; and how many prompts overflow."""
    lines = ["format\tgraph_tokens\tprompt_tokens_min\tprompt_tokens_max\toverflow"]
    for fmt in formats:
        mine = [r for r in rows if r["format"] == fmt]
        if mine:
            prompt_tokens = [r["prompt_tokens"] for r in mine]
            overflow = f"{sum(r['overflow'] for r in mine)}/{len(mine)}"
            lines.append(f"{fmt}\t{mine[0]['graph_tokens']}\t{min(prompt_tokens)}\t{max(prompt_tokens)}\t{overflow}")
    return "\n".join(lines)


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


def build_manifest(config: dict, tokenizers: list[Tokenizer], inputs: RunInputs, outputs: dict[str, str], preflight: dict,
                   command: list[str], libraries: dict[str, str]) -> dict:
    """manifest.json: how the run was made (versions, flags, the SHA-256 of every input and output). command: the flags as
    they may be written down; libraries: the version of each library a measured format was written with."""
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
            **libraries,
        },
        "command": ["benchmark.py", *command],
        "config": {k: v for k, v in config.items() if k != "argv"},
        "encodings": [
            {"name": t.name, "bpe_sha256": t.bpe_sha256, "bpe_source": t.bpe_source} for t in tokenizers
        ],
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
        self.out_dir, self.folder = out_dir, None
        self.made_out_dir = not out_dir.exists()
        self.sha: dict[str, str] = {}  # name -> SHA-256, in the order written
        self.report: dict = {}  # what report.html shows beside the measurement: "model" (report_model), "svg" (results.svg)

    def add(self, name: str, data: bytes) -> None:
        self.add_chunks(name, iter([data]))

    def add_chunks(self, name: str, chunks: Iterator[bytes]) -> None:
        """add(), for a file made in pieces: each written and hashed on another thread while the next is made
        (both release the GIL), so memory holds two pieces at a time."""
        digest = hashlib.sha256()
        try:
            if self.folder is None:
                self.out_dir.mkdir(parents=True, exist_ok=True)
                self.folder = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.out_dir))
            with open(self.folder / name, "wb") as f, ThreadPoolExecutor(max_workers=1, thread_name_prefix="writer") as writer:
                pending = None

                def put(chunk: bytes) -> None:
                    f.write(chunk)
                    digest.update(chunk)

                for chunk in chunks:
                    if pending is not None:
                        pending.result()  # in order, and an error of the write raised here
                    pending = writer.submit(put, chunk)
                if pending is not None:
                    pending.result()
        except OSError as e:
            raise BenchmarkError(f"{display(self.out_dir)}: cannot write the outputs ({e.strerror or e}); free some space or fix the folder, "
                                 "and run the same command again (a model run's log is kept), or choose another folder with --out") from None
        self.sha[name] = digest.hexdigest()

    def read(self, name: str) -> bytes:
        return (self.folder / name).read_bytes()

    def discard(self) -> None:
        """Remove every staged file, and the output folder if this run made it and it is empty."""
        if self.folder is not None:
            for leftover in self.folder.glob("*"):
                leftover.unlink(missing_ok=True)
            self.folder.rmdir()
            self.folder = None
        if self.made_out_dir:
            try:
                self.out_dir.rmdir()
            except OSError:
                pass


LOCK_NAME = ".benchmark.lock"


class OutLock:
    """One run per output folder: an exclusive flock on --out/.benchmark.lock, which the kernel drops when its process
    ends however it ends (kill -9 included), so a dead run's lock is never mistaken for a live one, nor a live one,
    still writing its pid, for a dead one. The file says who holds it, for the message a second run prints."""

    def __init__(self, out_dir: Path) -> None:
        self.path, self.held, self.file = out_dir / LOCK_NAME, False, None

    def acquire(self) -> None:
        import fcntl
        import socket

        me = f"{os.getpid()} {socket.gethostname()} {datetime.now(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            while True:
                handle = open(self.path, "a+b")
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.seek(0)
                    holder = handle.read(200).decode("utf-8", errors="replace").split()
                    handle.close()
                    raise BenchmarkError(f"{display(self.path.parent)} is in use by another run of this tool (pid {holder[0] if holder else '?'}"
                                         f"{', since ' + holder[2] if len(holder) > 2 else ''}); wait for it to end, or choose another --out") from None
                try:
                    current = os.stat(self.path)
                except FileNotFoundError:
                    current = None
                if current is not None and os.path.samestat(current, os.fstat(handle.fileno())):
                    break
                handle.close()  # the holder removed the file as we opened it: lock the file that is there now
            handle.truncate(0)
            handle.write(me.encode("utf-8"))
            handle.flush()
            self.file, self.held = handle, True
        except OSError as e:
            raise BenchmarkError(f"{display(self.path.parent)}: cannot write the outputs ({e.strerror}); choose another folder with --out") from None
        for leftover in self.path.parent.glob(".staging-*"):  # a dead run's half-written outputs: nobody else is here
            shutil.rmtree(leftover, ignore_errors=True)

    def release(self) -> None:
        if self.held:
            self.path.unlink(missing_ok=True)  # while still locked: a run that opened it meanwhile sees it gone and retries
            self.file.close()
            self.held, self.file = False, None


def publish(staging: Staging, manifest: dict, lock: OutLock | None = None) -> None:
    """Move the staged files and the manifest into the output folder, replacing the previous run's files as a whole;
    the lock, if any, is released before the staging folder goes."""
    out_dir = staging.out_dir
    staging.add(MANIFEST, json_bytes(manifest))
    try:
        stale = [n for n in previous_outputs(out_dir) if n not in staging.sha]
        (out_dir / MANIFEST).unlink(missing_ok=True)
        for name in staging.sha:
            if name != MANIFEST:
                os.replace(staging.folder / name, out_dir / name)
        for name in stale:
            (out_dir / name).unlink(missing_ok=True)
        os.replace(staging.folder / MANIFEST, out_dir / MANIFEST)
    except OSError as e:
        raise BenchmarkError(f"{display(out_dir)}: cannot write the outputs ({e}); choose another folder with --out") from None
    finally:
        staging.made_out_dir = False
        if lock is not None:
            lock.release()
        staging.discard()


class Parser(argparse.ArgumentParser):
    """argparse with a short error: the one line and, for a flag it does not know, the flag it is closest to,
    instead of the whole usage (which --help prints)."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments: "):
            known = [o for action in self._actions for o in action.option_strings if o.startswith("--")]
            guesses = [(w, difflib.get_close_matches(w.split("=", 1)[0], known, n=1, cutoff=0.6))
                       for w in message.removeprefix("unrecognized arguments: ").split() if w.startswith("-")]
            message += "".join(f"; {w.split('=', 1)[0]}: did you mean {g[0]}?" for w, g in guesses if g)
        self.exit(2, f"{self.prog}: error: {message} (python {self.prog} --help lists every flag)\n")


def missing_tiktoken(root: Path, python: str) -> str:
    """What to do when this Python has no tiktoken: most often it is not the venv the set-up line made."""
    venv = root / ".venv" / "bin" / "python"
    if venv.exists() and Path(python).absolute() != venv.absolute():
        return (f"the tiktoken package is not installed for {python}; run this with {display(venv)}, the venv the set-up "
                "line made, or: pip install -r requirements.lock.txt")
    return "the tiktoken package is not installed; run: pip install -r requirements.lock.txt"


def has_tiktoken() -> bool:
    return tiktoken is not None


def main(argv: list[str] | None = None) -> int:
    """The command line: the package beside this script runs every flag."""
    from graphrag_format_benchmark.cli import main as package_main  # the one way into the package

    return package_main(argv)


if __name__ == "__main__":
    sys.exit(main())
