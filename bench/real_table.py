"""The real-model table of bench/README.md, from the runs' own files: nothing typed by hand.

    $ python bench/real_table.py RUN_DIR [RUN_DIR ...]

For each run (a model run's --out: results.json and requests.jsonl) and format: prompt tokens by the model's own
count, answer right, path exact and abstention with their 95% intervals, the diagnosis shares, the gate's verdict and
the questions it asks for; then per run the log's SHA-256 (as results.json names it) and the tool's own time per
request against the model's: the wall time between one answer's log line and the next, less the next request's
latency (the server's time), median and share of the median latency. A one-slot server is sent one request at a time,
so that gap is what the tool spends between requests (scoring nothing yet: logging, rebuilding the next prompt).
"""

from __future__ import annotations

import json
import statistics
import sys
from datetime import datetime
from pathlib import Path


def rate(metric: dict) -> str:
    if metric.get("rate") is None:
        return ""
    ci = metric.get("ci95")
    return f"{metric['rate']:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def overhead(log: Path) -> tuple[float, float, int] | None:
    """(median tool seconds between requests, median latency, requests) of one log, consecutive answers only."""
    times, latencies = [], []
    for line in log.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("type") != "request" or r.get("latency_s") is None:
            continue
        times.append(datetime.strptime(r["time"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp())
        latencies.append(r["latency_s"] + (r.get("retry_wait_s") or 0.0))
    gaps = [t2 - t1 - lat for t1, t2, lat in zip(times, times[1:], latencies[1:]) if 0 <= t2 - t1 - lat < 60]
    return (statistics.median(gaps), statistics.median(latencies), len(gaps)) if gaps else None


def main(argv: list[str] | None = None) -> int:
    runs = [Path(a) for a in (argv if argv is not None else sys.argv[1:])]
    print(
        "| model | run | format | prompt tokens (model's) | answer | path exact | abstention | JSON as asked | "
        "diagnoses (share of cells) | verdict |"
    )
    print("|---|---|---|---:|---|---|---|---:|---|---|")
    notes = []
    for run in runs:
        results = json.loads((run / "results.json").read_text(encoding="utf-8"))
        model = results["model"]["model"]
        verdicts = {(v["size"], v["ids"], v["mode"], v["format"]): v for v in results.get("verdicts") or []}
        for e in results["aggregates"]:
            v = verdicts.get((e["size"], e["ids"], e["mode"], e["format"]))
            verdict = (
                "baseline"
                if v is None
                else v["verdict"]
                + (f" (asks for {v['questions_to_generate']:,} questions)" if v.get("questions_to_generate") else "")
            )
            shares = ", ".join(f"{k.replace('_', ' ')} {n / e['n']:.0%}" for k, n in e["diagnoses"].items())
            # --pseudonymize: both, row by row
            shown = e["format"] + ("" if e["ids"] == "original" else f" ({e['ids']})")
            print(
                f"| {model} | {run.name} | {shown} | {e['model_prompt_tokens'] or ''} | {rate(e['answer_correct'])} | "
                f"{rate(e['path_exact'])} | {rate(e['abstention_correct'])} | {e['json_as_asked']}/{e['n']} | {shares} "
                f"| {verdict} |"
            )
        logged = Path(results["log"]["name"])  # a --score run names the log it read
        gap = overhead(logged if logged.is_file() else run / "requests.jsonl")
        notes.append(
            f"- {model}, {run.name}: log SHA-256 `{results['log']['sha256']}`"
            + (
                f"; tool time between requests {gap[0] * 1000:.0f} ms (median of {gap[2]}), model {gap[1]:.1f} s a "
                "request: "
                f"{gap[0] / gap[1]:.2%}"
                if gap
                else ""
            )
        )
    print("\n" + "\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
