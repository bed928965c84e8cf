"""Ids a variant shows instead of the input's: short node ids (article 10, 12) and stable edge ids (--edge-ids).

In: a variant or a context. Out: the same with every node renamed n1, n2, ... in a seeded order (edges, answer ids
and query starts follow), or with every edge given the id e1, e2, ... in its canonical order.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import TYPE_CHECKING

from .._article import Edge

if TYPE_CHECKING:
    from .contexts import Context, Variant


def renamed_ids(context: Context, new_id: dict[str, str]) -> Context:
    """The context with every node id replaced by new_id[id]: edges, answer ids and query starts follow."""
    graph = context.graph
    renamed = replace(
        graph,
        nodes=tuple(n._replace(id=new_id[n.id]) for n in graph.nodes),
        edges=tuple(Edge(new_id[e.source], e.relation, new_id[e.target]) for e in graph.edges),
    )
    questions = tuple(
        replace(
            q,
            answer_ids=tuple(new_id[i] for i in q.answer_ids),
            query=replace(q.query, start=new_id[q.query.start]) if q.query else None,
        )
        for q in context.questions
    )
    return replace(context, graph=renamed, questions=questions)


def with_short_ids(variant: Variant, seed: int) -> Variant:
    """Every node renamed n1, n2, ... in a seeded order, per context (article 12: short local ids); edges, gold
    answers and queries follow."""
    contexts = []
    for context in variant.contexts:
        order = list(range(len(context.graph.nodes)))
        random.Random(context.seed(seed, variant.size, "ids")).shuffle(order)
        contexts.append(
            renamed_ids(context, {context.graph.nodes[j].id: f"n{rank + 1}" for rank, j in enumerate(order)})
        )
    return replace(variant, ids="short", contexts=tuple(contexts))


def with_edge_ids(context: Context) -> Context:
    """--edge-ids: each edge of the context gets the stable id e1, e2, ... in its canonical order, where the input's
    edges are interleaved with the distractors', so an id says nothing of which edges are gold. A permutation
    moves the edges and their ids together."""
    return replace(
        context, graph=replace(context.graph, edge_ids=tuple(f"e{k + 1}" for k in range(len(context.graph.edges))))
    )
