"""options.py: the flags, and that docs/flags.md documents every one of them."""

import argparse
import importlib.util
import re

import pytest

import benchmark
from graphrag_format_benchmark import options

from conftest import ROOT


def test_every_flag_of_help_is_documented_in_docs_flags():
    parser = options.make_parser()
    flags = {o for action in parser._actions for o in action.option_strings if o.startswith("--") and o != "--help"}
    documented = set(re.findall(r"`(--[a-z][a-z-]*)", (ROOT / "docs" / "flags.md").read_text(encoding="utf-8")))
    # BooleanOptionalAction adds the --no- form
    assert flags == {row[1] for row in options.FLAGS} | {"--no-write-prompts"}
    assert sorted(flags - documented) == []
    assert sorted(documented - flags) == []  # and no flag that is gone


def test_sending_without_httpx2_is_one_line_before_anything_is_measured(monkeypatch, tmp_path, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "httpx2" else real(name, *a))
    argv = ["--model", "some-model", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "out")]
    assert benchmark.main(argv) == 2
    assert capsys.readouterr().err == (
        "error: sending to --model needs the httpx2 package, which is not installed; run: pip install "
        "'graphrag-format-benchmark[models]', or pip install -r requirements.lock.txt in a checkout\n"
    )
    assert not (tmp_path / "out").exists()
    # the control solver sends nothing
    assert benchmark.main(["--model", "solver", "--out", str(tmp_path / "solver")]) == 0


def test_the_run_config_has_a_typed_field_per_flag_and_is_frozen():
    import dataclasses
    from pathlib import Path

    import pytest

    # --help and --version exit at once and make no field
    dests = [a.dest for a in options.make_parser()._actions if a.dest not in ("help", argparse.SUPPRESS)]
    fields = [f.name for f in dataclasses.fields(options.RunConfig)]
    assert fields == [*dests, "argv", "given"]  # in --help's order, and no field a flag does not make
    config = options.parse_config(["--score", "a.jsonl", "b.jsonl", "--formats=json, dsl", "--out", "x"])
    assert (config.score, config.formats, config.out, config.argv) == (
        (Path("a.jsonl"), Path("b.jsonl")),
        ("json", "dsl"),  # a comma-separated flag holds its names, parsed once
        Path("x"),
        ("--score", "a.jsonl", "b.jsonl", "--formats=json, dsl", "--out", "x"),
    )
    defaults = options.parse_config([])  # argparse parses a default through the flag's type too
    assert (defaults.encoding, defaults.formats, defaults.sizes, defaults.ids) == (
        ("o200k_base",),
        ("json", "jsonl", "tsv", "edge_list", "dsl"),
        ("small",),
        ("original",),
    )
    assert config.named("--formats", "--model", "--out", "--score") == ["--formats", "--out", "--score"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.score = ()  # type: ignore[misc]
    # frozen all the way down: tuples, not lists
    assert hash(options.parse_config([])) == hash(options.parse_config([]))


def test_models_builds_each_run_config_from_the_commands_own_with_the_models_fields(tmp_path):
    from graphrag_format_benchmark import cli

    base = options.parse_config(
        ["--models", "m.json", "--formats", "json,dsl", "--temperature", "0.5", "--out", str(tmp_path)]
    )
    models = cli.model_configs(
        base,
        [
            ("a", ["--model", "gpt-a", "--base-url", "http://127.0.0.1:9/v1"]),
            ("b", ["--model", "solver", "--temperature", "none", "--concurrency", "2"]),
        ],
    )
    (name_a, a), (name_b, b) = models
    assert (name_a, a.model, a.base_url, a.temperature, a.formats, a.out, a.models) == (
        "a",
        "gpt-a",
        "http://127.0.0.1:9/v1",
        0.5,
        ("json", "dsl"),
        tmp_path / "a",
        None,
    )
    assert (name_b, b.model, b.temperature, b.concurrency, b.out) == ("b", "solver", None, 2, tmp_path / "b")
    assert b.argv == (
        "--formats",
        "json,dsl",
        "--temperature",
        "0.5",
        "--model",
        "solver",
        "--temperature",
        "none",
        "--concurrency",
        "2",
        "--out",
        str(tmp_path / "b"),
    )
    assert base.temperature == 0.5 and base.model is None  # the command's own is untouched


def test_the_version_is_a_checkouts_pyproject_else_the_installed_packages(tmp_path, monkeypatch):
    import importlib.metadata

    assert options.tool_version(ROOT) == "2026.12.2"
    monkeypatch.setattr(importlib.metadata, "version", lambda name: {"graphrag-format-benchmark": "2030.1.1"}[name])
    assert options.tool_version(tmp_path) == "2030.1.1"  # installed: site-packages holds no pyproject.toml
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\nversion = "1.0"\n', encoding="utf-8")
    assert options.tool_version(tmp_path) == "2030.1.1"

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert options.tool_version(tmp_path) == "unknown"


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--batch"], "--batch sends the prompts to a model's Batch API: give it with --model NAME and --base-url URL"),
        (
            ["--batch", "--model", "solver"],  # it said "give --model" to a command that gave one
            "--batch with --model solver: the control solver answers here, with no Batch API; leave out --batch",
        ),
    ],
)
def test_batch_without_a_model_to_send_to_says_which_flag_to_change(tmp_path, capsys, flags, message):
    assert benchmark.main([*flags, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
