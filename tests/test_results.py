"""results.py: per group and format, every metric with its
interval over questions and its spread across permutations."""

import json

import pytest
from kg_graphs import make_cell
from test_runner import PERFECT

from graphrag_format_benchmark import results as results_module, scoring


def test_aggregate_spread_pareto_and_tokens_per_correct_path():
    def cell(fmt, permutation, correct, tokens):
        base = {
            "encoding": "e",
            "size": "small",
            "ids": "original",
            "mode": "A",
            "format": fmt,
            "question_id": "q",
            "repeat": 0,
            "permutation": permutation,
            "prompt_sha256": "x",
            "prompt_tokens": tokens,
            "insufficient": False,
            "hops": "1",
            "status": "OK",
            "truncated_by_server": False,
            "usage_prompt_tokens": None,
            "usage_cached_tokens": None,
            "usage_completion_tokens": None,
            "over_output_cap": False,
            "latency_s": 0.1 * (permutation + 1),
            "retry_wait_s": 0.0,
            "finish_reason": "stop",
            "error": None,
        }
        scores = dict(PERFECT) if correct else {**scoring.FAILED_SCORES._asdict(), "parse_success": True}
        return make_cell(**{**base, **scores})

    scored = [
        cell("json", 0, True, 1000),
        cell("json", 1, False, 1000),
        cell("dsl", 0, True, 500),
        cell("dsl", 1, True, 500),
    ]
    json_row, dsl_row = results_module.aggregate(scored, (None, None))
    assert json_row["path_exact_spread"] == {"mean": 0.5, "min": 0.0, "max": 1.0, "sd": 0.7071, "runs": 2}
    # one question asked in two permutations: one question's value (0.5), no interval from one question
    assert json_row["path_exact"] == {"k": 1, "n": 2, "rate": 0.5, "questions": 1, "ci95": None, "method": None}
    assert (json_row["tokens_per_correct_path"], dsl_row["tokens_per_correct_path"]) == (2000.0, 500.0)
    assert (json_row["pareto"], dsl_row["pareto"]) == (False, True)
    assert json_row["cost"] is None
    assert json_row["latency_s"] == {"median": 0.15, "p95": 0.2}
    assert json_row["finish_reasons"] == {"stop": 2}
    none_right = [c._replace(**{**scoring.FAILED_SCORES._asdict(), "parse_success": True}) for c in scored]
    # no correct path: no star
    assert not any(e.get("pareto") for e in results_module.aggregate(none_right, (None, None)))


def test_hop_buckets_are_the_metrics_of_their_cells_alone_even_where_a_question_spans_two():
    import random

    from graphrag_format_benchmark.results import RATE_METRICS, Columns

    rng = random.Random(7)
    rows = []
    for k in range(400):
        q = k % 8
        row = {m: rng.random() < 0.6 for m in RATE_METRICS}
        row.update(
            question_id=f"q{q}",
            # q3's cells fall in two buckets, q5's are abstention and positive ones: as no run makes them
            hops="1" if q == 3 and k % 3 else ["1", "2", "3", "4+", "abstention"][q % 5],
            insufficient=q in (4, 5) and not (q == 5 and k % 2),
            edge_precision=rng.choice([0.0, 1 / 3, 0.5, 2 / 3, 1.0]),
            edge_recall=rng.random(),
            diagnosis=rng.choice([None, "wrong_answer", "no_json"]),
        )
        rows.append(row)
    col = Columns(*(tuple(r.get(f) for r in rows) for f in Columns._fields))
    by_hops = results_module.hop_metrics(col)
    for bucket, entry in by_hops.items():  # each bucket: its rows alone, as a column of their own
        mine = [r for r in rows if r["hops"] == bucket]
        picked = Columns(*(tuple(r.get(f) for r in mine) for f in Columns._fields))
        assert entry == {
            "n": len(mine),
            **results_module.answer_metrics(picked),
            "diagnoses": results_module.diagnosis_counts(picked.diagnosis),
        }
    assert sorted(by_hops) == ["1", "2", "3", "4+", "abstention"]
    assert by_hops["1"]["answer_correct"]["questions"] == 3  # q0, q5 (its positive cells), q3 (its cells of bucket 1)
    # truths summed once are what the floats' fsum makes
    groups = results_module.question_positions(col)["positive"]
    for metric in RATE_METRICS:
        assert results_module.question_means(col.metric(metric), groups, True) == results_module.question_means(
            col.metric(metric), groups
        )


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
