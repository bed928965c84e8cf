"""Shared fixtures: the repo root on sys.path, the canonical inputs, and a CLI runner."""

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

# Tests never write into the repo: no bytecode (here or in subprocesses), no .hypothesis/ folder.
sys.dont_write_bytecode = True
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
set_hypothesis_home_dir(tempfile.mkdtemp(prefix="hypothesis-"))
settings.register_profile("repo", database=None)
settings.load_profile("repo")

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
sys.path.insert(0, str(ROOT))

import benchmark  # noqa: E402
from graphrag_format_benchmark.variants import contexts, distractors  # noqa: E402


@pytest.fixture(scope="session")
def canonical() -> benchmark.RunInputs:
    return benchmark.load_inputs(ROOT / "data" / "graph.json", ROOT / "data" / "questions.json")


def run_cli(*args: str, cwd: Path = ROOT, env: dict | None = None, python_flags: tuple = ()) -> subprocess.CompletedProcess:
    """Run benchmark.py in a fresh interpreter, as a user would."""
    full_env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, *python_flags, str(ROOT / "benchmark.py"), *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def grown(graph: benchmark.Graph, questions: tuple, stream: distractors.Distractors, size: str, n: int, seed: int) -> contexts.Variant:
    """The shared graph plus the stream's first n distractor branches, as a variant of one context."""
    context, made = distractors.with_distractors(contexts.Context("", graph, questions), stream, size, n, seed)
    return contexts.Variant(size, "original", (context,), made)


START_LINE = re.compile(r"sending \d+ request\(s\) to \S+, \d+ at a time \(\d+ already answered in \S+\)\n")


def run_stderr(capsys) -> str:
    """stderr less the start line of a model run, which test_runner asserts on its own."""
    return START_LINE.sub("", capsys.readouterr().err)
