"""gate.py: the acceptance gate's verdicts, what blocks them, and their error rates on answers whose truth is set."""

import json
import random
import re

import pytest
from kg_graphs import gate_inputs, make_cell, scripted_run, verdict_record
from test_runner import PERFECT

import benchmark
from graphrag_format_benchmark import aggregates, gate, matrix, scoring, statistics
from graphrag_format_benchmark.runner import send


def test_the_solver_on_200_questions_is_accepted_on_every_format(tmp_path, capsys):
    assert benchmark.main([*gate_inputs(tmp_path, 200), "--model", "solver", "--out", str(tmp_path / "out")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert [
        (v["format"], v["verdict"], v["positive_questions"], v["abstention_questions"]) for v in results["verdicts"]
    ] == [("tsv", "accept", 160, 40), ("dsl", "accept", 160, 40)]
    tsv = results["verdicts"][0]
    assert (
        tsv["checks"]["path_exact"]["lower"] == -0.0223
        and tsv["checks"]["path_exact"]["method"] == "newcombe method 11 (continuity corrected)"
    )
    # 40 agree: bound -0.085
    assert tsv["checks"]["abstention"]["result"] == "pass" and tsv["checks"]["abstention"]["tolerance"] == 0.15
    assert tsv["holm"] == {"p_value": 0.003259, "threshold": 0.025, "formats": 2, "shown": True}
    # the records give back what results.json holds, key for key
    assert [verdict_record(v).as_json() for v in results["verdicts"]] == results["verdicts"]
    report = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert report.index("## Verdicts against json") < report.index("## o200k_base")
    # the gate accepts, as it would a model's answers alike; the solver's line says what that proves
    assert re.fullmatch(
        r"ship (tsv|dsl), which saves \d+% .* accepted over 160 positive and 40 abstention questions",
        gate.recommendation([verdict_record(v) for v in results["verdicts"]], "json"),
    )
    solver = (
        "o200k_base · small · original · A: the control solver answered every prompt perfectly: the harness is sound; "
        "its answers say nothing of a format — run a model for a verdict; tsv would save 57% of the prompt tokens of "
        "json (o200k_base's count)"
    )
    assert f"\nRecommendation for {solver}.\n" in report
    assert f"\nverdict for {solver}\n" in capsys.readouterr().out
    # no model-only columns for the solver
    assert "| format | prompt tokens | answer | path exact | abstention |\n" in report


def test_sixty_perfect_questions_are_too_few_to_accept_and_say_how_many_would_do(tmp_path):
    assert benchmark.main([*gate_inputs(tmp_path), "--model", "solver", "--out", str(tmp_path / "out")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    tsv = results["verdicts"][0]
    assert (tsv["verdict"], tsv["positive_questions"], tsv["undecided"]) == (
        "undecided",
        48,
        ["path_exact", "valid_path", "abstention"],
    )
    # 74 positive questions that all agree pass at 0.05 (two formats: alpha 0.025), 25 abstention questions at 0.15;
    # with a fifth of the questions abstentions, 125 in all
    assert (
        tsv["questions_needed"] == {"path_exact": 74, "valid_path": 74, "abstention": 25}
        and tsv["questions_to_generate"] == 125
    )
    report = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert "about 125 questions in all would show it with 80% power if it is as good" in report
    assert gate.recommendation([verdict_record(v) for v in results["verdicts"]], "json") == (
        "no decision yet: about 125 questions in all (--generate-questions 125) "
        "would show the closest format no worse with 80% power if it is as good as json; until then, json stays"
    )
    assert "Recommendation for o200k_base · small · original · A: the control solver answered every prompt " in report


def test_the_solver_that_misses_what_a_budget_cut_names_the_formats_and_still_decides_nothing(tmp_path, capsys):
    argv = [*gate_inputs(tmp_path), "--model", "solver", "--budget", "2000", "--out", str(tmp_path / "out")]
    assert benchmark.main(argv) == 0
    report = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert (
        "\nRecommendation for o200k_base · small · original · B: the control solver missed prompts of json, tsv, dsl: "
        "it walks the graph a prompt shows, so a miss is a gold path the prompt does not hold (cut by --budget) or a "
        "fault of the harness; its answers say nothing of a format — run a model for a verdict.\n"
    ) in report


def test_the_article_s_six_questions_decide_nothing_at_any_number_of_permutations(tmp_path, capsys):
    assert benchmark.main(["--model", "solver", "--permutations", "5", "--out", str(tmp_path / "out")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert {v["verdict"] for v in results["verdicts"]} == {"undecided"}
    assert {v["positive_questions"] for v in results["verdicts"]} == {5}  # 25 prompts, but 5 positive questions
    check = results["verdicts"][0]["checks"]["path_exact"]
    # -ln(0.05) / 5 at least
    assert (check["lower"], check["method"]) == (
        -0.5991,
        "guarded paired t over question means",
    )
    assert "ship" not in (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert "ship" not in capsys.readouterr().out


def test_a_model_wrong_everywhere_gets_no_verdict_and_no_recommendation(tmp_path, capsys):
    wrong = json.dumps({"answer": "nobody", "path": [0], "evidence": []})
    assert scripted_run(tmp_path, lambda item: wrong, *gate_inputs(tmp_path, 40), "--formats", "json,jsonl,tsv") == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert {v["verdict"] for v in results["verdicts"]} == {"undecided"}
    assert "under the floor 0.20" in results["verdicts"][0]["blocked_by"][0]
    out = capsys.readouterr().out
    assert (
        "verdict for o200k_base · small · original · A: no recommendation: the baseline json gets 0.00 of the positive"
        in out
    )
    assert "ship" not in out and "ship" not in (tmp_path / "out" / "results.md").read_text(encoding="utf-8")


def test_a_format_wrong_on_its_3_hop_questions_is_rejected_and_the_hop_table_shows_where(tmp_path):
    def answer_of(item):
        wrong = item.row.format == "dsl" and matrix.hop_bucket(item.question) == "3"
        return "{}" if wrong else json.dumps(send.solver_answer(item), ensure_ascii=False)

    assert scripted_run(tmp_path, answer_of, *gate_inputs(tmp_path, 80), "--tolerance", "0.1") == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    verdict = {v["format"]: v for v in results["verdicts"]}
    # 64 positive questions pass at 0.1; 16 abstention
    assert verdict["tsv"]["checks"]["path_exact"]["result"] == "pass"
    # questions cannot, yet
    assert (verdict["tsv"]["verdict"], verdict["tsv"]["undecided"]) == (
        "undecided",
        ["abstention"],
    )
    assert verdict["dsl"]["verdict"] == "reject" and "path_exact" in verdict["dsl"]["failed"]
    dsl = next(e for e in results["aggregates"] if e["format"] == "dsl")
    assert dsl["by_hops"]["3"]["path_exact"]["rate"] == 0.0 and dsl["by_hops"]["2"]["path_exact"]["rate"] == 1.0


def test_a_question_counts_once_however_many_permutations_and_repeats():
    paired = gate.Paired({"q1": [(True, True)] * 5, "q2": [(True, False), (True, True)]})
    check = gate.paired_check(paired, 0.05)
    assert check.questions == 2 and check.outcomes == gate.Outcomes(
        both=1.5, only_format=0.5, only_baseline=0.0, neither=0.0
    )
    assert check.method == "guarded paired t over question means" and paired.differences() == [0.0, 0.5]
    # no question: no figure, and results.json holds no tolerance for it
    assert gate.paired_check(gate.Paired({}), 0.05).as_json() == {
        "questions": 0,
        "result": "undecided",
        "difference": None,
        "lower": None,
        "upper": None,
        "method": None,
        "p_value": None,
        "questions_needed": None,
        "outcomes": None,
    }


def test_permutations_buy_power_when_a_question_is_not_always_answered_alike():
    # the same 60 questions: once (binary), and three times where the format misses now and then
    once = gate.Paired({f"q{i}": [(i % 10 != 0, True)] for i in range(60)})
    thrice = gate.Paired({f"q{i}": [(k != i % 10, True) for k in range(3)] for i in range(60)})
    assert once.bounds(0.05)[0] == pytest.approx(thrice.bounds(0.05)[0])  # the same difference, -0.1
    assert thrice.bounds(0.05)[1] > once.bounds(0.05)[1]  # a narrower bound from the same questions


def test_holm_lets_through_only_what_survives_the_family():
    def accepted(fmt, p):
        return gate.Verdict(
            **dict.fromkeys(("encoding", "size", "ids", "mode", "baseline", "saving_counted_by", "roundtrip"), ""),
            format=fmt,
            tolerance=0.05,
            abstention_tolerance=0.15,
            verdict="accept",
            failed=[],
            undecided=[],
            blocked_by=[],
            positive_questions=0,
            abstention_questions=0,
            questions_needed={},
            questions_to_generate=None,
            saving=None,
            checks={},
            p_value=p,
        )

    judged = gate.holm([accepted("c", 0.04), accepted("a", 0.01), accepted("b", 0.03)])
    assert [(v.format, v.verdict, v.holm and v.holm.threshold) for v in judged] == [
        ("c", "undecided", 0.05),
        ("a", "accept", 0.016667),
        ("b", "undecided", 0.025),
    ]
    assert judged[2].undecided == ["holm"] and "holm" not in gate.holm([accepted("d", None)])[0].as_json()


def test_questions_for_power_decides_at_about_its_power():
    # differences with a spread: the number asked for passes an equal format about 80% of the time
    rng = random.Random(3)
    sample = [rng.choice((-1, 0, 0, 0, 0, 0, 0, 0, 1)) / 1 for _ in range(50)]
    n = gate.questions_for_power(sample, 0.05, 0.05)
    sd = (sum(x * x for x in sample) / 49) ** 0.5
    passes = (
        sum(
            statistics.guarded_t([rng.choice((-1, 0, 0, 0, 0, 0, 0, 0, 1)) for _ in range(n)], 0.05, -1, 1)[1] >= -0.05
            for _ in range(400)
        )
        / 400
    )
    assert 500 < n < 700 and abs(sd - 0.47) < 0.1 and 0.72 < passes < 0.88


def test_failed_requests_and_a_mode_b_budget_that_tells_nothing_block_every_verdict():
    def cell(fmt, qid, ok, status="OK"):
        return make_cell(
            encoding="e",
            size="small",
            ids="original",
            mode="B",
            format=fmt,
            question_id=qid,
            permutation=0,
            repeat=0,
            status=status,
            insufficient=False,
            **(PERFECT if ok else scoring.FAILED_SCORES._asdict()),
            prompt_tokens=900 if fmt == "json" else 450,
            truncated_by_server=False,
            over_output_cap=False,
        )

    scored = [cell("json", f"q{i}", True) for i in range(300)] + [
        cell("dsl", f"q{i}", i > 0, "ERROR" if i == 0 else "OK") for i in range(300)
    ]
    table = aggregates.aggregate(scored, (None, None))
    assert [(e.format, e.prompt_tokens, e.errors) for e in table] == [("json", 900, 0), ("dsl", 450, 1)]
    (v,) = gate.verdicts(scored, table, "json", 0.05)
    assert v.verdict == "undecided" and v.blocked_by[0].startswith("1 request(s) of dsl and json failed")
    note = {
        matrix.GroupKey(
            "e", "small", "original", "B"
        ): "e · small · original: at --budget 900 ... cannot tell the formats apart"
    }
    (v,) = gate.verdicts(scored, table, "json", 0.05, note)
    assert v.blocked_by[0].endswith("cannot tell the formats apart")
    assert gate.recommendation([v], "json").startswith("no recommendation: e · small · original: at --budget 900")


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--baseline", "foo"], "error: unknown format 'foo' in --baseline; choose one of --formats: json, tsv"),
        (
            ["--baseline", "dsl"],
            "error: --baseline dsl is not among --formats json,tsv; add it to --formats or choose one of them",
        ),
        (["--tolerance", "2"], "error: --tolerance must be a share between 0 and 1 (exclusive), got 2.0; e.g. 0.05"),
        (["--tolerance", "nan"], "error: --tolerance is nan; give a finite number"),
        (["--tolerance", "0"], "error: --tolerance must be a share between 0 and 1 (exclusive), got 0.0; e.g. 0.05"),
        (
            ["--abstention-tolerance", "1"],
            "error: --abstention-tolerance must be a share between 0 and 1 (exclusive), got 1.0; e.g. 0.15",
        ),
    ],
)
def test_bad_gate_flags(tmp_path, capsys, flags, message):
    assert benchmark.main(["--model", "solver", "--formats", "json,tsv", "--out", str(tmp_path / "out"), *flags]) == 2
    assert capsys.readouterr().err.strip() == message
    assert not (tmp_path / "out").exists()


def test_gate_flags_without_a_model_run(tmp_path, capsys):
    assert benchmark.main(["--baseline", "json", "--tolerance", "0.1", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --baseline and --tolerance judge a model's answers: use them with --model "
        "(a run or --score), not without one or with --export-batch"
    )
