"""options.py: the flags, and that docs/flags.md documents every one of them."""

import re

from graphrag_format_benchmark import options

from conftest import ROOT


def test_every_flag_of_help_is_documented_in_docs_flags():
    parser = options.make_parser()
    flags = {o for action in parser._actions for o in action.option_strings if o.startswith("--") and o != "--help"}
    documented = set(re.findall(r"`(--[a-z][a-z-]*)", (ROOT / "docs" / "flags.md").read_text(encoding="utf-8")))
    assert flags == {row[1] for row in options.FLAGS} | {"--no-write-prompts"}  # BooleanOptionalAction adds the --no- form
    assert sorted(flags - documented) == []
    assert sorted(documented - flags) == []  # and no flag that is gone
