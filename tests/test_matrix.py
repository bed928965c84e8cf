"""The experiment matrix: solver, distractor sizes, permutations, short ids, mode B packing, leakage."""

import json
import random
import re
import sys
from dataclasses import replace

import pytest

import benchmark
from benchmark import BenchmarkError, Edge, Graph, Hop, Query
from graphrag_format_benchmark import matrix, progress, solver
from graphrag_format_benchmark.variants import contexts, distractors, ids as variants_ids

from conftest import ROOT, grown, run_cli, without_read

sys.path.insert(0, str(ROOT / "bench"))
from kg_graphs import FAMILY, FILM, QUESTIONS as FAMILY_QUESTIONS, write

import synth_kg  # noqa: E402

O200K = None

# 13 edges
THIRTEEN = contexts.Context("", benchmark.Graph((), tuple(benchmark.Edge("a", "R", "b") for _ in range(13))), ())


def tokenizer():
    global O200K
    O200K = O200K or benchmark.load_tokenizer("o200k_base")
    return O200K


def plan(**overrides):
    options = dict(
        formats=list(benchmark.ARTICLE_FORMATS),
        tokenizers=[tokenizer()],
        sizes=["small"],
        ids=["original"],
        permutations=1,
        budget=None,
        context_window=128000,
        seed=contexts.DEFAULT_SEED,
        write_prompts=False,
    )
    options.update(overrides)
    return matrix.Plan(**options)


# ---- the control solver


def shared_variant(graph, questions):
    """The article's setting: one graph that every question is asked on."""
    return contexts.Variant("small", "original", (contexts.Context("", graph, questions),), 0)


def test_solver_finds_each_gold_path_of_the_article(canonical):
    for q in canonical.questions:
        found = solver.solve(canonical.graph, q.query)
        assert found == ([] if q.insufficient else [(q.paths[0], q.answer_ids[0])]), q.id


def test_solver_follows_in_hops_backwards_without_turning_edges_around():
    edges = Graph((), (Edge("org", "LOCATED_IN", "city"),))
    assert solver.solve(edges, Query("city", (Hop("LOCATED_IN", "in"),))) == [((0,), "org")]
    assert solver.solve(edges, Query("city", (Hop("LOCATED_IN", "out"),))) == []


def test_solver_may_pass_an_edge_again_when_the_hops_lead_back_over_it():
    edges = Graph((), (Edge("a", "R", "b"), Edge("c", "R", "b")))  # a and c are both parents of b
    siblings = solver.solve(edges, Query("a", (Hop("R", "out"), Hop("R", "in"))))
    assert siblings == [((0, 0), "a"), ((0, 1), "c")]


def test_preflight_names_question_variant_and_paths(canonical):
    broken = tuple(replace(q, paths=((0, 3, 6, 11),)) if q.id == "q1" else q for q in canonical.questions)
    variant = shared_variant(canonical.graph, broken)
    with pytest.raises(BenchmarkError) as caught:
        matrix.preflight_solver(variant)
    assert str(caught.value) == (
        "control solver disagrees with question q1 on graph variant small/original: the query finds 1 complete "
        "path(s), the question lists 1 gold path(s); found but not listed: [0, 3, 6, 10] (person_irina -LEADS-> "
        "project_orion, project_orion -USES-> method_graph, method_graph -DEVELOPED_BY-> org_vector, org_vector "
        "-LOCATED_IN-> city_kazan); listed but not found: [0, 3, 6, 11] (person_irina -LEADS-> project_orion, "
        "project_orion -USES-> method_graph, method_graph -DEVELOPED_BY-> org_vector, org_siberia -LOCATED_IN-> "
        "city_tomsk); fix the paths or the query"
    )


def test_preflight_catches_a_completed_abstention(canonical):
    graph = Graph(canonical.graph.nodes, canonical.graph.edges + (Edge("org_north", "LOCATED_IN", "city_tomsk"),))
    variant = shared_variant(graph, canonical.questions)
    with pytest.raises(
        BenchmarkError,
        match=r"question q6 on graph variant small/original: an abstention question, but the "
        r"query finds 1 complete path\(s\): \[9, 13\] \(method_hybrid -DEVELOPED_BY-> org_north, ",
    ):
        matrix.preflight_solver(variant)


# ---- distractors


@pytest.fixture(scope="module")
def medium(canonical):
    stream = distractors.Distractors(canonical.graph, canonical.questions, contexts.DEFAULT_SEED)
    return stream, grown(canonical.graph, canonical.questions, stream, "medium", stream.medium, contexts.DEFAULT_SEED)


def test_medium_has_ten_to_twenty_branches_per_start_node(canonical, medium):
    stream, variant = medium
    starts = list(dict.fromkeys(q.query.start for q in canonical.questions))
    assert stream.anchors == starts
    per_anchor = {s: 0 for s in starts}
    original = {n.id for n in canonical.graph.nodes}
    for nodes, edges, *_ in stream.first(stream.medium):
        touching = [end for e in edges for end in (e.source, e.target) if end in original]
        assert len(touching) == 1, "a branch touches the input graph at its anchor only"
        per_anchor[touching[0]] += 1
        assert all(n.id not in original for n in nodes)
    assert all(10 <= n <= 20 for n in per_anchor.values()), per_anchor
    matrix.preflight_solver(variant)


def test_distractors_look_like_the_data_and_never_reuse_a_name(canonical, medium):
    _, variant = medium
    names = [n.name.casefold() for n in variant.contexts[0].graph.nodes]
    assert len(set(names)) == len(names)
    patterns = {
        (s.type, e.relation, t.type)
        for e in canonical.graph.edges
        for s in canonical.graph.nodes
        for t in canonical.graph.nodes
        if s.id == e.source and t.id == e.target
    }
    types = {n.id: n.type for n in variant.contexts[0].graph.nodes}
    assert {(types[e.source], e.relation, types[e.target]) for e in variant.contexts[0].graph.edges} <= patterns
    originals = [n.name.casefold() for n in canonical.graph.nodes]
    new = [n for n in variant.contexts[0].graph.nodes if n not in canonical.graph.nodes]
    assert not [n for n in new if any(n.name.casefold().startswith(o + " ") for o in originals)]
    assert {n.type for n in new} <= {n.type for n in canonical.graph.nodes}


def test_gold_edges_are_interleaved_and_paths_follow_them(canonical, medium):
    _, variant = medium
    positions = sorted(variant.contexts[0].graph.edges.index(e) for e in canonical.graph.edges)
    assert positions != list(range(13))
    assert positions[-1] > len(variant.contexts[0].graph.edges) // 2
    for old, new in zip(canonical.questions, variant.questions):
        assert [variant.contexts[0].graph.edges[i] for i in new.paths[0]] == [
            canonical.graph.edges[i] for i in old.paths[0]
        ]


def test_stream_prefix_is_stable(canonical):
    a = distractors.Distractors(canonical.graph, canonical.questions, 7)
    b = distractors.Distractors(canonical.graph, canonical.questions, 7)
    first = a.first(50)
    assert b.first(200)[:50] == first
    assert distractors.Distractors(canonical.graph, canonical.questions, 8).first(50) != first


def test_when_names_run_out_fewer_branches_are_made_never_numbered_or_repeated(canonical, capsys):
    stream = distractors.Distractors(canonical.graph, canonical.questions, 1)
    branches = stream.first(2000)
    names = [n.name for b in branches for n in b.nodes]
    assert 300 < len(branches) < 2000 and stream.first(5000) == branches  # all there can be
    assert len(set(names)) == len(names) and not any(c.isdigit() for name in names for c in name)
    assert stream.namer.unnamed["type project"] > 0  # one-word project names of the pool ran out first
    assert stream.shortage("large", len(branches), None).startswith(
        f"large: {len(branches)} distractor branches could be made, fewer than it takes to fill --context-window: the "
        "graph's "
        "names are too few to vary into more new names without numbers or blends (spent first: type project"
    )


# ---- short ids and permutations


def test_short_ids_rename_everything_consistently(canonical):
    base = shared_variant(canonical.graph, canonical.questions)
    short = variants_ids.with_short_ids(base, 3)
    assert sorted(n.id for n in short.contexts[0].graph.nodes) == sorted(f"n{i}" for i in range(1, 15))
    assert [n.name for n in short.contexts[0].graph.nodes] == [n.name for n in canonical.graph.nodes]
    back = {n.id: old.id for n, old in zip(short.contexts[0].graph.nodes, canonical.graph.nodes)}
    assert [Edge(back[e.source], e.relation, back[e.target]) for e in short.contexts[0].graph.edges] == list(
        canonical.graph.edges
    )
    q1 = short.questions[0]
    assert back[q1.answer_ids[0]] == "city_kazan" and back[q1.query.start] == "person_irina"
    matrix.preflight_solver(short)
    assert variants_ids.with_short_ids(base, 3) == short
    assert variants_ids.with_short_ids(base, 4) != short


def test_permutation_zero_is_canonical_and_others_are_seeded():
    assert contexts.edge_order(THIRTEEN, "small", 0, 1) == list(range(13))
    p1 = contexts.edge_order(THIRTEEN, "small", 1, 1)
    assert sorted(p1) == list(range(13)) and p1 != list(range(13))
    assert contexts.edge_order(THIRTEEN, "small", 1, 1) == p1
    assert contexts.edge_order(THIRTEEN, "small", 2, 1) != p1


# ---- mode B packing and the large size


def test_largest_fitting_finds_the_boundary_in_few_calls():
    calls = []

    def f(k):
        calls.append(k)
        return 7 * k + (k % 3)

    assert matrix.largest_fitting(f, 700, 0, 0, 10_000, 70_001) == (99, 693)
    assert len(calls) <= 8
    calls.clear()
    assert matrix.cut_near(f, 700, 99, 0, 0, None, None) == (99, 693)
    assert calls == [99, 100]


def rebuild(out, row):
    """The prompt of a size_report row, from the written artifacts and k edges (k = edges_included by default)."""
    stem = f"{row['size']}.{row['ids']}"
    graph = benchmark.validate_graph(
        json.loads((out / f"graph.{stem}.json").read_text(encoding="utf-8")), stem, benchmark.Problems()
    )
    questions = {q["id"]: q for q in json.loads((out / f"questions.{stem}.json").read_text(encoding="utf-8"))}
    order = json.loads((out / f"order.{row['size']}.p{row['permutation']}.json").read_text(encoding="utf-8"))
    shown = tuple(graph.edges[i] for i in order)

    def prompt(k):
        sub = contexts.subgraph(Graph(graph.nodes, shown[:k]))
        return sub, benchmark.ARTICLE_TEMPLATE.render(
            row["format"], benchmark.serialized(row["format"], sub), questions[row["question_id"]]["question"]
        )

    return shown, prompt


@pytest.fixture(scope="module")
def matrix_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("matrix") / "out"
    argv = [
        "--sizes",
        "small,medium",
        "--ids",
        "original,short",
        "--permutations",
        "3",
        "--budget",
        "2500",
        "--out",
        str(out),
    ]
    assert benchmark.main(argv) == 0
    return out, json.loads((out / "size_report.json").read_text(encoding="utf-8"))


def test_mode_b_packs_are_maximal_closed_and_within_budget(matrix_run):
    out, rows = matrix_run
    packed = [r for r in rows if r["mode"] == "B" and r["edges_included"] < r["edges_total"]]
    assert len(packed) > 50
    for r in packed:
        shown, prompt = rebuild(out, r)
        sub, text = prompt(r["edges_included"])
        assert benchmark.sha256_hex(text) == r["prompt_sha256"]
        assert tokenizer().count(text) == r["prompt_tokens"] <= 2500
        assert tokenizer().count(prompt(r["edges_included"] + 1)[1]) > 2500
        used = {e.source for e in sub.edges} | {e.target for e in sub.edges}
        assert {n.id for n in sub.nodes} == used
        assert r["gold_edges_included"] == sum(1 for p in r["gold_path"] if p < r["edges_included"])
        if r["answerable"] and r["question_id"] != "q6":
            assert r["gold_edges_included"] == len(r["gold_path"])


def test_mode_a_rows_point_at_the_gold_edges(matrix_run, canonical):
    out, rows = matrix_run
    gold = {q.id: [canonical.graph.edges[i] for i in q.paths[0]] for q in canonical.questions}
    for r in rows:
        if r["mode"] == "A" and r["ids"] == "original":
            shown, _ = rebuild(out, r)
            assert [shown[i] for i in r["gold_path"]] == gold[r["question_id"]]
            assert r["edges_included"] == r["edges_total"] and r["answerable"] is True


def test_matrix_files_and_no_prompts_by_default(matrix_run):
    out, rows = matrix_run
    names = sorted(p.name for p in out.iterdir())
    assert not [n for n in names if n.startswith("prompt.")]
    for size in ("small", "medium"):
        for ids in ("original", "short"):
            assert f"graph.{size}.{ids}.json" in names and f"questions.{size}.{ids}.json" in names
            assert [n for n in names if n.startswith(f"graph.{size}.{ids}.") and n.endswith(".txt")] == sorted(
                f"graph.{size}.{ids}.{fmt}.txt" for fmt in benchmark.ARTICLE_FORMATS
            )
        assert [f"order.{size}.p{k}.json" in names for k in range(3)] == [True] * 3
    assert {"size_report.md", "size_summary.json", "manifest.json"} <= set(names)
    assert len(rows) == 2 * 2 * 3 * 2 * 5 * 6


def test_variant_files_are_valid_inputs_that_reproduce_the_run(matrix_run, tmp_path):
    out, rows = matrix_run
    done = run_cli(
        "--graph",
        str(out / "graph.medium.short.json"),
        "--questions",
        str(out / "questions.medium.short.json"),
        "--out",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    again = json.loads((tmp_path / "size_report.json").read_text(encoding="utf-8"))
    mine = [r for r in rows if (r["size"], r["ids"], r["permutation"], r["mode"]) == ("medium", "short", 0, "A")]
    assert [r["prompt_sha256"] for r in again] == [r["prompt_sha256"] for r in mine]


def test_summary_gives_spread_across_permutations(matrix_run):
    out, _ = matrix_run
    summary = json.loads((out / "size_summary.json").read_text(encoding="utf-8"))
    entry = next(
        e for e in summary if (e["size"], e["ids"], e["mode"], e["format"]) == ("medium", "original", "B", "json")
    )
    assert entry["permutations"] == 3 and entry["questions"] == 6
    assert set(entry["edges_included"]) == {"mean", "min", "max", "sd"}
    assert entry["edges_included"]["min"] <= entry["edges_included"]["mean"] <= entry["edges_included"]["max"]
    report = (out / "size_report.md").read_text(encoding="utf-8")
    assert "## o200k_base · medium · original · mode B (budget 2500)" in report
    assert "| answer_not_always_first | pass |" in report


def test_matrix_run_is_byte_identical_on_a_second_run(matrix_run, tmp_path):
    out, _ = matrix_run
    argv = [
        "--sizes",
        "small,medium",
        "--ids",
        "original,short",
        "--permutations",
        "3",
        "--budget",
        "2500",
        "--out",
        str(tmp_path),
    ]
    assert benchmark.main(argv) == 0
    for path in out.iterdir():
        if path.name != "manifest.json":
            assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_large_fills_the_context_window_with_the_most_compact_format(canonical, tmp_path):
    argv = [
        "--sizes",
        "large",
        "--context-window",
        "20000",
        "--out",
        str(tmp_path),
        "--encoding",
        "o200k_base,cl100k_base",
    ]
    assert benchmark.main(argv) == 0
    rows = json.loads((tmp_path / "size_report.json").read_text(encoding="utf-8"))
    first = [r for r in rows if r["encoding"] == "o200k_base"]
    worst = {fmt: max(r["prompt_tokens"] for r in first if r["format"] == fmt) for fmt in benchmark.ARTICLE_FORMATS}
    compact = min(worst, key=worst.get)
    assert worst[compact] <= 20000
    assert all(worst[f] > 20000 for f in worst if f != compact)
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    n = manifest["config"]["large_branches"]
    stream = distractors.Distractors(canonical.graph, canonical.questions, contexts.DEFAULT_SEED)
    bigger = grown(canonical.graph, canonical.questions, stream, "large", n + 1, contexts.DEFAULT_SEED)
    prompts = [
        benchmark.ARTICLE_TEMPLATE.render(compact, benchmark.serialized(compact, bigger.contexts[0].graph), q.question)
        for q in canonical.questions
    ]
    assert max(tokenizer().count(p) for p in prompts) > 20000
    assert {r["encoding"] for r in rows} == {"o200k_base", "cl100k_base"}


def test_write_prompts_dumps_every_prompt(tmp_path):
    assert (
        benchmark.main(
            ["--permutations", "2", "--budget", "600", "--formats", "dsl", "--write-prompts", "--out", str(tmp_path)]
        )
        == 0
    )
    rows = json.loads((tmp_path / "size_report.json").read_text(encoding="utf-8"))
    prompts = sorted(p.name for p in tmp_path.glob("prompt.*"))
    assert len(prompts) == len(rows) == 2 * 2 * 6
    assert "prompt.small.original.p1.B.o200k_base.dsl.q3.txt" in prompts
    for r in rows:
        mode = "A" if r["mode"] == "A" else "B.o200k_base"
        text = (tmp_path / f"prompt.small.original.p{r['permutation']}.{mode}.dsl.{r['question_id']}.txt").read_bytes()
        assert benchmark.sha256_hex(text) == r["prompt_sha256"]


# ---- a graph from another domain, with longer paths and hostile names


OTHER_GRAPH = {
    "nodes": [
        {"id": "a|1", "name": 'Ann -> "Lee"', "type": "actor"},
        {"id": "a 2", "name": "Bo\tKim", "type": "actor"},
        {"id": "m-1", "name": "Heat, 1995", "type": "movie"},
        {"id": "m-2", "name": "Ran\n", "type": "movie"},
        {"id": "d\\1", "name": "Mann", "type": "director"},
        {"id": "d2", "name": "Kurosawa", "type": "director"},
        {"id": "c1", "name": "Chicago", "type": "city"},
        {"id": "s1", "name": "Film school", "type": "school"},
    ],
    "edges": [
        {"source": "a|1", "relation": "ACTED_IN", "target": "m-1"},
        {"source": "a 2", "relation": "ACTED_IN", "target": "m-2"},
        {"source": "m-1", "relation": "DIRECTED_BY", "target": "d\\1"},
        {"source": "m-2", "relation": "DIRECTED_BY", "target": "d2"},
        {"source": "d\\1", "relation": "BORN_IN", "target": "c1"},
        {"source": "c1", "relation": "HAS", "target": "s1"},
    ],
}
OTHER_QUESTIONS = [
    {
        "id": "long",
        "question": "Which school is in the birth city of the director of Ann's movie?",
        "answer": "Film school",
        "path": [0, 2, 4, 5],
        "insufficient": False,
        "answer_id": "s1",
        "query": {
            "start": "a|1",
            "hops": [{"relation": r, "direction": "out"} for r in ("ACTED_IN", "DIRECTED_BY", "BORN_IN", "HAS")],
        },
    },
    {
        "id": "back",
        "question": "Who acted for Kurosawa?",
        "answer": "Bo\tKim",
        "path": [3, 1],
        "insufficient": False,
        "answer_id": "a 2",
        "query": {
            "start": "d2",
            "hops": [{"relation": "DIRECTED_BY", "direction": "in"}, {"relation": "ACTED_IN", "direction": "in"}],
        },
    },
    {
        "id": "none",
        "question": "Where was Kurosawa born?",
        "answer": "INSUFFICIENT_DATA",
        "path": [3],
        "insufficient": True,
        "answer_id": None,
        "query": {"start": "d2", "hops": [{"relation": "BORN_IN", "direction": "out"}]},
    },
]


def test_another_domain_runs_the_whole_matrix(tmp_path):
    (tmp_path / "g.json").write_text(json.dumps(OTHER_GRAPH), encoding="utf-8")
    (tmp_path / "q.json").write_text(json.dumps(OTHER_QUESTIONS), encoding="utf-8")
    argv = [
        "--graph",
        str(tmp_path / "g.json"),
        "--questions",
        str(tmp_path / "q.json"),
        "--out",
        str(tmp_path / "out"),
        "--sizes",
        "small,medium,large",
        "--ids",
        "original,short",
        "--permutations",
        "2",
        "--budget",
        "900",
        "--context-window",
        "6000",
        "--formats",
        ",".join(benchmark.FORMATS),
    ]
    assert benchmark.main(argv) == 0
    out = tmp_path / "out"
    medium = json.loads((out / "graph.medium.original.json").read_text(encoding="utf-8"))
    new = [n for n in medium["nodes"] if n not in OTHER_GRAPH["nodes"]]
    assert not new  # two names per type, each of other words: nothing to recombine, and nothing numbered or blended
    report = (out / "size_report.md").read_text(encoding="utf-8")
    assert "- medium: 0 of the 26 distractor branches it needs could be made: the graph's names are too few" in report
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["preflight"]["distractor_shortages"][0].startswith("medium: 0 of the 26")
    rows = json.loads((out / "size_report.json").read_text(encoding="utf-8"))
    assert all(r["answerable"] for r in rows if r["mode"] == "A")


# ---- leakage and bad flags


def write_inputs(tmp_path, questions):
    graph = json.loads((ROOT / "data" / "graph.json").read_text(encoding="utf-8"))
    (tmp_path / "g.json").write_text(json.dumps(graph, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "q.json").write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    return [
        "--graph",
        str(tmp_path / "g.json"),
        "--questions",
        str(tmp_path / "q.json"),
        "--out",
        str(tmp_path / "out"),
    ]


QUESTIONS = json.loads((ROOT / "data" / "questions.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"question": "Казань: где находится организация проекта Ирины?"},
            "error: q.json: question q1: leakage check question_has_no_answer failed: 'казань'; fix the question, or "
            "pass "
            "--leakage warn to measure anyway\n",
        ),
        (
            {"id": "city_kazan"},
            "".join(  # q1, now called city_kazan, and q4 both have the answer city_kazan
                f"error: q.json: question {qid}: leakage check file_names_have_no_answer failed: "
                f"prompt.{fmt}.city_kazan.txt "
                "has 'city_kazan'; fix the question, or pass --leakage warn to measure anyway\n"
                for fmt in sorted(benchmark.ARTICLE_FORMATS)
                for qid in ("city_kazan", "q4")
            )
            + "error: 10 problems found; nothing was written; pass --skip-invalid-questions to drop the questions at "
            "fault and go on\n",
        ),
    ],
)
def test_leakage_stops_the_run(tmp_path, capsys, monkeypatch, change, message):
    questions = [dict(QUESTIONS[0], **change), *QUESTIONS[1:]]
    monkeypatch.chdir(tmp_path)
    assert benchmark.main(write_inputs(tmp_path, questions)) == 2
    assert capsys.readouterr().err == message
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--permutations", "0"], "--permutations must be at least 1, got 0"),
        (["--budget", "0"], "--budget must be at least 1, got 0"),
        (["--sizes", "huge"], "unknown name 'huge' in --sizes; choose from small, medium, large"),
        (["--ids", "uuid"], "unknown name 'uuid' in --ids; choose from original, short, pseudonyms"),
        (
            ["--budget", "100"],
            "--budget 100 is below the 156 tokens of the json prompt for question q1 with an empty graph (o200k_base); "
            "raise --budget",
        ),
        (
            ["--sizes", "large", "--context-window", "3000"],
            "--context-window 3000 is too small for a large graph: the medium graph's most compact prompt (edge_list) "
            "already takes 5064 tokens; raise --context-window or drop large from --sizes",
        ),
    ],
)
def test_bad_matrix_flags(tmp_path, capsys, flags, message):
    assert benchmark.main([*flags, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not (tmp_path / "out").exists()


def test_medium_needs_queries(tmp_path, capsys):
    questions = [{k: v for k, v in q.items() if k != "query"} for q in QUESTIONS]
    assert benchmark.main([*write_inputs(tmp_path, questions), "--sizes", "medium"]) == 2
    err = capsys.readouterr().err.splitlines()  # the positive questions' queries are derived from their gold paths
    assert err == [
        f"error: {benchmark.display(tmp_path / 'q.json')}: question q6 has no 'query': distractor graphs need every "
        "question's query to prove they leave its answer alone (see README, questions); add it or use --sizes small"
    ]


def test_progress_line_on_long_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(progress, "PROGRESS_AFTER", 0.0)
    assert benchmark.main(["--permutations", "2", "--formats", "json,dsl", "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines  # at least the final line; others at most once a second
    assert all(
        re.fullmatch(r"\d+/24 cells, \d+ s, small/original p[01] \(2 formats\) o200k_base A", line) for line in lines
    )
    assert lines[-1].startswith("24/24 cells, ")


def test_a_three_node_graph_runs_at_every_size_and_says_why_it_has_no_distractors(tmp_path, capsys):
    # The only pattern for "thing" is the question's own hop: any branch would answer it a second way.
    graph = {
        "nodes": [
            {"id": "a", "name": "A", "type": "thing"},
            {"id": "b", "name": "B", "type": "other"},
            {"id": "c", "name": "C", "type": "other"},
        ],
        "edges": [{"source": "b", "relation": "R", "target": "a"}, {"source": "c", "relation": "S", "target": "b"}],
    }
    questions = [
        {
            "id": "one",
            "question": "Who points at A?",
            "answer": "B",
            "path": [0],
            "insufficient": False,
            "answer_id": "b",
            "query": {"start": "a", "hops": [{"relation": "R", "direction": "in"}]},
        },
        {
            "id": "two",
            "question": "Who points at B?",
            "answer": "C",
            "path": [1],
            "insufficient": False,
            "answer_id": "c",
            "query": {"start": "b", "hops": [{"relation": "S", "direction": "in"}]},
        },
    ]
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    (tmp_path / "q.json").write_text(json.dumps(questions), encoding="utf-8")
    argv = [
        "--graph",
        str(tmp_path / "g.json"),
        "--questions",
        str(tmp_path / "q.json"),
        "--sizes",
        "small,medium,large",
        "--model",
        "solver",
        "--prompt",
        "en",
        "--out",
        str(tmp_path / "out"),
    ]
    assert benchmark.main(argv) == 0
    err = without_read(capsys.readouterr().err).splitlines()
    assert err[0] == "warning: no distractor branch can hang off 'a' without completing a question's path; it gets none"
    assert err[1].startswith("warning: medium: 0 of the ") and err[1].endswith("(spent first: type thing)")
    assert err[2].startswith(
        "warning: large: 0 distractor branches could be made, fewer than it takes to fill --context-window"
    )
    for size in ("medium", "large"):  # one-letter names vary into nothing that is not a blend
        assert json.loads((tmp_path / "out" / f"graph.{size}.original.json").read_text(encoding="utf-8")) == graph


# Pinned: a change to distractors, interleaving, ids, permutations, packing or tiktoken shows up here.
# If the change is intended, update the hashes in the same commit and say why in its message.
MEDIUM_GOLDEN = {
    "graph.medium.original.json": "c643b6b17aad344e9bfb6986bd9d922271a1545bcef365be3276c9c422641b43",
    "graph.medium.short.json": "dbd445f45ed1a57f3672e388a647dfea8b90ea808f164c5e5ba1e07be0f3afe9",
    "order.medium.p1.json": "ff98dbb28d00dbd1f5af8442a7afa6ab96afc9671089a85aa232c74e47c2b4eb",
    "size_report.json": "70a7699dd5eb39544cd3fca4b3a1c78e7a74f3c777c8315dd6dd1dbc703c405b",
}


def test_medium_matrix_artifacts_are_pinned(tmp_path):
    argv = [
        "--sizes",
        "medium",
        "--ids",
        "original,short",
        "--permutations",
        "2",
        "--budget",
        "3000",
        "--out",
        str(tmp_path),
    ]
    assert benchmark.main(argv) == 0
    assert {name: benchmark.sha256_hex((tmp_path / name).read_bytes()) for name in MEDIUM_GOLDEN} == MEDIUM_GOLDEN


def test_a_budget_too_small_for_any_gold_path_says_so_and_which_budget_would_do(tmp_path):
    done = run_cli("--sizes", "medium", "--budget", "1500", "--out", str(tmp_path / "a"))
    assert done.returncode == 0
    hint = next(line for line in done.stdout.splitlines() if line.startswith("note: "))
    budget = int(re.search(r"from --budget ([\d,]+)$", hint).group(1).replace(",", ""))
    assert "most prompts of every format leave a whole gold path out" in hint
    assert "## Mode B budget" in (tmp_path / "a" / "size_report.md").read_text(encoding="utf-8")
    done = run_cli("--sizes", "medium", "--budget", str(budget), "--out", str(tmp_path / "b"))
    rows = json.loads((tmp_path / "b" / "size_report.json").read_text(encoding="utf-8"))
    json_b = [r for r in rows if r["mode"] == "B" and r["format"] == "json" and r["question_id"] != "q6"]
    # the median question's path fits, and the shorter ones
    assert sum(r["answerable"] for r in json_b) >= len(json_b) / 2
    assert "note: " not in done.stdout


def test_no_write_prompts_and_write_prompts(tmp_path):
    assert run_cli("--no-write-prompts", "--out", str(tmp_path / "a")).returncode == 0
    assert not list((tmp_path / "a").glob("prompt.*"))
    assert run_cli("--out", str(tmp_path / "b")).returncode == 0
    assert len(list((tmp_path / "b").glob("prompt.*"))) == 30


def test_medium_on_an_untyped_graph_with_hundreds_of_relations_is_drawn_not_enumerated(tmp_path):
    rng = random.Random(9)
    graph = synth_kg.make_graph(3000, 300, rng)
    questions = synth_kg.make_questions(graph, 20, rng)
    done = run_cli(
        *write(tmp_path, graph, questions),
        "--sizes",
        "medium",
        "--permutations",
        "2",
        "--prompt",
        "en",
        "--skip-invalid-questions",
        "--model",
        "solver",
    )
    assert done.returncode == 0, done.stderr
    table = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["aggregates"]
    assert {(e["answer_correct"]["rate"], e["path_exact"]["rate"]) for e in table} == {(1.0, 1.0)}


def test_results_and_size_report_per_hop_count(tmp_path):
    argv = [*write(tmp_path, FAMILY, FAMILY_QUESTIONS), "--model", "solver", "--budget", "700", "--formats", "json,dsl"]
    assert benchmark.main(argv) == 0
    table = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["aggregates"]
    a = next(e for e in table if (e["mode"], e["format"]) == ("A", "json"))
    assert {b: part["n"] for b, part in a["by_hops"].items()} == {"1": 3, "2": 2, "abstention": 1}
    assert (
        a["by_hops"]["2"]["path_exact"]["rate"] == 1.0
        and a["by_hops"]["abstention"]["abstention_correct"]["rate"] == 1.0
    )
    report = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert "| json | 1.00 (0.44–1.00) [3] | 1.00 (0.34–1.00) [2] |  |  | 1.00 (0.21–1.00) [1] |" in report
    size_report = (tmp_path / "out" / "size_report.md").read_text(encoding="utf-8")
    rows = json.loads((tmp_path / "out" / "size_report.json").read_text(encoding="utf-8"))
    b_json = {r["question_id"]: r["answerable"] for r in rows if (r["mode"], r["format"]) == ("B", "json")}
    one_hop = [b_json[q] for q in ("kids", "country", "acquaintance")]
    assert f"| json | {sum(one_hop) / 3:.2f} | " in size_report and "Answerable per hop count:" in size_report


def test_a_17_node_film_graph_runs_at_every_size_and_says_how_many_distractors_it_got(tmp_path, capsys):
    (tmp_path / "g.json").write_text(json.dumps(FILM), encoding="utf-8")
    argv = [
        "--graph",
        str(tmp_path / "g.json"),
        "--generate-questions",
        "12",
        "--prompt",
        "en",
        "--sizes",
        "small,medium,large",
        "--model",
        "solver",
        "--out",
        str(tmp_path / "out"),
    ]
    assert benchmark.main(argv) == 0
    err = capsys.readouterr().err
    assert re.search(
        r"warning: large: \d+ distractor branches could be made, fewer than it takes to fill --context-window: "
        r"the graph's "
        r"names are too few",
        err,
    )
    real = {n["name"] for n in FILM["nodes"]}
    for size in ("medium", "large"):
        graph = json.loads((tmp_path / "out" / f"graph.{size}.original.json").read_text(encoding="utf-8"))
        new = [n["name"] for n in graph["nodes"] if n["name"] not in real]
        assert not any(c.isdigit() for name in new for c in name)  # nothing numbered
        assert len(set(new)) == len(new)
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert {e["path_exact"]["rate"] for e in results["aggregates"]} == {1.0}


def test_prompt_files_are_written_by_default_only_while_they_stay_small(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(benchmark, "PROMPT_FILES_MAX_BYTES", 20_000)
    assert benchmark.main(["--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().err == (
        "warning: prompt files are not written: they would take 0 MB, over the 0 MB written by "
        "default; pass --write-prompts to write them anyway\n"
    )
    assert not list((tmp_path / "out").glob("prompt.*"))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["write_prompts"] == {"write": False, "bytes": 71154}  # the bytes the 30 prompt files take
    assert benchmark.main(["--out", str(tmp_path / "again"), "--write-prompts"]) == 0
    assert len(list((tmp_path / "again").glob("prompt.*"))) == 30


def test_a_hand_made_graph_of_30_nodes_gets_its_medium_distractors_when_one_type_is_held_back_for_good(
    tmp_path, capsys
):
    """The unix graph's organizations ('Bell Labs', 'Sun Microsystems') can take new second words from a pool, but each
    new first word would pass its share: such names are held back, and while nothing of the type is made they stay so.
    Held back twice with no new node of the type between counts as spent: the other types go on (13 of 253 branches
    were made, every anchor stalled on organizations; 83 before the pools)."""
    import realism

    (tmp_path / "unix.json").write_text(json.dumps(realism.unix_graph(random.Random(1))), encoding="utf-8")
    argv = [
        "--graph",
        str(tmp_path / "unix.json"),
        "--generate-questions",
        "40",
        "--sizes",
        "medium",
        "--formats",
        "json",
        "--no-write-prompts",
        "--skip-invalid-questions",
        "--prompt",
        "en",
        "--out",
        str(tmp_path / "out"),
    ]
    assert benchmark.main(argv) == 0
    medium = json.loads((tmp_path / "out" / "graph.medium.original.json").read_text(encoding="utf-8"))
    assert (
        len(medium["nodes"]) - 30 >= 253 and "distractor branches it needs could be made" not in capsys.readouterr().err
    )


def test_the_status_line_of_a_measurement_names_the_context_in_every_format_not_the_first_format(tmp_path, monkeypatch):
    """Mode A counts every format's text at once: the format that finished last was the first (it waits for the
    others), so 102 of 103 lines of a khop run said json. A line names the order and context instead; mode B, packed
    one format after the other, names its format."""
    from graphrag_format_benchmark import measure

    labels = []

    class Recorded(progress.Progress):
        def advance(self, n, label):
            labels.append((n, label))
            super().advance(n, label)

    monkeypatch.setattr(measure, "Progress", Recorded)
    argv = [*write(tmp_path, FAMILY, FAMILY_QUESTIONS[:2]), "--prompt", "en", "--formats", "json,dsl"]
    assert benchmark.main([*argv, "--context", "khop", "--budget", "400"]) == 0
    assert labels == [
        (1, "small/original p0 siblings (2 formats) o200k_base A"),
        (1, "small/original p0 siblings json o200k_base B"),
        (1, "small/original p0 siblings (2 formats) o200k_base A"),
        (1, "small/original p0 siblings dsl o200k_base B"),
        (1, "small/original p0 kids (2 formats) o200k_base A"),
        (1, "small/original p0 kids json o200k_base B"),
        (1, "small/original p0 kids (2 formats) o200k_base A"),
        (1, "small/original p0 kids dsl o200k_base B"),
    ]
    labels.clear()
    assert benchmark.main([*argv, "--out", str(tmp_path / "shared"), "--encoding", "o200k_base,cl100k_base"]) == 0
    assert labels == [(2, "small/original p0 (2 formats) 2 encodings A")] * 4
