"""Real GraphRAG contexts: properties in questions, a context per question (given or cut by --context khop)."""

import json
import random
import sys
from dataclasses import replace

import pytest
from kg_graphs import score_answer

import benchmark
from benchmark import Ask, Condition, Edge, Graph, Hop, Node, Query
from graphrag_format_benchmark import formats, inputs, matrix, solver as solver_module

from conftest import ROOT, run_cli, without_read
from fake_openai import FakeOpenAI

sys.path.insert(0, str(ROOT / "bench"))
import synth_kg  # noqa: E402

# A hand-made graph of the size a new user tries first: people, companies, cities, with properties.
SMALL = {
    "nodes": [
        {"id": "ann", "name": "Ann Lee", "type": "person", "description": "Ann Lee is an engineer.", "born": 1980},
        {"id": "bob", "name": "Bob Stone", "type": "person", "description": "Bob Stone is a designer.", "born": 1975},
        {"id": "cat", "name": "Cat Moss", "type": "person", "born": 1990},
        {"id": "dan", "name": "Dan Ray", "type": "person", "description": "Dan Ray founded Acme."},
        {"id": "acme", "name": "Acme Corp", "type": "company", "founded": 1950, "public": True},
        {"id": "globex", "name": "Globex", "type": "company", "founded": 1989, "public": False},
        {"id": "initech", "name": "Initech", "type": "company", "founded": 1999},
        {"id": "paris", "name": "Paris", "type": "city", "population": 2.1},
        {"id": "lyon", "name": "Lyon", "type": "city", "population": 0.5},
        {"id": "oslo", "name": "Oslo", "type": "city"},
        {"id": "nice", "name": "Nice", "type": "city", "population": 0.34},
        {"id": "rome", "name": "Rome", "type": "city"},
    ],
    "edges": [
        {"id": "w1", "source": "ann", "relation": "works_at", "target": "acme", "since": 2005, "until": 2012},
        {"id": "w2", "source": "ann", "relation": "works_at", "target": "globex", "since": 2012},
        {"id": "w3", "source": "bob", "relation": "works_at", "target": "acme", "since": 1999},
        {
            "id": "w4",
            "source": "cat",
            "relation": "works_at",
            "target": "initech",
            "since": 2015,
            "source_doc": "doc_7",
        },
        {"id": "f1", "source": "dan", "relation": "founded", "target": "acme"},
        {"id": "h1", "source": "acme", "relation": "headquartered_in", "target": "paris", "confidence": 0.9},
        {"id": "h2", "source": "globex", "relation": "headquartered_in", "target": "lyon"},
        {"id": "h3", "source": "initech", "relation": "headquartered_in", "target": "oslo"},
        {"id": "l1", "source": "ann", "relation": "lives_in", "target": "nice"},
        {"id": "l2", "source": "bob", "relation": "lives_in", "target": "paris", "verified": True},
        {"id": "l3", "source": "dan", "relation": "lives_in", "target": "rome"},
        {"id": "k1", "source": "ann", "relation": "knows", "target": "bob"},
        {"id": "k2", "source": "bob", "relation": "knows", "target": "cat"},
    ],
}


def small_graph() -> Graph:
    return benchmark.validate_graph(json.loads(json.dumps(SMALL)), "small", benchmark.Problems())


def write(path, data):
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return str(path)


# ---- questions about properties: conditions on hops, a property asked for at the end


def test_a_condition_filters_the_edges_a_hop_follows():
    graph = small_graph()
    later = Query("ann", (Hop("works_at", "out", (Condition("since", ">=", 2010),)),))
    assert solver_module.solve(graph, later) == [((1,), "globex")]
    both = Query("ann", (Hop("works_at", "out"),))
    assert [end for _, end in solver_module.solve(graph, both)] == ["acme", "globex"]
    # a missing property, or a value of another kind, never holds
    assert solver_module.solve(graph, Query("ann", (Hop("works_at", "out", (Condition("until", ">", 0),)),))) == [
        ((0,), "acme")
    ]
    assert solver_module.solve(graph, Query("ann", (Hop("works_at", "out", (Condition("since", "=", "2012"),)),))) == []
    assert not solver_module.holds(Condition("public", "<", 1), (("public", True),))


def test_an_ask_wants_a_value_and_keeps_only_the_walks_that_end_where_it_has_one():
    graph = small_graph()
    founded = Query("ann", (Hop("works_at", "out"),), Ask("node", "founded"))
    walks = solver_module.solve(graph, founded)
    assert solver_module.gold_answers(graph, founded, walks) == ["1950", "1989"]
    population = Query("ann", (Hop("works_at", "out"), Hop("headquartered_in", "out")), Ask("node", "population"))
    assert solver_module.gold_answers(graph, population, solver_module.solve(graph, population)) == ["0.5", "2.1"]
    edge = Query("cat", (Hop("works_at", "out"),), Ask("edge", "source_doc"))
    assert solver_module.gold_answers(graph, edge, solver_module.solve(graph, edge)) == ["doc_7"]
    assert solver_module.solve(graph, Query("oslo", (Hop("headquartered_in", "in"),), Ask("node", "public"))) == []


def test_property_questions_are_checked_and_scored_by_value(tmp_path):
    questions = [
        {
            "id": "founded",
            "question": "When was the company Ann worked at after 2010 founded?",
            "answer": "1989",
            "path": ["w2"],
            "answer_id": "globex",
            "insufficient": False,
            "query": {
                "start": "ann",
                "hops": [
                    {
                        "relation": "works_at",
                        "direction": "out",
                        "where": [{"property": "since", "op": ">=", "value": 2010}],
                    }
                ],
                "ask": {"property": "founded", "of": "node"},
            },
        },
        {
            "id": "public",
            "question": "Is the company that Initech's city hosts public?",
            "answer": "INSUFFICIENT_DATA",
            "path": [],
            "answer_id": None,
            "insufficient": True,
            "query": {
                "start": "oslo",
                "hops": [{"relation": "headquartered_in", "direction": "in"}],
                "ask": {"property": "public", "of": "node"},
            },
        },
    ]
    graph, qfile = write(tmp_path / "g.json", SMALL), write(tmp_path / "q.json", questions)
    assert (
        benchmark.main(
            [
                "--graph",
                graph,
                "--questions",
                qfile,
                "--prompt",
                "en",
                "--model",
                "solver",
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    cells = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["cells"]
    assert {c["answer_correct"] for c in cells} == {True}
    q = inputs.load_inputs(tmp_path / "g.json", tmp_path / "q.json").questions[0]
    shown = small_graph()
    score = lambda answer: score_answer(json.dumps({"answer": answer, "path": [1], "evidence": []}), shown, q)  # noqa: E731
    assert score("1989").answer_correct and score("1989").path_supports_answer and score("1989").path_exact
    assert not score("Globex").answer_correct  # the node, not the value asked for
    assert not score("1950").answer_correct

    wrong = [dict(questions[0], answer="1950")]
    write(tmp_path / "wrong.json", wrong)
    done = run_cli("--graph", graph, "--questions", str(tmp_path / "wrong.json"), "--out", str(tmp_path / "o2"))
    assert done.returncode == 2
    assert (
        "question founded: answer '1950' is not a value of 'founded' where the gold paths end ('1989'); make the "
        "answers those values" in done.stderr
    )


def test_generated_property_questions_are_proven_and_the_solver_answers_them_all(tmp_path):
    rng = random.Random(4)
    graph = synth_kg.make_graph(1500, 120, rng, typed=True, props=random.Random(5))
    write(tmp_path / "g.json", graph)
    out = tmp_path / "out"
    assert (
        benchmark.main(
            [
                "--graph",
                str(tmp_path / "g.json"),
                "--generate-questions",
                "120",
                "--property-share",
                "0.6",
                "--prompt",
                "en",
                "--wording",
                "template",
                "--formats",
                "json,dsl",
                "--model",
                "solver",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    questions = json.loads((out / "questions.generated.json").read_text(encoding="utf-8"))
    asks = [q for q in questions if "ask" in q["query"]]
    conditions = [h for q in questions for h in q["query"]["hops"] if "where" in h]
    assert len(asks) >= 30 and len(conditions) >= 5
    assert all("What is the " + q["query"]["ask"]["property"] + " of" in q["question"] for q in asks)
    assert all("(only where " in q["question"] for q in questions if any("where" in h for h in q["query"]["hops"]))
    cells = json.loads((out / "results.json").read_text(encoding="utf-8"))["cells"]
    assert all(c["answer_correct"] and (c["insufficient"] or c["path_exact"]) for c in cells)


# ---- given contexts


def given_questions() -> list[dict]:
    return [
        {
            "id": "where_ann_works",
            "question": "Where is Ann's later employer based?",
            "answer": "Lyon",
            "path": ["w2", "h2"],
            "answer_id": "lyon",
            "insufficient": False,
            "query": {
                "start": "ann",
                "hops": [
                    {
                        "relation": "works_at",
                        "direction": "out",
                        "where": [{"property": "since", "op": ">=", "value": 2010}],
                    },
                    {"relation": "headquartered_in", "direction": "out"},
                ],
            },
            "context": {"edges": ["k1", "h2", "w2", "w1", "l1"], "nodes": ["rome"]},
        },
        {
            "id": "own",
            "question": "Who runs X?",
            "answer": "Y",
            "path": [0],
            "answer_id": "y",
            "insufficient": False,
            "query": {"start": "x", "hops": [{"relation": "run_by", "direction": "out"}]},
            "context": {
                "graph": {
                    "nodes": [
                        {"id": "x", "name": "X", "type": "t"},
                        {"id": "y", "name": "Y", "type": "t", "note": "own"},
                    ],
                    "edges": [{"source": "x", "relation": "run_by", "target": "y"}],
                }
            },
        },
    ]


def test_given_contexts_are_measured_each_on_its_own_graph_and_fed_back(tmp_path):
    graph, qfile = write(tmp_path / "g.json", SMALL), write(tmp_path / "q.json", given_questions())
    out = tmp_path / "out"
    assert (
        benchmark.main(
            ["--graph", graph, "--questions", qfile, "--prompt", "en", "--model", "solver", "--out", str(out)]
        )
        == 0
    )
    rows = json.loads((out / "size_report.json").read_text(encoding="utf-8"))
    first = {r["question_id"]: r for r in rows if r["format"] == "json"}
    assert first["where_ann_works"]["context"] == "where_ann_works" and first["where_ann_works"]["edges_total"] == 5
    assert first["where_ann_works"]["gold_path"] == [2, 1]  # the retriever's order: w2 is third, h2 second
    assert first["own"]["edges_total"] == 1
    fed = json.loads((out / "questions.small.original.json").read_text(encoding="utf-8"))
    assert [e["relation"] for e in fed[0]["context"]["graph"]["edges"]] == [
        "knows",
        "headquartered_in",
        "works_at",
        "works_at",
        "lives_in",
    ]
    assert [n["id"] for n in fed[0]["context"]["graph"]["nodes"]] == [
        "rome",
        "ann",
        "bob",
        "globex",
        "lyon",
        "acme",
        "nice",
    ]
    assert fed[0]["context"]["graph"]["edges"][2]["since"] == 2012  # properties go with the records
    again = tmp_path / "again"
    assert (
        benchmark.main(
            [
                "--graph",
                graph,
                "--questions",
                str(out / "questions.small.original.json"),
                "--prompt",
                "en",
                "--out",
                str(again),
            ]
        )
        == 0
    )
    rows_again = json.loads((again / "size_report.json").read_text(encoding="utf-8"))
    assert [r["prompt_sha256"] for r in rows_again] == [r["prompt_sha256"] for r in rows]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert all(c["path_exact"] for c in results["cells"])


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda qs: qs[0]["context"].update(edges=["k1", "h2", "w1"]),
            "q.json: question where_ann_works: its context leaves out gold edge(s) [1] (ann -works_at-> globex); add "
            "them to the context, "
            "or make the question an abstention one",
        ),
        (
            lambda qs: qs[0]["context"].update(edges=["k1", "k1"]),
            "q.json: questions[0].context.edges lists an edge twice; list each once",
        ),
        (
            lambda qs: qs[0]["context"].update(nodes=["zurich"]),
            "q.json: questions[0].context.nodes names 'zurich', which is not a node id of the graph",
        ),
        (
            lambda qs: qs[0].pop("context"),
            "q.json: question where_ann_works has no context while own and 0 other(s) have one; give every question "
            "its context, or none",
        ),
        (
            lambda qs: qs[1]["context"]["graph"]["edges"][0].update(target="nowhere"),
            "q.json: questions[1].context.graph: edges[0].target 'nowhere' is not a node id; add that node or fix the "
            "edge",
        ),
    ],
)
def test_a_context_that_cannot_be_measured_is_one_line_naming_the_question(tmp_path, change, message):
    questions = given_questions()
    change(questions)
    graph, qfile = write(tmp_path / "g.json", SMALL), write(tmp_path / "q.json", questions)
    done = run_cli(
        "--graph", graph, "--questions", qfile, "--prompt", "en", "--out", str(tmp_path / "out"), cwd=tmp_path
    )
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


# ---- retrieved contexts: --context khop


@pytest.fixture(scope="module")
def kg():
    rng = random.Random(3)
    return synth_kg.make_graph(4000, 250, rng, props=random.Random(4))


def khop_run(tmp_path, kg, *flags):
    tmp_path.mkdir(exist_ok=True)
    write(tmp_path / "g.json", kg)
    out = tmp_path / "out"
    assert (
        benchmark.main(
            [
                "--graph",
                str(tmp_path / "g.json"),
                "--generate-questions",
                "60",
                "--prompt",
                "en",
                "--context",
                "khop",
                "--out",
                str(out),
                *flags,
            ]
        )
        == 0
    )
    return out


def test_khop_contexts_hold_their_gold_paths_and_real_edges_only(tmp_path, kg):
    out = khop_run(tmp_path, kg, "--context-hops", "2", "--context-edges", "120", "--formats", "json,tsv")
    whole = {(e["source"], e["relation"], e["target"]): e for e in kg["edges"]}
    nodes = {n["id"]: n for n in kg["nodes"]}
    questions = json.loads((out / "questions.small.original.json").read_text(encoding="utf-8"))
    for q in questions:
        graph = q["context"]["graph"]
        for e in graph["edges"]:
            assert whole[(e["source"], e["relation"], e["target"])] == e  # a real edge, with its own properties
        for n in graph["nodes"]:
            assert nodes[n["id"]] == n
        positive = not q["insufficient"]
        gold = {i for p in (q["paths"] if "paths" in q else [q["path"]]) for i in p}
        assert len(graph["edges"]) <= 120 + len(gold)
        relations = [e["relation"] for e in graph["edges"]]
        for hop in q["query"]["hops"]:
            assert relations.count(hop["relation"]) >= min(
                2, sum(e["relation"] == hop["relation"] for e in kg["edges"])
            )
        assert graph["nodes"][0]["id"] == q["query"]["start"]
        if positive:
            assert gold <= set(range(len(graph["edges"])))
    rows = json.loads((out / "size_report.json").read_text(encoding="utf-8"))
    assert {r["answerable"] for r in rows} == {True} and not any(r["overflow"] for r in rows)
    report = (out / "size_report.md").read_text(encoding="utf-8")
    assert "Cut by --context khop: the neighbourhood of each question's start, breadth first out to 2 hop(s)" in report


def test_khop_contexts_are_seeded_and_the_solver_scores_every_format_perfectly(tmp_path, kg):
    flags = (
        "--formats",
        "json,edge_list,dsl",
        "--model",
        "solver",
        "--permutations",
        "2",
        "--ids",
        "original,short",
        "--edge-ids",
        "--context-edges",
        "60",
    )
    out, again = khop_run(tmp_path, kg, *flags), khop_run(tmp_path / "again", kg, *flags)
    for name in ("size_report.json", "questions.small.short.json", "order.small.p1.json"):
        assert (out / name).read_bytes() == (again / name).read_bytes()
    cells = json.loads((out / "results.json").read_text(encoding="utf-8"))["cells"]
    assert cells and all(c["answer_correct"] and (c["insufficient"] or c["path_exact"]) for c in cells)
    short = json.loads((out / "questions.small.short.json").read_text(encoding="utf-8"))
    for q in short:  # short local ids: n1, n2, ... in each context
        ids = [n["id"] for n in q["context"]["graph"]["nodes"]]
        assert sorted(ids, key=lambda i: int(i[1:])) == [f"n{k}" for k in range(1, len(ids) + 1)]


def test_khop_with_distractors_and_a_budget(tmp_path, kg):
    out = khop_run(
        tmp_path,
        kg,
        "--formats",
        "json,dsl",
        "--sizes",
        "small,medium",
        "--budget",
        "2500",
        "--model",
        "solver",
        "--context-edges",
        "60",
    )
    rows = json.loads((out / "size_report.json").read_text(encoding="utf-8"))
    small = {
        r["question_id"]: r["edges_total"]
        for r in rows
        if r["size"] == "small" and r["format"] == "json" and r["mode"] == "A"
    }
    medium = {
        r["question_id"]: r["edges_total"]
        for r in rows
        if r["size"] == "medium" and r["format"] == "json" and r["mode"] == "A"
    }
    # a start that no branch can hang off safely gets none
    assert sum(medium[q] > small[q] for q in small) >= 0.9 * len(small)
    assert all(r["prompt_tokens"] <= 2500 for r in rows if r["mode"] == "B")


# ---- the graphs users have: TSV/CSV triples, RDF, GraphML, Neo4j exports


def as_triples(graph: dict, delimiter: str) -> str:
    """SMALL as triples with a header: ids and names and types of both ends, node and edge properties as columns."""
    node = {n["id"]: n for n in graph["nodes"]}
    node_keys = sorted({k for n in graph["nodes"] for k in n} - {"id", "name", "type"})
    edge_keys = sorted({k for e in graph["edges"] for k in e} - {"id", "source", "relation", "target"})
    header = [
        "id",
        "source",
        "relation",
        "target",
        "source_name",
        "source_type",
        "target_name",
        "target_type",
        *(f"{end}.{k}" for end in ("source", "target") for k in node_keys),
        *edge_keys,
    ]
    cell = lambda v: "" if v is None else json.dumps(v) if isinstance(v, (bool, int, float)) else v  # noqa: E731
    rows = [header]
    for e in graph["edges"]:
        s, t = node[e["source"]], node[e["target"]]
        rows.append(
            [
                e["id"],
                e["source"],
                e["relation"],
                e["target"],
                s["name"],
                s["type"],
                t["name"],
                t["type"],
                *(cell(n.get(k)) for n in (s, t) for k in node_keys),
                *(cell(e.get(k)) for k in edge_keys),
            ]
        )
    return "\n".join(delimiter.join(r) for r in rows) + "\n"


def as_graphml(graph: dict) -> str:
    """SMALL as GraphML, written in the file's order, with typed keys."""
    from xml.sax.saxutils import escape, quoteattr

    kinds = {bool: "boolean", int: "long", float: "double", str: "string"}
    keys = {}
    for what, records, fixed in (
        ("node", graph["nodes"], {"id"}),
        ("edge", graph["edges"], {"id", "source", "target"}),
    ):
        for r in records:
            for k, v in r.items():
                if k not in fixed:
                    keys.setdefault((what, k), kinds[type(v)])
    ids = {key: f"d{k}" for k, key in enumerate(keys)}
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">']
    lines += [
        f'  <key id="{ids[key]}" for="{key[0]}" attr.name="{key[1]}" attr.type="{t}"/>' for key, t in keys.items()
    ]
    lines.append('  <graph edgedefault="directed">')
    text = lambda v: str(v).lower() if isinstance(v, bool) else escape(str(v))  # noqa: E731
    for n in graph["nodes"]:
        data = "".join(f'<data key="{ids[("node", k)]}">{text(v)}</data>' for k, v in n.items() if k != "id")
        lines.append(f"    <node id={quoteattr(n['id'])}>{data}</node>")
    for e in graph["edges"]:
        data = "".join(
            f'<data key="{ids[("edge", k)]}">{text(v)}</data>'
            for k, v in e.items()
            if k not in ("id", "source", "target")
        )
        lines.append(
            f"    <edge id={quoteattr(e['id'])} source={quoteattr(e['source'])} "
            f"target={quoteattr(e['target'])}>{data}</edge>"
        )
    return "\n".join([*lines, "  </graph>", "</graphml>", ""])


def as_neo4j(graph: dict) -> str:
    """SMALL as an APOC JSON export: nodes by internal number, labels, properties (the name among them)."""
    number = {n["id"]: str(k) for k, n in enumerate(graph["nodes"])}
    lines = [
        json.dumps(
            {
                "type": "node",
                "id": n["id"],
                "labels": [n["type"]],
                "properties": {k: v for k, v in n.items() if k not in ("id", "type")},
            }
        )
        for n in graph["nodes"]
    ]
    lines += [
        json.dumps(
            {
                "type": "relationship",
                "id": e["id"],
                "label": e["relation"],
                "start": {"id": e["source"], "labels": []},
                "end": {"id": e["target"], "labels": []},
                "properties": {k: v for k, v in e.items() if k not in ("id", "source", "relation", "target")},
            }
        )
        for e in graph["edges"]
    ]
    assert number
    return "\n".join(lines) + "\n"


def as_turtle(graph: dict, ntriples: bool = False) -> str:
    """SMALL as RDF in another vocabulary than the tool's own: http IRIs, rdfs:label, reified edge properties."""
    ex, rdf, rdfs = (
        "http://example.org/",
        "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
        "http://www.w3.org/2000/01/rdf-schema#",
    )

    def lit(v):
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)
        return str(v).lower() if isinstance(v, bool) else json.dumps(v)

    def typed(v):
        if not ntriples or isinstance(v, str):
            return lit(v)
        kind = "boolean" if isinstance(v, bool) else "integer" if isinstance(v, int) else "double"
        return f'"{lit(v)}"^^<http://www.w3.org/2001/XMLSchema#{kind}>'

    lines = []
    for n in graph["nodes"]:
        s = f"<{ex}{n['id']}>"
        lines += [f"{s} <{rdf}type> <{ex}type/{n['type']}> .", f"{s} <{rdfs}label> {lit(n['name'])} ."]
        lines += [f"{s} <{ex}p/{k}> {typed(v)} ." for k, v in n.items() if k not in ("id", "name", "type")]
    for k, e in enumerate(graph["edges"]):
        triple = (f"<{ex}{e['source']}>", f"<{ex}rel/{e['relation']}>", f"<{ex}{e['target']}>")
        lines.append(" ".join(triple) + " .")
        extra = {key: v for key, v in e.items() if key not in ("id", "source", "relation", "target")}
        if extra:
            r = f"_:r{k}"
            lines += [
                f"{r} <{rdf}subject> {triple[0]} .",
                f"{r} <{rdf}predicate> {triple[1]} .",
                f"{r} <{rdf}object> {triple[2]} .",
            ]
            lines += [f"{r} <{ex}p/{key}> {typed(v)} ." for key, v in extra.items()]
    return "\n".join(lines) + "\n"


SOURCES = {
    "json": lambda g: json.dumps(g, ensure_ascii=False),
    "tsv": lambda g: as_triples(g, "\t"),
    "csv": lambda g: as_triples(g, ","),
    "graphml": as_graphml,
    "jsonl": as_neo4j,
    "ttl": as_turtle,
    "nt": lambda g: as_turtle(g, ntriples=True),
}


def _ids_of(rows):
    return [(r["format"], r["question_id"], r["prompt_sha256"]) for r in rows]


@pytest.mark.parametrize("extension", [e for e in SOURCES if e != "json"])
def test_the_same_graph_from_any_file_gives_the_same_graph_and_prompts(tmp_path, extension):
    (tmp_path / f"g.{extension}").write_text(SOURCES[extension](SMALL), encoding="utf-8")
    (tmp_path / "g.json").write_text(SOURCES["json"](SMALL), encoding="utf-8")
    read = inputs.load_inputs(
        tmp_path / f"g.{extension}", ROOT / "data" / "questions.json", benchmark.Problems(), lambda g, w: ([], {})
    )
    want = small_graph()
    assert benchmark.first_difference(inputs.sorted_graph(want)[0], inputs.sorted_graph(read.graph)[0]) is None
    assert read.graph.edges == want.edges and read.graph_format == next(
        k for k, (exts, _) in inputs.GRAPH_FORMATS.items() if f".{extension}" in exts
    )
    for flags in (["--graph-order", "sorted"], ["--generate-questions", "20", "--context", "khop"]):
        runs = []
        for name in ("g.json", f"g.{extension}"):
            out = tmp_path / f"out-{name}-{flags[0]}"
            # RDF names no edge
            by_index = dict(given_questions()[0], path=[1, 6], context={"edges": [11, 6, 1, 0, 8], "nodes": ["rome"]})
            assert (
                benchmark.main(
                    [
                        "--graph",
                        str(tmp_path / name),
                        "--prompt",
                        "en",
                        "--out",
                        str(out),
                        *flags,
                        *(
                            []
                            if "--generate-questions" in flags
                            else ["--questions", write(tmp_path / "q.json", [by_index])]
                        ),
                    ]
                )
                == 0
            )
            runs.append(_ids_of(json.loads((out / "size_report.json").read_text(encoding="utf-8"))))
        assert runs[0] == runs[1] and runs[0]
    manifest = json.loads((tmp_path / f"out-g.{extension}---graph-order" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["inputs"][benchmark.display(tmp_path / f"g.{extension}")]["sha256"] == benchmark.sha256_hex(
        (tmp_path / f"g.{extension}").read_bytes()
    )


def test_the_tools_own_turtle_reads_back_as_the_graph_it_wrote(tmp_path):
    graph = small_graph()
    (tmp_path / "g.ttl").write_text(formats.serialize_turtle(graph), encoding="utf-8")
    read = inputs.load_inputs(
        tmp_path / "g.ttl", ROOT / "data" / "questions.json", benchmark.Problems(), lambda g, w: ([], {})
    )
    assert benchmark.first_difference(read.graph, graph) is None  # a set of triples: the same records


@pytest.mark.parametrize(
    "name, text, message",
    [
        (
            "g.tsv",
            "a\tb\n",
            "g.tsv: the header has no source column (source, subject, head, from, src, start); name the columns on its "
            "first line",
        ),
        ("g.tsv", "source\trelation\ttarget\na\tR\n", "g.tsv line 2: 2 fields where the header has 3; fix the row"),
        (
            "g.csv",
            "source,relation,target,source_name\na,R,b,A\na,S,b,B\n",
            "g.csv line 3: node 'a' has name 'B' here and 'A' in an earlier row; make them agree",
        ),
        (
            "g.ttl",
            "<http://x.org/a> <http://x.org/R> <http://y.org/a> .\n",
            "g.ttl: http://x.org/a and http://y.org/a share the local name 'a', which is a node's id here; give them "
            "distinct local names",
        ),
        (
            "g.ttl",
            "<http://x.org/a> a <http://x.org/T> , <http://x.org/U> .\n",
            "g.ttl: node 'a' has rdf:type twice ('T' and 'U'); keep one",
        ),
        ("g.ttl", "this is not turtle", "g.ttl: not turtle ("),
        ("g.graphml", "<graphml><nope/>", "g.graphml: not GraphML ("),
        (
            "g.jsonl",
            '{"type": "node", "id": "1", "labels": ["A"], "properties": {}}\n{"type": "edge"}\n',
            "g.jsonl line 2: expected a node or relationship of an APOC JSON export; fix the line",
        ),
    ],
)
def test_a_graph_file_that_cannot_be_mapped_is_one_line_naming_the_record(tmp_path, name, text, message):
    (tmp_path / name).write_text(text, encoding="utf-8")
    done = run_cli("--graph", name, "--out", "out", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("error: " + message), done.stderr
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "out").exists()


def test_graphml_of_lightrag_read_as_plain_graphml_reads_its_edges_as_related_to(tmp_path):
    import networkx

    g = networkx.Graph()
    g.add_node("ACME", entity_type="organization", description="A company.", source_id="chunk-1")
    g.add_node("PARIS", entity_type="geo", description="A city.")
    g.add_edge("ACME", "PARIS", weight=2.0, description="Acme is based in Paris.", keywords="based in")
    networkx.write_graphml(g, tmp_path / "lightrag.graphml")
    problems = benchmark.Problems()
    # without the flag: LightRAG's store (test_stores)
    data, _, kind = inputs.read_graph_file(tmp_path / "lightrag.graphml", "graphml")
    graph = benchmark.validate_graph(data, "g", problems)
    assert kind == "graphml" and not problems.lines
    assert graph.nodes == (Node("ACME", "ACME", "organization"), Node("PARIS", "PARIS", "geo"))
    assert graph.edges == (Edge("ACME", "related_to", "PARIS"),)
    store, _, kind = inputs.read_graph_file(tmp_path / "lightrag.graphml")
    assert kind == "lightrag" and store["edges"] == [
        {"source": "ACME", "relation": "Acme is based in Paris.", "target": "PARIS"}
    ]
    assert graph.edge_props == (
        (("description", "Acme is based in Paris."), ("keywords", "based in"), ("weight", 2.0)),
    )


def networkx_graph(cls, graph: dict):
    g = cls()
    for n in graph["nodes"]:
        g.add_node(n["id"], **{k: v for k, v in n.items() if k != "id"})
    for e in graph["edges"]:
        g.add_edge(e["source"], e["target"], **{k: v for k, v in e.items() if k not in ("source", "target")})
    return g


def typed_props_graph(parallel: bool) -> dict:
    """A synthetic KG with properties of every GraphML type: strings, ints (long), floats (double), booleans; with
    parallel edges (several relations between one pair) only when parallel."""
    graph = synth_kg.make_graph(400, 30, random.Random(3), props=random.Random(4))
    if not parallel:
        pairs = set()
        graph["edges"] = [
            e
            for e in graph["edges"]
            if (e["source"], e["target"]) not in pairs
            and not pairs.add((e["source"], e["target"]))
            and (e["target"], e["source"]) not in pairs
        ]
    for k, e in enumerate(graph["edges"]):
        e["flag"], e["weight"] = k % 3 == 0, k * 0.25
    for k, n in enumerate(graph["nodes"]):
        n["score"], n["rank"] = k / 7, 10**12 + k  # a double and a long
    return graph


@pytest.mark.parametrize(
    "cls, parallel", [("Graph", False), ("DiGraph", False), ("MultiGraph", True), ("MultiDiGraph", True)]
)
def test_graphml_as_networkx_writes_it_gives_the_json_runs_prompts(tmp_path, cls, parallel):
    import networkx

    graph = typed_props_graph(parallel)
    write(tmp_path / "g.json", graph)
    networkx.write_graphml(networkx_graph(getattr(networkx, cls), graph), tmp_path / "g.graphml")
    common = ["--generate-questions", "20", "--prompt", "en", "--formats", "json,tsv", "--graph-order", "sorted"]
    assert run_cli("--graph", "g.json", *common, "--out", "a", cwd=tmp_path).returncode == 0
    done = run_cli("--graph", "g.graphml", *common, "--out", "b", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    repeats = "edge ids repeat" in done.stderr
    assert repeats == parallel  # networkx writes a multigraph's keys as ids: read as keys, said once
    if parallel:
        assert done.stderr.count("warning: g.graphml: edge ids repeat (") == 1
        assert "they are read as keys, not edge ids" in done.stderr
    if cls in ("DiGraph", "MultiDiGraph"):  # an undirected class writes an edge in its own direction: it reads, no more
        prompts = sorted(p.name for p in (tmp_path / "a").glob("prompt.*.txt"))
        assert prompts and all((tmp_path / "a" / p).read_bytes() == (tmp_path / "b" / p).read_bytes() for p in prompts)


def test_graphml_whose_edge_ids_are_unique_keeps_them(tmp_path):
    text = (
        '<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns"><key id="r" for="edge" '
        'attr.name="relation" attr.type="string"/><graph edgedefault="directed"><node id="a"/><node '
        'id="b"/><edge id="e7" source="a" target="b"><data key="r">R</data></edge><edge id="e9" '
        'source="b" target="a"><data key="r">S</data></edge></graph></graphml>'
    )
    data = inputs.read_graphml(text, "g.graphml")
    assert [e.get("id") for e in data["edges"]] == ["e7", "e9"]


# ---- no request is paid for when no verdict can come out


def test_a_run_whose_baseline_prompts_all_overflow_stops_before_the_first_request(tmp_path):
    write(tmp_path / "g.json", SMALL)
    write(tmp_path / "q.json", given_questions()[:1])
    server = FakeOpenAI()
    # json does not fit, dsl does
    common = [
        "--graph",
        "g.json",
        "--questions",
        "q.json",
        "--prompt",
        "en",
        "--formats",
        "json,dsl",
        "--context-window",
        "400",
        "--model",
        "m",
        "--base-url",
        server.url,
        "--out",
        "out",
    ]
    try:
        done = run_cli(*common, cwd=tmp_path)
        assert done.returncode == 2 and not (tmp_path / "out").exists() and server.requests == []
        assert without_read(done.stderr).startswith(
            "error: no verdict is possible, so nothing was sent: every json prompt (the baseline) of "
            "o200k_base · small · original · A is over --context-window 400 (the smallest takes "
        )
        assert (
            done.stderr.rstrip().endswith("or pass --allow-no-verdict to send the prompts anyway")
            and len(without_read(done.stderr).splitlines()) == 1
        )
        anyway = run_cli(*common, "--allow-no-verdict", cwd=tmp_path)  # goes on: the prompts are sent
        assert anyway.returncode in (0, 1) and server.requests, anyway.stderr
    finally:
        server.close()
    # the solver has no window: nothing to stop
    solver = run_cli(*common[:-6], "--model", "solver", "--out", "out", cwd=tmp_path)
    assert solver.returncode == 0, solver.stderr


def test_size_report_shows_what_the_properties_cost_per_format(tmp_path):
    write(tmp_path / "g.json", SMALL)
    write(tmp_path / "q.json", given_questions())
    done = run_cli(
        "--graph",
        "g.json",
        "--questions",
        "q.json",
        "--prompt",
        "en",
        "--formats",
        "json,tsv,dsl",
        "--out",
        "out",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "out" / "size_report.md").read_text(encoding="utf-8")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    cost = manifest["config"]["property_graph_tokens"]["by_size"]["small"]
    rows = json.loads((tmp_path / "out" / "size_report.json").read_text(encoding="utf-8"))
    assert cost["json"]["with"] == sum(r["graph_tokens"] for r in rows if r["format"] == "json")
    for fmt in ("json", "tsv", "dsl"):  # an independent count of the same graphs without their properties
        contexts = [
            replace(c, graph=replace(c.graph, node_props=(), edge_props=()))
            for c in matrix.input_contexts(
                inputs.load_inputs(tmp_path / "g.json", tmp_path / "q.json"),
                matrix.Plan([fmt], [], ["small"], ["original"], 1, None, 128000, 2026, False, context="given"),
            )[0]
        ]
        bare = sum(benchmark.load_tokenizer("o200k_base").count(benchmark.serialized(fmt, c.graph)) for c in contexts)
        assert cost[fmt]["without"] == bare
        assert f"| small | {fmt} | {cost[fmt]['with']:,} | {bare:,} | +{cost[fmt]['with'] - bare:,} (" in report
    assert "properties cost (graph tokens, o200k_base): small: json +" in done.stdout
