"""answers.collect_batch: Batch files read in two halves, one on a forked process, are read as one file."""

import json

import pytest

import benchmark
from graphrag_format_benchmark import answers

from conftest import run_stderr


def batch_output(tmp_path) -> list[str]:
    """An exported batch's output lines: every prompt answered '{}', with usage."""
    batch = tmp_path / "batch.jsonl"
    assert benchmark.main(["--model", "m", "--export-batch", str(batch), "--out", str(tmp_path / "export")]) == 0
    ids = [json.loads(line)["custom_id"] for line in batch.read_text(encoding="utf-8").splitlines()]
    return [
        json.dumps(
            {
                "custom_id": i,
                "response": {
                    "status_code": 200,
                    "body": {
                        "model": "m",
                        "usage": {"prompt_tokens": 900 + k, "completion_tokens": 9},
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": '{"answer": "%d"}' % k},
                                "finish_reason": "stop",
                            }
                        ],
                    },
                },
            }
        )
        for k, i in enumerate(ids)
    ]


def score_both_ways(tmp_path, monkeypatch, capsys, files: dict[str, str]) -> list[tuple[int, str, dict | None]]:
    """--score of the files read whole, then cut in two (FORK_BYTES 1): exit code, stderr, results.json less --out."""
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        paths.append(str(tmp_path / name))
    seen = []
    for fork_bytes in (10**12, 1):
        monkeypatch.setattr(answers, "FORK_BYTES", fork_bytes)
        out = tmp_path / f"scored{fork_bytes}"
        code = benchmark.main(["--model", "m", "--score", *paths, "--out", str(out)])
        result = (
            json.loads((out / "results.json").read_text(encoding="utf-8").replace(str(out), "OUT"))
            if code != 2
            else None
        )
        seen.append((code, run_stderr(capsys).replace(str(out), "OUT"), result))
    return seen


def test_a_batch_read_in_two_halves_gives_the_answers_lines_and_numbers_of_one(tmp_path, monkeypatch, capsys):
    lines = batch_output(tmp_path)
    torn = lines[25][:40]
    text = (
        "\n".join([*lines[:3], "", lines[3], *lines[4:25], "", "", torn, *lines[25:28], lines[4], "{not json"]) + "\n"
    )
    whole, halves = score_both_ways(tmp_path, monkeypatch, capsys, {"out.jsonl": text, "err.jsonl": lines[28] + "\n"})
    assert whole == halves
    assert whole[2]["requests"]["missing"] == 1 and whole[2]["requests"]["lines"] == 29
    assert "line(s) 29, 34 cannot be read and are not scored" in whole[1]


def test_a_conflict_in_the_second_half_is_named_at_its_line_in_the_file(tmp_path, monkeypatch, capsys):
    lines = batch_output(tmp_path)
    conflict = lines[2].replace('"prompt_tokens": 902', '"prompt_tokens": 1')
    whole, halves = score_both_ways(
        tmp_path, monkeypatch, capsys, {"out.jsonl": "\n".join([*lines, "", conflict]) + "\n"}
    )
    assert whole == halves and whole[0] == 2
    assert f"out.jsonl line 32: custom_id {json.loads(lines[2])['custom_id']!r} was given before, at " in whole[1]
    assert "out.jsonl line 3, with other content" in whole[1]


@pytest.mark.parametrize(
    "sizes, expected",
    [
        (
            (100, 0),
            ([("a", 0, 54, 0)], [("a", 54, None, 2), ("b", 0, None, 0)]),
        ),  # at the line that begins after byte 50
        ((40, 100), ([("a", 0, None, 0), ("b", 0, 54, 0)], [("b", 54, None, 2)])),  # after byte 70, 30 into b
        ((100, 100), ([("a", 0, None, 0)], [("b", 0, None, 0)])),  # the half falls on a file's end
        (
            (108, 0),
            ([("a", 0, 54, 0)], [("a", 54, None, 2), ("b", 0, None, 0)]),
        ),  # a line that begins on the half itself
    ],
)
def test_the_files_are_cut_at_the_line_after_half_their_bytes(tmp_path, monkeypatch, sizes, expected):
    monkeypatch.setattr(answers, "FORK_BYTES", 1)
    monkeypatch.setattr(answers, "two_cores", lambda: True)
    paths = []
    for name, size in zip("ab", sizes):
        (tmp_path / name).write_bytes((b"x" * 26 + b"\n") * (size // 27) + b"y" * (size % 27))
        paths.append(tmp_path / name)
    first, second = answers._halves(paths)
    named = lambda segments: [(p.name, *rest) for p, *rest in segments]  # noqa: E731
    assert (named(first), named(second)) == expected
