"""answers: Batch files read line by line (read_batch), whole or as two halves of the prompts, which merge into what
one reading gives (merged)."""

from kg_graphs import measured_items

from graphrag_format_benchmark import answers, options
from graphrag_format_benchmark.answers import CUSTOM_ID, _in_first_order

from conftest import batch_output


def items_and_config(*argv: str):
    """The measured items and the model's config of a command."""
    args, items = measured_items(*argv)
    return items, options.make_model_config(args)


def test_custom_id_is_read_from_a_line_s_bytes_only_at_the_object_s_top_level():
    shown = {
        b'{"id": "batch_req_1", "custom_id": "abc-r0", "response": {}}': b"abc-r0",
        b'{"custom_id":"x-r1","response":null}': b"x-r1",
        b'{ "id" : "a" ,\t"custom_id" : "y-r2"}': b"y-r2",
        b'{"custom_id": "a-r0", "custom_id": "b-r0", "x": 1}': b"b-r0",  # the last of two, as JSON keeps it
    }
    for line, custom_id in shown.items():
        found = CUSTOM_ID.match(line)
        assert found is not None and found[1] == custom_id
    for line in (
        b'{"response": {"custom_id": "nested-r0"}}',  # not at the top level
        b'{"id": 7, "custom_id": "after-a-number-r0"}',  # after a value that is not a string
        b'{"a\\"": "b", "custom_id": "after-an-escape-r0"}',
        b'{"custom_id": "escaped\\u0041-r0"}',
        b'{"custom_id": 5}',
        b' {"custom_id": "after-a-space-r0"}',
    ):
        assert CUSTOM_ID.match(line) is None, line


def test_counts_of_two_halves_are_summed_in_the_order_of_their_first_line():
    first = {"stop": [3, (0, 9)], "length": [1, (1, 2)]}
    second = {"length": [2, (0, 4)], "server": [3, (0, 1)]}
    total = _in_first_order([first, second])
    assert list(total.items()) == [("server", 3), ("length", 3), ("stop", 3)]  # length's first line: file 0, line 4
    assert total.most_common() == [("server", 3), ("length", 3), ("stop", 3)]  # ties as one reading breaks them


def test_each_half_reads_only_its_own_prompts_lines_and_together_they_are_the_whole(tmp_path):
    items, config = items_and_config("--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path))
    lines = batch_output(tmp_path)
    path = tmp_path / "out.jsonl"
    path.write_text("\n".join([*lines, "{not json", lines[0].replace('"custom_id"', '"custom_id": "x", "y"')]) + "\n")
    second = {item.row["prompt_sha256"] for item in items[len(items) // 2 :]}
    whole = answers.read_batch([path], items, config)
    mine, theirs = (answers.read_batch([path], items, config, (side, second)) for side in (0, 1))
    assert not (mine.rerouted or theirs.rerouted)
    assert mine.best.keys().isdisjoint(theirs.best.keys()) and {**mine.best, **theirs.best} == whole.best
    assert {sha for sha, _ in theirs.best} == second
    assert sorted(mine.unreadable + theirs.unreadable) == whole.unreadable == [(0, 31)]
    assert mine.lines + theirs.lines == whole.lines == len(lines)


def test_lines_decoded_before_the_prompts_were_known_and_the_rest_read_after_are_one_reading(tmp_path):
    items, config = items_and_config("--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path))
    lines = batch_output(tmp_path)
    twice = lines[3].replace('"completion_tokens": 9', '"completion_tokens": 8')  # the same custom_id, other bytes
    out, err = tmp_path / "out.jsonl", tmp_path / "err.jsonl"
    out.write_text("\n".join([*lines[:5], "", "{torn", *lines[5:20], twice]) + "\n\n", encoding="utf-8")
    err.write_text("\n".join(lines[20:]) + "\n", encoding="utf-8")
    paths = [out, err]
    second = {item.row["prompt_sha256"] for item in items[len(items) // 2 :]}
    halves = [None, (0, second), (1, second)]
    whole = [answers.read_batch(paths, items, config, half) for half in halves]
    for stop in range(0, 34):  # before each line of both files, and after the last
        early = answers.decoded_lines(paths, lambda n, stop=stop: n >= stop)
        assert len(early[0]) == min(stop, 32)
        assert [answers.read_batch(paths, items, config, half, early) for half in halves] == whole, stop
    # six records (lines 1-5 and the torn line 7): the reading goes on at line 8
    assert answers.decoded_lines(paths, lambda n: n >= 6)[1] == (0, len("\n".join([*lines[:5], "", "{torn"]) + "\n"), 7)
    assert answers.decoded_lines(paths, lambda n: False)[1] == (2, 0, 0)
    assert whole[0].problems[0][:2] == (0, 23) and "out.jsonl line 4, with other content" in whole[0].problems[0][2]


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
    answers.read_batch([path], items, config)  # nobody to tell: the forked half
    assert capsys.readouterr().err == ""
