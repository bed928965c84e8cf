"""extras.py: a missing optional library names the extra that installs it, for every path that imports one."""

import sys
import tomllib

import pytest

import benchmark
from graphrag_format_benchmark import extras

from conftest import ROOT

FIX = "run: pip install 'graphrag-format-benchmark[{}]', or pip install -r requirements.lock.txt in a checkout"


def test_the_extras_are_those_of_pyproject():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert {name: tuple(packages) for name, packages in declared.items() if name != "all"} == extras.EXTRAS


@pytest.mark.parametrize(
    "module, name, body, needs, package, extra",
    [
        ("tokenizers", "tokenizer.json", "{}", "--encoding hf:{}", "tokenizers", "hf"),
        ("networkx", "g.graphml", "<graphml/>", "{}: reading GraphML", "networkx", "graphs"),
        ("rdflib", "g.ttl", "", "{}: reading RDF", "rdflib", "graphs"),
        ("pyarrow.parquet", "", "", "--graph {}: reading GraphRAG's parquet tables", "pyarrow", "graphs"),
    ],
)
def test_a_reader_whose_library_is_missing_names_its_extra(
    tmp_path, capsys, monkeypatch, module, name, body, needs, package, extra
):
    monkeypatch.setitem(sys.modules, module, None)  # import module now raises ImportError
    if name:
        (tmp_path / name).write_text(body, encoding="utf-8")
    else:
        for table in ("entities.parquet", "relationships.parquet"):
            (tmp_path / table).write_bytes(b"")
    path = benchmark.display(tmp_path / name) if name else benchmark.display(tmp_path)
    flag = ["--encoding", f"hf:{path}"] if module == "tokenizers" else ["--graph", path]
    assert benchmark.main([*flag, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"error: {needs.format(path)} needs the {package} package, which is not installed; {FIX.format(extra)}\n"
    )
    assert not (tmp_path / "out").exists()
