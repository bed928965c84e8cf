"""The optional libraries: which of pyproject.toml's extras installs each, and what to say when one is missing.

In: what needs a library, its package name and its extra. Out: one BenchmarkError whose fix works for a user who
installed the tool with pip (the extra) and for one who runs a checkout (the lock file), as the README sets up both.
"""

from __future__ import annotations

from ._article import BenchmarkError

# extra -> the packages it installs: pyproject.toml's [project.optional-dependencies] (tests/test_options.py holds them
# equal), each imported only on the path that needs it
EXTRAS = {
    "models": ("httpx2", "msgspec"),
    "hf": ("tokenizers",),
    "graphs": ("networkx", "rdflib", "pyarrow"),
    "peers": ("toon-format", "PyYAML", "rdflib", "ison-py", "ison-graph"),
}


def not_installed(needs: str, package: str, extra: str) -> BenchmarkError:
    """The error for a missing library: ("--formats toon", "toon-format", "peers") -> "--formats toon needs the
    toon-format package, which is not installed; run: pip install 'graphrag-format-benchmark[peers]', or pip install
    -r requirements.lock.txt in a checkout"."""
    assert package in EXTRAS[extra], (package, extra)
    return BenchmarkError(
        f"{needs} needs the {package} package, which is not installed; run: pip install "
        f"'graphrag-format-benchmark[{extra}]', or pip install -r requirements.lock.txt in a checkout"
    )
