"""Each framework's own context builder, run on a fixture: what the framework itself sends for a retrieved subgraph.

Run by bench/framework_goldens.py inside a venv that holds one framework at its pinned version (never the project's
venv, never CI): `VENV/bin/python bench/framework_drivers.py FRAMEWORK FIXTURE_DIR` prints a JSON object, layout name ->
the context text the framework built. Standard library and the framework only: nothing of the project is imported.

The retrieval step is ours (the fixture is the retrieved subgraph: every entity of it selected, in its store's order;
every relationship of it retrieved); everything after it is the framework's own code:
- graphrag: the store's parquet tables read by graphrag's own loaders (read_entities / read_relationships with the
  columns read_indexer_entities and read_indexer_relationships pass), the local context built by
  LocalSearchMixedContext._build_local_context with the query factory's settings (include_entity_rank and
  include_relationship_weight on, top_k_relationships 10, ranked by "rank").
- lightrag: the GraphML store loaded by LightRAG's NetworkXStorage; entities as _get_node_data makes them, relations by
  _find_most_related_edges_from_entities, then _apply_token_truncation and _build_context_str (the kg_query_context
  template, with no text chunks).
- llamaindex: property_graph_store.json loaded by SimplePropertyGraphStore.from_persist_path; its triplets (in the
  file's "triplets" order) made into nodes by BasePGRetriever._get_nodes_with_score, source text added by
  add_source_text where include_text is on, the prompt made by the default (compact) response synthesizer; the context
  is what stands between its "---------------------" lines.
- langchain, neo4j_graphrag: a graph.json as Neo4j would return it for MATCH (s)-[r]->(t) RETURN s
  AS source, type(r) AS relation, t AS target (and properties(r) AS properties when an edge has
  any): neo4j's own Record and Node. LangChain: Neo4jGraph.query's r.data() per record, cut to
  GraphCypherQAChain's top_k, put into its CYPHER_QA_PROMPT by its own QA chain. neo4j-graphrag:
  each record through Retriever.default_record_formatter (str(record)), joined by GraphRAG.search.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

NEO4J_DATABASE = "4:5f1c2a9e-7b3d-4c8e-9a61-0d2e4f6b8c17:"  # a Neo4j 5 element id's prefix: the database's own id
QUERY = "Which organization did Leslie Lamport work at?"  # the question each full request asks


def graphrag(folder: Path) -> dict[str, str]:
    import pandas as pd
    from graphrag.query.input.loaders.dfs import read_entities, read_relationships
    from graphrag.query.structured_search.local_search.mixed_context import LocalSearchMixedContext
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    entities = read_entities(
        df=pd.read_parquet(folder / "graphrag" / "entities.parquet"),
        id_col="id",
        title_col="title",
        type_col="type",
        short_id_col="human_readable_id",
        description_col="description",
        community_col=None,
        rank_col="degree",
        name_embedding_col=None,
        description_embedding_col=None,
        text_unit_ids_col=None,
    )
    relationships = read_relationships(
        df=pd.read_parquet(folder / "graphrag" / "relationships.parquet"),
        short_id_col="human_readable_id",
        rank_col="combined_degree",
        description_embedding_col=None,
        attributes_cols=None,
    )
    out = {}
    for layout, weight in (("graphrag", True), ("graphrag_no_weight", False)):
        builder = LocalSearchMixedContext(
            entities=entities,
            entity_text_embeddings=None,
            text_embedder=None,
            relationships=[r.model_copy() if hasattr(r, "model_copy") else _copy(r) for r in relationships],
            tokenizer=get_tokenizer(encoding_model="o200k_base"),
        )
        text, _ = builder._build_local_context(
            selected_entities=entities,
            max_context_tokens=10**9,
            include_entity_rank=True,
            rank_description="number of relationships",
            include_relationship_weight=weight,
            top_k_relationships=10,
            relationship_ranking_attribute="rank",
        )
        out[layout] = text
    from graphrag.prompts.query.local_search_system_prompt import LOCAL_SEARCH_SYSTEM_PROMPT

    # LocalSearch.search: the system prompt with the context chunks (here the local context alone), then the query
    out["prompt:graphrag"] = [
        {
            "role": "system",
            "content": LOCAL_SEARCH_SYSTEM_PROMPT.format(
                context_data=out["graphrag"], response_type="multiple paragraphs"
            ),
        },
        {"role": "user", "content": QUERY},
    ]
    return out


def _copy(record):
    import copy

    return copy.deepcopy(record)


def lightrag(folder: Path) -> dict[str, str]:
    from lightrag.base import QueryParam
    from lightrag.kg.networkx_impl import NetworkXStorage
    from lightrag.kg.shared_storage import initialize_share_data
    from lightrag.operate import _apply_token_truncation, _build_context_str, _find_most_related_edges_from_entities
    from lightrag.utils import TiktokenTokenizer

    async def build() -> str:
        initialize_share_data()
        work = tempfile.mkdtemp()
        (Path(work) / "graph_chunk_entity_relation.graphml").write_bytes(
            (folder / "lightrag" / "graph_chunk_entity_relation.graphml").read_bytes()
        )
        store = NetworkXStorage(
            namespace="chunk_entity_relation", workspace="", global_config={"working_dir": work}, embedding_func=None
        )
        await store.initialize()
        names = [n for n in (await store._get_graph()).nodes()]
        nodes, degrees = await store.get_nodes_batch(names), await store.node_degrees_batch(names)
        node_datas = [
            {**nodes[n], "entity_name": n, "rank": degrees.get(n, 0), "created_at": nodes[n].get("created_at")}
            for n in names
        ]
        param = QueryParam(mode="local")
        relations = await _find_most_related_edges_from_entities(node_datas, param, store)
        config = {"tokenizer": TiktokenTokenizer("gpt-4o-mini"), "max_total_tokens": 10**9}
        param.max_entity_tokens = param.max_relation_tokens = 10**9
        cut = await _apply_token_truncation({"final_entities": node_datas, "final_relations": relations}, param, config)
        text, _ = await _build_context_str(cut["entities_context"], cut["relations_context"], [], "", param, config)
        return text

    from lightrag.prompt import PROMPTS
    from lightrag.utils import resolve_user_prompt

    context = asyncio.run(build())
    # kg_query: the rag_response system prompt with the context, then the query as the user's message
    system = PROMPTS["rag_response"].format(
        response_type="Multiple Paragraphs", user_prompt=resolve_user_prompt(None, "", False).slot, context_data=context
    )
    return {
        "lightrag": context,
        "prompt:lightrag": [{"role": "system", "content": system}, {"role": "user", "content": QUERY}],
    }


def llamaindex(folder: Path) -> dict[str, str]:
    from llama_index.core.graph_stores.simple_labelled import SimplePropertyGraphStore
    from llama_index.core.indices.property_graph.retriever import PGRetriever
    from llama_index.core.indices.property_graph.sub_retrievers.base import BasePGRetriever
    from llama_index.core.llms.mock import MockLLM
    from llama_index.core.response_synthesizers import get_response_synthesizer

    store = SimplePropertyGraphStore.from_persist_path(str(folder / "llamaindex" / "property_graph_store.json"))
    order = json.loads((folder / "llamaindex" / "property_graph_store.json").read_text(encoding="utf-8"))["triplets"]
    graph = store.graph
    triplets = [
        (graph.nodes[s], graph.relations[graph._get_relation_key(subj_id=s, rel_id=r, obj_id=o)], graph.nodes[o])
        for s, r, o in order
    ]

    class Given(BasePGRetriever):  # the retrieval step: the fixture's triplets, in its order
        def retrieve_from_graph(self, query_bundle):
            return self._get_nodes_with_score(triplets)

        async def aretrieve_from_graph(self, query_bundle):
            return self._get_nodes_with_score(triplets)

    class Wide(
        MockLLM
    ):  # a model with a 128k window: the synthesizer sends the context in one prompt, not refined in parts
        @property
        def metadata(self):
            return super().metadata.model_copy(update={"context_window": 128_000})

    out = {}
    for layout, text_on, props_on in (
        ("llamaindex", False, False),
        ("llamaindex_properties", False, True),
        ("llamaindex_text", True, False),
        ("llamaindex_text_properties", True, True),
    ):
        nodes = PGRetriever(
            sub_retrievers=[Given(graph_store=store, include_text=text_on, include_properties=props_on)],
            use_async=False,
        ).retrieve("")
        prompt = str(get_response_synthesizer(llm=Wide(), response_mode="compact").synthesize(QUERY, nodes))
        head = "Context information is below.\n---------------------\n"
        tail = (
            "\n---------------------\nGiven the context information and not prior knowledge, answer the "
            f"query.\nQuery: {QUERY}\nAnswer: "
        )
        if not (prompt.startswith(head) and prompt.endswith(tail)):
            raise SystemExit(
                f"llamaindex: the synthesizer's prompt is not the default text QA template: {prompt[:200]!r}"
            )
        out[layout] = prompt[len(head) : -len(tail)]
        seen = []

        class Chat(Wide):  # a chat model: the synthesizer sends its chat text QA template's messages
            is_chat_model: bool = True

            @property
            def metadata(self):
                return super().metadata.model_copy(update={"is_chat_model": True})

            def chat(self, messages, **kwargs):
                seen.append([{"role": m.role.value, "content": m.content} for m in messages])  # noqa: B023 (called in this loop's turn)
                return super().chat(messages, **kwargs)

        get_response_synthesizer(llm=Chat(), response_mode="compact").synthesize(QUERY, nodes)
        out[f"prompt:{layout}"] = seen[0]
    return out


def _records(graph: dict):
    """graph.json's edges as the Neo4j records of MATCH (s)-[r]->(t) RETURN s AS source, type(r) AS relation, t AS
    target (properties(r) AS properties when an edge has any); a node in no edge as OPTIONAL MATCH returns it."""
    from neo4j import Record
    from neo4j.graph import Graph, Node

    fixed = {"id", "name", "type"}
    store = Graph()
    nodes = {}
    for k, n in enumerate(graph["nodes"]):
        properties = {
            "id": n["id"],
            **({"name": n["name"]} if n["name"] != n["id"] else {}),
            **{key: v for key, v in n.items() if key not in fixed},
        }
        labels = [] if n["type"] == "entity" else [n["type"]]
        nodes[n["id"]] = Node(store, f"{NEO4J_DATABASE}{k}", k, labels, properties)
    with_props = any(set(e) - {"source", "relation", "target", "id"} for e in graph["edges"])
    records, linked = [], set()
    for e in graph["edges"]:
        props = {key: v for key, v in e.items() if key not in ("source", "relation", "target", "id")}
        record = {"source": nodes[e["source"]], "relation": e["relation"], "target": nodes[e["target"]]}
        records.append(Record({**record, **({"properties": props} if with_props else {})}))
        linked |= {e["source"], e["target"]}
    for n in graph["nodes"]:
        if n["id"] not in linked:
            records.append(
                Record(
                    {
                        "source": nodes[n["id"]],
                        "relation": None,
                        "target": None,
                        **({"properties": None} if with_props else {}),
                    }
                )
            )
    return records


def langchain(folder: Path) -> dict[str, str]:
    from langchain_core.language_models.fake import FakeListLLM
    from langchain_neo4j import GraphCypherQAChain, Neo4jGraph

    records = _records(json.loads((folder / "neo4j" / "graph.json").read_text(encoding="utf-8")))

    class Driver:  # Neo4j's answer to the generated query: the fixture's records
        def execute_query(self, query, database_=None, parameters_=None):
            return records, None, None

    graph = Neo4jGraph.__new__(Neo4jGraph)
    graph.__dict__.update(
        _driver=Driver(), _database="neo4j", timeout=None, sanitize=False, schema="", structured_schema={}
    )
    graph._check_driver_state = lambda: None
    out = {}
    for layout, top_k in (("langchain", 10**9), ("langchain_top_k", 10)):
        seen = []

        class Seen(FakeListLLM):
            def _call(self, prompt, stop=None, run_manager=None, **kwargs):
                seen.append(prompt)  # noqa: B023 (called in this loop's turn)
                return super()._call(prompt, stop, run_manager, **kwargs)

        chain = GraphCypherQAChain.from_llm(
            cypher_llm=FakeListLLM(
                responses=["MATCH (s)-[r]->(t) RETURN s AS source, type(r) AS relation, t AS target"]
            ),
            qa_llm=Seen(responses=["answer"]),
            graph=graph,
            allow_dangerous_requests=True,
            top_k=top_k,
        )
        chain.invoke({"query": QUERY})
        head, tail = "Information:\n", f"\n\nQuestion: {QUERY}\nHelpful Answer:"
        prompt = seen[0]
        out[layout] = prompt[prompt.index(head) + len(head) : prompt.rindex(tail)]
        # a chat model gets the QA prompt as the human message
        out[f"prompt:{layout}"] = [{"role": "user", "content": prompt}]
    return out


def neo4j_graphrag(folder: Path) -> dict[str, str]:
    from neo4j_graphrag.generation import GraphRAG
    from neo4j_graphrag.llm import LLMInterface, LLMResponse
    from neo4j_graphrag.retrievers.base import Retriever
    from neo4j_graphrag.types import RawSearchResult

    records = _records(json.loads((folder / "neo4j" / "graph.json").read_text(encoding="utf-8")))

    class Given(Retriever):  # Text2CypherRetriever's records, formatted by the base class's default_record_formatter
        VERIFY_NEO4J_VERSION = False

        def __init__(self):
            self.driver, self.neo4j_database, self.result_formatter = None, None, None

        def get_search_results(self, *args, **kwargs):
            return RawSearchResult(records=records)

    seen = []

    class Seen(LLMInterface):
        def invoke(self, input, message_history=None, system_instruction=None):
            seen.append((system_instruction, input))
            return LLMResponse(content="answer")

        async def ainvoke(self, input, message_history=None, system_instruction=None):
            return self.invoke(input)

    GraphRAG(retriever=Given(), llm=Seen(model_name="fake")).search(query_text=QUERY, return_context=False)
    head, tail = "Context:\n", "\n\nExamples:"
    system, prompt = seen[0]
    # OpenAILLM's messages: the system instruction, then the prompt
    return {
        "neo4j_graphrag": prompt[prompt.index(head) + len(head) : prompt.index(tail)],
        "prompt:neo4j_graphrag": [
            *([{"role": "system", "content": system}] if system else []),
            {"role": "user", "content": prompt},
        ],
    }


# -----------------------------------------------------------------------------
# the stores, written by each framework's own storage code from a fixture's records (records.json: entities as
# [name, type, description], relations as [source, target, description, keywords, weight], and the document's
# metadata), as its indexing pipeline hands them over after extraction


def _fixture(folder: Path) -> dict:
    return json.loads((folder / "records.json").read_text(encoding="utf-8"))


def store_graphrag(folder: Path) -> None:
    """entities.parquet and relationships.parquet as extract_graph leaves them (GraphRAG's extraction upper-cases
    titles and types; a description list summarized to one text), then GraphRAG's own finalize_graph: degrees,
    combined degrees, human-readable ids and row ids, written by its ParquetTableProvider."""
    import uuid

    import pandas as pd
    from graphrag.data_model.row_transformers import transform_entity_row, transform_relationship_row
    from graphrag.index.operations import (
        finalize_entities as finalize_entities_module,
        finalize_relationships as finalize_relationships_module,
    )
    from graphrag.index.workflows.finalize_graph import finalize_graph
    from graphrag_storage.file_storage import FileStorage
    from graphrag_storage.tables.parquet_table_provider import ParquetTableProvider

    records = _fixture(folder)
    units = [f"unit-{k:02d}" for k in range(3)]
    entities = pd.DataFrame(
        [
            {
                "title": name.upper(),
                "type": (kind or "").upper(),
                "description": description,
                "text_unit_ids": units[: 1 + k % 2],
                "frequency": 1 + k % 2,
            }
            for k, (name, kind, description) in enumerate(records["entities"])
        ]
    )
    relationships = pd.DataFrame(
        [
            {
                "source": source.upper(),
                "target": target.upper(),
                "description": description,
                "weight": weight,
                "text_unit_ids": units[:1],
            }
            for source, target, description, _, weight in records["relations"]
        ]
    )
    provider = ParquetTableProvider(FileStorage(base_dir=str(folder / "graphrag")))
    counter = iter(range(10**6))
    fixed = lambda: uuid.UUID(int=0x5EED << 64 | next(counter))  # noqa: E731  the row ids, the same bytes every time
    finalizers = (finalize_entities_module, finalize_relationships_module)
    for module in finalizers:
        module.uuid4 = fixed

    async def write() -> None:
        await provider.write_dataframe("entities", entities)
        await provider.write_dataframe("relationships", relationships)
        async with (
            provider.open("entities", transformer=transform_entity_row) as entities_table,
            provider.open("relationships", transformer=transform_relationship_row) as relationships_table,
        ):
            await finalize_graph(entities_table, relationships_table)

    asyncio.run(write())


def store_lightrag(folder: Path) -> None:
    """graph_chunk_entity_relation.graphml as LightRAG's NetworkXStorage writes it: each entity upserted with the
    node data _merge_nodes_then_upsert gives it, each relation with its ends sorted (LightRAG's graph is undirected)
    and the edge data _merge_edges_then_upsert gives it, then index_done_callback."""
    from lightrag.kg.networkx_impl import NetworkXStorage
    from lightrag.kg.shared_storage import initialize_share_data

    records = _fixture(folder)
    chunks = ["chunk-8c2f0a61d3e94b7f", "chunk-1d0e7b55a3c84f29"]
    source = lambda k: "<SEP>".join(chunks[: 1 + k % 2])  # noqa: E731

    async def write() -> None:
        initialize_share_data()
        (folder / "lightrag").mkdir(parents=True, exist_ok=True)
        store = NetworkXStorage(
            namespace="chunk_entity_relation",
            workspace="",
            global_config={"working_dir": str(folder / "lightrag")},
            embedding_func=None,
        )
        await store.initialize()
        for k, (name, kind, description) in enumerate(records["entities"]):
            await store.upsert_node(
                name,
                dict(
                    entity_id=name,
                    entity_type=kind or "UNKNOWN",
                    description=description or "",
                    source_id=source(k),
                    file_path=records["file_name"],
                    created_at=1733000000 + k,
                    truncate="",
                ),
            )
        for k, (src, tgt, description, keywords, weight) in enumerate(records["relations"]):
            src, tgt = sorted((src, tgt))
            await store.upsert_edge(
                src,
                tgt,
                dict(
                    weight=weight,
                    description=description or "",
                    keywords=keywords,
                    source_id=source(k),
                    file_path=records["file_name"],
                    created_at=1733000500 + k,
                    truncate="",
                ),
            )
        await store.index_done_callback()

    asyncio.run(write())


def store_llamaindex(folder: Path) -> None:
    """property_graph_store.json as PropertyGraphIndex writes it: one document's chunk (its metadata, the document's)
    through an extractor that gives the fixture's entities and relations as SimpleLLMPathExtractor gives its own
    (EntityNode and Relation, the chunk's metadata as their properties, a description where the fixture has one);
    the index adds triplet_source_id and the chunk, and SimplePropertyGraphStore.persist writes the file."""
    from llama_index.core import PropertyGraphIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.graph_stores.simple_labelled import SimplePropertyGraphStore
    from llama_index.core.graph_stores.types import KG_NODES_KEY, KG_RELATIONS_KEY, EntityNode, Relation
    from llama_index.core.llms.mock import MockLLM
    from llama_index.core.schema import TextNode, TransformComponent

    records = _fixture(folder)
    text = " ".join(d for _, _, d, _, _ in records["relations"] if d)
    metadata = {"file_name": records["file_name"], **records.get("metadata", {})}
    chunk = TextNode(id_="c0ffee00-0000-4000-8000-000000000001", text=text, metadata=metadata)

    class Given(TransformComponent):  # the extraction step: the fixture's triplets, as an extractor returns them
        def __call__(self, nodes, **kwargs):
            for node in nodes:
                meta = node.metadata.copy()
                entities = {
                    name: EntityNode(
                        name=name,
                        label=(kind or "entity").upper(),
                        properties={**meta, **({"description": d} if d is not None else {})},
                    )
                    for name, kind, d in records["entities"]
                }
                relations = [
                    Relation(
                        label=keywords.split(",")[0].strip().upper().replace(" ", "_").replace("-", "_"),
                        source_id=entities[s].id,
                        target_id=entities[t].id,
                        properties={**meta, **({"description": d} if d is not None else {})},
                    )
                    for s, t, d, keywords, _ in records["relations"]
                ]
                node.metadata[KG_NODES_KEY] = list(entities.values())
                node.metadata[KG_RELATIONS_KEY] = relations
            return nodes

    store = SimplePropertyGraphStore()
    PropertyGraphIndex(
        nodes=[chunk],
        llm=MockLLM(),
        kg_extractors=[Given()],
        property_graph_store=store,
        embed_model=MockEmbedding(embed_dim=1),
        embed_kg_nodes=False,
        use_async=False,
    )
    (folder / "llamaindex").mkdir(parents=True, exist_ok=True)
    store.persist(str(folder / "llamaindex" / "property_graph_store.json"))


STORES = {"graphrag": store_graphrag, "lightrag": store_lightrag, "llamaindex": store_llamaindex}


DRIVERS = {
    "graphrag": graphrag,
    "lightrag": lightrag,
    "llamaindex": llamaindex,
    "langchain": langchain,
    "neo4j_graphrag": neo4j_graphrag,
}


def main(argv: list[str] | None = None) -> int:
    """FRAMEWORK FOLDER: the context it builds from its store in FOLDER (printed as JSON); store FRAMEWORK FOLDER: its
    store written into FOLDER/FRAMEWORK from FOLDER/records.json."""
    args = argv if argv is not None else sys.argv[1:]
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path(__file__).resolve().parent.parent / "data" / "tiktoken"))
    if args[0] == "store":
        STORES[args[1]](Path(args[2]))
        return 0
    framework, folder = args[:2]
    print(json.dumps(DRIVERS[framework](Path(folder)), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
