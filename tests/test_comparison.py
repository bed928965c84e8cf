"""--compare: several model runs over the same questions, side by side. Three scripted models over the same 150
generated questions, whose truth we set: one is worse on tsv, one is worse on json, one is equal on both."""

import hashlib
import json
import re
import xml.etree.ElementTree as ET

import pytest
from kg_graphs import gate_inputs

import benchmark
from graphrag_format_benchmark import inputs as inputs_module, measure, options, questions, results as results_module
from graphrag_format_benchmark.runner import send

from conftest import ROOT
from fake_openai import FakeOpenAI


def misses(qid: str) -> bool:
    """A fixed 30% of the questions."""
    return int(hashlib.sha256(qid.encode()).hexdigest(), 16) % 10 < 3


def model_run(tmp_path, name, worse_on, *flags):
    """A run of model `name` through a fake server: the control solver's answers, except on `worse_on`'s prompts of the
    questions that misses() picks, where it answers wrong."""
    argv = [*gate_inputs(tmp_path, 150), "--formats", "json,tsv", "--model", name, *flags]
    args = options.parse_config([*argv, "--base-url", "http://127.0.0.1:9/v1"])
    plan = options.make_plan(args)
    spec = options.make_generate_spec(args, plan)
    inputs = inputs_module.load_inputs(args.graph, args.questions, None, questions.question_drawer(spec))
    answers = {}
    for item in measure.measure(inputs, plan).items:
        wrong = item.row.format == worse_on and not item.question.insufficient and misses(item.question.id)
        answers[item.prompt()] = "{}" if wrong else json.dumps(send.solver_answer(item), ensure_ascii=False)
    server = FakeOpenAI(answer=lambda prompt: answers[prompt])
    out = tmp_path / name
    try:
        assert benchmark.main([*argv, "--base-url", server.url, "--out", str(out)]) == 0
    finally:
        server.close()
    return out


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("three")
    return tmp_path, [
        model_run(tmp_path, "prefers-json", "tsv", "--input-price-per-million", "1", "--output-price-per-million", "2"),
        model_run(tmp_path, "prefers-tsv", "json", "--encoding", "cl100k_base"),
        model_run(tmp_path, "equal", None),
    ]


def test_three_models_compared_match_the_truth_we_set(three_runs, capsys):
    tmp_path, runs = three_runs
    out = tmp_path / "compared"
    assert benchmark.main(["--compare", *map(str, runs), "--out", str(out)]) == 0
    assert capsys.readouterr().out == (
        "small · original · A: no format is accepted for every model (tsv: prefers-json: reject)\n"
        f"comparison: {out / 'comparison.md'}\n"
    )
    c = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    board = {(e["model"], e["format"]): e for e in c["leaderboard"]}
    assert {k: v["verdict"] for k, v in board.items()} == {
        ("prefers-json", "json"): "baseline",
        ("prefers-json", "tsv"): "reject",
        ("prefers-tsv", "json"): "baseline",
        ("prefers-tsv", "tsv"): "accept",
        ("equal", "json"): "baseline",
        ("equal", "tsv"): "accept",
    }
    positive = board[("equal", "json")]["path_exact"]["questions"]
    missed = board[("prefers-json", "tsv")]["path_exact"]["rate"]
    assert positive == 120 and board[("equal", "tsv")]["path_exact"]["rate"] == 1.0 and 0.6 < missed < 0.8
    # the same questions missed, on the other format
    assert board[("prefers-tsv", "json")]["path_exact"]["rate"] == missed
    # answered "{}"; the fake server's usage (1,000 prompt tokens) says it cut every prompt
    wrong = round((1 - missed) * 120)
    assert (
        board[("prefers-json", "tsv")]["diagnoses"] == {"cut_by_context": wrong}
        and board[("equal", "tsv")]["diagnoses"] == {}
    )
    assert f"| prefers-json | tsv | 150 | {wrong} ({wrong / 150:.0%}) |" in (out / "comparison.md").read_text(
        encoding="utf-8"
    )
    # each model's prices
    assert board[("prefers-json", "json")]["cost"] is not None and board[("equal", "json")]["cost"] is None
    assert board[("equal", "tsv")]["saving"] > 0.3 and board[("prefers-tsv", "tsv")]["encoding"] == "cl100k_base"
    # each by the model's own tokenizer
    assert board[("prefers-tsv", "tsv")]["saving"] != board[("equal", "tsv")]["saving"]
    diff = next(
        d for d in c["model_differences"] if (d["format"], d["model"], d["other"]) == ("tsv", "prefers-json", "equal")
    )
    # per question
    assert diff["difference"] == round(missed - 1, 4) and diff["ci95"][1] < 0 and diff["questions"] == 120
    assert diff["method"] == "newcombe method 11 (continuity corrected)"
    report = (out / "comparison.md").read_text(encoding="utf-8")
    assert "**No format is accepted for every model** (tsv: prefers-json: reject)." in report
    assert "| tsv | prefers-json − equal | 120 |" in report
    assert re.search(
        r"\| tsv \| 0\.\d\d \[0\.\d\d, 0\.\d\d\] · \d\d,\d\d\d \(−5\d%\) · \$0\.\d{4} · [\d.]+ s · reject \|", report
    )


def test_two_models_that_accept_the_same_format_name_it(three_runs, capsys):
    tmp_path, runs = three_runs
    assert benchmark.main(["--compare", str(runs[1]), str(runs[2]), "--out", str(tmp_path / "two")]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "small · original · A: accepted for every model: tsv"


def test_the_comparison_chart_has_a_mark_per_model_and_format_and_nothing_past_its_canvas(three_runs):
    tmp_path, runs = three_runs
    out = tmp_path / "chart"
    assert benchmark.main(["--compare", *map(str, runs), "--out", str(out)]) == 0
    svg = ET.fromstring((out / "comparison.svg").read_text(encoding="utf-8"))
    width, height = float(svg.get("width")), float(svg.get("height"))
    ns = "{http://www.w3.org/2000/svg}"
    marks = [m for m in svg.iter() if m.get("class") == "mark"]
    assert sorted((m.get("data-model"), m.get("data-format")) for m in marks) == sorted(
        (model, fmt) for model in ("prefers-json", "prefers-tsv", "equal") for fmt in ("json", "tsv")
    )
    assert len({m.get("fill") for m in marks if m.get("fill") != "white"}) == 3  # a colour per model
    boxes = []
    for text in svg.iter(f"{ns}text"):  # 10-px sans-serif: about 5 px a character, as the other charts' test takes it
        x, size, n = float(text.get("x")), float(text.get("font-size")), len(text.text or "")
        wide = 0.5 * size * n
        left = (
            x - wide / 2 if text.get("text-anchor") == "middle" else x - wide if text.get("text-anchor") == "end" else x
        )
        assert left >= 0 and left + wide <= width and float(text.get("y")) <= height, text.text
        if text.get("class") in ("tick", "legend", "label"):
            boxes.append((left, float(text.get("y")) - size, left + wide, float(text.get("y"))))
    assert not any(
        a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3] for i, a in enumerate(boxes) for b in boxes[i + 1 :]
    )
    legends = [t.text for t in svg.iter(f"{ns}text") if t.get("class") == "legend"]
    assert legends == ["prefers-json", "prefers-tsv", "equal"]


def test_runs_over_other_questions_or_another_tool_version_are_refused_in_one_line(three_runs, tmp_path, capsys):
    base, runs = three_runs
    other = model_run(tmp_path, "other-questions", None, "--seed", "7")
    capsys.readouterr()
    assert benchmark.main(["--compare", str(runs[0]), str(other), "--out", str(tmp_path / "c")]) == 2
    assert capsys.readouterr().err == (
        f"error: {runs[0]} and {other} ask different questions under small · original; "
        "compare runs over the same questions\n"
    )
    old = tmp_path / "old"
    old.mkdir()
    results = json.loads((runs[2] / "results.json").read_text(encoding="utf-8"))
    results["tool_version"] = "2026.1.0"
    (old / "results.json").write_text(json.dumps(results), encoding="utf-8")
    assert benchmark.main(["--compare", str(runs[1]), str(old), "--out", str(tmp_path / "d")]) == 2
    assert capsys.readouterr().err == (
        f"error: the runs were scored by different versions of the tool ({runs[1]} {results_module.TOOL_VERSION}, "
        f"{old} 2026.1.0); "
        "score each log again with this one (--score DIR/requests.jsonl with the run's flags) before comparing\n"
    )


def test_runs_that_share_part_of_their_formats_are_compared_on_it_and_say_so(three_runs, tmp_path, capsys):
    base, runs = three_runs
    partial = tmp_path / "json-only"
    partial.mkdir()
    results = json.loads((runs[2] / "results.json").read_text(encoding="utf-8"))
    results["cells"] = [c for c in results["cells"] if c["format"] == "json"]
    (partial / "results.json").write_text(json.dumps(results), encoding="utf-8")
    assert benchmark.main(["--compare", str(runs[0]), str(partial), "--out", str(tmp_path / "p")]) == 0
    out = capsys.readouterr().out
    assert (
        out.splitlines()[0]
        == f"{runs[0]}: 150 answered cell(s) no other run has are left out (formats tsv are not in every run)"
    )


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--compare", "a"], "--compare needs two runs or more (their --out folders)"),
        (["--compare", "a", "b", "--model", "m"], "--compare reads finished runs: leave out --model"),
        (
            ["--compare", "nowhere", "b"],
            "nowhere: no results.json; compare the --out folders of model runs (or of --score)",
        ),
    ],
)
def test_compare_flags_are_one_line(tmp_path, capsys, monkeypatch, flags, message):
    monkeypatch.chdir(tmp_path)
    assert benchmark.main([*flags, "--out", "cmp"]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"


def test_a_from_prompts_folder_is_refused_by_name(tmp_path, capsys):
    request = json.loads((ROOT / "tests" / "golden" / "frameworks" / "small" / "lightrag.request.json").read_bytes())
    (tmp_path / "log.jsonl").write_text(json.dumps(request) + "\n", encoding="utf-8")
    assert benchmark.main(["--from-prompts", str(tmp_path / "log.jsonl"), "--out", str(tmp_path / "logged")]) == 0
    capsys.readouterr()
    assert (
        benchmark.main(
            ["--compare", str(tmp_path / "logged"), str(tmp_path / "logged"), "--out", str(tmp_path / "cmp")]
        )
        == 2
    )
    assert capsys.readouterr().err == (
        f"error: {benchmark.display(tmp_path / 'logged')} is the output of a --from-prompts run: it counts logged "
        "prompts and scores no answers; compare the --out folders of model runs over a graph (--model NAME)\n"
    )


def test_several_models_in_one_command_each_into_its_folder_resumable_then_compared(tmp_path, capsys):
    servers = [FakeOpenAI(answer=lambda prompt: "{}") for _ in range(2)]
    models = [
        {"name": "small-model", "model": "m1", "base_url": servers[0].url, "encoding": "cl100k_base"},
        {
            "name": "big-model",
            "model": "m2",
            "base_url": servers[1].url,
            "input_price_per_million": 1,
            "output_price_per_million": 2,
        },
    ]
    (tmp_path / "models.json").write_text(json.dumps(models), encoding="utf-8")
    argv = ["--models", str(tmp_path / "models.json"), "--out", str(tmp_path / "out"), "--limit", "10"]
    try:
        assert benchmark.main(argv) == 0
        assert benchmark.main(argv) == 0  # again: each model resumes from its log, nothing is sent twice
    finally:
        for server in servers:
            server.close()
    assert [len(s.requests) for s in servers] == [10, 10]
    out = capsys.readouterr()
    assert (
        "model 1/2: small-model into " in out.err
        and "## comparison\nsmall · original · A: no format is accepted for every model" in out.out
    )
    first = json.loads((tmp_path / "out" / "small-model" / "results.json").read_text(encoding="utf-8"))
    assert first["model"]["model"] == "m1" and first["run"]["encodings"] == ["cl100k_base"]
    c = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    assert [r["model"] for r in c["runs"]] == ["m1", "m2"] and [r["encoding"] for r in c["runs"]] == [
        "cl100k_base",
        "o200k_base",
    ]


def test_a_model_that_fails_does_not_stop_the_others_and_the_command_says_how_to_resume(tmp_path, capsys):
    server = FakeOpenAI(answer=lambda prompt: "{}")
    models = [
        {"name": "down", "model": "m0", "base_url": "http://127.0.0.1:9/v1"},
        {"name": "up", "model": "m1", "base_url": server.url},
    ]
    (tmp_path / "models.json").write_text(json.dumps(models), encoding="utf-8")
    try:
        assert (
            benchmark.main(["--models", str(tmp_path / "models.json"), "--out", str(tmp_path / "out"), "--limit", "3"])
            == 1
        )
    finally:
        server.close()
    assert len(server.requests) == 3 and (tmp_path / "out" / "up" / "results.json").exists()
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(
        "error: 1 of 2 model(s) did not finish (down: --base-url http://127.0.0.1:9/v1: no server answers there "
    )
    assert err.endswith("run the same command again: each model resumes from its own log")


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"model": "m"}', "not a list of models (objects with model and base_url); give one object per model"),
        (
            '[{"model": "m", "base_url": "http://x/v1", "colour": "red"}]',
            "model 1: unknown field 'colour'; the fields are name, model, base_url",
        ),
        (
            '[{"model": "m"}]',
            'model 1: give model and base_url (text), e.g. {"model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1"}',
        ),
        (
            '[{"model": "m", "base_url": "http://x/v1"}, {"model": "m", "base_url": "http://y/v1"}]',
            "model 2: its folder name 'm' is not a plain unique file name (letters, digits, . _ -); give each model a "
            "name",
        ),
        (
            '[{"model": "m", "base_url": "http://x/v1", "temperature": [0]}]',
            "model 1 (m): temperature must be text or a number, got [0]",
        ),
    ],
)
def test_a_bad_models_file_is_one_line_naming_the_model(tmp_path, capsys, content, message):
    (tmp_path / "models.json").write_text(content, encoding="utf-8")
    assert benchmark.main(["--models", str(tmp_path / "models.json"), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {tmp_path / 'models.json'}: {message}")
