"""aggregates.py: per group and format, every metric with its interval over questions and its spread across
permutations."""

from kg_graphs import make_cell
from test_runner import PERFECT

from graphrag_format_benchmark import aggregates, scoring
from graphrag_format_benchmark.statistics import question_means


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
    json_row, dsl_row = aggregates.aggregate(scored, (None, None))
    assert json_row.path_exact_spread == (0.5, 0.0, 1.0, 0.7071, 2)
    # one question asked in two permutations: one question's value (0.5), no interval from one question
    assert json_row.metrics.path_exact == aggregates.Rate(k=1, n=2, rate=0.5, questions=1, ci95=None, method=None)
    assert (json_row.tokens_per_correct_path, dsl_row.tokens_per_correct_path) == (2000.0, 500.0)
    assert (json_row.pareto, dsl_row.pareto) == (False, True)
    assert json_row.cost is None
    assert json_row.latency_s == (0.15, 0.2)
    assert json_row.finish_reasons == {"stop": 2}
    written = json_row.as_json()  # results.json's entry: every key in its place
    assert written["path_exact_spread"] == {"mean": 0.5, "min": 0.0, "max": 1.0, "sd": 0.7071, "runs": 2}
    assert written["path_exact"] == {"k": 1, "n": 2, "rate": 0.5, "questions": 1, "ci95": None, "method": None}
    assert written["latency_s"] == {"median": 0.15, "p95": 0.2}
    assert list(written)[-2:] == ["pareto_tokens", "pareto"] and written["pareto_tokens"] == "prompt_tokens"
    none_right = [c._replace(**{**scoring.FAILED_SCORES._asdict(), "parse_success": True}) for c in scored]
    # no correct path: no star
    nobody = aggregates.aggregate(none_right, (None, None))
    assert not any(e.pareto for e in nobody) and "pareto" not in nobody[0].as_json()


def test_hop_buckets_are_the_metrics_of_their_cells_alone_even_where_a_question_spans_two():
    import random

    from graphrag_format_benchmark.aggregates import RATE_METRICS, Columns

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
    by_hops = aggregates.hop_metrics(col)
    for bucket, entry in by_hops.items():  # each bucket: its rows alone, as a column of their own
        mine = [r for r in rows if r["hops"] == bucket]
        picked = Columns(*(tuple(r.get(f) for r in mine) for f in Columns._fields))
        assert entry == aggregates.HopFigures(
            len(mine), aggregates.answer_metrics(picked), aggregates.diagnosis_counts(picked.diagnosis)
        )
    assert sorted(by_hops) == ["1", "2", "3", "4+", "abstention"]
    assert by_hops["1"].metrics.answer_correct.questions == 3  # q0, q5 (its positive cells), q3 (its cells of bucket 1)
    # truths summed once are what the floats' fsum makes
    groups = aggregates.question_positions(col).positive
    for metric in RATE_METRICS:
        assert question_means(col.metric(metric), groups, True) == question_means(col.metric(metric), groups)
