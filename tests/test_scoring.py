"""scoring.py: answers, paths and abstentions scored by the
article's rules, the same for every format; why an answer failed."""

import json
from dataclasses import replace

import pytest
from kg_graphs import FAMILY, QUESTIONS, score_answer, write
from test_runner import DIAGNOSED, PERFECT, E, answer

import benchmark
from graphrag_format_benchmark import scoring


def test_solver_model_scores_every_answer_and_path_of_answer_sets(tmp_path):
    argv = [
        *write(tmp_path, FAMILY, QUESTIONS),
        "--prompt",
        "en",
        "--model",
        "solver",
        "--sizes",
        "small,medium",
        "--formats",
        ",".join(benchmark.FORMATS),
    ]
    assert benchmark.main(argv) == 0
    table = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["aggregates"]
    for e in table:
        assert (e["answer_correct"]["rate"], e["path_exact"]["rate"], e["abstention_correct"]["rate"]) == (
            1.0,
            1.0,
            1.0,
        ), e["format"]
    rows = json.loads((tmp_path / "out" / "size_report.json").read_text(encoding="utf-8"))
    row = next(r for r in rows if r["question_id"] == "siblings" and r["size"] == "small")
    assert row["gold_path"] == [0, 0] and row["gold_paths"] == [[0, 0], [0, 1]]
    assert "gold_paths" not in next(r for r in rows if r["question_id"] == "gold")


def test_scoring_takes_any_answer_and_path_and_the_best_matching_gold_path():
    graph = benchmark.load_inputs.__globals__["validate_graph"](FAMILY, "g", benchmark.Problems())
    q = benchmark.Question("kids", "?", ("Ann", "Bob"), ((2,), (3,)), False, ("ann", "bob"), None)

    def score(answer, path):
        evidence = [graph.edges[i]._asdict() for i in path]
        return score_answer(json.dumps({"answer": answer, "path": path, "evidence": evidence}), graph, q)

    assert score("bob", [3]).answer_correct and score("bob", [3]).path_exact
    assert score("Ann", [2]).path_exact and not score("Carl", [2]).answer_correct
    both = score("Ann", [2, 3])  # best gold path: [2] (ties go to the shorter, then the first listed)
    assert (both.path_exact, both.edge_precision, both.edge_recall) == (False, 0.5, 1.0)


def test_perfect_answer(small):
    graph, q = small
    assert score_answer(answer("Казань", [0, 3, 6, 10], graph=graph), graph, q["q1"])._asdict() == PERFECT


def test_backward_path_of_q2_is_valid_and_supports_the_answer(small):
    graph, q = small
    assert score_answer(answer(" максим ", [11, 8, 5, 2], graph=graph), graph, q["q2"])._asdict() == PERFECT


def test_reversed_edge_in_evidence(small):
    graph, q = small
    evidence = [graph.edges[i]._asdict() for i in (0, 3, 6, 10)]
    evidence[3] = {"source": "city_kazan", "relation": "LOCATED_IN", "target": "org_vector"}
    assert score_answer(answer("Казань", [0, 3, 6, 10], evidence), graph, q["q1"])._asdict() == {
        **PERFECT,
        "evidence_match": False,
    }


def test_right_answer_wrong_path_is_visible(small):
    graph, q = small
    assert score_answer(answer("Казань", [11], graph=graph), graph, q["q1"])._asdict() == {
        **PERFECT,
        "path_exact": False,
        "edge_precision": 0.0,
        "edge_recall": 0.0,
        "path_supports_answer": False,
        "right_answer_wrong_path": True,
        "diagnosis": "right_answer_wrong_path",
    }


def test_fenced_json_is_read_and_said_not_as_asked(small):
    graph, q = small
    content = "```json\n" + answer("Казань", [0, 3, 6, 10], graph=graph) + "\n```"
    assert score_answer(content, graph, q["q1"])._asdict() == {**PERFECT, "json_as_asked": False}


def test_abstaining_on_an_answerable_question(small):
    graph, q = small
    assert score_answer(answer("INSUFFICIENT_DATA", [], []), graph, q["q1"])._asdict() == {
        **scoring.FAILED_SCORES._asdict(),
        "parse_success": True,
        "abstained": True,
        "false_abstention": True,
        "json_as_asked": True,
        "diagnosis": "false_abstention",
    }


def test_abstention_question(small):
    graph, q = small
    nulls = dict.fromkeys(
        [
            "false_abstention",
            "path_exact",
            "edge_precision",
            "edge_recall",
            "valid_path",
            "evidence_match",
            "path_supports_answer",
            "right_answer_wrong_path",
        ]
    )
    assert score_answer(answer("INSUFFICIENT_DATA", [], []), graph, q["q6"])._asdict() == {
        "parse_success": True,
        "abstained": True,
        "answer_correct": True,
        **nulls,
        "json_as_asked": True,
        "diagnosis": None,
    }
    assert score_answer(answer("insufficient_data", [9], graph=graph), graph, q["q6"]).answer_correct is False


def test_index_out_of_range(small):
    graph, q = small
    scores = score_answer(answer("Казань", [0, 99], [graph.edges[0]._asdict()]), graph, q["q1"])
    assert (scores.path_exact, scores.valid_path, scores.edge_precision, scores.edge_recall) == (
        False,
        False,
        0.5,
        0.25,
    )


def test_with_edge_ids_an_index_path_is_no_path(small):
    graph, questions = small
    graph = replace(graph, edge_ids=tuple(f"e{k + 1}" for k in range(len(graph.edges))))
    q = questions["q1"]  # gold path [0, 3, 6, 10]
    by_ids = {
        "answer": "Казань",
        "path": ["e1", "e4", "e7", "e11"],
        "evidence": [graph.edges[i]._asdict() for i in (0, 3, 6, 10)],
    }
    assert score_answer(json.dumps(by_ids), graph, q).path_exact is True
    by_index = dict(by_ids, path=[0, 3, 6, 10])
    scores = score_answer(json.dumps(by_index), graph, q)
    assert (scores.path_exact, scores.valid_path, scores.answer_correct) == (False, False, True)


@pytest.mark.parametrize("diagnosis", DIAGNOSED)
def test_a_hand_made_answer_gets_its_diagnosis(small, diagnosis):
    graph, q = small
    qid, content = DIAGNOSED[diagnosis]
    assert score_answer(content, graph, q[qid]).diagnosis == diagnosis


def test_every_diagnosis_is_defined_and_hand_made():
    assert set(DIAGNOSED) | {
        "request_failed",
        "context_overflow",
        "cut_by_output_cap",
        "cut_by_context",
        "cut_in_a_loop",
        "cut_echoing_the_prompt",
    } == set(scoring.DIAGNOSES)


# Real answers of Qwen2.5-Coder-1.5B-Instruct (Q4, llama.cpp) to the article's prompts, as the hand audit judged them
# (bench/README.md, Real models): (question, answer text, answer right, path exact, diagnosis).
REAL_ANSWERS = [
    (
        "q5",
        '{\n  "answer": "Атлас",\n  "path": [2, 3],\n  "evidence": [\n    '
        '{"source":"project_atlas","relation":"USES","target":"method_compress"}\n  ]\n}',
        True,
        False,
        "miscounted_indices",
    ),
    (
        "q1",
        '{\n  "answer": "Институт Вектор",\n  "path": [2, 4],\n  "evidence": [\n    '
        '{"source":"org_vector","relation":"DEVELOPED_BY","target":"person_irina"}\n  ]\n}',
        False,
        False,
        "edge_not_shown",
    ),
    (
        "q1",
        '{\n  "answer": "Институт Вектор",\n  "path": [1, 3],\n  "evidence": [\n    '
        '{"source":"person_irina","relation":"LEADS","target":"org_vector"},\n    '
        '{"source":"org_vector","relation":"DEVELOPED_BY","target":"method_graph"}\n  ]\n}',
        False,
        False,
        "edge_reversed",
    ),
    (
        "q4",
        '{\n  "answer": "Казань",\n  "path": [3, 10],\n  "evidence": [\n    '
        '{"source":"org_vector","relation":"LOCATED_IN","target":"city_kazan"}\n  ]\n}',
        True,
        False,
        "broken_chain",
    ),
    (
        "q4",
        '{\n  "answer": "Казань",\n  "path": [1, 3],\n  "evidence": [\n    '
        '{"source":"person_irina","relation":"LEADS->","target":"project_orion"},\n    '
        '{"source":"project_orion","relation":"DEVELOPED_BY->","target":"org_vector"}\n  ]\n}',
        True,
        False,
        "edge_not_shown",
    ),
    (
        "q5",
        '{\n  "answer": "project_atlas",\n  "path": [2, 3],\n  "evidence": [\n    '
        '{"source":"person_irina","relation":"MEMBER_OF","target":"org_north"},\n    '
        '{"source":"org_north","relation":"USES","target":"method_compress"}\n  ]\n}',
        True,
        False,
        "edge_not_shown",
    ),
    (
        "q6",
        '{\n  "answer": "YES",\n  "path": [1, 3],\n  "evidence": [\n    '
        '{"source":"org_vector","relation":"LOCATED_IN","target":"city_kazan"},\n    '
        '{"source":"method_hybrid","relation":"DEVELOPED_BY","target":"org_vector"}\n  ]\n}',
        False,
        None,
        "missed_abstention",
    ),
]


@pytest.mark.parametrize("qid, content, right, exact, diagnosis", REAL_ANSWERS)
def test_real_answers_are_scored_as_the_audit_judged(small, qid, content, right, exact, diagnosis):
    graph, q = small
    scores = score_answer(content, graph, q[qid])
    assert (scores.answer_correct, scores.path_exact, scores.diagnosis) == (right, exact, diagnosis)


@pytest.mark.parametrize(
    "content, expected",
    [
        (
            'Sure! Here is the JSON:\n{"answer": "Казань", "path": [0, 3, 6, 10], "evidence": []}\nHope it helps.',
            ("Казань", [0, 3, 6, 10]),
        ),
        ('```\n{"answer": "Казань", "path": ["0", "3", "6", "10"], "evidence": []}\n```', ("Казань", [0, 3, 6, 10])),
        ('{"answer": 1998, "path": [4], "evidence": [], "confidence": "high"}', ("1998", [4])),
        ('{"answer": "Казань"}', ("Казань", [])),
        ('{"path": [0]}', None),
        ("I cannot answer.", None),
        (
            '[{"answer": "Казань", "path": [0], "evidence": []}]',
            ("Казань", [0]),
        ),  # the first object with an answer, wherever it is
    ],
)
def test_replies_are_read_alike_for_every_format(content, expected):
    parsed = scoring.parse_answer(content)
    assert (parsed.answer, parsed.path) == expected if expected else parsed is None


def test_padded_answers_and_triples_in_the_path(small):
    graph, q = small
    path = [E[i] for i in (0, 3, 6, 10)]
    for said in ("Казань.", '"Казань"', "Казань (city_kazan)", "city_kazan"):
        scores = score_answer(
            json.dumps({"answer": said, "path": [0, 3, 6, 10], "evidence": path}, ensure_ascii=False), graph, q["q1"]
        )
        assert (scores.answer_correct, scores.diagnosis) == (True, None), said
    as_triples = json.dumps(
        {"answer": "Казань", "path": [list(e.values()) for e in path], "evidence": path}, ensure_ascii=False
    )
    assert score_answer(as_triples, graph, q["q1"]).path_exact is True
    # no fuzzy match: scenario 5
    assert (
        score_answer(
            json.dumps({"answer": "в Казани", "path": [0, 3, 6, 10], "evidence": path}, ensure_ascii=False),
            graph,
            q["q1"],
        ).answer_correct
        is False
    )


@pytest.mark.parametrize(
    "content, question, expected",
    [
        ('{"answer": "Paris", "path": [' + ", ".join(["1, 2"] * 300), "", "cut_in_a_loop"),
        (
            "The answer is:\nSandra_Allen -" + "2019-08-31 20:47:56.125-date = 2019-08-31 20:47:56.125-time = " * 4,
            "",
            "cut_in_a_loop",
        ),
        ('{"answer": "x"}<|im_end|>\n<|im_start|>user\nWhat next', "", "cut_echoing_the_prompt"),
        (
            "Question: Which project does Irina Belova lead?\nGraph:\n" + "a" * 50,
            "Which project does Irina Belova lead?",
            "cut_echoing_the_prompt",
        ),
        (
            '{"answer": "Paris", "path": [3, 17, 4], "evidence": ['
            + ", ".join(f'["n{k}", "r{k * 7 % 13}", "m{k * 5 % 11}"]' for k in range(20)),
            "",
            "cut_by_output_cap",
        ),
        ("", "", "cut_by_output_cap"),
    ],
)
def test_an_answer_cut_at_the_cap_is_told_a_loop_or_an_echoed_prompt_from_a_short_cap(content, question, expected):
    """Raising --max-output-tokens mends a long answer, never a loop (it only grows) or a wrong chat template."""
    from graphrag_format_benchmark.answers import Answer

    record = Answer(None, content, "length", None, 0.0, 700, 1024, None)
    assert scoring.cell_diagnosis("OK", "no_json", record, False, 1024, question) == expected
    assert expected in scoring.DIAGNOSES


def test_a_path_is_read_as_the_prompt_asks_it_in_a_layout_that_ranks_its_edges(tmp_path):
    """LightRAG shows its relationships ranked and prints no id: the prompt's 'its place from 0 in the order shown' is
    not the graph's index, which the scorer read (a right path scored wrong). GraphRAG ranks too, but prints each row's
    id, which the prompt asks for and the scorer reads."""
    from graphrag_format_benchmark import frameworks

    n = lambda i: benchmark.Node(i, i.title(), "entity")  # noqa: E731
    graph = benchmark.Graph(
        tuple(map(n, ("ann", "bob", "cat", "dan"))),
        (
            benchmark.Edge("ann", "KNOWS", "bob"),
            benchmark.Edge("bob", "KNOWS", "cat"),
            benchmark.Edge("bob", "KNOWS", "dan"),
            benchmark.Edge("cat", "KNOWS", "dan"),
        ),
    )
    order = frameworks.cited_order("lightrag", graph)
    assert order == [1, 2, 0, 3] and frameworks.cited_order("graphrag", graph) is None
    q = benchmark.Question(
        "q",
        "Who does someone Ann knows know?",
        ("Cat",),
        ((0, 1),),
        False,
        ("cat",),
        benchmark.Query("ann", (benchmark.Hop("KNOWS", "out"), benchmark.Hop("KNOWS", "out"))),
    )
    as_shown = json.dumps({"answer": "Cat", "path": [order.index(0), order.index(1)], "evidence": []})
    key = scoring.AnswerKey(graph, q, order=order)
    assert key.score(as_shown).path_exact is True
    assert scoring.AnswerKey(graph, q).score(json.dumps({"answer": "Cat", "path": [0, 1]})).path_exact is True
    text = benchmark.FORMATS["lightrag"].serialize(graph)
    shown = [json.loads(line) for line in text.split("\n") if line.startswith('{"entity1"')]
    assert [(r["entity1"], r["entity2"]) for r in shown] == [
        (graph.edges[k].source, graph.edges[k].target) for k in order
    ]
