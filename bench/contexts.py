"""Retrieved contexts against drawn distractors: what a prompt puts around the gold path in each.

    $ python bench/contexts.py [--edges 15000] [--questions 200] [--hops 2] [--context-edges 300]

On a synthetic KG (bench/synth_kg.py, untyped, English, properties on), the same generated questions are
measured two ways with the tool's own code: --context khop (each question's neighbourhood, real edges) and
the article's setting at --sizes medium (the whole graph plus drawn distractor branches). Per question it
counts the edges shown besides the gold path, how many of them carry a relation the question names (the
competitors a model must rule out), how many touch the start node, how many of those were drawn rather than
real, and the graph's json tokens; and it checks the solver's answer on every context. A third row adds the
drawn distractors of medium to each khop context. Deterministic: the same figures on every run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from contextlib import closing
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import benchmark  # noqa: E402
from graphrag_format_benchmark import matrix, measure, questions as questions_module, solver  # noqa: E402
from graphrag_format_benchmark.variants import contexts as variants_contexts  # noqa: E402

import synth_kg  # noqa: E402


def describe(contexts, tokenizer, real: set) -> dict:
    """Figures over the positive questions of some contexts; real: the input graph's edges, to tell drawn ones apart."""
    others, competing, at_start, drawn, tokens, counted = [], [], [], [], [], {}
    for c in contexts:
        for q in c.questions:
            if q.insufficient:
                continue
            gold = {i for p in q.paths for i in p}
            named = {h.relation for h in q.query.hops}
            rest = [e for i, e in enumerate(c.graph.edges) if i not in gold]
            others.append(len(rest))
            competing.append(sum(e.relation in named for e in rest))
            at_start.append(sum(q.query.start in (e.source, e.target) for e in rest))
            drawn.append(sum(q.query.start in (e.source, e.target) and e not in real for e in rest))
            if id(c.graph) not in counted:
                counted[id(c.graph)] = tokenizer.count(benchmark.serialized("json", c.graph))
            tokens.append(counted[id(c.graph)])
    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    return {
        "questions": len(others),
        "edges besides the gold path": med(others),
        "of a relation the question names": med(competing),
        "touching the start": med(at_start),
        "of those, drawn": med(drawn),
        "json graph tokens": med(tokens),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=15000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--hops", type=int, default=2)
    parser.add_argument("--context-edges", type=int, default=300)
    args = parser.parse_args(argv)
    data = synth_kg.make_graph(args.edges, 400, random.Random(1), props=random.Random(2))
    problems = benchmark.Problems()
    graph = benchmark.validate_graph(data, "kg", problems)
    spec = questions_module.GenerateSpec(args.questions, (1, 4), 0.2, variants_contexts.DEFAULT_SEED, "en", 0.25)
    qdata, _ = questions_module.generate_questions(graph, spec)
    scope = benchmark.GraphScope(len(graph.edges), {n.id for n in graph.nodes}, {})
    questions = benchmark.validate_questions(qdata, "generated", scope, problems)
    solver.check_questions(graph, questions, "generated", problems)
    bad = set(problems.questions())
    questions = tuple(q for q in questions if q.id not in bad)
    inputs = benchmark.RunInputs(graph, questions, {})
    tokenizer = benchmark.load_tokenizer("o200k_base")
    base = dict(
        formats=["json"],
        tokenizers=[tokenizer],
        ids=["original"],
        permutations=1,
        budget=None,
        context_window=128000,
        seed=variants_contexts.DEFAULT_SEED,
        write_prompts=False,
    )
    started = time.perf_counter()
    khop_plan = matrix.Plan(
        sizes=["small"], context="khop", context_hops=args.hops, context_edges=args.context_edges, **base
    )
    contexts, summary = matrix.input_contexts(inputs, khop_plan)
    facts = summary.record()  # as the manifest says it
    variant = variants_contexts.Variant("small", "original", tuple(contexts), 0)
    matrix.preflight_solver(variant)
    khop_seconds = time.perf_counter() - started
    medium_plan = matrix.Plan(sizes=["medium"], **base)
    with closing(measure.ThreadedCounts()) as counts:
        medium = matrix.build_variants(inputs, medium_plan, counts)[0]
    shared = medium.contexts[0]
    per_question = [variants_contexts.Context(q.id, shared.graph, (q,)) for q in shared.questions]
    with closing(measure.ThreadedCounts()) as counts:
        grown = matrix.build_variants(inputs, replace(khop_plan, sizes=["medium"]), counts, contexts)[0]
    real = set(graph.edges)
    rows = [
        ("--context khop: real neighbours", describe(contexts, tokenizer, real)),
        ("--context khop --sizes medium: and drawn branches", describe(grown.contexts, tokenizer, real)),
        ("--sizes medium: the whole graph and drawn branches", describe(per_question, tokenizer, real)),
    ]
    print(
        f"{len(data['nodes'])} nodes, {len(data['edges'])} edges, {len(questions)} questions; khop: {args.hops} hops, "
        "at most "
        f"{args.context_edges} edges; contexts cut and proven in {khop_seconds:.1f} s"
    )
    print(
        f"abstention contexts showing the failing relation: {facts['abstention_relation_shown']}; gold edges beyond "
        "the depth in "
        f"{facts['gold_beyond_depth']} question(s)"
    )
    keys = list(rows[0][1])
    print("| what each prompt shows (median over positive questions) | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for name, figures in rows:
        print(f"| {name} | " + " | ".join("" if figures[k] is None else f"{figures[k]:,.0f}" for k in keys) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
