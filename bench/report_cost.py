"""What report.html costs a run: the budget is a tenth of the run.

    $ python bench/report_cost.py --rounds 3

Makes the bench's graphs with bench/synth_kg.py (15,456 and 150,000 edges, 100 questions each; and the article's
data as it ships). In each round, per graph: the default command (as bench/scale.py runs it: --no-write-prompts
--prompt en --skip-invalid-questions) in a fresh process, as a user runs it (its wall time is the run's); then the
same command in this process with pipeline.report_html wrapped in a timer (the report's time). Prints each round,
then the medians and the report's share of the run, and of the in-process run (which leaves out the interpreter's
start, the imports and loading the encoding, so it reads higher).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphrag_format_benchmark import cli, pipeline  # noqa: E402


def timed_run(argv: list[str]) -> tuple[float, float]:
    """(the run's wall seconds, report_html's) of one run in this process."""
    spent = []
    real = pipeline.report_html

    def report_html(*args, **kwargs):  # noqa: ANN002, ANN003
        start = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    pipeline.report_html = report_html
    try:
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = cli.main(argv)
        wall = time.perf_counter() - start
    finally:
        pipeline.report_html = real
    if code != 0:
        sys.exit(f"{' '.join(argv)} exited {code}")
    return wall, sum(spent)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="report-cost-"))
    cases = {"article": ["--graph", str(ROOT / "data" / "graph.json")]}
    for name, edges in (("kg15k", 15456), ("kg150k", 150000)):
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "bench" / "synth_kg.py"),
                str(work / name),
                "--edges",
                str(edges),
                "--relations",
                "400",
                "--questions",
                "100",
                "--seed",
                "2",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        cases[name] = [
            "--graph",
            str(work / name / "graph.json"),
            "--questions",
            str(work / name / "questions.json"),
            "--prompt",
            "en",
            "--skip-invalid-questions",
            "--no-write-prompts",
        ]
    seen: dict[str, list[tuple[float, float, float]]] = {name: [] for name in cases}
    for r in range(args.rounds):
        for name, flags in cases.items():
            argv = [*flags, "--out", str(work / f"out-{name}")]
            start = time.perf_counter()
            subprocess.run([sys.executable, str(ROOT / "benchmark.py"), *argv], check=True, capture_output=True)
            process = time.perf_counter() - start
            inside, report = timed_run(argv)
            seen[name].append((process, inside, report))
            print(
                f"round {r + 1}, {name}: run {process:.2f} s ({inside:.2f} s in process), report.html {report:.3f} s, "
                f"share {report / process:.1%}",
                file=sys.stderr,
            )
    for name, triples in seen.items():
        shares = sorted(x / p for p, _, x in triples)
        inner = statistics.median(x / i for _, i, x in triples)
        print(
            f"{name}: run median {statistics.median(p for p, _, _ in triples):.2f} s, report.html median "
            f"{statistics.median(x for _, _, x in triples):.3f} s, share of the run median "
            f"{statistics.median(shares):.1%} "
            f"(range {shares[0]:.1%}-{shares[-1]:.1%}; budget 10%), of the in-process run {inner:.1%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
