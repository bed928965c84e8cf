"""Speed of model runs and of scoring.

    $ python bench/runner_speed.py

1. Requests: a local OpenAI-compatible server (tests/fake_openai.py) answers every request in 100 ms;
   `benchmark.py --model m --repeats 6 --concurrency 8` sends the default run's 30 prompts 6 times,
   180 requests. The ideal is 180 / 8 x 0.1 s = 2.25 s. Prints the whole command's wall time, the
   request phase (from the log's run header to its last answer) and both ratios to the ideal.
2. Scoring: the control solver answers a matrix large enough for a log of over 10,000 lines; then
   reading, scoring and aggregating that log is timed (median of 5) and given per 10,000 lines.
"""

import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
import benchmark  # noqa: E402
from fake_openai import FakeOpenAI  # noqa: E402

DELAY, REQUESTS, CONCURRENCY = 0.1, 180, 8
SCORING = ["--sizes", "small,medium", "--ids", "original,short", "--permutations", "9", "--budget", "2500", "--repeats", "7"]


def stamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def requests_phase(tmp: Path) -> None:
    args = benchmark.make_parser().parse_args([])
    inputs = benchmark.load_inputs(args.graph, args.questions or benchmark.DEFAULT_QUESTIONS)
    items = benchmark.measure(inputs, benchmark.make_plan(args)).items
    contents = {item.prompt(): json.dumps(benchmark.solver_answer(item), ensure_ascii=False) for item in items}
    server = FakeOpenAI(answer=lambda prompt: contents[prompt], delay=DELAY)
    try:
        out = tmp / "requests"
        cmd = [sys.executable, str(ROOT / "benchmark.py"), "--model", "m", "--base-url", server.url,
               "--repeats", str(REQUESTS // 30), "--concurrency", str(CONCURRENCY), "--out", str(out)]
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
    finally:
        server.close()
    lines = [json.loads(line) for line in (out / "requests.jsonl").read_text(encoding="utf-8").splitlines()]
    header, answers = lines[0], [r for r in lines if r["type"] == "request"]
    assert len(answers) == len(server.requests) == REQUESTS and all(r["error"] is None for r in answers)
    phase = max(stamp(r["time"]) for r in answers) - stamp(header["started_at"])
    ideal = REQUESTS / CONCURRENCY * DELAY
    print(f"requests: {REQUESTS} at {DELAY * 1000:.0f} ms each, --concurrency {CONCURRENCY}; ideal {ideal:.2f} s")
    print(f"  request phase {phase:.2f} s = {phase / ideal:.2f} x ideal; whole command {wall:.2f} s = {wall / ideal:.2f} x ideal")


def scoring_phase(tmp: Path) -> None:
    out = tmp / "scoring"
    subprocess.run([sys.executable, str(ROOT / "benchmark.py"), "--model", "solver", *SCORING, "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    args = benchmark.make_parser().parse_args(["--model", "solver", *SCORING])
    inputs = benchmark.load_inputs(args.graph, args.questions or benchmark.DEFAULT_QUESTIONS)
    items = benchmark.measure(inputs, benchmark.make_plan(args)).items
    config = benchmark.make_model_config(args)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        records, _ = benchmark.read_log(out / "requests.jsonl")
        scored = benchmark.score_log(records, items, config)
        benchmark.aggregate(scored, (None, None))
        times.append(time.perf_counter() - start)
    lines = len(records)
    median = statistics.median(times)
    print(f"scoring: {lines:,} log lines, {len(scored):,} scored cells; median {median:.3f} s = {median / lines * 10_000:.3f} s per 10,000 lines")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        requests_phase(Path(tmp))
        scoring_phase(Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
