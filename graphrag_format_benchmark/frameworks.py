"""The GraphRAG frameworks' own context layouts as formats: what a user's framework sends today, the baseline.

In: a benchmark.Graph, the retrieved subgraph (every node of it an entity the framework selected, in its order;
every edge a relationship it retrieved). Out: the text the framework's own context builder makes of it, at its
pinned release and default settings, and a parser that reads exactly that text back: Format records
(FRAMEWORK_FORMATS), joined to benchmark.FORMATS after the peers' formats by the package's face.
tests/golden/frameworks/ holds what each framework's own code made of fixture stores
(bench/framework_goldens.py), and tests/test_framework_goldens.py compares these layouts with it byte for byte.

- graphrag: Microsoft GraphRAG 3.3.0 local search (query/context_builder/local_context.py,
  local_search/mixed_context.py, the query factory's settings): '-----Entities-----', 'id|entity|description|number of
  relationships' (the entity's degree), two blank lines, '-----Relationships-----',
  'id|source|target|description|weight|links', ranked by combined degree (stable), with the links column GraphRAG's
  _filter_relationships leaves on each relationship as it adds the selected entities one by one. No weight column when
  no edge has a weight (include_relationship_weight off).
- lightrag: LightRAG 1.5.7's kg_query_context (lightrag/prompt.py, operate.py): the entity and relationship blocks of
  one JSON object a line, "UNKNOWN" for a missing type, description or relation, relations ranked by edge degree then
  weight (stable), then the Document Chunks and Reference Document List blocks, empty (the graph has no text chunks).
- llamaindex: LlamaIndex 0.14.25's property graph retrievers (sub_retrievers/base.py) as the compact response
  synthesizer joins their nodes: a triplet 'subject -> relation -> object' a paragraph; llamaindex_properties with
  include_properties (str() of each node and relation: 'name ({...})'); llamaindex_text and llamaindex_text_properties
  with include_text (the preamble, the triplets a line each: the source text after them is not the graph).
- langchain: LangChain's GraphCypherQAChain (langchain-neo4j 0.11.0): the Cypher records as its QA prompt prints them, a
  Python list of dicts, for MATCH (s)-[r]->(t) RETURN s AS source, type(r) AS relation, t AS target.
- neo4j_graphrag: neo4j-graphrag 1.22.0's GraphRAG over Text2CypherRetriever: str(record) a line, as neo4j 6.4.1's
  Record and Node print (element ids of a Neo4j 5 database, labels, properties).

Where a layout would lose a record of a graph that is not the framework's own, it carries it (docs/formats.md lists
each addition): a node whose id is not its name carries its id, a typed graph its types where the framework shows
none, an edge with a description of its own its relation, properties as attributes; delimiters inside values are
escaped where the framework's own text would be ambiguous (GraphRAG's '|' and newlines, LlamaIndex's ' -> ').
"""

from __future__ import annotations

import ast
import bisect
import functools
import json
import re
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ._article import (
    PIPE_ESCAPES,
    BenchmarkError,
    Edge,
    Format,
    Graph,
    Node,
    format_error,
    is_scalar,
    lex,
    lexed_text,
    prop_columns,
    prop_key,
    scalar_text,
    scalar_value,
    split_fields,
)
from .formats import isongraph_order
from .stores import DEFAULT_RELATION, DEFAULT_TYPE  # a node's type and an edge's relation when its store gives none

if TYPE_CHECKING:
    from ._article import Props

SeenNodes = dict[str, tuple[Node, "Props"]]  # node id -> the node and its properties, as first shown


def _refuse(fmt: str, names: set[str], fixed: tuple[str, ...], what: str) -> None:
    clash = sorted(names & set(fixed))
    if clash:
        raise BenchmarkError(
            f"format {fmt} cannot carry the {what} property {clash[0]!r}: the format has a field of that name"
        )


def _degrees(graph: Graph) -> Counter[str]:
    """Relationships per node, as the frameworks rank them (networkx's degree: a self-loop counts twice)."""
    return Counter(end for e in graph.edges for end in (e.source, e.target))


def _pair_degrees(graph: Graph) -> Counter[str]:
    """Distinct undirected pairs per node, as GraphRAG counts an entity's degree (finalize_graph's _build_degree_map):
    A->B and B->A are one pair; a self-loop counts twice."""
    pairs = {tuple(sorted((e.source, e.target))) for e in graph.edges}
    return Counter(end for pair in pairs for end in pair)


def _ranked(graph: Graph, key: Callable[[int], Any]) -> list[int]:
    """Edge positions in the order a framework ranks them: by key,
    highest first, ties in the graph's order (a stable sort)."""
    return sorted(range(len(graph.edges)), key=key, reverse=True)


# -----------------------------------------------------------------------------
# graphrag: the local search tables

GRAPHRAG_ENTITIES = ("-----Entities-----", ("id", "entity", "description", "number of relationships"))
GRAPHRAG_RELATIONSHIPS = ("-----Relationships-----", ("id", "source", "target", "description"))
DESCRIPTION_LITERAL = "description_literal"  # ours: 'true' where the description cell is a typed value, not text
GRAPHRAG_NODE_EXTRA = ("type", "node_id", DESCRIPTION_LITERAL)  # attribute columns of ours, shown only when needed
GRAPHRAG_EDGE_EXTRA = ("weight", "links", "relation", DESCRIPTION_LITERAL)  # GraphRAG's weight and links, and ours


def _cell(value: str) -> str:
    return value.translate(PIPE_ESCAPES)


def _is_json_string(text: str) -> bool:
    try:
        return isinstance(json.loads(text), str)
    except ValueError:
        return False


def _raw(value: object) -> bool:
    """Whether a description prints as GraphRAG prints it, its text in the cell: any text but the empty one (an empty
    cell is no description)."""
    return isinstance(value, str) and value != ""


def _description_cell(value: object) -> tuple[str, str]:
    """(the description cell, its DESCRIPTION_LITERAL cell): the text as GraphRAG prints it ('42', 'true', 'ends in a
    space '); a value that is not text, or an empty text, as scalar_text writes a value, marked 'true' (a graph that is
    not GraphRAG's: GraphRAG's descriptions are text)."""
    return (value, "") if isinstance(value, str) and value else (scalar_text(value), "true")


def _description_value(line_no: int, text: str, literal: str) -> object:
    return scalar_value("graphrag", line_no, text) if literal == "true" else text


def _relation_text(relation: str) -> str:
    """A relationship's description cell when its description is its relation: the text as GraphRAG prints it, nothing
    for a store's relationship without a description (DEFAULT_RELATION); '""' for an empty relation, and a relation
    that reads as a JSON string literal as one."""
    if relation == DEFAULT_RELATION:
        return ""
    return json.dumps(relation, ensure_ascii=False) if relation == "" or _is_json_string(relation) else relation


def _relation_value(text: str) -> str:
    if text == "":
        return DEFAULT_RELATION
    return json.loads(text) if _is_json_string(text) else text


def graphrag_links(graph: Graph) -> list[int | None]:
    """Per edge, the 'links' value GraphRAG leaves on it: _build_local_context adds the selected entities one by one,
    and each time more than one relationship leads out of the selection, _filter_relationships sets on each such
    relationship the number of distinct selected entities its outside end is linked to. The last value set stays
    (None: never set; a self-loop never leads out)."""
    position = {n.id: k for k, n in enumerate(graph.nodes)}
    count = len(graph.nodes)
    out = [0] * (count + 2)  # out[i]: relationships leading out of the first i entities, as a difference array first
    ends = [
        (min(position[e.source], position[e.target]), max(position[e.source], position[e.target])) for e in graph.edges
    ]
    for first, last in ends:
        if first != last:
            out[first + 1] += 1
            out[last + 1] -= 1
    latest, at, running = [0] * (count + 1), 0, 0  # latest[i]: the last step <= i at which more than one led out
    for i in range(1, count + 1):
        running += out[i]
        at = i if running > 1 else at
        latest[i] = at
    neighbours: dict[int, set[int]] = {}
    for first, last in ends:
        neighbours.setdefault(last, set()).add(first)
        neighbours.setdefault(first, set()).add(last)
    ordered = {k: sorted(v) for k, v in neighbours.items()}
    links: list[int | None] = []
    for first, last in ends:
        step = latest[last]
        links.append(bisect.bisect_left(ordered[last], step) if first != last and step > first else None)
    return links


def serialize_graphrag(graph: Graph) -> str:
    node_props, edge_props = prop_columns(graph.node_props), prop_columns(graph.edge_props)
    # a description and a weight have their columns
    _refuse("graphrag", set(node_props), ("id", "entity", "number of relationships", *GRAPHRAG_NODE_EXTRA), "node")
    _refuse("graphrag", set(edge_props), ("id", "source", "target", "links", "relation", DESCRIPTION_LITERAL), "edge")
    typed = any(n.type != DEFAULT_TYPE for n in graph.nodes)
    keyed = any(n.id != n.name for n in graph.nodes)
    node_columns = [c for c in node_props if c != "description"]
    literal = any(not _raw(v) for p in graph.node_props for k, v in p if k == "description")
    degree = _pair_degrees(graph)
    extra = [*(["type"] if typed else []), *(["node_id"] if keyed else []), *([DESCRIPTION_LITERAL] if literal else [])]
    lines = [GRAPHRAG_ENTITIES[0], "|".join([*GRAPHRAG_ENTITIES[1], *extra, *node_columns])]
    for k, (n, own) in enumerate(graph.nodes_with_props()):
        have = dict(own)
        description, marked = _description_cell(have["description"]) if "description" in have else ("", "")
        cells = [str(k), _cell(n.name), _cell(description), str(degree[n.id])]
        cells += [_cell(n.type)] if typed else []
        cells += [_cell(scalar_text(n.id)) if n.id != n.name else ""] if keyed else []  # empty: the id is the name
        cells += [marked] if literal else []
        cells += [_cell(scalar_text(have[c])) if c in have else "" for c in node_columns]
        lines.append("|".join(cells))
    described = any(k == "description" for p in graph.edge_props for k, _ in p)
    literal = any(not _raw(v) for p in graph.edge_props for k, v in p if k == "description")
    weighted = any(k == "weight" for p in graph.edge_props for k, _ in p)
    edge_columns = [c for c in edge_props if c not in ("description", "weight")]
    ids = graph.edge_ids or [str(k) for k in range(len(graph.edges))]
    props: tuple[Props, ...] = graph.edge_props or ((),) * len(graph.edges)
    links = graphrag_links(graph)
    order = _ranked(graph, lambda k: degree[graph.edges[k].source] + degree[graph.edges[k].target])
    linked = bool(order) and links[order[0]] is not None  # GraphRAG's columns are the first row's attributes
    header = [
        *GRAPHRAG_RELATIONSHIPS[1],
        *(["weight"] if weighted else []),
        *(["links"] if linked else []),
        *(["relation"] if described else []),
        *([DESCRIPTION_LITERAL] if literal else []),
        *edge_columns,
    ]
    lines += ["", "", GRAPHRAG_RELATIONSHIPS[0], "|".join(header)]
    for k in order:
        e, have = graph.edges[k], dict(props[k])
        if described:
            description, marked = _description_cell(have["description"]) if "description" in have else ("", "")
        else:
            description, marked = _relation_text(e.relation), ""
        cells = [_cell(ids[k]), _cell(e.source), _cell(e.target), _cell(description)]
        cells += [_cell(scalar_text(have["weight"])) if "weight" in have else ""] if weighted else []
        cells += [str(links[k]) if links[k] else ""] if linked else []
        cells += [_cell(e.relation)] if described else []
        cells += [marked] if literal else []
        cells += [_cell(scalar_text(have[c])) if c in have else "" for c in edge_columns]
        lines.append("|".join(cells))
    return "\n".join(lines)


def _graphrag_header(line_no: int, line: str, fixed: tuple[str, ...], extras: tuple[str, ...]) -> list[str]:
    cells = line.split("|")
    if tuple(cells[: len(fixed)]) != fixed:
        raise format_error("graphrag", line_no, f"expected the header {'|'.join(fixed)!r}")
    extra = cells[len(fixed) :]
    for column in extra:
        if column not in extras:
            prop_key("graphrag", line_no, column)
    if len(set(extra)) != len(extra):
        raise format_error("graphrag", line_no, "a column is named twice")
    return extra


def _graphrag_props(line_no: int, cells: dict[str, str], skip: tuple[str, ...]) -> Props:
    props = []
    literal = cells.get(DESCRIPTION_LITERAL, "")
    if literal not in ("", "true"):
        raise format_error("graphrag", line_no, f"{DESCRIPTION_LITERAL} must be true or empty, not {literal[:20]!r}")
    for c, v in cells.items():
        if v and c not in skip and c != DESCRIPTION_LITERAL:
            props.append(
                (
                    c,
                    _description_value(line_no, v, literal)
                    if c == "description"
                    else scalar_value("graphrag", line_no, v),
                )
            )
    return tuple(sorted(props))


def _graphrag_nodes(lines: list[str], split: int) -> tuple[list[Node], list[Props]]:
    entity_fixed = GRAPHRAG_ENTITIES[1]
    node_extra = _graphrag_header(2, lines[1] if len(lines) > 1 else "", entity_fixed, GRAPHRAG_NODE_EXTRA)
    nodes, node_props = [], []
    for i, line in enumerate(lines[2 : split - 2], 3):
        cells = split_fields("graphrag", i, line, len(entity_fixed) + len(node_extra))
        if cells[0] != str(i - 3):
            raise format_error("graphrag", i, f"expected the short row id {i - 3}, found {cells[0]!r}")
        extra = dict(zip(node_extra, cells[len(entity_fixed) :]))
        name = cells[1]
        node_id = str(scalar_value("graphrag", i, extra["node_id"])) if extra.get("node_id") else name
        nodes.append(Node(node_id, name, extra.get("type", DEFAULT_TYPE)))
        node_props.append(_graphrag_props(i, {"description": cells[2], **extra}, ("type", "node_id")))
    return nodes, node_props


def parse_graphrag(text: str) -> Graph:
    lines = text.split("\n")
    entities, relations = GRAPHRAG_ENTITIES[0], GRAPHRAG_RELATIONSHIPS[0]
    if lines[:1] != [entities] or relations not in lines:
        raise format_error("graphrag", 1, f"expected the tables {entities} and {relations}")
    split = lines.index(relations)
    if split < 4 or lines[split - 2 : split] != ["", ""]:
        raise format_error("graphrag", split + 1, f"expected two blank lines before {relations}")
    nodes, node_props = _graphrag_nodes(lines, split)
    relation_fixed = GRAPHRAG_RELATIONSHIPS[1]
    edge_extra = _graphrag_header(
        split + 2, lines[split + 1] if split + 1 < len(lines) else "", relation_fixed, GRAPHRAG_EDGE_EXTRA
    )
    rows = []
    for i, line in enumerate(lines[split + 2 :], split + 3):
        row_id, source, target, description, *rest = split_fields(
            "graphrag", i, line, len(relation_fixed) + len(edge_extra)
        )
        extra = dict(zip(edge_extra, rest))
        extra.pop("links", None)  # derived from the graph (graphrag_links), not a fact of the edge
        described = "relation" in extra
        relation = extra["relation"] if described else _relation_value(description)
        props = _graphrag_props(i, {**({"description": description} if described else {}), **extra}, ("relation",))
        rows.append((row_id, Edge(source, relation, target), props))
    ids = [r[0] for r in rows]
    if sorted(ids) == sorted(str(k) for k in range(len(ids))):  # ids that are positions: the rows in the graph's order
        rows.sort(key=lambda r: int(r[0]))
        ids = []
    return Graph(tuple(nodes), tuple(r[1] for r in rows), tuple(ids), tuple(node_props), tuple(r[2] for r in rows))


# -----------------------------------------------------------------------------
# lightrag: the query context's fenced JSON blocks

LIGHTRAG_ENTITIES = "Knowledge Graph Data (Entity):"
LIGHTRAG_RELATIONSHIPS = "Knowledge Graph Data (Relationship):"
LIGHTRAG_CHUNKS = (
    "Document Chunks (Each entry has a reference_id refer to the `Reference Document List`; the optional "
    "`content_headings` field gives the chunk's heading path within its source document, e.g. "
    "`Section 1 → Subsection 1.2`):"
)
LIGHTRAG_REFERENCES = (
    "Reference Document List (Each entry starts with a [reference_id] that corresponds to entries "
    "in the Document Chunks):"
)
LIGHTRAG_EMPTY_TAIL = ("", LIGHTRAG_CHUNKS, "", "```json", "", "```", "", LIGHTRAG_REFERENCES, "", "```", "", "```")
LIGHTRAG_UNKNOWN = "UNKNOWN"  # what LightRAG writes for a missing description or relation (entity.get(key, "UNKNOWN"))
LIGHTRAG_NODE_KEYS = ("entity", "type", "description", "id")
LIGHTRAG_EDGE_KEYS = ("id", "entity1", "entity2", "description", "relation")


def _json_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False)


def _weight(props: Props) -> float:
    """An edge's weight as LightRAG ranks by it: its weight, or LightRAG's 1.0 when it has none."""
    value = dict(props).get("weight", 1.0)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 1.0


def lightrag_order(graph: Graph) -> list[int]:
    """The edges in the order LightRAG shows them: by edge degree (the sum of the ends' degrees), then weight."""
    degree = _degrees(graph)
    props: tuple[Props, ...] = graph.edge_props or ((),) * len(graph.edges)
    return _ranked(graph, lambda k: (degree[graph.edges[k].source] + degree[graph.edges[k].target], _weight(props[k])))


def serialize_lightrag(graph: Graph) -> str:
    _refuse("lightrag", set(prop_columns(graph.node_props)), LIGHTRAG_NODE_KEYS[:2] + LIGHTRAG_NODE_KEYS[3:], "node")
    _refuse("lightrag", set(prop_columns(graph.edge_props)), LIGHTRAG_EDGE_KEYS[:3] + LIGHTRAG_EDGE_KEYS[4:], "edge")
    entities = []
    for n, own in graph.nodes_with_props():
        have = dict(own)
        record = {"entity": n.name, "type": n.type, "description": have.pop("description", LIGHTRAG_UNKNOWN)}
        entities.append(_json_line({**record, **({"id": n.id} if n.id != n.name else {}), **have}))
    props: tuple[Props, ...] = graph.edge_props or ((),) * len(graph.edges)
    order = lightrag_order(graph)
    relations = []
    for k in order:
        e, have = graph.edges[k], dict(props[k])
        record = {"id": graph.edge_ids[k]} if graph.edge_ids else {}
        record |= {"entity1": e.source, "entity2": e.target}
        if "description" in have:
            record |= {"description": have.pop("description"), "relation": e.relation}
        elif e.relation == LIGHTRAG_UNKNOWN:  # the word itself, not LightRAG's placeholder: said as a relation
            record["relation"] = e.relation
        else:
            record["description"] = LIGHTRAG_UNKNOWN if e.relation == DEFAULT_RELATION else e.relation
        relations.append(_json_line({**record, **have}))
    return "\n".join(
        [
            LIGHTRAG_ENTITIES,
            "",
            "```json",
            *entities,
            "```",
            "",
            LIGHTRAG_RELATIONSHIPS,
            "",
            "```json",
            *relations,
            "```",
            *LIGHTRAG_EMPTY_TAIL,
        ]
    )


def _lightrag_block(lines: list[str], start: int, title: str) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """The JSON objects of the fenced block under title at
    lines[start], with their line numbers; and the line after it."""
    if lines[start : start + 3] != [title, "", "```json"]:
        raise format_error("lightrag", start + 1, f"expected {title!r}, a blank line and ```json")
    records, i = [], start + 3
    while i < len(lines) and lines[i] != "```":
        try:
            record = json.loads(lines[i])
        except ValueError:
            record = None
        if not isinstance(record, dict):
            raise format_error("lightrag", i + 1, "expected one JSON object on the line")
        records.append((i + 1, record))
        i += 1
    if i == len(lines):
        raise format_error("lightrag", i, "the ```json block is not closed")
    return records, i + 1


def _lightrag_props(line_no: int, record: dict[str, Any]) -> Props:
    for key, value in record.items():
        prop_key("lightrag", line_no, key)
        if not is_scalar(value):
            raise format_error("lightrag", line_no, f"the value of {key!r} must be a string, a number or a boolean")
    return tuple(sorted(record.items()))


def _text(line_no: int, record: dict[str, Any], key: str) -> str:
    value = record.pop(key, None)
    if not isinstance(value, str):
        raise format_error("lightrag", line_no, f"expected {key!r} as a string")
    return value


def _lightrag_edges(relations: list[tuple[int, dict[str, Any]]]) -> tuple[list[Edge], list[str], list[Props]]:
    edges, ids, edge_props = [], [], []
    for line_no, record in relations:
        if "id" in record:
            ids.append(_text(line_no, record, "id"))
        source, target = _text(line_no, record, "entity1"), _text(line_no, record, "entity2")
        if "relation" in record:
            relation = _text(line_no, record, "relation")
            props = _lightrag_props(line_no, record)
        else:
            relation = _text(line_no, record, "description")
            relation = DEFAULT_RELATION if relation == LIGHTRAG_UNKNOWN else relation
            props = _lightrag_props(line_no, record)
        edges.append(Edge(source, relation, target))
        edge_props.append(props)
    if ids and len(ids) != len(edges):
        raise format_error("lightrag", relations[0][0], 'either every relationship has an "id" or none')
    return edges, ids, edge_props


def parse_lightrag(text: str) -> Graph:
    lines = text.split("\n")
    entities, after = _lightrag_block(lines, 0, LIGHTRAG_ENTITIES)
    if lines[after : after + 1] != [""]:
        raise format_error("lightrag", after + 1, "expected a blank line between the blocks")
    relations, end = _lightrag_block(lines, after + 1, LIGHTRAG_RELATIONSHIPS)
    if tuple(lines[end:]) != LIGHTRAG_EMPTY_TAIL:
        raise format_error(
            "lightrag",
            end + 1,
            "expected the empty Document Chunks and Reference Document List blocks after the relationships",
        )
    nodes, node_props = [], []
    for line_no, record in entities:
        name, kind = _text(line_no, record, "entity"), _text(line_no, record, "type")
        description = record.pop("description", LIGHTRAG_UNKNOWN)
        node_id = _text(line_no, record, "id") if "id" in record else name
        props = _lightrag_props(
            line_no, {**record, **({} if description == LIGHTRAG_UNKNOWN else {"description": description})}
        )
        nodes.append(Node(node_id, name, kind))
        node_props.append(props)
    edges, ids, edge_props = _lightrag_edges(relations)
    return Graph(tuple(nodes), tuple(edges), tuple(ids), tuple(node_props), tuple(edge_props))


# -----------------------------------------------------------------------------
# llamaindex: the property graph retrievers' triplets, as the response synthesizer joins them
#
# A triplet is 'subject -> relation -> object'; with include_properties a node is str(EntityNode), 'name
# ({...})' with its properties' Python repr, and a relation str(Relation). A node's label (its type, when the
# graph has any but 'entity', LlamaIndex's default label) and its id (when it is not its name) are properties
# here, and properties are shown where the graph has them even without include_properties (our additions:
# LlamaIndex would lose them); an edge id (--edge-ids) is the relation's 'id'; a node in no triplet has a
# paragraph of its own. In a name or a relation '\\', newlines, '->' and the '(' of ' ({' are backslash-escaped
# (so that ' -> ' and ' ({' are the layout's own: LlamaIndex writes them raw), and '\\' and '->' in a
# properties repr. Nodes come back in the order they are first shown (a set of triplets has no other).
LLAMAINDEX_PREAMBLE = "Here are some facts extracted from the provided text:"
LLAMAINDEX_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r"})
LLAMAINDEX_LAYOUTS = {  # layout -> (include_text, include_properties)
    "llamaindex": (False, False),
    "llamaindex_properties": (False, True),
    "llamaindex_text": (True, False),
    "llamaindex_text_properties": (True, True),
}


def _llama_text(text: str) -> str:
    """A name or relation as the layout writes it: ' ({' escaped as ' \\({' (only there could it read as properties)."""
    return text.translate(LLAMAINDEX_ESCAPES).replace("->", "\\->").replace(" ({", " \\({")


def _llama_props(props: dict[str, Any]) -> str:
    """' ({...})': the properties as LlamaIndex prints them, their repr as it is."""
    return " (" + repr(props) + ")" if props else ""


def llama_key(name: str) -> str:
    """A node's id as LlamaIndex keys an EntityNode by its name (EntityNode.id): each '"' a space."""
    return name.replace('"', " ")


def _node_shown(graph: Graph, fmt: str) -> dict[str, str]:
    """node id -> how the node is shown: 'name', or 'name ({...})' with its properties, label and id where needed (an
    id that is not the one LlamaIndex keys the name by)."""
    _refuse(fmt, set(prop_columns(graph.node_props)), ("label",), "node")
    typed = any(n.type != DEFAULT_TYPE for n in graph.nodes)
    shown = {}
    for n, props in graph.nodes_with_props():
        extra = {
            **dict(props),
            **({"label": n.type} if typed else {}),
            **({"id": n.id} if n.id != llama_key(n.name) else {}),
        }
        shown[n.id] = _llama_text(n.name) + _llama_props(extra)
    return shown


def llamaindex_serializer(fmt: str) -> Callable[[Graph], str]:
    with_text, _ = LLAMAINDEX_LAYOUTS[fmt]

    def serialize(graph: Graph) -> str:
        shown = _node_shown(graph, fmt)
        ids = graph.edge_ids or [None] * len(graph.edges)
        lines = [
            f"{shown[e.source]} -> "
            f"{_llama_text(e.relation)}{_llama_props({**dict(props), **({'id': i} if i else {})})} -> {shown[e.target]}"
            for i, (e, props) in zip(ids, graph.edges_with_props())
        ]
        linked = {end for e in graph.edges for end in (e.source, e.target)}
        lines += [shown[n.id] for n in graph.nodes if n.id not in linked]
        return "\n".join([LLAMAINDEX_PREAMBLE, "", *lines]) if with_text else "\n\n".join(lines)

    return serialize


def _llama_parts(fmt: str, line_no: int, line: str) -> list[tuple[str, dict[str, Any]]]:
    """The (text, properties) of each ' -> '-separated part of a line: a part's text unescaped, its properties the
    Python dict that follows an unescaped ' ({', read to its end (a repr may hold '->', quotes and backslashes, as
    LlamaIndex prints it)."""
    out: list[tuple[str, dict[str, Any]]] = []
    i, n = 0, len(line)
    while True:
        j = i
        while j < n and not line.startswith((" -> ", " ({"), j):
            j += 2 if line[j] == "\\" else 1
        text = line[i:j] if "\\" not in line[i:j] else lexed_text(lex(fmt, line_no, line[i:j]))
        props: object = {}
        if line.startswith(" ({", j):
            end = _literal_end(line, j + 2)
            try:
                props = py_literal(line[j + 2 : end])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                props = None
            if (
                not isinstance(props, dict)
                or not props
                or not all(isinstance(k, str) and is_scalar(v) for k, v in props.items())
            ):
                raise format_error(fmt, line_no, "expected a Python dict of properties in the parentheses")
            if line[end : end + 1] != ")":
                raise format_error(fmt, line_no, "properties in parentheses must end the part they follow")
            j = end + 1
        out.append((text, cast("dict[str, Any]", props)))
        if j >= n:
            return out
        if not line.startswith(" -> ", j):
            raise format_error(fmt, line_no, "properties in parentheses must end the part they follow")
        i = j + 4


def _llama_node(fmt: str, line_no: int, text: str, props: dict[str, Any], seen: SeenNodes) -> Node:
    props = dict(props)
    node_id = props.pop("id", llama_key(text))
    kind = props.pop("label", DEFAULT_TYPE)
    if not isinstance(node_id, str) or not isinstance(kind, str):
        raise format_error(fmt, line_no, "a node's 'id' and 'label' must be strings")
    for key in props:
        prop_key(fmt, line_no, key)
    node = (Node(node_id, text, kind), tuple(sorted(props.items())))
    if seen.setdefault(node_id, node) != node:
        raise format_error(fmt, line_no, f"node {node_id!r} is shown with other properties than before")
    return node[0]


def _llama_lines(fmt: str, text: str) -> list[tuple[int, str]]:
    """(line number, triplet or lone node) of a llamaindex layout's text: lines under the preamble with include_text,
    else paragraphs."""
    if LLAMAINDEX_LAYOUTS[fmt][0]:
        lines = text.split("\n")
        if lines[:2] != [LLAMAINDEX_PREAMBLE, ""]:
            raise format_error(fmt, 1, f"expected {LLAMAINDEX_PREAMBLE!r} and a blank line")
        return list(enumerate(lines[2:], 3))
    paragraphs = text.split("\n\n") if text else []
    for k, paragraph in enumerate(paragraphs):
        if paragraph == "" or "\n" in paragraph:
            raise format_error(fmt, 2 * k + 1, "expected one triplet a paragraph, paragraphs parted by one blank line")
    return [(2 * k + 1, paragraph) for k, paragraph in enumerate(paragraphs)]


def llamaindex_parser(fmt: str) -> Callable[[str], Graph]:
    def parse(text: str) -> Graph:
        seen: SeenNodes = {}
        edges, ids, edge_props = [], [], []
        for line_no, line in _llama_lines(fmt, text):
            parts = _llama_parts(fmt, line_no, line)
            if len(parts) == 1:
                _llama_node(fmt, line_no, *parts[0], seen)
                continue
            if len(parts) != 3:
                raise format_error(fmt, line_no, "expected 'subject -> relation -> object', or a node alone")
            source, target = _llama_node(fmt, line_no, *parts[0], seen), _llama_node(fmt, line_no, *parts[2], seen)
            relation, props = parts[1]
            if "id" in props:
                ids.append(props.pop("id"))
            for key in props:
                prop_key(fmt, line_no, key)
            edges.append(Edge(source.id, relation, target.id))
            edge_props.append(tuple(sorted(props.items())))
        if ids and len(ids) != len(edges):
            raise format_error(fmt, 1, "either every relation has an 'id' or none")
        nodes = list(seen.values())
        return Graph(
            tuple(n for n, _ in nodes), tuple(edges), tuple(ids), tuple(p for _, p in nodes), tuple(edge_props)
        )

    return parse


# -----------------------------------------------------------------------------
# langchain: the Cypher records GraphCypherQAChain puts into its QA prompt, a list of dicts as Python prints it
#
# The records of MATCH (s)-[r]->(t) RETURN s AS source, type(r) AS relation, t AS target: a node as Neo4jGraph.query
# returns it (r.data(): the map of its properties, 'id' first, as LangChain's graph documents key a node), then
# 'name' where it is not the id, 'type' where the graph has any but 'entity' (our addition: a label, which r.data()
# leaves out), then the rest; properties(r) AS properties on every record when some edge has any; an edge id
# (--edge-ids) as 'id'; a node in no relationship as OPTIONAL MATCH returns it, with None.
LANGCHAIN_RECORD = ("id", "source", "relation", "target", "properties")


def _node_map(graph: Graph) -> dict[str, dict[str, Any]]:
    typed = any(n.type != DEFAULT_TYPE for n in graph.nodes)
    return {
        n.id: {
            "id": n.id,
            **({"name": n.name} if n.name != n.id else {}),
            **({"type": n.type} if typed else {}),
            **dict(props),
        }
        for n, props in graph.nodes_with_props()
    }


def _cypher_records(graph: Graph, maps: Mapping[str, object]) -> list[dict[str, Any]]:
    """The query's records, each node as maps gives it."""
    with_props = any(graph.edge_props)
    ids = graph.edge_ids or [None] * len(graph.edges)
    records = [
        {
            **({"id": i} if i is not None else {}),
            "source": maps[e.source],
            "relation": e.relation,
            "target": maps[e.target],
            **({"properties": dict(props)} if with_props else {}),
        }
        for i, (e, props) in zip(ids, graph.edges_with_props())
    ]
    linked = {end for e in graph.edges for end in (e.source, e.target)}
    records += [
        {"source": maps[n.id], "relation": None, "target": None, **({"properties": None} if with_props else {})}
        for n in graph.nodes
        if n.id not in linked
    ]
    return records


def serialize_langchain(graph: Graph) -> str:
    return repr(_cypher_records(graph, _node_map(graph)))


def _map_node(fmt: str, value: object, where: str, seen: SeenNodes) -> Node:
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("id"), str)
        or not all(isinstance(k, str) and is_scalar(v) for k, v in value.items())
    ):
        raise format_error(fmt, 1, f"a record's {where} must be a node's map of properties with its 'id'")
    props = dict(value)
    node_id = props.pop("id")
    name, kind = props.pop("name", node_id), props.pop("type", DEFAULT_TYPE)
    if not isinstance(name, str) or not isinstance(kind, str):
        raise format_error(fmt, 1, f"node {node_id!r}: 'name' and 'type' must be strings")
    for k in props:
        prop_key(fmt, 1, k)
    node = (Node(node_id, name, kind), tuple(sorted(props.items())))
    if seen.setdefault(node_id, node) != node:
        raise format_error(fmt, 1, f"node {node_id!r} is shown with other properties than before")
    return node[0]


def _from_records(fmt: str, records: list[dict[str, Any]], node: Callable[[object, str, SeenNodes], Node]) -> Graph:
    seen: SeenNodes = {}
    edges, ids, edge_props = [], [], []
    for record in records:
        source = node(record.get("source"), "'source'", seen)
        if record.get("relation") is None and record.get("target") is None:
            continue
        target, relation, props = (
            node(record.get("target"), "'target'", seen),
            record.get("relation"),
            record.get("properties", {}),
        )
        if (
            not isinstance(relation, str)
            or not isinstance(props, dict)
            or not all(isinstance(k, str) and is_scalar(v) for k, v in props.items())
        ):
            raise format_error(fmt, 1, "a record's 'relation' must be a string and its 'properties' a map of values")
        if "id" in record:
            ids.append(record["id"])
        for k in props:
            prop_key(fmt, 1, k)
        edges.append(Edge(source.id, relation, target.id))
        edge_props.append(tuple(sorted(props.items())))
    if ids and (len(ids) != len(edges) or not all(isinstance(i, str) for i in ids)):
        raise format_error(fmt, 1, "either every relationship record has an 'id' string or none")
    nodes = list(seen.values())
    return Graph(tuple(n for n, _ in nodes), tuple(edges), tuple(ids), tuple(p for _, p in nodes), tuple(edge_props))


def parse_langchain(text: str) -> Graph:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            records = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        records = None
    if not isinstance(records, list) or not all(
        isinstance(r, dict) and set(r) <= set(LANGCHAIN_RECORD) for r in records
    ):
        raise format_error(
            "langchain", 1, f"expected a Python list of records with the keys {', '.join(LANGCHAIN_RECORD)}"
        )
    return _from_records("langchain", records, lambda value, where, seen: _map_node("langchain", value, where, seen))


# -----------------------------------------------------------------------------
# neo4j_graphrag: neo4j-graphrag's Text2CypherRetriever records, str(record) a line
# (Retriever.default_record_formatter), joined by newlines (GraphRAG.search)
#
# The same records as langchain's, as neo4j's Record and Node print them: "<Record source=<Node element_id='4:...:7'
# labels=frozenset({'person'}) properties={'id': ..., 'name': ...}> relation='LEADS' target=<Node ...>>". A node's
# element id is a Neo4j 5 database's (NEO4J_DATABASE, then the node's position in the graph), its label its type
# (none for 'entity'), its properties 'id', 'name' where it is not the id, then the rest.
NEO4J_DATABASE = "4:5f1c2a9e-7b3d-4c8e-9a61-0d2e4f6b8c17:"


class _Neo4jNode:
    """A node as neo4j.graph.Node's repr prints it."""

    def __init__(self, element_id: str, labels: tuple[str, ...], properties: dict[str, Any]) -> None:
        self.text = (
            f"<Node element_id={element_id!r} labels=frozenset({set(labels) if labels else ''}) "
            f"properties={properties!r}>"
        )

    def __repr__(self) -> str:
        return self.text


def serialize_neo4j_graphrag(graph: Graph) -> str:
    maps = {
        n.id: {"id": n.id, **({"name": n.name} if n.name != n.id else {}), **dict(props)}
        for n, props in graph.nodes_with_props()
    }
    nodes = {
        n.id: _Neo4jNode(f"{NEO4J_DATABASE}{k}", () if n.type == DEFAULT_TYPE else (n.type,), maps[n.id])
        for k, n in enumerate(graph.nodes)
    }
    return "\n".join(
        "<Record " + " ".join(f"{key}={value!r}" for key, value in record.items()) + ">"
        for record in _cypher_records(graph, nodes)
    )


# a repr's strings, brackets, and ends
LITERAL_TOKENS = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[\[\](){} >]""")


def _literal_end(text: str, i: int) -> int:
    """Where the Python literal (a repr) starting at text[i] ends:
    a string, a bracketed value, or a bare word or number."""
    depth = 0
    for m in LITERAL_TOKENS.finditer(text, i):
        c = m.group()
        if c[0] in "'\"":
            if depth == 0:
                return m.end()
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return m.end()
            if depth < 0:
                return m.start()
        elif depth == 0:  # a space or '>' after a bare word
            return m.start()
    return len(text)


@functools.lru_cache(maxsize=8192)
def _cached_literal(text: str) -> object:
    with (
        warnings.catch_warnings()
    ):  # "invalid escape sequence" in a text read back is the text's business, not stderr's
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.literal_eval(text)


def py_literal(text: str) -> object:
    """ast.literal_eval, remembered for texts shown again (a node's properties in every record it is in): a dict comes
    back as a copy, which the caller may change."""
    value = _cached_literal(text)
    return dict(value) if isinstance(value, dict) else value


def _neo4j_literal(line_no: int, text: str, i: int) -> tuple[object, int]:
    end = _literal_end(text, i)
    try:
        return py_literal(text[i:end]), end
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise format_error("neo4j_graphrag", line_no, f"expected a Python value at {text[i : i + 40]!r}") from None


def _neo4j_expect(line_no: int, text: str, i: int, word: str) -> int:
    if not text.startswith(word, i):
        raise format_error("neo4j_graphrag", line_no, f"expected {word!r} at {text[i : i + 40]!r}")
    return i + len(word)


def _neo4j_node(line_no: int, text: str, i: int) -> tuple[dict[str, Any], int]:
    i = _neo4j_expect(line_no, text, i, "<Node element_id=")
    element_id, i = _neo4j_literal(line_no, text, i)
    i = _neo4j_expect(line_no, text, i, " labels=frozenset(")
    labels: object = set()
    labels_at = i
    if not text.startswith(")", i):
        labels, i = _neo4j_literal(line_no, text, i)
    labels_text = text[labels_at:i]
    i = _neo4j_expect(line_no, text, _neo4j_expect(line_no, text, i, ")"), " properties=")
    properties, i = _neo4j_literal(line_no, text, i)
    i = _neo4j_expect(line_no, text, i, ">")
    if (
        not isinstance(element_id, str)
        or not isinstance(labels, set)
        or not all(isinstance(v, str) for v in labels)
        or not isinstance(properties, dict)
    ):
        raise format_error("neo4j_graphrag", line_no, "expected a node's element id, its labels and its properties")
    return {**properties, "\x00element_id": element_id, "\x00labels": labels, "\x00labels_text": labels_text}, i


def _neo4j_record(line_no: int, line: str) -> dict[str, Any]:
    i = _neo4j_expect(line_no, line, 0, "<Record ")
    record = {}
    while True:
        key_end = line.find("=", i)
        key = line[i:key_end] if key_end > i else ""
        if key not in LANGCHAIN_RECORD or key in record:
            raise format_error(
                "neo4j_graphrag", line_no, f"expected a field of {', '.join(LANGCHAIN_RECORD)} at {line[i : i + 40]!r}"
            )
        i = key_end + 1
        record[key], i = (
            _neo4j_node(line_no, line, i) if line.startswith("<Node ", i) else _neo4j_literal(line_no, line, i)
        )
        if line[i:] == ">":
            return record
        i = _neo4j_expect(line_no, line, i, " ")


def parse_neo4j_graphrag(text: str) -> Graph:
    records = [_neo4j_record(k, line) for k, line in enumerate(text.split("\n"), 1)] if text else []
    elements: dict[str, str] = {}

    def node(value: object, where: str, seen: SeenNodes) -> Node:
        if not isinstance(value, dict) or "\x00element_id" not in value:
            raise format_error("neo4j_graphrag", 1, f"a record's {where} must be a node")
        props = dict(value)
        element_id, labels = props.pop("\x00element_id"), props.pop("\x00labels")
        props.pop("\x00labels_text")
        if len(labels) > 1 or "type" in props:
            raise format_error(
                "neo4j_graphrag",
                1,
                "a node with more than one label, or a 'type' property: this layout writes one label, its type",
            )
        found = _map_node("neo4j_graphrag", {**props, **({"type": next(iter(labels))} if labels else {})}, where, seen)
        if elements.setdefault(found.id, element_id) != element_id:
            raise format_error("neo4j_graphrag", 1, f"node {found.id!r} is shown with two element ids")
        return found

    graph = _from_records("neo4j_graphrag", records, node)
    positions = [elements[n.id].removeprefix(NEO4J_DATABASE) for n in graph.nodes]
    if not all(p.isdigit() for p in positions):
        return graph  # element ids of another database: the nodes in the order they are first shown
    order = sorted(range(len(graph.nodes)), key=lambda k: int(positions[k]))  # this layout's: the graph's own order
    props = tuple(graph.node_props[k] for k in order) if graph.node_props else ()
    return Graph(tuple(graph.nodes[k] for k in order), graph.edges, graph.edge_ids, props, graph.edge_props)


# -----------------------------------------------------------------------------
# budgets: how much of a retrieved subgraph each framework sends by default (--context-tokens FRAMEWORK)


class Budget(NamedTuple):
    """A framework's default budget for the graph part of its context."""

    limit: int | None  # None: the framework sends everything it retrieved
    unit: str  # "tokens", counted in layout; or "records", its rows: relationships, and nodes in none
    layout: str  # the layout the budget is counted in
    source: str  # where the number comes from, at the pinned version


GRAPHRAG_LOCAL_TOKENS = int(12_000 * (1 - 0.15 - 0.5))  # 4,200: as mixed_context.py computes local_tokens
FRAMEWORK_BUDGETS = {
    "graphrag": Budget(
        GRAPHRAG_LOCAL_TOKENS,
        "tokens",
        "graphrag",
        "local search's max_context_tokens 12,000 less its community_prop "
        "0.15 and text_unit_prop 0.5 (graphrag 3.3.0 LocalSearchDefaults): int(12000 * 0.35)",
    ),
    "lightrag": Budget(
        14_000,
        "tokens",
        "lightrag",
        "max_entity_tokens 6,000 and max_relation_tokens 8,000 (lightrag-hku 1.5.7 constants), one total here",
    ),
    **{
        fmt: Budget(
            30,
            "records",
            fmt,
            "a property graph sub-retriever's limit of 30 triplets (llama-index-core 0.14.25; over a "
            "SimplePropertyGraphStore the default retriever is LLMSynonymRetriever alone)",
        )
        for fmt in LLAMAINDEX_LAYOUTS
    },
    "langchain": Budget(
        10, "records", "langchain", "GraphCypherQAChain's top_k 10 (langchain-neo4j 0.11.0): the first 10 records"
    ),
    "neo4j_graphrag": Budget(
        None,
        "records",
        "neo4j_graphrag",
        "Text2CypherRetriever sends every record its query returns (neo4j-graphrag 1.22.0): no budget",
    ),
}


def records(graph: Graph) -> int:
    """A graph's records as the frameworks count rows: its edges, and its nodes in no edge."""
    linked = {end for e in graph.edges for end in (e.source, e.target)}
    return len(graph.edges) + sum(n.id not in linked for n in graph.nodes)


# The formats that show a graph's edges in an order of their own and no id beside each: an answer's path counts the
# edges in the order shown (the prompt says so), which is not the graph's; format -> the graph's edge at each place
# shown. GraphRAG ranks its rows too, but prints each one's id, which an answer cites. ISONGraph sorts its blocks and
# rows (the peers' isongraph, formats.isongraph_order).
CITED_ORDER: dict[str, Callable[[Graph], list[int]]] = {"lightrag": lightrag_order, "isongraph": isongraph_order}


def cited_order(fmt: str, graph: Graph) -> list[int] | None:
    """The graph's edge an answer's index n cites in format fmt (its n-th shown), or None when n is the graph's own
    edge n (the order shown, or the id printed beside each edge); with edge ids an answer cites those."""
    order = CITED_ORDER.get(fmt)
    return order(graph) if order is not None and not graph.edge_ids else None


FRAMEWORK_FORMATS = {  # the frameworks' layouts, after the peers' formats in the report order
    "graphrag": Format(serialize_graphrag, parse_graphrag),
    "lightrag": Format(serialize_lightrag, parse_lightrag),
    **{fmt: Format(llamaindex_serializer(fmt), llamaindex_parser(fmt)) for fmt in LLAMAINDEX_LAYOUTS},
    "langchain": Format(serialize_langchain, parse_langchain),
    "neo4j_graphrag": Format(serialize_neo4j_graphrag, parse_neo4j_graphrag),
}
