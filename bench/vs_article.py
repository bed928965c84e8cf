"""Wall time of the default run against the article's own script, side by side.

    $ python bench/vs_article.py PATH/TO/article_benchmark.py [--runs 21]

The article's script (section 6 of the article, saved to a file by you) runs in a temp folder with a
copy of data/, reading the BPE file from data/tiktoken through TIKTOKEN_CACHE_DIR; benchmark.py runs
as a user runs it, with no TIKTOKEN_CACHE_DIR. The two commands
alternate so that machine noise hits both alike; the medians and their ratio are printed.
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
    ours_env = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}  # as a user runs it: shipped files
    article_env = {**ours_env, "TIKTOKEN_CACHE_DIR": str(ROOT / "data" / "tiktoken")}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shutil.copytree(ROOT / "data", tmp / "article" / "data")
        shutil.copy(args.article_script, tmp / "article" / "benchmark.py")
        ours_cmd = [sys.executable, str(ROOT / "benchmark.py"), "--encoding", "o200k_base", "--out", str(tmp / "ours")]
        article_cmd = [sys.executable, "benchmark.py", "--encoding", "o200k_base"]
        ours, article = [], []
        for _ in range(args.runs):
            article.append(wall(article_cmd, tmp / "article", article_env))
            ours.append(wall(ours_cmd, ROOT, ours_env))
        a, o = statistics.median(article), statistics.median(ours)
        print(f"article script: median {a * 1000:.0f} ms over {args.runs} runs")
        print(f"benchmark.py:   median {o * 1000:.0f} ms over {args.runs} runs")
        print(f"ratio (ours / article): {o / a:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
