"""leakage.py and whole_words.py: the leakage checks of article 8.3, by whole words."""

import json
import re
import sys

import pytest
from kg_graphs import FAMILY, QUESTIONS, problems_of, write

import benchmark
from benchmark import Node
from graphrag_format_benchmark import whole_words
from graphrag_format_benchmark.leakage import wording_leaks

from conftest import ROOT, without_read

sys.path.insert(0, str(ROOT / "bench"))
import synth_kg  # noqa: E402

# bench/synth_kg.py as README.md and docs/ run it: a folder, then its flags ('bench/synth_kg.py kg --edges 3000')
SYNTH_KG = re.compile(r"bench/synth_kg\.py ([A-Za-z]\w*)((?: --[a-z-]+(?: \d+)?)*)")
DOC_KGS = sorted(
    {
        tuple(match[1].split())
        for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        for match in SYNTH_KG.findall(page.read_text(encoding="utf-8"))
    }
)


def test_answer_sets_and_walks_back_over_an_edge_pass_the_solver_and_every_leakage_check(tmp_path, capsys):
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", "en"]) == 0
    err = without_read(capsys.readouterr().err)
    assert err == ""  # gold is not in golden_gate_bridge, russia not in grand_duke_of_russia, "." not in the template
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["preflight"]["questions"] == {"measured": 6, "several_answers_or_paths": 2, "abstention": 1}
    assert {c["check"]: c["result"] for c in manifest["preflight"]["leakage"]}["question_has_no_answer"] == "pass"


def test_leakage_warn_records_the_warning_and_measures(tmp_path, capsys):
    leaky = [dict(QUESTIONS[2], question="Is it the Golden Gate Bridge?")]
    code, err = problems_of(tmp_path, capsys, leaky, "--leakage", "warn", "--permutations", "2")
    assert code == 0
    assert err == [
        "warning: leakage check question_has_no_answer: no question's wording contains its own answer or "
        "answer id: gold: 'golden gate bridge'"
    ]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    check = next(c for c in manifest["preflight"]["leakage"] if c["check"] == "question_has_no_answer")
    assert check["result"] == "warn" and check["found"] == [{"question": "gold", "found": "'golden gate bridge'"}]
    assert "| question_has_no_answer | warn |" in (tmp_path / "out" / "size_report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "text, needle, found",
    [
        ("golden_gate_bridge", "gold", False),
        ("golden gate bridge", "gold", False),
        ("the gold-medal", "gold", True),
        ("grand_duke_of_russia", "russia", False),
        ("made in russia.", "russia", True),
        ("whom does carl know. really.", ".", False),
        ("prompt.json.q1.txt", "q1", True),
        ("prompt.json.q11.txt", "q1", False),
    ],
)
def test_leakage_matches_whole_words_only(text, needle, found):
    assert whole_words.mentions(text, needle) is found


def test_a_template_that_holds_an_answer_fails_the_leakage_check(tmp_path, capsys):
    template = tmp_path / "t.txt"
    template.write_text("{format_name} {graph}\nFor example, Dora.\n{question}\n", encoding="utf-8")
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", str(template)]) == 0  # Dora is no answer
    capsys.readouterr()
    template.write_text("{format_name} {graph}\nFor example, Golden Gate Bridge.\n{question}\n", encoding="utf-8")
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", str(template)]) == 2
    assert "question gold: leakage check template_has_no_answer failed: 'golden gate bridge'" in capsys.readouterr().err


def test_a_real_entity_named_gold_runs_and_a_marker_id_stops_naming_the_graph_and_the_id(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    graph = {
        "nodes": [
            {"id": "m.0gold", "name": "Gold", "type": "entity"},
            {"id": "m.0au", "name": "Au", "type": "entity"},
            {"id": "gold_1", "name": "Paris", "type": "entity"},
            {"id": "m.0fr", "name": "France", "type": "entity"},
        ],
        "edges": [
            {"source": "m.0gold", "relation": "symbol", "target": "m.0au"},
            {"source": "gold_1", "relation": "country", "target": "m.0fr"},
        ],
    }
    questions = [
        {
            "id": "q1",
            "question": "What is the symbol of Gold?",
            "answer": "Au",
            "answer_id": "m.0au",
            "path": [0],
            "insufficient": False,
            "query": {"start": "m.0gold", "hops": [{"relation": "symbol", "direction": "out"}]},
        }
    ]
    argv = write(tmp_path, graph, questions)
    assert benchmark.main(argv) == 2
    assert capsys.readouterr().err == (
        "error: g.json: leakage check ids_are_neutral failed: node id 'gold_1' (named 'Paris') adds the word 'gold'; "
        "rename the id, or pass --leakage warn to measure anyway\n"
    )
    graph["nodes"][2]["id"] = graph["edges"][1]["source"] = "m.0paris"
    assert benchmark.main(write(tmp_path, graph, questions)) == 0  # the entity Gold is a name, not a marker


@pytest.mark.parametrize(
    "node, markers",
    [
        (Node("gold_1", "Paris", "city"), ["gold"]),
        (Node("Gold", "Gold", "element"), []),
        (Node("correctAnswer", "Kazan", "city"), ["answer", "correct"]),
        (Node("golden_gate", "Golden Gate", "bridge"), []),
    ],
)
def test_leaky_markers(node, markers):
    assert whole_words.leaky_markers(node) == markers


def test_a_question_that_names_its_answer_or_writes_out_its_path_is_a_wording_leak():
    assert wording_leaks('Start at "The Last Summer". Follow a, then a backwards.', ["The Last Summer"], ["x"], []) == [
        "the last summer"
    ]
    assert wording_leaks("Start at node_7. Follow a.", ["Oslo"], ["node_7"], [(3, 4)]) == ["node_7"]
    assert wording_leaks("Is 3, 4 the path?", ["Oslo"], ["oslo"], [(3, 4), (5,)]) == ["3, 4"]
    assert wording_leaks('Start at "Osloport". Follow a.', ["Oslo"], ["oslo"], [(3, 4)]) == []


@pytest.mark.parametrize("flags", DOC_KGS, ids=" ".join)
def test_synth_kgs_questions_pass_the_leakage_preflight_with_the_docs_parameters(tmp_path, capsys, flags):
    """Its questions.json, as the docs make it, runs as it is: a walk back to its start would name its answer."""
    assert len(DOC_KGS) >= 3
    assert synth_kg.main([str(tmp_path / "kg"), *flags]) == 0
    argv = ["--graph", str(tmp_path / "kg" / "graph.json"), "--questions", str(tmp_path / "kg" / "questions.json")]
    assert benchmark.main([*argv, "--prompt", "en", "--no-write-prompts", "--out", str(tmp_path / "out")]) == 0
    assert "leakage" not in capsys.readouterr().err
