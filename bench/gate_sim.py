"""The acceptance gate's error rates, measured on answers whose truth is set: a probit model with a difficulty
per question shared by every format, permutation and repeat, as real models have.

    $ python bench/gate_sim.py [--replicates 200] [--sizes 30,60,150,200] [--permutations 1,3]

For each scenario (the format as good as the baseline, 3 or 10 points worse on paths, 15 points worse at
abstaining; four formats all at the margin, 5 points worse), number of questions (a fifth of them abstention
questions) and number of permutations, it draws every answer, scores the cells as the tool's scorer writes
them, and runs the tool's own aggregates.aggregate() and gate.verdicts() (this checkout's; to judge an older version,
run the script of that version's checkout). It prints, per cell, how
often the format is accepted, rejected and left undecided, how often the per-format 95% interval of path
exact covers the true rate, and, for an undecided format, whether the number of questions the verdict asks
for decides when the run is drawn again at that number. Seeded: the same figures on every run.

The model: question q has a difficulty d_q ~ N(0, TAU^2); format f answers it right, in each permutation and
repeat apart, when mu_f + d_q + e > 0 with e ~ N(0, 1), so answers of one question agree across formats and
runs as often as TAU makes them. mu_f is set so that the format's rate over questions is the scenario's.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphrag_format_benchmark import aggregates, gate, scoring  # noqa: E402

TAU = 1.5  # spread of question difficulty on the probit scale: the correlation of two answers to one question is 0.69
BASE_PATH_RATE = 0.75  # the baseline's path exact rate over questions
BASE_ABSTAIN_RATE = 0.8  # its rate of right abstentions
ABSTAIN_SHARE = 0.2
SCENARIOS = {  # name -> (path points lost, abstention points lost, formats tested)
    "equal": (0.0, 0.0, 1),
    "3 points worse": (0.03, 0.0, 1),
    "10 points worse": (0.10, 0.0, 1),
    "5 points worse (the margin)": (0.05, 0.0, 1),
    "abstention 15 points worse": (0.0, 0.15, 1),
    "4 formats 5 points worse": (0.05, 0.0, 4),
}


def inv_phi(p: float) -> float:
    return statistics.NormalDist().inv_cdf(p)


def mu_for(rate: float) -> float:
    """mu such that P(mu + d + e > 0) = rate over questions: Phi(mu / sqrt(1 + TAU^2)) = rate."""
    return inv_phi(rate) * math.sqrt(1 + TAU * TAU)


def cell(fmt: str, qid: str, k: int, insufficient: bool, right: bool) -> scoring.Cell:
    """A scored cell as score_log writes it, for an answered prompt."""
    metrics = {"parse_success": True, "abstained": insufficient and right, "answer_correct": right}
    if insufficient:
        metrics.update(
            false_abstention=None,
            path_exact=None,
            edge_precision=None,
            edge_recall=None,
            valid_path=None,
            evidence_match=None,
            path_supports_answer=None,
            right_answer_wrong_path=None,
        )
    else:
        metrics.update(
            false_abstention=False,
            path_exact=right,
            edge_precision=float(right),
            edge_recall=float(right),
            valid_path=right,
            evidence_match=right,
            path_supports_answer=right,
            right_answer_wrong_path=False,
        )
    return scoring.Cell.from_json(
        {
            "encoding": "o200k_base",
            "size": "small",
            "ids": "original",
            "permutation": k,
            "mode": "A",
            "format": fmt,
            "question_id": qid,
            "prompt_sha256": f"{fmt}{qid}{k}",
            "prompt_tokens": 1000 if fmt == "json" else 500,
            "insufficient": insufficient,
            "hops": "abstention" if insufficient else "2",
            "repeat": 0,
            "status": "OK",
            **metrics,
            "truncated_by_server": False,
            "usage_prompt_tokens": None,
            "usage_cached_tokens": None,
            "usage_completion_tokens": None,
            "over_output_cap": False,
            "latency_s": 1.0,
            "retry_wait_s": 0.0,
            "finish_reason": "stop",
            "error": None,
        }
    )


def draw(rng: random.Random, n: int, perms: int, scenario: str) -> tuple[list[scoring.Cell], dict]:
    """Every scored cell of one run, and the true rates of each format."""
    path_loss, abstain_loss, tested = SCENARIOS[scenario]
    formats = ["json", *[f"f{k}" for k in range(1, tested + 1)]]
    truth = {
        f: (
            BASE_PATH_RATE - (path_loss if f != "json" else 0),
            BASE_ABSTAIN_RATE - (abstain_loss if f != "json" else 0),
        )
        for f in formats
    }
    n_abstain = round(n * ABSTAIN_SHARE)
    rows = []
    for q in range(n):
        insufficient = q >= n - n_abstain
        difficulty = rng.gauss(0, TAU)
        for f in formats:
            mu = mu_for(truth[f][1 if insufficient else 0])
            for k in range(perms):
                rows.append(cell(f, f"q{q}", k, insufficient, mu + difficulty + rng.gauss(0, 1) > 0))
    return rows, truth


ABSTENTION_TOLERANCE = None  # None: the judged code's default


def judge(rows: list[scoring.Cell], tolerance: float = 0.05) -> tuple[list[aggregates.Aggregate], list[gate.Verdict]]:
    table = aggregates.aggregate(rows, (None, None))
    if ABSTENTION_TOLERANCE is None:
        return table, gate.verdicts(rows, table, "json", tolerance)
    return table, gate.verdicts(rows, table, "json", tolerance, None, ABSTENTION_TOLERANCE)


def needed_total(v: gate.Verdict) -> int | None:
    """The number of questions a verdict asks for, as a total to pass to --generate-questions."""
    if v.questions_to_generate:
        return v.questions_to_generate
    needed = [n for n in v.questions_needed.values() if n]
    return math.ceil(max(needed) / (1 - ABSTAIN_SHARE)) if needed else None


def main(argv: list[str] | None = None) -> int:
    global TAU, BASE_PATH_RATE, BASE_ABSTAIN_RATE, ABSTENTION_TOLERANCE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tau", type=float, default=TAU, help=f"spread of question difficulty (default: {TAU})")
    parser.add_argument(
        "--base-rate",
        type=float,
        default=BASE_PATH_RATE,
        help=f"the baseline's path exact rate (default: {BASE_PATH_RATE})",
    )
    parser.add_argument(
        "--abstain-rate",
        type=float,
        default=BASE_ABSTAIN_RATE,
        help=f"its abstention rate (default: {BASE_ABSTAIN_RATE})",
    )
    parser.add_argument(
        "--abstention-tolerance", type=float, help="passed to verdicts() (default: the judged code's own)"
    )
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--sizes", default="30,60,150,200")
    parser.add_argument("--permutations", default="1,3")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument(
        "--rerun", action="store_true", help="also rerun undecided equal formats at the number of questions asked for"
    )
    args = parser.parse_args(argv)
    TAU, BASE_PATH_RATE, BASE_ABSTAIN_RATE, ABSTENTION_TOLERANCE = (
        args.tau,
        args.base_rate,
        args.abstain_rate,
        args.abstention_tolerance,
    )
    print(
        f"TAU {TAU}, baseline path exact {BASE_PATH_RATE}, abstention {BASE_ABSTAIN_RATE}, "
        f"{args.replicates} replicates per cell"
    )
    print(
        "| scenario | questions | permutations | accept | reject | undecided | interval covers the true rate | mean "
        "width |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for scenario in args.scenarios.split(","):
        for n in map(int, args.sizes.split(",")):
            for perms in map(int, args.permutations.split(",")):
                rng = random.Random(f"{scenario}/{n}/{perms}")
                counts = {"accept": 0, "reject": 0, "undecided": 0}
                covered = widths = 0
                for _ in range(args.replicates):
                    rows, truth = draw(rng, n, perms, scenario)
                    table, said = judge(rows)
                    tested = [v for v in said if v.format != "json"]
                    # the family: some format wrongly let through
                    counts["accept"] += any(v.verdict == "accept" for v in tested)
                    counts["reject"] += tested[0].verdict == "reject"
                    counts["undecided"] += tested[0].verdict == "undecided" and not any(
                        v.verdict == "accept" for v in tested
                    )
                    entry = next(e for e in table if e.format == "f1")
                    low, high = entry.metrics.path_exact.ci95 or (0.0, 1.0)
                    covered += low <= truth["f1"][0] <= high
                    widths += high - low
                r = args.replicates
                print(
                    f"| {scenario} | {n} | {perms} | {counts['accept'] / r:.3f} | {counts['reject'] / r:.3f} | "
                    f"{counts['undecided'] / r:.3f} | "
                    f"{covered / r:.3f} | {widths / r:.3f} |"
                )
    if args.rerun:
        print()
        print("| questions | permutations | undecided | asked for (median) | decided when drawn again at that number |")
        print("|---:|---:|---:|---:|---:|")
        for n in map(int, args.sizes.split(",")):
            for perms in map(int, args.permutations.split(",")):
                rng = random.Random(f"rerun/{n}/{perms}")
                asked, decided = [], 0
                for _ in range(args.replicates):
                    rows, _ = draw(rng, n, perms, "equal")
                    v = judge(rows)[1][0]
                    total = needed_total(v) if v.verdict == "undecided" and not v.blocked_by else None
                    if total is None or total > 5000:
                        continue
                    asked.append(total)
                    again = judge(draw(rng, total, perms, "equal")[0])[1][0]
                    decided += again.verdict != "undecided"
                share = f"{decided / len(asked):.3f}" if asked else ""
                print(f"| {n} | {perms} | {len(asked)} | {statistics.median(asked) if asked else ''} | {share} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
