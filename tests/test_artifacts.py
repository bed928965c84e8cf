"""artifacts.Outputs: files made in pieces, written and hashed as the pieces come."""

import hashlib

import pytest

import benchmark
from graphrag_format_benchmark.artifacts import Outputs


def test_a_file_made_in_pieces_is_their_bytes_with_its_sha256(tmp_path):
    out = Outputs(tmp_path / "out")
    out.add_chunks("big.json", iter([b"[", b"1, 2", b"]\n"]))
    assert out.read("big.json") == b"[1, 2]\n"
    assert out.sha["big.json"] == hashlib.sha256(b"[1, 2]\n").hexdigest()


def test_a_file_that_cannot_be_written_is_the_run_s_one_line(tmp_path):
    out = Outputs(tmp_path / "out")
    out.staged("results.json").mkdir()  # in the file's place: the write fails
    with pytest.raises(benchmark.BenchmarkError, match=r"cannot write the outputs \(Is a directory\)"):
        out.add_chunks("results.json", iter([b"{}"]))
