"""Scale on knowledge-graph-sized inputs, against the least work a run must do, side by side.

    $ python bench/scale.py --rounds 3

Makes synthetic graphs with bench/synth_kg.py (untyped English entities, snake_case ids, 400 relations):
15,456 and 150,000 edges with 100 questions each, and 5,000 edges with 40. Then, alternating in each round:

1. for each of the two large graphs, the default run with --no-write-prompts (a fresh process, as a user
   runs it; peak RSS from /usr/bin/time), and its floor: a fresh process that loads the encoding and
   tokenizes the run's five serialized graphs once. The ratio is taken per round; the median and range
   over rounds are printed;
2. --sizes medium --permutations 3 on the 5k graph (wall time only).

Questions that leak their answer (a walk that ends where it starts) are dropped with
--skip-invalid-questions, as a user would.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import benchmark  # noqa: E402


def timed(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one command, via /usr/bin/time when it exists."""
    time_bin = Path("/usr/bin/time")
    if time_bin.exists():
        with tempfile.NamedTemporaryFile("r") as report:
            start = time.perf_counter()
            done = subprocess.run([str(time_bin), "-f", "%M", "-o", report.name, *cmd], capture_output=True, text=True)
            wall = time.perf_counter() - start
            rss = int(report.read().strip().splitlines()[-1])
    else:
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        wall, rss = time.perf_counter() - start, 0
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return wall, rss


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} (range {min(values):.2f}-{max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="scale-"))
    python = sys.executable
    graphs = (("kg15k", 15456, 100), ("kg150k", 150000, 100))
    for name, edges, questions in (*graphs, ("kg5k", 5000, 40)):
        subprocess.run(
            [
                python,
                str(ROOT / "bench" / "synth_kg.py"),
                str(work / name),
                "--edges",
                str(edges),
                "--relations",
                "400",
                "--questions",
                str(questions),
                "--seed",
                "2",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    medium = [
        python,
        str(ROOT / "benchmark.py"),
        "--graph",
        str(work / "kg5k/graph.json"),
        "--questions",
        str(work / "kg5k/questions.json"),
        "--out",
        str(work / "out5k"),
        "--sizes",
        "medium",
        "--permutations",
        "3",
        "--prompt",
        "en",
        "--skip-invalid-questions",
    ]
    results: dict[str, dict[str, list[float]]] = {name: {"run": [], "floor": [], "rss": []} for name, _, _ in graphs}
    mediums = []
    for r in range(args.rounds):
        for name, _, _ in graphs:
            out = work / f"out-{name}"
            default = [
                python,
                str(ROOT / "benchmark.py"),
                "--graph",
                str(work / name / "graph.json"),
                "--questions",
                str(work / name / "questions.json"),
                "--out",
                str(out),
                "--no-write-prompts",
                "--prompt",
                "en",
                "--skip-invalid-questions",
            ]
            floor = [
                python,
                "-c",
                "import sys; sys.path.insert(0, sys.argv[1]); import benchmark; t = "
                "benchmark.load_tokenizer('o200k_base'); "
                "[t.count(open(f, encoding='utf-8').read()) for f in sys.argv[2:]]",
                str(ROOT),
                *[str(out / f"graph.{fmt}.txt") for fmt in benchmark.ARTICLE_FORMATS],
            ]
            if r % 2 == 1 and out.exists():  # alternate the order: noise hits both alike
                results[name]["floor"].append(timed(floor)[0])
            wall, peak = timed(default)
            results[name]["run"].append(wall)
            results[name]["rss"].append(peak / 1024)
            if len(results[name]["floor"]) < len(results[name]["run"]):
                results[name]["floor"].append(timed(floor)[0])
            print(
                f"round {r + 1}, {name}: run {wall:.2f} s ({peak / 1024:.0f} MiB), floor "
                f"{results[name]['floor'][-1]:.2f} s, "
                f"ratio {wall / results[name]['floor'][-1]:.2f}",
                file=sys.stderr,
            )
        mediums.append(timed(medium)[0])
    for name, edges, questions in graphs:
        runs, floors = results[name]["run"], results[name]["floor"]
        print(
            f"{edges:,} edges, {questions} questions, default run --no-write-prompts: {spread(runs)} s, "
            f"peak RSS {max(results[name]['rss']):.0f} MiB; floor (fresh process, five graph texts) {spread(floors)} "
            "s; "
            f"ratio {spread([a / b for a, b in zip(runs, floors)])}"
        )
    print(f"--sizes medium --permutations 3 on 5,000 edges, 400 relations: {spread(mediums)} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
