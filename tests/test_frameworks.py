"""frameworks.py: the GraphRAG frameworks' own context layouts, line by line as their releases build them."""

import pytest

import benchmark
from benchmark import BenchmarkError, Edge, Graph, Node
from graphrag_format_benchmark import frameworks  # noqa: F401  registers the formats

# A graph as a framework's store holds it: an entity is keyed by its name, a relationship is its description.
STORE = Graph(
    (
        Node("Leslie Lamport", "Leslie Lamport", "person"),
        Node("Paxos", "Paxos", "concept"),
        Node("Microsoft Research", "Microsoft Research", "organization"),
    ),
    (
        Edge("Leslie Lamport", "Lamport devised the Paxos protocol", "Paxos"),
        Edge("Leslie Lamport", "Lamport works at Microsoft Research", "Microsoft Research"),
    ),
    (),
    (
        (("description", "Computer scientist, Turing Award 2013"),),
        (("description", "A consensus protocol"),),
        (("description", "A lab"),),
    ),
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
        "id|source|target|description|weight|links",  # links: left on each relationship as the entities were added
        "0|Leslie Lamport|Paxos|Lamport devised the Paxos protocol|3.0|1",
        "1|Leslie Lamport|Microsoft Research|Lamport works at Microsoft Research|1.0|1",
    ]


def test_graphrag_ranks_relationships_by_combined_degree_and_keeps_their_ids():
    graph = Graph(
        tuple(Node(v, v, "entity") for v in "abcd"), (Edge("a", "x", "b"), Edge("c", "y", "d"), Edge("b", "z", "c"))
    )
    rows = benchmark.serialize_checked("graphrag", graph).partition("-----Relationships-----\n")[2].split("\n")
    assert rows == ["id|source|target|description", "2|b|c|z", "0|a|b|x", "1|c|d|y"]  # one led out at a time: no links
    # back in the graph's order
    assert benchmark.FORMATS["graphrag"].parse(benchmark.serialize_checked("graphrag", graph)) == graph


# As graphrag 3.3.0's LocalSearchMixedContext._build_local_context printed these
# graphs' relationship tables (each node selected in order, relationships ranked by
# combined degree): the links value of each row, none where the column is empty.
@pytest.mark.parametrize(
    "edges, links, header",
    [
        (
            (("a", "b"),),
            [None],
            "id|source|target|description",
        ),  # one relationship leads out at a time: GraphRAG sets no links
        ((("a", "b"), ("a", "c")), [1, 1], "id|source|target|description|links"),
        (
            (("a", "c"), ("b", "c"), ("a", "b")),
            [2, 2, 1],
            "id|source|target|description|links",
        ),  # c: linked to a and b at the end
        (
            (("a", "a"), ("a", "b"), ("a", "c")),
            [None, 1, 1],
            "id|source|target|description",
        ),  # a self-loop ranked first: no column
    ],
)
def test_graphrag_links_are_what_its_filter_leaves(edges, links, header):
    graph = Graph(tuple(Node(v, v, "entity") for v in "abc"), tuple(Edge(s, "R", t) for s, t in edges))
    assert frameworks.graphrag_links(graph) == links
    assert (
        benchmark.serialize_checked("graphrag", graph).partition("-----Relationships-----\n")[2].split("\n")[0]
        == header
    )


def test_lightrag_is_the_query_contexts_blocks_line_by_line():
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
        '{"entity1": "Leslie Lamport", "entity2": "Paxos", "description": "Lamport devised the Paxos '
        'protocol", "weight": 3.0}',
        '{"entity1": "Leslie Lamport", "entity2": "Microsoft Research", "description": "Lamport works at '
        'Microsoft Research", "weight": 1.0}',
        "```",
        *frameworks.LIGHTRAG_EMPTY_TAIL,  # its template's Document Chunks and Reference Document List, empty
    ]
    assert frameworks.LIGHTRAG_EMPTY_TAIL[1].startswith("Document Chunks (Each entry has a reference_id")


def test_lightrag_ranks_relations_by_edge_degree_then_weight():
    graph = Graph(
        tuple(Node(v, v, "entity") for v in "abcd"),
        (Edge("a", "x", "b"), Edge("c", "y", "d"), Edge("b", "z", "c")),
        (),
        (),
        ((("weight", 1.0),), (("weight", 9.0),), (("weight", 2.0),)),
    )
    lines = benchmark.serialize_checked("lightrag", graph).split("\n")
    assert [line[:40] for line in lines[12:15]] == [
        '{"entity1": "b", "entity2": "c", "descri',
        '{"entity1": "c", "entity2": "d", "descri',
        '{"entity1": "a", "entity2": "b", "descri',
    ]


def test_what_a_framework_would_lose_is_carried_only_where_needed():
    graph = Graph(
        (Node("p1", "Ann", "entity"), Node("Bob", "Bob", "entity")),
        (Edge("p1", "KNOWS", "Bob"),),
        (),
        (),
        ((("description", "met at school"),),),
    )
    # no type column: untyped
    assert benchmark.serialize_checked("graphrag", graph).split("\n")[1:4] == [
        "id|entity|description|number of relationships|node_id",
        "0|Ann||1|p1",
        "1|Bob||1|",
    ]
    # a description of its own; no weight
    assert benchmark.serialize_checked("graphrag", graph).split("\n")[-2:] == [
        "id|source|target|description|relation",
        "0|p1|Bob|met at school|KNOWS",
    ]
    lightrag = benchmark.serialize_checked("lightrag", graph).split("\n")
    # LightRAG's word for none
    assert lightrag[3:5] == [
        '{"entity": "Ann", "type": "entity", "description": "UNKNOWN", "id": "p1"}',
        '{"entity": "Bob", "type": "entity", "description": "UNKNOWN"}',
    ]
    assert lightrag[10] == '{"entity1": "p1", "entity2": "Bob", "description": "met at school", "relation": "KNOWS"}'


@pytest.mark.parametrize(
    "fmt, relation, cell",
    [
        ("graphrag", "related_to", "0|a|b|"),  # a store's relationship without a description: GraphRAG prints none
        ("graphrag", "", '0|a|b|""'),
        (
            "graphrag",
            '"quoted"',
            r'0|a|b|"\\"quoted\\""',
        ),  # a JSON string literal, its backslashes escaped as the table escapes them
        ("lightrag", "related_to", '{"entity1": "a", "entity2": "b", "description": "UNKNOWN"}'),
        (
            "lightrag",
            "UNKNOWN",
            '{"entity1": "a", "entity2": "b", "relation": "UNKNOWN"}',
        ),  # the word, not LightRAG's placeholder
    ],
)
def test_a_relation_with_no_description_is_shown_as_the_framework_shows_none(fmt, relation, cell):
    graph = Graph((Node("a", "a", "entity"), Node("b", "b", "entity")), (Edge("a", relation, "b"),))
    text = benchmark.serialize_checked(fmt, graph)
    assert cell in text.split("\n")
    assert benchmark.FORMATS[fmt].parse(text) == graph


@pytest.mark.parametrize(
    "fmt, props, message",
    [
        (
            "graphrag",
            ((("node_id", 1),), ()),
            "format graphrag cannot carry the node property 'node_id': the format has a field of that name",
        ),
        (
            "lightrag",
            ((("entity", "x"),), ()),
            "format lightrag cannot carry the node property 'entity': the format has a field of that name",
        ),
    ],
)
def test_a_property_named_like_a_field_of_the_layout_is_refused(fmt, props, message):
    graph = Graph((Node("a", "A", "t"), Node("b", "B", "t")), (Edge("a", "R", "b"),), (), props)
    with pytest.raises(BenchmarkError) as error:
        benchmark.serialize_checked(fmt, graph)
    assert str(error.value) == message


@pytest.mark.parametrize(
    "fmt, text, message",
    [
        (
            "graphrag",
            (
                "-----Entities-----\nid|entity|description|number of relationships\n0|A||0\n-----Relationships-----\n"
                "id|source|target|description|weight"
            ),
            "graphrag line 4: expected two blank lines before -----Relationships-----",
        ),
        (
            "graphrag",
            (
                "-----Entities-----\nid|entity|description|number of "
                "relationships\n5|A||0\n\n\n-----Relationships-----\n"
                "id|source|target|description|weight"
            ),
            "graphrag line 3: expected the short row id 0, found '5'",
        ),
        (
            "lightrag",
            "Knowledge Graph Data (Entity):\n\n```json\n[1]\n```",
            "lightrag line 4: expected one JSON object on the line",
        ),
        (
            "lightrag",
            (
                "Knowledge Graph Data (Entity):\n\n```json\n```\n\nKnowledge Graph Data (Relationship):\n\n```json\n"
                '{"entity1": "a", "entity2": 2, "description": "R"}\n```\n' + "\n".join(frameworks.LIGHTRAG_EMPTY_TAIL)
            ),
            "lightrag line 9: expected 'entity2' as a string",
        ),
        (
            "lightrag",
            ("Knowledge Graph Data (Entity):\n\n```json\n```\n\nKnowledge Graph Data (Relationship):\n\n```json\n```"),
            "lightrag line 10: expected the empty Document Chunks and Reference Document List blocks after the "
            "relationships",
        ),
    ],
)
def test_a_broken_framework_text_names_its_line(fmt, text, message):
    with pytest.raises(BenchmarkError) as error:
        benchmark.FORMATS[fmt].parse(text)
    assert str(error.value) == message


def test_llamaindex_is_the_retrievers_triplets_as_the_synthesizer_joins_them():
    bare = Graph(
        (Node("Ann", "Ann", "entity"), Node("Bob", "Bob", "entity"), Node("Eve", "Eve", "entity")),
        (Edge("Ann", "KNOWS", "Bob"), Edge("Bob", "KNOWS", "Eve")),
    )
    # a node a paragraph
    assert benchmark.serialize_checked("llamaindex", bare) == "Ann -> KNOWS -> Bob\n\nBob -> KNOWS -> Eve"
    # include_text
    assert benchmark.serialize_checked("llamaindex_text", bare) == (
        "Here are some facts extracted from the provided text:\n\nAnn -> KNOWS -> Bob\nBob -> KNOWS -> Eve"
    )
    assert benchmark.serialize_checked("llamaindex_text_properties", STORE).split("\n") == [
        "Here are some facts extracted from the provided text:",
        "",
        (
            "Leslie Lamport ({'description': 'Computer scientist, Turing Award 2013', 'label': 'person'}) -> Lamport "
            "devised the Paxos "
            "protocol ({'weight': 3.0}) -> Paxos ({'description': 'A consensus protocol', 'label': 'concept'})"
        ),
        (
            "Leslie Lamport ({'description': 'Computer scientist, Turing Award 2013', 'label': 'person'}) -> Lamport "
            "works at Microsoft "
            "Research ({'weight': 1.0}) -> Microsoft Research ({'description': 'A lab', 'label': 'organization'})"
        ),
    ]
    lone = Graph(
        (Node("Ann", "Ann", "entity"), Node("Bob", "Bob", "entity"), Node("Eve", "Eve", "entity")),
        (Edge("Ann", "knows", "Bob"),),
    )
    # a node in no triplet
    assert benchmark.serialize_checked("llamaindex", lone).split("\n\n") == [
        "Ann -> knows -> Bob",
        "Eve",
    ]


def test_llamaindex_keys_a_node_by_its_name_with_quotes_as_spaces():
    graph = Graph(
        (Node("Ann  The Hammer ", 'Ann "The Hammer"', "entity"), Node("Bob", "Bob", "entity")),
        (Edge("Ann  The Hammer ", "KNOWS", "Bob"),),
    )
    # EntityNode.id: no id shown
    assert benchmark.serialize_checked("llamaindex", graph) == 'Ann "The Hammer" -> KNOWS -> Bob'
    keyed = Graph((Node('Ann "The Hammer"', 'Ann "The Hammer"', "entity"),), ())
    assert benchmark.serialize_checked("llamaindex", keyed) == """Ann "The Hammer" ({'id': 'Ann "The Hammer"'})"""


def test_llamaindex_escapes_only_what_would_break_its_arrows_and_properties():
    graph = Graph(
        (Node("a -> b", "a -> b", "entity"), Node("c (d)", "c (d)", "entity"), Node("e ({f})", "e ({f})", "entity")),
        (Edge("a -> b", "x\\y", "c (d)"), Edge("c (d)", "R", "e ({f})")),
        (),
        (),
        ((("note", "p -> q"),), ()),
    )
    text = benchmark.serialize_checked("llamaindex", graph)
    # a properties repr as LlamaIndex prints it, '->' and quotes and backslashes inside it raw
    assert text.split("\n\n") == ["a \\-> b -> x\\\\y ({'note': 'p -> q'}) -> c (d)", "c (d) -> R -> e \\({f})"]
    assert benchmark.FORMATS["llamaindex"].parse(text) == graph
    quoted = Graph(graph.nodes[:2], graph.edges[:1], (), (), (((("note", 'It\'s "fine" \\o/'),),)))
    text = benchmark.serialize_checked("llamaindex_properties", quoted)
    # repr gives 'It\'s "fine" \\o/': the backslash before the quote was doubled, not even a Python literal
    assert text == "a \\-> b -> x\\\\y ({'note': 'It\\'s \"fine\" \\\\o/'}) -> c (d)"


def test_langchain_is_the_cypher_records_as_python_prints_them_into_the_prompt():
    bare = Graph(
        (Node("Ann", "Ann", "entity"), Node("Bob", "Bob", "entity"), Node("Eve", "Eve", "entity")),
        (Edge("Ann", "KNOWS", "Bob"),),
    )
    assert benchmark.serialize_checked("langchain", bare) == (
        "[{'source': {'id': 'Ann'}, 'relation': 'KNOWS', 'target': {'id': 'Bob'}}, {'source': {'id': 'Eve'}, "
        "'relation': None, 'target': None}]"
    )
    assert benchmark.serialize_checked("langchain", STORE).startswith(
        "[{'source': {'id': 'Leslie Lamport', 'type': 'person', 'description': 'Computer scientist, Turing Award "
        "2013'}, "
        "'relation': 'Lamport devised the Paxos protocol', 'target': {'id': 'Paxos', 'type': 'concept', 'description': "
        "'A consensus protocol'}, 'properties': {'weight': 3.0}}, "
    )
