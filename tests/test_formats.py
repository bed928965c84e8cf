"""Every registered format: exact bytes, round-trip on canonical and hostile values, strict parsers."""

import importlib
import json
import random
import re
import subprocess
import sys
import unicodedata
from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st
from kg_graphs import hostile_names_graph

import benchmark
from benchmark import BenchmarkError, Edge, Graph, Node
from graphrag_format_benchmark import formats

from conftest import GOLDEN, ROOT, run_cli

ALL_FORMATS = list(benchmark.FORMATS)
SETS_OF_TRIPLES = ("turtle",)  # RDF: no order, no duplicate, no edge id; compared as multisets
SORTED_BY_LIBRARY = ("isongraph",)  # ISONGraph sorts its blocks and rows: compared as multisets
ISON_FORMATS = ("ison", "isongraph")  # what their libraries cannot carry is refused with one line, never written
ISON_LIBRARIES = {"ison": "ison-py 1.2.0", "isongraph": "ison-graph 1.4.0 (through ison-py 1.2.0)"}
# whitespace ISON's writer strips from the end of a row (str.rstrip) and does not quote
ROW_END_WHITESPACE = ("\u2028", "\x85", "\x0b", "\x0c", "\x1f")


def ison_refused_at_row_end(fmt: str, label: str, field: str, value: object) -> str:
    return (
        f"format {fmt} cannot carry {value!r}, the {field} of {label}: {ISON_LIBRARIES[fmt]} writes it unquoted at the "
        f"end of a row, where the writer strips whitespace; leave {fmt} out of --formats"
    )


def refused_by_ison(fmt: str, caught: BenchmarkError) -> bool:
    """An ISON format refused a graph with one line naming what it cannot carry."""
    return fmt in ISON_FORMATS and str(caught).startswith(f"format {fmt} cannot carry ") and "\n" not in str(caught)


# triplets, records: nodes come back in the order they are first shown; edges keep theirs
NODES_AS_SHOWN = ("llamaindex", "llamaindex_properties", "llamaindex_text", "llamaindex_text_properties", "langchain")
RANKED = ("graphrag", "lightrag")  # relationships ranked by degree, as the framework sends them: nodes keep their order


def same_graph(fmt: str, graph: Graph, parsed: Graph) -> bool:
    """parsed is graph: in order, or as a multiset where the format
    has no order (of its nodes, its edges, or of anything)."""
    if fmt in SETS_OF_TRIPLES or fmt in SORTED_BY_LIBRARY:
        return benchmark.first_difference(graph, parsed) is None
    if fmt in NODES_AS_SHOWN:
        return benchmark.first_difference(graph, parsed) is None and (parsed.edges, parsed.edge_ids) == (
            graph.edges,
            graph.edge_ids,
        )
    if fmt in RANKED:
        return benchmark.first_difference(graph, parsed) is None and (parsed.nodes, parsed.node_props) == (
            graph.nodes,
            graph.node_props,
        )
    return parsed == graph


def read_back(fmt: str, graph: Graph) -> bool:
    """The graph serialized in fmt parses back to the same graph (as a multiset where the format has no order)."""
    return same_graph(fmt, graph, benchmark.FORMATS[fmt].parse(benchmark.serialize_checked(fmt, graph)))


# Every delimiter any format uses, and the shapes that break naive grammars.
HOSTILE = [
    "a|b",
    "|",
    "a\tb",
    "\t",
    "a\nb",
    "\n",
    "a\rb",
    "\r",
    "\r\n",
    "a -b",
    " -",
    "-",
    "a->b",
    "->",
    "-> ",
    "a-",
    "-a",
    ">",
    '"',
    'a"b',
    '""',
    "a,b",
    ",",
    " lead",
    "trail ",
    " ",
    "",
    "\\",
    "a\\",
    "\\|",
    "\\n",
    "#",
    "# @ id|name|type",
    "@ x",
    "> x",
    "NODES",
    "EDGES",
    "kind",
    "node",
    "edge",
    "{}",
    '{"k":"n"}',
    "\u2028",
    "\x85",
    "\x0b",
    "\x0c",
    "\x00",
    "\x1f",
    "<|endoftext|>",
    "Ирина -LEADS-> Орион",
    "[",
    "[e1] a",
    "]",
    "0",
]


def graph_with(value: str) -> Graph:
    """A graph carrying value in every field of a node and an edge."""
    return Graph(
        nodes=(Node(value, value, value), Node("plain", "Плейн", "type")),
        edges=(Edge(value, value, value), Edge(value, value, "plain"), Edge("plain", value, value)),
    )


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_bytes_on_the_article_graph(fmt, canonical):
    # The article's five must equal its script's output; the others are our own reviewed goldens.
    folder = "article" if fmt in benchmark.ARTICLE_FORMATS else "extra"
    expected = (GOLDEN / folder / f"graph.{fmt}.txt").read_bytes()
    assert benchmark.serialize_checked(fmt, canonical.graph).encode("utf-8") == expected


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_canonical_round_trip_keeps_order(fmt, canonical):
    assert read_back(fmt, canonical.graph)


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_hostile_value_round_trips(fmt, value):
    if fmt in ISON_FORMATS and value in ROW_END_WHITESPACE:  # the node (value, value, value)'s row ends in its type
        with pytest.raises(BenchmarkError) as caught:
            benchmark.serialize_checked(fmt, graph_with(value))
        assert str(caught.value) == ison_refused_at_row_end(fmt, f"node {value!r}", "type", value)
        return
    assert read_back(fmt, graph_with(value))


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_hostile_value_round_trips_with_edge_ids(fmt, value):
    graph = replace(graph_with(value), edge_ids=("e1", "e2", "e3"))
    if fmt in SETS_OF_TRIPLES:
        with pytest.raises(BenchmarkError, match="format turtle cannot carry --edge-ids"):
            benchmark.serialize_checked(fmt, graph)
        return
    if fmt in ISON_FORMATS and value in ROW_END_WHITESPACE:
        with pytest.raises(BenchmarkError) as caught:
            benchmark.serialize_checked(fmt, graph)
        assert str(caught.value) == ison_refused_at_row_end(fmt, f"node {value!r}", "type", value)
        return
    assert read_back(fmt, graph)


EDGE_ID_BYTES = {  # how each format shows an edge id ("e1") on the edge a -R-> b
    "json": '"id": "e1",',
    "jsonl": '{"k":"e","i":"e1","s":"a","r":"R","t":"b"}',
    "tsv": "edge\ta\tR\tb\te1",
    "edge_list": "[e1] a -R-> b",
    "dsl": "> e1|a|R|b",
    "json_compact": '{"id":"e1","relation":"R"',
    "pipe_table": "e1|a|b|R",
    "toon": "edges[1]{id,source,relation,target}:\n  e1,a,R,b",
    "yaml": "- id: e1\n  source: a",
    "markdown_kv": "id: e1\nsource: a",
    "ison": "table.edges\nid source relation target\ne1 a R b",
    "isongraph": "edges.R\nid source target\ne1 :t:a :t:b",
    "graphrag": "id|source|target|description\ne1|a|b|R",
    "lightrag": '{"id": "e1", "entity1": "a", "entity2": "b", "description": "R"}',
    "llamaindex": "A ({'label': 't', 'id': 'a'}) -> R ({'id': 'e1'}) -> B ({'label': 't', 'id': 'b'})",
    "llamaindex_properties": "A ({'label': 't', 'id': 'a'}) -> R ({'id': 'e1'}) -> B ({'label': 't', 'id': 'b'})",
    "llamaindex_text": "facts extracted from the provided text:\n\nA ({'label': 't', 'id': 'a'}) -> R ({'id': 'e1'}) "
    "-> B",
    "llamaindex_text_properties": "text:\n\nA ({'label': 't', 'id': 'a'}) -> R ({'id': 'e1'}) -> B ({'label': 't', "
    "'id': 'b'})",
    "neo4j_graphrag": (
        "<Record id='e1' source=<Node element_id='4:5f1c2a9e-7b3d-4c8e-9a61-0d2e4f6b8c17:0' labels=frozenset({'t'}) "
        "properties={'id': 'a', 'name': 'A'}> relation='R' target="
    ),
    "langchain": "[{'id': 'e1', 'source': {'id': 'a', 'name': 'A', 'type': 't'}, 'relation': 'R', 'target': {'id': "
    "'b',",
}


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_every_format_shows_edge_ids(fmt):
    if fmt in SETS_OF_TRIPLES:
        return  # refused, see test_hostile_value_round_trips_with_edge_ids
    graph = Graph((Node("a", "A", "t"), Node("b", "B", "t")), (Edge("a", "R", "b"),), ("e1",))
    assert EDGE_ID_BYTES[fmt] in benchmark.serialize_checked(fmt, graph)
    assert "e1" not in benchmark.serialize_checked(fmt, replace(graph, edge_ids=()))


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_duplicate_edges_survive(fmt):
    graph = Graph((Node("a", "A", "t"),), (Edge("a", "R", "a"), Edge("a", "R", "a")))
    if fmt in SETS_OF_TRIPLES:  # refused with one line naming the edge, never silently merged
        with pytest.raises(BenchmarkError, match=r"format turtle cannot carry the edge \('a', 'R', 'a'\) twice"):
            benchmark.serialize_checked(fmt, graph)
        return
    if fmt == "isongraph":  # ISONGraph is a simple graph: one edge of a relation from a node to another
        for edge_ids in ((), ("e1", "e2")):
            with pytest.raises(BenchmarkError) as caught:
                benchmark.serialize_checked(fmt, replace(graph, edge_ids=edge_ids))
            assert str(caught.value) == (
                "format isongraph cannot carry edge ('a', 'R', 'a') beside ('a', 'R', 'a'): ison-graph 1.4.0 keeps one "
                "edge of a relation from one node to another (edges.R); leave isongraph out of --formats, or remove "
                "the duplicate"
            )
        return
    assert read_back(fmt, graph)


nfc_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12).map(
    lambda s: unicodedata.normalize("NFC", s)
)


@st.composite
def graphs(draw):
    ids = draw(st.lists(nfc_text, min_size=1, max_size=5, unique=True))
    nodes = tuple(Node(i, draw(nfc_text), draw(nfc_text)) for i in ids)
    edge = st.builds(Edge, st.sampled_from(ids), nfc_text, st.sampled_from(ids))
    return Graph(nodes, tuple(draw(st.lists(edge, max_size=6))))


@pytest.mark.parametrize("fmt", ALL_FORMATS)
@settings(max_examples=50, deadline=None)
@given(graph=graphs())
def test_any_valid_graph_with_edge_ids_round_trips_exactly(fmt, graph):
    if fmt in SETS_OF_TRIPLES:
        return  # refused, see test_hostile_value_round_trips_with_edge_ids
    graph = replace(graph, edge_ids=tuple(f"e{k + 1}" for k in range(len(graph.edges))))
    try:
        assert read_back(fmt, graph)
    except BenchmarkError as e:  # what ISON's libraries cannot carry, named in one line
        assert refused_by_ison(fmt, e), e


@pytest.mark.parametrize("fmt", ALL_FORMATS)
@settings(max_examples=150, deadline=None)
@given(graph=graphs())
def test_any_valid_graph_round_trips_exactly(fmt, graph):
    serialize, parse = benchmark.FORMATS[fmt][:2]
    if fmt in SETS_OF_TRIPLES and len(set(graph.edges)) < len(graph.edges):
        with pytest.raises(BenchmarkError, match="format turtle cannot carry the edge"):
            serialize(graph)
        return
    try:
        text = serialize(graph)
    except BenchmarkError as e:  # what ISON's libraries cannot carry, named in one line
        assert refused_by_ison(fmt, e), e
        return
    if unicodedata.normalize("NFC", text) != text:
        # Two NFC values can compose across a delimiter; then the check must refuse, never pass silently.
        with pytest.raises(BenchmarkError, match=f"round-trip check failed for format {fmt}"):
            benchmark.serialize_checked(fmt, graph)
    else:
        assert read_back(fmt, graph)


@pytest.mark.parametrize(
    "fmt, graph, expected",
    [
        (
            "edge_list",
            Graph((Node("a -b", "x|y", "t"),), (Edge("a -b", "R->S", "a -b"),)),
            "NODES\na -b|x\\|y|t\nEDGES\na \\-b -R\\->S-> a -b",
        ),
        (
            "edge_list",
            Graph((Node("a\\", "n\nl", "t"),), (Edge("a\\", "-", "a\\"),)),
            "NODES\na\\\\|n\\nl|t\nEDGES\na\\\\ ---> a\\\\",
        ),
        (
            "dsl",
            Graph((Node("a|b", "c\rd", "\\"),), (Edge("a|b", "R", "a|b"),)),
            "# @ id|name|type\n# > source|relation|target\n@ a\\|b|c\\rd|\\\\\n> a\\|b|R|a\\|b",
        ),
        (
            "tsv",
            Graph((Node('a"b', "c\td", "e\rf"),), (Edge('a"b', "", 'a"b'),)),
            'kind\tid/source\tname/relation\ttype/target\nnode\t"a""b"\t"c\td"\t"e\rf"\nedge\t"a""b"\t\t"a""b"',
        ),
        ("jsonl", Graph((Node("a\nb", "\u2028", "t"),), ()), '{"k":"n","i":"a\\nb","n":"\u2028","t":"t"}'),
        (
            "pipe_table",
            Graph((Node("a|b", "x", "t"),), (Edge("a|b", "R\n", "a|b"), Edge("a|b", "S", "a|b"))),
            "-----Entities-----\nid|name|type\na\\|b|x|t\n-----Relationships-----\nid|source|target|relation\n"
            "0|a\\|b|a\\|b|R\\n\n1|a\\|b|a\\|b|S",
        ),
        (
            "json_compact",
            Graph((Node("a", "Б", "t"),), (Edge("a", "R", "a"),)),
            '{"edges":[{"relation":"R","source":"a","target":"a"}],"nodes":[{"id":"a","name":"Б","type":"t"}]}',
        ),
    ],
)
def test_escaped_bytes(fmt, graph, expected):
    assert benchmark.serialize_checked(fmt, graph) == expected


@pytest.mark.parametrize(
    "fmt, text, message",
    [
        ("json", "{", "json line 1: Expecting property name enclosed in double quotes"),
        (
            "json",
            '{"nodes": [], "edges": [], "x": 1}',
            'json line 1: expected an object with exactly "nodes" and "edges"',
        ),
        (
            "json",
            '{"nodes": [{"id": "a", "name": "b"}], "edges": []}',
            "json line 1: nodes[0] is not an object of string fields id, name, type",
        ),
        (
            "jsonl",
            '{"k":"n","i":"a","n":"b","t":"c"}\n{"k":"x"}',
            'jsonl line 2: expected {"k":"n","i","n","t"} or {"k":"e",("i"),"s","r","t"} with '
            'string values, and "p":{properties} at the end',
        ),
        ("jsonl", "[1", "jsonl line 1: Expecting ',' delimiter"),
        (
            "tsv",
            "kind\tid\tname\ttype",
            "tsv line 1: expected the header 'kind\\tid/source\\tname/relation\\ttype/target'",
        ),
        (
            "tsv",
            "kind\tid/source\tname/relation\ttype/target\nnode\ta\tb",
            "tsv line 2: expected 4 tab-separated fields starting with node or edge",
        ),
        (
            "tsv",
            'kind\tid/source\tname/relation\ttype/target\nnode\t"a"x\tb\tc',
            "tsv line 2: '\t' expected after '\"'",
        ),
        ("edge_list", "a|b|c", "edge_list line 1: record before the NODES line"),
        ("edge_list", "NODES\na|b", "edge_list line 2: expected at least 3 '|'-separated fields, found 2"),
        (
            "edge_list",
            "NODES\nEDGES\na-R-> b",
            "edge_list line 3: expected 'source -RELATION-> target' (no ' -' found)",
        ),
        (
            "edge_list",
            "NODES\nEDGES\na -R->b",
            "edge_list line 3: expected 'source -RELATION-> target' (no '-> ' found)",
        ),
        ("edge_list", "NODES\na|b|c\\", "edge_list line 2: line ends with a lone backslash"),
        ("dsl", "@ a|b", "dsl line 1: expected at least 3 '|'-separated fields, found 2"),
        ("dsl", "% a|b|c", "dsl line 1: unknown marker '% '; lines start with '@ ', '> ' or '#'"),
        ("json_compact", "[]", 'json_compact line 1: expected an object with exactly "nodes" and "edges"'),
        (
            "pipe_table",
            "id|name|type",
            "pipe_table line 1: expected the tables -----Entities----- (id|name|type) and "
            "-----Relationships----- (id|source|target|relation)",
        ),
        (
            "pipe_table",
            "-----Entities-----\nid|name|type\n-----Relationships-----\nid|source|target|relation\ne7|a|b|R\n1|a|b|R",
            "pipe_table line 6: relationship id '1' is its row's position, but other ids are not: ids are all "
            "positions or all edge ids",
        ),
        (
            "edge_list",
            "NODES\nEDGES\n[e1] a -R-> b\na -R-> b",
            "edge_list line 4: expected every edge line with an '[id] ' in front, or none",
        ),
        (
            "dsl",
            "# @ id|name|type\n# > id|source|relation|target\n> a|R|b",
            "dsl line 3: expected at least 4 '|'-separated fields, found 3",
        ),
        (
            "pipe_table",
            "-----Entities-----\nid|name|type\n-----Relationships-----\nsource|target",
            "pipe_table line 4: expected the header 'id|source|target|relation'",
        ),
    ],
)
def test_parsers_refuse_malformed_text(fmt, text, message):
    with pytest.raises(BenchmarkError) as caught:
        benchmark.FORMATS[fmt].parse(text)
    assert str(caught.value) == message


def test_round_trip_failure_names_format_and_record(monkeypatch):
    def drops_last_edge(text):
        graph = benchmark.parse_dsl(text)
        return Graph(graph.nodes, graph.edges[:-1])

    monkeypatch.setitem(benchmark.FORMATS, "dsl", benchmark.Format(benchmark.serialize_dsl, drops_last_edge))
    graph = Graph((Node("a", "A", "t"),), (Edge("a", "R", "a"), Edge("a", "S", "a")))
    with pytest.raises(BenchmarkError) as caught:
        benchmark.serialize_checked("dsl", graph)
    assert str(caught.value) == (
        "round-trip check failed for format dsl: edge ('a', 'S', 'a') appears 1 time(s) in the input "
        "and 0 time(s) after parsing; nothing was written"
    )


def test_round_trip_check_survives_python_O():
    # The check must not be an assert: run it under -O with a parser that loses a node.
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import benchmark as b\n"
        "b.FORMATS['json'] = b.Format(b.serialize_json, lambda t: b.Graph((), ()))\n"
        "g = b.Graph((b.Node('a', 'A', 't'),), ())\n"
        "try:\n    b.serialize_checked('json', g)\nexcept b.BenchmarkError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-O", "-c", code, str(ROOT)], capture_output=True, text=True)
    assert done.stdout == (
        "round-trip check failed for format json: node ('a', 'A', 't') appears 1 time(s) in the input "
        "and 0 time(s) after parsing; nothing was written\n"
    )
    assert done.stderr == ""


@settings(max_examples=300, deadline=None)
@given(graph=graphs())
def test_hand_written_json_matches_json_dumps(graph):
    as_dict = {"nodes": [n._asdict() for n in graph.nodes], "edges": [e._asdict() for e in graph.edges]}
    assert benchmark.serialize_json(graph) == json.dumps(as_dict, ensure_ascii=False, indent=2, sort_keys=True)
    lines = [
        json.dumps({"k": "n", "i": n.id, "n": n.name, "t": n.type}, ensure_ascii=False, separators=(",", ":"))
        for n in graph.nodes
    ]
    lines += [
        json.dumps({"k": "e", "s": e.source, "r": e.relation, "t": e.target}, ensure_ascii=False, separators=(",", ":"))
        for e in graph.edges
    ]
    assert benchmark.serialize_jsonl(graph) == "\n".join(lines)


def test_empty_graph_in_every_format():
    empty = Graph((), ())
    assert benchmark.serialize_json(empty) == '{\n  "edges": [],\n  "nodes": []\n}'
    for fmt, (serialize, parse, *_) in benchmark.FORMATS.items():
        assert parse(serialize(empty)) == empty, fmt


def test_the_peers_formats_are_read_back_by_their_own_libraries_and_recorded(tmp_path):
    import rdflib
    import toon_format
    import yaml

    assert benchmark.main(["--formats", "json,toon,yaml,turtle,markdown_kv", "--out", str(tmp_path)]) == 0
    source = json.loads((ROOT / "data" / "graph.json").read_text(encoding="utf-8"))
    assert toon_format.decode((tmp_path / "graph.toon.txt").read_text(encoding="utf-8")) == source
    assert yaml.safe_load((tmp_path / "graph.yaml.txt").read_text(encoding="utf-8")) == source
    rdf = rdflib.Graph().parse(data=(tmp_path / "graph.turtle.txt").read_text(encoding="utf-8"), format="turtle")
    node, relation = "urn:graph:node:", "urn:graph:relation:"
    triples = {
        (str(s)[len(node) :], str(p)[len(relation) :], str(o)[len(node) :])
        for s, p, o in rdf
        if str(p).startswith(relation)
    }
    assert triples == {(e["source"], e["relation"], e["target"]) for e in source["edges"]}
    labels = {str(s)[len(node) :]: str(o) for s, o in rdf.subject_objects(rdflib.RDFS.label)}
    assert labels == {n["id"]: n["name"] for n in source["nodes"]}
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["environment"]["toon-format"] == "1.2.0" and "PyYAML" in manifest["environment"]


def test_a_format_whose_library_is_missing_says_what_to_install(tmp_path, capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "toon_format" else real(name, *a))
    assert benchmark.main(["--formats", "json,toon", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        "error: --formats toon needs the toon-format package, which is not installed; run: "
        "pip install 'graphrag-format-benchmark[peers]', or pip install -r requirements.lock.txt in a checkout\n"
    )


# ---- properties: typed values on nodes and edges, in every format's own idiom

PROPERTY_VALUES = [
    *HOSTILE,
    0,
    -1,
    7,
    10**30,
    1.0,
    2.5,
    -0.0,
    1e300,
    1e-7,
    True,
    False,
    "1969",
    "2.5",
    "-0",
    "1e3",
    "true",
    "false",
    "null",
    "None",
    "2019-05-01",
    '"quoted"',
    "key=value",
    "a: b",
    "Описание, с запятой",
    "\u00e9t\u00e9",
    "1.",
    ".5",
    "+1",
    "0x10",
]


def graph_with_props(value, dotted: bool = True) -> Graph:
    """A graph whose first node and first edge carry value in a property, beside records that have none (and a
    property with a dotted name, which ISONGraph refuses, unless dotted is False)."""
    return Graph(
        nodes=(Node("a", "A", "t"), Node("b", "B", "t")),
        edges=(Edge("a", "R", "b"), Edge("b", "S", "a")),
        node_props=((("description", value), ("valid.from-year" if dotted else "valid_from_year", 3)), ()),
        edge_props=((("since", value),), ()),
    )


DOTTED_NAMES_REFUSED = ("isongraph",)


def ison_property_refusal(fmt: str, value) -> str | None:
    """The one line an ISON format refuses graph_with_props(value) with, or None when it carries it: a float written
    with an exponent reads back as text; in ison, the edge's since is its row's last cell (in isongraph, since sorts
    before source and target, and the row ends in a reference)."""
    if isinstance(value, float) and "e" in str(value):
        return (
            f"format {fmt} cannot carry {value!r}, the property description of node 'a': {ISON_LIBRARIES[fmt]} writes "
            f"it as {value}, which reads back as text (a float reads back only as digits.digits); leave {fmt} out of "
            "--formats"
        )
    if fmt == "ison" and value in ROW_END_WHITESPACE:
        return ison_refused_at_row_end(fmt, "edge ('a', 'R', 'b')", "property since", value)
    return None


@pytest.mark.parametrize("value", PROPERTY_VALUES, ids=repr)
@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_property_values_round_trip_with_their_types(fmt, value):
    graph = graph_with_props(value, dotted=fmt not in DOTTED_NAMES_REFUSED)
    refusal = ison_property_refusal(fmt, value) if fmt in ISON_FORMATS else None
    if refusal is not None:
        with pytest.raises(BenchmarkError) as caught:
            benchmark.serialize_checked(fmt, graph)
        assert str(caught.value) == refusal
        return
    parsed = benchmark.FORMATS[fmt].parse(benchmark.serialize_checked(fmt, graph))
    assert benchmark.first_difference(graph, parsed) is None
    value_back = dict(parsed.node_props[parsed.nodes.index(Node("a", "A", "t"))])["description"]
    assert type(value_back) is type(value) or isinstance(value, float) and isinstance(value_back, (int, float)), (
        value,
        value_back,
    )


@pytest.mark.parametrize("fmt", [f for f in ALL_FORMATS if f not in SETS_OF_TRIPLES])
def test_properties_round_trip_with_edge_ids(fmt):
    graph = replace(graph_with_props("x|y=z", dotted=fmt not in DOTTED_NAMES_REFUSED), edge_ids=("e1", "e2"))
    assert read_back(fmt, graph)


def test_a_format_that_turns_a_boolean_into_a_number_fails_the_round_trip(monkeypatch):
    # True == 1 in Python: the check compares types too, so such a format cannot pass unseen.
    def reads_true_as_one(text):
        graph = benchmark.parse_dsl(text)
        return replace(
            graph, node_props=tuple(tuple((k, 1 if v is True else v) for k, v in p) for p in graph.node_props)
        )

    monkeypatch.setitem(benchmark.FORMATS, "dsl", benchmark.Format(benchmark.serialize_dsl, reads_true_as_one))
    with pytest.raises(BenchmarkError) as caught:
        benchmark.serialize_checked("dsl", graph_with_props(True))
    assert str(caught.value) == (
        "round-trip check failed for format dsl: node ('a', 'A', 't') with properties {'description': True, "
        "'valid.from-year': 3} "
        "appears 1 time(s) in the input and 0 time(s) after parsing; nothing was written"
    )


PROPERTY_BYTES = {  # how each format writes the node property founded=1005 and the edge property since="2019"
    "json": '"properties": {\n        "founded": 1005\n      },',
    "jsonl": '"t":"c","p":{"founded":1005}}',
    "tsv": "kind\tid/source\tname/relation\ttype/target\tfounded\tsince\n"
    'node\ta\tA\tc\t1005\t\nedge\ta\tR\ta\t\t"""2019"""',
    "edge_list": 'a|A|c|founded=1005\nEDGES\na -R-> a|since="2019"',
    "dsl": '@ a|A|c|founded=1005\n> a|R|a|since="2019"',
    "json_compact": '"properties":{"founded":1005}',
    "pipe_table": "id|name|type|founded\na|A|c|1005",
    "toon": 'nodes[1]{id,name,type,founded}:\n  a,A,c,1005\nedges[1]{source,relation,target,since}:\n  a,R,a,"2019"',
    "yaml": "  type: c\n  founded: 1005",
    "markdown_kv": "type: c\nfounded: 1005",
    "ison": 'table.nodes\nid name type founded\na A c 1005\n\ntable.edges\nsource relation target since\na R a "2019"',
    # ISON's canonical column order: id first, then by UTF-8 bytes (since before source)
    "isongraph": 'edges.R\nsince source target\n"2019" :c:a :c:a\n\nnodes.c\nid founded name\na 1005 A',
    "turtle": 'rdfs:label "A" ; p:founded 1005 .\nn:a r:R n:a .\n[ rdf:subject n:a ; rdf:predicate r:R ; '
    'rdf:object n:a ] p:since "2019" .',
    "graphrag": "id|entity|description|number of "
    "relationships|type|node_id|founded\n0|A||2|c|a|1005\n\n\n-----Relationships-----\n"
    'id|source|target|description|since\n0|a|a|R|"2019"',
    "lightrag": '{"entity": "A", "type": "c", "description": "UNKNOWN", "id": "a", "founded": '
    '1005}\n```\n\nKnowledge Graph Data (Relationship):\n\n```json\n{"entity1": "a", "entity2": "a", '
    '"description": "R", "since": "2019"}',
    "llamaindex": "A ({'founded': 1005, 'label': 'c', 'id': 'a'}) -> R ({'since': '2019'}) -> A ({'founded': 1005, "
    "'label': 'c', 'id': 'a'})",
    "llamaindex_properties": "A ({'founded': 1005, 'label': 'c', 'id': 'a'}) -> R ({'since': '2019'}) -> A "
    "({'founded': 1005, 'label': 'c', 'id': 'a'})",
    "llamaindex_text": "text:\n\nA ({'founded': 1005, 'label': 'c', 'id': 'a'}) -> R ({'since': '2019'}) -> A",
    "llamaindex_text_properties": "text:\n\nA ({'founded': 1005, 'label': 'c', 'id': 'a'}) -> R ({'since': '2019'}) "
    "-> A",
    "neo4j_graphrag": "labels=frozenset({'c'}) properties={'id': 'a', 'name': 'A', 'founded': 1005}> "
    "properties={'since': '2019'}>",
    "langchain": "'type': 'c', 'founded': 1005}, 'properties': {'since': '2019'}}]",
}


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_every_format_writes_properties_in_its_own_idiom(fmt):
    graph = Graph((Node("a", "A", "c"),), (Edge("a", "R", "a"),), (), ((("founded", 1005),),), ((("since", "2019"),),))
    assert PROPERTY_BYTES[fmt] in benchmark.serialize_checked(fmt, graph)


property_value = st.one_of(nfc_text, st.integers(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False))
# no input record has those
property_name = st.from_regex(r"[a-z][a-z0-9_]{0,6}(\.[a-z0-9]{1,3})?", fullmatch=True).filter(
    lambda k: k not in benchmark.RESERVED_KEYS and k not in benchmark.NODE_FIELDS | benchmark.EDGE_FIELDS
)
props = st.dictionaries(property_name, property_value, max_size=3).map(lambda d: tuple(sorted(d.items())))


@pytest.mark.parametrize("fmt", ALL_FORMATS)
@settings(max_examples=40, deadline=None)
@given(graph=graphs(), data=st.data())
def test_any_graph_with_properties_round_trips(fmt, graph, data):
    graph = replace(
        graph,
        node_props=tuple(data.draw(props) for _ in graph.nodes),
        edge_props=tuple(data.draw(props) for _ in graph.edges),
    )
    if fmt in SETS_OF_TRIPLES and len(set(graph.edges)) < len(graph.edges):
        return  # refused, see test_duplicate_edges_survive
    try:
        text = benchmark.FORMATS[fmt].serialize(graph)
    except BenchmarkError as e:  # what ISON's libraries cannot carry, named in one line
        assert refused_by_ison(fmt, e), e
        return
    if unicodedata.normalize("NFC", text) != text:
        with pytest.raises(BenchmarkError, match=f"round-trip check failed for format {fmt}"):
            benchmark.serialize_checked(fmt, graph)
    else:
        parsed = benchmark.FORMATS[fmt].parse(benchmark.serialize_checked(fmt, graph))
        assert benchmark.first_difference(graph, parsed) is None


@settings(max_examples=100, deadline=None)
@given(graph=graphs(), data=st.data())
def test_hand_written_json_with_properties_matches_json_dumps(graph, data):
    graph = replace(
        graph,
        node_props=tuple(data.draw(props) for _ in graph.nodes),
        edge_props=tuple(data.draw(props) for _ in graph.edges),
    )
    assert benchmark.serialize_json(graph) == json.dumps(
        formats.graph_dict(graph), ensure_ascii=False, indent=2, sort_keys=True
    )


# ---- yaml: the bytes a model reads, whichever PyYAML dumper is installed, and what a YAML 1.2 reader makes of them

# strings YAML 1.1 reads as strings, YAML 1.2 as numbers
YAML_12 = [
    "1e3",
    "1E5",
    "-2e10",
    "1.5e+3",
    ".5e-2",
    "0o17",
    "+12e1",
]


def test_yaml_keeps_characters_beyond_the_bmp_and_escapes_line_breaks_yaml_folds():
    graph = Graph(
        (Node("a", "Party \U0001f389", "event"), Node("b", "x\x85y\u2028z", "t"), Node("c", "\ue000\U0001f600", "t")),
        (Edge("a", "at \U0001f3e0", "b"),),
    )
    assert benchmark.serialize_checked("yaml", graph) == (
        'nodes:\n- id: a\n  name: Party \U0001f389\n  type: event\n- id: b\n  name: "x\\Ny\\Lz"\n  type: t\n'
        "- id: c\n  name: \ue000\U0001f600\n  type: t\nedges:\n- source: a\n  relation: at \U0001f3e0\n  target: b"
    )


@pytest.mark.parametrize(
    "value", YAML_12 + HOSTILE + ["Party \U0001f389", "\U0001f600 lead", "\U0001f600", "é\U00010348"], ids=repr
)
def test_yaml_bytes_are_the_same_from_the_c_and_the_pure_python_dumper(value):
    import yaml

    assert hasattr(yaml, "CSafeDumper"), "the pinned PyYAML wheel carries libyaml"
    graph = graph_with(value)
    assert formats.serialize_yaml(graph) == formats.yaml_dump_whole(graph, dumper=yaml.SafeDumper)


@pytest.mark.parametrize(
    "value", YAML_12 + HOSTILE + ["Party \U0001f389", "yes", "null", "0x1F", ".inf", "1_000"], ids=repr
)
def test_a_yaml_1_2_reader_reads_the_strings_written(value):
    from ruamel.yaml import YAML

    graph = graph_with(value)
    read = YAML(typ="safe", pure=True).load(formats.serialize_yaml(graph))
    assert [n["name"] for n in read["nodes"]] == [value, "Плейн"] and read["edges"][0]["relation"] == value
    for number in YAML_12:
        assert f"'{number}'" in formats.serialize_yaml(graph_with(number))


@pytest.mark.parametrize(
    "value", YAML_12 + HOSTILE + ["x" * 300, "a\nb\nc", "k: v", "- x", "? q", "'", "Party \U0001f389"], ids=repr
)
def test_yaml_joined_record_by_record_is_the_whole_dump(value):
    graph = graph_with(value)
    with_props = replace(
        graph,
        node_props=((("k" * 200, value), (value or "p", 1.5)), (("flag", True), ("n", 1))),
        edge_props=((("when", None),), (("n", 1),), ((value or "q", False),)),
    )
    for g in (graph, with_props):
        assert formats.serialize_yaml(g) == formats.yaml_dump_whole(g)


@settings(max_examples=100, deadline=None)
@given(graph=graphs())
def test_yaml_joined_is_the_whole_dump_on_any_graph(graph):
    assert formats.serialize_yaml(graph) == formats.yaml_dump_whole(graph)


def test_a_permuted_turtle_text_is_proven_from_the_checked_one_and_anything_else_is_parsed(monkeypatch):
    parsed = []
    real_parse = formats.parse_turtle
    monkeypatch.setitem(
        benchmark.FORMATS,
        "turtle",
        benchmark.Format(formats.serialize_turtle, lambda t: parsed.append(t) or real_parse(t)),
    )
    nodes = tuple(Node(f"n{i}", f"Node {i}", "t") for i in range(6))
    edges = tuple(Edge(f"n{i}", "R", f"n{(i + 1) % 6}") for i in range(6))
    graph = Graph(nodes, edges)
    proven: dict = {}
    for order in ([0, 1, 2, 3, 4, 5], [5, 3, 1, 0, 2, 4], [2, 0, 4, 1, 5, 3]):  # three edge orders of one context
        shown = graph.pick(order)
        formats.check_roundtrip_once("turtle", shown, benchmark.serialized("turtle", shown), proven)
    assert len(parsed) == 1  # the first parsed; the others are its statement lines in another order
    other = Graph(nodes, edges[:5])  # other records: parsed
    formats.check_roundtrip_once("turtle", other, benchmark.serialized("turtle", other), proven)
    assert len(parsed) == 2
    # a long string: always parsed
    multi = Graph((Node("a", "two\nlines", "t"), Node("b", "B", "t")), (Edge("a", "R", "b"),))
    proven = {}
    for _ in range(2):
        formats.check_roundtrip_once("turtle", multi, benchmark.serialized("turtle", multi), proven)
    assert len(parsed) == 4 and proven == {}


def test_a_permuted_turtle_text_with_a_statement_changed_is_parsed_and_fails(monkeypatch):
    nodes = tuple(Node(f"n{i}", f"Node {i}", "t") for i in range(4))
    graph = Graph(nodes, tuple(Edge(f"n{i}", "R", f"n{i + 1}") for i in range(3)))
    proven: dict = {}
    formats.check_roundtrip_once("turtle", graph, benchmark.serialized("turtle", graph), proven)
    shown = graph.pick([2, 1, 0])
    # what a faulty serializer could write
    broken = benchmark.serialized("turtle", shown).replace("r:R n:n1 .", "r:R n:n3 .")
    with pytest.raises(BenchmarkError, match="round-trip check failed for format turtle: edge"):
        formats.check_roundtrip_once("turtle", shown, broken, proven)


def test_a_permuted_yaml_text_is_proven_from_the_checked_one_unless_an_anchor_could_tie_its_items(monkeypatch):
    parsed = []
    real_parse = formats.parse_yaml
    monkeypatch.setitem(
        benchmark.FORMATS, "yaml", benchmark.Format(formats.serialize_yaml, lambda t: parsed.append(t) or real_parse(t))
    )
    nodes = tuple(Node(f"n{i}", f"Node {i}\nsecond line" if i == 2 else f"Node {i}", "t") for i in range(5))
    graph = Graph(nodes, tuple(Edge(f"n{i}", "R", f"n{(i + 2) % 5}") for i in range(5)))
    proven: dict = {}
    for order in ([0, 1, 2, 3, 4], [4, 2, 0, 3, 1]):
        shown = graph.pick(order)
        formats.check_roundtrip_once("yaml", shown, benchmark.serialized("yaml", shown), proven)
    assert len(parsed) == 1  # a multi-line name stays inside its item: its continuation lines are indented
    keys, items = formats.yaml_items(benchmark.serialized("yaml", graph))
    assert keys == ("nodes:", "edges:") and sum(items.values()) == 10
    assert formats.yaml_items("nodes:\n- &a {id: x}\nedges: []") is None  # an anchor: parsed every time
    shown = graph.pick([1, 0, 2, 3, 4])
    broken = benchmark.serialized("yaml", shown).replace("target: n3", "target: n4", 1)
    with pytest.raises(BenchmarkError, match="round-trip check failed for format yaml: edge"):
        formats.check_roundtrip_once("yaml", shown, broken, proven)


@pytest.mark.parametrize("fmt", sorted(formats.PERMUTATION_PROOFS))
@settings(max_examples=150, deadline=None)
@given(graph=graphs(), seed=st.integers(0, 1000))
def test_what_a_permutation_proof_rests_on_holds_for_any_graph(fmt, graph, seed):
    """The claim behind PERMUTATION_PROOFS, on hostile values: two edge orders of a graph whose texts have the same
    parts parse to the same records (as multisets), so the second need not be parsed."""
    if fmt in SETS_OF_TRIPLES and len(set(graph.edges)) < len(graph.edges):
        return  # refused by the serializer
    order = list(range(len(graph.edges)))
    random.Random(seed).shuffle(order)
    first, second = benchmark.serialized(fmt, graph), benchmark.serialized(fmt, graph.pick(order))
    parts = formats.PERMUTATION_PROOFS[fmt]
    if parts(first) is not None and parts(first) == parts(second):
        parse = benchmark.FORMATS[fmt].parse
        assert benchmark.first_difference(parse(first), parse(second)) is None


def test_importing_the_package_registers_nothing_and_a_runs_first_parser_joins_the_registries():
    """No import side effect (#56): the package's formats and English template join benchmark.FORMATS and
    PROMPT_TEMPLATES where a run first reads them, the parser (its --formats help lists them), or a plan."""
    script = (
        "import benchmark, graphrag_format_benchmark\n"
        "from graphrag_format_benchmark import formats, frameworks, inputs, logged, options, pipeline\n"
        "print(','.join(benchmark.FORMATS), ','.join(benchmark.PROMPT_TEMPLATES))\n"
        "help = options.make_parser().format_help()\n"
        "print(len(benchmark.FORMATS), ','.join(benchmark.PROMPT_TEMPLATES), 'isongraph' in help)\n"
        "options.make_plan(options.parse_config(['--formats', 'toon,graphrag']))\n"
        "print(len(benchmark.FORMATS))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["json,jsonl,tsv,edge_list,dsl ru", "21 ru,en True", "21"]


def test_a_format_name_registered_twice_is_refused_and_the_registry_keeps_its_order():
    """The package's face joins the peers' and frameworks' Format records to benchmark.FORMATS through register_formats:
    a second format of a taken name would have replaced the first without a word, and a bare pair carries no library."""
    import graphrag_format_benchmark

    with pytest.raises(ValueError, match=r"format\(s\) json, lightrag registered twice; each name is one format"):
        graphrag_format_benchmark.register_formats(
            {"lightrag": benchmark.FORMATS["lightrag"], "json": benchmark.FORMATS["json"]}
        )
    assert (
        list(benchmark.FORMATS)[:5] == list(benchmark.ARTICLE_FORMATS)
        and list(benchmark.FORMATS)[-1] == "neo4j_graphrag"
    )
    with pytest.raises(ValueError, match=r"prompt template 'en' registered twice; each name is one template"):
        graphrag_format_benchmark.register_template("en", "anything")
    with pytest.raises(
        TypeError, match=r"^format\(s\) mine: register a benchmark.Format \(serializer, parser, library, no_edge_ids\)$"
    ):
        graphrag_format_benchmark.register_formats({"mine": (benchmark.serialize_json, benchmark.parse_json)})
    assert "mine" not in benchmark.FORMATS


def test_only_the_packages_face_registers_and_each_module_holds_its_formats_as_records():
    """No module joins a registry by being imported: formats.py, frameworks.py and inputs.py hold data, and
    graphrag_format_benchmark/__init__.py registers it, in one place, once (a second call changes nothing)."""
    import graphrag_format_benchmark
    from graphrag_format_benchmark import frameworks

    package = ROOT / "graphrag_format_benchmark"
    callers = sorted(
        str(f.relative_to(package))
        for f in package.rglob("*.py")
        if re.search(r"\bregister_(formats|template)\(", f.read_text(encoding="utf-8"))
    )
    assert callers == ["__init__.py"]
    records = {**formats.PEER_FORMATS, **frameworks.FRAMEWORK_FORMATS}
    assert all(isinstance(f, benchmark.Format) and benchmark.FORMATS[name] is f for name, f in records.items())
    assert {name: f.library[1] for name, f in benchmark.FORMATS.items() if f.library} == {
        "toon": "toon-format",
        "yaml": "PyYAML",
        "turtle": "rdflib",
        "ison": "ison-py",
        "isongraph": "ison-graph",
    }
    before = list(benchmark.FORMATS)
    graphrag_format_benchmark.join_registries()
    assert list(benchmark.FORMATS) == before


def test_a_format_that_cannot_carry_edge_ids_is_refused_with_edge_ids_by_its_own_reason(tmp_path, capsys):
    assert benchmark.main(["--edge-ids", "--formats", "json,turtle", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        "error: --edge-ids: format turtle cannot carry edge ids (an RDF triple has no id of its "
        "own); leave turtle out of --formats\n"
    )


# ---- ison and isongraph: written and read back by ISON's own libraries, ison-py and ison-graph


def test_ison_is_what_ison_py_writes_of_the_graphs_records_and_reads_back(canonical):
    import ison_parser

    with_props = graph_with_props("x y", dotted=False)
    for graph in (canonical.graph, with_props, replace(with_props, edge_ids=("e1", "e2"))):
        text = benchmark.serialize_checked("ison", graph)
        records = formats.graph_dict(graph, flat=True, absent=None)
        assert text == ison_parser.dumps(ison_parser.from_dict(records))  # the library's own conversion of the records
        assert {b.name: b.rows for b in ison_parser.loads(text).blocks} == records
    assert (
        benchmark.serialize_checked("ison", with_props)
        == 'table.nodes\nid name type description valid_from_year\na A t "x y" 3\nb B t null null\n\n'
        'table.edges\nsource relation target since\na R b "x y"\nb S a null'
    )


def test_isongraph_is_what_isongraph_writes_of_the_typed_graph_after_a_note_and_reads_back(canonical):
    from ison_graph import ISONGraph

    graph = canonical.graph
    text = benchmark.serialize_checked("isongraph", graph)
    note, body = text.split("\n", 1)
    assert note == (
        "# :TYPE:ID is the node ID of block nodes.TYPE; a row of block edges.RELATION is an edge source -RELATION-> "
        "target"
    )
    built = ISONGraph()  # the graph as ISONGraph's own API builds it: a node by (type, id), an edge by relation
    kind = {n.id: n.type for n in graph.nodes}
    for n in graph.nodes:
        built.add_node(n.type, n.id, name=n.name)
    for e in graph.edges:
        built.add_edge(e.relation, (kind[e.source], e.source), (kind[e.target], e.target))
    assert body == built.to_ison()
    back = ISONGraph.from_ison(text)  # the note is an ISON comment, which the reader skips
    assert sorted((n.type, n.id, n.properties) for n in back.nodes()) == sorted(
        (n.type, n.id, {"name": n.name}) for n in graph.nodes
    )
    assert sorted(e.key for e in back.edges()) == sorted(
        (e.relation, (kind[e.source], e.source), (kind[e.target], e.target)) for e in graph.edges
    )


def test_isongraph_carries_ids_types_and_relations_its_references_and_block_names_cannot_hold():
    from ison_graph import ISONGraph

    graph = Graph(
        (
            Node("Ada Lovelace", "Ada", "big city"),
            Node("a:b|c%", "A B", "entity"),
            Node("", "empty", "person"),
            Node("---x", "dash", "person"),
        ),
        (
            Edge("Ada Lovelace", "lives in", "a:b|c%"),
            Edge("a:b|c%", "", "Ada Lovelace"),
            Edge("", "RELATED_TO", "---x"),
            Edge("---x", "KNOWS", ""),
        ),
    )
    text = benchmark.serialize_checked("isongraph", graph)
    assert text == (
        "# :TYPE:ID is the node ID of block nodes.TYPE; a row of block edges.RELATION is an edge source -RELATION-> "
        "target; in an ID, %XX is a UTF-8 byte (%20 a space) and % alone the empty ID; where a row has a relation or a "
        "type value, that is the edge's relation or the node's type\n"
        "edges.KNOWS\nsource target\n:person:%2D--x :person:%\n\n"
        'edges.RELATED_TO\nrelation source target\n"" :entity:a%3Ab%7Cc%25 :entity:Ada%20Lovelace\n'
        '"lives in" :entity:Ada%20Lovelace :entity:a%3Ab%7Cc%25\nnull :person:% :person:%2D--x\n\n'
        'nodes.entity\nid name type\nAda%20Lovelace Ada "big city"\na%3Ab%7Cc%25 "A B" null\n\n'
        "nodes.person\nid name\n% empty\n%2D--x dash"
    )
    back = ISONGraph.from_ison(text)
    assert sorted(n.ref for n in back.nodes()) == [
        ("entity", "Ada%20Lovelace"),
        ("entity", "a%3Ab%7Cc%25"),
        ("person", "%"),
        ("person", "%2D--x"),
    ]
    assert benchmark.first_difference(graph, formats.parse_isongraph(text)) is None
    for odd in ("²", "-²", "1066"):  # ISONGraph.add_node takes an id of digits for a number: int("²") would fail
        assert read_back("isongraph", Graph((Node(odd, "x", "t"),), (Edge(odd, "R", odd),)))


A_NODE = Node("a", "A", "t")


def one_node(node_props=(), edge_props=(), node=A_NODE) -> Graph:
    """A node with a self-loop R, each with the properties given."""
    return Graph((node,), (Edge(node.id, "R", node.id),), (), (node_props,), (edge_props,))


ISON_PY, ISON_GRAPH = "ison-py 1.2.0", "ison-graph 1.4.0 (through ison-py 1.2.0)"
ISON_REFUSALS = [  # what each library cannot carry, and the one line that says so
    (
        "ison",
        one_node(node=Node("---", "a", "t")),
        "format ison cannot carry '---', the id of node '---': ison-py 1.2.0 writes it unquoted at the start of a row, "
        "which the reader takes for a summary line ('---'); leave ison out of --formats",
    ),
    (
        "ison",
        one_node(node=Node("\u3000#x", "a", "t")),
        "format ison cannot carry '\\u3000#x', the id of node '\\u3000#x': ison-py 1.2.0 writes it unquoted at the "
        "start of a row, which the reader takes for a comment (a '#' after whitespace); leave ison out of --formats",
    ),
    (
        "ison",
        Graph((Node("\u3000", "\u3000", "\u3000a.b"),), ()),
        "format ison cannot carry '\\u3000a.b', the type of node '\\u3000': ison-py 1.2.0 writes it unquoted alone in "
        "a row, which the reader takes for a block header; leave ison out of --formats",
    ),
    (
        "ison",
        one_node(edge_props=(("weight", 1e-07),)),
        "format ison cannot carry 1e-07, the property weight of edge ('a', 'R', 'a'): ison-py 1.2.0 writes it as "
        "1e-07, which reads back as text (a float reads back only as digits.digits); leave ison out of --formats",
    ),
    (
        "ison",
        one_node((("valid", 1), ("valid.from", 2))),
        "format ison cannot carry the node property 'valid.from' beside 'valid': ison-py 1.2.0 reads a dotted field "
        "name as a path into the field before its dot; rename the property, or leave ison out of --formats",
    ),
    (
        "isongraph",
        one_node(edge_props=(("a", "---"),)),  # a sorts before source: the row's first cell
        "format isongraph cannot carry '---', the property a of edge ('a', 'R', 'a'): ison-graph 1.4.0 (through "
        "ison-py 1.2.0) writes it unquoted at the start of a row, which the reader takes for a summary line ('---'); "
        "leave isongraph out of --formats",
    ),
    (
        "isongraph",
        one_node((("valid.from", 2),)),
        "format isongraph cannot carry node 'a' property 'valid.from': ison-graph 1.4.0 refuses a property name with "
        "'.'; rename the property, or leave isongraph out of --formats",
    ),
    (
        "isongraph",
        one_node((("node_id", 2),)),
        "format isongraph cannot carry node 'a' property 'node_id': ison-graph 1.4.0 reads properties back as keyword "
        "arguments of add_node(node_type, node_id, **properties); rename the property, or leave isongraph out of "
        "--formats",
    ),
    (
        "isongraph",
        one_node(edge_props=(("rel_type", "x"),)),
        "format isongraph cannot carry edge ('a', 'R', 'a') property 'rel_type': ison-graph 1.4.0 reads properties "
        "back as keyword arguments of add_edge(rel_type, source, target, **properties); rename the property, or leave "
        "isongraph out of --formats",
    ),
    (
        "isongraph",
        Graph((Node("a", "A", "t"), Node("b", "B", "t")), (Edge("a", "x y", "b"), Edge("a", "x|y", "b"))),
        "format isongraph cannot carry edge ('a', 'x|y', 'b') beside ('a', 'x y', 'b'): ison-graph 1.4.0 keeps one "
        "edge of a relation from one node to another (edges.RELATED_TO); leave isongraph out of --formats, or remove "
        "the duplicate",
    ),
]


@pytest.mark.parametrize("fmt, graph, message", ISON_REFUSALS)
def test_what_isons_libraries_cannot_carry_is_refused_in_one_line_naming_it(fmt, graph, message):
    with pytest.raises(BenchmarkError) as caught:
        benchmark.serialize_checked(fmt, graph)
    assert str(caught.value) == message
    other = "isongraph" if fmt == "ison" else "ison"  # a limit of the one library, not a rule of ours
    if "1e-07" not in message and "beside 'valid'" not in message:  # ISONGraph refuses those too, through ison-py
        assert read_back(other, graph)


def test_isongraph_cites_each_edge_at_the_place_its_text_shows_it(canonical):
    from graphrag_format_benchmark import frameworks

    graph = canonical.graph
    shown, relation = [], None
    for line in benchmark.serialize_checked("isongraph", graph).split("\n"):  # the rows of each edges.RELATION block
        if line.startswith("edges."):
            relation = line[len("edges.") :]
        elif not line or line.startswith("nodes."):
            relation = None
        elif relation is not None and line.startswith(":"):
            source, target = (ref.rsplit(":", 1)[1] for ref in line.split(" "))
            shown.append(Edge(source, relation, target))
    order = frameworks.cited_order("isongraph", graph)
    assert shown == [graph.edges[k] for k in order] and sorted(order) == list(range(len(graph.edges)))
    assert order[:3] == [7, 6, 9]  # edges.DEVELOPED_BY first
    assert frameworks.cited_order("ison", graph) is None  # ison shows the edges in the graph's order
    assert frameworks.cited_order("isongraph", replace(graph, edge_ids=tuple(f"e{k}" for k in range(13)))) is None


def test_ison_and_isongraph_files_are_read_back_by_their_own_libraries_and_recorded(tmp_path):
    import ison_parser
    from ison_graph import ISONGraph

    from graphrag_format_benchmark import artifacts

    assert benchmark.main(["--formats", "json,ison,isongraph", "--out", str(tmp_path)]) == 0
    source = json.loads((ROOT / "data" / "graph.json").read_text(encoding="utf-8"))
    document = ison_parser.loads((tmp_path / "graph.ison.txt").read_text(encoding="utf-8"))
    assert {b.name: b.rows for b in document.blocks} == source
    back = ISONGraph.from_ison((tmp_path / "graph.isongraph.txt").read_text(encoding="utf-8"))
    assert sorted((n.id, n.properties["name"], n.type) for n in back.nodes()) == sorted(
        (n["id"], n["name"], n["type"]) for n in source["nodes"]
    )
    assert sorted((e.source[1], e.rel_type, e.target[1]) for e in back.edges()) == sorted(
        (e["source"], e["relation"], e["target"]) for e in source["edges"]
    )
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert {k: manifest["environment"][k] for k in ("ison-py", "ison-graph")} == {
        "ison-py": "1.2.0",
        "ison-graph": "1.4.0",
    }
    # ISONGraph writes and reads through ison-py's canonical writer and reader: both are recorded for it alone
    assert artifacts.format_library_versions(["isongraph"]) == {"ison-graph": "1.4.0", "ison-py": "1.2.0"}


def test_isongraph_without_its_library_says_what_to_install(tmp_path, capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ison_graph" else real(name, *a))
    assert benchmark.main(["--formats", "json,ison,isongraph", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        "error: --formats isongraph needs the ison-graph package, which is not installed; run: "
        "pip install 'graphrag-format-benchmark[peers]', or pip install -r requirements.lock.txt in a checkout\n"
    )


@pytest.mark.parametrize("flags", [(), ("--edge-ids", "--ids", "original,short")], ids=["places", "edge-ids"])
def test_the_solver_scores_one_in_ison_and_isongraph_on_hostile_names_and_a_lightrag_store(tmp_path, flags):
    """Per-question contexts of the hostile-names graph (digits, '#1', '--', emoji, 'a.b.c' and '1066' as ids) and of
    LightRAG's store (ids with spaces and ':', relations that are sentences): every answer and path right, cited by
    place as shown (isongraph sorts its rows) or by edge id."""
    (tmp_path / "hostile.json").write_text(json.dumps(hostile_names_graph(50), ensure_ascii=False), encoding="utf-8")
    for k, graph in enumerate((tmp_path / "hostile.json", GOLDEN / "frameworks" / "medium" / "store" / "lightrag")):
        out = tmp_path / f"out{k}"
        done = run_cli(
            *("--graph", str(graph), "--generate-questions", "20", "--prompt", "en", "--context", "khop", *flags),
            *("--model", "solver", "--formats", "json,ison,isongraph", "--out", str(out)),
        )
        assert done.returncode == 0, done.stderr
        cells = json.loads((out / "results.json").read_text(encoding="utf-8"))["cells"]
        assert {c["format"] for c in cells} == {"json", "ison", "isongraph"}
        assert all(c["answer_correct"] and (c["path_exact"] or c["insufficient"]) for c in cells)


def test_the_docs_quote_what_bench_ison_table_makes_of_isons_example_graph():
    """docs/formats.md quotes bench/ison_table.py's output; the part that needs no run (ISON's example graph, counted
    as the page prints it, as the libraries write it and in our formats) is made again here and found there."""
    sys.path.insert(0, str(ROOT / "bench"))
    import ison_table

    docs = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8").split("\n")
    lines = ison_table.example_table()
    assert len(lines) == 12 and all(line in docs for line in lines if line)
    assert "| ISONGraph 1.4.0's to_ison (integer ids) | 52 | 64.6% | 52 | 64.6% |" in lines
