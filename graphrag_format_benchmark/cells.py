"""The scored cells in the shapes the results are made from: results.json's lines (one cell a line, among the
results' figures), cells.csv, and each group and format's columns (what the aggregates count).

In: the scored rows (scoring.Cell), in the items' order. Out: bytes, or files written into the staging folder by the
process that scored the rows (encode_cells: a fork beside the figures, or a Batch score's second half, halves), so
that the rows' text never travels through a pipe; results.write_results puts results.json together from them. The
columns (grouped) of two parts of the rows join into those of the whole (joined_groups): a Batch score's second half
sends its columns, never its rows.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import operator
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping, Sequence

from benchmark import json_bytes

if TYPE_CHECKING:
    from .scoring import Cell


RATE_METRICS = (
    "parse_success",
    "answer_correct",
    "path_exact",
    "valid_path",
    "evidence_match",
    "path_supports_answer",
    "false_abstention",
)
MEAN_METRICS = ("edge_precision", "edge_recall")
METRIC_FIELDS = ("question_id", "insufficient", *RATE_METRICS, *MEAN_METRICS)
AGGREGATE_FIELDS = (
    *METRIC_FIELDS,
    "status",
    "hops",
    "error",
    "truncated_by_server",
    "prompt_tokens",
    "over_output_cap",
    "finish_reason",
    "permutation",
    "repeat",
    "usage_prompt_tokens",
    "usage_completion_tokens",
    "usage_cached_tokens",
    "latency_s",
    "retry_wait_s",
    "right_answer_wrong_path",
    "diagnosis",
    "json_as_asked",
)


def columns(rows: Sequence[Mapping[str, object]], fields: tuple[str, ...]) -> dict[str, tuple]:
    """The rows' fields as columns, in one pass over the rows: counting then runs in C loops over the columns
    (a pass per metric over 100,000 row dicts cost more in memory traffic than the counting itself)."""
    if not rows:
        return {f: () for f in fields}
    return dict(zip(fields, zip(*map(operator.itemgetter(*fields), rows))))


Groups = dict[tuple, tuple[int, dict[str, tuple]]]  # (group..., format) -> (its cells, the columns of those that ran)


def grouped(rows: Sequence[Mapping[str, object]]) -> Groups:
    """Per group and format, in the order the rows first show them: how many cells, and the AGGREGATE_FIELDS columns of
    the cells that ran (status other than NOT_RUN)."""
    members: dict[tuple, list] = {}
    for s in rows:
        members.setdefault((s["encoding"], s["size"], s["ids"], s["mode"], s["format"]), []).append(s)
    return {
        key: (len(cells), columns([s for s in cells if s["status"] != "NOT_RUN"], AGGREGATE_FIELDS))
        for key, cells in members.items()
    }


def joined_groups(parts: list[Groups]) -> Groups:
    """The groups of rows made in parts, one part after the other, as grouped() makes them of all the rows."""
    out: Groups = {}
    for part in parts:
        for key, (n, col) in part.items():
            if key in out:
                before, was = out[key]
                col = {f: was[f] + col[f] for f in AGGREGATE_FIELDS}
                n += before
            out[key] = (n, col)
    return out


def json_with_rows(
    head: dict, key: str, rows: Sequence[Mapping[str, object]], lines: Iterable[bytes] | None = None
) -> Iterator[bytes]:
    """json_bytes of {**head, key: rows}, with each row on one line, in chunks: the same JSON, written by the C
    encoder (the indenting one is pure Python, and 100,000 rows took seconds) and never whole in memory. lines: the
    rows' lines made beforehand (row_chunks), in pieces of any size."""
    opening, closing = json_ends(head, key, bool(rows))
    yield opening
    if rows:
        yield from row_chunks(rows) if lines is None else lines
        yield closing


def json_ends(head: dict, key: str, rows: bool) -> tuple[bytes, bytes]:
    """What json_with_rows writes before the rows' lines and after them; with no rows, the whole document and
    nothing."""
    body = json_bytes({**head, key: []}).rstrip()
    if not rows:
        return body + b"\n", b""
    return body[: -len(b"[]\n}")] + b"[\n", b"\n  ]\n}\n"


def row_chunks(rows: Sequence[Mapping[str, object]], per_chunk: int = 2000) -> Iterator[bytes]:
    """The rows of json_with_rows, one a line, joined by ',\\n' (no separator after the last), a chunk of rows at a
    time: neither their text nor their bytes are ever whole in memory (100,800 rows made whole took 59,000 page
    faults of fresh memory)."""
    encode = row_encoder()
    for start in range(0, len(rows), per_chunk):
        yield (",\n" * (start > 0) + ",\n".join("    " + encode(r) for r in rows[start : start + per_chunk])).encode()


def row_encoder() -> Callable[[object], str]:
    """json.JSONEncoder(ensure_ascii=False).encode, through one C encoder made here: encode() makes a new one for
    every value, an eighth of the time of encoding 100,800 rows. Where the C encoder is missing, encode() itself."""
    encoder = json.JSONEncoder(ensure_ascii=False)
    if c_make_encoder is None:
        return encoder.encode
    made = c_make_encoder({}, encoder.default, encode_basestring, None, ": ", ", ", False, False, True)
    return lambda value: "".join(made(value, 0))


CELL_LINES = ".results.json.cells"  # results.json's cell lines, staged by encode_cells and read back once


def encode_cells(rows: list[Cell], json_lines: Path, csv_path: Path, header: bool = True) -> str:
    """The scored rows as results.json (row_chunks, into json_lines) and cells.csv (csv_chunks, into csv_path; its
    header line unless header is False) hold them, written into the staging folder a chunk at a time; cells.csv's
    SHA-256 returned. Run on a forked process while this one makes the figures (write_results): what it makes never
    travels back through a pipe."""
    with open(json_lines, "wb") as f:
        for chunk in row_chunks(rows):
            f.write(chunk)
    digest = hashlib.sha256()
    with open(csv_path, "wb") as f:
        for chunk in csv_chunks(rows, header):
            f.write(chunk)
            digest.update(chunk)
    return digest.hexdigest()


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


def csv_chunks(scored: Sequence[Mapping[str, object]], header: bool = True, per_chunk: int = 2000) -> Iterator[bytes]:
    """cells.csv: one line per scored cell, for a spreadsheet, after a header line (unless header is False), a chunk
    of rows at a time; an empty field where the cell holds None (the csv module writes None so)."""
    get = operator.itemgetter(*CSV_FIELDS)
    for start in range(0, max(len(scored), 1), per_chunk):  # the header alone when there is no row
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        if header and not start:
            writer.writerow(CSV_FIELDS)
        writer.writerows(map(get, scored[start : start + per_chunk]))
        yield out.getvalue().encode("utf-8")
