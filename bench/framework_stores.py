"""The GraphRAG frameworks' stores made by hand (for tests/test_stores.py and bench/stores.py) in each framework's
documented layout, with what we wrote in them: a LightRAG GraphML file (as its NetworkXStorage writes it with networkx),
a Microsoft GraphRAG output folder (entities.parquet, relationships.parquet, as pyarrow writes its tables), a LlamaIndex
property graph store (SimplePropertyGraphStore's JSON, chunk nodes included). Small (a hand-made graph of 12 entities
with descriptions) or large (a Freebase-like stand-in of a few thousand edges, worded into descriptions)."""

import json
import random
import sys
import uuid
from pathlib import Path

import networkx as nx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_kg

# (name, type, description)
ENTITIES = [
    ("Leslie Lamport", "person", "Leslie Lamport is a computer scientist known for his work on distributed systems."),
    ("Paxos", "concept", "Paxos is a family of protocols for reaching consensus among unreliable processors."),
    ("Microsoft Research", "organization", "Microsoft Research is the research division of Microsoft."),
    ("LaTeX", "technology", "LaTeX is a document preparation system built on TeX."),
    ("TLA+", "technology", "TLA+ is a formal specification language for concurrent systems."),
    ("Turing Award", "award", "The Turing Award is an annual prize of the Association for Computing Machinery."),
    ("Google DeepMind", "organization", "Google DeepMind is an artificial intelligence laboratory."),
    ("AlphaFold", "technology", "AlphaFold predicts a protein's three-dimensional structure from its sequence."),
    ("Demis Hassabis", "person", "Demis Hassabis is a British researcher and the chief executive of Google DeepMind."),
    (
        "Nobel Prize in Chemistry",
        "award",
        "The Nobel Prize in Chemistry is awarded by the Royal Swedish Academy of Sciences.",
    ),
    ("Raft", "concept", "Raft is a consensus algorithm designed to be easier to understand than Paxos."),
    ("Tomsk", "location", ""),  # an entity the text only names
]
# (source, target, description, keywords, weight)
RELATIONS = [
    (
        "Leslie Lamport",
        "Paxos",
        "Leslie Lamport described the Paxos protocol in 1989.",
        "algorithm design, consensus",
        9.0,
    ),
    (
        "Leslie Lamport",
        "Microsoft Research",
        "Leslie Lamport has worked at Microsoft Research since 2001.",
        "employment",
        8.0,
    ),
    ("Leslie Lamport", "LaTeX", "Leslie Lamport wrote the first version of LaTeX.", "software authorship", 7.0),
    ("Leslie Lamport", "TLA+", "Leslie Lamport designed TLA+.", "language design, formal methods", 9.0),
    ("Turing Award", "Leslie Lamport", "Leslie Lamport received the Turing Award in 2013.", "recognition, award", 6.0),
    ("Raft", "Paxos", "Raft was designed as an understandable alternative to Paxos.", "alternative, consensus", 5.0),
    (
        "Demis Hassabis",
        "Google DeepMind",
        "Demis Hassabis co-founded Google DeepMind and leads it.",
        "leadership, founding",
        9.0,
    ),
    ("Google DeepMind", "AlphaFold", "Google DeepMind developed AlphaFold.", "development, research", 9.0),
    (
        "Demis Hassabis",
        "Nobel Prize in Chemistry",
        "Demis Hassabis shared the 2024 Nobel Prize in Chemistry for AlphaFold.",
        "recognition, award",
        8.0,
    ),
    (
        "Microsoft Research",
        "TLA+",
        "Microsoft Research uses TLA+ to check designs of its systems.",
        "adoption, verification",
        4.0,
    ),
    ("Google DeepMind", "Tomsk", "Google DeepMind hosted a workshop in Tomsk.", "event, location", 2.0),
]
SOURCE_SEP = "<SEP>"  # LightRAG's GRAPH_FIELD_SEP, joining the chunk ids a record came from

# Values a framework's store holds that a layout must carry exactly: its delimiters ('|' in GraphRAG's tables, ' -> '
# in LlamaIndex's triplets), quotes, backslashes, newlines, <SEP>-merged descriptions (LightRAG merges a record
# extracted from several chunks so), no type or no description (None: the store has no such field), non-ASCII names.
HOSTILE_ENTITIES = [
    ("ACME | Widgets", "organization", "A maker of widgets.<SEP>ACME | Widgets sells widgets in Europe."),
    ('Ann "The Hammer" O\'Neil', "person", 'Ann O\'Neil, called "The Hammer", runs ACME.'),
    ("Back\\slash Labs", None, "A lab whose name holds a backslash: \\ and a tab\there."),
    ("Arrow -> Corp (old)", "organization", None),
    ("Ёжик Сибирский", "animal", "Ёжик живёт в Сибири.\nОн любит яблоки."),
    ("東京大学", "organization", "東京にある国立大学。"),
    ("Rocket 🚀 Inc", None, ""),
    ("UNKNOWN", "organization", "A company called Unknown."),
]
HOSTILE_RELATIONS = [
    (
        "ACME | Widgets",
        'Ann "The Hammer" O\'Neil',
        "ACME | Widgets is run by Ann O'Neil.<SEP>Ann leads ACME | Widgets since 2019.",
        "leadership",
        7.0,
    ),
    ('Ann "The Hammer" O\'Neil', "Back\\slash Labs", 'Ann worked at Back\\slash Labs ("BSL").', "employment", 3.0),
    (
        "Arrow -> Corp (old)",
        "ACME | Widgets",
        "Arrow -> Corp (old) merged into ACME | Widgets.\nThe merger closed in 2020.",
        "merger",
        3.0,
    ),
    ("Ёжик Сибирский", "東京大学", "Ёжик Сибирский изучают в 東京大学.", "research", 1.0),
    ("Rocket 🚀 Inc", "ACME | Widgets", None, "supply", 0.0),
    ("UNKNOWN", "Rocket 🚀 Inc", "Unknown invested in Rocket 🚀 Inc.", "investment", 2.5),
    ("Back\\slash Labs", "Back\\slash Labs", "Back\\slash Labs spun off a team of its own.", "spin-off", 1.0),
]


# What the frameworks' own storage code keeps that a layout must print as the framework does: numbers and booleans as
# text (a name '1969', a description '42' or 'true'), an empty description and one ending in a space, a node in no
# relation, a self-loop, a pair related in both directions, quotes of both kinds, and typed properties (the document
# metadata LlamaIndex puts on every record: AWKWARD_METADATA; numbers and booleans on Neo4j records).
AWKWARD_ENTITIES = [
    ("1969", "year", "42"),
    ("true", "flag", "false"),
    ("Ann Lee", "person", 'Ann\'s "quoted" note '),
    ("Empty Desc", "thing", ""),
    ("Lonely Island", "location", "An island in no relation."),
    ("Loop Corp", "organization", "A company that owns itself."),
    ("Alpha", "team", "The first team."),
    ("Beta", "team", "The second team."),
]
AWKWARD_RELATIONS = [
    ("Ann Lee", "1969", "Ann Lee was born in 1969.", "birth", 3.0),
    ("Alpha", "Beta", "Alpha reports to Beta.", "reporting", 2.0),
    ("Beta", "Alpha", "Beta funds Alpha.", "funding", 5.0),
    ("Loop Corp", "Loop Corp", "Loop Corp acquired its own subsidiary.", "acquisition", 1.0),
    ("true", "Empty Desc", "true", "flag", 1.0),
    ("Ann Lee", "Loop Corp", 'It\'s "fine", says Ann ', "quote", 0.5),
    ("1969", "Beta", "42", "number", 4.0),
]
AWKWARD_METADATA = {"page": 3, "reviewed": True, "score": 0.5}


def large_records(n_people: int = 1500, seed: int = 3) -> tuple[list[tuple], list[tuple]]:
    """A Freebase-like stand-in (royal names with 'of', titles, catalogue numbers, years) as a framework's entities and
    relationships: one entity per distinct name, each relation worded into a description and keywords."""
    graph = synth_kg.standin_graph(n_people, random.Random(seed), title=True)
    names = {n["id"]: n["name"] for n in graph["nodes"]}
    seen: dict[str, str] = {}
    for node_id, name in names.items():
        seen.setdefault(name, node_id)
    entities = [(name, "entity", f"{name} is named in the corpus.") for name in seen]
    pairs, relations = set(), []
    for e in graph["edges"]:
        source, target = names[e["source"]], names[e["target"]]
        if (
            seen[source] != e["source"]
            or seen[target] != e["target"]
            or source == target
            or frozenset((source, target)) in pairs
        ):
            continue  # LightRAG's graph is simple and undirected: one edge per pair
        pairs.add(frozenset((source, target)))
        words = e["relation"].split(".")[-1].replace("_", " ")
        year = 1900 + len(relations) * 37 % 120
        relations.append(
            (
                source,
                target,
                f"{source} has {target} as {words} (recorded {year}).",
                words,
                float(1 + len(relations) % 9),
            )
        )
    return entities, relations


def _given(**fields) -> dict:
    """The fields a record has: a None field is one the store does not hold."""
    return {k: v for k, v in fields.items() if v is not None}


def lightrag_store(folder, entities=ENTITIES, relations=RELATIONS):
    """graph_chunk_entity_relation.graphml as LightRAG's NetworkXStorage writes it: an undirected nx.Graph, node id the
    entity name, with entity_id, entity_type, description, source_id, file_path, created_at; edges with weight,
    description, keywords, source_id, file_path, created_at."""
    rng = random.Random(5)
    graph = nx.Graph()
    for name, kind, description in entities:
        graph.add_node(
            name,
            entity_id=name,
            **_given(entity_type=kind, description=description),
            source_id=SOURCE_SEP.join(f"chunk-{rng.getrandbits(64):016x}" for _ in range(2)),
            file_path="papers/lamport.txt",
            created_at=1733000000 + rng.randrange(1000),
        )
    for source, target, description, keywords, weight in relations:
        graph.add_edge(
            source,
            target,
            weight=weight,
            **_given(description=description),
            keywords=keywords,
            source_id=f"chunk-{rng.getrandbits(64):016x}",
            file_path="papers/lamport.txt",
            created_at=1733000000 + rng.randrange(1000),
        )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "graph_chunk_entity_relation.graphml"
    nx.write_graphml(graph, path)
    return path


def graphrag_store(folder, entities=ENTITIES, relations=RELATIONS):
    """Microsoft GraphRAG's output folder: entities.parquet (id, human_readable_id, title, type, description,
    text_unit_ids, frequency, degree, x, y) and relationships.parquet (id, human_readable_id, source, target,
    description, weight, combined_degree, text_unit_ids), as its final workflows write them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(6)
    degree = {name: 0 for name, _, _ in entities}
    for source, target, *_ in relations:
        degree[source] += 1
        degree[target] += 1
    units = lambda: [uuid.UUID(int=rng.getrandbits(128)).hex for _ in range(2)]
    rows = [
        {
            "id": str(uuid.UUID(int=rng.getrandbits(128))),
            "human_readable_id": k,
            "title": name,
            "type": kind and kind.upper(),
            "description": description,
            "text_unit_ids": units(),
            "frequency": 2,
            "degree": degree[name],
            "x": 0.0,
            "y": 0.0,
        }
        for k, (name, kind, description) in enumerate(entities)
    ]
    links = [
        {
            "id": str(uuid.UUID(int=rng.getrandbits(128))),
            "human_readable_id": k,
            "source": source,
            "target": target,
            "description": description,
            "weight": weight,
            "combined_degree": degree[source] + degree[target],
            "text_unit_ids": units(),
        }
        for k, (source, target, description, _, weight) in enumerate(relations)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "entities.parquet")
    pq.write_table(pa.Table.from_pylist(links), folder / "relationships.parquet")
    return folder


def llamaindex_store(folder, entities=ENTITIES, relations=RELATIONS):
    """property_graph_store.json as SimplePropertyGraphStore.persist writes it: nodes keyed by id (EntityNode: label,
    embedding, properties, name; ChunkNode: label text_chunk, properties, text, id_), relations keyed
    'source_label_target' (label, source_id, target_id, properties, embedding), triplets [source, label, target]."""
    chunk, text = "c0ffee00-0000-4000-8000-000000000001", "Leslie Lamport described Paxos."
    # a chunk as PropertyGraphIndex keeps it: its TextNode's content in _node_content, so that include_text finds it
    content = {"id_": chunk, "metadata": {"file_name": "lamport.txt"}, "text": "", "class_name": "TextNode"}
    nodes = {
        chunk: {
            "label": "text_chunk",
            "embedding": None,
            "text": text,
            "id_": chunk,
            "properties": {
                "file_name": "lamport.txt",
                "_node_content": json.dumps(content),
                "_node_type": "TextNode",
                "document_id": "None",
                "doc_id": "None",
                "ref_doc_id": "None",
            },
        }
    }
    key = lambda name: name.replace('"', " ")  # EntityNode.id: the name, each '"' a space
    for (
        name,
        kind,
        description,
    ) in entities:  # the extractors' order: the chunk's metadata, its id, then what the LLM gave
        nodes[key(name)] = {
            "label": (kind or "entity").upper(),
            "embedding": None,
            "name": name,
            "properties": {"file_name": "lamport.txt", "triplet_source_id": chunk, **_given(description=description)},
        }
    rels, triplets = {}, []
    for source, target, description, keywords, _ in relations:
        label = keywords.split(",")[0].strip().upper().replace(" ", "_").replace("-", "_")
        rels[f"{key(source)}_{label}_{key(target)}"] = {
            "label": label,
            "source_id": key(source),
            "target_id": key(target),
            "embedding": None,
            "properties": {"file_name": "lamport.txt", "triplet_source_id": chunk, **_given(description=description)},
        }
        triplets.append([key(source), label, key(target)])
    rels[f"{chunk}_MENTIONS_Paxos"] = {
        "label": "MENTIONS",
        "source_id": chunk,
        "target_id": "Paxos",
        "properties": {},
        "embedding": None,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "property_graph_store.json"
    path.write_text(json.dumps({"nodes": nodes, "relations": rels, "triplets": triplets}), encoding="utf-8")
    return path


def neo4j_graph(folder, entities=ENTITIES, relations=RELATIONS, metadata=None):
    """graph.json of the graph a LangChain or neo4j-graphrag user keeps in Neo4j,
    as LLMGraphTransformer writes it: a node keyed by its name with its type as
    its label, a relationship typed in upper case; descriptions as properties (and metadata's typed values on every
    relationship, as a loader that copies a document's metadata puts them)."""
    nodes = [
        {"id": name, "name": name, "type": kind or "entity", **_given(description=description)}
        for name, kind, description in entities
    ]
    edges = [
        {
            "source": source,
            "relation": keywords.split(",")[0].strip().upper().replace(" ", "_").replace("-", "_"),
            "target": target,
            **_given(description=description),
            **(metadata or {}),
        }
        for source, target, description, keywords, _ in relations
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "graph.json"
    path.write_text(json.dumps({"nodes": nodes, "edges": edges}, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


MAKERS = {"lightrag": lightrag_store, "graphrag": graphrag_store, "llamaindex": llamaindex_store, "neo4j": neo4j_graph}
STORE_FILES = {
    "lightrag": ("graph_chunk_entity_relation.graphml",),
    "graphrag": ("entities.parquet", "relationships.parquet"),
    "llamaindex": ("property_graph_store.json",),
    "neo4j": ("graph.json",),
}


def main(argv: list[str] | None = None) -> int:
    """python bench/framework_stores.py lightrag|graphrag|llamaindex FOLDER [--large]: write the store (the same bytes
    every time), the small hand-made graph or the Freebase-like stand-in of a few thousand edges."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("kind", choices=MAKERS)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--large", action="store_true", help="the stand-in of 3,385 entities and 7,341 relationships")
    args = parser.parse_args(argv)
    taken = [f for f in STORE_FILES[args.kind] if (args.folder / f).exists()]
    if taken:  # never write over a store this did not make: the folder may be a user's real one
        print(f"framework_stores.py: {args.folder / taken[0]} exists; give a new folder", file=sys.stderr)
        return 2
    records = large_records() if args.large else (ENTITIES, RELATIONS)
    print(MAKERS[args.kind](args.folder, *records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
