"""The formats beyond the article's five, as benchmark.Format records (PEER_FORMATS), which the package's face joins
to benchmark.FORMATS after them.

In: a benchmark.Graph. Out: its text in json_compact, pipe_table (GraphRAG's context tables), toon, yaml, turtle,
markdown_kv, ison or isongraph, and a parser that reads exactly that text back. The peers' formats are written and read
with their own ecosystem's library (each Format's library: toon-format, PyYAML, rdflib, ison-py, ison-graph), imported
only when the format is asked for; what ISON's libraries cannot carry is refused with one line naming the value. Also
here: the order in which isongraph shows the edges (isongraph_order), and the round-trip proofs that spare a matrix
the parsers of Turtle and YAML for another edge order of a text already checked (check_roundtrip_once).
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ._article import (
    ESCAPES,
    PIPE_ESCAPES,
    BenchmarkError,
    Edge,
    Format,
    Graph,
    Node,
    check_roundtrip,
    first_difference,
    format_error,
    from_records,
    is_scalar,
    lex,
    lexed_text,
    parse_json,
    pipe_rows,
    prop_cells,
    prop_columns,
    prop_key,
    scalar_text,
    scalar_value,
    split_fields,
)

if TYPE_CHECKING:
    from ._article import Props


def graph_dict(graph: Graph, flat: bool = False, absent: object = ...) -> dict[str, list[dict[str, Any]]]:
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


# json_compact: the same object with no indentation and no spaces, as minified JSON travels.
def serialize_json_compact(graph: Graph) -> str:
    return json.dumps(graph_dict(graph), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def parse_json_compact(text: str) -> Graph:
    return parse_json(text, "json_compact")


# pipe_table: GraphRAG's context tables. Entities carry the node id; each relationship row starts with
# a short row id, its position in the list, which is the index a model cites in "path". Properties are
# columns after the fixed ones (entities' and relationships' apart), a value as scalar_text, empty where absent.
PIPE_TABLE_SECTIONS = (("-----Entities-----", "id|name|type"), ("-----Relationships-----", "id|source|target|relation"))


def serialize_pipe_table(graph: Graph) -> str:
    (entities, entity_header), (relations, relation_header) = PIPE_TABLE_SECTIONS
    row = pipe_rows(graph)
    node_columns, edge_columns = prop_columns(graph.node_props), prop_columns(graph.edge_props)
    lines = [entities, "|".join([entity_header, *node_columns])]
    lines += [
        row(n) + "".join("|" + c.translate(PIPE_ESCAPES) for c in prop_cells(p, node_columns))
        for n, p in graph.nodes_with_props()
    ]
    lines += [relations, "|".join([relation_header, *edge_columns])]
    ids = graph.edge_ids or [str(i) for i in range(len(graph.edges))]  # an edge id, or the row's position
    lines += [
        row((i, e.source, e.target, e.relation))
        + "".join("|" + c.translate(PIPE_ESCAPES) for c in prop_cells(p, edge_columns))
        for i, (e, p) in zip(ids, graph.edges_with_props())
    ]
    return "\n".join(lines)


def _table_header(line_no: int, line: str, fixed: str) -> list[str]:
    """The property columns of a pipe_table header that starts with the fixed ones."""
    if line != fixed and not line.startswith(fixed + "|"):
        raise format_error("pipe_table", line_no, f"expected the header {fixed!r}")
    columns = [prop_key("pipe_table", line_no, c) for c in line[len(fixed) + 1 :].split("|")] if line != fixed else []
    if len(set(columns)) != len(columns):
        raise format_error("pipe_table", line_no, "a property column is named twice")
    return columns


def _table_props(line_no: int, columns: list[str], cells: list[str]) -> Props:
    return tuple((c, scalar_value("pipe_table", line_no, v)) for c, v in sorted(zip(columns, cells)) if v)


def parse_pipe_table(text: str) -> Graph:
    lines = text.split("\n")
    (entities, entity_header), (relations, relation_header) = PIPE_TABLE_SECTIONS
    if lines[:1] != [entities] or len(lines) < 2 or relations not in lines:
        raise format_error(
            "pipe_table", 1, f"expected the tables {entities} ({entity_header}) and {relations} ({relation_header})"
        )
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
        raise format_error(
            "pipe_table",
            split + 3 + k,
            f"relationship id {ids[k]!r} is its row's position, but other ids are not: "
            "ids are all positions or all edge ids",
        )
    return Graph(
        tuple(nodes), tuple(edges), () if ids == positions else tuple(ids), tuple(node_props), tuple(edge_props)
    )


# The peers' formats. Each is written and read with its own ecosystem's library where one exists, imported
# only when the format is asked for (its Format says which package; make_plan checks it is there).
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

    class Dumper(base or getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]  # the C one when there
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
    return text[len("- k: ") : -1]


@functools.lru_cache(maxsize=1 << 12)
def _yaml_key(key: str) -> str:
    text = _yaml_one({key: 0})
    if not text.startswith("- ") or not text.endswith(": 0\n") or "\n" in text[:-1] or text.startswith("- ? "):
        raise _NotJoinable
    return text[2:-4]


def _yaml_one(record: dict[str, Any]) -> str:
    return yaml_dump_whole(None, {"r": [record]}).split("\n", 1)[1] + "\n"


def yaml_dump_whole(
    graph: Graph | None, plain: dict[str, list[dict[str, Any]]] | None = None, dumper: type | None = None
) -> str:
    """The yaml text as PyYAML dumps the whole document (of graph, or of plain records); dumper: a PyYAML dumper
    class to build on instead of the C one (tests compare the two)."""
    import yaml

    if plain is None:
        if graph is None:
            raise TypeError("yaml_dump_whole needs a graph or plain records")
        plain = graph_dict(graph, flat=True)
    texts = [
        t
        for records in plain.values()
        for record in records
        for item in record.items()
        for t in item
        if isinstance(t, str)
    ]
    wide = sorted({ch for t in texts for ch in t if ord(ch) > 0xFFFF})
    used = {ch for t in texts for ch in t if ord(ch) in PRIVATE_USE} if wide else set()
    stand_in = dict(zip(wide, (chr(c) for c in PRIVATE_USE if chr(c) not in used)))
    if len(stand_in) < len(wide):  # more distinct characters beyond the BMP than free placeholders: escaped
        stand_in = {}
    if stand_in:
        swap = str.maketrans(stand_in)
        plain = {
            key: [
                {k.translate(swap): v.translate(swap) if isinstance(v, str) else v for k, v in record.items()}
                for record in records
            ]
            for key, records in plain.items()
        }
    text: str = yaml.dump(  # PyYAML ships no types
        plain,
        Dumper=_yaml_dumper(dumper),
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=2**31 - 1,
    ).rstrip("\n")  # one line per value, never folded
    if not stand_in:
        return text
    # made apart from translate(): inside its call, mypy takes the table's type from translate's and refuses it
    back = str.maketrans({v: k for k, v in stand_in.items()})
    return text.translate(back)


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
    return "".join(
        c if c.isascii() and (c.isalnum() or c == "_") else "".join(f"%{b:02X}" for b in c.encode("utf-8"))
        for c in value
    )


def _turtle_literal(value: object) -> str:
    """A property value as a Turtle literal: 1969 (xsd:integer), 2.5 (read back as a number), true, "text"."""
    from rdflib import Literal

    return Literal(value).n3() if isinstance(value, str) else scalar_text(value)  # a float's text has '.' or 'e


def _turtle_props(props: Props) -> str:
    return "".join(f" ; p:{_local(k)} {_turtle_literal(v)}" for k, v in props)


def serialize_turtle(graph: Graph) -> str:
    if graph.edge_ids:
        raise BenchmarkError(
            "format turtle cannot carry --edge-ids (an RDF triple has no id of its own); leave turtle out of --formats"
        )
    seen = Counter(graph.edges)
    twice = next((e for e in graph.edges if seen[e] > 1), None)
    if twice is not None:
        raise BenchmarkError(
            f"format turtle cannot carry the edge {tuple(twice)!r} twice: RDF keeps one copy of a triple; "
            "leave turtle out of --formats or remove the duplicate"
        )
    lines = [f"@prefix {p}: <{iri}> ." for p, iri in TURTLE_PREFIXES.items()]
    if graph.has_props:
        lines.append(f"@prefix p: <{TURTLE_PROPERTY}> .")
    if graph.edge_props:
        lines.append("@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .")
    lines += ["@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .", ""]
    from rdflib import Literal

    lines += [
        f"n:{_local(n.id)} a t:{_local(n.type)} ; rdfs:label {Literal(n.name).n3()}{_turtle_props(p)} ."
        for n, p in graph.nodes_with_props()
    ]
    for e, p in graph.edges_with_props():
        triple = f"n:{_local(e.source)} r:{_local(e.relation)} n:{_local(e.target)}"
        lines.append(f"{triple} .")
        if p:
            lines.append(
                f"[ rdf:subject n:{_local(e.source)} ; rdf:predicate r:{_local(e.relation)} ; "
                f"rdf:object n:{_local(e.target)} ]"
                f"{_turtle_props(p)[2:]} ."
            )
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
        return decode(str(term)[len(namespace) :])

    props: dict[object, dict[str, object]] = {}  # node IRI or reification -> property -> value
    for s, p, o in rdf:
        if str(p).startswith(TURTLE_PROPERTY):
            key = local(p, TURTLE_PROPERTY)
            value = o.toPython() if isinstance(o, rdflib.Literal) else None
            value = (
                str(value)
                if isinstance(value, str)
                else float(cast(Any, value))
                if type(value).__name__ == "Decimal"
                else value
            )
            if not is_scalar(value) or key in props.setdefault(s, {}):
                raise format_error(
                    "turtle", 1, f"{s} has the property {key} twice, or not as a literal of a string, number or boolean"
                )
            props[s][key] = value
    reified = {
        (rdf.value(r, RDF.subject), rdf.value(r, RDF.predicate), rdf.value(r, RDF.object)): r
        for r in rdf.subjects(RDF.subject)
    }
    labels = {s: str(o) for s, o in rdf.subject_objects(RDFS.label)}
    nodes = sorted(
        (Node(local(s, node), labels.get(s, ""), local(o, kind)), tuple(sorted(props.get(s, {}).items())))
        for s, o in rdf.subject_objects(RDF.type)
    )
    edges = sorted(
        (
            Edge(local(s, node), local(p, relation), local(o, node)),
            tuple(sorted(props.get(reified.get((s, p, o)), {}).items())),
        )
        for s, p, o in rdf
        if str(p).startswith(relation)
    )
    return Graph(
        tuple(n for n, _ in nodes),
        tuple(e for e, _ in edges),
        (),
        tuple(p for _, p in nodes),
        tuple(p for _, p in edges),
    )


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
    records: dict[str, list[dict[str, object]]] = {"nodes": [], "edges": []}
    fields = {"nodes": set(Node._fields), "edges": {*Edge._fields, "id"}}
    section: str | None = None
    current: dict[str, object] | None = None
    start = 1
    for line_no, line in enumerate(text.split("\n"), 1):
        if line in MARKDOWN_KV_SECTIONS:
            section, current = ("nodes", "edges")[MARKDOWN_KV_SECTIONS.index(line)], None
        elif not line:
            current = None
        elif section is None or ": " not in line:
            raise format_error(
                "markdown_kv", line_no, "expected a '## Nodes' or '## Edges' section of 'key: value' lines"
            )
        else:
            if current is None:
                current, start = {}, line_no  # a new record
                records[section].append(current)
            key, value = line.split(": ", 1)
            if key in current:
                raise format_error(
                    "markdown_kv", line_no, f"{key!r} given twice in the record that starts at line {start}"
                )
            value = lexed_text(lex("markdown_kv", line_no, value)) if "\\" in value else value
            current[key] = value if key in fields[section] else scalar_value("markdown_kv", line_no, value)
    return from_records("markdown_kv", records, flat=True)


# ison and isongraph: ISON's tables, written and read back by ISON's own libraries, ison-py (ison_parser) and
# ison-graph (ISONGraph, which writes through ison-py's canonical writer). ISON quotes a value that holds a space, a
# tab, a quote, a backslash, CR or LF, starts with '#' or ':', or would read as a number, a keyword or a block header,
# so any text survives its quoting. What its writer and reader lose is refused with one line naming the value
# (ison_refusal), never written: a row loses any whitespace at its end but a quoted one (the writer rstrips it), a row
# that starts, after whitespace, with '#' or '---' is read as a comment or a summary line, a row of one dotted word as
# a block header, and a float written with an exponent (1e-07) reads back as text. Each serializer reads its own text
# back through the library before it is kept, so whatever else the libraries lose is refused too; the parsers keep
# the last texts read (the round-trip check reads the same text again).
ISON_FLOAT = re.compile(
    r"-?[0-9]+\.[0-9]+"
)  # ison-py's TypeInferrer.FLOAT_PATTERN: any other float's text reads as text


@functools.cache
def _ison_version(package: str) -> str:
    """'ison-py 1.2.0': a library as the refusals name it."""
    from importlib.metadata import version

    return f"{package} {version(package)}"


class _Row(NamedTuple):
    """One record as an ISON row: what the refusal names it by, and each (field, value, cell text) in column order."""

    label: str
    cells: list[tuple[str, object, str]]
    own: frozenset[str] = frozenset(("id", "name", "type", "source", "relation", "target"))  # the rest: properties

    def field(self, name: str) -> str:
        return name if name in self.own else f"property {name}"


OWN_FIELDS = (frozenset(("id", "name", "type")), frozenset(("id", "source", "relation", "target")))  # nodes', edges'


def _row_fault(cells: list[str]) -> tuple[int, str] | None:
    """The cell of a row ison-py's reader cannot read back, and why, or None: ['a', '"b c"', 'x\\u2028'] -> (2, ...)."""
    from ison_parser import Parser

    row = " ".join(cells)
    if row != row.rstrip():
        return len(cells) - 1, "at the end of a row, where the writer strips whitespace"
    line = row.strip()
    first = next(k for k, c in enumerate(cells) if c.strip())
    if line.startswith("#"):
        return first, "at the start of a row, which the reader takes for a comment (a '#' after whitespace)"
    if line.startswith("---"):
        return first, "at the start of a row, which the reader takes for a summary line ('---')"
    if len(line.split()) == 1 and Parser("")._looks_like_header(line):
        return first, "alone in a row, which the reader takes for a block header"
    return None


def ison_refusal(fmt: str, library: str, rows: Iterator[_Row]) -> BenchmarkError | None:
    """The first value of rows the ISON library at hand cannot carry, as one line naming it, the library and the fix:
    "format ison cannot carry 'x\\u2028', the type of node 'a': ison-py 1.2.0 writes it unquoted at the end of a row,
    where the writer strips whitespace; leave ison out of --formats"; None when every row reads back."""
    from ison_parser import TypeInferrer

    for row in rows:
        for field, value, cell in row.cells:  # a number is written bare, and must read back as the same kind
            if not isinstance(value, str) and type(TypeInferrer.infer(cell)) is not type(value):
                return BenchmarkError(
                    f"format {fmt} cannot carry {value!r}, the {row.field(field)} of {row.label}: {library} writes it "
                    f"as {cell}, which reads back as text (a float reads back only as digits.digits); leave {fmt} out "
                    "of --formats"
                )
        fault = _row_fault([cell for _, _, cell in row.cells])
        if fault is not None:
            field, value, _ = row.cells[fault[0]]
            return BenchmarkError(
                f"format {fmt} cannot carry {value!r}, the {row.field(field)} of {row.label}: {library} writes it "
                f"unquoted {fault[1]}; leave {fmt} out of --formats"
            )
    return None


def _record_labels(graph: Graph) -> tuple[list[str], list[str]]:
    """How a refusal names each node and edge: "node 'a'", "edge ('a', 'R', 'b')"."""
    return [f"node {n.id!r}" for n in graph.nodes], [f"edge {tuple(e)!r}" for e in graph.edges]


def _proved(fmt: str, graph: Graph, text: str, library: str, rows: Callable[[], Iterator[_Row]]) -> str:
    """text, once the library reads it back as graph; else the one line of ison_refusal, or what differed."""
    try:
        difference = first_difference(graph, PEER_FORMATS[fmt].parse(text))
    except BenchmarkError as e:
        difference = f"its text does not read back ({e})"
    if difference is None:
        return text
    raise ison_refusal(fmt, library, rows()) or BenchmarkError(
        f"format {fmt} cannot carry this graph: {library} reads its text back otherwise ({difference}); leave {fmt} "
        "out of --formats"
    )


# ison: two tables, as ison-py's from_dict writes a graph's records (the same bytes; tested): table.nodes (id name
# type, then a column per property, null where a record has none) and table.edges (source relation target, an edge's
# id first with --edge-ids), a row per record in the order shown. ison-py's reader takes a dotted field name for a path
# (valid.from: the field from inside valid) and this parser flattens it back, so a property named like a path into
# another field (valid.from beside valid, id.x beside id) is refused.
def _ison_document(graph: Graph) -> Any:
    from ison_parser import Block, Document

    plain = graph_dict(graph, flat=True, absent=None)
    fields = {
        "nodes": [*Node._fields, *prop_columns(graph.node_props)],
        "edges": [*(["id"] if graph.edge_ids else []), *Edge._fields, *prop_columns(graph.edge_props)],
    }
    return Document([Block("table", key, fields[key], plain[key]) for key in ("nodes", "edges")])


def _ison_rows(graph: Graph) -> Iterator[_Row]:
    from ison_parser import Serializer

    for block, labels, own in zip(_ison_document(graph).blocks, _record_labels(graph), OWN_FIELDS):
        for row, label in zip(block.rows, labels):
            yield _Row(label, [(f, row[f], Serializer._value_to_ison(row[f])) for f in block.fields], own)


def serialize_ison(graph: Graph) -> str:
    import ison_parser

    document = _ison_document(graph)
    for block in document.blocks:
        names = set(block.fields)
        for field in block.fields:
            head = field
            while "." in head:
                head = head.rsplit(".", 1)[0]
                if head in names:
                    raise BenchmarkError(
                        f"format ison cannot carry the {block.name[:-1]} property {field!r} beside {head!r}: "
                        f"{_ison_version('ison-py')} reads a dotted field name as a path into the field before its "
                        "dot; rename the property, or leave ison out of --formats"
                    )
    text = ison_parser.dumps(document)
    return _proved("ison", graph, text, _ison_version("ison-py"), lambda: _ison_rows(graph))


def _ison_flat(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A row as ison-py reads it, its dotted paths flattened back: {'valid': {'from': 3}} -> {'valid.from': 3}."""
    out = {}
    for key, value in row.items():
        if isinstance(value, dict):
            out.update(_ison_flat(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


ISON_FIELDS = {"nodes": (["id", "name", "type"],), "edges": (["source", "relation", "target"], ["id", "source"])}


@functools.lru_cache(maxsize=4)  # the text a serializer just read back is read again by the round-trip check
def parse_ison(text: str) -> Graph:
    import ison_parser

    try:
        document = ison_parser.loads(text)
    except (ison_parser.ISONError, TypeError) as e:  # TypeError: a dotted field under a field that holds a value
        raise format_error("ison", getattr(e, "line", 0) or 1, str(e).splitlines()[0][:200]) from None
    blocks = [(b.kind, b.name) for b in document.blocks]
    if blocks != [("table", "nodes"), ("table", "edges")] or any(
        not any(b.fields[: len(f)] == f for f in ISON_FIELDS[b.name]) for b in document.blocks
    ):
        raise format_error(
            "ison", 1, "expected the blocks table.nodes (id name type ...) and table.edges (source relation target ...)"
        )
    return _from_plain("ison", {b.name: [_ison_flat(row) for row in b.rows] for b in document.blocks})


# isongraph: the property graph ISONGraph writes (to_ison, ISON's canonical form): a block nodes.TYPE per node type
# (id, then the properties, the name among them, in ISON's canonical column order) and a block edges.RELATION per
# relation (source and target as :TYPE:ID references, then the properties; an edge's id first with --edge-ids), blocks
# and rows sorted by the library (an answer's path counts the edges in that order: isongraph_order). ISONGraph takes a
# type or relation as a block name, where a space, a quote, a backslash, ':' or '|' cannot stand: such a node is put in
# nodes.entity with its type as a value, such an edge in edges.RELATED_TO with its relation as a value (from_dict's
# defaults for a node or an edge with none); its references cannot quote, so an id's '%', ':', '|' and whitespace are
# written %XX (UTF-8 bytes, as a URL), a leading '---' as %2D--, and the empty id as '%'. The prompt has no note of a
# format's own: the text's first line, a comment ISON's reader skips, says how to read a reference. ISONGraph is a
# simple graph: two edges of one relation, source and target are refused.
ISONGRAPH_TYPE, ISONGRAPH_RELATION = "entity", "RELATED_TO"  # ISONGraph.from_dict's defaults
ISONGRAPH_NOTE = (
    "# :TYPE:ID is the node ID of block nodes.TYPE; a row of block edges.RELATION is an edge source -RELATION-> target"
)
ISONGRAPH_NOTE_ESCAPES = "; in an ID, %XX is a UTF-8 byte (%20 a space) and % alone the empty ID"
ISONGRAPH_NOTE_VALUES = "; where a row has a relation or a type value, that is the edge's relation or the node's type"
ISONGRAPH_ESCAPED = frozenset("%:|")  # and whitespace: what a reference (written unquoted) cannot hold


def _block_name(value: str) -> bool:
    """Whether ISONGraph writes value as a block name that reads back the same (InvalidIdentifierError's rule, and no
    whitespace at all: ison-py strips a header line)."""
    return bool(value) and not any(c.isspace() or c in ':|"\\' for c in value)


def _percent(c: str) -> str:
    """A character as %XX, its UTF-8 bytes: ' ' -> '%20'."""
    return "".join(f"%{b:02X}" for b in c.encode("utf-8"))


def _isongraph_id(value: str) -> str:
    """A node id as ISONGraph's references can carry it: 'Ada Lovelace' -> 'Ada%20Lovelace', '' -> '%'."""
    text = "".join(_percent(c) if c in ISONGRAPH_ESCAPED or c.isspace() else c for c in value)
    if text.lstrip("-").isdigit() and not text.isascii():  # ISONGraph takes it for a number, and int('²') fails
        text = "".join(c if c.isascii() else _percent(c) for c in text)
    return "%2D" + text[1:] if text.startswith("---") else text or "%"


def _isongraph_id_back(value: object) -> object:
    """The id _isongraph_id wrote: 'Ada%20Lovelace' -> 'Ada Lovelace'."""
    if not isinstance(value, str):
        return value
    return "" if value == "%" else urllib.parse.unquote(value, errors="strict")


class _ISONGraphOf(NamedTuple):
    """A graph as an ISONGraph, and where each record went: node id -> (block, id); edge key -> the edge's index."""

    isg: Any
    refs: dict[str, tuple[str, str]]
    edges: dict[tuple[str, tuple[str, str], tuple[str, str]], int]


# what ISONGraph cannot read back as a property name: a dotted path, or a name from_ison passes to add_node(node_type,
# node_id, **properties) or add_edge(rel_type, source, target, **properties) beside their own arguments
ISONGRAPH_PARAMETERS = ({"node_type", "node_id"}, {"rel_type"})  # nodes', edges'
ISONGRAPH_CALLS = ("add_node(node_type, node_id, **properties)", "add_edge(rel_type, source, target, **properties)")


def _isongraph_names(graph: Graph, library: str) -> None:
    """Refuse, with one line, a property name ISONGraph cannot carry (ISONGRAPH_PARAMETERS)."""
    for k, (parameters, all_props) in enumerate(zip(ISONGRAPH_PARAMETERS, (graph.node_props, graph.edge_props))):
        for at, props in enumerate(all_props):
            key = next((key for key, _ in props if "." in key or key in parameters), None)
            if key is not None:
                why = (
                    "refuses a property name with '.'"
                    if "." in key
                    else f"reads properties back as keyword arguments of {ISONGRAPH_CALLS[k]}"
                )
                raise BenchmarkError(
                    f"format isongraph cannot carry {_record_labels(graph)[k][at]} property {key!r}: {library} {why}; "
                    "rename the property, or leave isongraph out of --formats"
                )


def _isongraph_of(graph: Graph) -> _ISONGraphOf:
    from ison_graph import ISONGraph

    isg = ISONGraph()
    refs: dict[str, tuple[str, str]] = {}
    edges: dict[tuple[str, tuple[str, str], tuple[str, str]], int] = {}
    library = _ison_version("ison-graph")
    _isongraph_names(graph, library)
    for node, props in graph.nodes_with_props():  # properties set on the record: a name may be one of add_node's own
        kind = node.type if _block_name(node.type) else ISONGRAPH_TYPE
        refs[node.id] = (kind, _isongraph_id(node.id))
        own = {"name": node.name, **({} if kind == node.type else {"type": node.type})}
        isg.add_node(*refs[node.id]).properties.update(own, **dict(props))
    for k, (edge, props) in enumerate(graph.edges_with_props()):
        relation = edge.relation if _block_name(edge.relation) else ISONGRAPH_RELATION
        key = (relation, refs[edge.source], refs[edge.target])
        if key in edges:
            raise BenchmarkError(
                f"format isongraph cannot carry edge {tuple(edge)!r} beside {tuple(graph.edges[edges[key]])!r}: "
                f"{library} keeps one edge of a relation from one node to another (edges.{relation}); leave isongraph "
                "out of --formats, or remove the duplicate"
            )
        edges[key] = k
        more = {"id": graph.edge_ids[k]} if graph.edge_ids else {}
        if relation != edge.relation:
            more["relation"] = edge.relation
        isg.add_edge(*key).properties.update(more, **dict(props))
    return _ISONGraphOf(isg, refs, edges)


def _isongraph_rows(graph: Graph) -> Iterator[_Row]:
    """The rows ISONGraph writes for graph, each named by its record, nodes then edges in the graph's order."""
    from ison_parser import Reference, Serializer

    of = _isongraph_of(graph)
    node_labels, edge_labels = _record_labels(graph)
    node_at = {ref: k for k, ref in enumerate(of.refs.values())}
    rows: list[tuple[int, _Row]] = []
    for block in of.isg._document().blocks:
        fields = Serializer._sort_fields_canonical(block.fields)
        for row in block.rows:
            cells = [(f, row[f], Serializer._value_to_ison(row[f])) for f in fields]
            if block.kind == "nodes":
                k = node_at[(block.name, row["id"])]
                rows.append((k, _Row(node_labels[k], cells, OWN_FIELDS[0])))
            else:
                ends = tuple((r.type, r.id) for r in (row["source"], row["target"]) if isinstance(r, Reference))
                k = of.edges[(block.name, *ends)]
                rows.append((len(node_labels) + k, _Row(edge_labels[k], cells, OWN_FIELDS[1])))
    return (row for _, row in sorted(rows, key=lambda pair: pair[0]))


def serialize_isongraph(graph: Graph) -> str:
    of = _isongraph_of(graph)
    escaped = any(ref[1] != node_id for node_id, ref in of.refs.items())
    own_values = any(ref[0] != n.type for n, ref in zip(graph.nodes, of.refs.values())) or any(
        key[0] != graph.edges[k].relation for key, k in of.edges.items()
    )
    note = ISONGRAPH_NOTE + (ISONGRAPH_NOTE_ESCAPES if escaped else "") + (ISONGRAPH_NOTE_VALUES if own_values else "")
    text = "\n".join(t for t in (note, of.isg.to_ison()) if t)
    library = f"{_ison_version('ison-graph')} (through {_ison_version('ison-py')})"
    return _proved("isongraph", graph, text, library, lambda: _isongraph_rows(graph))


@functools.lru_cache(maxsize=4)  # as parse_ison
def parse_isongraph(text: str) -> Graph:
    from ison_graph import ISONGraph

    try:
        isg = ISONGraph.from_ison(text)
    except Exception as e:  # ison-py's ISONError, ISONGraph's GraphError and ValueError, for a text it cannot read
        raise format_error("isongraph", getattr(e, "line", 0) or 1, str(e).splitlines()[0][:200]) from None
    nodes, edges = [], []
    try:
        for node in isg.nodes():
            props = dict(node.properties)
            kind = props.pop("type", None)
            nodes.append(
                {
                    "id": _isongraph_id_back(node.id),
                    "name": props.pop("name", None),
                    "type": node.type if kind is None else kind,
                    **props,
                }
            )
        for edge in isg.edges():
            props = dict(edge.properties)
            edge_id, relation = props.pop("id", None), props.pop("relation", None)
            record = {
                "source": _isongraph_id_back(edge.source[1]),
                "relation": edge.rel_type if relation is None else relation,
                "target": _isongraph_id_back(edge.target[1]),
                **props,
            }
            edges.append(record if edge_id is None else {"id": edge_id, **record})
    except UnicodeDecodeError as e:
        raise format_error("isongraph", 1, f"an id's %XX bytes are not UTF-8 ({e.reason})") from None
    return _from_plain("isongraph", {"nodes": nodes, "edges": edges})


def isongraph_order(graph: Graph) -> list[int]:
    """The graph's edge at each place isongraph shows (ISONGraph sorts its blocks and rows): the edge an answer's
    path index n cites."""
    place = {edge: k for k, edge in enumerate(graph.edges)}  # each edge once: isongraph refuses a second
    return [place[edge] for edge in parse_isongraph(serialize_isongraph(graph)).edges]


def turtle_statements(text: str) -> tuple[str, Counter[str]] | None:
    """A text of serialize_turtle as its directives and the multiset of its statement lines, when each statement is one
    line (no long string: rdflib writes a literal with a newline between triple quotes, over several lines); else
    None. Turtle's statements are independent given its directives, and each anonymous blank node ([ ... ]) lives
    in one statement, so two texts with the same directives and the same statement lines, in any order, parse to
    the same RDF graph up to the names of blank nodes, which parse_turtle does not keep."""
    if '"""' in text:
        return None
    head, sep, body = text.partition("\n\n")
    return (head, Counter(body.split("\n"))) if sep else None


def yaml_items(text: str) -> tuple[tuple[str, ...], Counter[tuple[str, str]]] | None:
    """A text of serialize_yaml as its top-level keys and the multiset of (key, sequence item), when no anchor or alias
    can tie one item to another (a conservative test: any & or * that could start one); else None. Each item starts
    at a line '- ' in column 0 and takes the lines after it up to the next line in column 0 (a scalar's continuation
    lines are indented), and the items of a block sequence are independent nodes, so two texts with the same keys
    and the same items, in any order within each sequence, parse to the same records."""
    if re.search(r"(?:^|[\s\[{,])[&*]\S", text):
        return None
    keys: list[str] = []
    items: Counter[tuple[str, str]] = Counter()
    key = None
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
Proven = dict[str, tuple[object, Graph]]  # format -> the parts and the graph of a text that round-tripped


def check_roundtrip_once(fmt: str, graph: Graph, text: str, proven: Proven) -> None:
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


# package -> the packages whose code writes and reads its format's bytes too, recorded beside it in the manifest
WRITES_THROUGH = {
    "ison-graph": ("ison-py",)
}  # ISONGraph writes and reads through ison-py's canonical writer and reader

# The peers' formats, in the report order after the article's five; the package's face joins them to benchmark.FORMATS.
PEER_FORMATS = {
    "json_compact": Format(serialize_json_compact, parse_json_compact),
    "pipe_table": Format(serialize_pipe_table, parse_pipe_table),
    "toon": Format(serialize_toon, parse_toon, ("toon_format", "toon-format")),
    "yaml": Format(serialize_yaml, parse_yaml, ("yaml", "PyYAML")),
    "turtle": Format(serialize_turtle, parse_turtle, ("rdflib", "rdflib"), "an RDF triple has no id of its own"),
    "markdown_kv": Format(serialize_markdown_kv, parse_markdown_kv),
    "ison": Format(serialize_ison, parse_ison, ("ison_parser", "ison-py")),
    "isongraph": Format(serialize_isongraph, parse_isongraph, ("ison_graph", "ison-graph")),
}
