"""Are --pseudonymize's names nobody's? Measured on real graphs, by real runs of benchmark.py.

    $ python bench/pseudonym_check.py                                  # the article's graph and FB15k-237 if found
    $ python bench/pseudonym_check.py --graph my_graph.json --json     # any graph file the tool reads

Each graph is run with `--pseudonymize --sizes small,medium` (40 generated questions, or the article's own) and
every input entity's real name is paired with its pseudonym (`graph.<size>.original.json` against
`graph.<size>.pseudonyms.json`). Figures, the goals of #44 beside them:

- another real name: pseudonyms that are (case aside) the name of another entity of the same graph: a swap, a
  counterfactual, not a pseudonym (goal <= 1%);
- real name + number: pseudonyms that are a real name of the graph with a number added (goal 0);
- kept as is: names left unchanged on purpose (a value of a small closed class: a month, a gender), said in the docs;
- same shape: the pseudonym has the real name's number of words and the class of each word (name_shape: function
  word, title, ordinal, year, code, other) (goal >= 90%);
- cross-graph AUC: the graph's entities split in two halves by a hash of their id, each half (with the edges inside
  it) run on its own, so that neither half's pseudonyms are made of the other's words; a naive Bayes classifier of
  character 1-4-grams trained on one half's real names against its pseudonyms and scored on the other's, both ways
  (goal |AUC - 0.5| <= 0.10; graphs of 400 entities or more);
- changed between sizes: entities whose pseudonym at medium is not the one at small (goal 0).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from realism import auc, classes, naive_bayes_scores  # noqa: E402

import synth_kg  # noqa: E402

FB15K = ROOT.parent / "shared" / "datasets" / "fb15k237" / "graph.json"


def run(graph: dict, folder: Path, questions: Path | None = None) -> tuple[list[tuple[str, str]], int, str]:
    """--pseudonymize at small and medium: (real name, pseudonym) per input entity, entities renamed differently
    between sizes, the run's stderr."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "graph.json").write_text(json.dumps(graph, ensure_ascii=False), encoding="utf-8")
    asked = ["--questions", str(questions)] if questions else ["--generate-questions", "40", "--skip-invalid-questions"]
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmark.py"),
            "--graph",
            str(folder / "graph.json"),
            *asked,
            "--sizes",
            "small,medium",
            "--formats",
            "json",
            "--pseudonymize",
            "--no-write-prompts",
            "--out",
            str(folder / "out"),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmark.py failed: {done.stderr[-2000:]}")
    real = {n["id"]: n["name"] for n in graph["nodes"]}
    named: dict[str, set[str]] = {}
    for size in ("small", "medium"):
        before = json.loads((folder / "out" / f"graph.{size}.original.json").read_text(encoding="utf-8"))["nodes"]
        after = json.loads((folder / "out" / f"graph.{size}.pseudonyms.json").read_text(encoding="utf-8"))["nodes"]
        for a, b in zip(before, after):
            if a["id"] in real:
                named.setdefault(a["id"], set()).add(b["name"])
    pairs = [(real[i], min(names)) for i, names in named.items()]
    return pairs, sum(len(names) > 1 for names in named.values()), done.stderr


def figures(pairs: list[tuple[str, str]], all_names: list[str]) -> dict:
    names = {n.casefold() for n in all_names}
    other = [(a, b) for a, b in pairs if b.casefold() in names and b != a]
    numbered = [
        (a, b)
        for a, b in pairs
        if " " in b
        and b.rsplit(" ", 1)[1].isdigit()
        and b.rsplit(" ", 1)[0].casefold() in names
        and not a.rsplit(" ", 1)[-1].isdigit()
    ]
    kept = [(a, b) for a, b in pairs if a == b]
    shaped = sum(len(a.split()) == len(b.split()) and classes(a) == classes(b) for a, b in pairs)
    return {
        "entities": len(pairs),
        "another_real_name": len(other),
        "another_real_name_share": round(len(other) / max(len(pairs), 1), 4),
        "real_name_with_number": len(numbered),
        "kept_as_is": len(kept),
        "same_shape": round(shaped / max(len(pairs), 1), 3),
        "examples": {"another real name": other[:6], "with a number": numbered[:6], "kept": kept[:8]},
    }


def halves_auc(graph: dict, folder: Path) -> float | None:
    """The cross-graph adversary on two disjoint halves of the graph, each run on its own (see the module's doc)."""
    if len(graph["nodes"]) < 400:
        return None
    half = {n["id"]: hashlib.sha256(n["id"].encode()).digest()[0] % 2 for n in graph["nodes"]}
    sides = []
    for k in (0, 1):
        nodes = [n for n in graph["nodes"] if half[n["id"]] == k]
        edges = [e for e in graph["edges"] if half[e["source"]] == k and half[e["target"]] == k]
        linked = {e["source"] for e in edges} | {e["target"] for e in edges}
        pairs, _, _ = run({"nodes": [n for n in nodes if n["id"] in linked], "edges": edges}, folder / f"half{k}")
        sides.append(([a for a, _ in pairs], [b for _, b in pairs]))

    def one_way(train, test):
        scores = naive_bayes_scores([(n, 0) for n in train[0]] + [(n, 1) for n in train[1]], test[0] + test[1])
        return auc(scores, [0] * len(test[0]) + [1] * len(test[1]))

    return round((one_way(sides[0], sides[1]) + one_way(sides[1], sides[0])) / 2, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graph", action="append", help="a graph file (JSON with nodes and edges); may be given again")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    graphs = [(Path(g).name, Path(g), None) for g in args.graph or []] or [
        ("the article's (14 nodes)", ROOT / "data" / "graph.json", ROOT / "data" / "questions.json"),
        ("people KG (untyped, lowercase, Faker's real names; synth_kg.py --people 400)", None, None),
        *([("FB15k-237 (10,318 nodes)", FB15K, None)] if FB15K.exists() else []),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (label, path, questions) in enumerate(graphs):
            graph = (
                json.loads(path.read_text(encoding="utf-8")) if path else synth_kg.people_graph(400, random.Random(7))
            )
            pairs, changed, stderr = run(graph, Path(tmp) / f"g{k}", questions)
            row = {
                "graph": label,
                **figures(pairs, [n["name"] for n in graph["nodes"]]),
                "changed_between_sizes": changed,
                "cross_graph_auc": halves_auc(graph, Path(tmp) / f"g{k}"),
                "said": [line.split(": ", 2)[-1] for line in stderr.splitlines() if "--pseudonymize" in line],
            }
            rows.append(row)
            print(f"{label}: done", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return
    print(
        "| graph | entities | another real name of the graph (goal <= 1%) | a real name + number (goal 0) | kept as is "
        "| "
        "same shape (goal >= 0.90) | cross-graph AUC (goal 0.40-0.60) | changed between sizes (goal 0) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        auc_text = "(under 400 entities)" if r["cross_graph_auc"] is None else f"{r['cross_graph_auc']:.2f}"
        print(
            f"| {r['graph']} | {r['entities']:,} | {r['another_real_name']:,} "
            f"({100 * r['another_real_name_share']:.1f}%) | "
            f"{r['real_name_with_number']} | {r['kept_as_is']} | {r['same_shape']:.2f} | {auc_text} | "
            f"{r['changed_between_sizes']} |"
        )
    for r in rows:
        for what, examples in r["examples"].items():
            if examples:
                print(f"- {r['graph']}, {what}: " + ", ".join(f"{a!r} -> {b!r}" for a, b in examples))
        for line in r["said"]:
            print(f"- {r['graph']} said: {line}")


if __name__ == "__main__":
    main()
