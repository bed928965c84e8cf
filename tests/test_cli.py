"""The command line: the default run byte for byte, reproducibility, bad input, safe publishing."""

import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tomllib

import pytest
import tiktoken

import benchmark
from graphrag_format_benchmark import frameworks

from conftest import GOLDEN, ROOT, run_cli, run_stderr, without_read

sys.path.insert(0, str(ROOT / "bench"))

ARTICLE = GOLDEN / "article"
TABLE = (
    "format\tgraph_tokens\tprompt_tokens_min\tprompt_tokens_max\toverflow\n"
    "json\t829\t967\t973\t0/6\n"
    "jsonl\t597\t736\t742\t0/6\n"
    "tsv\t317\t457\t463\t0/6\n"
    "edge_list\t305\t445\t451\t0/6\n"
    "dsl\t342\t482\t488\t0/6\n"
)


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("default") / "outputs"
    done = run_cli("--encoding", "o200k_base", "--out", str(out))
    return done, out


def test_default_run_prints_the_article_table(default_run):
    done, _ = default_run
    assert (done.returncode, done.stdout, done.stderr) == (0, TABLE, "")


def test_default_run_writes_the_article_files_byte_for_byte(default_run):
    _, out = default_run
    expected = sorted(p.name for p in ARTICLE.iterdir() if p.name != "size_report.json")
    assert len(expected) == 35  # 5 graphs and 30 prompts
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted([*expected, "size_report.json", "manifest.json", "report.html"])
    for name in expected:
        assert (out / name).read_bytes() == (ARTICLE / name).read_bytes(), name


def test_size_report_rows_match_the_article_field_for_field(default_run):
    _, out = default_run
    ours = json.loads((out / "size_report.json").read_text(encoding="utf-8"))
    article = json.loads((ARTICLE / "size_report.json").read_text(encoding="utf-8"))
    assert [{k: row[k] for k in ref} for row, ref in zip(ours, article)] == article
    assert len(ours) == len(article) == 30
    assert (out / "size_report.json").read_bytes() == (GOLDEN / "size_report.json").read_bytes()


def test_manifest_records_inputs_outputs_and_versions(default_run):
    _, out = default_run
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["schema_version"] == 1
    assert manifest["command"] == ["benchmark.py", "--encoding", "o200k_base", "--out", str(out)]
    assert manifest["config"]["formats"] == ["json", "jsonl", "tsv", "edge_list", "dsl"]
    assert manifest["encodings"] == [
        {
            "name": "o200k_base",
            "bpe_sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            "bpe_source": "data/tiktoken/fb374d419588a4632f3f557e76b4b70aebbca790",
        }
    ]
    for name, entry in manifest["inputs"].items():
        assert entry["sha256"] == benchmark.sha256_hex((ROOT / name).read_bytes())
    assert set(manifest["inputs"]) == {"data/graph.json", "data/questions.json"}
    assert manifest["outputs"] == {
        p.name: benchmark.sha256_hex(p.read_bytes()) for p in sorted(out.iterdir()) if p.name != "manifest.json"
    }
    assert manifest["environment"]["tiktoken"] == tiktoken.__version__
    assert len(manifest["git"]["commit"]) in (40, len("unknown"))


def test_second_run_is_byte_identical_except_the_manifest(default_run, tmp_path):
    _, first = default_run
    done = run_cli("--out", str(tmp_path))
    assert done.returncode == 0
    for path in first.iterdir():
        if path.name != "manifest.json":
            assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_runs_under_python_O(tmp_path):
    done = run_cli("--out", str(tmp_path), python_flags=("-O",))
    assert (done.returncode, done.stdout, done.stderr) == (0, TABLE, "")


def test_formats_flag_selects_and_orders(tmp_path):
    done = run_cli("--formats", "dsl,json", "--out", str(tmp_path))
    assert done.stdout == (
        "format\tgraph_tokens\tprompt_tokens_min\tprompt_tokens_max\toverflow\ndsl\t342\t482\t488\t0/6\njson\t829\t967\t973\t0/6\n"
    )
    assert sorted(p.name for p in tmp_path.glob("graph.*")) == ["graph.dsl.txt", "graph.json.txt"]


def test_hostile_graph_is_measured_exactly(tmp_path):
    names = ["a|b", "c\td", "e\nf", "g\rh", "i -j", "k->l", 'm"n', "o,p", " q ", "", "\\", "<|endoftext|>"]
    nodes = [{"id": f"n{i} -> x|y", "name": name, "type": name or "t"} for i, name in enumerate(names)]
    edges = [{"source": nodes[i]["id"], "relation": names[i], "target": nodes[-1 - i]["id"]} for i in range(len(names))]
    (tmp_path / "g.json").write_text(json.dumps({"nodes": nodes, "edges": edges}), encoding="utf-8")
    (tmp_path / "q.json").write_text(
        json.dumps([{"id": "q1", "question": "?", "answer": "x", "path": [0], "insufficient": False}]), encoding="utf-8"
    )
    done = run_cli(
        "--graph",
        str(tmp_path / "g.json"),
        "--questions",
        str(tmp_path / "q.json"),
        "--out",
        str(tmp_path / "out"),
        "--formats",
        ",".join(benchmark.FORMATS),
        "--prompt",
        "ru",
    )
    assert (done.returncode, without_read(done.stderr)) == (0, "")
    graph = benchmark.validate_graph(
        json.loads((tmp_path / "g.json").read_text(encoding="utf-8")), "g.json", benchmark.Problems()
    )
    for fmt, (_, parse, *_) in benchmark.FORMATS.items():
        parsed = parse((tmp_path / "out" / f"graph.{fmt}.txt").read_bytes().decode("utf-8"))
        if (
            fmt in ("turtle", "isongraph") or fmt in frameworks.LLAMAINDEX_LAYOUTS or fmt == "langchain"
        ):  # a set, or sorted by ISONGraph; triplets, records: nodes as first shown
            assert benchmark.first_difference(graph, parsed) is None and (
                fmt in ("turtle", "isongraph") or parsed.edges == graph.edges
            ), fmt
        elif fmt in ("graphrag", "lightrag"):  # relationships ranked by degree, as the framework sends them
            assert benchmark.first_difference(graph, parsed) is None and parsed.nodes == graph.nodes, fmt
        else:
            assert parsed == graph, fmt


# ---- bad input: one line on stderr naming the file, the record and the fix; exit 2; nothing written

GRAPH = json.loads((ROOT / "data" / "graph.json").read_text(encoding="utf-8"))
QUESTIONS = json.loads((ROOT / "data" / "questions.json").read_text(encoding="utf-8"))


def edited(data, path, value):
    """A deep copy of data with data[path[0]][path[1]]... set to value (or deleted if value is DELETE)."""
    data = json.loads(json.dumps(data))
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


DELETE = object()

BAD_INPUTS = {
    "missing graph file": (
        None,
        None,
        ["--graph", "nope.json"],
        "nope.json: no such file or folder; pass a readable file, or a framework's store folder (LightRAG's "
        "rag_storage, GraphRAG's output, LlamaIndex's storage) with --graph",
    ),
    "malformed json": (
        '{"nodes": [}',
        None,
        [],
        "graph.json: invalid JSON at line 1 column 12: Expecting value; fix the file",
    ),
    "not utf-8": (
        b'{"nodes": "\xff"}',
        None,
        [],
        "graph.json: the byte at offset 11 is not UTF-8; save the file as UTF-8",
    ),
    "top level not an object": (
        "[]",
        None,
        [],
        'graph.json: expected a JSON object with "nodes" and "edges" lists',
    ),
    "missing field": (
        edited(GRAPH, ["nodes", 3, "name"], DELETE),
        None,
        [],
        "graph.json: nodes[3] has no 'name'; each node needs string fields id, name, type",
    ),
    "non-string field": (
        edited(GRAPH, ["edges", 2, "relation"], 7),
        None,
        [],
        "graph.json: edges[2].relation is 7, expected a string",
    ),
    "node not an object": (  # every problem at once: the node, then each edge and question that named it
        edited(GRAPH, ["nodes", 0], "person_irina"),
        None,
        [],
        "graph.json: nodes[0] is not a JSON object; each node is {'id', 'name', 'type'}\n"
        "error: graph.json: edges[0].source 'person_irina' is not a node id; add that node or fix the edge\n"
        "error: graph.json: edges[1].source 'person_irina' is not a node id; add that node or fix the edge\n"
        "error: questions.json: questions[0].query.start 'person_irina' is not a node id; start the query at a node of "
        "the graph\n"
        "error: 4 problems found; nothing was written",
    ),
    "duplicate node id": (
        edited(GRAPH, ["nodes", 5, "id"], "person_irina"),
        None,
        [],
        "graph.json: nodes[5].id 'person_irina' duplicates nodes[0]; node ids must be unique\n"
        "error: graph.json: edges[3].target 'method_graph' is not a node id; add that node or fix the edge\n"
        "error: graph.json: edges[6].source 'method_graph' is not a node id; add that node or fix the edge\n"
        "error: questions.json: questions[2].answer_id 'method_graph' is not a node id; name the node the gold path "
        "ends at\n"
        "error: 4 problems found; nothing was written",
    ),
    "edge to unknown node": (
        edited(GRAPH, ["edges", 4, "target"], "method_missing"),
        None,
        [],
        "graph.json: edges[4].target 'method_missing' is not a node id; add that node or fix the edge",
    ),
    "empty question list": (
        None,
        [],
        [],
        "questions.json: the list of questions is empty; add at least one, or draw them with --generate-questions N",
    ),
    "huge integer literal": (
        '{"nodes": [], "edges": [], "n": ' + "9" * 5000 + "}",
        None,
        [],
        "graph.json: Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits; fix the "
        "file",
    ),
    "duplicate key": (
        '{"nodes": [], "nodes": [], "edges": []}',
        None,
        [],
        "graph.json: key 'nodes' appears twice in one object; keep one value per key",
    ),
    "lone surrogate": (
        '{"nodes": [{"id": "a", "name": "\\ud800", "type": "t"}], "edges": []}',
        [{"id": "q", "question": "?", "answer": "x", "path": [], "insufficient": False}],
        [],
        "graph.json: nodes[0].name contains the lone surrogate U+D800; fix the string",
    ),
    "path index out of range": (
        None,
        edited(QUESTIONS, [2, "path", 1], 13),
        [],
        "questions.json: questions[2].path[1] = 13 is out of range: the graph has 13 edges, indices 0..12; fix the "
        "path",
    ),
    "path not integers": (
        None,
        edited(QUESTIONS, [0, "path"], [0, True]),
        [],
        "questions.json: questions[0].path must be a list of edge indices (integers) or edge ids, e.g. [0, 3, 6]",
    ),
    "path names an unknown edge id": (
        None,
        edited(QUESTIONS, [0, "path"], [0, "e9"]),
        [],
        "questions.json: questions[0].path[1] = 'e9' is not the id of an edge of the graph; fix the path",
    ),
    "question id with slash": (
        None,
        edited(QUESTIONS, [1, "id"], "q/2"),
        [],
        "questions.json: questions[1].id 'q/2' contains '/', but it becomes part of a file name "
        "(prompt.<format>.<id>.txt); use letters, digits, '_' and '-'",
    ),
    "question id with backslash": (
        None,
        edited(QUESTIONS, [1, "id"], "q\\2"),
        [],
        "questions.json: questions[1].id 'q\\\\2' contains '\\\\', but it becomes part of a file name "
        "(prompt.<format>.<id>.txt); use letters, digits, '_' and '-'",
    ),
    "question id with dots": (
        None,
        edited(QUESTIONS, [1, "id"], "..q2"),
        [],
        "questions.json: questions[1].id '..q2' starts with '.' or contains '..', but it becomes part of a "
        "file name (prompt.<format>.<id>.txt); use letters, digits, '_' and '-'",
    ),
    "question id with control character": (
        None,
        edited(QUESTIONS, [1, "id"], "q\n2"),
        [],
        "questions.json: questions[1].id 'q\\n2' contains '\\n', but it becomes part of a file name "
        "(prompt.<format>.<id>.txt); use letters, digits, '_' and '-'",
    ),
    "duplicate question id": (
        None,
        edited(QUESTIONS, [3, "id"], "q1"),
        [],
        "questions.json: questions[3].id 'q1' duplicates questions[0]; question ids must be unique",
    ),
    "insufficient not boolean": (
        None,
        edited(QUESTIONS, [5, "insufficient"], "yes"),
        [],
        "questions.json: questions[5].insufficient must be true or false",
    ),
    "abstention answer without the flag": (
        None,
        edited(QUESTIONS, [5, "insufficient"], False),
        [],
        "questions.json: questions[5]: answer 'INSUFFICIENT_DATA' and insufficient false disagree; an abstention "
        "question has the one answer INSUFFICIENT_DATA and insufficient true, any other question neither",
    ),
    "query without answer_id": (
        None,
        edited(QUESTIONS, [0, "answer_id"], DELETE),
        [],
        "questions.json: questions[0] has a query but no answer_id; name the node its gold path ends at",
    ),
    "answer_id not a node": (
        None,
        edited(QUESTIONS, [0, "answer_id"], "city_moscow"),
        [],
        "questions.json: questions[0].answer_id 'city_moscow' is not a node id; name the node the gold path ends at",
    ),
    "bad hop direction": (
        None,
        edited(QUESTIONS, [0, "query", "hops", 1, "direction"], "both"),
        [],
        'questions.json: questions[0].query.hops[1].direction is \'both\'; use "out" or "in"',
    ),
    "solver disagrees": (
        None,
        edited(QUESTIONS, [3, "path"], [3, 6, 11]),
        [],
        "questions.json: question q4: the query finds 1 complete path(s), the question lists 1 gold path(s); found but "
        "not listed: [3, 6, 10] (project_orion -USES-> method_graph, method_graph -DEVELOPED_BY-> org_vector, "
        "org_vector "
        "-LOCATED_IN-> city_kazan); listed but not found: [3, 6, 11] (project_orion -USES-> method_graph, method_graph "
        "-DEVELOPED_BY-> org_vector, org_siberia -LOCATED_IN-> city_tomsk); fix the paths or the query",
    ),
    "questions not a list": (
        None,
        {"q1": {}},
        [],
        "questions.json: expected a JSON list of questions",
    ),
    "unknown encoding": (
        None,
        None,
        ["--encoding", "o300k"],
        "unknown name 'o300k' in --encoding; choose from " + ", ".join(tiktoken.list_encoding_names()),
    ),
    "unknown format": (
        None,
        None,
        ["--formats", "json,xml"],
        "unknown name 'xml' in --formats; choose from " + ", ".join(benchmark.FORMATS),
    ),
    "format twice": (
        None,
        None,
        ["--formats", "json,json"],
        "--formats lists 'json' twice: 'json,json'",
    ),
}


def write_input(path, content):
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input(case, tmp_path, monkeypatch, capsys):
    graph, questions, flags, message = BAD_INPUTS[case]
    monkeypatch.chdir(tmp_path)
    write_input(tmp_path / "graph.json", GRAPH if graph is None else graph)
    write_input(tmp_path / "questions.json", QUESTIONS if questions is None else questions)
    argv = ["--graph", "graph.json", "--questions", "questions.json", "--out", "out", *flags]
    assert benchmark.main(argv) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"error: {message}\n")
    assert not (tmp_path / "out").exists()


def test_non_nfc_strings_are_normalized_with_one_warning(tmp_path, capsys):
    graph = edited(edited(GRAPH, ["nodes", 0, "name"], "Ирина\u0306"), ["nodes", 4, "name"], "Пульси\u0306")
    write_input(tmp_path / "g.json", graph)
    assert benchmark.main(["--graph", str(tmp_path / "g.json"), "--out", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert without_read(captured.err) == (
        "warning: 2 string(s) were not in Unicode NFC form and were normalized (the formats are compared in NFC), "
        f"the first: {benchmark.display(tmp_path / 'g.json')}: nodes[0].name 'Ирина\u0306'\n"
    )
    assert "Ирина\u0306" not in (tmp_path / "out" / "graph.json.txt").read_text(encoding="utf-8")
    assert '"name": "Ирин\u04d1"' in (tmp_path / "out" / "graph.json.txt").read_text(encoding="utf-8")  # а + breve = ӑ


def test_normalization_that_makes_two_ids_equal_is_refused(tmp_path, capsys):
    graph = {
        "nodes": [{"id": "\u0439", "name": "a", "type": "t"}, {"id": "\u0438\u0306", "name": "b", "type": "t"}],
        "edges": [],
    }
    write_input(tmp_path / "g.json", graph)
    write_input(tmp_path / "q.json", [])
    argv = [
        "--graph",
        str(tmp_path / "g.json"),
        "--questions",
        str(tmp_path / "q.json"),
        "--out",
        str(tmp_path / "out"),
    ]
    assert benchmark.main(argv) == 2
    err = run_stderr(capsys).splitlines()
    assert err[1] == (
        f"error: {benchmark.display(tmp_path / 'g.json')}: nodes[1].id '\u0439' duplicates nodes[0] after NFC "
        "normalization; "
        "node ids must be unique"
    )
    assert not (tmp_path / "out").exists()


def test_bad_input_in_a_subprocess_has_no_traceback(tmp_path):
    (tmp_path / "graph.json").write_text("{", encoding="utf-8")
    done = run_cli("--graph", "graph.json", "--out", "out", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert (
        done.stderr
        == "error: graph.json: invalid JSON at line 1 column 2: Expecting property name enclosed in double quotes; "
        "fix the file\n"
    )
    assert not (tmp_path / "out").exists()


def test_missing_tiktoken_is_explained():
    code = (
        "import sys; sys.modules['tiktoken'] = None; sys.path.insert(0, sys.argv[1]); import benchmark; "
        "sys.exit(benchmark.main([]))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: " + benchmark.missing_tiktoken(ROOT, sys.executable) + "\n"


def test_missing_tiktoken_points_at_the_venv_of_the_set_up_line(tmp_path):
    assert benchmark.missing_tiktoken(tmp_path, "/usr/bin/python3") == (
        "the tiktoken package is not installed; run: pip install -r requirements.lock.txt"
    )
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()
    assert benchmark.missing_tiktoken(tmp_path, "/usr/bin/python3") == (
        "the tiktoken package is not installed for /usr/bin/python3; run this with "
        f"{benchmark.display(tmp_path / '.venv/bin/python')}, "
        "the venv the set-up line made, or: pip install -r requirements.lock.txt"
    )
    assert benchmark.missing_tiktoken(tmp_path, str(tmp_path / ".venv" / "bin" / "python")).endswith(
        "run: pip install -r requirements.lock.txt"
    )


def test_extra_fields_are_properties_carried_by_every_format(tmp_path, capsys):
    graph = edited(edited(GRAPH, ["nodes", 0, "color"], "red"), ["edges", 0, "weight"], 1)
    write_input(tmp_path / "g.json", graph)
    assert benchmark.main(["--graph", str(tmp_path / "g.json"), "--out", str(tmp_path / "out")]) == 0
    assert run_stderr(capsys) == ""
    assert '"properties": {\n        "color": "red"\n      },' in (tmp_path / "out" / "graph.json.txt").read_text(
        encoding="utf-8"
    )
    assert "> person_irina|LEADS|project_orion|weight=1\n" in (tmp_path / "out" / "graph.dsl.txt").read_text(
        encoding="utf-8"
    )


# ---- publishing: a failed run changes nothing; a new run replaces the previous one's files


def test_failed_run_leaves_previous_outputs_untouched(tmp_path, capsys):
    out = tmp_path / "out"
    assert benchmark.main(["--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert benchmark.main(["--out", str(out), "--encoding", "nope"]) == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_new_run_removes_stale_files_of_the_previous_run_only(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    assert benchmark.main(["--out", str(out)]) == 0
    assert benchmark.main(["--out", str(out), "--formats", "dsl"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        [
            "notes.txt",
            "manifest.json",
            "size_report.json",
            "report.html",
            "graph.dsl.txt",
            *(f"prompt.dsl.q{i}.txt" for i in range(1, 7)),
        ]
    )


def test_unwritable_output_folder(tmp_path, capsys):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert benchmark.main(["--out", str(tmp_path / "file" / "out")]) == 2
    err = run_stderr(capsys)
    assert (
        err == f"error: --out {benchmark.display(tmp_path / 'file' / 'out')}: cannot use it (Not a directory); name "
        "another folder\n"
    )


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda out: out.write_text("x", encoding="utf-8"), "is not a folder; name a folder (it is made if missing)"),
        (
            lambda out: out.symlink_to(out.parent / "nowhere"),
            "is a symlink to nothing (or to itself); point it at a folder, or name another --out",
        ),
        (
            lambda out: out.symlink_to(out),
            "is a symlink to nothing (or to itself); point it at a folder, or name another --out",
        ),
    ],
)
def test_an_out_that_is_no_folder_is_one_line(tmp_path, capsys, make, words):
    out = tmp_path / "out"
    make(out)
    assert benchmark.main(["--out", str(out)]) == 2
    assert run_stderr(capsys) == f"error: --out {benchmark.display(out)} {words}\n"


def readme_commands() -> list[str]:
    """The example commands of the README and docs/ that need no server or key, continuation lines joined."""
    lines = [
        line
        for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        for line in page.read_text(encoding="utf-8").splitlines()
    ]
    commands, k = [], 0
    while k < len(lines):
        line = lines[k].strip()
        if line.startswith(("python benchmark.py", "python bench/synth_kg.py")):
            while line.endswith("\\"):
                k += 1
                line = line[:-1].rstrip() + " " + lines[k].strip()
            command = line.split("  #")[0].strip()
            if "--base-url" not in command and "OPENAI" not in command and "--model gpt" not in command:
                commands.append(command)
        k += 1
    return commands


def test_every_example_command_of_the_readme_that_needs_no_server_works(tmp_path):
    commands = readme_commands()
    assert len(commands) >= 6
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # the quick starts' store and log, as a clone has them
    for command in commands:
        argv = command.split()[1:]
        argv[0] = str(ROOT / argv[0])
        if argv[0].endswith("benchmark.py") and "--out" not in argv:
            argv += ["--out", "outputs"]  # in the temp folder, never the repo's outputs/
        if argv[0].endswith("benchmark.py"):
            argv += ["--no-write-prompts"] if "--write-prompts" not in argv else []
        done = subprocess.run([sys.executable, *argv], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (command, done.stderr)


@pytest.mark.parametrize(
    "change, sound",
    [
        (lambda d: None, True),
        (lambda d: d["nodes"][0].update(name="e"), True),
        (
            lambda d: d["nodes"][1].update(name="\u0301 starts with a combining mark"),
            True,
        ),  # NFC alone; a newline never composes
        (
            lambda d: d["nodes"][1].update(name="Cafe\u0301"),
            False,
        ),  # not NFC: normalized, with a warning, by the checked path
        (lambda d: d["nodes"][1].update(name="\ud800"), False),
        (lambda d: d["nodes"][1].update(name=7), False),
        (lambda d: d["nodes"].append(dict(d["nodes"][0])), False),  # a duplicate id
        (lambda d: d["edges"][0].update(target="nowhere"), False),
        (lambda d: d["edges"][0].pop("relation"), False),
        (lambda d: d["edges"].append("not an object"), False),
        (lambda d: (d["nodes"][0].update(source="x"), d["edges"][0].update(weight=1)), True),  # properties
        (lambda d: d["nodes"][0].update(aliases=["a", "b"]), False),  # a property that is not a scalar
        (lambda d: d["nodes"][0].update(note="Cafe\u0301"), False),  # a property not in NFC
        (lambda d: d["edges"][0].update(**{"kind": "x"}), False),  # a property name a format uses
        (
            lambda d: d["edges"][0].update(since=None, id="e1"),
            True,
        ),  # a null is left out; an edge's id is not a property
    ],
)
def test_the_fast_check_of_a_graph_accepts_only_what_the_record_by_record_check_accepts_unchanged(change, sound):
    data = json.loads((ROOT / "data" / "graph.json").read_text(encoding="utf-8"))
    change(data)
    fast = benchmark._sound_graph(data, "g")
    problems = benchmark.Problems()
    try:
        checked = benchmark._checked_graph(json.loads(json.dumps(data)), "g", problems)
    except benchmark.BenchmarkError:
        checked = None
    assert (fast is not None) == sound
    if sound:  # the same graph, and no problem
        assert (
            fast == checked
            and benchmark.first_difference(fast, checked) is None
            and not problems.lines
            and not problems.not_nfc
        )
    else:
        assert checked is None or problems.lines or problems.not_nfc


def test_fields_beyond_a_records_own_are_its_properties_sorted_by_name():
    data = json.loads((ROOT / "data" / "graph.json").read_text(encoding="utf-8"))
    data["nodes"][0].update(source="x", founded=1969, properties={"alive": True})
    data["edges"][1].update(type="y", weight=0.5, id="e2")
    graph = benchmark._sound_graph(data, "g")
    assert graph.node_props[0] == (("alive", True), ("founded", 1969), ("source", "x")) and graph.node_props[1] == ()
    # "type" is not an edge's field
    assert graph.edge_props[1] == (("type", "y"), ("weight", 0.5)) and graph.edge_props[0] == ()


def test_the_installed_layout_has_no_top_level_module_runs_offline_and_writes_in_the_working_folder(tmp_path):
    """`pip install .` put benchmark.py in site-packages as a top-level module, a name the package index gives to an
    unrelated package; it ships the script inside the package (_article.py, a link to it here), beside the package's
    data. Laid out so here (the links copied as files, as a wheel holds them), with no TIKTOKEN_CACHE_DIR, the
    installed command runs the article's measurement to the same bytes and writes outputs/ where it is run."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py-modules" not in config["tool"]["setuptools"]
    assert (ROOT / "graphrag_format_benchmark" / "_article.py").resolve() == (ROOT / "benchmark.py").resolve()
    site = tmp_path / "site-packages"
    shutil.copytree(
        ROOT / "graphrag_format_benchmark",
        site / "graphrag_format_benchmark",
        symlinks=False,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    assert sorted(p.name for p in site.iterdir()) == ["graphrag_format_benchmark"]
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "PYTHONPATH")}
    command = "import sys; from graphrag_format_benchmark.cli import command; sys.exit(command())"
    done = subprocess.run(
        [sys.executable, "-c", command, "--encoding", "o200k_base"],
        cwd=work,
        env={**env, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert not (site / "graphrag_format_benchmark" / "outputs").exists() and "benchmark" not in done.stderr
    for name in ("graph.json.txt", "graph.dsl.txt", "prompt.json.q1.txt"):
        assert (work / "outputs" / name).read_bytes() == (ROOT / "tests" / "golden" / "article" / name).read_bytes()
    shown = subprocess.run(
        [sys.executable, "-c", "import benchmark"],
        cwd=work,
        env={**env, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
    )
    assert "No module named 'benchmark'" in shown.stderr  # nothing of ours under that name


def test_in_a_clone_the_script_and_the_packages_copy_are_one_module():
    from graphrag_format_benchmark import _article

    assert _article is benchmark and benchmark.FORMATS is _article.FORMATS


def test_every_file_of_the_package_that_is_not_python_ships_as_package_data():
    """`pip install .` copies only the files pyproject.toml's package-data names: a page template or a data file left
    out would be missing from the installed command alone."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["graphrag_format_benchmark"]
    package = ROOT / "graphrag_format_benchmark"
    files = [
        p.relative_to(package).as_posix()
        for p in package.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    assert "report_template.html" in files
    assert [f for f in files if not any(fnmatch.fnmatch(f, pattern) for pattern in patterns)] == []


def test_version_prints_the_name_and_the_version_of_pyproject(tmp_path):
    done = run_cli("--version", cwd=tmp_path)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert (done.returncode, done.stdout, done.stderr) == (0, f"graphrag-format-benchmark {version}\n", "")
    assert version == "2026.12.2"
    assert list(tmp_path.iterdir()) == []
