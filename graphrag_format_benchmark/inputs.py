"""Graph files and prompt templates as users have them, read into what benchmark.py checks.

In: --graph of any kind (GRAPH_FORMATS: JSON, TSV/CSV triples, Turtle and N-Triples, GraphML, a Neo4j APOC export),
--prompt ru | en | FILE. Out: the tool's JSON records of nodes and edges (read_graph_file), which benchmark.py's
validate_graph then checks the same way whatever the file was; a Template (load_template).

RDF is read by rdflib and GraphML by networkx, each imported only when such a file is read; the GraphRAG frameworks'
stores by stores.py.
"""

from __future__ import annotations

import csv
import functools
import io
import itertools
import json
import math
import re
import unicodedata
import urllib.parse
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._article import (
    JSON_NUMBER,
    NORMALIZATION,
    PROMPT_TEMPLATES,
    TEMPLATE_FIELDS,
    BenchmarkError,
    GivenContext,
    Graph,
    GraphScope,
    Hop,
    InputProblems,
    Problems,
    Query,
    Question,
    RunInputs,
    Template,
    check_text,
    display,
    edge_names,
    load_inputs as benchmark_load_inputs,
    read_json,
    read_path,
    read_text,
    validate_graph,
    warn,
)
from .extras import not_installed
from .solver import fold_answer, gold_answers, solve
from .stores import (
    DEFAULT_RELATION,
    DEFAULT_TYPE,
    STORE_KINDS,
    STORE_ROWS,
    StoreRows,
    is_llamaindex_store,
    read_store,
    store_kind,
    store_layout,
)

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

# Graph files as users have them. Each reader turns its file into the tool's own JSON records, which then go
# through the same checks (validate_graph), so a property, a duplicate id or a dangling edge is found and named
# the same way whatever the file was; the manifest hashes the file as given. Records keep the file's order.
NAME_KEYS = ("name", "label", "title")  # where a node's name may be, in this order of preference
TYPE_KEYS = ("type", "entity_type", "labels", "kind")
RELATION_KEYS = ("relation", "label", "type", "predicate", "relationship")


def read_graph_file(
    path: Path, kind: str | None = None, store_fields: str = "sent", layouts: tuple[str, ...] = ()
) -> tuple[object, bytes, str]:
    """The graph of --graph as the tool's JSON records, its raw bytes, and the format it was read as: by
    --graph-format, else a framework's store by its folder, name or keys (stores.store_kind), else by the file's
    extension (GRAPH_FORMATS). layouts: the baseline and the formats; a store is read as the first of its framework's
    layouts among them sends it (stores.store_layout)."""
    if kind is None:
        kind = store_kind(path) or next(
            (k for k, (extensions, _) in GRAPH_FORMATS.items() if path.suffix.lower() in extensions), None
        )
        if kind is None:  # no extension says: JSON, unless the content plainly is GraphML
            kind = "json"
            if path.is_file() and looks_like_graphml(path):
                raise BenchmarkError(
                    f"--graph {display(path)}: its content is GraphML, but its name does not end in .graphml; pass "
                    "--graph-format graphml (or --graph-format lightrag for LightRAG's store)"
                )
    if kind in STORES:
        return *read_store(kind, path, store_fields, layout=store_layout(kind, layouts)), kind
    if kind == "json":
        data, raw = read_json(path, "--graph")
        if is_llamaindex_store(data):
            warn(
                f"--graph {display(path)}: read as LlamaIndex's property graph store (its nodes, relations and "
                "triplets)"
            )
            return *read_store(
                "llamaindex", path, store_fields, (data, raw), store_layout("llamaindex", layouts)
            ), "llamaindex"
        return untyped_for(data, layouts, store_fields, path), raw, kind
    text, raw = read_text(path, "--graph")
    reader = GRAPH_FORMATS[kind][1]
    if reader is None:  # json, read above
        raise AssertionError(f"no reader for {kind}")  # an internal bug
    return untyped_for(reader(text, display(path)), layouts, store_fields, path), raw, kind


UNTYPED_LAYOUTS = frozenset(("langchain",))  # layouts whose records send no node type: r.data() has no labels


def untyped_for(data: object, layouts: tuple[str, ...], store_fields: str, path: Path) -> object:
    """A graph file's records as the baseline layout sends them: with langchain the baseline (the first of layouts),
    every node's type is left out (LangChain's r.data() maps carry no labels), so that no format carries a type the
    baseline does not send; the types are kept aside (STORE_KINDS) for naming. --store-fields all keeps them."""
    if not layouts or layouts[0] not in UNTYPED_LAYOUTS or store_fields == "all" or not isinstance(data, dict):
        return data
    nodes = data.get("nodes")
    if not isinstance(nodes, list):
        return data  # validate_graph says what is wrong
    kinds = {
        n["id"]: n["type"]
        for n in nodes
        if isinstance(n, dict)
        and isinstance(n.get("id"), str)
        and isinstance(n.get("type"), str)
        and n["type"] != DEFAULT_TYPE
    }
    if not kinds:
        return data
    warn(
        f"--graph {display(path)}: left out the types of {len(kinds):,} node(s): {layouts[0]} is the baseline, and its "
        "records (r.data()) show no labels; --store-fields all keeps them"
    )
    untyped = [{**n, "type": DEFAULT_TYPE} if isinstance(n, dict) and n.get("id") in kinds else n for n in nodes]
    return {**data, "nodes": untyped, STORE_KINDS: kinds}


def looks_like_graphml(path: Path) -> bool:
    """Whether a file begins as GraphML does (its first kilobytes hold a <graphml element)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<") and b"<graphml" in head


def _node_record(node_id: str, data: dict[str, Any], where: str) -> dict[str, Any]:
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


def _edge_record(
    source: str,
    target: str,
    data: dict[str, Any],
    where: str,
    edge_id: str | None = None,
    relation: str | None = None,
) -> dict[str, Any]:
    data = dict(data)
    if relation is None:
        relation = next((data.pop(k) for k in RELATION_KEYS if k in data), None)
    if relation is None:
        raise BenchmarkError(
            f"{where}: the edge {source!r} -> {target!r} has no relation ({', '.join(RELATION_KEYS)}); give it one"
        )
    for fixed in ("id", "source", "target"):
        if fixed in data:
            raise BenchmarkError(
                f"{where}: the edge {source!r} -> {target!r} has a field {fixed!r} besides its own; rename it"
            )
    return {
        **({"id": edge_id} if edge_id is not None else {}),
        "source": source,
        "relation": relation,
        "target": target,
        **data,
    }


TRIPLE_COLUMNS = {
    "source": ("source", "subject", "head", "from", "src", "start"),
    "relation": ("relation", "predicate", "relationship", "rel", "type", "label"),
    "target": ("target", "object", "tail", "to", "dst", "end"),
}


def read_triples(text: str, where: str, delimiter: str) -> dict[str, Any]:
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
                raise BenchmarkError(
                    f"{where}: the header has no {role} column ({', '.join(names)}); name the columns on its first line"
                )
        nodes: dict[str, dict[str, Any]] = {}
        edges = []
        for row in reader:
            if not any(row):
                continue
            line = reader.line_num
            if len(row) != len(header):
                raise BenchmarkError(
                    f"{where} line {line}: {len(row)} fields where the header has {len(header)}; fix the row"
                )
            ends: dict[str, str] = {}
            edge: dict[str, Any] = {}  # its cells: the id and relation as written, the rest read as values
            node_fields: dict[str, dict[str, Any]] = {"source": {}, "target": {}}
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
            edges.append(
                _edge_record(
                    ends["source"],
                    ends["target"],
                    {k: v for k, v in edge.items() if k not in ("relation", "id")},
                    f"{where} line {line}",
                    edge.get("id"),
                    edge["relation"],
                )
            )
    except csv.Error as e:
        raise BenchmarkError(f"{where} line {reader.line_num}: {e}; fix the row") from None
    return {"nodes": [_node_record(i, data, where) for i, data in nodes.items()], "edges": edges}


def _cell_value(text: str) -> object:
    """A CSV cell's value: a JSON number or true/false as one, anything else as the text."""
    return json.loads(text) if text in ("true", "false") or JSON_NUMBER.fullmatch(text) else text


def _merge_node(nodes: dict[str, dict[str, Any]], node_id: str, fields: dict[str, Any], where: str) -> None:
    """Add a node seen in a row, or check that what this row says of it agrees with what earlier rows said."""
    known = nodes.setdefault(node_id, {})
    for key, value in fields.items():
        if key in known and known[key] != value:
            raise BenchmarkError(
                f"{where}: node {node_id!r} has {key} {value!r} here and {known[key]!r} in an earlier row; make them "
                "agree"
            )
        known[key] = value


def read_rdf(text: str, where: str, syntax: str = "turtle") -> dict[str, Any]:
    """RDF (Turtle or N-Triples, read by rdflib), in document order: every IRI or blank node that is a subject or an
    object is a node, its id the IRI's local name (percent-decoded), its name its one rdfs:label (or skos:prefLabel,
    schema:name, foaf:name; else its id), its type the local name of its one rdf:type (else DEFAULT_TYPE); a
    triple between two nodes is an edge named by its predicate's local name; a literal of a node is a property,
    and so is one of an RDF reification (rdf:subject, rdf:predicate, rdf:object) for its edge."""
    try:
        import rdflib
        from rdflib.namespace import RDF, RDFS
    except ImportError:
        raise not_installed(f"{where}: reading RDF", "rdflib", "graphs") from None

    class Ordered(rdflib.Graph):  # records triples as the parser reads them: the store does not keep their order
        def __init__(self) -> None:
            super().__init__()
            self.order: list[tuple[Any, Any, Any]] = []  # rdflib's terms: rdflib ships no types

        def add(self, triple: tuple[Any, Any, Any]) -> Any:
            self.order.append(triple)
            return super().add(triple)

    graph = Ordered()
    try:
        graph.parse(data=text, format=syntax)
    except Exception as e:  # rdflib raises its own errors for a text it cannot read
        raise BenchmarkError(f"{where}: not {syntax} ({str(e).splitlines()[0][:200]}); fix the file") from None
    labels = {
        RDFS.label,
        rdflib.URIRef("http://www.w3.org/2004/02/skos/core#prefLabel"),
        rdflib.URIRef("http://schema.org/name"),
        rdflib.URIRef("https://schema.org/name"),
        rdflib.URIRef("http://xmlns.com/foaf/0.1/name"),
    }
    machinery = {RDF.subject, RDF.predicate, RDF.object}
    reified = {s for s, p, _ in graph.order if p in machinery}
    ids: dict[object, str] = {}
    blanks = itertools.count(1)

    def node_id(term: object) -> str:
        if term not in ids:
            ids[term] = f"b{next(blanks)}" if isinstance(term, rdflib.BNode) else _local_name(str(term))
        return ids[term]

    nodes: dict[str, dict[str, Any]] = {}
    edges: list[dict[str, Any]] = []
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
    _reified_props(graph, reified, edges)
    _distinct_local_names(ids, where)
    return {
        "nodes": [
            {"id": i, "name": r.pop("name", i), "type": r.pop("type", DEFAULT_TYPE), **r} for i, r in nodes.items()
        ],
        "edges": edges,
    }


def _reified_props(graph: Any, reified: set[object], edges: list[dict[str, Any]]) -> None:
    """The literals of each RDF reification (rdf:subject, rdf:predicate, rdf:object) onto the edge it is about; edges
    are the graph's triples between nodes, in document order."""
    import rdflib
    from rdflib.namespace import RDF

    edge_props = {}
    for r in reified:
        triple = (graph.value(r, RDF.subject), graph.value(r, RDF.predicate), graph.value(r, RDF.object))
        edge_props[triple] = {
            _local_name(str(p)): _rdf_value(o)
            for _, p, o in graph.triples((r, None, None))
            if isinstance(o, rdflib.Literal)
        }
    if edge_props:
        keys = [
            (s, p, o)
            for s, p, o in dict.fromkeys(graph.order)
            if s not in reified and p != RDF.type and not isinstance(o, rdflib.Literal)
        ]
        for edge, key in zip(edges, keys):
            edge.update(edge_props.get(key, {}))


def _distinct_local_names(ids: dict[object, str], where: str) -> None:
    """Two IRIs whose local names are one node id are an error that names both."""
    taken = Counter(ids.values())
    twice = next((term for term, i in ids.items() if taken[i] > 1), None)
    if twice is not None:
        other = next(t for t, i in ids.items() if i == ids[twice] and t != twice)
        raise BenchmarkError(
            f"{where}: {twice} and {other} share the local name {ids[twice]!r}, which is a node's id here; "
            "give them distinct local names"
        )


def _local_name(iri: str) -> str:
    """'http://example.org/people#ann_lee' -> 'ann_lee'; 'urn:graph:node:Caf%C3%A9' -> 'Café'."""
    cut = max(iri.rfind("#"), iri.rfind("/"), iri.rfind(":"))
    return urllib.parse.unquote(iri[cut + 1 :] if cut + 1 < len(iri) else iri)


def _rdf_value(literal: Any) -> object:
    """A literal's value as a property: a string, number or
    boolean; a date as its ISO text; anything else as its text."""
    value = literal.toPython()
    if isinstance(value, (bool, int)) or isinstance(value, float) and math.isfinite(value):
        return value
    if type(value).__name__ == "Decimal":
        return float(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(literal)


def _set_once(record: dict[str, Any], key: str, value: object, where: str, what: str) -> None:
    if key in record and record[key] != value:
        raise BenchmarkError(f"{where} has {what} twice ({record[key]!r} and {value!r}); keep one")
    record[key] = value


def ordered_graphml(text: str, where: str) -> tuple[Any, list[str], list[tuple[str, str, str | None, dict[str, Any]]]]:
    """GraphML read by networkx, with its nodes and edges in the file's order (an undirected networkx graph iterates
    its edges by adjacency): (the graph, node ids, (source, target, edge id, attributes) per edge)."""
    try:
        import networkx  # noqa: F401  (its reader below; the import says at once whether it is installed)
        from networkx.readwrite.graphml import GraphMLReader
    except ImportError:
        raise not_installed(f"{where}: reading GraphML", "networkx", "graphs") from None
    nodes, edges = [], []

    class Reader(GraphMLReader):  # records nodes and edges as networkx reads them, in the file's order
        def add_node(self, G: Any, node_xml: Element, graphml_keys: dict[str, Any], defaults: dict[str, Any]) -> None:
            super().add_node(G, node_xml, graphml_keys, defaults)
            nodes.append(self.node_type(node_xml.get("id")))

        def add_edge(self, G: Any, edge_element: Element, graphml_keys: dict[str, Any]) -> None:
            # kept here in the file's order and not added to G: no reader uses G's edges (decoding each twice cost 40%)
            edges.append(
                (
                    self.node_type(edge_element.get("source")),
                    self.node_type(edge_element.get("target")),
                    edge_element.get("id"),
                    self.decode_data_elements(graphml_keys, edge_element),
                )
            )

    try:
        graphs = list(Reader(node_type=str)(string=text.encode("utf-8")))
    except Exception as e:  # networkx and the XML parser raise their own errors
        raise BenchmarkError(f"{where}: not GraphML ({str(e).splitlines()[0][:200]}); fix the file") from None
    if len(graphs) != 1:
        raise BenchmarkError(f"{where}: holds {len(graphs)} graphs; give one")
    return graphs[0], nodes, edges


def read_graphml(text: str, where: str) -> dict[str, Any]:
    """GraphML (what networkx, LightRAG and Microsoft GraphRAG write), read by networkx, in document order: a node's
    id is its GraphML id, its name and type from NAME_KEYS and TYPE_KEYS (Neo4j's ':Label' too), an edge's
    relation from RELATION_KEYS (DEFAULT_RELATION when it has none, with a warning), every other attribute a
    property, typed as the file's keys declare. An undirected graph's edges are read in the direction written."""
    graph, nodes, edges = ordered_graphml(text, where)
    named = [i for _, _, i, _ in edges if i is not None]
    if len(set(named)) != len(named):  # networkx writes a multigraph's edge keys (0, 1, ... per node pair) as ids
        warn(
            f"{where}: edge ids repeat ({len(named) - len(set(named)):,} repeats), as networkx writes a multigraph's "
            "keys; "
            "they are read as keys, not edge ids"
        )
        edges = [(s, t, None, data) for s, t, _, data in edges]
    if not graph.is_directed():
        warn(f"{where}: the graph is undirected; each edge is read in the direction its source and target are written")
    defaults = graph.graph.get("edge_default", {})
    unnamed = sum(not any(k in {**defaults, **data} for k in RELATION_KEYS) for _, _, _, data in edges)
    if unnamed:
        warn(
            f"{where}: {unnamed} edge(s) have no relation ({', '.join(RELATION_KEYS)}); they are read as "
            f"{DEFAULT_RELATION!r}"
        )
    return {
        "nodes": [_node_record(n, graph.nodes[n], where) for n in nodes],
        "edges": [
            _edge_record(
                s,
                t,
                {**defaults, **data}
                if any(k in {**defaults, **data} for k in RELATION_KEYS)
                else {**defaults, **data, "relation": DEFAULT_RELATION},
                where,
                i,
            )
            for s, t, i, data in edges
        ],
    }


def read_neo4j(text: str, where: str) -> dict[str, Any]:
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
            nodes.append(
                _node_record(
                    str(item.get("id")),
                    {**props, "type": item.get("labels") or DEFAULT_TYPE},
                    f"{where} line {line_no}",
                )
            )
        elif (
            kind == "relationship"
            and isinstance(props, dict)
            and isinstance(item.get("start"), dict)
            and isinstance(item.get("end"), dict)
        ):
            edges.append(
                _edge_record(
                    str(item["start"].get("id")),
                    str(item["end"].get("id")),
                    props,
                    f"{where} line {line_no}",
                    str(item.get("id")),
                    item.get("label"),
                )
            )
        else:
            raise BenchmarkError(
                f"{where} line {line_no}: expected a node or relationship of an APOC JSON export; fix the line"
            )
    return {"nodes": nodes, "edges": edges}


# --graph-format name -> (file extensions it is taken for, reader of its text)
GRAPH_FORMATS: dict[str, tuple[tuple[str, ...], Callable[[str, str], dict[str, Any]] | None]] = {
    "json": ((".json",), None),
    "tsv": ((".tsv", ".tab"), functools.partial(read_triples, delimiter="\t")),
    "csv": ((".csv",), functools.partial(read_triples, delimiter=",")),
    "turtle": ((".ttl", ".turtle"), functools.partial(read_rdf, syntax="turtle")),
    "ntriples": ((".nt",), functools.partial(read_rdf, syntax="nt")),
    "graphml": ((".graphml",), read_graphml),
    "neo4j": ((".jsonl", ".ndjson"), read_neo4j),
    # the frameworks' stores (stores.py), told apart by their folder, file name or keys when not named
    "graphrag": ((".parquet",), None),
    "lightrag": ((), None),
    "llamaindex": ((), None),
}
STORES = ("graphrag", "lightrag", "llamaindex")

# -----------------------------------------------------------------------------
# the inputs of a run: any graph file, questions with contexts of their own, another order
GRAPH_ORDERS = ("file", "sorted")


def sorted_graph(graph: Graph) -> tuple[Graph, dict[int, int]]:
    """The graph with its nodes sorted by id and its edges by content (source, relation, target, properties), and
    where each edge went: one order for the same graph whatever file it came from (JSON, triples, RDF, GraphML)."""
    props = graph.edge_props
    order = sorted(
        range(len(graph.edges)),
        key=lambda i: (graph.edges[i], json.dumps(props[i], ensure_ascii=False) if props else ""),
    )
    nodes = sorted(range(len(graph.nodes)), key=lambda k: graph.nodes[k].id)
    picked = graph.pick(order)
    return (
        replace(
            picked,
            nodes=tuple(graph.nodes[k] for k in nodes),
            node_props=tuple(graph.node_props[k] for k in nodes) if graph.node_props else (),
        ),
        {old: new for new, old in enumerate(order)},
    )


def load_inputs(
    graph_path: Path,
    questions_path: Path,
    problems: Problems | None = None,
    generate: Callable[[Graph, str], tuple[list[dict[str, Any]], dict[int, int]]] | None = None,
    graph_format: str | None = None,
    graph_order: str = "file",
    store_fields: str = "sent",
    layouts: tuple[str, ...] = (),
) -> RunInputs:
    """benchmark.load_inputs for every input the package reads: --graph of any GRAPH_FORMATS (by --graph-format, else
    by its extension), questions with contexts of their own (read_given_context), --graph-order sorted
    (sorted_graph), and generated questions (generate: questions.draw_questions). A store's records are named in
    every problem and warning by the store's own rows (StoreNamed)."""
    kinds: dict[str, str] = {}
    own = problems is None
    named = StoreNamed(Problems() if problems is None else problems, display(graph_path))

    def read_graph(path: Path) -> tuple[object, bytes, str]:
        records, raw, kind = read_graph_file(path, graph_format, store_fields, layouts)
        if (
            isinstance(records, dict) and STORE_KINDS in records
        ):  # the store's types its framework does not show: for naming only
            kinds.update((unicodedata.normalize(NORMALIZATION, k), v) for k, v in records.pop(STORE_KINDS).items())
        if isinstance(records, dict) and STORE_ROWS in records:
            named.rows = records.pop(STORE_ROWS)
        return records, raw, kind

    inputs = benchmark_load_inputs(
        graph_path,
        questions_path,
        named,
        generate,
        read_graph,
        sorted_graph if graph_order == "sorted" else None,
        read_given_context,
    )
    named.inner.not_nfc += named.not_nfc
    if own and named.lines:  # as benchmark.load_inputs raises for problems of its own
        raise InputProblems([m for _, m in named.lines], "")
    if named.lines:  # a broken graph or question: nothing is walked on it
        return replace(inputs, kinds=kinds) if kinds else inputs
    inputs = with_derived_queries(inputs)
    return replace(inputs, kinds=kinds) if kinds else inputs


class StoreNamed(Problems):
    """The problems of one load_inputs, passed on to inner: validate_graph names a record by its index (nodes[12]), no
    place in a framework's store; once --graph is read as one (rows), each message and each NFC note names the store's
    row, node or relation instead (stores.StoreRows.named)."""

    def __init__(self, inner: Problems, src: str) -> None:
        self.inner, self.src = inner, src
        self.rows: StoreRows | None = None  # set once --graph is read as a store
        self.lines = inner.lines  # the same list: what is added here is the caller's
        self.not_nfc = _Noted(self.name)

    def name(self, message: str) -> str:
        return message if self.rows is None else self.rows.named(message, self.src)

    def add(self, message: str, question: str | None = None) -> None:
        self.inner.add(self.name(message), question)


class _Noted(list[str]):
    """A list of notes, each named as it is appended (check_text appends where it normalized a string)."""

    def __init__(self, name: Callable[[str], str]) -> None:
        super().__init__()
        self.name = name

    def append(self, note: str) -> None:
        super().append(self.name(note))


def with_derived_queries(inputs: RunInputs) -> RunInputs:
    """A hand-written question without 'query' made the control solver abstain with no word why: its walk is derived
    from its first gold path (derived_query) where that walk finds exactly its gold paths and answers (so distractor
    sizes can prove it too); the solver's run says how many (derived_queries_note). A question that names no
    answer_id (the article's own questions.json) takes the nodes its gold paths end at, and the run says so once."""
    derived: dict[str, Question] = {}
    for q in inputs.questions:
        if q.query is None:
            graph = q.context.graph if q.context is not None and q.context.graph is not None else inputs.graph
            query = derived_query(graph, q)
            if query is not None:
                ends = q.answer_ids or tuple(sorted({end for _, end in solve(graph, query)}))
                derived[q.id] = replace(q, query=query, answer_ids=ends)
    if not derived:
        return inputs
    ended = [q.id for q in inputs.questions if q.id in derived and not q.answer_ids]
    if ended:
        warn(
            f"{len(ended)} question(s) of {inputs.questions_file} name no answer_id "
            f"({', '.join(ended[:3])}{', ...' if len(ended) > 3 else ''}): each one's answer node is where its gold "
            "path ends; add 'answer_id' to name it yourself"
        )
    return replace(
        inputs,
        questions=tuple(derived.get(q.id, q) for q in inputs.questions),
        derived_queries=tuple(derived),
    )


def derived_queries_note(inputs: RunInputs) -> str | None:
    """For a run of the control solver: how many questions have no 'query' of their own, walked from their gold path or
    not walked at all (the solver abstains on those: rightly on an abstention question); None when every question has
    its own."""
    unwalked = [q for q in inputs.questions if q.query is None]
    left = [q.id for q in unwalked if not q.insufficient]
    if not unwalked and not inputs.derived_queries:
        return None
    n = len(unwalked) + len(inputs.derived_queries)
    said = f"{n} question(s) of {inputs.questions_file} have no 'query'"
    if inputs.derived_queries:
        said += (
            ": the control solver walks the one derived from each one's gold path (its start, relations and directions)"
        )
    if len(left) < len(unwalked):
        said += f"; it abstains on the {len(unwalked) - len(left)} abstention question(s), as it should"
    if left:
        said += (
            f"; {len(left)} could not be derived from a gold path "
            f"({', '.join(left[:3])}{', ...' if len(left) > 3 else ''}: no path, or a path whose walk finds other "
            "answers), and the control solver abstains on them; add a 'query'"
        )
    return said


def derived_query(graph: Graph, q: Question) -> Query | None:
    """The query a positive question's first gold path walks: from the end of its first edge that the second does not
    touch (a one-edge path: the end that is not the answer), each edge out or in as the walk meets it; None when the
    path is no chain, or when that query finds other paths or answers than the question gives."""
    if q.insufficient or not q.paths or not q.paths[0]:
        return None
    path, edges = q.paths[0], graph.edges
    first = edges[path[0]]
    if len(path) > 1:
        nxt = edges[path[1]]
        starts = [end for end in (first.source, first.target) if end not in (nxt.source, nxt.target)] or [first.source]
    else:
        answer_ids = set(q.answer_ids) or {
            n.id for n in graph.nodes if fold_answer(n.name) in {fold_answer(a) for a in q.answers}
        }
        starts = [
            end for end, other in ((first.source, first.target), (first.target, first.source)) if other in answer_ids
        ]
    for start in starts[:2]:
        hops, here = [], start
        for i in path:
            e = edges[i]
            if e.source == here:
                hops.append(Hop(e.relation, "out"))
                here = e.target
            elif e.target == here:
                hops.append(Hop(e.relation, "in"))
                here = e.source
            else:
                break
        else:
            query = Query(start, tuple(hops))
            try:
                walks = solve(graph, query)
            except BenchmarkError:  # a walk too wide to enumerate: no query is derived
                continue
            if sorted(p for p, _ in walks) == sorted(q.paths) and {
                fold_answer(a) for a in gold_answers(graph, query, walks)
            } == {fold_answer(a) for a in q.answers}:
                return query
    return None


def read_given_context(
    value: object, where: str, scope: GraphScope, not_nfc: list[str]
) -> tuple[GivenContext, GraphScope | None]:
    """A question's context, as benchmark.load_inputs asks a reader of contexts (ReadContext): {"nodes": [node ids],
    "edges": [edge ids or indices]} of the input graph (nodes optional: the edges' ends), or {"graph": {"nodes": [...],
    "edges": [...]}} of its own, whose scope the question's paths, answer ids and query then refer to."""
    if isinstance(value, dict) and set(value) == {"graph"}:
        problems = Problems()
        graph = validate_graph(value["graph"], where + ".graph", problems)
        if problems.lines:
            raise BenchmarkError(
                problems.lines[0][1]
                + (
                    f" (and {len(problems.lines) - 1} more problem(s) in this context)"
                    if len(problems.lines) > 1
                    else ""
                )
            )
        not_nfc += problems.not_nfc
        names = edge_names(value["graph"], where + ".graph", problems)
        if problems.lines:
            raise BenchmarkError(problems.lines[0][1])
        return GivenContext(graph=graph), GraphScope(len(graph.edges), {n.id for n in graph.nodes}, names)
    if (
        not isinstance(value, dict)
        or not value
        or not set(value) <= {"nodes", "edges"}
        or not all(isinstance(v, list) for v in value.values())
    ):
        raise BenchmarkError(
            f'{where} must be {{"nodes": [node ids], "edges": [edge ids or indices]}} of the input graph, '
            'or {"graph": {"nodes": [...], "edges": [...]}} of its own'
        )
    edges = tuple(read_path(value.get("edges", []), f"{where}.edges", scope))
    if len(set(edges)) != len(edges):
        raise BenchmarkError(f"{where}.edges lists an edge twice; list each once")
    nodes = tuple(check_text(v, f"{where}.nodes[{k}]") for k, v in enumerate(value.get("nodes", [])))
    unknown = next((v for v in nodes if v not in scope.node_ids), None)
    if unknown is not None:
        raise BenchmarkError(f"{where}.nodes names {unknown!r}, which is not a node id of the graph")
    if len(set(nodes)) != len(nodes):
        raise BenchmarkError(f"{where}.nodes lists a node twice; list each once")
    return GivenContext(edges, nodes), None


# -----------------------------------------------------------------------------
# prompt templates: the article's (ru), its English rendering (en), or a file of the user's

# An English rendering of the article's prompt: the same instruction, answer schema and rules in the same layout; the
# package's face registers it beside the article's in benchmark.PROMPT_TEMPLATES.
ENGLISH_TEMPLATE = """You are performing an exact traversal of a directed graph.

Graph format: {format_name}.
Use only the edges that are written out explicitly.
Do not reverse the direction of a relation.
Do not add facts that are missing.
If there is no complete path, return INSUFFICIENT_DATA.

Return only JSON:
{
  "answer": "short answer or INSUFFICIENT_DATA",
  "path": [edges in order: each one's id where the graph shows ids, else its place from 0 in the order shown],
  "evidence": [
    {"source":"id","relation":"TYPE","target":"id"}
  ]
}

GRAPH
{graph}

QUESTION
{question}
"""
# The answer schema's path line, and what it says with --edge-ids instead.
PATH_LINES = {
    "ru": '"path": [индексы рёбер по порядку],',
    "en": '"path": [edge indices in order: the id the graph shows beside an edge, else its place counting the edges '
    "from 0 in the order shown],",
}
EDGE_ID_PATH_LINES = {"ru": '"path": [id рёбер по порядку],', "en": '"path": [edge ids in order],'}


def check_template(name: str, text: str) -> None:
    """A template holds each of {format_name}, {graph} and {question} exactly once, and no other field."""
    fields = Counter(Template.parse(name, text).parts[1::2])
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


MAX_TEMPLATE_BYTES = 1_000_000


# The built-in templates' two lines about direction, and what they say of a graph without one (a GraphRAG or LightRAG
# store: networkx Graphs, each edge stored once in either direction).
DIRECTED_LINES = {
    "ru": ("точный обход направленного графа.", "Не обращай направление связи."),
    "en": ("an exact traversal of a directed graph.", "Do not reverse the direction of a relation."),
}
UNDIRECTED_LINES = {
    "ru": ("точный обход неориентированного графа.", "Ребро можно пройти в любую сторону."),
    "en": ("an exact traversal of an undirected graph.", "An edge may be walked in either direction."),
}


def undirected_template(template: Template) -> Template:
    """A built-in template as it speaks of a graph without direction; a template file says what it says."""
    base = template.name.split("+")[0]
    if base not in DIRECTED_LINES or "+undirected" in template.name:
        return template
    text = template.text
    for said, meant in zip(DIRECTED_LINES[base], UNDIRECTED_LINES[base]):
        text = text.replace(said, meant)
    return Template.parse(template.name + "+undirected", text)


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
            raise BenchmarkError(
                f"{where}: the prompt template is over {MAX_TEMPLATE_BYTES:,} bytes; give a template, not a corpus"
            )
        if raw.startswith(b"\xef\xbb\xbf"):
            warn(f"{where}: the byte order mark at the start of the template was dropped; it would begin every prompt")
            raw = raw[3:]
        text = raw.decode("utf-8")
    except OSError as e:
        raise BenchmarkError(
            f"--prompt {value!r}: cannot read it ({e.strerror}); give {', '.join(PROMPT_TEMPLATES)} or a template file"
        ) from None
    except UnicodeDecodeError as e:
        raise BenchmarkError(
            f"{where}: the byte at offset {e.start} is not UTF-8; save the template as UTF-8"
        ) from None
    text = check_text(text, f"{where} (the prompt template)")
    check_template(where, text)
    return Template.parse(where, text)
