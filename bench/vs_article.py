"""Wall time of the default run against the article's own script, side by side: the budget is 1.3x.

    $ python bench/vs_article.py PATH/TO/article_benchmark.py [--runs 21]

The article's script (section 6 of the article, saved to a file by you) runs in a temp folder with a copy of data/,
reading the BPE file from data/tiktoken through TIKTOKEN_CACHE_DIR; benchmark.py runs as a user runs it, from the
repository (so beside the package: the preflight and report.html included), with no TIKTOKEN_CACHE_DIR. Both run
once before the timed runs, with Python's bytecode cache on as it is by default, so that each second run, like a
user's, imports the modules compiled (a script run as __main__ is compiled every time). The two commands alternate,
so that machine noise hits both alike; the medians over runs and the median of the paired ratios are printed.
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall(cmd: list[str], cwd: Path, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("article_script", type=Path)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    ours_env = {"PATH": "/usr/bin:/bin"}  # as a user runs it: shipped files, the bytecode cache on
    article_env = {**ours_env, "TIKTOKEN_CACHE_DIR": str(ROOT / "data" / "tiktoken")}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shutil.copytree(ROOT / "data", tmp / "article" / "data")
        shutil.copy(args.article_script, tmp / "article" / "benchmark.py")
        ours_cmd = [sys.executable, str(ROOT / "benchmark.py"), "--encoding", "o200k_base", "--out", str(tmp / "ours")]
        article_cmd = [sys.executable, "benchmark.py", "--encoding", "o200k_base"]
        wall(article_cmd, tmp / "article", article_env)  # the warm-up: the bytecode cache, the disk cache
        wall(ours_cmd, ROOT, ours_env)
        ours, article = [], []
        for _ in range(args.runs):
            article.append(wall(article_cmd, tmp / "article", article_env))
            ours.append(wall(ours_cmd, ROOT, ours_env))
        a, o = statistics.median(article), statistics.median(ours)
        print(f"article script: median {a * 1000:.0f} ms over {args.runs} runs")
        print(f"benchmark.py:   median {o * 1000:.0f} ms over {args.runs} runs")
        ratios = sorted(x / y for x, y in zip(ours, article))
        print(
            f"ratio (ours / article): {o / a:.2f} (median of paired ratios {statistics.median(ratios):.2f}, "
            f"range {ratios[0]:.2f}-{ratios[-1]:.2f}; budget 1.3)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
