"""inputs.py and benchmark.py's reading: every problem of the inputs at once, one line each; templates; questions
skipped with their reasons."""

import dataclasses
import json
import re

from kg_graphs import FAMILY, QUESTIONS, SIBLINGS, TOKENIZERS, problems_of, write

import benchmark
from graphrag_format_benchmark import inputs

from conftest import ROOT, run_cli, without_read


def test_singular_and_plural_forms_must_agree(tmp_path, capsys):
    bad = [dict(SIBLINGS, answer="Ann")]
    assert benchmark.main(write(tmp_path, FAMILY, bad)) == 2
    assert capsys.readouterr().err == (
        "error: q.json: questions[0] gives both 'answer' and 'answers' and they disagree; keep one of them\n".replace(
            "q.json", benchmark.display(tmp_path / "q.json")
        )
    )


def test_every_problem_is_reported_at_once_before_anything_is_measured(tmp_path, capsys):
    misspelled = dict(QUESTIONS[1], query={"start": "carl", "hops": [{"relation": "chidlren", "direction": "out"}]})
    backwards = dict(
        QUESTIONS[1], id="back", query={"start": "carl", "hops": [{"relation": "children", "direction": "in"}]}
    )
    one_path = dict(SIBLINGS, id="one", answers=["Ann", "Bob"], paths=[[0, 0]])
    no_query = {
        "id": "loose",
        "question": "?",
        "answer": "Dora",
        "answer_id": "dora",
        "path": [0, 5],
        "insufficient": False,
    }
    wrong_name = dict(QUESTIONS[2], id="name", answer="The Bridge")
    code, err = problems_of(tmp_path, capsys, [misspelled, backwards, one_path, no_query, wrong_name])
    assert code == 2
    assert err == [
        "error: q.json: question kids: hop 1 of 1 (chidlren out) finds no edge from the start 'carl'; relations they "
        "can follow forwards (out): children, knows, spouse; did you mean 'children'?",
        "error: q.json: question back: hop 1 of 1 (children in) finds no edge from the start 'carl'; relations they "
        'can follow backwards (in): parents; children leaves them in the other direction: use "out"',
        "error: q.json: question one: the query finds 2 complete path(s), the question lists 1 gold path(s); found but "
        "not listed: [0, 1] (ann -parents-> carl, bob -parents-> carl); list every complete path in `paths` or narrow "
        "the query",
        "error: q.json: question loose: path [0, 5] (ann -parents-> carl, dora -lives_near-> golden_gate_bridge) is "
        "not a "
        "connected walk; fix the path",
        "error: q.json: question name: answer 'The Bridge' is not the name of an answer node ('golden_gate_bridge' is "
        "named 'Golden Gate Bridge'); make the answer the node's name",
        "error: 5 problems found; nothing was written; pass --skip-invalid-questions to drop the questions at fault "
        "and go on",
    ]
    assert not (tmp_path / "out").exists()


def test_the_list_of_problems_is_capped(tmp_path, capsys):
    broken = [dict(QUESTIONS[2], id=f"q{i}", path=[7, 7]) for i in range(60)]
    code, err = problems_of(tmp_path, capsys, broken)
    assert code == 2 and len(err) == 52
    assert err[-2:] == [
        "error: ... and 10 more problems",
        "error: 60 problems found; nothing was written; pass --skip-invalid-questions to drop the questions at fault "
        "and go on",
    ]


def test_skip_invalid_questions_drops_each_with_its_reason_and_goes_on(tmp_path, capsys):
    leaky = dict(QUESTIONS[2], id="leaky", question="Is it the Golden Gate Bridge?")
    code, err = problems_of(
        tmp_path, capsys, [*QUESTIONS, leaky], "--skip-invalid-questions", "--sizes", "small,medium"
    )
    assert code == 0
    assert err == [
        "warning: skipped question leaky: q.json: question leaky: leakage check question_has_no_answer failed: "
        "'golden gate bridge'; fix the question, or pass --leakage warn to measure anyway",
        "warning: 1 question(s) skipped, 6 kept",
        "warning: no distractor branch can hang off 'grand_duke_of_russia' without completing a question's path; it "
        "gets none",
        "warning: medium: 0 of the 55 distractor branches it needs could be made: the graph's names are too few to "
        "vary into "
        "more new names without numbers or blends (spent first: like carl, like dora)",
    ]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert [s["question"] for s in manifest["preflight"]["skipped_questions"]] == ["leaky"]
    report = (tmp_path / "out" / "size_report.md").read_text(encoding="utf-8")
    assert "Skipped by --skip-invalid-questions: 1 question(s)." in report and "| leaky | " in report
    rows = json.loads((tmp_path / "out" / "size_report.json").read_text(encoding="utf-8"))
    assert "leaky" not in {r["question_id"] for r in rows}


def test_skipping_every_question_is_an_error(tmp_path, capsys):
    code, err = problems_of(tmp_path, capsys, [dict(QUESTIONS[2], path=[7, 7])], "--skip-invalid-questions")
    assert code == 2 and err[-1] == "error: q.json: every question was skipped (1 with problems); nothing was written"


def test_english_prompts_hold_no_cyrillic_outside_the_graph(tmp_path):
    argv = [*write(tmp_path, FAMILY, QUESTIONS), "--prompt", "en", "--write-prompts"]
    assert benchmark.main(argv) == 0
    prompts = sorted((tmp_path / "out").glob("prompt.*.txt"))
    assert len(prompts) == 30
    for path in prompts:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("You are performing an exact traversal of a directed graph.\n\nGraph format: ")
        assert not re.search("[\u0400-\u04ff]", text), path.name
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["prompt"] == {
        "template": "en",
        "sha256": benchmark.sha256_hex(benchmark.PROMPT_TEMPLATES["en"]),
    }


def test_a_template_file_is_checked_and_used(tmp_path, capsys):
    template = tmp_path / "t.txt"
    template.write_text('Answer as {"answer": ...}.\n{format_name}:\n{graph}\nQ:\n{question}\n', encoding="utf-8")
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", str(template)]) == 0
    text = (tmp_path / "out" / "prompt.dsl.kids.txt").read_text(encoding="utf-8")
    assert text.startswith('Answer as {"answer": ...}.\ndsl:\n# @ id|name|type\n') and text.endswith(
        "\nQ:\nWho are the children of Carl?\n"
    )
    # question first
    template.write_text("Q: {question}\n{format_name} graph, then the JSON answer:\n{graph}", encoding="utf-8")
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", str(template)]) == 0
    for row in json.loads(
        (tmp_path / "out" / "size_report.json").read_text(encoding="utf-8")
    ):  # counted whole, exactly
        text = (tmp_path / "out" / f"prompt.{row['format']}.{row['question_id']}.txt").read_text(encoding="utf-8")
        assert row["prompt_tokens"] == TOKENIZERS["o200k_base"].count(text) and text.startswith("Q: ")
    for bad, message in (
        ("{graph}{question}", "has {format_name} 0 times"),
        ("{format_name}{graph}{graph}{question}", "has {graph} 2 times"),
        ("{format_name}{graph}{question}{answer}", "has the unknown field {answer}"),
    ):
        template.write_text(bad, encoding="utf-8")
        assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", str(template)]) == 2
        assert message in capsys.readouterr().err


def test_skipped_questions_are_named_on_stdout_and_in_results(tmp_path, capsys):
    leaky = dict(QUESTIONS[2], id="leaky", question="Is it the Golden Gate Bridge?")
    argv = [*write(tmp_path, FAMILY, [*QUESTIONS, leaky]), "--skip-invalid-questions", "--model", "solver"]
    assert benchmark.main(argv) == 0
    out = capsys.readouterr().out
    assert "skipped 1 question(s) (--skip-invalid-questions): leaky (" in out and "question_has_no_answer failed" in out
    report = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert "Skipped by --skip-invalid-questions: 1 question(s): leaky (" in report


def test_an_english_graph_under_the_default_russian_prompt_gets_a_hint(tmp_path, capsys):
    assert benchmark.main(write(tmp_path, FAMILY, QUESTIONS)) == 0
    assert without_read(capsys.readouterr().err) == (
        "warning: the graph's names hold no Cyrillic, but the prompt is the article's "
        "Russian one (the default, --prompt ru); for an English graph try --prompt en\n"
    )
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", "ru"]) == 0  # said on purpose: no hint
    assert without_read(capsys.readouterr().err) == ""


def test_a_question_without_a_query_is_walked_from_its_gold_path_and_the_run_says_so(tmp_path):
    """The control solver abstained on a hand-written question without 'query', with no word why: its walk is now
    derived from its gold path where that walk finds exactly its paths and answers; an abstention question has none to
    derive from, and the run says both, once."""
    questions = json.loads((ROOT / "data" / "questions.json").read_text(encoding="utf-8"))
    for q in questions:
        q.pop("query", None)
    (tmp_path / "q.json").write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    done = run_cli("--questions", str(tmp_path / "q.json"), "--model", "solver", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert (
        "have no 'query'"
        not in run_cli("--questions", str(tmp_path / "q.json"), "--out", str(tmp_path / "offline")).stderr
    )
    assert (
        f"warning: 6 question(s) of {tmp_path / 'q.json'} have no 'query': the control solver walks the one derived "
        "from each "
        "one's gold path (its start, relations and directions); it abstains on the 1 abstention question(s), as it "
        "should\n"
    ) in done.stderr
    cells = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["cells"]
    assert {c["path_exact"] for c in cells if not c["insufficient"]} == {True}
    article = {q["id"]: q for q in json.loads((ROOT / "data" / "questions.json").read_text(encoding="utf-8"))}
    graph = benchmark.load_inputs(ROOT / "data" / "graph.json", ROOT / "data" / "questions.json").graph
    for q in benchmark.load_inputs(ROOT / "data" / "graph.json", tmp_path / "q.json").questions:
        derived = inputs.derived_query(graph, q)
        if q.id != "q6":  # each derived query is the one the article's file gives
            assert derived is not None and (derived.start, [list(h[:2]) for h in derived.hops]) == (
                article[q.id]["query"]["start"],
                [[h["relation"], h["direction"]] for h in article[q.id]["query"]["hops"]],
            )
    q1 = benchmark.load_inputs(ROOT / "data" / "graph.json", tmp_path / "q.json").questions[0]
    # the walk finds another answer
    assert inputs.derived_query(graph, dataclasses.replace(q1, answers=("Москва",))) is None
