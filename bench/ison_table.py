"""ISON's published knowledge-graph table beside ours: tokens per format on the kinds of graphs a GraphRAG engineer
sends, counted with two tokenizers, the saving against json, and the control solver's score (issue #57).

    $ python bench/ison_table.py --fb15k ../shared/datasets/fb15k237/graph.json

For each graph (the article's, whole; FB15k-237 neighbourhoods, one per generated question, --context khop; the
medium LightRAG store of tests/golden/frameworks, whole) it runs the tool once (benchmark.py --model solver
--write-prompts --prompt en, both shipped encodings) and reads what it wrote: each prompt's graph text, cut out of the
prompt at the template's fixed parts, is counted with o200k_base and cl100k_base (the mean over the prompts), and the
solver's answer and path rates come from results.json. Two texts that are no format of the tool are made from each
json prompt's graph: JSON a record a line, as ISON's page shows its baseline (`{"id": 1, "type": "person", ...}`
inside an indented nodes and edges list), and isongraph without its first line (the comment that says how to read a
reference: ISON's figures carry none). Then ISON's own example graph (three people, two KNOWS edges), as its page
prints it and as the libraries write it. Output: Markdown on stdout, the same on every run; the runs' folders are
temporary.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import benchmark  # noqa: E402
import graphrag_format_benchmark  # noqa: E402

graphrag_format_benchmark.join_registries()  # serialize_checked below writes the package's formats (ison, isongraph)

ENCODINGS = ("o200k_base", "cl100k_base")
FORMATS = ("json", "json_compact", "yaml", "toon", "turtle", "tsv", "ison", "isongraph")
GRAPH_LINE, QUESTION_LINE = "\n\nGRAPH\n", "\n\nQUESTION\n"  # the en template's lines around {graph}
IDS = ("original", "short")  # every run also shows its graphs with --ids short: n1, n2... for ids
RECORD_LINES, NO_NOTE = "json, a record a line (ISON's baseline)", "isongraph without the note line"

# https://graph.ison.dev/benchmark.html, "Knowledge Graph Benchmark" (100 questions, 7 datasets, o200k_base): format
# -> (average tokens, accuracy); its saving is against JSON's 5,406
PUBLISHED = {
    "isongraph": (1698, 0.900),
    "ison": (1976, 0.880),
    "json_compact": (2893, 0.880),
    "toon": (2934, 0.850),
    "json": (5406, 0.870),
    "turtle": (4166, 0.580),
    "yaml": (4891, 0.820),
    "tsv": (2156, 0.540),  # their CSV
}

# ISON's example graph, as its page prints the JSON (integer ids, a record a line)
EXAMPLE_JSON = """{
  "nodes": [
    {"id": 1, "type": "person", "name": "Alice", "age": 30},
    {"id": 2, "type": "person", "name": "Bob", "age": 25},
    {"id": 3, "type": "person", "name": "Carol", "age": 28}
  ],
  "edges": [
    {"source": 1, "target": 2, "relation": "KNOWS", "since": 2020},
    {"source": 2, "target": 3, "relation": "KNOWS", "since": 2021}
  ]
}"""


def run(out: Path, fmts: tuple[str, ...], *args: str) -> None:
    """One run of the tool, its outputs in out."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmark.py"), *args, "--prompt", "en", "--model", "solver", "--write-prompts"]
        + ["--encoding", ",".join(ENCODINGS), "--ids", ",".join(IDS), "--formats", ",".join(fmts), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmark.py {' '.join(args)}: exit {done.returncode}\n{done.stderr}")


def graph_texts(out: Path) -> dict[tuple[str, str], list[str]]:
    """(ids, format) -> the graph text of each prompt the run wrote (prompt.SIZE.IDS.P.MODE.FORMAT.QUESTION.txt), by
    file name: what the en template puts between its GRAPH line and the blank line before QUESTION (its head says
    directed or undirected, so the fixed parts are found by those lines)."""
    texts: dict[tuple[str, str], list[str]] = {}
    for path in sorted(out.glob("prompt.*.txt")):
        prompt, parts = path.read_text(encoding="utf-8"), path.name.split(".")
        start = prompt.index(GRAPH_LINE) + len(GRAPH_LINE)
        texts.setdefault((parts[2], parts[-3]), []).append(prompt[start : prompt.rindex(QUESTION_LINE)])
    return texts


def record_lines(graph: benchmark.Graph) -> str:
    """JSON as ISON's page prints its baseline: a record a line, its keys id, type, name (source, target, relation)
    and then its properties."""
    nodes = [{"id": n.id, "type": n.type, "name": n.name, **dict(p)} for n, p in graph.nodes_with_props()]
    edges = [
        {"source": e.source, "target": e.target, "relation": e.relation, **dict(p)} for e, p in graph.edges_with_props()
    ]
    lines = {
        key: ",\n    ".join(json.dumps(r, ensure_ascii=False) for r in records)
        for key, records in (("nodes", nodes), ("edges", edges))
    }
    return '{\n  "nodes": [\n    ' + lines["nodes"] + '\n  ],\n  "edges": [\n    ' + lines["edges"] + "\n  ]\n}"


Tokens = dict[tuple[str, str], dict[str, float]]  # (ids, row) -> encoding -> mean tokens of the row's graph texts


def measured(out: Path) -> tuple[Tokens, dict[tuple[str, str], tuple[float, float]], int]:
    """(tokens, (ids, format) -> the solver's (answer, path exact) rates, prompts of each row)."""
    texts = graph_texts(out)
    for ids in IDS:
        texts[ids, RECORD_LINES] = [record_lines(benchmark.parse_json(t)) for t in texts[ids, "json"]]
        texts[ids, NO_NOTE] = [t.split("\n", 1)[1] for t in texts[ids, "isongraph"]]
    tokens = {
        key: {name: sum(map(tokenizer.count, found)) / len(found) for name, tokenizer in TOKENIZERS.items()}
        for key, found in texts.items()
    }
    aggregates = json.loads((out / "results.json").read_text(encoding="utf-8"))["aggregates"]
    solver = {
        (e["ids"], e["format"]): (e["answer_correct"]["rate"], e["path_exact"]["rate"])
        for e in aggregates
        if e["encoding"] == ENCODINGS[0]
    }
    return tokens, solver, len(texts[IDS[0], "json"])


def saving(tokens: float, baseline: float) -> str:
    return f"{1 - tokens / baseline:.1%}"


def graph_table(title: str, tokens: Tokens, solver: dict, prompts: int, order: tuple[str, ...]) -> list[str]:
    """One graph's rows: each format's mean tokens by each encoding, its saving against json, the solver's score;
    the original ids, then --ids short (n1, n2...)."""
    lines = [
        f"**{title}** ({prompts} prompts a row)",
        "",
        "| format | ids | " + " | ".join(f"{e} tokens | vs json" for e in ENCODINGS) + " | solver: answer, path |",
        "|---|---|" + "---:|---:|" * len(ENCODINGS) + "---|",
    ]
    for ids in IDS:
        for row in (*order, RECORD_LINES, NO_NOTE):
            counts, base = tokens[ids, row], tokens[ids, "json"]
            score = solver.get((ids, row))
            lines.append(
                f"| {row} | {ids} | "
                + " | ".join(f"{counts[e]:,.0f} | {saving(counts[e], base[e])}" for e in ENCODINGS)
                + f" | {f'{score[0]:.2f}, {score[1]:.2f}' if score else '(no format of the tool)'} |"
            )
    return [*lines, ""]


def example_table() -> list[str]:
    """ISON's example graph: its page's JSON, the libraries' own texts (integer ids), and our formats (string ids)."""
    import ison_parser
    from ison_graph import ISONGraph

    built = ISONGraph()
    for i, (name, age) in enumerate((("Alice", 30), ("Bob", 25), ("Carol", 28)), 1):
        built.add_node("person", i, name=name, age=age)
    built.add_edge("KNOWS", ("person", 1), ("person", 2), since=2020)
    built.add_edge("KNOWS", ("person", 2), ("person", 3), since=2021)
    data = json.loads(EXAMPLE_JSON)
    graph = benchmark.Graph(
        tuple(benchmark.Node(str(n["id"]), n["name"], n["type"]) for n in data["nodes"]),
        tuple(benchmark.Edge(str(e["source"]), e["relation"], str(e["target"])) for e in data["edges"]),
        (),
        tuple((("age", n["age"]),) for n in data["nodes"]),
        tuple((("since", e["since"]),) for e in data["edges"]),
    )
    texts = {
        "JSON as ISON's page prints it (integer ids)": EXAMPLE_JSON,
        "ISONGraph 1.4.0's to_ison (integer ids)": built.to_ison(),
        "ison-py 1.2.0's dumps of the page's JSON (from_dict)": ison_parser.dumps(ison_parser.from_dict(data)),
        **{
            f"our {fmt} (string ids)": benchmark.serialize_checked(fmt, graph)
            for fmt in ("json", "json_compact", "ison", "isongraph")
        },
    }
    base = {e: TOKENIZERS[e].count(EXAMPLE_JSON) for e in ENCODINGS}
    lines = [
        "**ISON's example graph** (3 people, 2 KNOWS edges, an age and a since)",
        "",
        "| text | " + " | ".join(f"{e} tokens | vs the page's JSON" for e in ENCODINGS) + " |",
        "|---|" + "---:|---:|" * len(ENCODINGS),
    ]
    for name, text in texts.items():
        lines.append(
            f"| {name} | "
            + " | ".join(
                f"{TOKENIZERS[e].count(text):,} | {saving(TOKENIZERS[e].count(text), base[e])}" for e in ENCODINGS
            )
            + " |"
        )
    return [*lines, ""]


def published_table(ours: dict[str, Tokens]) -> list[str]:
    """ISON's published figures beside ours (o200k_base, the original ids): each format's saving against our json and
    against JSON a record a line, the baseline ISON's page shows."""
    titles = list(ours)
    lines = [
        "**Beside ISON's published table** (o200k_base; theirs: 7 datasets it does not publish; ours: the saving "
        "against our json / against JSON a record a line, ISON's baseline)",
        "",
        "| format | published tokens | published saving | published accuracy | " + " | ".join(titles) + " |",
        "|---|---:|---:|---:|" + "---:|" * len(titles),
    ]
    e, ids = ENCODINGS[0], IDS[0]
    for fmt, (tokens, accuracy) in PUBLISHED.items():
        cells = [
            f"{saving(ours[t][ids, fmt][e], ours[t][ids, 'json'][e])} / "
            f"{saving(ours[t][ids, fmt][e], ours[t][ids, RECORD_LINES][e])}"
            for t in titles
        ]
        lines.append(
            f"| {fmt} | {tokens:,} | {1 - tokens / PUBLISHED['json'][0]:.1%} | {accuracy:.0%} | "
            + " | ".join(cells)
            + " |"
        )
    return [*lines, ""]


TOKENIZERS = {name: benchmark.load_tokenizer(name) for name in ENCODINGS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fb15k", type=Path, default=ROOT.parent / "shared" / "datasets" / "fb15k237" / "graph.json")
    parser.add_argument("--questions", type=int, default=100, help="FB15k-237 neighbourhoods (default: 100)")
    args = parser.parse_args(argv)
    store = ROOT / "tests" / "golden" / "frameworks" / "medium" / "store" / "lightrag"
    graphs = {  # title -> (formats, the run's own flags)
        "the article's graph (14 nodes, 13 edges, whole)": (FORMATS, ()),
        f"FB15k-237 neighbourhoods ({args.questions} questions, --context khop)": (
            FORMATS,
            ("--graph", str(args.fb15k), "--generate-questions", str(args.questions), "--context", "khop"),
        ),
        "LightRAG's store (tests/golden/frameworks/medium, 100 entities, 98 relations, whole)": (
            (*FORMATS, "lightrag"),
            ("--graph", str(store), "--generate-questions", "20"),
        ),
    }
    out_lines: list[str] = []
    ours = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, (title, (fmts, flags)) in enumerate(graphs.items()):
            run(Path(tmp) / str(k), fmts, *flags)
            tokens, solver, prompts = measured(Path(tmp) / str(k))
            ours[title.split(" (")[0]] = tokens
            out_lines += graph_table(title, tokens, solver, prompts, fmts)
    print("\n".join([*published_table(ours), *out_lines, *example_table()]).rstrip("\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
