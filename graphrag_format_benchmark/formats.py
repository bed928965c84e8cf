"""The formats beyond the article's five, as benchmark.Format records (PEER_FORMATS), which the package's face joins
to benchmark.FORMATS after them.

In: a benchmark.Graph. Out: its text in json_compact, pipe_table (GraphRAG's context tables), toon, yaml, turtle or
markdown_kv, and a parser that reads exactly that text back. The peers' formats are written and read with their own
ecosystem's library (each Format's library: toon-format, PyYAML, rdflib), imported only when the format is asked for.
Also here: the round-trip proofs that spare a matrix the parsers of Turtle and YAML for another edge order of a text
already checked (check_roundtrip_once).
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import urllib.parse
from collections import Counter
from typing import TYPE_CHECKING, Any, cast

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


def _yaml_one(record: dict) -> str:
    return yaml_dump_whole(None, {"r": [record]}).split("\n", 1)[1] + "\n"


def yaml_dump_whole(graph: Graph | None, plain: dict | None = None, dumper: type | None = None) -> str:
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
    text = yaml.dump(
        plain,
        Dumper=_yaml_dumper(dumper),
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=2**31 - 1,
    ).rstrip("\n")  # one line per value, never folded
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
    records: dict[str, list[dict]] = {"nodes": [], "edges": []}
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


# The peers' formats, in the report order after the article's five; the package's face joins them to benchmark.FORMATS.
PEER_FORMATS = {
    "json_compact": Format(serialize_json_compact, parse_json_compact),
    "pipe_table": Format(serialize_pipe_table, parse_pipe_table),
    "toon": Format(serialize_toon, parse_toon, ("toon_format", "toon-format")),
    "yaml": Format(serialize_yaml, parse_yaml, ("yaml", "PyYAML")),
    "turtle": Format(serialize_turtle, parse_turtle, ("rdflib", "rdflib"), "an RDF triple has no id of its own"),
    "markdown_kv": Format(serialize_markdown_kv, parse_markdown_kv),
}
