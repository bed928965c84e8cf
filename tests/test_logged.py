"""logged/: the prompts a framework logged, read back exactly and measured in every format.

The requests are the frameworks' own (tests/golden/frameworks/*/LAYOUT.request.json, made by their code at pinned
versions); a prompt's counts are checked against counting the whole texts."""

import json
import random

import pytest

import benchmark
from graphrag_format_benchmark import frameworks, inputs
from graphrag_format_benchmark.logged import measure, read, run

from conftest import ROOT, run_cli

GOLDEN = ROOT / "tests" / "golden" / "frameworks"
REQUESTS = sorted(p for p in GOLDEN.glob("*/*.request.json") if p.parent.name != "hostile")
LAYOUT_OF = {
    "graphrag": "graphrag",
    "lightrag": "lightrag",
    "langchain": "langchain",
    "langchain_top_k": "langchain",
    "neo4j_graphrag": "neo4j_graphrag",
    **{
        f: "llamaindex"
        for f in ("llamaindex", "llamaindex_properties", "llamaindex_text", "llamaindex_text_properties")
    },
}


def request(path) -> read.Logged:
    messages = json.loads(path.read_text(encoding="utf-8"))["messages"]
    return read.Logged(1, path.name, "?", tuple((m["role"], m["content"]) for m in messages))


def edges_of(graph: benchmark.Graph) -> list:
    return sorted(graph.edges)


@pytest.mark.parametrize("path", REQUESTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_frameworks_own_request_is_read_back_exactly(path, tmp_path):
    logged = request(path)
    prepared = measure.prepare_logged(logged, ["json"])
    assert isinstance(prepared, measure.Prepared), prepared
    assert prepared.layout == LAYOUT_OF[path.name.removesuffix(".request.json")]
    fixture, layout = path.parent.name, path.name.removesuffix(".request.json")
    if layout == "langchain_top_k":
        assert len(prepared.graph.edges) == min(10, len(prepared.graph.edges))
        return
    folder = GOLDEN / fixture / "store"  # as the framework's own storage code wrote it
    file = {
        "graphrag": "graphrag/entities.parquet",
        "lightrag": "lightrag/graph_chunk_entity_relation.graphml",
        "langchain": "neo4j/graph.json",
        "neo4j_graphrag": "neo4j/graph.json",
    }.get(layout, "llamaindex/property_graph_store.json")
    records, _, _ = inputs.read_graph_file(folder / file, layouts=(layout,))
    stored = benchmark.validate_graph(records, "store", benchmark.Problems())
    assert edges_of(prepared.graph) == edges_of(stored)  # the same facts as the store the framework read
    assert sorted(n.name for n in prepared.graph.nodes) == sorted(n.name for n in stored.nodes)


@pytest.mark.parametrize(
    "layout, reason",
    [
        (
            "graphrag",
            "an entity row has 6 cells where its header has 4: a value holds '|' or a newline, which GraphRAG writes "
            "raw, so the row "
            "cannot be read back",
        ),
        (
            "llamaindex",
            "not a triplet 'subject -> relation -> object' (a name holding ' -> ' is ambiguous): 'Arrow -> Corp (old) "
            "-> MERGER -> "
            "ACME | Widgets'",
        ),
    ],
)
def test_a_context_that_cannot_be_read_back_is_left_out_with_its_reason(layout, reason):
    skipped = measure.prepare_logged(request(GOLDEN / "hostile" / f"{layout}.request.json"), ["json"])
    assert isinstance(skipped, measure.Skipped) and skipped.reason == reason
    text = request(GOLDEN / "hostile" / f"{layout}.request.json").messages[skipped.message][1]
    assert text[skipped.at :].startswith(("-----Entities-----", "ACME | Widgets", "Arrow -> Corp"))


def test_a_context_written_otherwise_than_the_framework_writes_is_refused_at_the_first_differing_character():
    logged = request(GOLDEN / "small" / "graphrag.request.json")
    system = logged.messages[0][1].replace("|9.0|", "|9|", 1)  # a weight GraphRAG would print as 9.0
    skipped = measure.prepare_logged(read.Logged(1, "x", "?", (("system", system), logged.messages[1])), ["json"])
    assert isinstance(skipped, measure.Skipped)
    assert skipped.reason.startswith("its graphrag context does not come back the same when written again (at '")
    assert system[skipped.at - 1 : skipped.at + 1] == "9|"  # where the rewrite says 9.0


def test_counting_around_the_context_is_exact(tmp_path):
    rng = random.Random(5)
    logged = request(GOLDEN / "medium" / "lightrag.request.json")
    prepared = measure.prepare_logged(logged, ["json", "tsv", "graphrag", "llamaindex", "neo4j_graphrag"])
    text, span = prepared.text, prepared.spans[0]
    pads = ["", "\n", "\n\n", " ", "x", "\n \n", "---Context---\n\n", "}\n\n"]
    for name in benchmark.SHIPPED_ENCODINGS:
        tokenizer = benchmark.load_tokenizer(name)
        for _ in range(20):
            before = text[: span.start - rng.randrange(0, 3)] + rng.choice(pads)
            after = rng.choice(pads) + text[span.end + rng.randrange(0, 3) :]
            around = measure.Around(tokenizer, before, after)
            for graph_text in prepared.graph_texts.values():
                assert around.count(graph_text, tokenizer.count(graph_text)) == tokenizer.count(
                    before + graph_text + after
                )


def log_file(tmp_path, lines: list) -> str:
    path = tmp_path / "logged.jsonl"
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return str(path)


def test_a_log_is_measured_line_by_line_and_every_line_is_accounted_for(tmp_path):
    lightrag = json.loads((GOLDEN / "small" / "lightrag.request.json").read_text(encoding="utf-8"))["messages"]
    llama = json.loads((GOLDEN / "small" / "llamaindex.request.json").read_text(encoding="utf-8"))["messages"]
    path = log_file(
        tmp_path,
        [
            {"model": "gpt-4o-mini", "messages": lightrag, "id": "req-1"},
            {
                "custom_id": "b2",
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": "m", "messages": llama},
            },
            "",
            {"question": "Where?", "prompt": llama[1]["content"]},
            "{not json",
            {"messages": [{"role": "user", "content": "What is a graph?"}]},
        ],
    )
    done = run_cli("--from-prompts", path, "--formats", "json,tsv", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    records = [
        json.loads(line) for line in (tmp_path / "out" / "logged.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [(r["line"], r["id"], r.get("layout"), r.get("left_out", "")[:20]) for r in records] == [
        (1, "req-1", "lightrag", ""),
        (2, "b2", "llamaindex", ""),
        (4, "line 4", "llamaindex", ""),
        (5, "line 5", None, "not JSON (Expecting "),
        (6, "line 6", None, "no graph context of "),
    ]
    tokenizer = benchmark.load_tokenizer("o200k_base")
    first = records[0]["tokens"]["o200k_base"]
    # what was sent, counted whole
    assert first["logged"]["prompt"] == sum(tokenizer.count(m["content"]) for m in lightrag)
    for fmt in ("json", "tsv"):
        prepared = measure.prepare_logged(request(GOLDEN / "small" / "lightrag.request.json"), [fmt])
        alternative = "".join(measure.replaced(prepared.text, prepared.spans, prepared.graph_texts[fmt]))
        assert first[fmt]["prompt"] == tokenizer.count(alternative) + tokenizer.count(lightrag[1]["content"])
        assert first[fmt]["graph"] == tokenizer.count(prepared.graph_texts[fmt])
    md = (tmp_path / "out" / "results.md").read_text(encoding="utf-8").splitlines()
    assert md[0] == "# What each format would save on your logged traffic"
    assert md[2].startswith("5 logged request(s) in ") and md[2].endswith(
        ": 3 read back exactly and measured (llamaindex 2, lightrag 1); "
        "2 left out (logged.jsonl says why, line by line)."
    )
    assert md[4].startswith("**o200k_base: tsv would send ")
    assert done.stdout.startswith("# What each format would save on your logged traffic\n")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["preflight"]["logged"]["left_out"] == 2 and manifest["config"]["formats"] == ["json", "tsv"]
    assert (tmp_path / "out" / "report.html").read_bytes().startswith(b"<!DOCTYPE html>")


def test_a_long_log_measured_on_two_processes_gives_the_bytes_of_one(tmp_path, monkeypatch):
    messages = json.loads((GOLDEN / "small" / "graphrag.request.json").read_text(encoding="utf-8"))["messages"]
    lines = [{"id": f"q{k}", "messages": messages} if k % 7 else "oops" for k in range(3 * measure.CHUNK + 5)]
    path = log_file(tmp_path, lines)
    outs = {}
    for workers in (1, 2):
        monkeypatch.setattr(run, "WORKERS", workers)
        out = tmp_path / f"w{workers}"
        assert benchmark.main(["--from-prompts", path, "--formats", "json,graphrag", "--out", str(out)]) == 0
        outs[workers] = ((out / "logged.jsonl").read_bytes(), (out / "results.md").read_bytes())
    assert outs[1] == outs[2]
    assert outs[1][0].count(b"\n") == len(lines)


def test_our_own_prompts_are_read_by_the_format_they_name(tmp_path):
    assert benchmark.main(["--formats", "json,dsl,graphrag", "--out", str(tmp_path / "made")]) == 0
    prompts = sorted((tmp_path / "made").glob("prompt.*.txt"))
    path = log_file(tmp_path, [{"question": p.name, "prompt": p.read_text(encoding="utf-8")} for p in prompts])
    assert benchmark.main(["--from-prompts", path, "--formats", "json,tsv", "--out", str(tmp_path / "out")]) == 0
    records = [
        json.loads(line) for line in (tmp_path / "out" / "logged.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert {r["layout"] for r in records} == {"own:json", "own:dsl", "own:graphrag"}
    assert all(r["edges"] == 13 and r["nodes"] == 14 for r in records)  # the article's graph, each time


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--input-price-per-million", "nan"], "--input-price-per-million is nan; give a finite number"),
        (["--input-price-per-million", "-1"], "--input-price-per-million is -1.0; give 0 or more"),
        (
            ["--graph", "g.json"],
            "--from-prompts measures the prompts your framework logged: --graph shape a run over a graph; leave them "
            "out",
        ),
        (
            ["--context", "khop", "--sizes", "small"],
            "--from-prompts measures the prompts your framework logged: --context, --sizes shape a run "
            "over a graph; leave them out",
        ),
    ],
)
def test_flags_of_a_graph_run_are_refused(tmp_path, capsys, flags, message):
    path = log_file(tmp_path, [{"prompt": "x"}])
    assert benchmark.main(["--from-prompts", path, *flags, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"


def test_a_log_with_nothing_readable_stops_and_writes_nothing(tmp_path, capsys):
    path = log_file(tmp_path, [{"prompt": "no graph"}, "[1]"])
    assert benchmark.main(["--from-prompts", path, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --from-prompts {path}: none of its 2 line(s) could be read back exactly: ")
    assert err.endswith("; logged.jsonl is not written\n")
    assert not (tmp_path / "out").exists()


def test_a_missing_log_is_one_line(tmp_path, capsys):
    assert benchmark.main(["--from-prompts", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"error: --from-prompts {tmp_path / 'none.jsonl'}: no such file; give the JSON Lines file your "
        "framework's prompts were logged to\n"
    )


@pytest.mark.parametrize(
    "line, reason",
    [
        (b"[1, 2]", "not a JSON object"),
        (
            b'{"messages": [{"role": "user", "content": 5}]}',
            "message 1's content is neither text nor a list of text parts",
        ),
        (b'{"model": "m"}', 'neither a chat request ("messages") nor {"question", "prompt"}'),
        (b'{"messages": []}', "no messages"),
    ],
)
def test_a_line_that_is_no_request_says_why(line, reason):
    assert read.parse_line(3, line) == read.Unread(3, "line 3", reason)


def test_content_parts_are_read_as_their_text():
    logged = read.parse_line(
        1,
        json.dumps(
            {
                "messages": [
                    {"role": "system", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                    {"role": "user", "content": "Who?"},
                ]
            }
        ).encode(),
    )
    assert logged.messages == (("system", "ab"), ("user", "Who?")) and logged.question == "Who?"


def test_p95_is_the_nearest_rank():
    assert run.p95([1]) == 1 and run.p95(list(range(1, 21))) == 19 and run.p95(list(range(1, 101))) == 95


def test_with_a_model_each_format_is_asked_and_its_answer_compared_with_the_answer_to_what_was_sent(tmp_path):
    from fake_openai import FakeOpenAI

    requests = [GOLDEN / "small" / "lightrag.request.json", GOLDEN / "small" / "graphrag.request.json"]
    path = log_file(tmp_path, [{"id": r.stem, **json.loads(r.read_text(encoding="utf-8"))} for r in requests])
    seen = []

    def answer(system: str) -> str:  # the context is in the system message: the answer depends on the layout it is in
        seen.append(system)
        if '"nodes": [' in system:
            return "  microsoft research "  # json: the same answer once normalized
        if "\tedge\t" in system or system.count("\t") > 20:
            return "Bell Labs"  # tsv: another answer
        return "Microsoft Research"

    fake = FakeOpenAI(answer=answer)
    try:
        url = fake.url.replace("http://", "http://user:sk-in-the-url@")  # user info: never written down
        argv = [
            "--from-prompts",
            path,
            "--formats",
            "json,tsv",
            "--model",
            "m",
            "--base-url",
            url,
            "--out",
            str(tmp_path / "out"),
        ]
        assert benchmark.main(argv) == 0
        assert len(seen) == 6  # two logged prompts, each as sent and in two formats
        assert [f.name for f in (tmp_path / "out").iterdir() if "sk-in-the-url" in f.read_text(encoding="utf-8")] == []
        assert benchmark.main(argv) == 0
        assert len(seen) == 6  # resumed from the log: nothing sent again
    finally:
        fake.close()
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    rows = {r["format"]: r for r in results["agreement"]["rows"]}
    assert (rows["json"]["agree"], rows["json"]["compared"], rows["tsv"]["agree"], rows["tsv"]["compared"]) == (
        2,
        2,
        0,
        2,
    )
    assert [(d["id"], d["format"], d["sent"], d["answer"]) for d in results["agreement"]["disagreements"]] == [
        ("lightrag.request", "tsv", "Microsoft Research", "Bell Labs"),
        ("graphrag.request", "tsv", "Microsoft Research", "Bell Labs"),
    ]
    md = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert (
        "With m, no format's agreement with the answers to what was sent stands apart from the others' (rates 0%-100% "
        "over 2 "
        "question(s), their 95% intervals overlapping)"
    ) in md  # two questions decide nothing
    assert (
        "| 1 | lightrag.request | tsv | Which organization did Leslie Lamport work at? | Microsoft Research | Bell "
        "Labs |" in md
    )
    log = [json.loads(line) for line in (tmp_path / "out" / "requests.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted((r["id"], r["format"]) for r in log) == sorted(
        (r.stem, f) for r in requests for f in ("logged", "json", "tsv")
    )


def test_the_control_solver_cannot_answer_a_logged_prompt(tmp_path, capsys):
    path = log_file(tmp_path, [{"prompt": "x"}])
    assert benchmark.main(["--from-prompts", path, "--model", "solver", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith(
        "error: --model solver answers this tool's own questions from its own graph;"
    )


def test_the_union_of_the_logged_subgraphs_is_a_graph_the_tool_reads(tmp_path):
    requests = [GOLDEN / "small" / f"{f}.request.json" for f in ("lightrag", "graphrag", "llamaindex")]
    path = log_file(tmp_path, [json.loads(r.read_text(encoding="utf-8")) for r in requests])
    assert benchmark.main(["--from-prompts", path, "--formats", "json", "--out", str(tmp_path / "out")]) == 0
    records = json.loads((tmp_path / "out" / "logged_graph.json").read_text(encoding="utf-8"))
    graph = benchmark.validate_graph(records, "logged_graph.json", benchmark.Problems())
    # LightRAG's and GraphRAG's relationships (descriptions), LlamaIndex's triplets (labels)
    assert len(graph.edges) == 11 + 11 + 11
    assert "Leslie Lamport" in {n.id for n in graph.nodes}


def test_a_damaged_request_is_read_or_left_out_with_a_reason_never_raised():
    """The frameworks' own requests, each damaged by up to three random edits of the characters their layouts use."""
    rng = random.Random(3)
    pieces = ["|", "\n", "'", '"', "{", "}", "(", ")", " -> ", "\\", "<Record ", "x", "", "```", "\n\n", ", ", "[", "]"]
    files = sorted(GOLDEN.glob("*/*.request.json"))
    outcomes = {"read": 0, "left out": 0}
    for _ in range(400):
        messages = json.loads(rng.choice(files).read_text(encoding="utf-8"))["messages"]
        k = next(i for i, m in enumerate(messages) if len(m["content"]) > 200)
        text = messages[k]["content"]
        for _ in range(rng.randrange(1, 4)):
            i, op = rng.randrange(len(text)), rng.randrange(4)
            text = (
                text[:i] + rng.choice(pieces) + text[i + (op == 0) :]
                if op < 3
                else text[:i] + text[i + rng.randrange(1, 50) :]
            )
        messages[k]["content"] = text
        result = measure.prepare_logged(
            read.Logged(1, "x", "?", tuple((m["role"], m["content"]) for m in messages)),
            ["json", "tsv", "graphrag", "lightrag", "llamaindex", "langchain", "neo4j_graphrag"],
        )
        outcomes["read" if isinstance(result, measure.Prepared) else "left out"] += 1
        assert isinstance(result, measure.Prepared) or result.reason
    assert outcomes["read"] > 100 and outcomes["left out"] > 100


def test_the_price_flag_costs_the_prompts_without_a_model(tmp_path):
    messages = json.loads((GOLDEN / "small" / "lightrag.request.json").read_text(encoding="utf-8"))["messages"]
    path = log_file(tmp_path, [{"messages": messages}])
    assert (
        benchmark.main(
            [
                "--from-prompts",
                path,
                "--formats",
                "tsv",
                "--input-price-per-million",
                "2.5",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    rows = {
        r["format"]: r
        for r in json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))["summary"]["o200k_base"]
    }
    assert rows["logged"]["cost_usd"] == round(rows["logged"]["prompt_tokens_sum"] * 2.5 / 1e6, 6)
    assert f"{rows['tsv']['cost_usd']:,.4f} USD against {rows['logged']['cost_usd']:,.4f}" in (
        tmp_path / "o" / "results.md"
    ).read_text(encoding="utf-8")


def test_a_log_kept_in_the_output_folder_under_an_outputs_name_is_never_replaced(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    messages = json.loads((GOLDEN / "small" / "lightrag.request.json").read_text(encoding="utf-8"))["messages"]
    log = out / "logged.jsonl"
    log.write_text(json.dumps({"messages": messages}) + "\n", encoding="utf-8")
    before = log.read_bytes()
    assert benchmark.main(["--from-prompts", str(log), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: --from-prompts {log} is where this run writes its own logged.jsonl; move the log out of "
        f"--out {out}, or choose another --out\n"
    )
    assert log.read_bytes() == before
    other = out / "traffic.jsonl"  # another name in the same folder is read, and left as it was
    other.write_bytes(before)
    assert benchmark.main(["--from-prompts", str(other), "--out", str(out)]) == 0 and other.read_bytes() == before


@pytest.mark.parametrize(
    "rows, said",
    [
        (
            [{"format": "json", "agree": 20, "compared": 20}, {"format": "tsv", "agree": 0, "compared": 20}],
            "the answers in json agree",
        ),
        (
            [{"format": "json", "agree": 2, "compared": 2}, {"format": "tsv", "agree": 0, "compared": 2}],
            "no format's agreement",
        ),
        (
            [{"format": "json", "agree": 15, "compared": 20}, {"format": "tsv", "agree": 15, "compared": 20}],
            "no format's agreement",
        ),  # a tie
        (
            [{"format": "json", "agree": 0, "compared": 0}],
            "no answer could be compared",
        ),  # a dead server: every request failed
    ],
)
def test_the_agreement_names_a_format_only_when_its_interval_stands_above_the_others(rows, said):
    from graphrag_format_benchmark.statistics import wilson

    full = [
        {
            **r,
            "rate": r["agree"] / r["compared"] if r["compared"] else None,
            **dict(zip(("low", "high"), wilson(r["agree"], r["compared"]) if r["compared"] else (None, None))),
        }
        for r in rows
    ]
    assert said in run.agreement_headline("m", full)


def test_the_row_of_a_lines_own_layout_counts_exactly_what_was_sent(tmp_path):
    """The own layout's row was written anew by the format's serializer: LightRAG's empty chunk blocks counted twice
    (+85 tokens a line), LlamaIndex's source-text groups and property key orders lost. It is the logged text, which
    read_span proved its writer gives back from the subgraph and what the layout shows beside it."""
    requests = sorted(GOLDEN.glob("*/*.request.json"))
    lines = [{"id": f"{r.parent.name}/{r.stem}", **json.loads(r.read_text(encoding="utf-8"))} for r in requests]
    path = log_file(tmp_path, lines)
    formats = "json,tsv,graphrag,lightrag,llamaindex,langchain,neo4j_graphrag"
    done = run_cli(
        "--from-prompts",
        path,
        "--formats",
        formats,
        "--encoding",
        "o200k_base,cl100k_base",
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "out" / "logged.jsonl").read_text(encoding="utf-8").splitlines()]
    measured = [r for r in rows if "tokens" in r]
    left_out = [r["id"] for r in rows if "tokens" not in r]  # GraphRAG and LlamaIndex write their delimiters raw
    assert sorted(left_out) == [f"hostile/{f}.request" for f in ("graphrag", *frameworks.LLAMAINDEX_LAYOUTS)]
    assert len(measured) == len(requests) - 5 and {r["layout"] for r in measured} == set(LAYOUT_OF.values())
    for r in measured:
        for encoding, counts in r["tokens"].items():
            assert counts[r["layout"]] == counts["logged"], (r["id"], encoding)
            assert list(counts) == ["logged", *formats.split(",")]


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--batch"], "--batch"),  # it asked for --model, then refused --batch once given one
        (["--batch", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"], "--batch"),
        (["--score", "answers.jsonl"], "--score"),  # ignored without --model
        (["--export-batch", "batch.jsonl"], "--export-batch"),  # ignored without --model
        (["--export-batch", "batch.jsonl", "--batch"], "--export-batch, --batch"),
    ],
)
def test_a_batch_or_answers_flag_is_refused_with_or_without_a_model(tmp_path, capsys, flags, named):
    path = log_file(tmp_path, [{"prompt": "x"}])
    assert benchmark.main(["--from-prompts", path, *flags, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        "error: --from-prompts asks a model only by sending each request (--model NAME --base-url URL): leave out "
        f"{named}, which serve a run over a graph\n"
    )
    assert not (tmp_path / "out").exists()
