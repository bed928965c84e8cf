"""A framework's context found in a logged prompt, read into a subgraph, and proved by writing it again.

In: a prompt's text. Out: the spans (start, end) that hold one layout's context (find), and for the text of each the
subgraph it shows with what else the text holds (read: a Graph and the layout's state record), such that
write(graph, state) gives the
text back byte for byte. The writer takes every value the graph holds from the graph, in the layout's own encoding
(GraphRAG's raw cells, LightRAG's json.dumps, LlamaIndex's and LangChain's repr), so a text that does not come back
exactly was not fully read: the article's round-trip rule, applied to what a framework sent. The state holds what is
the layout's and not a fact of the subgraph: row ids, GraphRAG's ranks and links, key orders, element ids, which
entities had a row of their own.

Every layout is read as the framework writes it, raw: GraphRAG's '|' and newlines unescaped, LlamaIndex's ' -> ' too.
A value holding the layout's delimiters makes a text that cannot be read back; it is reported (LayoutError), never
guessed. A span of our own formats (a prompt made by this tool's templates) is read by the format's own parser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from .._article import FORMATS, PROMPT_TEMPLATES, BenchmarkError, Edge, Graph, Node, Props, Template, is_scalar
from ..frameworks import (
    GRAPHRAG_ENTITIES,
    GRAPHRAG_RELATIONSHIPS,
    LIGHTRAG_ENTITIES,
    LIGHTRAG_RELATIONSHIPS,
    LIGHTRAG_UNKNOWN,
    LITERAL_TOKENS,
    LLAMAINDEX_PREAMBLE,
    _literal_end,
    py_literal,
)
from ..stores import DEFAULT_RELATION, DEFAULT_TYPE


class LayoutError(ValueError):
    """A span that cannot be read back exactly: the reason, and where in the span (a character offset)."""

    def __init__(self, reason: str, at: int = 0) -> None:
        super().__init__(reason)
        self.reason, self.at = reason, at


@dataclass
class Span:
    """A layout's context found in a prompt: where, and what it reads as."""

    layout: str
    start: int
    end: int
    graph: Graph | None = None  # the subgraph it shows, once read_span has read it


@dataclass
class Parts:
    """Builds a graph as a layout's text names it: nodes by key, in the order first named; edges in order."""

    nodes: dict[str, tuple[Node, Props]] = field(default_factory=dict)
    edges: list[tuple[Edge, Props]] = field(default_factory=list)

    def node(self, key: str, name: str, kind: str = DEFAULT_TYPE, props: dict[str, Any] | None = None) -> None:
        found = (Node(key, name, kind), tuple(sorted((props or {}).items())))
        if self.nodes.setdefault(key, found) != found:
            raise LayoutError(f"the entity {key!r} is shown twice, with other values")

    def edge(self, source: str, relation: str, target: str, props: dict[str, Any] | None = None) -> None:
        self.edges.append((Edge(source, relation, target), tuple(sorted((props or {}).items()))))

    def graph(self) -> Graph:
        nodes = list(self.nodes.values())
        return Graph(
            tuple(n for n, _ in nodes),
            tuple(e for e, _ in self.edges),
            (),
            tuple(p for _, p in nodes),
            tuple(p for _, p in self.edges),
        )


def _scalars(values: dict[str, Any], where: str) -> dict[str, Any]:
    """A record's properties as the graph keeps them: a string, number or boolean each."""
    for key, value in values.items():
        if not isinstance(key, str) or not is_scalar(value):
            raise LayoutError(
                f"{where} has {key!r} = {str(value)[:40]!r}: only text, numbers and booleans are read as properties"
            )
    return values


def first_difference(expected: str, got: str) -> int:
    """The first character offset where two texts differ."""
    for k, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            return k
    return min(len(expected), len(got))


# -----------------------------------------------------------------------------
# graphrag: the local search tables, raw


# the entity table's last newline, the blank line it is joined by
GRAPHRAG_JOIN = "\n\n\n" + GRAPHRAG_RELATIONSHIPS[0] + "\n"


def find_graphrag(text: str) -> list[tuple[int, int]]:
    """The entity and relationship tables: from '-----Entities-----' to the end of the relationship table's last row
    (its newline, and the blank line that joins the next section, are the prompt's). Linear in the text: each search
    goes on from where the last one ended."""
    spans: list[tuple[int, int]] = []
    join = -1
    for m in re.finditer(r"(?m)^" + re.escape(GRAPHRAG_ENTITIES[0]) + r"\n", text):
        if spans and m.start() < spans[-1][1]:
            continue
        if join < m.start():
            join = text.find(GRAPHRAG_JOIN, m.start())
            if join == -1:  # no table joins after this one: none after a later one either
                break
        end = text.find("\n\n", join + len(GRAPHRAG_JOIN) - 1)
        end = (len(text) - text.endswith("\n")) if end == -1 else end
        spans.append((m.start(), end))
    return spans


def _table(
    lines: list[str], first: int, fixed: tuple[str, ...], what: str, at: int
) -> tuple[list[str], list[list[str]]]:
    header = lines[first].split("|")
    if tuple(header[: len(fixed)]) != fixed:
        raise LayoutError(f"the {what} table's header is not GraphRAG's {'|'.join(fixed)!r}", at)
    rows = []
    for line in lines[first + 1 :]:
        cells = line.split("|")
        if len(cells) != len(header):
            raise LayoutError(
                f"{'an' if what[0] in 'aeiou' else 'a'} {what} row has {len(cells)} cells where its header has "
                f"{len(header)}: a value holds '|' or a "
                "newline, which GraphRAG writes raw, so the row cannot be read back",
                at,
            )
        rows.append(cells)
    return header, rows


@dataclass(slots=True, frozen=True)
class GraphragState:
    """What GraphRAG's two tables show that is no fact of the subgraph."""

    header: list[str]  # the entity table's header
    ids: list[str]  # each entity row's id cell
    rest: list[list[str]]  # each entity row's cells after its description
    listed: int  # the entities with a row (the others are named by a relationship only)
    rel_header: list[str]  # the relationship table's header
    rel_ids: list[str]  # each relationship row's id cell
    rel_rest: list[list[str]]  # each relationship row's cells after its weight (or description)
    weighted: bool  # the relationship table has a weight column
    blank: frozenset[int]  # the relationship rows with no description (a text may say related_to)


def read_graphrag(text: str) -> tuple[Graph, GraphragState]:
    split = text.index(GRAPHRAG_JOIN)
    entity_lines = text[:split].split("\n")
    relation_lines = text[split + 3 :].split("\n")
    if entity_lines[0] != GRAPHRAG_ENTITIES[0] or relation_lines[0] != GRAPHRAG_RELATIONSHIPS[0]:
        raise LayoutError("not GraphRAG's two tables")
    header, rows = _table(entity_lines, 1, ("id", "entity", "description"), "entity", 0)
    rel_header, rel_rows = _table(relation_lines, 1, GRAPHRAG_RELATIONSHIPS[1], "relationship", split)
    parts = Parts()
    for cells in rows:
        parts.node(cells[1], cells[1], DEFAULT_TYPE, {"description": cells[2]} if cells[2] else {})
    weighted = len(rel_header) > 4 and rel_header[4] == "weight"
    listed = len(parts.nodes)
    for cells in rel_rows:
        props = {}
        if weighted and cells[4]:
            try:
                props = {"weight": float(cells[4])}
            except ValueError:
                raise LayoutError(f"a relationship's weight is {cells[4][:40]!r}, not a number", split) from None
        parts.edge(cells[1], cells[3] or DEFAULT_RELATION, cells[2], props)  # an empty cell: no description
        for end in (cells[1], cells[2]):
            if end not in parts.nodes:
                parts.node(end, end)
    state = GraphragState(
        header,
        [c[0] for c in rows],
        [c[3:] for c in rows],
        listed,
        rel_header,
        [c[0] for c in rel_rows],
        [c[5 if weighted else 4 :] for c in rel_rows],
        weighted,
        frozenset(k for k, c in enumerate(rel_rows) if not c[3]),
    )
    return parts.graph(), state


def write_graphrag(graph: Graph, state: GraphragState) -> str:
    lines = [GRAPHRAG_ENTITIES[0], "|".join(state.header)]
    for k, (n, props) in enumerate(list(graph.nodes_with_props())[: state.listed]):
        lines.append("|".join([state.ids[k], n.name, str(dict(props).get("description", "")), *state.rest[k]]))
    lines += ["", "", GRAPHRAG_RELATIONSHIPS[0], "|".join(state.rel_header)]
    for k, (e, props) in enumerate(graph.edges_with_props()):
        weight = dict(props).get("weight")
        cells = [state.rel_ids[k], e.source, e.target, "" if k in state.blank else e.relation]
        cells += [str(weight) if weight is not None else ""] if state.weighted else []
        lines.append("|".join([*cells, *state.rel_rest[k]]))
    return "\n".join(lines)


# -----------------------------------------------------------------------------
# lightrag: the entity and relationship blocks of the query context


LIGHTRAG_HEAD = LIGHTRAG_ENTITIES + "\n\n```json\n"
LIGHTRAG_MIDDLE = "```\n\n" + LIGHTRAG_RELATIONSHIPS + "\n\n```json\n"


def find_lightrag(text: str) -> list[tuple[int, int]]:
    """The entity and relationship blocks, each head to its relationship block's closing fence. Linear in the text."""
    spans: list[tuple[int, int]] = []
    for m in re.finditer(re.escape(LIGHTRAG_HEAD), text):
        if spans and m.start() < spans[-1][1]:
            continue
        middle = text.find("\n" + LIGHTRAG_MIDDLE, m.end() - 1)
        if middle == -1:  # no relationship block after this head: none after a later one either
            break
        close = text.find("\n```", middle + 1 + len(LIGHTRAG_MIDDLE) - 1)
        if close == -1:
            break
        spans.append((m.start(), close + 4))
    return spans


def _json_lines(block: str, what: str, at: int) -> list[dict[str, Any]]:
    records = []
    for line in block.split("\n") if block else []:
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            raise LayoutError(
                f"{'an' if what[0] in 'aeiou' else 'a'} {what} line is not one JSON object: {line[:60]!r}", at
            )
        records.append(record)
    return records


@dataclass(slots=True, frozen=True)
class LightragState:
    """What LightRAG's JSON lines show that is no fact of the subgraph."""

    entities: list[list[tuple[str, Any]]]  # each entity line's keys in order, with the values of those not read
    nulls: frozenset[str]  # the entities whose description is written null
    relations: list[list[tuple[str, Any]]]  # each relationship line's keys, the same
    unknown: list[bool]  # per relationship: its description was LightRAG's UNKNOWN (a text may say related_to)


def read_lightrag(text: str) -> tuple[Graph, LightragState]:
    middle = text.index("\n" + LIGHTRAG_MIDDLE)
    entities = _json_lines(text[len(LIGHTRAG_HEAD) : middle], "entity", 0)
    relations = _json_lines(text[middle + 1 + len(LIGHTRAG_MIDDLE) : -4], "relationship", middle)
    parts, nulls = Parts(), set()
    for record in entities:
        name, kind, description = record.get("entity"), record.get("type", DEFAULT_TYPE), record.get("description")
        if not isinstance(name, str) or not isinstance(kind, str) or not isinstance(description, (str, type(None))):
            raise LayoutError(
                f"an entity line has no text 'entity', 'type' or 'description': {json.dumps(record)[:80]}"
            )
        shown = description is not None and description != LIGHTRAG_UNKNOWN  # LightRAG's word for none
        parts.node(name, name, kind, {"description": description} if shown else {})
        if description is None and "description" in record:  # written null
            nulls.add(name)
    unknown = cast(list[bool], [])
    for record in relations:
        source, target, description = record.get("entity1"), record.get("entity2"), record.get("description")
        if not all(isinstance(v, str) for v in (source, target, description)):
            raise LayoutError(
                f"a relationship line has no text 'entity1', 'entity2' or 'description': {json.dumps(record)[:80]}",
                middle,
            )
        source, target, description = cast(str, source), cast(str, target), cast(str, description)  # texts, checked
        parts.edge(source, DEFAULT_RELATION if description == LIGHTRAG_UNKNOWN else description, target)
        unknown.append(description == LIGHTRAG_UNKNOWN)
        for end in (source, target):
            if end not in parts.nodes:
                parts.node(end, end)
    own = {"entity", "type", "description", "entity1", "entity2"}
    state = LightragState(
        [[(k, None if k in own else v) for k, v in r.items()] for r in entities],
        frozenset(nulls),
        [[(k, None if k in own else v) for k, v in r.items()] for r in relations],
        unknown,
    )
    return parts.graph(), state


def write_lightrag(graph: Graph, state: LightragState) -> str:
    lines = []
    for (n, props), keys in zip(graph.nodes_with_props(), state.entities):
        values = {
            "entity": n.name,
            "type": n.type,
            "description": dict(props).get("description", None if n.id in state.nulls else LIGHTRAG_UNKNOWN),
        }
        lines.append(json.dumps({k: values.get(k, v) for k, v in keys}, ensure_ascii=False))
    relations = []
    for e, keys, unknown in zip(graph.edges, state.relations, state.unknown):
        values = {
            "entity1": e.source,
            "entity2": e.target,
            "description": LIGHTRAG_UNKNOWN if unknown else e.relation,
        }
        relations.append(json.dumps({k: values.get(k, v) for k, v in keys}, ensure_ascii=False))
    return LIGHTRAG_HEAD + "\n".join(lines) + "\n" + LIGHTRAG_MIDDLE + "\n".join(relations) + "\n```"


# -----------------------------------------------------------------------------
# llamaindex: triplets, a paragraph each (default), or a line each under the source-text preamble (include_text)


def _llama_part(line: str, i: int) -> tuple[str, dict[str, Any] | None, int]:
    """One part of a triplet line from i: its text, its properties (with include_properties) and where it ends."""
    end = line.find(" -> ", i)
    props_at = line.find(" ({", i)
    if props_at != -1 and (end == -1 or props_at < end):
        close = _literal_end(line, props_at + 2)
        try:
            props = py_literal(line[props_at + 2 : close])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise LayoutError(f"properties that are not a Python dict: {line[props_at : props_at + 60]!r}") from None
        if not isinstance(props, dict) or line[close : close + 1] != ")":
            raise LayoutError(f"properties that are not a Python dict: {line[props_at : props_at + 60]!r}")
        return line[i:props_at], props, close + 1
    return line[i : end if end != -1 else len(line)], None, end if end != -1 else len(line)


def _llama_triplet(line: str) -> tuple[tuple[str, dict[str, Any] | None], ...] | None:
    """A line's three parts, or None when it is not a triplet: exactly two ' -> ' outside properties."""
    parts, i = [], 0
    for k in range(3):
        text, props, i = _llama_part(line, i)
        parts.append((text, props))
        if k < 2:
            if not line.startswith(" -> ", i):
                return None
            i += 4
    return tuple(parts) if i == len(line) and all(t for t, _ in parts) else None


def _arrows(line: str) -> bool:
    """A line that reads as a triplet, or holds more than its two arrows (a name holding ' -> ': read, it fails)."""
    arrows = line.count(" -> ")
    if arrows != 2:
        return arrows > 2
    try:
        return _llama_triplet(line) is not None
    except LayoutError:
        return False


LLAMAINDEX_RULE = "-" * 21  # the line around the context in LlamaIndex's default text QA and refine templates


def _llama_blocks(text: str) -> list[tuple[int, int]]:
    """Where LlamaIndex's templates put the context: between a line of 21 dashes and the next such line."""
    rule = LLAMAINDEX_RULE + "\n"
    blocks, at = [], text.find(rule)
    while at != -1:
        start = at + len(rule)
        end = text.find("\n" + LLAMAINDEX_RULE, start)
        if end == -1:
            break
        blocks.append((start, end))
        at = text.find(rule, end + 1)
    return blocks


def find_llamaindex(text: str) -> list[tuple[int, int]]:
    """LlamaIndex's context, by its markers only: each include_text group (the preamble, a blank line, its triplet
    lines), and each run of triplet paragraphs (lines parted by one blank line) inside the context's place, the text
    between LlamaIndex's rules of dashes, as the compact synthesizer joins the retrieved nodes. Arrows elsewhere (an
    instruction, 'question -> evidence -> answer') are no context. Linear in the text."""
    spans = []
    for m in re.finditer(re.escape(LLAMAINDEX_PREAMBLE) + "\n\n", text):
        end, stop = m.end(), m.end()
        while stop < len(text):
            nl = text.find("\n", stop)
            nl = len(text) if nl == -1 else nl
            if not _arrows(text[stop:nl]):
                break
            end, stop = nl, nl + 1
        if end > m.end():
            spans.append((m.start(), end))
    groups = list(spans)
    g = 0  # the first group that does not end before the line at hand
    for start, stop in _llama_blocks(text):
        run: list[tuple[int, int]] = []
        for m in re.finditer(r"[^\n]+", text[start:stop]):
            a, b = start + m.start(), start + m.end()
            while g < len(groups) and groups[g][1] <= a:
                g += 1
            inside = g < len(groups) and groups[g][0] <= a
            if not inside and _arrows(text[a:b]):
                if run and text[run[-1][1] : a] != "\n\n":
                    spans.append((run[0][0], run[-1][1]))
                    run = []
                run.append((a, b))
            elif run:
                spans.append((run[0][0], run[-1][1]))
                run = []
        if run:
            spans.append((run[0][0], run[-1][1]))
    return sorted(spans)


# a triplet's shape: the keys of its subject's, relation's and object's properties in order (None: not shown)
TripletShape = tuple[list[str] | None, ...]


@dataclass(slots=True, frozen=True)
class LlamaindexState:
    """What LlamaIndex's triplets show that is no fact of the subgraph."""

    grouped: bool  # a source-text group (the preamble, a line each), else a paragraph each
    shapes: list[TripletShape]  # each triplet's shape


def read_llamaindex(text: str) -> tuple[Graph, LlamaindexState]:
    grouped = text.startswith(LLAMAINDEX_PREAMBLE + "\n\n")
    at = len(LLAMAINDEX_PREAMBLE) + 2 if grouped else 0
    lines = text[at:].split("\n") if grouped else text.split("\n\n")
    parts, shapes = Parts(), cast(list[TripletShape], [])
    for line in lines:
        triplet = _llama_triplet(line)
        if triplet is None:
            raise LayoutError(
                f"not a triplet 'subject -> relation -> object' (a name holding ' -> ' is ambiguous): {line[:60]!r}",
                at,
            )
        at += len(line) + (1 if grouped else 2)
        (s, s_props), (r, r_props), (o, o_props) = triplet
        for name, props in ((s, s_props), (o, o_props)):
            parts.node(name.replace('"', " "), name, DEFAULT_TYPE, _scalars(props or {}, f"entity {name!r}"))
        parts.edge(s.replace('"', " "), r, o.replace('"', " "), _scalars(r_props or {}, f"relation {r!r}"))
        shapes.append(tuple(None if p is None else list(p) for p in (s_props, r_props, o_props)))
    return parts.graph(), LlamaindexState(grouped, shapes)


def write_llamaindex(graph: Graph, state: LlamaindexState) -> str:
    nodes = {n.id: (n, dict(p)) for n, p in graph.nodes_with_props()}

    def shown(text: str, props: dict[str, Any], keys: list[str] | None) -> str:
        return text if keys is None else f"{text} ({ {k: props[k] for k in keys}!r})"

    lines = []
    for (e, props), (s_keys, r_keys, o_keys) in zip(graph.edges_with_props(), state.shapes):
        (s, s_props), (o, o_props) = nodes[e.source], nodes[e.target]
        lines.append(
            f"{shown(s.name, s_props, s_keys)} -> {shown(e.relation, dict(props), r_keys)} -> "
            f"{shown(o.name, o_props, o_keys)}"
        )
    return LLAMAINDEX_PREAMBLE + "\n\n" + "\n".join(lines) if state.grouped else "\n\n".join(lines)


# -----------------------------------------------------------------------------
# langchain and neo4j_graphrag: the records of a (source, relation, target) query


NODE_KEYS = ("id", "name", "title")  # what a node's map is keyed by: the first it has


def _record_node(value: object, parts: Parts, where: str, kind: str | None = None) -> tuple[str, list[Any]]:
    """A node's map (LangChain's r.data(), a Node's properties) into parts: keyed by its id (or name, or title), named
    by its name where it has one, typed by its 'type' (or kind, a Neo4j label); its key and its keys in order."""
    if not isinstance(value, dict):
        raise LayoutError(f"a record's {where} is not a node's map of properties")
    key_field = next((k for k in NODE_KEYS if isinstance(value.get(k), str)), None)
    if key_field is None:
        raise LayoutError(f"a record's {where} has no text {', '.join(NODE_KEYS)} to name it by")
    key, name, given_kind = value[key_field], value.get("name"), value.get("type")
    kind = given_kind if isinstance(given_kind, str) else kind
    props = {
        k: v
        for k, v in value.items()
        if k not in (key_field, "name", "type") or (k == "type" and not isinstance(v, str))
    }
    parts.node(key, name if isinstance(name, str) else key, kind or DEFAULT_TYPE, _scalars(props, f"the node {key!r}"))
    return key, [key_field, list(value)]


# a record's shape: its keys, its nodes' shapes ([key field, keys]), its properties' keys, a lone node's key
RecordShape = tuple[list[str], list[Any], list[Any] | None, list[str] | None, str | None]


@dataclass(slots=True, frozen=True)
class RecordsState:
    """What LangChain's or neo4j-graphrag's records show that is no fact of the subgraph."""

    shapes: list[RecordShape]  # each record's shape
    elements: list[tuple[Any, str]] = field(default_factory=list)  # neo4j: each node's element id and labels, printed


def _records(records: list[Any], parts: Parts, kinds: list[str | None] | None = None) -> list[RecordShape]:
    """The records into parts; each record's shape: its keys, its nodes' keys in order, its properties' keys, and for a
    node in no relationship, the node's key."""
    shapes: list[RecordShape] = []
    kinds_left = iter(kinds or [])
    for record in records:
        if not isinstance(record, dict) or not {"source", "relation", "target"} <= set(record):
            raise LayoutError(
                f"a record with the keys {', '.join(map(str, record)) if isinstance(record, dict) else '?'}, not "
                "source, relation and target: a query's answer, not a subgraph"
            )
        start, relation, end, given = record["source"], record["relation"], record["target"], record.get("properties")
        source, source_keys = _record_node(start, parts, "source", next(kinds_left, None))
        if relation is None and end is None:
            shapes.append(([*record], source_keys, None, None, source))
            continue
        target, target_keys = _record_node(end, parts, "target", next(kinds_left, None))
        props = given or {}
        if not isinstance(relation, str) or not isinstance(props, dict):
            raise LayoutError("a record's relation is not text, or its properties not a map")
        parts.edge(source, relation, target, _scalars(props, "a relation"))
        shapes.append(([*record], source_keys, target_keys, None if given is None else list(props), None))
    return shapes


def _node_map(node: Node, props: dict[str, Any], shape: list[Any]) -> dict[str, Any]:
    """A node's map again: its key from the node's id, 'name' and
    'type' from its name and type, the rest its properties."""
    key_field, keys = shape
    values = {key_field: node.id, "name": node.name, "type": node.type}
    return {k: props[k] if k in props else values[k] for k in keys}


def _record_values(graph: Graph, shapes: list[RecordShape]) -> list[dict[str, Any]]:
    """The records again, each value from the graph, in the shapes' key orders."""
    nodes = {n.id: (n, dict(p)) for n, p in graph.nodes_with_props()}
    edges = iter(graph.edges_with_props())
    out: list[dict[str, Any]] = []
    for keys, source_keys, target_keys, prop_keys, lone in shapes:
        if lone is not None:
            out.append({k: _node_map(*nodes[lone], source_keys) if k == "source" else None for k in keys})
            continue
        e, props = next(edges)
        values = {
            "source": _node_map(*nodes[e.source], source_keys),
            "relation": e.relation,
            "target": _node_map(*nodes[e.target], cast("list[Any]", target_keys)),  # an edge's shape has them
            "properties": None if prop_keys is None else {k: dict(props)[k] for k in prop_keys},
        }
        out.append({k: values[k] for k in keys})
    return out


LANGCHAIN_MARKER = "Information:\n"  # GraphCypherQAChain's QA prompt: the records come right after it
SCAN_FACTOR = 8  # a finder reads at most this many times the text (and SCAN_FLOOR more): past it, the line is left out
SCAN_FLOOR = 1 << 20


def _literal_ends(text: str, i: int, ends: dict[int, int]) -> int:
    """Where the Python literal at text[i] ends (as frameworks._literal_end); on the way, each bracket it opens and
    closes is noted in ends (its start -> its end; -1 for one never closed), so that a literal starting at one of them
    is not read again."""
    stack: list[int] = []
    for m in LITERAL_TOKENS.finditer(text, i):
        c = m.group()
        if c[0] in "'\"":
            if not stack:
                return m.end()
        elif c in "([{":
            stack.append(m.start())
        elif c in ")]}":
            if not stack:
                return m.start()
            ends[stack.pop()] = m.end()
            if not stack:
                return m.end()
        elif not stack:  # a space or '>' after a bare word
            return m.start()
    for start in stack:
        ends[start] = -1
    return len(text)


def find_langchain(text: str) -> list[tuple[int, int]]:
    """LangChain's records: a Python list of maps, right after its QA prompt's 'Information:' line, or anywhere when
    every map is a (source, relation, target) record. Each bracket is read once (_literal_ends); a text that would need
    more than SCAN_FACTOR readings is refused (LayoutError naming the bound)."""
    spans: list[tuple[int, int]] = []
    ends: dict[int, int] = {}
    budget = SCAN_FACTOR * len(text) + SCAN_FLOOR
    for m in re.finditer(r"\[\{['\"]", text):
        if spans and m.start() < spans[-1][1]:
            continue
        if m.start() not in ends:
            budget -= _literal_ends(text, m.start(), ends) - m.start()
            if budget < 0:
                raise LayoutError(
                    f"its lists of maps could not be told apart within {SCAN_FACTOR} readings of the text (a bound of "
                    "this tool, against a text of unclosed brackets)",
                    m.start(),
                )
        end = ends.get(m.start(), -1)
        if end == -1:  # never closed
            continue
        try:
            records = py_literal(text[m.start() : end])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        marked = text.endswith(LANGCHAIN_MARKER, 0, m.start())
        if (
            isinstance(records, list)
            and records
            and all(isinstance(r, dict) for r in records)
            and (marked or all({"source", "relation", "target"} <= set(r) for r in records))
        ):
            spans.append((m.start(), end))
    return spans


def read_langchain(text: str) -> tuple[Graph, RecordsState]:
    parts = Parts()
    shapes = _records(cast("list[Any]", py_literal(text)), parts)  # not a list: read_span says it could not be read
    return parts.graph(), RecordsState(shapes)


def write_langchain(graph: Graph, state: RecordsState) -> str:
    return repr(_record_values(graph, state.shapes))


RECORD_LINE = re.compile(r"(?m)^<Record [^\n]*>$")


def find_neo4j_graphrag(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for m in RECORD_LINE.finditer(text):
        if spans and text[spans[-1][1] : m.start()] == "\n":
            spans[-1] = (spans[-1][0], m.end())
        else:
            spans.append((m.start(), m.end()))
    return spans


def read_neo4j_graphrag(text: str) -> tuple[Graph, RecordsState]:
    from ..frameworks import _neo4j_record

    records, elements, kinds = [], [], []
    for k, line in enumerate(text.split("\n"), 1):
        try:
            record = _neo4j_record(k, line)
        except BenchmarkError as e:
            raise LayoutError(str(e)) from None
        for end in ("source", "target"):
            node = record.get(end)
            if isinstance(node, dict):
                element_id, labels, labels_text = (
                    node.pop("\x00element_id"),
                    node.pop("\x00labels"),
                    node.pop("\x00labels_text"),
                )
                # as printed: a frozenset of several labels prints in hash order
                elements.append((element_id, labels_text))
                kinds.append(":".join(sorted(labels)) or None)
        records.append(record)
    parts = Parts()
    shapes = _records(records, parts, kinds)
    return parts.graph(), RecordsState(shapes, elements)


def write_neo4j_graphrag(graph: Graph, state: RecordsState) -> str:
    elements = iter(state.elements)

    def node_text(value: dict[str, Any]) -> str:
        element_id, labels = next(elements)
        return f"<Node element_id={element_id!r} labels=frozenset({labels}) properties={value!r}>"

    lines = []
    for record in _record_values(graph, state.shapes):
        fields = [
            f"{key}={node_text(value) if key in ('source', 'target') and isinstance(value, dict) else repr(value)}"
            for key, value in record.items()
        ]
        lines.append("<Record " + " ".join(fields) + ">")
    return "\n".join(lines)


# -----------------------------------------------------------------------------
# our own formats: a prompt this tool's templates made, read by the format its prompt names


OWN_TEMPLATES = [Template.parse(name, text) for name, text in PROMPT_TEMPLATES.items()]


def find_own(text: str) -> list[tuple[int, int, str]]:
    """The graph of a prompt made by one of our templates: (start, end, format)."""
    for template in OWN_TEMPLATES:
        for fmt in FORMATS:
            around = template.around(fmt)
            if around is None:
                continue
            head, middle, end = around
            if text.startswith(head) and text.endswith(end):
                cut = text.rfind(middle, len(head))
                if cut != -1:
                    return [(len(head), cut, fmt)]
    return []


@dataclass(frozen=True)
class Codec:
    """A layout's finder, exact reader and writer."""

    find: Callable[[str], list[tuple[int, int]]]
    read: Callable[[str], tuple[Graph, Any]]
    write: Callable[[Graph, Any], str]


LOGGED_LAYOUTS = {  # in the order a prompt is searched: the frameworks' own markers first
    "graphrag": Codec(find_graphrag, read_graphrag, write_graphrag),
    "lightrag": Codec(find_lightrag, read_lightrag, write_lightrag),
    "neo4j_graphrag": Codec(find_neo4j_graphrag, read_neo4j_graphrag, write_neo4j_graphrag),
    "langchain": Codec(find_langchain, read_langchain, write_langchain),
    "llamaindex": Codec(find_llamaindex, read_llamaindex, write_llamaindex),
}


def find_spans(text: str) -> tuple[list[Span], bool]:
    """The spans of the first layout whose context the text holds ([] when none), and whether they carry the layout's
    own markers: a prompt of our own templates first (its format is named in it), then the frameworks'. LangChain's
    records carry theirs after its QA prompt's 'Information:' line; elsewhere they are a list of (source, relation,
    target) maps, a candidate only where no message holds a marked context."""
    own = find_own(text)
    if own:
        return [Span(f"own:{fmt}", a, b) for a, b, fmt in own], True
    for fmt, codec in LOGGED_LAYOUTS.items():
        found = codec.find(text)
        if found:
            marked = fmt != "langchain" or any(text.endswith(LANGCHAIN_MARKER, 0, a) for a, _ in found)
            return [Span(fmt, a, b) for a, b in found], marked
    return [], False


def read_span(span: Span, text: str) -> Span:
    """The span read and proved: span.graph set, or LayoutError with the first differing offset."""
    piece = text[span.start : span.end]
    if span.layout.startswith("own:"):
        fmt = span.layout[4:]
        try:
            graph = FORMATS[fmt].parse(piece)
            again = FORMATS[fmt].serialize(graph)
        except BenchmarkError as e:
            raise LayoutError(str(e)) from None
    else:
        codec = LOGGED_LAYOUTS[span.layout]
        try:
            graph, state = codec.read(piece)
        except LayoutError as e:
            raise LayoutError(e.reason, span.start + e.at) from None
        again = codec.write(graph, state)
    if again != piece:
        at = first_difference(piece, again)
        raise LayoutError(
            f"its {span.layout} context does not come back the same when written again (at "
            f"{piece[max(0, at - 20) : at + 20]!r})",
            span.start + at,
        )
    span.graph = graph
    return span
