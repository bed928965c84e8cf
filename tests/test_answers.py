"""answers: Batch files read line by line (read_batch), each line on its own, with a status line when it takes long."""

import json
import re

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


SUCCESS = {
    "id": "batch_req_1",
    "custom_id": "abc-r0",
    "response": {
        "status_code": 200,
        "body": {
            "model": "gpt-x-2024-08-06",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": '{"answer": "x"}'}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 700, "completion_tokens": 40, "prompt_tokens_details": {"cached_tokens": 512}},
        },
    },
    "error": None,
}


def _with(path: tuple, value: object) -> bytes:
    """SUCCESS with the value at path (keys and indices) put in, or the key removed where value is REMOVE."""
    import copy
    import json

    line = copy.deepcopy(SUCCESS)
    at = line
    for key in path[:-1]:
        at = at[key]
    if value is REMOVE:
        del at[path[-1]]
    else:
        at[path[-1]] = value
    return json.dumps(line, ensure_ascii=False).encode()


REMOVE = object()
BATCH_LINES = [
    _with(("id",), "batch_req_1"),  # the success the Batch API writes
    b'{"id": "r", "custom_id": "abc-r1", "response": null, "error": {"code": "server_error", "message": " a \\n b "}}',
    _with(("custom_id",), 17),
    _with(("custom_id",), None),
    _with(("response", "status_code"), 200.0),
    _with(("response", "status_code"), True),
    _with(("response", "status_code"), 500),  # a failed response: its body is the error's text
    _with(("response", "body"), "oops"),
    _with(("response", "body", "model"), 7),
    _with(("response", "body", "choices"), []),
    _with(("response", "body", "choices"), None),
    _with(("response", "body", "choices"), "abc"),
    _with(("response", "body", "choices", 0), 5),
    _with(("response", "body", "choices", 0, "message"), {}),
    _with(("response", "body", "choices", 0, "message"), ["a"]),
    _with(("response", "body", "choices", 0, "message", "content"), 5),
    _with(("response", "body", "choices", 0, "finish_reason"), {"a": 1}),
    _with(("response", "body", "choices", 0, "finish_reason"), REMOVE),
    _with(("response", "body", "usage"), [1]),
    _with(("response", "body", "usage", "prompt_tokens"), 10**30),
    _with(("response", "body", "usage", "prompt_tokens"), -1),
    _with(("response", "body", "usage", "prompt_tokens_details"), "no"),
    _with(("error",), "a text"),
    _with(("error",), {"code": None, "message": 5}),
    _with(("response",), [1]),
    _with(("method",), "POST"),  # a Batch input line
    _with(("body",), None),
    b'{"custom_id": "abc-r0", "custom_id": "abc-r3", "response": null, "error": {"code": "x"}}',  # the last key wins
    b'{"custom_id": "\\ud800-r0", "response": null, "error": {"code": "x"}}',  # msgspec refuses a lone surrogate
    b'{"custom_id": "abc-r0", "response": {"status_code": 200, "body": {"usage": {"prompt_tokens": 1e999}}}}',
]


def test_a_batch_line_read_as_typed_records_gives_the_fields_its_dict_gives():
    """_typed_line (msgspec's typed records, the fast path) reads the two shapes the Batch API writes and leaves every
    other line to the dict: what it reads is what the dict gives, field for field."""
    from graphrag_format_benchmark.runner.log import record_of

    typed = [answers._typed_line(line) for line in BATCH_LINES]
    for line, read in zip(BATCH_LINES, typed):
        r = record_of(line)
        assert read is None or read == (answers._custom_id(r), answers._answer_fields(r)), line
    assert [k for k, read in enumerate(typed) if read is None] == [5, 6, 7, 9, 10, 11, 12, 14, 22, 24, 25, 26, 28, 29]
    assert typed[1] == ("abc-r1", (None, ("batch: server_error: a b", None, None, None, 0.0, None, None, None)))
    assert typed[27][0] == "abc-r3"


def test_a_batch_reading_without_msgspec_keeps_the_same_answers(tmp_path, monkeypatch):
    items, config = items_and_config("--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path))
    ids = [json.loads(line)["custom_id"] for line in batch_output(tmp_path)]  # 30, one for each planned answer
    lines = [re.sub(rb'"abc-r\d"', f'"{custom_id}"'.encode(), line) for line, custom_id in zip(BATCH_LINES, ids)]
    path = tmp_path / "out.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    typed = answers.read_batch([path], items, config)
    monkeypatch.setattr(answers, "_line_decoder", lambda: None)  # msgspec absent: every line read as a dict
    assert answers.read_batch([path], items, config) == typed
    assert len(typed.problems) == 5  # custom_id 17, none, a lone surrogate; two Batch input lines
    assert typed.lines == 25 and sum(a.error is None for a in typed.best.values()) == 11
