"""Shared fixtures: the repo root on sys.path, the canonical inputs, and a CLI runner."""

import json
import os
import re
import shutil
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
import graphrag_format_benchmark  # noqa: E402
from graphrag_format_benchmark.variants import contexts, distractors  # noqa: E402

# The tests read benchmark.FORMATS and PROMPT_TEMPLATES without a parser: the package's formats join them here, as a
# run's first parser joins them (importing the package does not: tests/test_formats.py).
graphrag_format_benchmark.join_registries()


@pytest.fixture(scope="session")
def canonical() -> benchmark.RunInputs:
    return benchmark.load_inputs(ROOT / "data" / "graph.json", ROOT / "data" / "questions.json")


@pytest.fixture(scope="session")
def small(canonical):
    """The article's graph and its questions by id."""
    return canonical.graph, {q.id: q for q in canonical.questions}


def run_cli(
    *args: str, cwd: Path = ROOT, env: dict | None = None, python_flags: tuple = ()
) -> subprocess.CompletedProcess:
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


def grown(
    graph: benchmark.Graph, questions: tuple, stream: distractors.Distractors, size: str, n: int, seed: int
) -> contexts.Variant:
    """The shared graph plus the stream's first n distractor branches, as a variant of one context."""
    context, made = distractors.with_distractors(contexts.Context("", graph, questions), stream, size, n, seed)
    return contexts.Variant(size, "original", (context,), made)


def batch_output(tmp_path: Path) -> list[str]:
    """The output lines of a batch exported by --model m (30 prompts): every prompt answered '{"answer": "k"}', with
    usage, custom_id first, as a test writes them (no "id")."""
    batch = tmp_path / "batch.jsonl"
    assert benchmark.main(["--model", "m", "--export-batch", str(batch), "--out", str(tmp_path / "export")]) == 0
    ids = [json.loads(line)["custom_id"] for line in batch.read_text(encoding="utf-8").splitlines()]
    body = {"model": "m", "choices": [{"index": 0, "message": {"role": "assistant"}, "finish_reason": "stop"}]}
    lines = []
    for k, custom_id in enumerate(ids):
        body["usage"] = {"prompt_tokens": 900 + k, "completion_tokens": 9}
        body["choices"][0]["message"]["content"] = f'{{"answer": "{k}"}}'
        lines.append(json.dumps({"custom_id": custom_id, "response": {"status_code": 200, "body": body}}))
    return lines


START_LINE = re.compile(r"sending \d+ request\(s\) to \S+, \d+ at a time \(\d+ already answered in \S+\)\n")


# what --graph was read as (test_stores)
READ_LINE = re.compile(r"read [\d,]+ entities, [\d,]+ relations from [^\n]*\n")


def without_read(err: str) -> str:
    """stderr less the line that says what --graph was read as, which test_stores asserts on its own."""
    return READ_LINE.sub("", err)


def run_stderr(capsys) -> str:
    """stderr less the start line of a model run, which test_runner asserts on its own, and the read line."""
    return without_read(START_LINE.sub("", capsys.readouterr().err))


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail(
                "no chromium: .ci/run installs Debian's (apt-get install chromium); the report's browser tests need it"
            )
        pytest.skip("no chromium on this machine: apt-get install chromium (.ci/run does)")
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        # The flags this closed network needs (the machine notes: without them chromium's own connections are refused,
        # many at a time, and it looks up Google's hosts at every start); a small /dev/shm in a container crashes pages
        # without --disable-dev-shm-usage. A slow CI machine gets a minute for every step instead of Playwright's 30 s.
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            timeout=60_000,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-dev-shm-usage",
            ],
        )
        try:
            yield b
        finally:
            b.close()
