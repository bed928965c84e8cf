"""halves: a Batch score with its second half read, scored and encoded on a forked process makes the same outputs, the
same errors and the same exit code as one process."""

import json
import os

import pytest

import benchmark
from graphrag_format_benchmark import cores, halves, model_run, results, scoring
from graphrag_format_benchmark.answers import collect_batch

from conftest import batch_output, run_stderr

pytestmark = pytest.mark.skipif(not cores.two_cores(), reason="one core: nothing is forked")


def score_both_ways(
    tmp_path, monkeypatch, capsys, files: dict[str, str]
) -> list[tuple[int, str, dict | None, bytes, str]]:
    """--score of the files by one process, then in two halves (every run worth a fork), then in two halves with the
    first 7 lines decoded by the early reader before the prompts were measured (its output checked the same as the
    halves'): exit code, stderr, results.json, cells.csv and report.html, less --out."""
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        paths.append(str(tmp_path / name))
    seen = []
    taken: list = []
    real = halves.received
    monkeypatch.setattr(halves, "received", lambda end: taken.append(real(end)) or taken[-1])  # this process's
    for split, early in ((False, False), (True, False), (True, True)):
        monkeypatch.setattr(halves, "worth_forking", lambda cells: split)
        monkeypatch.setattr(halves, "EARLY_BYTES", 0 if early else halves.EARLY_BYTES)
        monkeypatch.setattr(halves, "EARLY_LINES", 7)
        out = tmp_path / f"scored{split}{early}"
        code = benchmark.main(["--model", "m", "--score", *paths, "--out", str(out)])
        result, csv, page = None, b"", ""
        if code != 2:
            result = json.loads((out / "results.json").read_text(encoding="utf-8").replace(str(out), "OUT"))
            csv = (out / "cells.csv").read_bytes()
            page = (out / "report.html").read_text(encoding="utf-8").replace(str(out), "OUT")
            assert not list(out.glob(".*")), "a staged file was left"
        seen.append((code, run_stderr(capsys).replace(str(out), "OUT"), result, csv, page))
    assert len(taken) == 1 and taken[0] is not None, "the early reader's lines were not taken"
    assert seen[2] == seen[1]
    return seen[:2]


def test_the_halves_give_the_answers_lines_and_numbers_of_one_reading(tmp_path, monkeypatch, capsys):
    lines = batch_output(tmp_path)
    torn = lines[25][:40]
    text = (
        "\n".join([*lines[:3], "", lines[3], *lines[4:25], "", "", torn, *lines[25:28], lines[4], "{not json"]) + "\n"
    )
    one, two = score_both_ways(tmp_path, monkeypatch, capsys, {"out.jsonl": text, "err.jsonl": lines[28] + "\n"})
    assert one == two
    assert one[2]["requests"]["missing"] == 1 and one[2]["requests"]["lines"] == 29
    assert "line(s) 29, 34 cannot be read and are not scored" in one[1]
    assert len(one[3].splitlines()) == 31  # the header and every planned cell


def test_a_conflict_in_the_second_half_is_named_at_its_line_in_the_file(tmp_path, monkeypatch, capsys):
    lines = batch_output(tmp_path)
    conflict = lines[20].replace('"prompt_tokens": 920', '"prompt_tokens": 1')
    one, two = score_both_ways(tmp_path, monkeypatch, capsys, {"out.jsonl": "\n".join([*lines, "", conflict]) + "\n"})
    assert one == two and one[0] == 2
    assert f"out.jsonl line 32: custom_id {json.loads(lines[20])['custom_id']!r} was given before, at " in one[1]
    assert "out.jsonl line 21, with other content" in one[1]


def test_errors_of_both_halves_come_in_the_files_order(tmp_path, monkeypatch, capsys):
    lines = batch_output(tmp_path)
    unknown = lines[25].replace('-r0"', '-r9"')
    uploaded = json.dumps({"custom_id": json.loads(lines[2])["custom_id"], "method": "POST", "body": {}})
    text = "\n".join([*lines[:5], unknown, *lines[5:], uploaded]) + "\n"
    one, two = score_both_ways(tmp_path, monkeypatch, capsys, {"out.jsonl": text})
    assert one == two and one[0] == 2
    assert one[1].index("out.jsonl line 6: custom_id") < one[1].index("out.jsonl line 32 is a Batch input line")


def test_a_line_whose_custom_id_is_not_what_its_bytes_show_voids_the_halves(tmp_path, monkeypatch, capsys):
    lines = batch_output(tmp_path)
    first, last = (json.loads(lines[k])["custom_id"] for k in (0, 29))
    # JSON keeps the last of two keys: the line's bytes begin with the first prompt's custom_id, it is the last's
    twice = lines[29].replace(last, first)[:-1] + f', "custom_id": "{last}"}}'
    text = "\n".join([*lines[1:29], twice]) + "\n"
    read_as_one = []
    monkeypatch.setattr(model_run, "collect_batch", lambda *a: read_as_one.append(1) or collect_batch(*a))
    one, two = score_both_ways(tmp_path, monkeypatch, capsys, {"out.jsonl": text})
    assert one == two and one[0] == 1 and len(read_as_one) == 3  # the runs in halves began so, then read as one
    assert one[2]["requests"]["lines"] == 29 and one[2]["requests"]["missing"] == 1  # the first prompt's
    status = {c["prompt_sha256"][:40]: c["status"] for c in one[2]["cells"]}
    assert status[last.split("-r")[0]] == "OK" and status[first.split("-r")[0]] == "ERROR"


def test_an_error_of_the_forked_half_is_raised_here(tmp_path, monkeypatch, capsys):
    path = tmp_path / "out.jsonl"
    path.write_text("\n".join(batch_output(tmp_path)) + "\n", encoding="utf-8")
    monkeypatch.setattr(halves, "worth_forking", lambda cells: True)
    real = scoring.score_log

    def fails_on_the_second_half(answers, items, config, examples=None, shown=None):
        if examples == {}:  # the forked half's: a fresh dict of found examples
            raise MemoryError("no memory for the second half")
        return real(answers, items, config, examples, shown)

    monkeypatch.setattr(halves, "score_log", fails_on_the_second_half)
    with pytest.raises(MemoryError, match="^no memory for the second half$"):
        benchmark.main(["--model", "m", "--score", str(path), "--out", str(tmp_path / "scored")])
    assert not (tmp_path / "scored").exists()  # nothing half-written


@pytest.mark.parametrize("page_cells", [10, 15, 20])  # fewer, as many and more than the first half holds
def test_the_page_shows_the_same_first_cells_and_answers_whichever_half_scored_them(
    tmp_path, monkeypatch, capsys, page_cells
):
    monkeypatch.setattr(results, "REPORT_CELLS", page_cells)
    monkeypatch.setattr(halves, "REPORT_CELLS", page_cells)
    lines = batch_output(tmp_path)  # 30 cells: 15 in each half
    one, two = score_both_ways(tmp_path, monkeypatch, capsys, {"out.jsonl": "\n".join(lines) + "\n"})
    assert one == two
    assert f"the page holds the first {page_cells:,} of 30 cells; cells.csv has them all" in one[4]
    assert '{\\"answer\\": \\"%d\\"}' % (page_cells - 1) in one[4].replace("\\u003c", "<")  # its answer shown


def dies(*args):
    os._exit(9)  # as the kernel's out-of-memory killer ends a process
    yield


def test_a_forked_half_that_dies_is_the_run_s_one_line_error_and_nothing_is_written(tmp_path, monkeypatch, capsys):
    path = tmp_path / "out.jsonl"
    path.write_text("\n".join(batch_output(tmp_path)) + "\n", encoding="utf-8")
    monkeypatch.setattr(halves, "worth_forking", lambda cells: True)
    monkeypatch.setattr(halves, "_second_half", dies)
    assert benchmark.main(["--model", "m", "--score", str(path), "--out", str(tmp_path / "scored")]) == 2
    assert run_stderr(capsys).splitlines()[-1] == (
        "error: --score: the process that reads, scores and writes the second half of the Batch lines: the forked "
        "process ended without its result (exit code 9); free some memory and run the same command again"
    )
    assert not (tmp_path / "scored").exists()


def test_the_early_reader_starts_only_for_large_files_and_is_gone_when_the_run_ends(tmp_path, monkeypatch):
    lines = batch_output(tmp_path)
    batch = tmp_path / "out.jsonl"
    batch.write_text("\n".join([*lines[:3], "{torn", *lines[3:]]) + "\n", encoding="utf-8")
    log = tmp_path / "requests.jsonl"
    log.write_text('{"type": "run"}\n' * 3, encoding="utf-8")
    with halves.early_reading([batch]):  # 30 lines: under EARLY_BYTES
        assert halves._early == [] and halves._asked([batch], {}) is None
    with halves.early_reading(None), halves.early_reading([tmp_path / "absent.jsonl"]):
        assert halves._early == []
    monkeypatch.setattr(halves, "EARLY_BYTES", 0)
    monkeypatch.setattr(halves, "EARLY_LINES", 5)
    prefix = [json.loads(line)["custom_id"].rpartition("-r")[0] for line in lines]
    with halves.early_reading([batch]):
        reader = halves._early[0]
        assert halves._asked([batch], {prefix[1]: 1, prefix[3]: 1}) is reader
        mine, theirs = halves.received(reader.mine), halves.received(reader.theirs)
        # five lines decoded: the torn one (line 4) is the first half's, as is every line that matches no prompt
        assert [r[1] for r in mine[0]] == [1, 3, 4] and [r[1] for r in theirs[0]] == [2, 5]
        assert mine[1] == theirs[1] == (0, len("\n".join([*lines[:3], "{torn", lines[3]]) + "\n"), 5)
        reader.process.join(60)
        assert not reader.process.is_alive()
    assert halves._early == []
    monkeypatch.setattr(halves, "EARLY_LINES", None)
    monkeypatch.setattr(halves, "EARLY_MAX_LINES", 3)
    with halves.early_reading([batch]):  # never more lines than EARLY_MAX_LINES, however late it is asked
        reader = halves._early[0]
        reader.process.join(0.5)  # time to read them all, were there no bound (nothing is asserted of the time)
        asked = halves._asked([batch], {})
        mine, theirs = halves.received(asked.mine), halves.received(asked.theirs)
        assert len(mine[0]) <= 3 and theirs[0] == []
        assert mine[1][2] == (mine[0][-1][1] if mine[0] else 0)  # the halves read on after its last line
    with halves.early_reading([log]):  # a log of this tool: nothing is decoded early, and asking never waits
        reader = halves._early[0]
        asked = halves._asked([log], {f"{k:040x}": k % 2 for k in range(20_000)})  # more than a pipe holds
        assert halves.received(asked.mine) is None and halves.received(asked.theirs) is None
    with halves.early_reading([batch]):  # other files than the reader's, or no halves: stopped, nothing asked
        reader = halves._early[0]
        assert halves._asked([log], {}) is None and not reader.process.is_alive()
    with halves.early_reading([batch]):
        reader = halves._early[0]
    assert not reader.process.is_alive() and halves._early == []  # never asked: ended with the block


@pytest.mark.parametrize("split", [False, True])
def test_a_long_score_says_how_far_it_is_on_stderr_once_per_run(tmp_path, monkeypatch, capsys, split):
    import re

    from graphrag_format_benchmark import progress

    path = tmp_path / "out.jsonl"
    path.write_text("\n".join(batch_output(tmp_path)) + "\n", encoding="utf-8")
    monkeypatch.setattr(halves, "worth_forking", lambda cells: split)
    monkeypatch.setattr(progress, "PROGRESS_AFTER", 0.0)  # as if it had taken long
    capsys.readouterr()
    assert benchmark.main(["--model", "m", "--score", str(path), "--out", str(tmp_path / "scored")]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if not line.startswith(("error", "warning"))]
    said = [line for line in said if " cells, " not in line]  # the measurement's own
    scoring = "scoring the first half of the prompts (the second half on another process)" if split else "scoring"
    assert len(said) == 3, said  # this process's lines only: the forked half says nothing
    assert re.fullmatch(r"1/1 MB of Batch files, \d+ s, reading the Batch lines", said[0])
    assert re.fullmatch(rf"{15 if split else 30}/{15 if split else 30} prompts, \d+ s, {re.escape(scoring)}", said[1])
    assert said[2] == ("the answers are scored; making the figures and writing results.json, cells.csv and report.html")
