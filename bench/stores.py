"""What reading a framework's store and cutting contexts to a token budget cost, against their floors, side by side.

    $ python bench/stores.py --rounds 5

Makes a Freebase-like stand-in (bench/framework_stores.large_records: 3,385 entities, 7,341 relationships with
descriptions and keywords) as each framework's store (a LightRAG GraphML file, a GraphRAG output folder, a LlamaIndex
JSON store) and as the tool's own JSON of the same records (what the store reads into). Then, alternating in each
round, fresh processes as a user runs them (--formats json --no-write-prompts, 40 generated questions):

1. each store against its floor, the same graph from the tool's JSON: what reading the store adds;
2. --context khop --context-tokens lightrag against --context khop alone, on the LightRAG store: what cutting each
   context to the budget adds (the floor: the same contexts uncut).

Prints the median ratio and its range over rounds per stage (a ratio of two things run side by side: the machine's
drift cancels).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from framework_stores import graphrag_store, large_records, lightrag_store, llamaindex_store  # noqa: E402

from graphrag_format_benchmark import inputs  # noqa: E402
from graphrag_format_benchmark.stores import STORE_ROWS  # noqa: E402


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "benchmark.py"), *argv], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        entities, relations = large_records()
        stores = {
            "lightrag": lightrag_store(folder / "lightrag", entities, relations).parent,
            "graphrag": graphrag_store(folder / "graphrag", entities, relations),
            "llamaindex": llamaindex_store(folder / "llamaindex", entities, relations).parent,
        }
        floors = {}
        for kind, path in stores.items():  # the same records as the tool's JSON: the floor of reading a store
            records, _, _ = inputs.read_graph_file(path)
            records.pop(STORE_ROWS)  # where each record is in the store, for messages: no JSON
            floors[kind] = folder / f"{kind}.json"
            floors[kind].write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
        common = ["--generate-questions", "40", "--prompt", "en", "--formats", "json", "--no-write-prompts"]
        pairs = {
            f"read {kind} store": ([*common, "--graph", str(path)], [*common, "--graph", str(floors[kind])])
            for kind, path in stores.items()
        }
        khop = [*common, "--graph", str(stores["lightrag"]), "--context", "khop"]
        pairs["--context-tokens lightrag"] = ([*khop, "--context-tokens", "lightrag"], khop)
        ratios: dict[str, list[float]] = {name: [] for name in pairs}
        for r in range(args.rounds):
            for name, (a, b) in pairs.items():
                ta = timed([*a, "--out", str(folder / f"a{r}")])
                tb = timed([*b, "--out", str(folder / f"b{r}")])
                ratios[name].append(ta / tb)
        print(
            f"{len(entities):,} entities, {len(relations):,} relationships; {args.rounds} rounds, ratio to the floor "
            "run beside it"
        )
        for name, values in ratios.items():
            print(f"{name:28s} median {statistics.median(values):.2f}x  (range {min(values):.2f}-{max(values):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
