"""Speed of the experiment matrix against its floor: tokenizing each distinct prompt text of the run once.

    $ python bench/matrix_speed.py [--rounds 3] [-- extra benchmark.py flags]

Runs `benchmark.py --sizes small,medium,large --permutations 5 --budget 8000` (context window 128000)
into a temp folder, then rebuilds every prompt of its size_report.json from the written artifacts
(variant graph, questions, edge order, edges included), checks each one's SHA-256 against the row,
and times tokenizing each distinct prompt text once with the same encoding. Rounds alternate the two
so that machine noise hits both alike; the medians, their ratio and the run's peak memory are printed.
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import benchmark  # noqa: E402

MATRIX = ["--sizes", "small,medium,large", "--permutations", "5", "--budget", "8000", "--context-window", "128000"]


def rebuild_prompts(out: Path) -> dict[str, dict[str, str]]:
    """encoding -> prompt SHA-256 -> prompt text, rebuilt from the artifacts alone."""
    rows = json.loads((out / "size_report.json").read_text(encoding="utf-8"))
    cache: dict = {}

    def load(name: str):
        if name not in cache:
            cache[name] = json.loads((out / name).read_text(encoding="utf-8"))
        return cache[name]

    prompts: dict[str, dict[str, str]] = {}
    for r in rows:
        stem = f"{r['size']}.{r['ids']}"
        graph = benchmark.validate_graph(load(f"graph.{stem}.json"), stem, benchmark.Problems())
        questions = {q["id"]: q for q in load(f"questions.{stem}.json")}
        order = load(f"order.{r['size']}.p{r['permutation']}.json")
        edges = tuple(graph.edges[i] for i in order)[: r["edges_included"]]
        text = benchmark.serialized(r["format"], benchmark.subgraph(benchmark.Graph(graph.nodes, edges)))
        prompt = benchmark.ARTICLE_TEMPLATE.render(r["format"], text, questions[r["question_id"]]["question"])
        if benchmark.sha256_hex(prompt) != r["prompt_sha256"]:
            raise SystemExit(f"rebuilt prompt differs from the run's: {r['size']} {r['ids']} p{r['permutation']} {r['mode']} {r['format']} {r['question_id']}")
        prompts.setdefault(r["encoding"], {})[r["prompt_sha256"]] = prompt
    return prompts


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="more benchmark.py flags, after --")
    args = parser.parse_args()
    run_times, token_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cmd = [sys.executable, str(ROOT / "benchmark.py"), *MATRIX, *args.extra, "--out", str(out)]
        prompts = None
        for _ in range(args.rounds):
            start = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            run_times.append(time.perf_counter() - start)
            if prompts is None:
                prompts = rebuild_prompts(out)
                tokenizers = {name: benchmark.load_tokenizer(name) for name in prompts}
            start = time.perf_counter()
            total = sum(tokenizers[name].count(text) for name, texts in prompts.items() for text in texts.values())
            token_times.append(time.perf_counter() - start)
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    run, floor = statistics.median(run_times), statistics.median(token_times)
    print(f"command: benchmark.py {' '.join(MATRIX + args.extra)}")
    print(f"distinct prompts: {sum(map(len, prompts.values()))}, {total:,} tokens; every one rebuilt from the artifacts, SHA-256 equal")
    print(f"run:                 median {run:.2f} s over {args.rounds} rounds")
    print(f"tokenize each once:  median {floor:.2f} s over {args.rounds} rounds")
    print(f"ratio (run / tokenize once): {run / floor:.2f}")
    print(f"peak memory of the run: {peak_mib:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
