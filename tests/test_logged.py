"""logged/: the prompts a framework logged, read back exactly and measured in every format.

The requests are the frameworks' own (tests/golden/frameworks/*/LAYOUT.request.json, made by their code at pinned
versions); a prompt's counts are checked against counting the whole texts."""

import json
import random
import re
import subprocess
import sys
from pathlib import Path

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
            "--from-prompts measures the prompts your framework logged, each once as it was sent: --graph shape a run "
            "over a graph or its questions and do nothing here; leave them out",
        ),
        (
            ["--context", "khop", "--sizes", "small"],
            "--from-prompts measures the prompts your framework logged, each once as it was sent: --context, --sizes "
            "shape a run over a graph or its questions and do nothing here; leave them out",
        ),
        (  # they were silently ignored: 60 requests, one answer each
            ["--model", "m", "--limit", "2", "--repeats", "3"],
            "--from-prompts measures the prompts your framework logged, each once as it was sent: --limit, --repeats "
            "shape a run over a graph or its questions and do nothing here; leave them out",
        ),
    ],
)
def test_flags_a_run_over_logged_prompts_does_not_use_are_refused(tmp_path, capsys, flags, message):
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
    assert read.parse_line(3, line) == [read.Unread(3, "line 3", reason)]


def test_content_parts_are_read_as_their_text():
    (logged,) = read.parse_line(
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
            return "Leslie Lamport works at microsoft research."  # json: the same entity, in a sentence
        if "\tedge\t" in system or system.count("\t") > 20:
            return "Bell Labs"  # tsv: no entity of the context
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
    figures = {f: (r["compared"], r["entities"]["agree"], r["exact"]["agree"]) for f, r in rows.items()}
    assert figures == {"json": (2, 2, 0), "tsv": (2, 0, 0)}  # by exact text, json agreed on none
    assert [(d["id"], d["format"], d["sent_names"], d["answer_names"]) for d in results["agreement"]["differing"]] == [
        ("lightrag.request", "json", ["Microsoft Research"], ["Microsoft Research"]),  # Lamport is the question's
        ("graphrag.request", "json", ["MICROSOFT RESEARCH"], ["MICROSOFT RESEARCH"]),
    ]
    assert [(d["id"], d["format"], d["sent"], d["answer"]) for d in results["agreement"]["disagreements"]] == [
        ("lightrag.request", "tsv", "Microsoft Research", "Bell Labs"),
        ("graphrag.request", "tsv", "Microsoft Research", "Bell Labs"),
    ]
    md = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert (
        "With m, no format's agreement with the answers to what was sent stands apart from the others' (rates 0%-100% "
        "over 2 question(s) by the entities they name, their 95% intervals overlapping)"
    ) in md  # two questions decide nothing
    assert (
        "| 1 | lightrag.request | tsv | Which organization did Leslie Lamport work at? | Microsoft Research | Bell "
        "Labs | Microsoft Research / no entity | differ | differ |" in md
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
    # the same 11 facts as three frameworks showed them (LightRAG's and GraphRAG's descriptions, GraphRAG's upper-case
    # titles, LlamaIndex's labels) are 11 facts, each entity once: they were 33 edges and "Leslie Lamport" beside
    # "LESLIE LAMPORT"
    assert len(graph.edges) == 11 and len(graph.nodes) == 12
    assert len({n.name.casefold() for n in graph.nodes}) == 12 and "Leslie Lamport" in {n.name for n in graph.nodes}
    first = dict(zip(graph.edges, graph.edge_props))[benchmark.Edge("leslie lamport", "ALGORITHM_DESIGN", "paxos")]
    assert dict(first) == {"description": "Leslie Lamport described the Paxos protocol in 1989.", "weight": 9.0}
    # LightRAG's sorted ends take the direction LlamaIndex names the relation in
    assert benchmark.Edge("turing award", "RECOGNITION", "leslie lamport") in graph.edges


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
    "tallies, said",
    [
        ({"json": (20, 20), "tsv": (0, 20)}, "the answers in json name the same entities"),
        ({"json": (2, 2), "tsv": (0, 2)}, "no format's agreement"),
        ({"json": (15, 20), "tsv": (15, 20)}, "no format's agreement"),  # a tie
        ({"json": (0, 0)}, "no answer could be compared"),  # a dead server: every request failed
    ],
)
def test_the_agreement_names_a_format_only_when_its_interval_stands_above_the_others(tallies, said):
    from graphrag_format_benchmark.logged import agreement

    counts = agreement.Agreement(
        tallies={f: agreement.Tally(compared=n, entities=k, exact=0) for f, (k, n) in tallies.items()}
    )
    assert said in run.agreement_headline("m", counts.results("m", list(tallies)).rows)


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


# -----------------------------------------------------------------------------
# what a logged file may hold: the fourth hostile campaign (issue #54), each file made here


def messages_of(fixture: str, layout: str) -> list[dict]:
    return json.loads((GOLDEN / fixture / f"{layout}.request.json").read_text(encoding="utf-8"))["messages"]


def measured(tmp_path, lines: list, *flags: str) -> tuple[list[dict], str]:
    """The run's logged.jsonl records and results.md, the run asserted to succeed."""
    done = run_cli(
        "--from-prompts",
        log_file(tmp_path, lines),
        "--formats",
        "json,tsv,graphrag,lightrag,llamaindex",
        *flags,
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(x) for x in (tmp_path / "out" / "logged.jsonl").read_text(encoding="utf-8").splitlines()]
    return records, (tmp_path / "out" / "results.md").read_text(encoding="utf-8")


def test_a_lone_surrogate_anywhere_leaves_its_line_out_and_the_others_are_measured(tmp_path):
    """It was a UnicodeEncodeError traceback, exit 1, from the workers too: one bad line ended the whole run."""
    graphrag = messages_of("small", "graphrag")
    bad_entity = [{**graphrag[0], "content": graphrag[0]["content"].replace("PAXOS", "PAX\ud800OS")}, graphrag[1]]
    lines = [
        {"id": "entity", "messages": bad_entity},
        {"id": "question", "messages": [graphrag[0], {"role": "user", "content": "Who\ud800?"}]},
        {"id": "outside", "messages": [{"role": "system", "content": "Be brief \udfff."}, *graphrag]},
        {"id": "id\ud800", "messages": graphrag},
    ]
    lines += [{"id": f"ok{k}", "messages": graphrag} for k in range(2 * measure.CHUNK)]  # the workers see one too
    lines.append({"id": "late", "messages": bad_entity})
    records, md = measured(tmp_path, [json.dumps(line) for line in lines])  # "\ud800" in JSON, as a logger writes it
    reason = "a message holds the lone surrogate U+{}, which UTF-8 cannot encode: no API was sent such a request"
    assert [(r["id"], r.get("left_out")) for r in records if "left_out" in r] == [
        ("entity", reason.format("D800")),
        ("question", reason.format("D800")),
        ("outside", reason.format("DFFF")),
        ("late", reason.format("D800")),
    ]
    assert records[3]["id"] == "line 4" and "tokens" in records[3]  # an id that cannot be written: its line number
    assert sum("tokens" in r for r in records) == 2 * measure.CHUNK + 1


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_pipe_a_device_or_a_folder_is_refused_before_a_byte_is_read(tmp_path, kind):
    """A FIFO (with or without a writer) or /dev/zero hung: the lines were counted before the check."""
    import os

    path = tmp_path / "log"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path = Path("/dev/zero")
    done = run_cli("--from-prompts", str(path), "--out", str(tmp_path / "out"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: --from-prompts {path}: not a regular file (a folder, a pipe or a device); give the JSON Lines file "
        "your prompts were logged to\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("encoding", "bom", "said"),
    [
        ("utf-16-le", b"\xff\xfe", "UTF-16"),
        ("utf-16-be", b"\xfe\xff", "UTF-16"),
        ("utf-16-le", b"", "UTF-16 or UTF-32"),
    ],
)
def test_a_utf16_file_is_refused_with_its_encoding_named(tmp_path, encoding, bom, said):
    """It gave 4 lines for 3 requests, the first dropped as 'truncated data', exit 0."""
    text = "".join(json.dumps({"messages": messages_of("small", "graphrag")}) + "\n" for _ in range(3))
    path = tmp_path / "log.jsonl"
    path.write_bytes(bom + text.encode(encoding))
    done = run_cli("--from-prompts", str(path), "--out", str(tmp_path / "out"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: --from-prompts {path}: the file is in {said}; JSON Lines are UTF-8: convert it first (iconv -f "
        f"{said.split()[0]} -t UTF-8 {path} > log.jsonl)\n"
    )


def test_lines_ending_in_a_carriage_return_alone_are_refused_clearly(tmp_path):
    """A CR-only file was one line, 'not JSON (Extra data ...)'."""
    path = tmp_path / "log.jsonl"
    line = json.dumps({"messages": messages_of("small", "graphrag")})
    path.write_text(f"{line}\r{line}\r", encoding="utf-8", newline="")
    done = run_cli("--from-prompts", str(path), "--out", str(tmp_path / "out"))
    assert (done.returncode, done.stderr) == (
        2,
        f"error: --from-prompts {path}: its lines end in a carriage return alone (CR, no LF); JSON Lines end in LF: "
        f"convert it first (tr '\\r' '\\n' < {path} > log.jsonl)\n",
    )


def test_a_crlf_context_is_read_and_counted_as_it_was_sent(tmp_path):
    """A context whose lines end in CRLF was 'no graph context of a known layout'."""
    graphrag = messages_of("small", "graphrag")
    crlf = [{**m, "content": m["content"].replace("\n", "\r\n")} for m in graphrag]
    records, _ = measured(tmp_path, [{"id": "crlf", "messages": crlf}, {"id": "lf", "messages": graphrag}])
    crlf_row, lf_row = (r["tokens"]["o200k_base"] for r in records)
    tokenizer = benchmark.load_tokenizer("o200k_base")
    assert crlf_row["logged"]["prompt"] == sum(tokenizer.count(m["content"]) for m in crlf)  # the CRLF bytes
    assert crlf_row["logged"]["prompt"] > lf_row["logged"]["prompt"]
    assert crlf_row["graphrag"] == crlf_row["logged"] and records[0]["edges"] == records[1]["edges"] == 11
    # an alternative keeps the rest of the prompt as it was logged, CRLF and all
    assert crlf_row["json"]["graph"] == lf_row["json"]["graph"]
    assert crlf_row["json"]["prompt"] - crlf_row["json"]["graph"] > lf_row["json"]["prompt"] - lf_row["json"]["graph"]


def test_requests_shaped_as_frameworks_and_sdks_send_them_are_read(tmp_path):
    """A tool call (an assistant message with content null) and "body": "x" beside valid messages were left out."""
    graphrag = messages_of("small", "graphrag")
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "kg", "arguments": "{}"}}],
    }
    lines = [
        {
            "id": "tool",
            "messages": [graphrag[0], call, {"role": "tool", "tool_call_id": "c1", "content": "ok"}, graphrag[1]],
        },
        {"id": "body", "body": "x", "messages": graphrag},
    ]
    records, _ = measured(tmp_path, lines)
    assert [(r["id"], r.get("layout")) for r in records] == [("tool", "graphrag"), ("body", "graphrag")]


def test_a_framework_context_with_its_markers_wins_and_arrows_elsewhere_are_no_graph(tmp_path):
    """'question -> evidence -> answer' in a system message was read as a LlamaIndex subgraph and the GraphRAG context
    in the user message ignored; a prompt with no graph ('tokenize -> embed -> retrieve') was measured; an instruction
    line of two arrows became an edge."""
    graphrag = messages_of("small", "graphrag")
    llama = messages_of("small", "llamaindex")
    instruction = {"role": "system", "content": "Reason as question -> evidence -> answer.\n\nBe brief."}
    lines = [
        {"id": "system-arrows", "messages": [instruction, {"role": "user", "content": graphrag[0]["content"]}]},
        {
            "id": "no-graph",
            "messages": [
                {"role": "user", "content": "How does RAG work?\n\ntokenize -> embed -> retrieve\n\nExplain."}
            ],
        },
        {
            "id": "llama-plus-instruction",
            "messages": [
                llama[0],
                {"role": "user", "content": llama[1]["content"] + "\nThink: query -> facts -> answer"},
            ],
        },
        {
            "id": "list-in-system",
            "messages": [
                {"role": "system", "content": "Examples: [{'q': 'a', 'a': 'b'}]"},
                {"role": "user", "content": graphrag[0]["content"]},
            ],
        },
    ]
    records, _ = measured(tmp_path, lines)
    assert [(r["id"], r.get("layout"), r.get("message"), r.get("edges")) for r in records] == [
        ("system-arrows", "graphrag", 1, 11),
        ("no-graph", None, None, None),
        ("llama-plus-instruction", "llamaindex", 1, 11),
        ("list-in-system", "graphrag", 1, 11),
    ]
    assert records[1]["left_out"].startswith("no graph context of a known layout")
    llama_row = records[2]["tokens"]["o200k_base"]
    assert llama_row["llamaindex"] == llama_row["logged"]  # the instruction stays where it was: the rest is as sent


def test_two_graphrag_tables_that_disagree_on_an_entity_leave_the_line_out(tmp_path):
    """The merged subgraph kept entity A's first description: every alternative dropped a fact."""
    system = messages_of("small", "graphrag")[0]["content"]
    start = system.index("-----Entities-----")
    end = system.index("\n\n", system.index("-----Relationships-----"))
    table = system[start:end]
    other = table.replace("Paxos is a family of protocols", "Paxos is a protocol family", 1)
    both = system[:end] + "\n\n" + other + system[end:]
    same = system[:end] + "\n\n" + table + system[end:]
    records, _ = measured(tmp_path, [{"id": "differ", "prompt": both}, {"id": "same", "prompt": same}])
    assert records[0]["left_out"] == (
        "the entity 'PAXOS' is shown twice with other values (in two of its contexts): one subgraph cannot carry both"
    )
    assert records[1]["edges"] == 22 and records[1]["nodes"] == 12  # the same facts twice: every edge, each node once


def test_relations_that_say_related_to_come_back_the_same(tmp_path):
    """A GraphRAG or LightRAG relation whose text is related_to (the tool's word for none) 'did not come back the
    same'."""
    graphrag = messages_of("small", "graphrag")
    lightrag = messages_of("small", "lightrag")
    text = graphrag[0]["content"].replace("|Leslie Lamport described the Paxos protocol in 1989.|", "|related_to|")
    light = lightrag[0]["content"].replace('"Leslie Lamport described the Paxos protocol in 1989."', '"related_to"')
    assert text != graphrag[0]["content"] and light != lightrag[0]["content"]
    records, _ = measured(
        tmp_path,
        [
            {"id": "g", "messages": [{**graphrag[0], "content": text}, graphrag[1]]},
            {"id": "l", "messages": [{**lightrag[0], "content": light}, lightrag[1]]},
        ],
    )
    assert [(r["id"], r.get("layout")) for r in records] == [("g", "graphrag"), ("l", "lightrag")], records


def test_a_log_linked_to_the_runs_own_logged_jsonl_is_never_replaced(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "logged.jsonl").write_text(
        json.dumps({"messages": messages_of("small", "graphrag")}) + "\n", encoding="utf-8"
    )
    link = tmp_path / "my-log.jsonl"
    link.symlink_to(out / "logged.jsonl")
    before = (out / "logged.jsonl").read_bytes()
    done = run_cli("--from-prompts", str(link), "--out", str(out))
    assert (done.returncode, done.stderr) == (
        2,
        f"error: --from-prompts {link} (a link to {out / 'logged.jsonl'}) is where this run writes its own "
        f"logged.jsonl; move the log out of --out {out}, or choose another --out\n",
    )
    assert (out / "logged.jsonl").read_bytes() == before


@pytest.mark.parametrize(
    ("flags", "named"),
    [(("--score", "x.jsonl"), "--score"), (("--export-batch", "b.jsonl"), "--export-batch"), (("--batch",), "--batch")],
)
def test_flags_of_a_batch_run_are_refused_without_a_model_too(tmp_path, flags, named):
    """Without --model they were silently ignored."""
    path = log_file(tmp_path, [{"messages": messages_of("small", "graphrag")}])
    done = run_cli("--from-prompts", path, *flags, "--out", str(tmp_path / "out"))
    assert (done.returncode, done.stderr) == (
        2,
        f"error: --from-prompts sends its requests itself, with --model: leave out {named}\n",
    )


def profile_events(fn, *args) -> int:
    """How many calls (Python and C, generator steps included) fn(*args) makes: a count that does not depend on the
    machine, for telling a linear finder from a quadratic one."""
    count = 0

    def hook(frame, event, arg):
        nonlocal count
        count += 1

    sys.setprofile(hook)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize(
    ("finder", "make"),
    [
        ("find_langchain", lambda n: "[{'a': 1}, " * n),  # unterminated lists: 80 s for 55 KB
        ("find_langchain", lambda n: "[{'a': [{'b': " * n),  # nested opens, never closed
        ("find_langchain", lambda n: "Information:\n" + "[{'a': [" * n),
        (
            "find_llamaindex",
            lambda n: "\n\n".join(
                "Here are some facts extracted from the provided text:\n\nA -> R -> B" for _ in range(n)
            ),
        ),
        (
            "find_llamaindex",
            lambda n: (
                "---------------------\n" + "\n\n".join("A -> R -> B" for _ in range(n)) + "\n---------------------"
            ),
        ),
    ],
)
def test_every_layout_finder_is_linear_in_the_text(finder, make):
    """Quadratic finders took 80 s on 55 KB and ran past 120 s on 240 KB-1 MB lines: four times the text now takes
    about four times the calls, not sixteen."""
    from graphrag_format_benchmark.logged import layouts

    find = getattr(layouts, finder)
    small, large = (profile_events(find, make(n)) for n in (250, 1000))
    assert large <= 5 * small, (small, large)


# -----------------------------------------------------------------------------
# answers compared by what they name; a run you can stop and watch (issue #55)


def test_answers_are_compared_by_the_entities_they_name_and_a_non_answer_agrees_with_nothing():
    from graphrag_format_benchmark.logged import agreement

    graph = benchmark.Graph(
        tuple(
            benchmark.Node(n, n.upper() if n.startswith("g") else n, "entity")
            for n in ("Leslie Lamport", "Radia Perlman", "Paxos", "graphrag")
        ),
        (
            benchmark.Edge("Leslie Lamport", "COLLABORATED_WITH", "Radia Perlman"),
            benchmark.Edge("Leslie Lamport", "DESCRIBED", "Paxos"),
        ),
    )
    names = agreement.Names(graph)
    asked = names.named("who did leslie lamport work with?")
    read = lambda text: agreement.reading(text, names, "the prompt " * 40, asked)  # noqa: E731
    pairs = [  # (answer to what was sent, answer in a format, agree by entities)
        ("Leslie Lamport collaborated with Radia Perlman.", "Radia Perlman", True),  # the question's own entity aside
        ("Radia Perlman", "radia perlman and Paxos", False),
        ("INSUFFICIENT_DATA", "The context does not mention it.", True),  # both abstain
        ("Collaborated_with", "COLLABORATED_WITH", False),  # a relation's name: a non-answer, never agreement
        ("", "", False),
        ("1969", " 1969 ", True),  # no entity named: by the text
        ("1969", "1970", False),
        ("the prompt " * 30, "the prompt " * 30, False),  # the prompt echoed
        ("GRAPHRAG", "graphrag", True),  # an upper-case title and its name
        ("Perlmanesque", "Radia", True),  # no whole name: by the text... which differs
    ]
    got = [agreement.agree(read(a), read(b)) for a, b, _ in pairs]
    assert got[:-1] == [want for _, _, want in pairs[:-1]]
    assert got[-1] is False
    assert read("Collaborated_with") == agreement.Reading("non_answer", text="a relation's name")
    assert read("Leslie Lamport") == agreement.Reading("entities", frozenset({"Leslie Lamport"}), "leslie lamport")


def stoppable_run(tmp_path, server, lines: int, *flags: str) -> subprocess.Popen:
    """A --from-prompts model run in a process of its own, stopped like a terminal's Ctrl-C can stop it."""
    import signal

    system, user = messages_of("small", "graphrag")
    asked = [[system, {**user, "content": f"{user['content']} ({k})"}] for k in range(lines)]  # 20 distinct requests
    path = log_file(tmp_path, [{"id": f"q{k}", "messages": m} for k, m in enumerate(asked)])
    cmd = [
        sys.executable,
        str(ROOT / "benchmark.py"),
        "--from-prompts",
        path,
        "--formats",
        "json,tsv",
        "--model",
        "m",
        "--base-url",
        server.url,
        *flags,
        "--out",
        str(tmp_path / "out"),
    ]
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_ctrl_c_stops_sending_at_once_writes_what_was_answered_and_the_run_resumes(tmp_path):
    """Ctrl-C went on sending every queued request (60 of 60 against a stub), then exited 130 with no results."""
    import signal
    import time

    from fake_openai import FakeOpenAI

    fake = FakeOpenAI(answer=lambda system: "Microsoft Research", delay=0.2)
    try:
        process = stoppable_run(tmp_path, fake, 20, "--concurrency", "2")
        deadline = time.monotonic() + 60
        while len(fake.requests) < 6 and time.monotonic() < deadline:
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        at_signal = len(fake.requests)
        stdout, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr
        assert len(fake.requests) <= at_signal + 2  # at most --concurrency more
        assert stderr.endswith("error: interrupted; run the same command to resume: what was answered is in the log\n")
        assert stdout.rstrip().endswith(f"results: {tmp_path / 'out' / 'results.md'}")
        md = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
        assert (
            "The model run was stopped (Ctrl-C): the agreement is over the questions whose answers had all come" in md
        )
        answered = len(fake.requests)
        done = run_cli(
            "--from-prompts",
            str(tmp_path / "logged.jsonl"),
            "--formats",
            "json,tsv",
            "--model",
            "m",
            "--base-url",
            fake.url,
            "--out",
            str(tmp_path / "out"),
        )
        assert done.returncode == 0, done.stderr
        assert len(fake.requests) == 60  # 20 lines, each as sent and in two formats: the rest sent, none twice
        assert answered < 60
    finally:
        fake.close()
    rows = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["agreement"]["rows"]
    assert [r["compared"] for r in rows] == [20, 20]


def test_a_slow_server_gets_a_status_line_at_least_every_heartbeat(tmp_path, monkeypatch, capsys):
    """No status line came in 11.6 minutes against a slow server."""
    from graphrag_format_benchmark.logged import answers

    from fake_openai import FakeOpenAI

    monkeypatch.setattr(answers, "HEARTBEAT", 0.3)
    fake = FakeOpenAI(answer=lambda system: "Microsoft Research", delay=1.0)
    try:
        path = log_file(tmp_path, [{"id": "q", "messages": messages_of("small", "graphrag")}])
        argv = [
            "--from-prompts",
            path,
            "--formats",
            "json",
            "--model",
            "m",
            "--base-url",
            fake.url,
            "--concurrency",
            "1",
            "--out",
            str(tmp_path / "out"),
        ]
        assert benchmark.main(argv) == 0
    finally:
        fake.close()
    err = capsys.readouterr().err
    assert re.search(r"^0/2 requests, \d+ s, waiting for the first answer, [01] in flight$", err, re.M), err
    assert re.search(r"^1/2 requests, \d+ s, 0 failed, 1 in flight, about \d+ s left$", err, re.M), err


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--batch"], "--batch"),  # it asked for --model, then refused --batch once given one
        (["--batch", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"], "--batch"),
        (["--score", "answers.jsonl"], "--score"),  # ignored without --model
        (["--export-batch", "batch.jsonl"], "--export-batch"),  # ignored without --model
        (["--export-batch", "batch.jsonl", "--batch"], "--batch, --export-batch"),
    ],
)
def test_a_batch_or_answers_flag_is_refused_with_or_without_a_model(tmp_path, capsys, flags, named):
    path = log_file(tmp_path, [{"prompt": "x"}])
    assert benchmark.main(["--from-prompts", path, *flags, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"error: --from-prompts sends its requests itself, with --model: leave out {named}\n"
    )
    assert not (tmp_path / "out").exists()
