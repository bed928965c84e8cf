"""Speed of the experiment matrix against its floor: a fresh process that tokenizes each distinct graph text once.

    $ python bench/matrix_speed.py [--rounds 3] [-- extra benchmark.py flags]

Runs `benchmark.py --sizes small,medium,large --permutations 5 --budget 8000` (context window 128000)
into a temp folder, then rebuilds every prompt of its size_report.json from the written artifacts
(variant graph, questions, edge order, edges included), checks each one's SHA-256 against the row, and
keeps each distinct graph text (by graph_sha256) in a file. The floor is the least work the run must do:
a fresh Python process that loads the encoding and tokenizes each distinct graph text once. Rounds
alternate the run and the floor so that machine noise hits both alike; each round's ratio, their median
and range, and the run's peak memory are printed. Beside it, labelled, the cost of the old method:
tokenizing every distinct prompt whole, in this process.
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
from graphrag_format_benchmark import inputs  # noqa: E402
from graphrag_format_benchmark.variants import contexts  # noqa: E402

MATRIX = ["--sizes", "small,medium,large", "--permutations", "5", "--budget", "8000", "--context-window", "128000"]


def rebuild_prompts(out: Path) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """encoding -> prompt SHA-256 -> prompt text, and encoding -> graph SHA-256 -> graph text, rebuilt from the
    artifacts alone."""
    rows = json.loads((out / "size_report.json").read_text(encoding="utf-8"))
    cache: dict = {}

    def load(name: str):
        if name not in cache:
            cache[name] = json.loads((out / name).read_text(encoding="utf-8"))
        return cache[name]

    prompts: dict[str, dict[str, str]] = {}
    graphs: dict[str, dict[str, str]] = {}
    texts: dict[tuple, str] = {}
    graphs_read: dict[str, benchmark.Graph] = {}
    # --prompt ru, en (a file: not here)
    template = inputs.load_template(load("manifest.json")["config"]["prompt"]["template"])
    for r in rows:
        stem = f"{r['size']}.{r['ids']}"
        if stem not in graphs_read:
            graphs_read[stem] = benchmark.validate_graph(load(f"graph.{stem}.json"), stem, benchmark.Problems())
        graph = graphs_read[stem]
        questions = {q["id"]: q for q in load(f"questions.{stem}.json")}
        order = load(f"order.{r['size']}.p{r['permutation']}.json")
        key = (stem, r["permutation"], r["edges_included"], r["mode"], r["format"])
        if key not in texts:  # every question of a mode A cell, and of a pack with the same cut, shows the same text
            shown = graph.pick(order[: r["edges_included"]])  # properties kept
            texts[key] = benchmark.serialized(r["format"], shown if r["mode"] == "A" else contexts.subgraph(shown))
        text = texts[key]
        prompt = template.render(r["format"], text, questions[r["question_id"]]["question"])
        if benchmark.sha256_hex(prompt) != r["prompt_sha256"] or benchmark.sha256_hex(text) != r["graph_sha256"]:
            raise SystemExit(
                f"rebuilt prompt differs from the run's: {r['size']} {r['ids']} p{r['permutation']} {r['mode']} "
                f"{r['format']} {r['question_id']}"
            )
        prompts.setdefault(r["encoding"], {})[r["prompt_sha256"]] = prompt
        graphs.setdefault(r["encoding"], {})[r["graph_sha256"]] = text
    return prompts, graphs


FLOOR = """
import sys, time
sys.path.insert(0, sys.argv[1])
import benchmark
for encoding, folder in zip(sys.argv[2::2], sys.argv[3::2]):
    tokenizer = benchmark.load_tokenizer(encoding)
    for path in sorted(__import__("pathlib").Path(folder).iterdir()):
        tokenizer.count(path.read_text(encoding="utf-8"))
"""


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="more benchmark.py flags, after --")
    args = parser.parse_args()
    run_times, floor_times, whole_times = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cmd = [sys.executable, str(ROOT / "benchmark.py"), *MATRIX, *args.extra, "--out", str(out)]
        prompts = floor = None
        for round_ in range(args.rounds):
            first, second = ("run", "floor") if round_ % 2 == 0 else ("floor", "run")
            for what in (first, second):
                if what == "run":
                    run_times.append(timed(cmd))
                    if prompts is None:
                        prompts, graphs = rebuild_prompts(out)
                        floor = [sys.executable, "-c", FLOOR, str(ROOT)]
                        for encoding, texts in graphs.items():
                            folder = Path(tmp) / f"graphs-{encoding}"
                            folder.mkdir()
                            for sha, text in texts.items():
                                (folder / sha).write_text(text, encoding="utf-8")
                            floor += [encoding, str(folder)]
                        tokenizers = {name: benchmark.load_tokenizer(name) for name in prompts}
                        graph_tokens = sum(
                            tokenizers[name].count(text) for name, texts in graphs.items() for text in texts.values()
                        )
                elif floor is not None:
                    floor_times.append(timed(floor))
            start = time.perf_counter()
            total = sum(tokenizers[name].count(text) for name, texts in prompts.items() for text in texts.values())
            whole_times.append(time.perf_counter() - start)
            ratio = f"{run_times[-1] / floor_times[-1]:.2f}" if floor_times else "-"
            print(
                f"round {round_ + 1}: run {run_times[-1]:.2f} s, floor {floor_times[-1] if floor_times else 0:.2f} s, "
                f"ratio {ratio}",
                file=sys.stderr,
            )
        if len(floor_times) < len(run_times):  # the first round's floor could not run before the run made the texts
            floor_times.append(timed(floor))
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    ratios = [r / f for r, f in zip(run_times, floor_times)]
    distinct = sum(map(len, graphs.values()))
    print(f"command: benchmark.py {' '.join(MATRIX + args.extra)}")
    print(
        f"distinct prompts: {sum(map(len, prompts.values()))}, {total:,} tokens; every one rebuilt from the artifacts, "
        "SHA-256 equal"
    )
    print(f"distinct graph texts: {distinct}, {graph_tokens:,} tokens")
    print(
        f"run:    median {statistics.median(run_times):.2f} s (range {min(run_times):.2f}-{max(run_times):.2f}) over "
        f"{args.rounds} rounds"
    )
    print(
        f"floor:  median {statistics.median(floor_times):.2f} s (range {min(floor_times):.2f}-{max(floor_times):.2f}): "
        "a fresh process "
        "that loads the encoding and tokenizes each distinct graph text once"
    )
    print(f"ratio run / floor: median {statistics.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
    print(
        f"beside it (the old method's cost, not a floor): tokenizing every distinct prompt whole in this process, "
        f"median {statistics.median(whole_times):.2f} s; run / that "
        f"{statistics.median(run_times) / statistics.median(whole_times):.2f}"
    )
    print(f"peak memory of the run: {peak_mib:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
