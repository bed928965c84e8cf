"""The GraphRAG frameworks' own context layouts as formats: what a user's framework sends today, the baseline.

In: a benchmark.Graph. Out: its text laid out as the framework's current release builds its context for the model,
and a parser that reads exactly that text back; registered into benchmark.FORMATS after the peers' formats.

- graphrag: Microsoft GraphRAG's local search tables (graphrag/query/context_builder/local_context.py and
  local_search/mixed_context.py): '-----Entities-----', 'id|entity|description|number of relationships', a row per
  entity whose id is its short row id; then, after the entity table's closing newline and a blank line,
  '-----Relationships-----', 'id|source|target|description|weight', a row per relationship whose id is the short row
  id a model cites. Cells joined by '|', attribute columns after the fixed ones, as GraphRAG adds them.
- lightrag: LightRAG's query context (lightrag/prompt.py, kg_query_context): 'Knowledge Graph Data (Entity):' and
  'Knowledge Graph Data (Relationship):', each a fenced ```json block of one JSON object a line, {"entity", "type",
  "description"} and {"entity1", "entity2", "description"}, non-ASCII kept.
- llamaindex: LlamaIndex's property graph retrievers with include_properties (sub_retrievers/base.py): 'Here are
  some facts extracted from the provided text:', then 'subject -> relation -> object' a line, as str() prints its
  EntityNode and Relation ('name ({...properties})').
- langchain: LangChain's GraphCypherQAChain (and neo4j-graphrag's Text2Cypher): the Cypher records as Python prints a
  list of dicts, [{'source': {...}, 'relation': ..., 'target': {...}}], read back with ast.literal_eval.

The frameworks key an entity by its name and carry no relation type (a relationship is its description). Where that
would lose a record of a graph that is not the framework's own, the record says what it needs, and only then: a
node whose id is not its name carries its id (a node_id column; an "id" key), and relationships name their ends by
node id (the name, in a framework's store); an edge's relation is its description, unless the edge has a
description of its own, then the relation is an attribute (a relation column; a "relation" key). Property values
are attributes, written as the format writes values (scalar_text in a table, JSON in JSON).
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from typing import TYPE_CHECKING

from benchmark import (
    FORMATS,
    PIPE_ESCAPES,
    BenchmarkError,
    Edge,
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

from .stores import DEFAULT_TYPE  # a node's type when its file gives none: no type column then

if TYPE_CHECKING:
    from benchmark import Props



def _refuse(fmt: str, names: set[str], fixed: tuple[str, ...], what: str) -> None:
    clash = sorted(names & set(fixed))
    if clash:
        raise BenchmarkError(f"format {fmt} cannot carry the {what} property {clash[0]!r}: the format has a field of that name")


def _degrees(graph: Graph) -> Counter:
    """Relationships per node, as GraphRAG ranks an entity (networkx's degree: a self-loop counts twice)."""
    return Counter(end for e in graph.edges for end in (e.source, e.target))


# graphrag: the local search tables.
GRAPHRAG_ENTITIES = ("-----Entities-----", ("id", "entity", "description", "number of relationships"))
GRAPHRAG_RELATIONSHIPS = ("-----Relationships-----", ("id", "source", "target", "description", "weight"))
GRAPHRAG_NODE_EXTRA = ("type", "node_id")  # attribute columns of ours, shown only when a graph needs them
GRAPHRAG_SEPARATOR = "\n\n\n"  # the entity table's own closing newline, then mixed_context's "\n\n"


def _cell(value: str) -> str:
    return value.translate(PIPE_ESCAPES)


def serialize_graphrag(graph: Graph) -> str:
    node_props, edge_props = prop_columns(graph.node_props), prop_columns(graph.edge_props)
    _refuse("graphrag", set(node_props), ("id", "entity", "number of relationships", *GRAPHRAG_NODE_EXTRA), "node")  # a description and
    _refuse("graphrag", set(edge_props), ("id", "source", "target", "relation"), "edge")  # a weight have their columns
    typed = any(n.type != DEFAULT_TYPE for n in graph.nodes)
    keyed = any(n.id != n.name for n in graph.nodes)
    node_columns = [c for c in node_props if c != "description"]
    header = [*GRAPHRAG_ENTITIES[1], *(["type"] if typed else []), *(["node_id"] if keyed else []), *node_columns]
    degree = _degrees(graph)
    lines = [GRAPHRAG_ENTITIES[0], "|".join(header)]
    for k, (n, props) in enumerate(graph.nodes_with_props()):
        have = dict(props)
        cells = [str(k), _cell(n.name), _cell(scalar_text(have["description"])) if "description" in have else "", str(degree[n.id])]
        cells += [_cell(n.type)] if typed else []
        cells += [_cell(scalar_text(n.id)) if n.id != n.name else ""] if keyed else []  # empty: the id is the name
        cells += [_cell(scalar_text(have[c])) if c in have else "" for c in node_columns]
        lines.append("|".join(cells))
    described = any(k == "description" for p in graph.edge_props for k, _ in p)
    edge_columns = [c for c in edge_props if c not in ("description", "weight")]
    lines += ["", "", GRAPHRAG_RELATIONSHIPS[0], "|".join([*GRAPHRAG_RELATIONSHIPS[1], *(["relation"] if described else []), *edge_columns])]
    ids = graph.edge_ids or [str(k) for k in range(len(graph.edges))]
    for row_id, (e, props) in zip(ids, graph.edges_with_props()):
        have = dict(props)
        description = (scalar_text(have["description"]) if "description" in have else "") if described else e.relation
        cells = [_cell(row_id), _cell(e.source), _cell(e.target), _cell(description),
                 _cell(scalar_text(have["weight"])) if "weight" in have else ""]
        cells += [_cell(e.relation)] if described else []
        cells += [_cell(scalar_text(have[c])) if c in have else "" for c in edge_columns]
        lines.append("|".join(cells))
    return "\n".join(lines)


def _graphrag_header(line_no: int, line: str, fixed: tuple[str, ...]) -> list[str]:
    cells = line.split("|")
    if tuple(cells[: len(fixed)]) != fixed:
        raise format_error("graphrag", line_no, f"expected the header {'|'.join(fixed)!r}")
    extra = cells[len(fixed):]
    for column in extra:
        if column not in ("type", "node_id", "relation"):
            prop_key("graphrag", line_no, column)
    if len(set(extra)) != len(extra):
        raise format_error("graphrag", line_no, "a column is named twice")
    return extra


def _graphrag_props(line_no: int, cells: dict[str, str], skip: tuple[str, ...]) -> Props:
    return tuple(sorted((c, scalar_value("graphrag", line_no, v)) for c, v in cells.items() if v and c not in skip))


def parse_graphrag(text: str) -> Graph:
    lines = text.split("\n")
    (entities, entity_fixed), (relations, relation_fixed) = GRAPHRAG_ENTITIES, GRAPHRAG_RELATIONSHIPS
    if lines[:1] != [entities] or relations not in lines:
        raise format_error("graphrag", 1, f"expected the tables {entities} and {relations}")
    split = lines.index(relations)
    if split < 4 or lines[split - 2 : split] != ["", ""]:
        raise format_error("graphrag", split + 1, f"expected two blank lines before {relations}")
    node_extra = _graphrag_header(2, lines[1] if len(lines) > 1 else "", entity_fixed)
    nodes, node_props = [], []
    for i, line in enumerate(lines[2 : split - 2], 3):
        cells = split_fields("graphrag", i, line, len(entity_fixed) + len(node_extra))
        if cells[0] != str(i - 3):
            raise format_error("graphrag", i, f"expected the short row id {i - 3}, found {cells[0]!r}")
        extra = dict(zip(node_extra, cells[len(entity_fixed):]))
        name = cells[1]
        node_id = str(scalar_value("graphrag", i, extra["node_id"])) if extra.get("node_id") else name
        nodes.append(Node(node_id, name, extra.get("type", DEFAULT_TYPE)))
        props = _graphrag_props(i, {"description": cells[2], **extra}, ("type", "node_id"))
        node_props.append(props)
    edge_extra = _graphrag_header(split + 2, lines[split + 1] if split + 1 < len(lines) else "", relation_fixed)
    edges, ids, edge_props = [], [], []
    for i, line in enumerate(lines[split + 2 :], split + 3):
        row_id, source, target, description, weight, *rest = split_fields("graphrag", i, line, len(relation_fixed) + len(edge_extra))
        extra = dict(zip(edge_extra, rest))
        ids.append(row_id)
        described = "relation" in extra
        edges.append(Edge(source, extra["relation"] if described else description, target))
        edge_props.append(_graphrag_props(i, {**({"description": description} if described else {}), "weight": weight, **extra}, ("relation",)))
    positions = [str(k) for k in range(len(ids))]
    return Graph(tuple(nodes), tuple(edges), () if ids == positions else tuple(ids), tuple(node_props), tuple(edge_props))


# lightrag: the query context's two fenced JSON blocks.
LIGHTRAG_ENTITIES = "Knowledge Graph Data (Entity):"
LIGHTRAG_RELATIONSHIPS = "Knowledge Graph Data (Relationship):"
LIGHTRAG_NODE_KEYS = ("entity", "type", "description", "id")
LIGHTRAG_EDGE_KEYS = ("id", "entity1", "entity2", "description", "relation")


def _json_line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False)


def serialize_lightrag(graph: Graph) -> str:
    _refuse("lightrag", set(prop_columns(graph.node_props)), LIGHTRAG_NODE_KEYS[:2] + LIGHTRAG_NODE_KEYS[3:], "node")
    _refuse("lightrag", set(prop_columns(graph.edge_props)), LIGHTRAG_EDGE_KEYS[:3] + LIGHTRAG_EDGE_KEYS[4:], "edge")
    entities = []
    for n, props in graph.nodes_with_props():
        have = dict(props)
        description = have.pop("description", None) if "description" in have else ""  # an empty description: null
        record = {"entity": n.name, "type": n.type, "description": None if description == "" and "description" in dict(props) else description}
        entities.append(_json_line({**record, **({"id": n.id} if n.id != n.name else {}), **have}))
    relations = []
    ids = graph.edge_ids or [None] * len(graph.edges)
    for row_id, (e, props) in zip(ids, graph.edges_with_props()):
        have = dict(props)
        record = {"id": row_id} if row_id is not None else {}
        record |= {"entity1": e.source, "entity2": e.target}
        if "description" in have:
            record |= {"description": have.pop("description"), "relation": e.relation}
        else:
            record["description"] = e.relation
        relations.append(_json_line({**record, **have}))
    return "\n".join([LIGHTRAG_ENTITIES, "", "```json", *entities, "```", "", LIGHTRAG_RELATIONSHIPS, "", "```json", *relations, "```"])


def _lightrag_block(lines: list[str], start: int, title: str) -> tuple[list[tuple[int, dict]], int]:
    """The JSON objects of the fenced block under title at lines[start], with their line numbers; and the line after it."""
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


def _lightrag_props(line_no: int, record: dict) -> Props:
    for key, value in record.items():
        prop_key("lightrag", line_no, key)
        if not is_scalar(value):
            raise format_error("lightrag", line_no, f"the value of {key!r} must be a string, a number or a boolean")
    return tuple(sorted(record.items()))


def _text(line_no: int, record: dict, key: str) -> str:
    value = record.pop(key, None)
    if not isinstance(value, str):
        raise format_error("lightrag", line_no, f"expected {key!r} as a string")
    return value


def parse_lightrag(text: str) -> Graph:
    lines = text.split("\n")
    entities, after = _lightrag_block(lines, 0, LIGHTRAG_ENTITIES)
    if lines[after : after + 1] != [""]:
        raise format_error("lightrag", after + 1, "expected a blank line between the blocks")
    relations, end = _lightrag_block(lines, after + 1, LIGHTRAG_RELATIONSHIPS)
    if end != len(lines):
        raise format_error("lightrag", end + 1, "expected nothing after the relationship block")
    nodes, node_props = [], []
    for line_no, record in entities:
        name, kind = _text(line_no, record, "entity"), _text(line_no, record, "type")
        description = record.pop("description", "")
        node_id = _text(line_no, record, "id") if "id" in record else name
        props = _lightrag_props(line_no, record)
        if description is None or description != "":
            props = tuple(sorted([*props, ("description", "" if description is None else description)]))
        nodes.append(Node(node_id, name, kind))
        node_props.append(props)
    edges, ids, edge_props = [], [], []
    for line_no, record in relations:
        if "id" in record:
            ids.append(_text(line_no, record, "id"))
        source, target = _text(line_no, record, "entity1"), _text(line_no, record, "entity2")
        if "relation" in record:
            relation, description = _text(line_no, record, "relation"), record.pop("description", None)
            props = _lightrag_props(line_no, {**record, "description": description})
        else:
            relation = _text(line_no, record, "description")
            props = _lightrag_props(line_no, record)
        edges.append(Edge(source, relation, target))
        edge_props.append(props)
    if ids and len(ids) != len(edges):
        raise format_error("lightrag", relations[0][0], "either every relationship has an \"id\" or none")
    return Graph(tuple(nodes), tuple(edges), tuple(ids), tuple(node_props), tuple(edge_props))


# llamaindex: the property graph retrievers' triplets (core/indices/property_graph/sub_retrievers), include_properties
# on: "subject -> relation -> object" a line, a node as str(EntityNode) ('name', or 'name ({...})' with its properties'
# Python repr), a relation as str(Relation), under the source-text preamble. A node's label (its type, when the graph
# has any but 'entity', LlamaIndex's default label) and its id (when it is not its name) are properties here; an edge
# id (--edge-ids) is the relation's 'id'; a node in no triplet has a line of its own. In a name or a relation '\\',
# newlines, '->' and '(' are backslash-escaped (so that ' -> ' and ' (' are the layout's own), and '\\' and '->' in
# a properties repr. Nodes come back in the order they are first shown (a set of triplets has no other).
LLAMAINDEX_PREAMBLE = "Here are some facts extracted from the provided text:"
LLAMAINDEX_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r", "(": "\\("})


def _llama_text(text: str) -> str:
    return text.translate(LLAMAINDEX_ESCAPES).replace("->", "\\->")


def _llama_props(props: dict) -> str:
    return " (" + repr(props).replace("\\", "\\\\").replace("->", "\\->") + ")" if props else ""


def _node_shown(graph: Graph) -> dict[str, str]:
    """node id -> how the node is shown: 'name', or 'name ({...})' with its properties, label and id where needed."""
    _refuse("llamaindex", set(prop_columns(graph.node_props)), ("label",), "node")
    typed = any(n.type != DEFAULT_TYPE for n in graph.nodes)
    shown = {}
    for n, props in graph.nodes_with_props():
        extra = {**dict(props), **({"label": n.type} if typed else {}), **({"id": n.id} if n.id != n.name else {})}
        shown[n.id] = _llama_text(n.name) + _llama_props(extra)
    return shown


def serialize_llamaindex(graph: Graph) -> str:
    shown = _node_shown(graph)
    ids = graph.edge_ids or [None] * len(graph.edges)
    lines = [f"{shown[e.source]} -> {_llama_text(e.relation)}{_llama_props({**dict(props), **({'id': i} if i else {})})} -> {shown[e.target]}"
             for i, (e, props) in zip(ids, graph.edges_with_props())]
    linked = {end for e in graph.edges for end in (e.source, e.target)}
    lines += [shown[n.id] for n in graph.nodes if n.id not in linked]
    return "\n".join([LLAMAINDEX_PREAMBLE, "", *lines])


def _llama_parts(line_no: int, line: str) -> list[tuple[str, dict]]:
    """The (text, properties) of each ' -> '-separated part of a line, unescaped."""
    chars = lex("llamaindex", line_no, line)
    parts, start = [], 0
    for k in range(len(chars) - 3):
        if [c for c, _ in chars[k : k + 4]] == [" ", "-", ">", " "] and not chars[k + 1][1]:
            parts.append(chars[start:k])
            start = k + 4
    parts.append(chars[start:])
    out = []
    for part in parts:
        cut = next((k for k in range(1, len(part)) if part[k] == ("(", False) and part[k - 1] == (" ", False)), None)
        if cut is None:
            out.append((lexed_text(part), {}))
            continue
        if part[-1] != (")", False):
            raise format_error("llamaindex", line_no, "properties in parentheses must end the part they follow")
        try:
            props = ast.literal_eval(lexed_text(part[cut + 1 : -1]))
        except (ValueError, SyntaxError):
            props = None
        if not isinstance(props, dict) or not props or not all(isinstance(k, str) and is_scalar(v) for k, v in props.items()):
            raise format_error("llamaindex", line_no, "expected a Python dict of properties in the parentheses")
        out.append((lexed_text(part[: cut - 1]), props))
    return out


def _llama_node(line_no: int, text: str, props: dict, typed_seen: dict) -> Node:
    props = dict(props)
    node_id = props.pop("id", text)
    kind = props.pop("label", DEFAULT_TYPE)
    if not isinstance(node_id, str) or not isinstance(kind, str):
        raise format_error("llamaindex", line_no, "a node's 'id' and 'label' must be strings")
    for key in props:
        prop_key("llamaindex", line_no, key)
    node = (Node(node_id, text, kind), tuple(sorted(props.items())))
    if typed_seen.setdefault(node_id, node) != node:
        raise format_error("llamaindex", line_no, f"node {node_id!r} is shown with other properties than before")
    return node[0]


def parse_llamaindex(text: str) -> Graph:
    lines = text.split("\n")
    if lines[:2] != [LLAMAINDEX_PREAMBLE, ""]:
        raise format_error("llamaindex", 1, f"expected {LLAMAINDEX_PREAMBLE!r} and a blank line")
    seen: dict[str, tuple] = {}
    edges, ids, edge_props = [], [], []
    for line_no, line in enumerate(lines[2:], 3):
        parts = _llama_parts(line_no, line)
        if len(parts) == 1:
            _llama_node(line_no, *parts[0], seen)
            continue
        if len(parts) != 3:
            raise format_error("llamaindex", line_no, "expected 'subject -> relation -> object', or a node alone")
        source, target = _llama_node(line_no, *parts[0], seen), _llama_node(line_no, *parts[2], seen)
        relation, props = parts[1]
        if "id" in props:
            ids.append(props.pop("id"))
        for key in props:
            prop_key("llamaindex", line_no, key)
        edges.append(Edge(source.id, relation, target.id))
        edge_props.append(tuple(sorted(props.items())))
    if ids and len(ids) != len(edges):
        raise format_error("llamaindex", 3, "either every relation has an 'id' or none")
    nodes = list(seen.values())
    return Graph(tuple(n for n, _ in nodes), tuple(edges), tuple(ids), tuple(p for _, p in nodes), tuple(edge_props))


# langchain: what LangChain's GraphCypherQAChain puts in its QA prompt: the Cypher query's records, a list of dicts,
# formatted into {context} as Python prints it. The records are those of MATCH (s)-[r]->(t) RETURN s AS source, type(r)
# AS relation, t AS target: a node as Neo4jGraph.query returns it, the map of its properties, 'id' first (LangChain's
# graph documents key a node by 'id'), then 'name' where it is not the id, 'type' where the graph has any but
# 'entity' (a label, which query() leaves out), then the rest; properties(r) AS properties on every record when some
# edge has any; an edge id (--edge-ids) as 'id'; a node in no relationship as OPTIONAL MATCH returns it, with None.
LANGCHAIN_RECORD = ("id", "source", "relation", "target", "properties")


def serialize_langchain(graph: Graph) -> str:
    typed = any(n.type != DEFAULT_TYPE for n in graph.nodes)
    maps = {n.id: {"id": n.id, **({"name": n.name} if n.name != n.id else {}), **({"type": n.type} if typed else {}), **dict(props)}
            for n, props in graph.nodes_with_props()}
    with_props = any(graph.edge_props)
    ids = graph.edge_ids or [None] * len(graph.edges)
    records = [{**({"id": i} if i is not None else {}), "source": maps[e.source], "relation": e.relation, "target": maps[e.target],
                **({"properties": dict(props)} if with_props else {})} for i, (e, props) in zip(ids, graph.edges_with_props())]
    linked = {end for e in graph.edges for end in (e.source, e.target)}
    records += [{"source": maps[n.id], "relation": None, "target": None, **({"properties": None} if with_props else {})}
                for n in graph.nodes if n.id not in linked]
    return repr(records)


def _langchain_node(record: dict, key: str, seen: dict) -> Node:
    value = record.get(key)
    if not isinstance(value, dict) or not isinstance(value.get("id"), str) or not all(isinstance(k, str) and is_scalar(v) for k, v in value.items()):
        raise format_error("langchain", 1, f"a record's {key!r} must be a node's map of properties with its 'id'")
    props = dict(value)
    node_id = props.pop("id")
    name, kind = props.pop("name", node_id), props.pop("type", DEFAULT_TYPE)
    if not isinstance(name, str) or not isinstance(kind, str):
        raise format_error("langchain", 1, f"node {node_id!r}: 'name' and 'type' must be strings")
    for k in props:
        prop_key("langchain", 1, k)
    node = (Node(node_id, name, kind), tuple(sorted(props.items())))
    if seen.setdefault(node_id, node) != node:
        raise format_error("langchain", 1, f"node {node_id!r} is shown with other properties than before")
    return node[0]


def parse_langchain(text: str) -> Graph:
    try:
        records = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        records = None
    if not isinstance(records, list) or not all(isinstance(r, dict) and set(r) <= set(LANGCHAIN_RECORD) for r in records):
        raise format_error("langchain", 1, f"expected a Python list of records with the keys {', '.join(LANGCHAIN_RECORD)}")
    seen: dict[str, tuple] = {}
    edges, ids, edge_props = [], [], []
    for record in records:
        source = _langchain_node(record, "source", seen)
        if record["relation"] is None and record.get("target") is None:
            continue
        target, relation, props = _langchain_node(record, "target", seen), record["relation"], record.get("properties", {})
        if not isinstance(relation, str) or not isinstance(props, dict) or not all(isinstance(k, str) and is_scalar(v) for k, v in props.items()):
            raise format_error("langchain", 1, "a record's 'relation' must be a string and its 'properties' a map of values")
        if "id" in record:
            ids.append(record["id"])
        for k in props:
            prop_key("langchain", 1, k)
        edges.append(Edge(source.id, relation, target.id))
        edge_props.append(tuple(sorted(props.items())))
    if ids and (len(ids) != len(edges) or not all(isinstance(i, str) for i in ids)):
        raise format_error("langchain", 1, "either every relationship record has an 'id' string or none")
    nodes = list(seen.values())
    return Graph(tuple(n for n, _ in nodes), tuple(edges), tuple(ids), tuple(p for _, p in nodes), tuple(edge_props))


FRAMEWORK_FORMATS = {"graphrag": (serialize_graphrag, parse_graphrag), "lightrag": (serialize_lightrag, parse_lightrag),
                     "llamaindex": (serialize_llamaindex, parse_llamaindex), "langchain": (serialize_langchain, parse_langchain)}
FORMATS.update(FRAMEWORK_FORMATS)  # after the peers' formats, in the report order
