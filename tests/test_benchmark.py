"""benchmark.py, the article's script: alone with data/ and tiktoken it writes what it writes beside the package."""

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import benchmark

from conftest import ROOT, run_cli

SITE = Path(benchmark.tiktoken.__file__).resolve().parent.parent  # where tiktoken and what it needs are installed
TIKTOKEN_ONLY = ("tiktoken", "tiktoken_ext", "regex")  # tiktoken's own modules and its one dependency


def alone(tmp_path: Path) -> Path:
    """benchmark.py and data/ copied into an empty folder, with a site folder that holds tiktoken and nothing else."""
    folder = tmp_path / "alone"
    (folder / "site").mkdir(parents=True)
    shutil.copy(ROOT / "benchmark.py", folder)
    shutil.copytree(ROOT / "data", folder / "data")
    for name in TIKTOKEN_ONLY:
        (folder / "site" / name).symlink_to(SITE / name)
    return folder


def run_alone(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """python -S: no site-packages, so the script sees the standard library and the site folder only."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(folder / "site"), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-S", "benchmark.py", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> tuple[Path, Path]:
    """The default run's outputs: the script copied alone, and the script beside the package."""
    tmp = tmp_path_factory.mktemp("both")
    folder = alone(tmp)
    done = run_alone(folder, "--encoding", "o200k_base")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    beside = subprocess.run(
        [sys.executable, str(ROOT / "benchmark.py"), "--encoding", "o200k_base", "--out", str(tmp / "beside")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (beside.returncode, beside.stderr) == (0, "")
    assert done.stdout == beside.stdout  # the same console table
    return folder / "outputs", tmp / "beside"


def test_the_script_imports_the_standard_library_and_tiktoken_only():
    tree = ast.parse((ROOT / "benchmark.py").read_text(encoding="utf-8"))
    modules = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0}
    assert sorted(m for m in modules if m not in sys.stdlib_module_names) == ["tiktoken"]


def test_alone_it_writes_the_same_bytes_as_beside_the_package(both):
    own, beside = both
    names = sorted(p.name for p in own.iterdir())
    assert names == sorted(p.name for p in beside.iterdir() if p.name != "report.html")  # the page is the package's
    assert len([n for n in names if n.startswith(("graph.", "prompt."))]) == 35
    for name in names:
        if name != "manifest.json":
            assert (own / name).read_bytes() == (beside / name).read_bytes(), name


def test_alone_its_manifest_says_the_same_of_what_both_did(both):
    own, beside = (json.loads((folder / "manifest.json").read_text(encoding="utf-8")) for folder in both)
    assert set(own) == set(beside)
    assert {k: v for k, v in own["config"].items() if k != "out"}.items() <= beside["config"].items()
    assert own["inputs"] == beside["inputs"] and own["encodings"] == beside["encodings"]
    assert {k: v for k, v in own["outputs"].items()} == {
        k: v for k, v in beside["outputs"].items() if k != "report.html"
    }
    assert own["preflight"] == {
        "questions": beside["preflight"]["questions"],
        "not_run": "the control solver (article 8.5) and the "
        "leakage checks (8.3) run with the graphrag_format_benchmark package",
    }


def test_alone_a_flag_beyond_the_article_says_what_runs_it(tmp_path):
    done = run_alone(alone(tmp_path), "--model", "solver")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "benchmark.py: error: unrecognized arguments: --model solver (this copy of benchmark.py runs the article's "
        "measurement alone; the graphrag_format_benchmark package, which is not beside it, runs every other flag) "
        "(python benchmark.py --help lists every flag)\n"
    )


def test_alone_a_graph_file_of_another_kind_or_contexts_are_refused_in_one_line(tmp_path):
    folder = alone(tmp_path)
    (folder / "g.tsv").write_text("source\trelation\ttarget\na\tR\tb\n", encoding="utf-8")
    done = run_alone(folder, "--graph", "g.tsv")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: g.tsv: this copy of benchmark.py reads a JSON graph; the graphrag_format_benchmark package reads other "
        "graph files (TSV/CSV triples, RDF, GraphML, Neo4j)\n"
    )
    questions = json.loads((folder / "data" / "questions.json").read_text(encoding="utf-8"))
    questions[0]["context"] = {"edges": [0, 3, 6, 10]}
    (folder / "q.json").write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    done = run_alone(folder, "--questions", "q.json")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: q.json: questions[0].context: a question's own context is read by the graphrag_format_benchmark "
        "package, which is not beside this copy of benchmark.py; leave the contexts out, or add the package\n"
    )
    assert not (folder / "outputs").exists()


def test_the_article_run_in_process_gives_the_rows_of_the_packages_run(tmp_path, canonical):
    args = benchmark.article_parser().parse_args(["--out", str(tmp_path / "out")])
    table = benchmark.article_run(args, [])
    assert table.splitlines()[0] == "format\tgraph_tokens\tprompt_tokens_min\tprompt_tokens_max\toverflow"
    assert (tmp_path / "out" / "size_report.json").read_bytes() == (
        ROOT / "tests" / "golden" / "size_report.json"
    ).read_bytes()


def test_without_the_package_main_runs_the_article_and_with_it_hands_off(monkeypatch, tmp_path, capsys):
    real = benchmark.importlib.util.find_spec
    monkeypatch.setattr(
        benchmark.importlib.util, "find_spec", lambda name, *a: None if name == benchmark.PACKAGE else real(name, *a)
    )
    with pytest.raises(SystemExit) as stop:  # the article's parser: it has no --budget
        benchmark.main(["--out", str(tmp_path / "a"), "--budget", "900"])
    assert stop.value.code == 2
    assert (
        "unrecognized arguments: --budget 900 (this copy of benchmark.py runs the article's" in capsys.readouterr().err
    )
    assert benchmark.main(["--out", str(tmp_path / "a")]) == 0
    assert not (tmp_path / "a" / "report.html").exists()
    monkeypatch.undo()
    assert benchmark.main(["--out", str(tmp_path / "b")]) == 0
    assert (tmp_path / "b" / "report.html").exists()


def test_one_problem_at_many_places_is_said_once_with_its_count_and_first_places(tmp_path):
    """60 nodes without a type printed 60 identical lines (10,318 for FB15k-237): one line now, with the count and the
    first three places; another problem found once keeps its own line."""
    nodes = [{"id": f"n{k}", "name": f"Name {k}"} for k in range(60)] + [{"id": "x", "name": 7, "type": "t"}]
    (tmp_path / "g.json").write_text(json.dumps({"nodes": nodes, "edges": []}), encoding="utf-8")
    done = run_cli("--graph", str(tmp_path / "g.json"), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and not (tmp_path / "out").exists()
    lines = done.stderr.splitlines()
    assert lines[0] == (
        f"error: {tmp_path / 'g.json'}: nodes[0], nodes[1], nodes[2] and 57 more (60 in all) have no 'type'; each node "
        'needs string fields id, name, type; an untyped graph: give each node "type": "entity", as the TSV reader does'
    )
    assert lines[1].startswith(f"error: {tmp_path / 'g.json'}: nodes[60]") and lines[-1].startswith("error: ")
    assert not [line for line in lines if "nodes[3]" in line or "nodes[59]" in line]
    lines = [f"f: line {k} is bad" for k in (3, 9, 12, 40)] + ["g: edges[2].source is not a node id"]
    assert benchmark.grouped_problems(lines) == ["f: line 3, line 9, line 12 and 1 more (4 in all) are bad", lines[-1]]
    assert benchmark.grouped_problems(lines[1:]) == lines[1:]  # at three places: a line each


# -----------------------------------------------------------------------------
# the article's two files exactly as the article prints them (no answer_id, no query)

AS_PRINTED = ROOT / "tests" / "golden" / "article_as_printed"


def as_printed(tmp_path: Path) -> Path:
    """benchmark.py alone, its data/ the article's graph.json and questions.json as the article prints them."""
    folder = alone(tmp_path)
    for name in ("graph.json", "questions.json"):
        shutil.copy(AS_PRINTED / name, folder / "data" / name)
    return folder


def test_the_fixture_is_the_article_as_printed_with_no_answer_id_and_no_query():
    questions = json.loads((AS_PRINTED / "questions.json").read_text(encoding="utf-8"))
    assert {key for q in questions for key in q} == {"id", "question", "answer", "path", "insufficient"}
    assert (AS_PRINTED / "graph.json").read_bytes() == (ROOT / "data" / "graph.json").read_bytes()


def test_the_articles_files_as_printed_give_the_same_bytes_beside_the_package_as_alone(tmp_path):
    """They were refused beside the package ('the gold paths end at ['city_kazan'] but answer_ids are []'), exit 2:
    each question's answer node is now where its gold path ends, said once on stderr."""
    folder = as_printed(tmp_path)
    done = run_alone(folder, "--encoding", "o200k_base")
    assert (done.returncode, done.stderr) == (0, "")
    questions = folder / "data" / "questions.json"
    beside = run_cli("--encoding", "o200k_base", "--questions", str(questions), "--out", str(tmp_path / "beside"))
    assert beside.returncode == 0, beside.stderr
    assert beside.stdout == done.stdout
    assert beside.stderr == (
        f"warning: 5 question(s) of {questions} name no answer_id (q1, q2, q3, ...): each one's answer node is where "
        "its gold path ends; add 'answer_id' to name it yourself\n"
    )
    own = folder / "outputs"
    names = sorted(p.name for p in own.iterdir())
    assert len(names) == 37
    for name in names:
        if name != "manifest.json":
            assert (own / name).read_bytes() == (tmp_path / "beside" / name).read_bytes(), name


def test_the_articles_files_as_printed_score_one_under_the_solver_and_run_the_peers(tmp_path):
    graph, questions = str(AS_PRINTED / "graph.json"), str(AS_PRINTED / "questions.json")
    done = run_cli("--graph", graph, "--questions", questions, "--model", "solver", "--out", str(tmp_path / "s"))
    assert done.returncode == 0, done.stderr
    assert (
        f"warning: 6 question(s) of {benchmark.display(Path(questions))} have no 'query': the control solver walks the "
        "one derived from each "
        "one's gold path (its start, relations and directions); it abstains on the 1 abstention question(s), as it "
        "should\n"
    ) in done.stderr
    results = json.loads((tmp_path / "s" / "results.json").read_text(encoding="utf-8"))
    assert {(c["format"], c["answer_correct"], c["path_exact"] or c["insufficient"]) for c in results["cells"]} == {
        (f, True, True) for f in ("json", "jsonl", "tsv", "edge_list", "dsl")
    }
    assert len(results["cells"]) == 30
    peers = run_cli(
        "--graph",
        graph,
        "--questions",
        questions,
        "--formats",
        "toon,yaml,turtle,ison,isongraph",
        "--model",
        "solver",
        "--out",
        str(tmp_path / "p"),
    )
    assert peers.returncode == 0, peers.stderr
    cells = json.loads((tmp_path / "p" / "results.json").read_text(encoding="utf-8"))["cells"]
    assert len(cells) == 30 and all(c["answer_correct"] and (c["path_exact"] or c["insufficient"]) for c in cells)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda node: node.pop("name"), "nodes[3] has no 'name'; each node needs string fields id, name, type"),
        (lambda node: node.update(name=42), "nodes[3].name is 42, expected a string"),
    ],
    ids=["no name", "a number"],
)
def test_a_node_without_a_text_name_beside_the_articles_questions_is_one_line(tmp_path, change, message):
    """It was IndexError: tuple index out of range, a traceback and exit 1 (a query derived on the broken graph)."""
    graph = json.loads((AS_PRINTED / "graph.json").read_text(encoding="utf-8"))
    change(graph["nodes"][3])
    (tmp_path / "g.json").write_text(json.dumps(graph, ensure_ascii=False), encoding="utf-8")
    done = run_cli(
        "--graph",
        str(tmp_path / "g.json"),
        "--questions",
        str(AS_PRINTED / "questions.json"),
        "--out",
        str(tmp_path / "out"),
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {tmp_path / 'g.json'}: {message}\n")
    assert not (tmp_path / "out").exists()
