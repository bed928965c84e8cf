"""The acceptance gate: whether a format is no worse than the baseline, per group (verdicts).

In: the scored cells of a group, the baseline and the tolerances (GateSpec). Out: per format, its paired checks (path
exact, valid path, abstention, stability) by Newcombe's method 11 or the guarded paired t, Holm's procedure over a
group's formats, what blocks a verdict, how many questions would decide it (questions_for_power), and one
recommendation per group. No verdict is 'accept' unless every check passes.
"""

from __future__ import annotations

import math
import operator
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from .frameworks import FRAMEWORK_FORMATS
from .markdown import md_cell, percent
from .matrix import GroupKey, group_key
from .statistics import GUARD_WEIGHT, guarded_t, newcombe_cc, t_quantile

if TYPE_CHECKING:
    from .aggregates import Aggregate
    from .scoring import Cell

# The acceptance gate (article 12, "порог отката"): each of its conditions is a paired non-inferiority test
# over questions. Per check and question, the format's and the baseline's answers to the same prompt cells (its
# permutations and repeats) give paired differences, averaged into one value in [-1, 1]; their mean is bounded
# one-sided at 95% (Newcombe's method 11 for binary data, the guarded t interval otherwise). A check passes when
# the lower bound is at or above -tolerance and fails when the upper bound is below it. The conditions:
# path exact and valid path, abstention (at its own tolerance: abstention questions are few), stability under
# permutation (with several: a question counts as right only when right in every permutation, tested the same
# way), the saving on the full prompt, and the round trip. A format is accepted when every condition passes
# and, the formats of a group being judged together, Holm's step-down procedure over their p-values on the
# paths (the larger of path exact's and valid path's: both must hold) still shows it no worse: the chance of
# recommending any format whose paths are worse than the tolerance stays at 5% however many formats are
# tried. Abstention and stability must hold for each format at 95%.
GATE_ALPHA = 0.05  # one-sided, per check and for the family of formats
GATE_POWER = 0.8  # the questions asked for would show an equal format no worse this often
CHECK_POWER = (
    0.9  # ... each open condition at this power, so that all of them (they fail together rarely) pass about GATE_POWER
)
BASELINE_FLOOR = 0.2  # the baseline's path exact rate below which no verdict is given: nothing to lose
GATE_MAX_QUESTIONS = 1_000_000  # "how many questions would decide it" is searched up to this
DEFAULT_ABSTENTION_TOLERANCE = 0.15
PAIRED_OUTCOMES = {(True, True): 0, (True, False): 1, (False, True): 2, (False, False): 3}  # (format, baseline) -> cell
GATE_CHECKS = (
    ("path_exact", "path_exact", False),
    ("valid_path", "valid_path", False),
    ("abstention", "answer_correct", True),
)
PAIRED_FIELDS = ("insufficient", "path_exact", "valid_path", "answer_correct")  # what the paired checks read of a cell
CHECKED_AT = tuple((name, PAIRED_FIELDS.index(metric), insufficient) for name, metric, insufficient in GATE_CHECKS)
FormatCells = dict[tuple[str, int, int], tuple[object, ...]]  # (question, permutation, repeat) -> its PAIRED_FIELDS
PairedCells = dict[GroupKey, dict[str, FormatCells]]  # group -> format -> its cells
PATH_CHECKS = ("path_exact", "valid_path")  # the main condition, whose p-values Holm's procedure takes over the formats


class Paired(NamedTuple):
    """One check's evidence: per question, the paired runs of the format and the baseline."""

    runs: dict[str, list[tuple[bool, bool]]]  # question id -> [(format right, baseline right)] over its cells

    @property
    def binary(self) -> bool:
        return all(len(pairs) == 1 for pairs in self.runs.values())

    def table(self) -> tuple[float, float, float, float]:
        """The paired outcomes (both right, only the format, only the baseline, neither), each question's runs
        averaged into fractions that add up to one question: whole counts for binary data."""
        counts = [0.0, 0.0, 0.0, 0.0]
        for pairs in self.runs.values():
            for pair in pairs:
                counts[PAIRED_OUTCOMES[pair]] += 1 / len(pairs)
        return counts[0], counts[1], counts[2], counts[3]

    def differences(self) -> list[float]:
        return [math.fsum(f - b for f, b in pairs) / len(pairs) for pairs in self.runs.values()]

    def bounds(self, alpha: float) -> tuple[float, float, float]:
        """(difference, lower, upper), each bound one-sided at 1 - alpha."""
        if self.binary:
            both, only_format, only_baseline, neither = map(round, self.table())
            return newcombe_cc(both, only_format, only_baseline, neither, statistics.NormalDist().inv_cdf(1 - alpha))
        return guarded_t(self.differences(), alpha, -1.0, 1.0)

    @property
    def method(self) -> str:
        return "newcombe method 11 (continuity corrected)" if self.binary else "guarded paired t over question means"

    def p_value(self, tolerance: float) -> float:
        """The one-sided p-value of 'worse by the tolerance or more': the alpha at which the lower bound meets
        -tolerance (for the t interval, P(T > (mean + tolerance) / se); for Newcombe's, found by bisection)."""
        if self.bounds(0.5)[1] < -tolerance:
            return 1.0
        lo, hi = 1e-12, 0.5  # the lower bound falls as alpha falls
        if self.bounds(lo)[1] >= -tolerance:
            return lo
        for _ in range(50):
            mid = math.sqrt(lo * hi)
            lo, hi = (lo, mid) if self.bounds(mid)[1] >= -tolerance else (mid, hi)
        return hi


def _decision(lower: float, upper: float, tolerance: float) -> str:
    return "pass" if lower >= -tolerance else "fail" if upper < -tolerance else "undecided"


def questions_for_power(values: list[float], tolerance: float, alpha: float, power: float = GATE_POWER) -> int | None:
    """The fewest questions with which a format as good as the baseline (true difference 0) would pass the check with
    the given power, at the spread of the observed question differences: the guarded t interval's lower bound is
    above -tolerance with probability power. None when no number up to GATE_MAX_QUESTIONS would."""
    mean = math.fsum(values) / len(values) if values else 0.0
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    z_power = statistics.NormalDist().inv_cdf(power)

    def enough(n: int) -> bool:
        w = GUARD_WEIGHT
        half = max(
            t_quantile(1 - alpha, n - 1) * math.sqrt((n * sd * sd + 2 * w) / ((n + 2 * w - 1) * (n + 2 * w))),
            -math.log(alpha) / n,
        )
        return half <= tolerance if sd == 0 else (tolerance - half) / (sd / math.sqrt(n)) >= z_power

    hi = 4
    while not enough(hi):
        if hi >= GATE_MAX_QUESTIONS:
            return None
        hi = min(hi * 2, GATE_MAX_QUESTIONS)
    lo = max(hi // 2, 2)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcomes:
    """A paired check's questions by outcome, each question's runs averaged into fractions of one (whole counts for
    binary data), rounded to 4 places."""

    both: float  # the format and the baseline right
    only_format: float  # the format right, the baseline wrong
    only_baseline: float  # the baseline right, the format wrong
    neither: float  # both wrong

    def as_json(self) -> dict[str, float]:
        """As results.json holds them: both, only_format, only_baseline, neither."""
        return asdict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """One condition of the gate for one format (paired_check). With no question of its kind, every figure is None."""

    questions: int  # the questions paired (each counted once, however many runs)
    result: str  # pass, fail or undecided
    difference: float | None = None  # the mean paired difference, format less baseline, in [-1, 1]
    lower: float | None = None  # the one-sided lower bound at 1 - alpha
    upper: float | None = None  # the one-sided upper bound at 1 - alpha
    tolerance: float | None = None  # how much worse still passes; None (no key in results.json) with no question
    method: str | None = None  # Paired.method: Newcombe's or the guarded paired t
    p_value: float | None = None  # of 'worse by the tolerance or more' (Paired.p_value)
    questions_needed: int | None = None  # undecided: the questions of its kind that would decide it (else None)
    outcomes: Outcomes | None = None
    note: str | None = None  # why it passes without a question; only where set

    def as_json(self) -> dict[str, Any]:
        """As results.json holds it, in the fields' order: tolerance only with questions, note only where set."""
        return {k: v for k, v in asdict(self).items() if v is not None or k not in ("tolerance", "note")}


def paired_check(paired: Paired, tolerance: float, alpha: float = GATE_ALPHA, family: int = 1) -> Check:
    """One condition of the gate: 'pass' when the one-sided lower bound of the difference is at or above -tolerance,
    'fail' when the upper bound is below it, else 'undecided', with the questions of its kind that would pass it
    with GATE_POWER if the format were as good as the baseline (at alpha / family: the family's strictest step)."""
    if not paired.runs:
        return Check(questions=0, result="undecided")
    diff, lower, upper = paired.bounds(alpha)
    result = _decision(lower, upper, tolerance)
    both, only_format, only_baseline, neither = (round(x, 4) for x in paired.table())
    return Check(
        questions=len(paired.runs),
        result=result,
        difference=round(diff, 4),
        lower=round(lower, 4),
        upper=round(upper, 4),
        tolerance=tolerance,
        method=paired.method,
        p_value=round(paired.p_value(tolerance), 6),
        questions_needed=questions_for_power(paired.differences(), tolerance, alpha / family, CHECK_POWER)
        if result == "undecided"
        else None,
        outcomes=Outcomes(both=both, only_format=only_format, only_baseline=only_baseline, neither=neither),
    )


def _paired_runs(mine: dict[str, FormatCells], fmt: str, baseline: str) -> dict[str, Paired]:
    """For each paired check, the paired runs of fmt and the baseline over every cell both answered (or failed): the
    positive questions for paths, the abstention questions for abstention; and 'stability', where a (question,
    repeat) counts as right only when right in every permutation (with several permutations)."""
    runs: dict[str, dict[str, list[tuple[bool, bool]]]] = {name: {} for name, _, _ in GATE_CHECKS}
    robust: dict[tuple[str, int], list[tuple[bool, bool]]] = {}
    base = mine.get(baseline, {})
    for key, c in mine.get(fmt, {}).items():
        b = base.get(key)
        if b is None:
            continue
        for name, at, insufficient in CHECKED_AT:
            if c[0] is insufficient:
                runs[name].setdefault(key[0], []).append((bool(c[at]), bool(b[at])))
        if not c[0]:
            robust.setdefault((key[0], key[2]), []).append((bool(c[1]), bool(b[1])))
    out = {name: Paired(by_question) for name, by_question in runs.items()}
    if any(len(pairs) > 1 for pairs in robust.values()):
        stable: dict[str, list[tuple[bool, bool]]] = {}
        for (qid, _), pairs in robust.items():
            stable.setdefault(qid, []).append((all(f for f, _ in pairs), all(b for _, b in pairs)))
        out["stability"] = Paired(stable)
    return out


def group_blockers(entries: dict[str, Aggregate], baseline: str, budget_note: str | None) -> list[str]:
    """Why no verdict in a group can be trusted, whatever the formats did: a baseline that fails (or was never sent),
    a budget that cannot tell formats apart."""
    base = entries.get(baseline)
    reasons = []
    if budget_note:
        reasons.append(budget_note)
    if base is None:
        return reasons
    rate = base.metrics.path_exact.rate
    if rate is not None and rate < BASELINE_FLOOR:
        refused, local = base.overflow_by_server, base.overflow - base.overflow_by_server
        why = (
            f"the baseline {baseline} gets {rate:.2f} of the positive questions' paths exactly right, under the floor "
            f"{BASELINE_FLOOR:.2f}: a format can look no worse only because there is nothing to lose"
        )
        if local:
            why += f" ({local} of its {base.n} prompts are over --context-window and were never sent)"
        elif refused:
            why += f" ({refused} of its {base.n} prompts were refused by the server as over its context window)"
        elif base.errors:
            why += f" ({base.errors} of its {base.n} requests failed)"
        reasons.append(
            why + "; change the model, the prompt, the budget or what each prompt shows until the baseline answers"
        )
    return reasons


def verdict_cells(scored: Iterable[Cell]) -> PairedCells:
    """What the gate pairs of the cells that ran: group -> format -> (question, permutation, repeat) -> their
    PAIRED_FIELDS, in the order of the cells (a later cell of the same key in its place, as a dict update keeps it)."""
    cells: PairedCells = {}
    fields = operator.attrgetter(*PAIRED_FIELDS)
    for c in scored:
        if c.status != "NOT_RUN":
            cells.setdefault(group_key(c), {}).setdefault(c.format, {})[(c.question_id, c.permutation, c.repeat)] = (
                fields(c)
            )
    return cells


def verdicts(
    scored: Sequence[Cell],
    table: list[Aggregate],
    baseline: str,
    tolerance: float,
    budget_notes: dict[GroupKey, str] | None = None,
    abstention_tolerance: float = DEFAULT_ABSTENTION_TOLERANCE,
) -> list[Verdict]:
    """The article's acceptance gate, per group and format against the baseline (see above); no verdict is 'accept'
    when requests failed, the baseline fails (BASELINE_FLOOR) or mode B's budget cannot tell the formats apart."""
    cells = verdict_cells(scored)
    by_group: dict[GroupKey, dict[str, Aggregate]] = {}
    for e in table:
        by_group.setdefault(group_key(e), {})[e.format] = e
    out = []
    for group, entries in by_group.items():
        base = entries.get(baseline)
        if base is None:
            continue
        blockers = group_blockers(entries, baseline, (budget_notes or {}).get(group))
        mine = cells.get(group, {})
        tested = [e for fmt, e in entries.items() if fmt != baseline]
        tokens = (
            "model_prompt_tokens"
            if all(e.model_prompt_tokens is not None for e in entries.values())
            else "prompt_tokens"
        )
        judged = [
            _verdict(e, base, mine, baseline, tolerance, abstention_tolerance, blockers, len(tested), tokens)
            for e in tested
        ]
        out += holm(judged)
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Holm:
    """A format's step in Holm's procedure over the formats of its group (holm)."""

    p_value: float  # the format's p-value on the paths (Verdict.p_value)
    threshold: float  # alpha / (m - k) at its place k (from 0) in the order of p-values, rounded to 6 places
    formats: int  # m: the formats judged together
    shown: bool  # shown no worse: neither its p-value nor a smaller one was over its threshold

    def as_json(self) -> dict[str, Any]:
        """As results.json holds it: p_value, threshold, formats, shown."""
        return asdict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """One format's verdict against the baseline in a group (verdicts): the gate's checks, what blocks it, its saving,
    the questions that would decide it; holm when its p-value entered Holm's procedure."""

    encoding: str  # the group: encoding, size, ids and mode (matrix.group_key)
    size: str
    ids: str
    mode: str
    format: str
    baseline: str
    tolerance: float  # --tolerance, of the paths and stability
    abstention_tolerance: float  # --abstention-tolerance
    verdict: str  # accept, reject or undecided
    failed: list[str]  # the checks it fails
    undecided: list[str]  # the checks not decided yet, or ['holm'] when Holm's procedure stopped before it
    blocked_by: list[str]  # why no verdict can be trusted (group_blockers, failed requests); then it is undecided
    positive_questions: int  # the most questions a path or stability check paired
    abstention_questions: int
    questions_needed: dict[str, int | None]  # undecided check -> the questions of its kind that would decide it
    questions_to_generate: int | None  # the questions in all (positive and abstention alike) that would decide all
    saving: float | None  # the share of the baseline's prompt tokens it saves, rounded to 4 places
    saving_counted_by: str  # 'the model' or the encoding that counted the tokens
    roundtrip: str  # always 'pass': a format that fails its round trip is never measured
    checks: dict[str, Check]  # path_exact, valid_path, abstention and, with several permutations, stability
    p_value: float | None  # the larger of the paths' checks' p-values: what Holm's procedure takes
    holm: Holm | None = None  # its step in Holm's procedure; None (no key in results.json) without a p-value

    def as_json(self) -> dict[str, Any]:
        """As results.json holds it, in the fields' order: each check's Check.as_json, holm only where set."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "holm"}
        checks = {name: c.as_json() for name, c in self.checks.items()}
        return {**out, "checks": checks, **({"holm": self.holm.as_json()} if self.holm else {})}


def _check(name: str, paired: Paired, tolerance: float, family: int) -> Check:
    """paired_check, but that abstention with no question passes: there is nothing to be worse at."""
    check = paired_check(paired, tolerance, family=family)
    if name == "abstention" and not check.questions:
        return replace(check, result="pass", note="no abstention question: nothing to be worse at")
    return check


def _verdict(
    e: Aggregate,
    base: Aggregate,
    mine: dict[str, FormatCells],
    baseline: str,
    tolerance: float,
    abstention_tolerance: float,
    blockers: list[str],
    family: int,
    tokens: str,
) -> Verdict:
    """One format's verdict before Holm: its checks, what blocks it, its saving (counted by tokens, one count for the
    whole group) and the questions that would decide it."""
    fmt = e.format
    checks = {
        name: _check(name, p, abstention_tolerance if name == "abstention" else tolerance, max(family, 1))
        for name, p in _paired_runs(mine, fmt, baseline).items()
    }
    needed = {name: c.questions_needed for name, c in checks.items() if c.result == "undecided" and c.questions}
    ours, theirs = e.tokens(tokens), base.tokens(tokens)
    failed = [name for name, c in checks.items() if c.result == "fail"]
    open_ = [name for name, c in checks.items() if c.result == "undecided"]
    reasons = list(blockers)
    errors = e.errors + base.errors
    if errors:
        reasons.append(
            f"{errors} request(s) of {fmt} and {baseline} failed: a failure is not the format's doing; "
            "run the same command again to retry them"
        )
    positives = max((c.questions for name, c in checks.items() if name != "abstention"), default=0)
    abstentions = checks["abstention"].questions
    share = abstentions / (positives + abstentions) if positives + abstentions else 0.0
    totals = [
        math.ceil(n / (share if name == "abstention" else 1 - share))
        for name, n in needed.items()
        if n is not None and (share if name == "abstention" else 1 - share) > 0
    ]
    return Verdict(
        encoding=e.encoding,
        size=e.size,
        ids=e.ids,
        mode=e.mode,
        format=fmt,
        baseline=baseline,
        tolerance=tolerance,
        abstention_tolerance=abstention_tolerance,
        verdict="undecided" if reasons else "reject" if failed else "undecided" if open_ else "accept",
        failed=failed,
        undecided=open_,
        blocked_by=reasons,
        positive_questions=positives,
        abstention_questions=abstentions,
        questions_needed=needed,
        questions_to_generate=max(totals) if totals and len(totals) == len(needed) else None,
        saving=round(1 - ours / theirs, 4) if ours and theirs else None,
        saving_counted_by="the model" if tokens == "model_prompt_tokens" else e.encoding,
        roundtrip="pass",
        checks=checks,
        p_value=max((p for p in (checks[name].p_value for name in PATH_CHECKS) if p is not None), default=None),
    )


def holm(judged: list[Verdict], alpha: float = GATE_ALPHA) -> list[Verdict]:
    """Holm's step-down procedure over the formats of one group: sorted by p-value, the k-th smallest must be at or
    under alpha / (m - k + 1), and once one is not, none after it is shown no worse. Out: the verdicts in their
    order, each with a p-value given its step (Holm); one whose every check passes but that the procedure stops at
    is undecided, and says so."""
    m, stopped, out = len(judged), False, list(judged)
    for k, (p, i) in enumerate(sorted((v.p_value, i) for i, v in enumerate(judged) if v.p_value is not None)):
        threshold = alpha / (m - k)
        stopped = stopped or p > threshold
        out[i] = replace(out[i], holm=Holm(p_value=p, threshold=round(threshold, 6), formats=m, shown=not stopped))
        if out[i].verdict == "accept" and stopped:
            out[i] = replace(out[i], verdict="undecided", undecided=["holm"])
    return out


TODAY = "what your framework sends today"  # a framework's own layout as the baseline, in the user's words


def baseline_words(baseline: str) -> str:
    """The baseline as the decision names it: 'lightrag (what your framework sends today)' for a framework's own
    layout (frameworks.FRAMEWORK_FORMATS), else the format's name."""
    return f"{baseline} ({TODAY})" if baseline in FRAMEWORK_FORMATS else baseline


def _solver_words(mine: Sequence[Verdict], baseline: str) -> str:
    """The control solver's line in place of a recommendation: it walks the graph each prompt shows, never reads its
    text, so it proves the harness and not a format; what a format would save is said all the same."""
    missed: dict[str, None] = {}  # the formats with a prompt the solver got wrong, the baseline among them
    for v in mine:
        for o in (c.outcomes for c in v.checks.values() if c.outcomes):  # None: no question of it
            if o.neither or o.only_format:
                missed[v.baseline] = None
            if o.neither or o.only_baseline:
                missed[v.format] = None
    saving = max((v for v in mine if (v.saving or 0) > 0), key=lambda v: v.saving or 0, default=None)
    said = (
        f"; {saving.format} would save {percent(saving.saving or 0)} of the prompt tokens of {baseline} "
        f"({saving.saving_counted_by}'s count)"
        if saving
        else ""
    )
    if not missed:
        return (
            "the control solver answered every prompt perfectly: the harness is sound; its answers say nothing of a "
            f"format — run a model for a verdict{said}"
        )
    return (
        f"the control solver missed prompts of {', '.join(missed)}: it walks the graph a prompt shows, so a miss is "
        "a gold path the prompt does not hold (cut by --budget) or a fault of the harness; its answers say nothing of "
        f"a format — run a model for a verdict{said}"
    )


def recommendation(mine: Sequence[Verdict], baseline: str, solver: bool = False) -> str:
    """One group's recommendation: the accepted format that saves the most tokens; or, when nothing is decided, that
    no decision is made yet and how many questions would make one; or keep the baseline, saying why. solver: the
    verdicts are the control solver's, which decide nothing (_solver_words)."""
    baseline = baseline_words(baseline)
    if solver:
        return _solver_words(mine, baseline)
    blocked = next((v.blocked_by for v in mine if v.blocked_by), None)
    if blocked and all(v.blocked_by for v in mine):
        return f"no recommendation: {blocked[0]}"
    accepted = sorted(
        (v for v in mine if v.verdict == "accept" and (v.saving or 0) > 0), key=lambda v: -(v.saving or 0)
    )
    if accepted:
        best = accepted[0]
        return (
            f"ship {best.format}, which saves {percent(best.saving or 0)} of the prompt tokens of {baseline} "
            f"({best.saving_counted_by}'s count) and is accepted over {best.positive_questions} positive and "
            f"{best.abstention_questions} abstention questions"
        )
    if all(v.verdict == "undecided" for v in mine):
        more = [v.questions_to_generate for v in mine if v.questions_to_generate]
        ask = (
            (
                f": about {min(more):,} questions in all (--generate-questions {min(more)}) would show the closest "
                "format no worse "
                f"with {GATE_POWER:.0%} power if it is as good as {baseline}"
            )
            if more
            else ""
        )
        return f"no decision yet{ask}; until then, {baseline} stays"
    saving_nothing = [v.format for v in mine if v.verdict == "accept"]
    why = "; ".join(f"{v.format} {v.verdict}" for v in mine if v.format not in saving_nothing)
    if saving_nothing:
        why = "; ".join(filter(None, [why, f"{', '.join(saving_nothing)} accepted but save no tokens"]))
    return f"keep {baseline}; no format is accepted that saves tokens ({why})"


def recommendations(gate: Sequence[Verdict], baseline: str, solver: bool = False) -> dict[GroupKey, str]:
    """Each group's recommendation (recommendation over its verdicts), the groups in the verdicts' order."""
    groups = dict.fromkeys(group_key(v) for v in gate)
    return {group: recommendation([v for v in gate if group_key(v) == group], baseline, solver) for group in groups}


CHECK_WORDS = {
    "path_exact": "path exact",
    "valid_path": "valid path",
    "abstention": "abstention",
    "stability": "stability under permutation",
    "holm": "the family of formats (Holm)",
}


def why_not_accepted(v: Verdict) -> str:
    """A verdict's reason in words, for the verdict table and report.html."""
    if v.blocked_by:
        return "no verdict: " + "; ".join(v.blocked_by)
    if v.failed:
        return "worse on " + ", ".join(CHECK_WORDS[name] for name in v.failed)
    if v.holm and v.undecided == ["holm"]:
        return (
            f"every check passes, but not once {v.holm.formats} formats are judged together (Holm: p "
            f"{v.holm.p_value:.3g} over {v.holm.threshold:.3g})"
        )
    if v.undecided:
        more = v.questions_to_generate
        return f"not yet shown no worse on {', '.join(CHECK_WORDS[name] for name in v.undecided)}" + (
            f"; about {more:,} questions in all would show it with {GATE_POWER:.0%} power if it is as good"
            if more
            else "; the difference sits at the tolerance"
        )
    return "no worse on every check"


def verdict_lines(gate: list[Verdict], tolerance: float, baseline: str, solver: bool = False) -> list[str]:
    """The top of results.md: what to ship (one recommendation per group), the verdict table, then how the gate
    decides. solver: a run of the control solver, which recommends nothing."""
    if not gate:
        return []
    abstention = gate[0].abstention_tolerance
    named = f"{baseline}, {TODAY}" if baseline in FRAMEWORK_FORMATS else baseline
    lines = [""]
    for group, said in recommendations(gate, baseline, solver).items():
        lines += [f"Recommendation for {' · '.join(group)}: {said}.", ""]
    lines += [
        f"## Verdicts against {named} (tolerance {tolerance:g}, abstention {abstention:g})",
        "",
        "| group | format | verdict | positive questions | abstention questions | why | saving in prompt tokens |",
        "|---|---|---|---:|---:|---|---:|",
    ]
    for v in gate:
        saving = "" if v.saving is None else f"{percent(v.saving)} ({v.saving_counted_by})"
        lines.append(
            f"| {' · '.join(group_key(v))} | {v.format} | {v.verdict} | {v.positive_questions} | "
            f"{v.abstention_questions} | {md_cell(why_not_accepted(v))} | {saving} |"
        )
    lines += [
        "",
        "A format is accepted when each condition of the article's gate (12) is shown no worse than the baseline by "
        "more than the tolerance, at a one-sided 95% bound over questions (each question counted once, its "
        "permutations "
        "and repeats averaged): path exact, valid path, abstention (at its own tolerance), stability under permutation "
        "(with several: a question right in every permutation), and, the formats being judged together, Holm's "
        "procedure over the paths' p-values keeps the chance of accepting any format whose paths are worse than the "
        "tolerance at 5%. Bounds: Newcombe's score "
        "interval with continuity correction for one run per question, else a paired t interval over questions with a "
        f"small-sample guard. No request may have failed, and the baseline must get at least {BASELINE_FLOOR:.0%} of "
        "the "
        "paths right (docs/statistics.md, the acceptance gate).",
    ]
    return lines


DEFAULT_TOLERANCE = 0.05


class GateSpec(NamedTuple):
    """--baseline, --tolerance and --abstention-tolerance, checked."""

    baseline: str
    tolerance: float
    abstention_tolerance: float = DEFAULT_ABSTENTION_TOLERANCE
