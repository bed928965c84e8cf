"""frameworks.py against the frameworks' own code: each fixture store read as a user's run reads it, laid out by our
formats, compared byte for byte with what the framework's own context builder made of the same store
(tests/golden/frameworks/, made by bench/framework_goldens.py at the versions in its VERSIONS.json). Where we differ
on purpose (docs/formats.md), the test makes exactly that difference and no other."""

import ast
import json
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import framework_goldens  # noqa: E402
import framework_stores  # noqa: E402

import benchmark
from benchmark import Problems, lex, lexed_text
from graphrag_format_benchmark import frameworks, inputs

GOLDEN = ROOT / "tests" / "golden" / "frameworks"
STORE_FIXTURES = ("small", "hostile", "medium", "awkward")
# layout -> the store it is read from, inside the fixture's store folder (written by the framework's own storage code)
READ = {
    "graphrag": "graphrag/entities.parquet",
    "lightrag": "lightrag/graph_chunk_entity_relation.graphml",
    **{f: "llamaindex/property_graph_store.json" for f in frameworks.LLAMAINDEX_LAYOUTS},
    "langchain": "neo4j/graph.json",
    "neo4j_graphrag": "neo4j/graph.json",
}


@pytest.fixture(scope="module")
def fixtures():
    """fixture -> the folder holding its stores, as the frameworks' own storage code wrote them
    (bench/framework_goldens.py)."""
    return {name: GOLDEN / name / "store" for name in framework_goldens.fixtures()}


def golden(fixture: str, layout: str) -> str:
    return (GOLDEN / fixture / f"{layout}.txt").read_bytes().decode("utf-8")


def read(folder, layout: str) -> benchmark.Graph:
    """The graph a run over this store measures with layout as its baseline."""
    file = READ[layout]
    records, _, _ = inputs.read_graph_file(folder / file, layouts=(layout,))
    problems = Problems()
    graph = benchmark.validate_graph(records, str(folder / file), problems)
    assert not problems.lines
    return graph


def unescaped(text: str, fmt: str) -> str:
    """Our text with the escapes GraphRAG's and LlamaIndex's own texts leave out ('\\|', '\\n', '\\->'...) undone: in
    LlamaIndex's names and relations only (a properties repr is printed as LlamaIndex prints it)."""
    if fmt not in frameworks.LLAMAINDEX_LAYOUTS:
        return "\n".join(lexed_text(lex(fmt, k, line)) for k, line in enumerate(text.split("\n"), 1))
    raw = lambda part: part[0] + (f" ({part[1]!r})" if part[1] else "")  # noqa: E731
    return "\n".join(
        " -> ".join(map(raw, frameworks._llama_parts(fmt, k, line))) if line else line
        for k, line in enumerate(text.split("\n"), 1)
    )


HOSTILE_ESCAPES = {"hostile"}  # fixtures whose values hold the delimiters we escape (docs/formats.md)


def test_the_goldens_say_which_versions_made_them():
    versions = json.loads((GOLDEN / "VERSIONS.json").read_text(encoding="utf-8"))
    assert {k: v["pins"] for k, v in versions.items()} == {k: list(v) for k, v in framework_goldens.FRAMEWORKS.items()}
    for framework, entry in versions.items():
        for pin in entry["pins"]:
            assert pin in entry["freeze"], (framework, pin)


@pytest.mark.parametrize("fixture", STORE_FIXTURES)
def test_graphrag_is_graphrags_own_local_context(fixtures, fixture):
    graph = read(fixtures[fixture], "graphrag")
    ours = benchmark.serialize_checked("graphrag", graph)
    theirs = golden(fixture, "graphrag").removesuffix("\n")  # the table's own last newline: the prompt's
    assert (unescaped(ours, "graphrag") if fixture in HOSTILE_ESCAPES else ours) == theirs
    unweighted = benchmark.Graph(
        graph.nodes,
        graph.edges,
        (),
        graph.node_props,
        tuple(tuple(p for p in props if p[0] != "weight") for props in graph.edge_props),
    )
    ours = benchmark.serialize_checked("graphrag", unweighted)  # include_relationship_weight off: no weight column
    theirs = golden(fixture, "graphrag_no_weight").removesuffix("\n")
    assert (unescaped(ours, "graphrag") if fixture in HOSTILE_ESCAPES else ours) == theirs


def test_graphrags_links_column_is_there_only_when_its_first_row_has_links(fixtures):
    header = {
        f: golden(f, "graphrag").partition("-----Relationships-----\n")[2].split("\n")[0] for f in ("small", "hostile")
    }
    # its first row a self-loop, which never leads out
    assert header == {
        "small": "id|source|target|description|weight|links",
        "hostile": "id|source|target|description|weight",
    }


@pytest.mark.parametrize("fixture", STORE_FIXTURES)
def test_lightrag_is_lightrags_own_query_context(fixtures, fixture):
    ours = benchmark.serialize_checked("lightrag", read(fixtures[fixture], "lightrag"))
    assert ours == golden(fixture, "lightrag").removeprefix("\n").removesuffix("\n\n")  # the template's outer newlines


def _props_sorted(text: str) -> str:
    """LlamaIndex's text with each ' ({...})' repr's keys in sorted order, as our properties are kept."""
    out, i = [], 0
    while (at := text.find(" ({", i)) != -1:
        end = frameworks._literal_end(text, at + 2)
        props = ast.literal_eval(text[at + 2 : end])
        out += [text[i:at], " (", repr(dict(sorted(props.items())))]
        i = end
    return "".join(out) + text[i:]


@pytest.mark.parametrize("fixture", STORE_FIXTURES)
@pytest.mark.parametrize("layout", frameworks.LLAMAINDEX_LAYOUTS)
def test_llamaindex_is_llamaindexs_own_retriever_and_synthesizer(fixtures, fixture, layout):
    ours = benchmark.serialize_checked(layout, read(fixtures[fixture], layout))
    theirs = golden(fixture, layout)
    if frameworks.LLAMAINDEX_LAYOUTS[layout][0]:  # include_text: the source chunk's metadata before, its text after
        theirs = theirs[theirs.index(frameworks.LLAMAINDEX_PREAMBLE) : theirs.rindex("\n\n")]
    if frameworks.LLAMAINDEX_LAYOUTS[layout][
        1
    ]:  # our properties are kept in key order, LlamaIndex's in insertion order
        theirs = _props_sorted(theirs)
    assert (unescaped(ours, layout) if fixture in HOSTILE_ESCAPES else ours) == theirs


@pytest.mark.parametrize("fixture", (*STORE_FIXTURES, "article"))
def test_langchain_is_graphcypherqachains_own_qa_prompt(fixtures, fixture):
    """Read with langchain the baseline, a typed graph is untyped: r.data() shows no labels, so no format carries them
    (it was 14% larger than what LangChain sends, with a 'type' key of ours)."""
    graph = read(fixtures[fixture], "langchain")
    ours = benchmark.serialize_checked("langchain", graph)
    assert ours == golden(fixture, "langchain")
    # its top_k: the first 10 records
    assert ast.literal_eval(ours)[:10] == ast.literal_eval(golden(fixture, "langchain_top_k"))


@pytest.mark.parametrize("fixture", (*STORE_FIXTURES, "article"))
def test_neo4j_graphrag_is_its_own_record_formatter(fixtures, fixture):
    ours = benchmark.serialize_checked("neo4j_graphrag", read(fixtures[fixture], "neo4j_graphrag"))
    assert ours == golden(fixture, "neo4j_graphrag")


def test_every_framework_layout_has_goldens():
    made = {p.stem for p in GOLDEN.glob("*/*.txt")}
    assert set(frameworks.FRAMEWORK_FORMATS) <= made
    assert set(framework_stores.MAKERS) == {"lightrag", "graphrag", "llamaindex", "neo4j"}
