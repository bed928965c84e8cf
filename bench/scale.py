"""Scale on knowledge-graph-sized inputs, measured side by side.

    $ python bench/scale.py --rounds 5

Makes two synthetic graphs with bench/synth_kg.py (untyped English entities, snake_case ids, 400
relations): 15,456 edges with 100 questions, and 5,000 edges with 40. Then, alternating in each round:

1. the default run with --no-write-prompts on the 15k graph (a fresh process, as a user runs it),
   against tokenizing the five serialized graphs once: strictly (encode_ordinary of each graph file in
   this process, the encoding already loaded) and as a fresh process that loads the encoding and
   counts the five files; the ratio of the run to each, and the run's peak RSS;
2. --sizes medium --permutations 3 on the 5k graph.

Prints medians over rounds. Questions that leak their answer (a walk that ends where it starts) are
dropped with --skip-invalid-questions, as a user would.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="scale-"))
    python = sys.executable
    for name, edges, questions in (("kg15k", 15456, 100), ("kg5k", 5000, 40)):
        subprocess.run([python, str(ROOT / "bench" / "synth_kg.py"), str(work / name), "--edges", str(edges),
                        "--relations", "400", "--questions", str(questions), "--seed", "2"], check=True)
    default = [python, str(ROOT / "benchmark.py"), "--graph", str(work / "kg15k/graph.json"), "--questions",
               str(work / "kg15k/questions.json"), "--out", str(work / "out15"), "--no-write-prompts", "--prompt", "en",
               "--skip-invalid-questions"]
    medium = [python, str(ROOT / "benchmark.py"), "--graph", str(work / "kg5k/graph.json"), "--questions",
              str(work / "kg5k/questions.json"), "--out", str(work / "out5"), "--sizes", "medium", "--permutations", "3",
              "--prompt", "en", "--skip-invalid-questions"]
    tokenizer = benchmark.load_tokenizer("o200k_base")
    files = [str(work / "out15" / f"graph.{fmt}.txt") for fmt in benchmark.ARTICLE_FORMATS]
    count_files = [python, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import benchmark; t = benchmark.load_tokenizer('o200k_base'); "
                   "[t.count(open(f, encoding='utf-8').read()) for f in sys.argv[2:]]", str(ROOT), *files]
    runs, tokenize, fresh, rss, mediums = [], [], [], [], []
    for r in range(args.rounds):
        wall, peak = timed(default)
        runs.append(wall)
        rss.append(peak)
        texts = [(work / "out15" / f"graph.{fmt}.txt").read_text(encoding="utf-8") for fmt in benchmark.ARTICLE_FORMATS]
        start = time.perf_counter()
        counts = [tokenizer.count(t) for t in texts]
        tokenize.append(time.perf_counter() - start)
        fresh.append(timed(count_files)[0])
        mediums.append(timed(medium)[0])
        print(f"round {r + 1}: default run {wall:.2f} s ({peak / 1024:.0f} MiB), tokenize once {tokenize[-1]:.2f} s "
              f"(fresh process {fresh[-1]:.2f} s), medium x3 {mediums[-1]:.2f} s", file=sys.stderr)
    ratios = [a / b for a, b in zip(runs, tokenize)]
    fresh_ratios = [a / b for a, b in zip(runs, fresh)]
    print(f"15k edges, 100 questions, graph tokens per format {counts}")
    print(f"default run --no-write-prompts: median {statistics.median(runs):.2f} s, peak RSS {max(rss) / 1024:.0f} MiB")
    print(f"tokenizing the five graphs once: median {statistics.median(tokenize):.2f} s in process, "
          f"{statistics.median(fresh):.2f} s as a fresh process (loading the encoding)")
    print(f"ratio (per round, then median): {statistics.median(ratios):.2f} against the in-process count, "
          f"{statistics.median(fresh_ratios):.2f} against the fresh process")
    print(f"--sizes medium --permutations 3 on 5k edges, 400 relations: median {statistics.median(mediums):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
