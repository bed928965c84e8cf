"""What --from-prompts costs against its floor, tokenizing every logged prompt once in every format, side by side.

    $ python bench/logged_speed.py --prompts 10000 --rounds 3
    $ python bench/logged_speed.py --prompts 1000 --rounds 5 --layout graphrag

Makes N logged requests as LightRAG (or GraphRAG) sends them: each a context cut from the Freebase-like stand-in store
(bench/framework_stores.large_records: 3,385 entities, 7,341 relationships), a random start's neighbourhood of up to
60 relationships, two hops out, written in the framework's layout (proved equal to its own bytes by
tests/test_framework_goldens.py) and put into its own request (tests/golden/frameworks/small/LAYOUT.request.json).
The floor is a process that reads every alternative prompt the run will count (written beforehand, untimed) and
tokenizes each once: what any tool must do to answer the question. Then, alternating in each round, fresh processes:
`benchmark.py --from-prompts LOG` against the floor. Prints the median ratio and its range over rounds, and each
one's peak memory (the child's max RSS): a run whose memory grows with the log is not streaming.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def make_log(folder: Path, n: int, layout: str, seed: int = 11) -> tuple[Path, Path]:
    """The logged requests, and every alternative prompt text the run counts (for the floor)."""
    from framework_stores import graphrag_store, large_records, lightrag_store

    import benchmark
    import graphrag_format_benchmark
    from graphrag_format_benchmark import inputs
    from graphrag_format_benchmark.logged.layouts import find_spans, read_span
    from graphrag_format_benchmark.logged.measure import replaced
    from graphrag_format_benchmark.logged.run import DEFAULT_FORMATS

    graphrag_format_benchmark.join_registries()  # the layouts and formats below are read from benchmark.FORMATS
    entities, relations = large_records()
    store = (
        lightrag_store(folder / "store", entities, relations)
        if layout == "lightrag"
        else graphrag_store(folder / "store", entities, relations)
    )
    records, _, _ = inputs.read_graph_file(store, layouts=(layout,))
    graph = benchmark.validate_graph(records, "store", benchmark.Problems())
    request = json.loads(
        (ROOT / "tests" / "golden" / "frameworks" / "small" / f"{layout}.request.json").read_text(encoding="utf-8")
    )
    golden = (ROOT / "tests" / "golden" / "frameworks" / "small" / f"{layout}.txt").read_text(encoding="utf-8")
    incident: dict[str, list[int]] = {}
    for k, e in enumerate(graph.edges):
        incident.setdefault(e.source, []).append(k)
        incident.setdefault(e.target, []).append(k)
    rng = random.Random(seed)
    log, texts = folder / "logged.jsonl", folder / "texts.jsonl"
    starts = [n.id for n in graph.nodes if incident.get(n.id)]
    with open(log, "w", encoding="utf-8") as out, open(texts, "w", encoding="utf-8") as alt:
        for k in range(n):
            frontier, picked = [rng.choice(starts)], []
            for _ in range(2):
                reached = [i for v in frontier for i in incident[v] if i not in picked][: 60 - len(picked)]
                picked += list(dict.fromkeys(reached))
                frontier = list({end for i in reached for end in (graph.edges[i].source, graph.edges[i].target)})
            picked = sorted(set(picked))
            ends = {end for i in picked for end in (graph.edges[i].source, graph.edges[i].target)}
            keep = [j for j, node in enumerate(graph.nodes) if node.id in ends]
            sub = benchmark.Graph(
                tuple(graph.nodes[j] for j in keep),
                tuple(graph.edges[i] for i in picked),
                (),
                tuple(graph.node_props[j] for j in keep) if graph.node_props else (),
                tuple(graph.edge_props[i] for i in picked) if graph.edge_props else (),
            )
            context = benchmark.serialize_checked(layout, sub)
            messages = [
                {**m, "content": m["content"].replace(golden.strip("\n"), context)} for m in request["messages"]
            ]
            out.write(
                json.dumps(
                    {"custom_id": f"q{k}", "body": {"model": "gpt-4o-mini", "messages": messages}}, ensure_ascii=False
                )
                + "\n"
            )
            system = next(m["content"] for m in messages if context in m["content"])
            others = [m["content"] for m in messages if context not in m["content"]]
            spans = [read_span(s, system) for s in find_spans(system)[0]]
            alt.write(json.dumps([system, *others], ensure_ascii=False) + "\n")
            for fmt in DEFAULT_FORMATS:
                alt.write(
                    json.dumps(
                        ["".join(replaced(system, spans, benchmark.serialized(fmt, spans[0].graph))), *others],
                        ensure_ascii=False,
                    )
                    + "\n"
                )
    return log, texts


def floor(texts: Path) -> None:
    """Tokenize each text once: the floor."""
    import benchmark

    tokenizer = benchmark.load_tokenizer("o200k_base")
    total = 0
    with open(texts, encoding="utf-8") as f:
        for line in f:
            total += sum(tokenizer.count(t) for t in json.loads(line))
    print(total)


WRAPPER = (
    "import resource, subprocess, sys, time; start = time.perf_counter(); done = subprocess.run(sys.argv[1:], "
    "capture_output=True); "
    "print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.returncode); "
    "sys.stderr.write(done.stderr.decode()[-2000:])"
)


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak memory (MB) of one fresh process, read by a wrapper process of its own (so that the OS's
    peak is that child's alone)."""
    done = subprocess.run([sys.executable, "-c", WRAPPER, sys.executable, *argv], capture_output=True, text=True)
    seconds, peak, code = done.stdout.split()
    if code != "0":
        raise SystemExit(f"failed: {' '.join(argv)}\n{done.stderr}")
    return float(seconds), int(peak) / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--layout", choices=("lightrag", "graphrag"), default="lightrag")
    parser.add_argument("--floor", type=Path, help=argparse.SUPPRESS)  # the floor's own process
    args = parser.parse_args(argv)
    if args.floor is not None:
        floor(args.floor)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        log, texts = make_log(folder, args.prompts, args.layout)
        ours = [str(ROOT / "benchmark.py"), "--from-prompts", str(log), "--out", str(folder / "out")]
        theirs = [str(Path(__file__).resolve()), "--floor", str(texts)]
        ratios, times, peaks = [], [], []
        for _ in range(args.rounds):
            a, peak_a = timed(ours)
            b, peak_b = timed(theirs)
            ratios.append(a / b)
            times.append((a, b))
            peaks.append((peak_a, peak_b))
        print(
            f"{args.prompts:,} logged {args.layout} requests ({log.stat().st_size / 1e6:.1f} MB); {args.rounds} "
            "rounds, ratio to the floor run beside it"
        )
        print(
            f"--from-prompts / floor  median {statistics.median(ratios):.2f}x  (range "
            f"{min(ratios):.2f}-{max(ratios):.2f}); "
            f"median {statistics.median(a for a, _ in times):.1f} s against "
            f"{statistics.median(b for _, b in times):.1f} s"
        )
        print(
            f"peak memory: --from-prompts {statistics.median(a for a, _ in peaks):.0f} MB, floor "
            f"{statistics.median(b for _, b in peaks):.0f} MB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
