"""frameworks.py: the GraphRAG frameworks' own context layouts, line by line as their releases build them."""

import pytest

import benchmark
from benchmark import BenchmarkError, Edge, Graph, Node
from graphrag_format_benchmark import frameworks  # noqa: F401  registers the formats

# A graph as a framework's store holds it: an entity is keyed by its name, a relationship is its description.
STORE = Graph(
    (Node("Leslie Lamport", "Leslie Lamport", "person"), Node("Paxos", "Paxos", "concept"), Node("Microsoft Research", "Microsoft Research", "organization")),
    (Edge("Leslie Lamport", "Lamport devised the Paxos protocol", "Paxos"), Edge("Leslie Lamport", "Lamport works at Microsoft Research", "Microsoft Research")),
    (),
    ((("description", "Computer scientist, Turing Award 2013"),), (("description", "A consensus protocol"),), (("description", "A lab"),)),
    ((("weight", 3.0),), (("weight", 1.0),)),
)


def test_graphrag_is_the_local_search_tables_line_by_line():
    assert benchmark.serialize_checked("graphrag", STORE).split("\n") == [
        "-----Entities-----",
        "id|entity|description|number of relationships|type",
        "0|Leslie Lamport|Computer scientist, Turing Award 2013|2|person",
        "1|Paxos|A consensus protocol|1|concept",
        "2|Microsoft Research|A lab|1|organization",
        "",  # the entity table's own closing newline, then the blank line that joins it to the relationships
        "",
        "-----Relationships-----",
        "id|source|target|description|weight",
        "0|Leslie Lamport|Paxos|Lamport devised the Paxos protocol|3.0",
        "1|Leslie Lamport|Microsoft Research|Lamport works at Microsoft Research|1.0",
    ]


def test_lightrag_is_the_query_contexts_two_json_blocks_line_by_line():
    assert benchmark.serialize_checked("lightrag", STORE).split("\n") == [
        "Knowledge Graph Data (Entity):",
        "",
        "```json",
        '{"entity": "Leslie Lamport", "type": "person", "description": "Computer scientist, Turing Award 2013"}',
        '{"entity": "Paxos", "type": "concept", "description": "A consensus protocol"}',
        '{"entity": "Microsoft Research", "type": "organization", "description": "A lab"}',
        "```",
        "",
        "Knowledge Graph Data (Relationship):",
        "",
        "```json",
        '{"entity1": "Leslie Lamport", "entity2": "Paxos", "description": "Lamport devised the Paxos protocol", "weight": 3.0}',
        '{"entity1": "Leslie Lamport", "entity2": "Microsoft Research", "description": "Lamport works at Microsoft Research", "weight": 1.0}',
        "```",
    ]


def test_what_a_framework_would_lose_is_carried_only_where_needed():
    graph = Graph((Node("p1", "Ann", "entity"), Node("Bob", "Bob", "entity")), (Edge("p1", "KNOWS", "Bob"),), (),
                  (), ((("description", "met at school"),),))
    assert benchmark.serialize_checked("graphrag", graph).split("\n")[1:4] == [
        "id|entity|description|number of relationships|node_id", "0|Ann||1|p1", "1|Bob||1|"]  # no type column: untyped
    assert benchmark.serialize_checked("graphrag", graph).split("\n")[-2:] == [
        "id|source|target|description|weight|relation", "0|p1|Bob|met at school||KNOWS"]  # a description of its own
    lightrag = benchmark.serialize_checked("lightrag", graph).split("\n")
    assert lightrag[3:5] == ['{"entity": "Ann", "type": "entity", "description": "", "id": "p1"}',
                             '{"entity": "Bob", "type": "entity", "description": ""}']
    assert lightrag[-2] == '{"entity1": "p1", "entity2": "Bob", "description": "met at school", "relation": "KNOWS"}'


@pytest.mark.parametrize("fmt, props, message", [
    ("graphrag", ((("node_id", 1),), ()), "format graphrag cannot carry the node property 'node_id': the format has a field of that name"),
    ("lightrag", ((("entity", "x"),), ()), "format lightrag cannot carry the node property 'entity': the format has a field of that name"),
])
def test_a_property_named_like_a_field_of_the_layout_is_refused(fmt, props, message):
    graph = Graph((Node("a", "A", "t"), Node("b", "B", "t")), (Edge("a", "R", "b"),), (), props)
    with pytest.raises(BenchmarkError) as error:
        benchmark.serialize_checked(fmt, graph)
    assert str(error.value) == message


@pytest.mark.parametrize("fmt, text, message", [
    ("graphrag", ("-----Entities-----\nid|entity|description|number of relationships\n0|A||0\n-----Relationships-----\n"
                 "id|source|target|description|weight"), "graphrag line 4: expected two blank lines before -----Relationships-----"),
    ("graphrag", ("-----Entities-----\nid|entity|description|number of relationships\n5|A||0\n\n\n-----Relationships-----\n"
                 "id|source|target|description|weight"), "graphrag line 3: expected the short row id 0, found '5'"),
    ("lightrag", "Knowledge Graph Data (Entity):\n\n```json\n[1]\n```", "lightrag line 4: expected one JSON object on the line"),
    ("lightrag", ("Knowledge Graph Data (Entity):\n\n```json\n```\n\nKnowledge Graph Data (Relationship):\n\n```json\n"
                 '{"entity1": "a", "entity2": 2, "description": "R"}\n```'), "lightrag line 9: expected 'entity2' as a string"),
])
def test_a_broken_framework_text_names_its_line(fmt, text, message):
    with pytest.raises(BenchmarkError) as error:
        benchmark.FORMATS[fmt][1](text)
    assert str(error.value) == message


def test_llamaindex_is_the_retrievers_triplets_with_properties_as_it_prints_them():
    assert benchmark.serialize_checked("llamaindex", STORE).split("\n") == [
        "Here are some facts extracted from the provided text:",
        "",
        ("Leslie Lamport ({'description': 'Computer scientist, Turing Award 2013', 'label': 'person'}) -> Lamport devised the Paxos "
        "protocol ({'weight': 3.0}) -> Paxos ({'description': 'A consensus protocol', 'label': 'concept'})"),
        ("Leslie Lamport ({'description': 'Computer scientist, Turing Award 2013', 'label': 'person'}) -> Lamport works at Microsoft "
        "Research ({'weight': 1.0}) -> Microsoft Research ({'description': 'A lab', 'label': 'organization'})"),
    ]
    bare = Graph((Node("Ann", "Ann", "entity"), Node("Bob", "Bob", "entity"), Node("Eve", "Eve", "entity")), (Edge("Ann", "knows", "Bob"),))
    assert benchmark.serialize_checked("llamaindex", bare).split("\n")[2:] == ["Ann -> knows -> Bob", "Eve"]  # a node in no triplet


def test_llamaindex_escapes_only_what_would_break_its_arrows_and_parentheses():
    graph = Graph((Node("a -> b", "a -> b", "entity"), Node("c (d)", "c (d)", "entity")), (Edge("a -> b", "x\\y", "c (d)"),),
                  (), (), ((("note", "p -> q"),),))
    text = benchmark.serialize_checked("llamaindex", graph)
    assert text.split("\n")[2] == "a \\-> b -> x\\\\y ({'note': 'p \\-> q'}) -> c \\(d)"
    assert benchmark.FORMATS["llamaindex"][1](text) == graph


def test_langchain_is_the_cypher_records_as_python_prints_them_into_the_prompt():
    bare = Graph((Node("Ann", "Ann", "entity"), Node("Bob", "Bob", "entity"), Node("Eve", "Eve", "entity")), (Edge("Ann", "KNOWS", "Bob"),))
    assert benchmark.serialize_checked("langchain", bare) == (
        "[{'source': {'id': 'Ann'}, 'relation': 'KNOWS', 'target': {'id': 'Bob'}}, {'source': {'id': 'Eve'}, 'relation': None, 'target': None}]")
    assert benchmark.serialize_checked("langchain", STORE).startswith(
        "[{'source': {'id': 'Leslie Lamport', 'type': 'person', 'description': 'Computer scientist, Turing Award 2013'}, "
        "'relation': 'Lamport devised the Paxos protocol', 'target': {'id': 'Paxos', 'type': 'concept', 'description': "
        "'A consensus protocol'}, 'properties': {'weight': 3.0}}, ")
