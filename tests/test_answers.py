"""answers: Batch files read line by line (read_batch), each line on its own, with a status line when it takes long."""

from kg_graphs import measured_items

from graphrag_format_benchmark import answers, options
from graphrag_format_benchmark.answers import _in_first_order

from conftest import batch_output


def items_and_config(*argv: str):
    """The measured items and the model's config of a command."""
    args, items = measured_items(*argv)
    return items, options.make_model_config(args)


def test_counts_are_in_the_order_of_their_first_line():
    counts = {"stop": [3, (0, 9)], "length": [2, (0, 4)], "server": [3, (0, 1)]}
    total = _in_first_order(counts)
    assert list(total.items()) == [("server", 3), ("length", 2), ("stop", 3)]
    assert total.most_common() == [("server", 3), ("stop", 3), ("length", 2)]  # ties: the earlier first line


def test_a_reading_keeps_every_answer_notes_what_it_cannot_read_and_names_a_custom_id_given_twice(tmp_path):
    items, config = items_and_config("--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path))
    lines = batch_output(tmp_path)
    twice = lines[3].replace('"completion_tokens": 9', '"completion_tokens": 8')  # the same custom_id, other bytes
    out, err = tmp_path / "out.jsonl", tmp_path / "err.jsonl"
    out.write_text("\n".join([*lines[:5], "", "{torn", *lines[5:20], twice]) + "\n\n", encoding="utf-8")
    err.write_text("\n".join(lines[20:]) + "\n", encoding="utf-8")
    part = answers.read_batch([out, err], items, config)
    assert part.unreadable == [(0, 7)] and part.lines == len(lines)
    assert part.problems[0][:2] == (0, 23) and "out.jsonl line 4, with other content" in part.problems[0][2]


def test_a_long_reading_of_batch_lines_says_how_far_it_is_on_stderr(tmp_path, monkeypatch, capsys):
    import re

    from graphrag_format_benchmark import progress

    items, config = items_and_config("--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path))
    lines = batch_output(tmp_path)
    path = tmp_path / "out.jsonl"
    path.write_text("\n".join(lines * 240) + "\n", encoding="utf-8")  # 7,200 lines, the same bytes again: 2.1 MB
    capsys.readouterr()
    quiet = answers.read_batch([path], items, config, shown=answers.READING)  # a reading under PROGRESS_AFTER
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(progress, "PROGRESS_AFTER", 0.0)  # as if it had taken long
    assert answers.read_batch([path], items, config, shown=answers.READING) == quiet
    assert path.stat().st_size >> 20 == 2  # 3 MB, rounded up
    assert re.fullmatch(r"3/3 MB of Batch files, \d+ s, reading the Batch lines\n", capsys.readouterr().err)
    answers.read_batch([path], items, config)  # nothing to say: no status line asked for
    assert capsys.readouterr().err == ""
