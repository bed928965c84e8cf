"""questions.py: question sets drawn from the graph (--generate-questions): proven, spread over hop counts,
reproducible; near-miss abstentions."""

import collections
import json
import random
import re
import sys

import pytest

import benchmark
from graphrag_format_benchmark import inputs as inputs_module, questions as questions_module

from conftest import ROOT, run_cli, without_read

sys.path.insert(0, str(ROOT / "bench"))
from kg_graphs import FAMILY, QUESTIONS, independent_near_miss_share, typed_english_graph, write

import synth_kg  # noqa: E402


def test_generated_questions_are_spread_proven_and_reproducible(tmp_path):
    rng = random.Random(21)
    graph = synth_kg.make_graph(2500, 200, rng)
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    argv = [
        "--graph",
        str(tmp_path / "g.json"),
        "--generate-questions",
        "100",
        "--hops",
        "1-4",
        "--prompt",
        "en",
        "--model",
        "solver",
        "--formats",
        "json,dsl",
        "--no-write-prompts",
        "--wording",
        "template",
    ]
    done = run_cli(*argv, "--out", str(tmp_path / "a"))
    assert (done.returncode, without_read(done.stderr)) == (0, "")  # the solver and every leakage check accept them
    generated = (tmp_path / "a" / "questions.generated.json").read_bytes()
    questions = json.loads(generated)
    kinds = collections.Counter((len(q["query"]["hops"]), q["insufficient"]) for q in questions)
    assert kinds == {(h, False): 20 for h in range(1, 5)} | {(h, True): 5 for h in range(1, 5)}
    assert all(q["question"].startswith('Start at "') for q in questions)
    positives = [q for q in questions if not q["insufficient"]]
    assert all(
        q["question"].endswith(
            ". Which nodes do you reach? Name any one of them." if "answer_ids" in q else ". Which node do you reach?"
        )
        for q in positives
    )
    assert all(len(q.get("answer_ids", [None])) <= questions_module.MAX_ANSWERS for q in positives)
    table = json.loads((tmp_path / "a" / "results.json").read_text(encoding="utf-8"))["aggregates"]
    assert {(e["answer_correct"]["rate"], e["path_exact"]["rate"], e["abstention_correct"]["rate"]) for e in table} == {
        (1.0, 1.0, 1.0)
    }
    assert run_cli(*argv, "--out", str(tmp_path / "b")).returncode == 0
    assert (tmp_path / "b" / "questions.generated.json").read_bytes() == generated  # the same seed, the same set
    again = run_cli(
        "--graph",
        str(tmp_path / "g.json"),
        "--questions",
        str(tmp_path / "a" / "questions.generated.json"),
        "--prompt",
        "en",
        "--formats",
        "json,dsl",
        "--out",
        str(tmp_path / "c"),
        "--no-write-prompts",
    )
    assert again.returncode == 0, again.stderr  # fed back as a questions file
    rows = lambda out: [r["prompt_sha256"] for r in json.loads((out / "size_report.json").read_text(encoding="utf-8"))]  # noqa: E731
    assert rows(tmp_path / "c") == rows(tmp_path / "a")


def test_a_small_graph_yields_what_it_can_and_says_how_many_per_hop_count(tmp_path, capsys):
    argv = [
        *write(tmp_path, FAMILY, QUESTIONS)[:2],
        "--generate-questions",
        "40",
        "--hops",
        "1-2",
        "--out",
        str(tmp_path / "out"),
    ]
    assert benchmark.main(argv) == 0
    err = capsys.readouterr().err
    assert re.search(
        r"warning: the graph yields \d+ of the 40 questions asked for \(1 hop\(s\): \d+, 2 hop\(s\): \d+\)", err
    )
    questions = json.loads((tmp_path / "out" / "questions.generated.json").read_text(encoding="utf-8"))
    # the article's language by default
    assert questions and all(q["question"].startswith("Начни с «") for q in questions)


@pytest.mark.parametrize("kind", ["typed", "untyped"])
def test_generated_abstentions_are_near_misses_a_schema_cannot_refuse(tmp_path, kind):
    if kind == "typed":
        graph, role = typed_english_graph(), "type"
    else:
        graph, role = synth_kg.make_graph(1200, 120, random.Random(21)), "relation"
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    argv = [
        "--graph",
        str(tmp_path / "g.json"),
        "--generate-questions",
        "80",
        "--abstain-share",
        "0.5",
        "--prompt",
        "en",
        "--out",
        str(tmp_path / "out"),
    ]
    assert benchmark.main(argv) == 0
    questions = json.loads((tmp_path / "out" / "questions.generated.json").read_text(encoding="utf-8"))
    share, n = independent_near_miss_share(graph, questions, role)
    assert n >= 30 and share >= 0.9
    abstentions = [q for q in questions if q["insufficient"]]
    assert all(
        q["near_miss"]["hop"] == len(q["query"]["hops"]) and q["near_miss"]["peers_with_hop"] >= 1 for q in abstentions
    )
    assert any(len(q["query"]["hops"]) > 1 for q in abstentions)  # breaks after a real walk, like the article's q6


def test_generate_questions_and_a_questions_file_do_not_mix(tmp_path, capsys):
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--generate-questions", "5"]) == 2
    assert capsys.readouterr().err == "error: --generate-questions draws the questions: leave --questions out\n"


def test_natural_generated_questions_name_no_relation_and_are_proven(tmp_path):
    rng = random.Random(21)
    graph = synth_kg.make_graph(2500, 200, rng)
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    done = run_cli(
        "--graph",
        str(tmp_path / "g.json"),
        "--generate-questions",
        "100",
        "--hops",
        "1-4",
        "--prompt",
        "en",
        "--model",
        "solver",
        "--formats",
        "json",
        "--no-write-prompts",
        "--out",
        str(tmp_path / "a"),
    )
    assert (done.returncode, without_read(done.stderr)) == (0, "")  # the solver and every leakage check accept them
    questions = json.loads((tmp_path / "a" / "questions.generated.json").read_text(encoding="utf-8"))
    relations = {e["relation"] for e in graph["edges"]}
    assert len(questions) == 100
    for q in questions:
        assert not q["question"].startswith("Start at") and q["question"].endswith(("?", "name any one.)"))
        assert not [r for r in relations if "_" in r and r in q["question"]], q["question"]
    table = json.loads((tmp_path / "a" / "results.json").read_text(encoding="utf-8"))["aggregates"]
    assert {(e["answer_correct"]["rate"], e["path_exact"]["rate"], e["abstention_correct"]["rate"]) for e in table} == {
        (1.0, 1.0, 1.0)
    }


def test_no_two_generated_questions_read_alike(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    from framework_stores import large_records, lightrag_store

    records, _, _ = inputs_module.read_graph_file(
        lightrag_store(tmp_path / "s", *large_records(60)), store_fields="all"
    )
    graph = benchmark.validate_graph(records, "store", benchmark.Problems())
    for seed in range(4):
        drawn, _ = questions_module.generate_questions(
            graph, questions_module.GenerateSpec(60, (1, 3), 0.25, seed, "en")
        )
        texts = [q["question"] for q in drawn]
        assert len(set(texts)) == len(texts) and len(texts) >= 40


def test_a_graph_that_yields_no_more_spends_no_more_draws(tmp_path, monkeypatch):
    graph = benchmark.Graph(
        (benchmark.Node("a", "Ann", "person"), benchmark.Node("b", "Bob", "person")),
        (benchmark.Edge("a", "KNOWS", "b"),),
    )
    draws = collections.Counter()
    real = questions_module.QuestionDraw.__call__

    def counted(self, hops_n, abstain):
        draws[hops_n, abstain] += 1
        return real(self, hops_n, abstain)

    monkeypatch.setattr(questions_module.QuestionDraw, "__call__", counted)
    drawn, counts = questions_module.generate_questions(
        graph, questions_module.GenerateSpec(20_000, (1, 1), 0.2, 7, "en")
    )
    assert counts == {1: 2} and len(drawn) == 2  # Ann -> Bob and Bob -> Ann; no near miss on a graph of one relation
    # each (hop count, kind) gives up after EXHAUSTED slots in a row
    # without a question: not 200 draws for each of 20,000 slots
    assert sum(draws.values()) <= (2 + questions_module.EXHAUSTED) * questions_module.GENERATION_DRAWS * 2


def test_no_generated_answer_is_a_name_another_node_has_case_aside():
    nodes = tuple(
        benchmark.Node(i, name, "city")
        for i, name in (
            ("p1", "Paris"),
            ("p2", "PARIS"),
            ("l", "Lyon"),
            ("f", "France"),
            ("g", "Germany"),
            ("b", "Berlin"),
        )
    )
    edges = tuple(benchmark.Edge(s, "LOCATED_IN", t) for s, t in (("p1", "f"), ("p2", "f"), ("l", "f"), ("b", "g")))
    graph = benchmark.Graph(nodes, edges)
    drawn, _ = questions_module.generate_questions(graph, questions_module.GenerateSpec(40, (1, 1), 0.0, 3, "en"))
    answers = {a for q in drawn for a in q.get("answers", [q.get("answer")])}
    assert answers and not answers & {"Paris", "PARIS"}


@pytest.mark.parametrize("kind", ["lightrag", "llamaindex"])
def test_a_store_read_whole_shows_its_bookkeeping_and_no_question_asks_about_it(tmp_path, kind):
    """With --store-fields all, 6 of 40 (LightRAG: created_at, entity_id, file_path) and 13 of 40 (LlamaIndex:
    triplet_source_id, file_name) generated questions asked about bookkeeping: shown, never asked about."""
    import framework_stores

    framework_stores.MAKERS[kind](tmp_path / "store", *framework_stores.large_records(n_people=300, seed=3))
    done = run_cli(
        "--graph",
        str(tmp_path / "store"),
        "--store-fields",
        "all",
        "--generate-questions",
        "40",
        "--prompt",
        "en",
        "--context",
        "khop",
        "--formats",
        "json",
        "--write-prompts",
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    questions = json.loads((tmp_path / "out" / "questions.generated.json").read_text(encoding="utf-8"))
    asked = [q["query"]["ask"]["property"] for q in questions if q["query"].get("ask")]
    conditions = [c["key"] for q in questions for h in q["query"]["hops"] for c in h.get("where", [])]
    assert len(questions) == 40 and not set(asked + conditions) & questions_module.BOOKKEEPING, (asked, conditions)
    text = next((tmp_path / "out").glob("prompt.*.txt")).read_text(encoding="utf-8")
    assert '"file_path"' in text or '"file_name"' in text  # shown all the same
