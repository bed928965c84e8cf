"""options.py: the flags, and that docs/flags.md documents every one of them."""

import importlib.util
import re

import benchmark
from graphrag_format_benchmark import options

from conftest import ROOT


def test_every_flag_of_help_is_documented_in_docs_flags():
    parser = options.make_parser()
    flags = {o for action in parser._actions for o in action.option_strings if o.startswith("--") and o != "--help"}
    documented = set(re.findall(r"`(--[a-z][a-z-]*)", (ROOT / "docs" / "flags.md").read_text(encoding="utf-8")))
    assert flags == {row[1] for row in options.FLAGS} | {"--no-write-prompts"}  # BooleanOptionalAction adds the --no- form
    assert sorted(flags - documented) == []
    assert sorted(documented - flags) == []  # and no flag that is gone


def test_sending_without_httpx2_is_one_line_before_anything_is_measured(monkeypatch, tmp_path, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "httpx2" else real(name, *a))
    argv = ["--model", "some-model", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "out")]
    assert benchmark.main(argv) == 2
    assert capsys.readouterr().err == ("error: sending to --model needs the httpx2 package, which is not installed; run: pip install -r "
                                       "requirements.lock.txt (or, installed with pip: pip install 'graphrag-format-benchmark[models]')\n")
    assert not (tmp_path / "out").exists()
    assert benchmark.main(["--model", "solver", "--out", str(tmp_path / "solver")]) == 0  # the control solver sends nothing
