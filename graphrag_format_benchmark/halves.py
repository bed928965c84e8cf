"""A large --score of Batch files on two cores, end to end: a forked process reads, scores and encodes the answers of
the second half of the prompts while this process does the first half's; and before the prompts are known, an early
reader decodes the files' lines on the core the measurement leaves idle.

In: the Batch files, the measured items, the model's config, and the staging folder's paths for the forked half's
encoded rows. Out: a Half, from which this process takes, in order, what the forked half read (answers.BatchPart:
its errors and counts, never its answers), what the figures need of its scored rows (Theirs: its groups' columns,
the gate's paired cells, the diagnosis examples it found; never the rows), and its rows as results.json and
cells.csv lines, in files. Each process decodes only the lines of its own prompts (answers.read_batch tells them
apart by custom_id before decoding), so no answer crosses between them, and each encodes its own rows; what comes
out is what one process makes, byte for byte (tests/test_halves.py). Where the platform cannot fork, the machine
has one core, the run is small, or two items of the two halves show the same prompt, there is no Half and the run
goes as before: answers.collect_batch, then scoring.score_cells.

The early reader (early_reading, around the whole run; EarlyReader) is forked at the run's start when the --score
files hold EARLY_BYTES or more. It decodes their lines in order (answers.decoded_lines: nothing of a line needs the
prompts but which prompt it answers) until batch_half asks for them with each prompt's half, or it holds
EARLY_MAX_LINES (its memory is bounded); then it sends each half the lines of its own prompts (marshal), and each
half reads on from where it stopped. It never decides anything: if it fails, the halves read every line themselves.
100,800 Batch lines: 3.90 -> 2.5 s beyond the offline part (docs/figures.md).
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import multiprocessing
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, NamedTuple, Sequence, cast

from benchmark import BenchmarkError

from .answers import (
    READING,
    BatchPart,
    Collected,
    Decoded,
    Resume,
    decoded_lines,
    is_batch_file,
    merged,
    read_batch,
)
from .cells import Groups, encode_cells, file_pieces, grouped, joined_groups
from .cores import Steps, forked_steps, two_cores, wide_pipes
from .gate import PairedCells, joined_cells, verdict_cells
from .report import REPORT_CELLS
from .scoring import SCORING_HALF, gc_paused, score_log, worth_forking

if TYPE_CHECKING:
    from .answers import Answer
    from .measure import Item
    from .runner.config import ModelConfig
    from .scoring import Cell


class Theirs(NamedTuple):
    """What the forked half sends of its scored rows: never the rows, but what the figures need of them."""

    rows: int
    groups: Groups  # cells.grouped
    paired: PairedCells  # gate.verdict_cells
    head: list[Cell]  # its first REPORT_CELLS rows, when the first half may have fewer
    answers: dict[tuple[str, int], Answer]  # the answers of those
    found: dict  # the first example of each (format, diagnosis)


class Joined(NamedTuple):
    """The figures' view of every row when a Batch score was made in halves (Half.joined); all None when not."""

    groups: Groups | None = None
    paired: PairedCells | None = None
    rows: list[Cell] | None = None  # the first rows, at least the page's
    answers: Mapping[tuple[str, int], Answer] | None = None  # their answers
    total: int | None = None  # every row


PARTS = (".results.json.cells.2", ".cells.csv.2")  # the forked half's encoded rows, in the staging folder


class Half:
    """The forked process that reads, scores and encodes the second half of the prompts' answers (batch_half)."""

    def __init__(
        self, steps: Steps, cut: int, second: set[str], parts: tuple[Path, Path], early: Early | None = None
    ) -> None:
        self.steps, self.cut, self.second, self.parts, self.early = steps, cut, second, parts, early
        self.figures: tuple[Groups, PairedCells] = ({}, {})  # the first half's, made by mine()

    def _next(self) -> Any:
        """The forked process's next step; a process that died (the kernel's out-of-memory killer) is the run's
        one-line error, not a traceback."""
        try:
            return self.steps.next()
        except ChildProcessError as e:
            raise BenchmarkError(
                f"--score: the process that reads, scores and writes the second half of the Batch lines: {e}; free "
                "some memory and run the same command again"
            ) from None

    def collect(self, paths: list[Path], items: list[Item], config: ModelConfig) -> tuple[Collected, dict] | None:
        """The first half's lines read here, the second half's taken from the forked process, merged as one reading
        makes them (answers.merged; Collected.best holds the first half's answers). None when a line's custom_id was
        not what its bytes showed: the halves are void, the forked process ended, and the caller reads the files
        as one (answers.collect_batch)."""
        mine = read_batch(paths, items, config, (0, self.second), self.early, READING)
        self.early = None  # read: its tuples go
        theirs: BatchPart = self._next()
        if mine.rerouted or theirs.rerouted:
            self.steps.stop()
            return None
        return merged(paths, items, config, [mine, theirs])

    def mine(
        self, best: dict[tuple[str, int], Answer], items: list[Item], config: ModelConfig, examples: dict
    ) -> list[Cell]:
        """The first half's rows, scored here (scoring.score_log), and what the figures need of them (joined), made
        before another process is forked beside the two."""
        rows = score_log(best, items[: self.cut], config, examples, SCORING_HALF)
        self.figures = grouped(rows), verdict_cells(rows)
        return rows

    def joined(self, mine: list[Cell], best: dict[tuple[str, int], Answer], examples: dict) -> Joined:
        """What the figures need of every row, this half's then the forked half's, as one process would make it of
        all of them: the groups' columns (cells.grouped), the gate's cells (gate.verdict_cells), the page's first
        rows and their answers, and how many rows there are; and the examples of both halves (the first of each
        (format, diagnosis) in the items' order). This half's are made while the forked half scores its own."""
        groups, paired = self.figures
        theirs: Theirs = self._next()
        for key, example in theirs.found.items():
            examples.setdefault(key, example)
        rows, answers = mine, best
        if len(mine) < REPORT_CELLS and theirs.head:
            rows, answers = mine + theirs.head[: REPORT_CELLS - len(mine)], {**best, **theirs.answers}
        return Joined(
            joined_groups([groups, theirs.groups]),
            joined_cells([paired, theirs.paired]),
            rows,
            answers,
            len(mine) + theirs.rows,
        )

    def appended(self, json_lines: Path, csv_path: Path) -> tuple[list[bytes | Path], str]:
        """Once the forked process has written its rows: results.json's cell lines as the files that hold them, this
        half's (json_lines) then the forked half's, and the SHA-256 of cells.csv, to which its lines are appended
        here."""
        self._next()
        their_json, their_csv = self.parts
        with open(csv_path, "ab") as out, open(their_csv, "rb") as f:
            while block := f.read(1 << 22):
                out.write(block)
        digest = hashlib.sha256()
        for block in file_pieces(csv_path):
            digest.update(block)
        joint: list[bytes | Path] = [b",\n"] if json_lines.stat().st_size and their_json.stat().st_size else []
        return [json_lines, *joint, their_json], digest.hexdigest()


@contextmanager
def batch_half(
    paths: list[Path], items: list[Item], config: ModelConfig, staged: Callable[[str], Path]
) -> Iterator[Half | None]:
    """A Half for a large Batch score on two cores, its process started (it stops when the block ends), each process
    with its own of the lines the run's early reader decoded (early_reading); None when there is none (the module's
    docstring says when), and the early reader is stopped."""
    cut = len(items) // 2
    second = {item.row["prompt_sha256"] for item in items[cut:]}
    if (
        not two_cores()
        or not worth_forking(len(items) * config.repeats)
        or any(item.row["prompt_sha256"] in second for item in items[:cut])
    ):
        _asked(None, {})
        yield None
        return
    reader = _asked(paths, {item.row["prompt_sha256"][:40]: int(i >= cut) for i, item in enumerate(items)})
    parts = (staged(PARTS[0]), staged(PARTS[1]))
    theirs = reader.theirs if reader is not None else None
    with forked_steps(_second_half, paths, items, cut, second, config, parts, theirs) as steps:
        early = received(reader.mine) if reader is not None else None  # while the forked process takes its own
        yield Half(steps, cut, second, parts, early)


def _second_half(
    paths: list[Path],
    items: list[Item],
    cut: int,
    second: set[str],
    config: ModelConfig,
    parts: tuple[Path, Path],
    early: Any,
) -> Iterator[object]:
    """On the forked process: the second half's lines read (sent without their answers), its rows scored (sent),
    then encoded into parts (a step when they are written). early: the early reader's end that sends its lines."""
    with gc_paused():
        read = read_batch(paths, items, config, (1, second), received(early) if early is not None else None)
        yield read._replace(best={})
        if read.rerouted:
            return
        found: dict = {}
        rows = score_log(read.best, items[cut:], config, found)
        # the page's first rows when the first half may have fewer: without --limit every prompt has a row for each
        # repeat, so the first half has cut * repeats
        mine = cut * config.repeats if config.limit is None else 0
        head = rows[:REPORT_CELLS] if mine < REPORT_CELLS else []
        answers = {key: read.best[key] for r in head if (key := (r["prompt_sha256"], r["repeat"])) in read.best}
        yield Theirs(len(rows), grouped(rows), verdict_cells(rows), head, answers, found)
        encode_cells(rows, *parts, header=False)
        yield None


Early = tuple[list[Decoded], Resume]  # the lines the early reader decoded for one half, and where the files go on
EARLY_BYTES = 16 << 20  # --score files this large are decoded from the run's start (some 18,000 Batch lines)
EARLY_MAX_LINES = 250_000  # the most lines the early reader holds (some 250 MB of Batch lines); the halves read on
EARLY_LINES: int | None = None  # tests: the early reader decodes these lines, however soon it is asked


class EarlyReader:
    """The process that decodes the --score files' Batch lines in order from the run's start, on the core the
    measurement leaves idle, until it is asked for them (ask): then it sends each half the lines of its own prompts
    (by custom_id), the first half's through mine, the second's through theirs, which the forked half inherits."""

    def __init__(self, paths: list[Path]) -> None:
        context = multiprocessing.get_context("fork")
        self.paths = paths
        self.stop = context.RawValue("b", 0)  # set by ask(): the reader stops before its next line
        request, self.request = context.Pipe(duplex=False)
        self.mine, to_mine = context.Pipe(duplex=False)
        self.theirs, to_theirs = context.Pipe(duplex=False)
        ends = (request, to_mine, to_theirs)
        self.process = context.Process(target=_read_early, args=(paths, self.stop, *ends), daemon=True)
        self.process.start()
        for end in ends:
            end.close()

    def ask(self, owners: dict[str, int]) -> None:
        """Stop, and send each half its lines: owners, each prompt's custom_id prefix -> 0 or 1 (its half)."""
        self.stop.value = 1
        try:
            self.request.send_bytes(marshal.dumps(owners))
        except OSError:  # the reader has ended: the halves read their lines themselves
            pass

    def end(self) -> None:
        for end in (self.request, self.mine, self.theirs):
            end.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join()


def received(end: Any) -> Early | None:
    """A half's lines, as the early reader sends them; None when it sends none (the files are not Batch files, or it
    failed: the half then reads its lines as if there had been no early reader, and meets any error there)."""
    try:
        data = end.recv_bytes()
    except (EOFError, OSError):
        return None
    return marshal.loads(data) if data else None


_early: list[EarlyReader] = []  # the run's early reader, while the block of early_reading lasts


@contextmanager
def early_reading(paths: Sequence[Path] | None) -> Iterator[None]:
    """Around a run: with --score files of EARLY_BYTES or more on two cores, an EarlyReader started now, for
    batch_half to ask; ended when the block ends, however it ends. Without a Batch score worth halves it costs the
    run nothing but the fork: its core was idle."""
    try:
        big = paths is not None and sum(Path(p).stat().st_size for p in paths) >= EARLY_BYTES
    except OSError:  # the run says what is wrong with the file
        big = False
    if not big or not two_cores() or _early:
        yield
        return
    _early.append(EarlyReader(list(cast(Sequence[Path], paths))))
    try:
        yield
    finally:
        _early.pop().end()


def _asked(paths: list[Path] | None, owners: dict[str, int]) -> EarlyReader | None:
    """The run's early reader, asked for its lines (EarlyReader.ask), if it reads these files; with None, or other
    files, it is stopped and there is none."""
    if not _early:
        return None
    reader = _early[0]
    if paths is None or [Path(p) for p in paths] != [Path(p) for p in reader.paths]:
        reader.end()
        return None
    reader.ask(owners)
    return reader


def _read_early(paths: list[Path], stop: Any, request: Any, to_mine: Any, to_theirs: Any) -> None:
    """On the early reader: the files' lines decoded (answers.decoded_lines) until it is asked for them, then each
    half's sent (marshal: plain values, and quick), the first half's first; nothing when a file's first line is not
    a Batch line, or on any error. The request is always read, so that asking never waits on a full pipe."""
    gc.disable()  # a process of tuples with no cycles, which ends when they are sent: the collector found nothing
    early, sent = None, [b"", b""]
    wide_pipes(to_mine, to_theirs)
    try:
        if all(map(is_batch_file, paths)):
            limit, most = EARLY_LINES, EARLY_MAX_LINES
            early = decoded_lines(paths, lambda n: (stop.value != 0 or n >= most) if limit is None else n >= limit)
    except BaseException:  # noqa: BLE001 (the halves read the files themselves and meet the error there)
        early = None
    try:
        owners = marshal.loads(request.recv_bytes())
        if early is not None:
            halves: tuple[list[Decoded], list[Decoded]] = ([], [])
            for record in early[0]:
                halves[0 if record[2] is None else owners.get(record[2].rpartition("-r")[0], 0)].append(record)
            sent = [marshal.dumps((lines, early[1])) for lines in halves]
    except BaseException:  # noqa: BLE001 (the run ended, or the same as above)
        sent = [b"", b""]
    for end, data in zip((to_mine, to_theirs), sent):
        try:
            end.send_bytes(data)
        except OSError:  # the run has ended
            pass
