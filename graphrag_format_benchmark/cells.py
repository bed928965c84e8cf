"""The scored cells as files: results.json's lines (one cell a line, among the results' figures) and cells.csv.

In: the scored rows (scoring.Cell), in the items' order. Out: bytes, or files written into the staging folder by the
process that scored the rows (encode_cells: a fork beside the figures, or a Batch score's second half, halves), so
that the rows' text never travels through a pipe; results.write_results puts results.json together from them.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Mapping, Sequence

from benchmark import json_bytes, sha256_hex

if TYPE_CHECKING:
    from .scoring import Cell


def json_with_rows(
    head: dict,
    key: str,
    rows: Sequence[Mapping[str, object]],
    per_chunk: int = 2000,
    lines: Iterable[bytes] | None = None,
) -> Iterator[bytes]:
    """json_bytes of {**head, key: rows}, with each row on one line, in chunks: the same JSON, written by the C
    encoder (the indenting one is pure Python, and 100,000 rows took seconds) and never whole in memory. lines: the
    rows' lines made beforehand (row_lines), in pieces of any size."""
    body = json_bytes({**head, key: []}).rstrip()
    if not rows:
        yield body + b"\n"
        return
    yield body[: -len(b"[]\n}")] + b"[\n"
    if lines is None:
        lines = (
            row_lines(rows[start : start + per_chunk]) + (b",\n" if start + per_chunk < len(rows) else b"")
            for start in range(0, len(rows), per_chunk)
        )
    yield from lines
    yield b"\n  ]\n}\n"


def row_lines(rows: Sequence[Mapping[str, object]], per_chunk: int = 2000) -> bytes:
    """The rows of json_with_rows, one a line, joined by ',\\n' (no separator after the last); encoded a chunk at a
    time, so that the text of all of them is never held beside its bytes."""
    encode = json.JSONEncoder(ensure_ascii=False).encode
    return b",\n".join(
        ",\n".join("    " + encode(r) for r in rows[start : start + per_chunk]).encode("utf-8")
        for start in range(0, len(rows), per_chunk)
    )


CELL_LINES = ".results.json.cells"  # results.json's cell lines, staged by encode_cells and read back once


def encode_cells(rows: list[Cell], json_lines: Path, csv_path: Path, header: bool = True) -> str:
    """The scored rows as results.json (row_lines, into json_lines) and cells.csv (whole, into csv_path; its header
    line unless header is False) hold them, written into the staging folder; cells.csv's SHA-256 returned. Run on a
    forked process while this one makes the figures (write_results): what it makes never travels back through a
    pipe."""
    json_lines.write_bytes(row_lines(rows))
    data = cells_csv(rows, header)
    csv_path.write_bytes(data)
    return sha256_hex(data)


def file_pieces(path: Path, size: int = 1 << 22) -> Iterator[bytes]:
    """A file's bytes, 4 MiB at a time."""
    with open(path, "rb") as f:
        yield from iter(lambda: f.read(size), b"")


CSV_FIELDS = (
    "encoding",
    "size",
    "ids",
    "permutation",
    "mode",
    "format",
    "question_id",
    "hops",
    "insufficient",
    "repeat",
    "status",
    "prompt_tokens",
    "usage_prompt_tokens",
    "usage_completion_tokens",
    "parse_success",
    "json_as_asked",
    "abstained",
    "answer_correct",
    "path_exact",
    "valid_path",
    "edge_precision",
    "edge_recall",
    "evidence_match",
    "diagnosis",
    "finish_reason",
    "latency_s",
    "error",
)


def cells_csv(scored: list[Cell], header: bool = True) -> bytes:
    """cells.csv: one line per scored cell, for a spreadsheet, after a header line (unless header is False)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(CSV_FIELDS)
    for s in scored:
        writer.writerow(["" if (v := s.get(f)) is None else v for f in CSV_FIELDS])
    return out.getvalue().encode("utf-8")
