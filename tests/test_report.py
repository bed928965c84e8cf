"""report.html: the numbers it shows are the artifacts', the token boundaries are the tokenizer's, nothing from the data
runs, and the same inputs give the same bytes; then what a person sees in a real browser (Debian's chromium, driven
by Playwright on the system browser; .ci/run installs both)."""

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from test_runner import DIAGNOSED, QUESTION_TEXT, E
from test_tokenizers import small_hf_tokenizer

import benchmark
from graphrag_format_benchmark import measure, report, results

from conftest import ROOT, run_cli
from fake_openai import FakeOpenAI

HOSTILE = [
    "<script>window.__pwned = 1</script>",
    '"><img src=x onerror="window.__pwned = 2">',
    "\u202eevil\u202c name",
    "a&amp;b",
]


TOKENIZERS = {name: benchmark.load_tokenizer(name) for name in ("o200k_base", "cl100k_base")}


def page_data(path: Path) -> dict:
    """The JSON block report.html carries, as the page reads it."""
    html = path.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S).group(1)
    return json.loads(block)


@pytest.fixture(scope="module")
def article_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "out"
    hf = small_hf_tokenizer(out.parent / "tokenizer.json")
    assert hf is not None
    done = run_cli("--encoding", f"o200k_base,hf:{out.parent / 'tokenizer.json'}", "--out", str(out), "--write-prompts")
    assert done.returncode == 0, done.stderr
    return out


def test_token_boundaries_concatenate_to_the_graph_and_count_its_tokens(article_run):
    data = page_data(article_run / "report.html")
    rows = json.loads((article_run / "size_report.json").read_text(encoding="utf-8"))
    assert {(v["format"], v["encoding"].split(":")[0]) for v in data["tokens"]} == {
        (f, e)
        for f in benchmark.FORMATS
        if f in {"json", "jsonl", "tsv", "edge_list", "dsl"}
        for e in ("o200k_base", "hf")
    }
    for view in data["tokens"]:
        graph_tokens = next(
            r["graph_tokens"] for r in rows if r["format"] == view["format"] and r["encoding"] == view["encoding"]
        )
        assert len(view["pieces"]) == view["tokens"] == graph_tokens
        assert view["names_and_values"] + view["syntax"] == graph_tokens
        text = (article_run / f"graph.{view['format']}.txt").read_text(encoding="utf-8")
        assert "".join(view["pieces"]) == text  # for tiktoken's and the Hugging Face tokenizer's boundaries alike


def test_token_pieces_of_split_characters_keep_the_text_and_the_count():
    tokenizer = benchmark.load_tokenizer("o200k_base")
    for text in ["Ирина → Казань 𝔊𝔯𝔞𝔭𝔥 ж", "a\u0301b\u202ec", "日本語のテキスト"]:
        ends = report.token_ends(tokenizer, text)
        pieces = [text[a:b] for a, b in zip([0, *ends], ends)]
        assert "".join(pieces) == text and len(pieces) == tokenizer.count(text)


def test_the_size_table_is_size_reports(article_run):
    data = page_data(article_run / "report.html")
    rows = json.loads((article_run / "size_report.json").read_text(encoding="utf-8"))
    (group,) = [g for g in data["sizes"] if g["group"].startswith("o200k_base")]
    json_rows = [r for r in rows if r["encoding"] == "o200k_base"]
    for shown in group["rows"]:
        mine = [r for r in json_rows if r["format"] == shown["format"]]
        assert (shown["graph_tokens"], shown["prompt_min"], shown["prompt_max"], shown["bytes"], shown["overflow"]) == (
            mine[0]["graph_tokens"],
            min(r["prompt_tokens"] for r in mine),
            max(r["prompt_tokens"] for r in mine),
            mine[0]["bytes"],
            0,
        )
    mean = {f: sum(r["prompt_tokens"] for r in json_rows if r["format"] == f) / 6 for f in ("json", "tsv")}
    assert [r["vs_baseline"] for r in group["rows"] if r["format"] in mean] == [
        0.0,
        round(mean["tsv"] / mean["json"] - 1, 4),
    ]


def test_the_prompts_the_page_builds_are_the_prompt_files(article_run):
    data = page_data(article_run / "report.html")["prompts"]
    for q in data["questions"]:
        for fmt, cell in q["cells"].items():
            head, middle, end = data["heads"][fmt]
            assert head + data["graphs"][cell["graph"]] + middle + q["text"] + end == (
                article_run / f"prompt.{fmt}.{q['id']}.txt"
            ).read_text(encoding="utf-8")


def hostile_graph(tmp_path):
    graph = json.loads((ROOT / "data" / "graph.json").read_text(encoding="utf-8"))
    named = {n["id"]: n for n in graph["nodes"]}
    for node_id, name in zip(
        ("project_pulse", "method_vector", "org_siberia", "org_vector"), HOSTILE
    ):  # no question names them
        named[node_id]["name"] = name
    (tmp_path / "g.json").write_text(json.dumps(graph, ensure_ascii=False), encoding="utf-8")
    return tmp_path / "g.json"


def test_hostile_names_are_data_not_markup_and_the_page_is_deterministic(tmp_path):
    graph = hostile_graph(tmp_path)
    for out in ("a", "b"):
        done = run_cli("--graph", str(graph), "--out", str(tmp_path / out))
        assert done.returncode == 0, done.stderr
    html = (tmp_path / "a" / "report.html").read_bytes()
    assert html == (tmp_path / "b" / "report.html").read_bytes()
    assert b"<img" not in html and b"window.__pwned" in html and html.count(b"<script") == 2  # the data block and ours
    data = page_data(tmp_path / "a" / "report.html")
    assert any(HOSTILE[0] in piece for v in data["tokens"] for piece in ["".join(v["pieces"])])
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["outputs"]["report.html"] == benchmark.sha256_hex(html)


def diagnosed_run(out: Path, *flags: str) -> Path:
    """A model run whose answers get known diagnoses (test_runner.DIAGNOSED), q2 fully right."""
    by_question = {
        "q1": DIAGNOSED["edge_not_shown"][1],
        "q2": json.dumps(
            {"answer": "Максим", "path": [11, 8, 5, 2], "evidence": [E[i] for i in (11, 8, 5, 2)]}, ensure_ascii=False
        ),
        "q3": DIAGNOSED["no_json"][1],
        "q4": DIAGNOSED["wrong_branch"][1],
        "q5": DIAGNOSED["miscounted_indices"][1],
        "q6": "<script>window.__pwned = 3</script>",
    }
    fake = FakeOpenAI(answer=lambda prompt: by_question[next(q for q in by_question if QUESTION_TEXT[q] in prompt)])
    try:
        assert benchmark.main(["--model", "m", "--base-url", fake.url, "--out", str(out), *flags]) == 0
    finally:
        fake.close()
    return out


def test_a_model_run_page_holds_every_cell_with_its_diagnosis_and_a_csv_beside_it(tmp_path):
    out = diagnosed_run(tmp_path / "out")
    model = page_data(out / "report.html")["model"]
    assert len(model["cells"]) == 30
    q5 = [c for c in model["cells"] if c["question"] == "q5"]
    assert {c["diagnosis"] for c in q5} == {"miscounted_indices"} and q5[0]["evidence"] == [
        {"edge": "project_atlas USES method_compress", "mark": "shown"}
    ]
    q1 = next(c for c in model["cells"] if c["question"] == "q1")
    assert q1["evidence"] == [{"edge": "person_irina LEADS org_vector", "mark": "not shown"}]
    assert q1["gold"] == [
        [
            "person_irina LEADS project_orion",
            "project_orion USES method_graph",
            "method_graph DEVELOPED_BY org_vector",
            "org_vector LOCATED_IN city_kazan",
        ]
    ]
    csv_lines = (out / "cells.csv").read_text(encoding="utf-8").splitlines()
    assert csv_lines[0].split(",") == list(results.CSV_FIELDS) and len(csv_lines) == 31
    assert sum(",miscounted_indices," in line for line in csv_lines) == 5


# ---- in a real browser


def open_page(browser, path: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("crash", lambda _: errors.append("the page crashed"))
    # the network
    page.on("request", lambda r: errors.append(f"request {r.url}") if re.match(r"(https?|wss?|ftp):", r.url) else None)
    page.goto(path.as_uri())
    page.wait_for_selector("#sizes table")
    return page, errors


def test_the_page_shows_size_reports_numbers_and_each_questions_prompts(browser, article_run):
    page, errors = open_page(browser, article_run / "report.html")
    rows = json.loads((article_run / "size_report.json").read_text(encoding="utf-8"))
    shown = page.eval_on_selector_all(
        "#sizes0 tr", "rows => rows.slice(1).map(r => Array.from(r.cells).map(c => c.textContent))"
    )
    mine = {r["format"]: r for r in rows if r["encoding"] == "o200k_base" and r["question_id"] == "q1"}
    assert [(s[0], s[1]) for s in shown] == [
        (f, str(mine[f]["graph_tokens"])) for f in ("json", "jsonl", "tsv", "edge_list", "dsl")
    ]
    page.click("#sizes0 th:nth-child(2)")  # sort by graph tokens: edge_list (305) first
    assert page.eval_on_selector("#sizes0 tr:nth-child(2) td", "c => c.textContent") == "edge_list"
    assert page.eval_on_selector("#tokenView", "v => v.dataset.tokens") == str(mine["json"]["graph_tokens"])
    page.select_option("#questionPick", "2")  # q3
    page.wait_for_function(
        "document.querySelector('#prompts h4') && document.querySelector('#questionText "
        "p').textContent.startsWith('Какой')"
    )
    texts = page.eval_on_selector_all("#prompts .prompt pre", "pres => pres.map(p => p.textContent)")
    assert texts == [
        (article_run / f"prompt.{f}.q3.txt").read_text(encoding="utf-8")
        for f in ("json", "jsonl", "tsv", "edge_list", "dsl")
    ]
    assert errors == []


def test_a_hostile_name_or_answer_renders_as_text_and_runs_nothing(browser, tmp_path):
    graph = hostile_graph(tmp_path)
    out = diagnosed_run(tmp_path / "out", "--graph", str(graph))
    page, errors = open_page(browser, out / "report.html")
    page.select_option("#questionPick", "0")
    page.wait_for_selector("#prompts pre")
    assert page.evaluate("window.__pwned") is None
    view = page.text_content("#tokenView")  # the json format's text: quotes escaped as JSON writes them
    assert HOSTILE[0] in view and json.dumps(HOSTILE[1])[1:-1] in view and HOSTILE[2] in view
    assert page.locator("#tokenView img").count() == 0 and page.locator("#cells script").count() == 0
    assert "<script>window.__pwned = 3</script>" in page.text_content("#cellTable")
    assert errors == []


def test_filters_show_what_they_should_and_an_answer_shows_its_diagnosis(browser, tmp_path):
    out = diagnosed_run(tmp_path / "out")
    page, errors = open_page(browser, out / "report.html")
    assert page.locator("#cellTable tr").count() == 31
    page.select_option("#fDiagnosis", "miscounted_indices")
    assert (
        page.eval_on_selector_all("#cellTable tr", "rows => rows.slice(1).map(r => r.dataset.diagnosis)")
        == ["miscounted_indices"] * 5
    )
    page.select_option("#fDiagnosis", "")
    page.select_option("#fFormat", "tsv")
    page.select_option("#fOutcome", "right")
    rows = page.eval_on_selector_all(
        "#cellTable tr", "rows => rows.slice(1).map(r => [r.dataset.format, r.cells[1].textContent])"
    )
    assert rows == [["tsv", "q2"]]
    assert page.text_content("#shown") == "Showing 1 of 1 matching cells (30 in all)."
    page.select_option("#fFormat", "")
    page.select_option("#fOutcome", "")
    page.check("#fDisagree")  # every format answered alike: no question where formats disagree
    assert page.locator("#cellTable tr").count() == 1
    assert "wrong_branch" in page.text_content("#diagnosisTable") or "wrong branch" in page.text_content(
        "#diagnosisTable"
    )
    assert errors == []


def test_distractors_are_named_for_the_page_to_mark(tmp_path):
    done = run_cli("--sizes", "medium", "--out", str(tmp_path / "out"), "--no-write-prompts")
    assert done.returncode == 0, done.stderr
    prompts = page_data(tmp_path / "out" / "report.html")["prompts"]
    real = {n["id"] for n in json.loads((ROOT / "data" / "graph.json").read_text(encoding="utf-8"))["nodes"]}
    graph = json.loads((tmp_path / "out" / "graph.medium.original.json").read_text(encoding="utf-8"))
    assert (
        prompts["distractors"] == sorted({n["id"] for n in graph["nodes"]} - real) and len(prompts["distractors"]) > 100
    )


@pytest.mark.parametrize("fmt", ["json", "jsonl", "tsv", "edge_list", "dsl"])
def test_a_large_graphs_token_view_is_its_first_tokens_cut_where_the_whole_text_cuts(fmt):
    nodes = tuple(benchmark.Node(f"node_{k}", f"Узел номер {k} «{k * 7 % 13}»", "entity") for k in range(3000))
    edges = tuple(benchmark.Edge(f"node_{k}", "LINKS_TO", f"node_{(k * 31 + 7) % 3000}") for k in range(3000))
    text = benchmark.serialized(fmt, benchmark.Graph(nodes, edges))
    tokenizer = benchmark.load_tokenizer("o200k_base")
    start, ends = report.shown_start(tokenizer, text)
    whole = report.token_ends(tokenizer, text)
    assert len(whole) > 2 * report.REPORT_TOKENS_SHOWN and report.REPORT_TOKENS_SHOWN <= len(ends) < len(whole)
    assert text.startswith(start) and ends[-1] == len(start)
    assert ends == whole[: len(ends)]  # the boundaries the whole text has there, found without tokenizing the rest


LINE_PARTS = st.sampled_from(
    [
        "  ",
        "\t",
        " ",
        "{",
        "}",
        '"id": ',
        '"Казань",',
        "x",
        "42",
        "1969,",
        "-LEADS->",
        "|",
        "  \n",
        "\r",
        "😀",
        "Ж",
        "'s",
        "/",
        "//",
        ":",
        "...",
        "\u00a0",
        "\u2028",
        "é",
        "e\u0301",
    ]
)


@given(
    lines=st.lists(st.lists(LINE_PARTS, max_size=6).map("".join), min_size=2, max_size=40),
    size=st.integers(1, 400),
    encoding=st.sampled_from(["o200k_base", "cl100k_base"]),
)
@settings(max_examples=300, deadline=None)
def test_a_token_cut_keeps_every_token_boundary_before_it(lines, size, encoding):
    text = "\n".join(lines)
    tokenizer = TOKENIZERS[encoding]
    cut = measure.token_cut(tokenizer, text, size)
    if cut is not None:
        ends = report.token_ends(tokenizer, text[:cut])
        assert ends == report.token_ends(tokenizer, text)[: len(ends)] and (not ends or ends[-1] == cut)
    # a chunk at a time: the same count
    assert measure.chunked_count(tokenizer, text, max(1, size // 4)) == tokenizer.count(text)


@pytest.fixture(scope="module")
def long_run(tmp_path_factory):
    """The article's graph with a chain of 400 edges beside it that no question walks: json prompts of 2,000+ lines."""
    tmp = tmp_path_factory.mktemp("long")
    graph = json.loads((ROOT / "data" / "graph.json").read_text(encoding="utf-8"))
    graph["nodes"] += [{"id": f"n{k}", "name": f"Звено {k}", "type": "filler"} for k in range(401)]
    graph["edges"] += [{"source": f"n{k}", "relation": "NEXT", "target": f"n{k + 1}"} for k in range(400)]
    (tmp / "g.json").write_text(json.dumps(graph, ensure_ascii=False), encoding="utf-8")
    done = run_cli("--graph", str(tmp / "g.json"), "--out", str(tmp / "out"))
    assert done.returncode == 0, done.stderr
    return tmp / "out"


def test_of_a_long_prompt_the_page_holds_its_first_and_last_lines_and_how_many_it_leaves_out(long_run):
    data = page_data(long_run / "report.html")["prompts"]
    q = data["questions"][0]
    cell = q["cells"]["json"]
    graph = data["graphs"][cell["graph"]]
    whole = (long_run / f"prompt.json.{q['id']}.txt").read_text(encoding="utf-8")
    head, middle, end = data["heads"]["json"]
    assert set(graph) == {"start", "end", "newlines"}
    assert whole.startswith(head + graph["start"]) and whole.endswith(graph["end"] + middle + q["text"] + end)
    assert graph["start"].count("\n") == report.PROMPT_HEAD and graph["end"].count("\n") == report.PROMPT_TAIL - 1
    assert head.count("\n") + graph["newlines"] + (middle + q["text"] + end).count("\n") == whole.count("\n")
    assert (
        isinstance(data["graphs"][q["cells"]["dsl"]["graph"]], dict)
        and len(page_data(long_run / "report.html")["notes"]) >= 1
    )


def test_the_page_draws_a_long_prompts_first_and_last_lines(browser, long_run):
    page, errors = open_page(browser, long_run / "report.html")
    page.wait_for_selector("#prompts .prompt pre")
    drawn = page.eval_on_selector("#prompts .prompt[data-format='json'] pre", "p => p.textContent")
    lines = (long_run / "prompt.json.q1.txt").read_text(encoding="utf-8").split("\n")
    left = len(lines) - report.PROMPT_HEAD - report.PROMPT_TAIL
    assert drawn == (
        "\n".join(lines[: report.PROMPT_HEAD])
        + "\n"
        + f"… {left:,} lines of {len(lines):,} not drawn …\n"
        + "\n".join(lines[-report.PROMPT_TAIL :])
    )
    assert errors == []


def test_a_logged_prompts_page_shows_what_was_sent_beside_each_alternative(browser, tmp_path):
    requests = [
        ROOT / "tests" / "golden" / "frameworks" / "small" / f"{f}.request.json" for f in ("lightrag", "graphrag")
    ]
    log = tmp_path / "logged.jsonl"
    log.write_text(
        "".join(json.dumps({"id": r.stem, **json.loads(r.read_text(encoding="utf-8"))}) + "\n" for r in requests),
        encoding="utf-8",
    )
    done = run_cli("--from-prompts", str(log), "--formats", "json,tsv", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    page, errors = open_page(browser, tmp_path / "out" / "report.html")
    shown = page.eval_on_selector_all("#sizes0 tr", "rows => rows.slice(1).map(r => r.cells[0].textContent)")
    assert shown == ["logged", "json", "tsv"]
    page.wait_for_function("document.querySelectorAll('#prompts .prompt pre').length === 3")
    heads = page.eval_on_selector_all("#prompts h4", "hs => hs.map(h => h.textContent)")
    records = [
        json.loads(line) for line in (tmp_path / "out" / "logged.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    tokens = records[0]["tokens"]["o200k_base"]
    assert page.eval_on_selector("#tokenPart", "p => p.hidden")  # no token view to draw
    differs = page.eval_on_selector_all("#prompts .prompt", "ps => ps.map(p => p.querySelectorAll('.differs').length)")
    assert differs[0] == 0 and differs[1] > 0  # what was sent is the baseline; json's lines differ from it
    assert heads == [
        f"logged · {tokens['logged']['prompt']:,} prompt tokens (o200k_base)",
        f"json · {tokens['json']['prompt']:,} prompt tokens (o200k_base)",
        f"tsv · {tokens['tsv']['prompt']:,} prompt tokens (o200k_base)",
    ]
    texts = page.eval_on_selector_all("#prompts .prompt pre", "pres => pres.map(p => p.textContent)")
    sent = json.loads(requests[0].read_text(encoding="utf-8"))["messages"][0]["content"]
    assert texts[0] == sent and "Knowledge Graph Data (Entity)" not in texts[1] and '"nodes": [' in texts[1]
    assert errors == []
    # what it found first, a saving with results.md's sign, no legend for distractors or edge ids it has none of
    assert page.eval_on_selector_all("#verdicts li", "ls => ls.map(l => l.textContent)") == [
        next(line for line in done.stdout.splitlines() if line.startswith("**o200k_base: ")).replace("**", "")
    ]
    assert done.stdout.endswith(f"\n\nresults: {tmp_path / 'out' / 'results.md'}\n")
    savings = page.eval_on_selector_all("#sizes0 tr", "rows => rows.map(r => r.cells[7].textContent)")
    tsv = next(
        r
        for r in json.loads((tmp_path / "out" / "results.json").read_text())["summary"]["o200k_base"]
        if r["format"] == "tsv"
    )
    assert savings[0] == "saving vs what was sent" and savings[3] == f"{tsv['saving']:.1%}" and tsv["saving"] > 0
    assert page.text_content("#legend") == "Lines not in the baseline's prompt are highlighted."


def test_a_logged_model_runs_page_shows_both_agreements_and_the_users_question(browser, tmp_path):
    """The disagreement table showed LlamaIndex's 'Context information is below' for the question; the page's
    headline told a model run's reader to run a model."""
    from fake_openai import FakeOpenAI

    requests = [
        ROOT / "tests" / "golden" / "frameworks" / "small" / f"{f}.request.json" for f in ("llamaindex", "graphrag")
    ]
    log = tmp_path / "logged.jsonl"
    log.write_text(
        "".join(json.dumps({"id": r.stem, **json.loads(r.read_text(encoding="utf-8"))}) + "\n" for r in requests),
        encoding="utf-8",
    )
    fake = FakeOpenAI(
        answer=lambda system: (
            "Leslie Lamport works at Microsoft Research" if '"nodes"' in system else "Microsoft Research"
        )
    )
    try:
        done = run_cli(
            "--from-prompts",
            str(log),
            "--formats",
            "json",
            "--model",
            "m",
            "--base-url",
            fake.url,
            "--out",
            str(tmp_path / "out"),
        )
    finally:
        fake.close()
    assert done.returncode == 0, done.stderr
    page, errors = open_page(browser, tmp_path / "out" / "report.html")
    rows = page.eval_on_selector_all("#agreeTable tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    # the LlamaIndex request's context is in its user message, which the fake does not see: its json answer is the same
    assert rows[1] == ["json", "2", "2", "100.0%", "34.2%-100.0%", "1", "50.0%", "9.4%-90.5%", "0", "0"]
    headline = page.eval_on_selector_all("#verdicts li", "ls => ls.map(l => l.textContent)")
    assert "--model" not in " ".join(headline) and "agree" in headline[0]
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert {d["question"] for d in results["agreement"]["differing"]} == {
        "Which organization did Leslie Lamport work at?"
    }
    assert errors == []
