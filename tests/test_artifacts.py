"""artifacts.Outputs: files made in pieces, or written on a thread of their own while the run goes on, in their place
among the outputs."""

import hashlib

import pytest

import benchmark
from graphrag_format_benchmark.artifacts import Outputs


def test_a_file_made_in_pieces_is_their_bytes_with_its_sha256(tmp_path):
    out = Outputs(tmp_path / "out")
    out.add_chunks("big.json", iter([b"[", b"1, 2", b"]\n"]))
    assert out.read("big.json") == b"[1, 2]\n"
    assert out.sha["big.json"] == hashlib.sha256(b"[1, 2]\n").hexdigest()


def test_a_file_written_behind_is_its_parts_in_order_and_keeps_its_place(tmp_path):
    out = Outputs(tmp_path / "out")
    out.add("cells.csv", b"a,b\n")
    lines = out.staged(".lines")
    lines.write_bytes(b"x" * (3 << 24) + b"y")  # more than the thread's buffer: read in turns
    out.add_behind("results.json", [b"{", lines, b",", lines, b"}"])
    out.add("results.md", b"# results\n")  # while the thread writes
    out.settle()
    whole = b"{" + b"x" * (3 << 24) + b"y," + b"x" * (3 << 24) + b"y}"
    assert out.read("results.json") == whole
    assert out.sha["results.json"] == hashlib.sha256(whole).hexdigest()
    assert list(out.sha) == ["cells.csv", "results.json", "results.md"]
    assert out.behind == []


def test_an_error_of_a_file_written_behind_is_raised_by_settle_as_the_run_s_one_line(tmp_path):
    out = Outputs(tmp_path / "out")
    out.add("report.html", b"<html>")
    out.add_behind("results.json", [b"{", tmp_path / "gone.lines", b"}"])
    with pytest.raises(benchmark.BenchmarkError, match=r"cannot write the outputs \(No such file or directory\)"):
        out.settle()


def test_discard_waits_for_a_file_written_behind_and_leaves_nothing(tmp_path):
    out = Outputs(tmp_path / "out")
    lines = out.staged(".lines")
    lines.write_bytes(b"z" * (1 << 26))
    out.add_behind("results.json", [lines, lines])
    out.discard()
    assert not (tmp_path / "out").exists()  # the run made the folder: it goes too


@pytest.mark.parametrize("kernel", ["copies", "refuses", "absent"])
def test_a_file_written_behind_is_the_same_bytes_however_the_kernel_copies(tmp_path, monkeypatch, kernel):
    import errno
    import os

    from graphrag_format_benchmark import artifacts

    if kernel == "refuses":  # a file system that cannot (EXDEV): the rest through a buffer

        def refuse(*args):
            raise OSError(errno.EXDEV, "Invalid cross-device link")

        monkeypatch.setattr(os, "copy_file_range", refuse, raising=False)
    elif kernel == "absent":  # another platform
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    monkeypatch.setattr(artifacts, "HASH_WINDOW", 1 << 16)  # hashed through several mapped windows
    out = Outputs(tmp_path / "out")
    lines, empty = out.staged(".lines"), out.staged(".empty")
    lines.write_bytes(bytes(range(256)) * 1000 + b"end")  # 3 windows and a part of one
    empty.write_bytes(b"")
    out.add_behind("results.json", [b"{", lines, empty, b",", lines, b"}"])
    out.settle()
    whole = b"{" + lines.read_bytes() + b"," + lines.read_bytes() + b"}"
    assert out.read("results.json") == whole
    assert out.sha["results.json"] == hashlib.sha256(whole).hexdigest()
