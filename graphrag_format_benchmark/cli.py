"""The command line: python -m graphrag_format_benchmark, graphrag-format-benchmark, or python benchmark.py.

In: argv. Out: the exit code (0 done, 1 some requests failed, 2 bad input or flags, 130 interrupted) and what goes to
stdout and stderr. main() parses the flags and hands them to the run they ask for: one run (pipeline.run), one per
model (--models), or a comparison of finished runs (--compare). SIGTERM and SIGHUP stop a run as Ctrl-C does.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from ._article import (
    ROOT,
    BenchmarkError,
    display,
    missing_tiktoken,
    tiktoken,  # None when it is not installed: main() says how to install it
)
from .options import FLAG_FIELDS, RunConfig, make_parser, parse_config, read_config
from .pipeline import run
from .runner.config import SOLVER_MODEL

MODEL_FIELDS = {  # a --models entry's fields -> the flag each stands for
    "model": "--model",
    "base_url": "--base-url",
    "api_key_env": "--api-key-env",
    "encoding": "--encoding",
    "input_price_per_million": "--input-price-per-million",
    "output_price_per_million": "--output-price-per-million",
    "cached_input_price_per_million": "--cached-input-price-per-million",
    "max_tokens_field": "--max-tokens-field",
    "max_output_tokens": "--max-output-tokens",
    "structured": "--structured",
    "reasoning_effort": "--reasoning-effort",
    "temperature": "--temperature",
    "concurrency": "--concurrency",
    "timeout": "--timeout",
    "tokens_per_minute": "--tokens-per-minute",
    "requests_per_minute": "--requests-per-minute",
}


def read_models(path: Path) -> list[tuple[str, list[str]]]:
    """--models FILE: (folder name, flags) per model, checked."""
    where = display(path)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchmarkError(
            f"{where}: no such file; --models takes a JSON list of models, e.g. "
            '[{"model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1"}]'
        ) from None
    except (OSError, ValueError, RecursionError) as e:
        raise BenchmarkError(f"{where}: not readable JSON ({e}); --models takes a JSON list of models") from None
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise BenchmarkError(
            f"{where}: not a list of models (objects with model and base_url); give one object per model"
        )
    out, names = [], set()
    for k, entry in enumerate(entries, 1):
        unknown = sorted(set(entry) - set(MODEL_FIELDS) - {"name"})
        if unknown:
            raise BenchmarkError(
                f"{where}: model {k}: unknown field {unknown[0]!r}; the fields are name, {', '.join(MODEL_FIELDS)}"
            )
        if (
            not isinstance(entry.get("model"), str)
            or not entry["model"].strip()
            or (entry["model"] != SOLVER_MODEL and not isinstance(entry.get("base_url"), str))
        ):
            raise BenchmarkError(
                f"{where}: model {k}: give model and base_url (text), e.g. "
                '{"model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1"}'
            )
        name = entry.get("name", entry["model"])
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name) or name in names:
            raise BenchmarkError(
                f"{where}: model {k}: its folder name {name!r} is not a plain unique file name (letters, digits, "
                ". _ -); give each model a name"
            )
        names.add(name)
        flags = []
        for field, flag in MODEL_FIELDS.items():
            value = entry.get(field)
            if value is None:
                continue
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise BenchmarkError(
                    f"{where}: model {k} ({name}): {field} must be text or a number, got {json.dumps(value)[:40]}"
                )
            flags += [flag, str(value)]
        out.append((name, flags))
    return out


def model_configs(base: RunConfig, models: list[tuple[str, list[str]]]) -> list[tuple[str, RunConfig]]:
    """--models: each model's RunConfig, the command's own with the fields of the flags the model's entry names (parsed
    as flags: the same types, choices and errors) put over it (dataclasses.replace), --out/NAME its folder."""
    common = _without(base.argv, ("--models", "--out"))
    out = []
    for name, flags in models:
        own = read_config(make_parser().parse_args(flags), flags)
        fields = {FLAG_FIELDS[flag]: getattr(own, FLAG_FIELDS[flag]) for flag in own.given}
        folder = base.out / name
        argv = (*common, *flags, "--out", str(folder))  # what the model's run records as its command
        given = base.given - {"--models"} | own.given | {"--out"}
        out.append((name, replace(base, **fields, models=None, out=folder, argv=argv, given=given)))
    return out


def _without(argv: Sequence[str], flags: tuple[str, ...]) -> list[str]:
    """argv less the given flags and their values, in either spelling (--out DIR, --out=DIR)."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in flags:
            skip = True
            continue
        if any(arg.startswith(flag + "=") for flag in flags):
            continue
        kept.append(arg)
    return kept


def run_models(run_config: RunConfig, models_file: Path) -> tuple[str, str | None]:
    """--models: each model's run into --out/NAME (the same command's other flags; each resumes from its own log),
    one after another, a model that fails not stopping the others; then --compare of those with results."""
    given = run_config.named("--model", "--base-url")
    if given:
        raise BenchmarkError(f"--models names each model and its base_url in its file: leave out {' and '.join(given)}")
    models = model_configs(run_config, read_models(models_file))
    stdout, failed = [], []
    for k, (name, config) in enumerate(models, 1):
        print(f"model {k}/{len(models)}: {name} into {display(config.out)}", file=sys.stderr, flush=True)
        try:
            text, failure = run(config)
        except BenchmarkError as e:
            text, failure = "", " ".join(getattr(e, "lines", [str(e)]))
        stdout.append(f"## {name}\n{text}".rstrip())
        if failure:
            failed.append(f"{name}: {failure}")
    finished = [config.out for _, config in models if (config.out / "results.json").exists()]
    if len(finished) >= 2:
        stdout.append(
            "## comparison\n"
            + run_command(parse_config(["--compare", *map(str, finished), "--out", str(run_config.out)]))[0]
        )
    failure = None
    if failed:
        failure = (
            f"{len(failed)} of {len(models)} model(s) did not finish ({'; '.join(failed)}); run the same command "
            "again: "
            "each model resumes from its own log"
        )
    return "\n\n".join(stdout), failure


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (what timeout, a CI cancellation and docker stop send): handled as Ctrl-C is, so the answers
    to the requests in flight, which are paid, are waited for and logged."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def stops_like_ctrl_c() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Terminated in the main thread
    while the run works; the previous handlers come back after."""
    import signal

    def stop(signum: int, frame: object) -> None:
        raise Terminated(signum)

    wanted = [signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {signum: signal.signal(signum, stop) for signum in wanted}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run_command(run_config: RunConfig) -> tuple[str, str | None]:
    """The run the flags ask for: a comparison of finished runs
    (--compare), one run per model (--models), or one run."""
    if run_config.compare is not None:
        from .comparison import run_compare  # only here: a comparison reads finished runs and measures nothing

        return run_compare(run_config), None
    if run_config.models is not None:
        return run_models(run_config, run_config.models)
    if run_config.from_prompts is not None:
        from .logged.run import run_logged  # only here: a run over logged prompts reads no graph

        return run_logged(run_config, run_config.from_prompts)
    return run(run_config)


def main(argv: list[str] | None = None, prog: str = "benchmark.py") -> int:
    """Run the command line argv (sys.argv's by default); the exit code. prog: how the command is named in messages."""
    argv = sys.argv[1:] if argv is None else list(argv)
    run_config = parse_config(argv, prog)  # the command line, read once: nothing below sees argparse's namespace
    if tiktoken is None:
        print(f"error: {missing_tiktoken(ROOT, sys.executable)}", file=sys.stderr)
        return 2
    try:
        with stops_like_ctrl_c():
            stdout, failure = run_command(run_config)
        print(stdout)
        if failure:
            print(f"error: {failure}", file=sys.stderr)
            return 1
    except BenchmarkError as e:
        for line in getattr(e, "lines", [str(e)]):
            print(f"error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        import signal

        how = f"stopped by {signal.Signals(e.signum).name}" if isinstance(e, Terminated) else "interrupted"
        resume = (
            "; run the same command to resume: what was answered is in the log"
            if (run_config.model or run_config.models) and not run_config.score
            else ""
        )
        print(f"error: {how}{resume}", file=sys.stderr)
        return 128 + e.signum if isinstance(e, Terminated) else 130
    return 0


def command() -> int:
    """The graphrag-format-benchmark command that pip install . makes."""
    return main(prog="graphrag-format-benchmark")
