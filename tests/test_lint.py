"""The code passes the linter pinned in requirements.lock.txt (ruff, the rules of pyproject.toml's [tool.ruff.lint]):
no unused or undefined name, no syntax error, no stray whitespace, imports in order. Part of the README's test command,
so CI runs it."""

import subprocess
import sys

from conftest import ROOT


def test_the_code_passes_the_pinned_linter():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                           "benchmark.py", "graphrag_format_benchmark", "tests", "bench"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_linter_finds_an_unused_import(tmp_path):
    (tmp_path / "bad.py").write_text("import os\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F", str(tmp_path / "bad.py")],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "F401" in done.stdout
