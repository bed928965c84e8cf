"""The hostile campaign's tools that take longer than a test: races for one output folder, and the leakage check
of file names at scale. The short reproductions of every finding are tests (tests/test_hostile.py).

    $ python bench/hostile.py [--rounds 500] [--questions 4000]

- lock: in each round, three processes race to take one --out's lock at the same instant (every other round
  over a dead run's empty lock file, as a kill between creating and writing it leaves one); prints how many
  rounds two of them held it at the same time (must be 0; a racer that starts late may take it after the first let go).
- names: the default run with --write-prompts over N questions (the article's six, repeated under new ids), as
  a user would run it: wall time and prompt files written (the check of file names against answers was
  quadratic: 4,000 questions took 216 s).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_hostile import RACE, holders_at_once  # noqa: E402


def lock_race(rounds: int) -> int:
    doubles = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(rounds):
            out = Path(tmp) / f"r{k}"
            if k % 2:
                out.mkdir()
                (out / ".benchmark.lock").write_bytes(b"")
            start = time.time() + 0.25
            procs = [
                subprocess.Popen(
                    [sys.executable, "-c", RACE, str(ROOT), str(out), str(start)], stdout=subprocess.PIPE, text=True
                )
                for _ in range(3)
            ]
            doubles += holders_at_once([p.communicate(timeout=60)[0].strip() for p in procs]) > 0
    return doubles


def names(n: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        questions = json.loads((ROOT / "data" / "questions.json").read_text(encoding="utf-8"))
        many = [{**questions[k % len(questions)], "id": f"q{k}"} for k in range(n)]
        (Path(tmp) / "q.json").write_text(json.dumps(many, ensure_ascii=False), encoding="utf-8")
        started = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                str(ROOT / "benchmark.py"),
                "--questions",
                str(Path(tmp) / "q.json"),
                "--write-prompts",
                "--out",
                str(Path(tmp) / "out"),
            ],
            capture_output=True,
            text=True,
        )
        took = time.perf_counter() - started
        assert done.returncode == 0, done.stderr
        return took, len(list((Path(tmp) / "out").glob("prompt.*")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--questions", type=int, default=4000)
    args = parser.parse_args(argv)
    print(f"lock: {lock_race(args.rounds)} of {args.rounds} rounds with two holders at once")
    took, files = names(args.questions)
    print(f"names: {args.questions} questions, {files} prompt files written in {took:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
