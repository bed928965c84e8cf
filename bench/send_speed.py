"""Requests per second of a model run against a local server that answers in 20 ms, against the ideal.

    $ python bench/send_speed.py 64 168     # 5,040 requests (the default run's 30 prompts x 168 repeats), 64 in flight
    $ python bench/send_speed.py 8 30       # 900 requests, 8 in flight: the prefix-group send order's cost

The ideal is requests / concurrency x 20 ms. The server (tests/fake_openai.py) runs in the same process and
takes its share of the 2 cores, so the ratio is an upper bound of the client's own cost.
"""

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
import benchmark  # noqa: E402
from fake_openai import FakeOpenAI  # noqa: E402

conc, reps = int(sys.argv[1]), int(sys.argv[2])
server = FakeOpenAI(answer=lambda p: '{"answer": "x", "path": [], "evidence": []}', delay=0.02)
out = tempfile.mkdtemp()
t = time.monotonic()
code = benchmark.main(["--model", "m", "--base-url", server.url, "--out", out, "--concurrency", str(conc), "--repeats", str(reps)])
wall = time.monotonic() - t
records = [json.loads(line) for line in open(out + "/requests.jsonl", encoding="utf-8")]
n = sum(1 for r in records if r.get("type") == "request")
ideal = n / conc * 0.02
print(f"exit {code}; concurrency {conc}: {n} requests, wall {wall:.2f} s, ideal {ideal:.2f} s, ratio {wall / ideal:.2f}", file=sys.stderr)
server.close()
