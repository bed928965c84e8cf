"""results.py: results.json's cells, cells.csv, results.md and the console lines."""

import json

import pytest
from kg_graphs import make_cell

from graphrag_format_benchmark import results as results_module

# -----------------------------------------------------------------------------
# the scored cells as files: results_module.json's lines and cells.csv

ROWS = [
    make_cell(format="json", question_id="q1", repeat=r,
     answer_correct=r % 2 == 0, edge_recall=r / 3, diagnosis=None if r % 2 == 0 else "no_path",
     error='a "quoted", comma\nline' if r == 3 else None, prompt_sha256="ab" * 32)
    for r in range(5)
]  # fmt: skip


def test_results_json_holds_one_row_a_line_and_reads_as_the_whole_document():
    head = {"schema_version": 1, "name": "Ирина"}
    text = b"".join(results_module.json_with_rows(head, "cells", ROWS)).decode("utf-8")
    assert json.loads(text) == {**head, "cells": [r.as_json() for r in ROWS]}
    lines = text.splitlines()
    assert lines[:4] == ["{", '  "schema_version": 1,', '  "name": "Ирина",', '  "cells": [']
    rows = ["    " + json.dumps(r.as_json(), ensure_ascii=False) for r in ROWS]
    assert lines[4:9] == [row + ("," if k < 4 else "") for k, row in enumerate(rows)]
    assert lines[9:] == ["  ]", "}"]
    # the lines in chunks of any size are the lines made whole
    assert b"".join(results_module.row_chunks(ROWS, per_chunk=2)) == b"".join(results_module.row_chunks(ROWS))
    empty = b"".join(results_module.json_with_rows(head, "cells", [])).decode("utf-8")
    assert empty == '{\n  "schema_version": 1,\n  "name": "Ирина",\n  "cells": []\n}\n'


def test_cells_csv_quotes_what_a_spreadsheet_needs_and_leaves_none_empty():
    csv = b"".join(results_module.csv_chunks(ROWS)).decode("utf-8")
    assert csv.startswith(",".join(results_module.CSV_FIELDS) + "\n") and '"a ""quoted"", comma\nline"' in csv
    assert csv.splitlines()[1] == ",,,,,json,q1,,,0,,,,,,,,True,,,,0.0,,,,,"  # None is an empty field


def test_the_csv_made_in_chunks_is_the_csv_made_whole_and_has_its_header_with_no_row():
    assert b"".join(results_module.csv_chunks(ROWS, per_chunk=2)) == b"".join(results_module.csv_chunks(ROWS))
    assert list(results_module.csv_chunks([])) == [(",".join(results_module.CSV_FIELDS) + "\n").encode()]
    assert b"".join(results_module.csv_chunks([], header=False)) == b""


@pytest.mark.parametrize("c_encoder", [True, False])
def test_a_row_is_encoded_as_json_s_own_encoder_writes_it(monkeypatch, c_encoder):
    if not c_encoder:
        monkeypatch.setattr(results_module, "c_make_encoder", None)  # Python without the C encoder
    row = {"a": 1, "b": 0.1 + 0.2, "c": float("nan"), "d": float("-inf"), "e": "Ирина \"q\"\n\u2028", "f": None,
           "g": True, "h": [1, {"i": "j"}], "k": 10**20}  # fmt: skip
    encode = results_module.row_encoder()
    assert encode(row) == json.JSONEncoder(ensure_ascii=False).encode(row)
    assert encode(row) == encode(row)  # the same encoder again
