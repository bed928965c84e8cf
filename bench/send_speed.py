"""Wall time and client CPU of a model run against a server that answers every request after a delay, against the ideal.

    $ python bench/send_speed.py 64 168 --rounds 3   # 5,040 requests (30 prompts x 168 repeats), 64 in flight
    $ python bench/send_speed.py 8 30 --rounds 3     # 900 requests, 8 in flight: the prefix-group send order's cost
    $ python bench/send_speed.py 64 168 --delay 0.2  # a realistic floor: a server that takes 200 ms
    $ python bench/send_speed.py 8 6 --delay 0.1 --rounds 3   # 180 requests, 8 in flight, 100 ms (#44's budget: 1.3x)

The ideal is requests / concurrency x the delay (--delay, 20 ms by default): what the run would take if the client cost
nothing. The server (bench/answer_server.py) runs in its own process and costs almost no CPU, so what is over the ideal
is the client's: the whole command (start, measuring the prompts, sending, scoring, writing results), timed in the same
process; the same less its offline part (the command without --model, timed just before it); and the sending alone (from
the log's header line to its last answer); and the command as a user runs it, a process of its own (`python benchmark.py
--model ...`: start-up and imports included). Prints each round and the medians; CPU per request is the whole command's
CPU time (all threads) over the requests sent.
"""

import argparse
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
import benchmark  # noqa: E402


def stamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("concurrency", type=int)
parser.add_argument("repeats", type=int)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--delay", type=float, default=0.02, help="seconds the server takes per answer (default 0.02)")
args = parser.parse_args()
DELAY = args.delay

server = subprocess.Popen(
    [sys.executable, str(ROOT / "bench" / "answer_server.py"), str(DELAY)], stdout=subprocess.PIPE, text=True
)
url = server.stdout.readline().strip()
ratios, beyond, phases, cpus, processes = [], [], [], [], []
try:
    for round_ in range(args.rounds):
        with tempfile.TemporaryDirectory() as offline_out:  # the offline part: the same command without --model
            t = time.monotonic()
            benchmark.main(["--out", offline_out, "--no-write-prompts"])
            offline = time.monotonic() - t
        with tempfile.TemporaryDirectory() as out:
            cpu, t = time.process_time(), time.monotonic()
            code = benchmark.main(
                [
                    "--model",
                    "m",
                    "--base-url",
                    url,
                    "--out",
                    out,
                    "--concurrency",
                    str(args.concurrency),
                    "--repeats",
                    str(args.repeats),
                ]
            )
            wall, cpu = time.monotonic() - t, time.process_time() - cpu
            with open(Path(out) / "requests.jsonl", encoding="utf-8") as f:
                records = [json.loads(line) for line in f]
        requests = [r for r in records if r.get("type") == "request"]
        n = len(requests)
        with tempfile.TemporaryDirectory() as out:  # the same command as a process of its own
            t = time.monotonic()
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "benchmark.py"),
                    "--model",
                    "m",
                    "--base-url",
                    url,
                    "--out",
                    out,
                    "--concurrency",
                    str(args.concurrency),
                    "--repeats",
                    str(args.repeats),
                ],
                capture_output=True,
                check=True,
            )
            processes.append((time.monotonic() - t) / (n / args.concurrency * DELAY))
        sending = stamp(max(r["time"] for r in requests)) - stamp(records[0]["started_at"])  # header to the last answer
        ideal = n / args.concurrency * DELAY
        ratios.append(wall / ideal)
        beyond.append((wall - offline) / ideal)
        phases.append(sending / ideal)
        cpus.append(cpu / n * 1000)
        print(
            f"round {round_ + 1}: exit {code}; {n} requests, {args.concurrency} in flight: wall {wall:.2f} s, ideal "
            f"{ideal:.2f} s, "
            f"ratio {wall / ideal:.2f} (beyond the offline part's {offline:.2f} s: {(wall - offline) / ideal:.2f}; "
            "sending alone "
            f"{sending:.2f} s, {sending / ideal:.2f}; as a process {processes[-1]:.2f}); client CPU {cpu:.2f} s = "
            f"{cpu / n * 1000:.2f} ms per request",
            file=sys.stderr,
        )
finally:
    server.kill()
print(
    f"median of {args.rounds}: ratio {statistics.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f}), "
    "beyond the "
    f"offline part {statistics.median(beyond):.2f} (range {min(beyond):.2f}-{max(beyond):.2f}), sending alone "
    f"{statistics.median(phases):.2f} (range {min(phases):.2f}-{max(phases):.2f}), as a process "
    f"{statistics.median(processes):.2f} (range {min(processes):.2f}-{max(processes):.2f}), "
    f"client CPU {statistics.median(cpus):.2f} ms per request (range {min(cpus):.2f}-{max(cpus):.2f})",
    file=sys.stderr,
)
