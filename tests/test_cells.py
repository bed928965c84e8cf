"""cells: the scored rows as results.json's lines and cells.csv, whole or made in two parts that join byte for byte."""

import hashlib
import json

import pytest

from graphrag_format_benchmark import cells

ROWS = [
    {**dict.fromkeys(cells.CSV_FIELDS), "format": "json", "question_id": "q1", "repeat": r,
     "answer_correct": r % 2 == 0, "edge_recall": r / 3, "diagnosis": None if r % 2 == 0 else "no_path",
     "error": 'a "quoted", comma\nline' if r == 3 else None, "prompt_sha256": "ab" * 32}
    for r in range(5)
]  # fmt: skip


def test_results_json_holds_one_row_a_line_and_reads_as_the_whole_document():
    head = {"schema_version": 1, "name": "Ирина"}
    text = b"".join(cells.json_with_rows(head, "cells", ROWS)).decode("utf-8")
    assert json.loads(text) == {**head, "cells": ROWS}
    lines = text.splitlines()
    assert lines[:4] == ["{", '  "schema_version": 1,', '  "name": "Ирина",', '  "cells": [']
    rows = ["    " + json.dumps(r, ensure_ascii=False) for r in ROWS]
    assert lines[4:9] == [row + ("," if k < 4 else "") for k, row in enumerate(rows)]
    assert lines[9:] == ["  ]", "}"]
    made = b"".join(cells.row_chunks(ROWS, per_chunk=2))  # the same lines made beforehand, in pieces of any size
    pieces = [made[k : k + 7] for k in range(0, len(made), 7)]
    assert b"".join(cells.json_with_rows(head, "cells", ROWS, lines=pieces)).decode("utf-8") == text
    empty = b"".join(cells.json_with_rows(head, "cells", [])).decode("utf-8")
    assert empty == '{\n  "schema_version": 1,\n  "name": "Ирина",\n  "cells": []\n}\n'


def test_two_parts_of_the_rows_join_into_the_whole_files(tmp_path):
    whole = tmp_path / "whole.lines", tmp_path / "whole.csv"
    sha = cells.encode_cells(ROWS, *whole)
    assert sha == hashlib.sha256(whole[1].read_bytes()).hexdigest()
    csv = whole[1].read_text(encoding="utf-8")
    assert csv.startswith(",".join(cells.CSV_FIELDS) + "\n") and '"a ""quoted"", comma\nline"' in csv
    assert csv.splitlines()[1] == ",,,,,json,q1,,,0,,,,,,,,True,,,,0.0,,,,,"  # None is an empty field
    first, second = (tmp_path / "1.lines", tmp_path / "1.csv"), (tmp_path / "2.lines", tmp_path / "2.csv")
    cells.encode_cells(ROWS[:2], *first)
    cells.encode_cells(ROWS[2:], *second, header=False)
    assert first[1].read_bytes() + second[1].read_bytes() == whole[1].read_bytes()
    assert first[0].read_bytes() + b",\n" + second[0].read_bytes() == whole[0].read_bytes()
    assert b"".join(cells.file_pieces(whole[0], size=10)) == whole[0].read_bytes()


def test_the_csv_made_in_chunks_is_the_csv_made_whole_and_has_its_header_with_no_row():
    assert b"".join(cells.csv_chunks(ROWS, per_chunk=2)) == b"".join(cells.csv_chunks(ROWS))
    assert list(cells.csv_chunks([])) == [(",".join(cells.CSV_FIELDS) + "\n").encode()]
    assert b"".join(cells.csv_chunks([], header=False)) == b""


@pytest.mark.parametrize("c_encoder", [True, False])
def test_a_row_is_encoded_as_json_s_own_encoder_writes_it(monkeypatch, c_encoder):
    if not c_encoder:
        monkeypatch.setattr(cells, "c_make_encoder", None)  # Python without the C encoder
    row = {"a": 1, "b": 0.1 + 0.2, "c": float("nan"), "d": float("-inf"), "e": "Ирина \"q\"\n\u2028", "f": None,
           "g": True, "h": [1, {"i": "j"}], "k": 10**20}  # fmt: skip
    encode = cells.row_encoder()
    assert encode(row) == json.JSONEncoder(ensure_ascii=False).encode(row)
    assert encode(row) == encode(row)  # the same encoder again
