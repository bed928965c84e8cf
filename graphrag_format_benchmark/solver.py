"""The control solver (article 8.5): a plain traversal, no model, that the gold data must agree with.

In: a graph's edges and a question's query (benchmark.Query). Out: every complete walk, the answers they give, and
for a question that disagrees, which hop failed and what the graph offers instead (check_questions).

A walk follows the query's hops from its start, each along an existing edge (out: source to target, in: backwards
from target to source) and may pass an edge again when the hops lead back over it. The gold paths must be exactly the
complete walks, and the answer ids exactly their end nodes. MAX_WALKS bounds the search.
"""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, cast

from ._article import BenchmarkError, scalar_text

if TYPE_CHECKING:
    from ._article import Ask, Condition, Edge, Graph, Problems, Props, Query, Question


def fold_answer(text: str) -> str:
    """The article's answer normalization (4.5): trimmed, casefolded, ё as е."""
    return text.strip().casefold().replace("ё", "е")


def holds(condition: Condition, props: Props) -> bool:
    """The condition holds on a record's properties: a missing property, or a value of another kind (a string
    against a number), never holds. holds(('since', '<=', 2010), (('since', 2005),)) -> True"""
    value = dict(props).get(condition.key, MISSING)
    wanted, op = condition.value, condition.op
    if (
        value is MISSING
        or (type(value) is bool) != (type(wanted) is bool)
        or isinstance(value, str) != isinstance(wanted, str)
    ):
        return False
    if op in ("=", "!="):
        equal: bool = value == wanted  # Props' values are typed Any
        return equal == (op == "=")
    if isinstance(value, bool):
        return False
    compared: dict[str, bool] = {"<": value < wanted, "<=": value <= wanted, ">": value > wanted, ">=": value >= wanted}
    return compared[op]


MISSING = object()


def prop_of(props: Props, key: str) -> object:
    """A property's value, or _MISSING."""
    for k, v in props:
        if k == key:
            return v
    return MISSING


MAX_WALKS = 1_000_000  # partial paths a query may have before the solver gives up, instead of running for hours
EdgeIndex = dict[tuple[str, str, str], list[int]]  # (node, relation, direction) -> edge indices (edge_index)
Walk = tuple[tuple[int, ...], str]  # (edge indices, node reached)


def edge_index(edges: tuple[Edge, ...]) -> dict[tuple[str, str, str], list[int]]:
    """(node, relation, direction) -> indices of the edges one hop can follow from that node."""
    index: dict[tuple[str, str, str], list[int]] = {}
    for i, e in enumerate(edges):
        index.setdefault((e.source, e.relation, "out"), []).append(i)
        index.setdefault((e.target, e.relation, "in"), []).append(i)
    return index


def partial_walks(graph: Graph, query: Query, index: EdgeIndex | None = None) -> list[list[Walk]]:
    """The walks of query after 0, 1, ... len(hops) hops, each as (edge indices, node reached); a hop with
    conditions follows only the edges they hold on. edges a-R->b, b-S->c; start a, hops [R out, S out] ->
    [[((), 'a')], [((0,), 'b')], [((0, 1), 'c')]]"""
    edges, props = graph.edges, graph.edge_props
    index = edge_index(edges) if index is None else index
    stages: list[list[Walk]] = [[((), query.start)]]
    for hop in query.hops:
        stages.append(
            [
                (path + (i,), edges[i].target if hop.direction == "out" else edges[i].source)
                for path, node in stages[-1]
                for i in index.get((node, hop.relation, hop.direction), ())
                if not hop.where or all(holds(c, props[i] if props else ()) for c in hop.where)
            ]
        )
        if len(stages[-1]) > MAX_WALKS:
            raise BenchmarkError(
                f"the query from {query.start!r} has over {MAX_WALKS:,} partial paths; give it more selective hops"
            )
    return stages


def asked(graph: Graph, ask: Ask, walk: Walk) -> object:
    """The value an ask question wants at the end of a walk (its end node's or last edge's property), or _MISSING."""
    path, end = walk
    if ask.of_ == "edge":
        return prop_of(graph.edge_props[path[-1]], ask.key) if graph.edge_props and path else MISSING
    return prop_of(graph.props_by_node.get(end, ()), ask.key)


def solve(graph: Graph, query: Query, index: EdgeIndex | None = None) -> list[Walk]:
    """Every complete path of query as (edge indices, end node): the walks that made every hop (and, for a
    question that asks for a property, end where it has a value)."""
    return complete(graph, query, partial_walks(graph, query, index)[-1])


def complete(graph: Graph, query: Query, walks: list[Walk]) -> list[Walk]:
    """The walks that made every hop, kept when they end where the property asked for has a value."""
    return [w for w in walks if asked(graph, query.ask, w) is not MISSING] if query.ask else walks


def value_text(value: object) -> str:
    """A property value as an answer names it: 'Kazan', '1969', '2.5', 'true'."""
    return value if isinstance(value, str) else scalar_text(value)


def gold_answers(graph: Graph, query: Query, walks: list[Walk]) -> list[str]:
    """The answers complete walks give: the names of their end nodes, or the values they ask for."""
    if query.ask:
        return sorted({value_text(asked(graph, query.ask, w)) for w in walks})
    names = graph.names
    return sorted({names[end] for _, end in walks})


def incident_edges(graph: Graph, canonical: bool = False) -> dict[str, list[int]]:
    """node id -> the edges that touch it, in the file's order; with canonical, in the order of the edges' content
    (source, relation, target, properties), so that what is drawn from them is the same whatever order the file
    lists the edges in (generated questions and --context khop: the same graph read from JSON, triples, RDF or
    GraphML gives the same questions and contexts)."""
    order: range | list[int] = range(len(graph.edges))
    if canonical:
        props = graph.edge_props
        order = sorted(order, key=lambda i: (graph.edges[i], json.dumps(props[i], ensure_ascii=False) if props else ""))
    incident: dict[str, list[int]] = {}
    for i in order:
        e = graph.edges[i]
        incident.setdefault(e.source, []).append(i)
        if e.target != e.source:
            incident.setdefault(e.target, []).append(i)
    return incident


def answerable(graph: Graph, q: Question, index: EdgeIndex | None = None) -> bool:
    """The solver still finds the gold outcome on this graph: a gold path, or none at all to abstain on."""
    found = solve(graph, _query(q), index)
    if q.insufficient:
        return not found
    gold = set(q.paths)
    return any(path in gold for path, _ in found)


def _query(q: Question) -> Query:
    """A question's query, which the solver's callers check it has."""
    if q.query is None:
        raise AssertionError(f"question {q.id} has no query to solve")  # an internal bug
    return q.query


def describe_path(edges: tuple[Edge, ...], path: tuple[int, ...]) -> str:
    """'[0, 3] (a -R-> b, b -S-> c)': the indices to write in a question, and the edges they stand for."""
    shown = ", ".join(f"{edges[i].source} -{edges[i].relation}-> {edges[i].target}" for i in path)
    return f"[{', '.join(map(str, path))}] ({shown})"


def _paths(edges: tuple[Edge, ...], paths: list[tuple[int, ...]]) -> str:
    shown = "; ".join(describe_path(edges, p) for p in paths[:3])
    return shown + (f"; and {len(paths) - 3} more" if len(paths) > 3 else "")


def solver_problem(graph: Graph, q: Question, index: EdgeIndex) -> str | None:
    """What the solver finds that the question's gold data does not say, or None when they agree."""
    edges, query = graph.edges, _query(q)
    stages = partial_walks(graph, query, index)
    found = complete(graph, query, stages[-1])
    if q.insufficient:
        if found:
            return (
                f"an abstention question, but the query finds {len(found)} complete path(s): "
                f"{_paths(edges, [p for p, _ in found])}; fix the query or make the question answerable"
            )
        return None
    if not found:
        if stages[-1]:  # every hop was made: the ask is what fails
            ask = cast("Ask", query.ask)  # with no ask, every walk made is complete
            return (
                f"the query's walks end where no {ask.of_} has the property {ask.key!r} "
                f"({_paths(edges, [p for p, _ in stages[-1]])}); ask for another property or fix the query"
            )
        return hop_failure(graph, query, stages, index)
    walks, gold = {p for p, _ in found}, set(q.paths)
    if walks != gold:
        extra, missing = sorted(walks - gold), sorted(gold - walks)
        message = f"the query finds {len(walks)} complete path(s), the question lists {len(gold)} gold path(s)"
        if extra:
            message += f"; found but not listed: {_paths(edges, extra)}"
        if missing:
            message += f"; listed but not found: {_paths(edges, missing)}"
        fix = "list every complete path in `paths` or narrow the query" if not missing else "fix the paths or the query"
        return f"{message}; {fix}"
    ends = sorted({end for _, end in found})
    if ends != sorted(set(q.answer_ids)):
        return f"the gold paths end at {ends} but answer_ids are {sorted(set(q.answer_ids))}; make them the same"
    if query.ask:
        values = gold_answers(graph, query, found)
        stray = [a for a in q.answers if fold_answer(a) not in {fold_answer(v) for v in values}]
        if stray:
            return (
                f"answer {stray[0]!r} is not a value of {query.ask.key!r} where the gold paths end "
                f"({', '.join(map(repr, values[:3]))}); "
                "make the answers those values"
            )
    return None


def hop_failure(graph: Graph, query: Query, stages: list[list[Walk]], index: EdgeIndex) -> str:
    """Which hop found no edge, from how many nodes, and which relations leave those nodes instead."""
    edges = graph.edges
    j = next(k for k in range(1, len(stages)) if not stages[k]) - 1
    hop = query.hops[j]
    nodes = sorted({node for _, node in stages[j]})
    at = (
        f"{len(nodes)} node(s) ({', '.join(nodes[:3])}{', ...' if len(nodes) > 3 else ''})"
        if j
        else f"the start {query.start!r}"
    )
    leaving: dict[str, set[str]] = {"out": set(), "in": set()}
    wanted = set(nodes)
    for node, relation, direction in index:
        if node in wanted:
            leaving[direction].add(relation)
    way = "forwards (out)" if hop.direction == "out" else "backwards (in)"
    message = f"hop {j + 1} of {len(query.hops)} ({hop.relation} {hop.direction}) finds no edge from {at}"
    if hop.where and hop.relation in leaving[hop.direction]:
        shown = " and ".join(f"{c.key} {c.op} {value_text(c.value)}" for c in hop.where)
        return message + f" where {shown}; loosen the condition or fix the query"
    here = sorted(leaving[hop.direction])
    message += (
        f"; relations they can follow {way}: {', '.join(here[:8])}{', ...' if len(here) > 8 else ''}"
        if here
        else f"; they have no edge to follow {way}"
    )
    other = "in" if hop.direction == "out" else "out"
    if hop.relation in leaving[other]:
        message += f'; {hop.relation} leaves them in the other direction: use "{other}"'
    else:
        close = difflib.get_close_matches(hop.relation, sorted({e.relation for e in edges}), n=1)
        if close:
            message += f"; did you mean {close[0]!r}?"
    return message


def walk_ends(edges: list[Edge]) -> set[str]:
    """End nodes of the walks that follow the edges in order, each forwards or backwards from where the
    previous one ended (never reversed as written); empty if the chain breaks.

    a-R->b, c-S->b -> {'c'} (b is reached forwards, then S is followed backwards to c)"""
    ends = set()
    for current in {edges[0].target, edges[0].source} if edges else ():
        for e in edges[1:]:
            if e.source == current:
                current = e.target
            elif e.target == current:
                current = e.source
            else:
                break
        else:
            ends.add(current)
    return ends


def check_questions(whole: Graph, questions: tuple[Question, ...], src: str, problems: Problems) -> None:
    """Each question against the graph (or the graph of its own context): answers name the answer nodes, a path
    without a query is a connected walk, and the solver's complete walks are the gold paths. One problem per
    question that fails."""
    whole_index = edge_index(whole.edges)
    for q in questions:
        where = f"{src}: question {q.id}"
        own = q.context.graph if q.context and q.context.graph is not None else None
        graph, index = (own, edge_index(own.edges)) if own is not None else (whole, whole_index)
        names = graph.names
        try:
            problem = _answer_problem(q, names)
            if problem is None and q.query is None:
                broken = [p for p in q.paths if p and not walk_ends([graph.edges[k] for k in p])]
                if broken:
                    problem = f"path {describe_path(graph.edges, broken[0])} is not a connected walk; fix the path"
            if problem is None and q.query is not None:
                problem = solver_problem(graph, q, index)
        except BenchmarkError as e:
            problem = str(e)
        if problem:
            problems.add(f"{where}: {problem}", q.id)


def _answer_problem(q: Question, names: dict[str, str]) -> str | None:
    if (
        q.insufficient or not q.answer_ids or q.query and q.query.ask
    ):  # an ask question's answers are values: the solver checks them
        return None
    named = {fold_answer(names[i]) for i in q.answer_ids} | {i.casefold() for i in q.answer_ids}
    stray = [a for a in q.answers if fold_answer(a) not in named]
    if not stray:
        return None
    nodes = ", ".join(f"{i!r} is named {names[i]!r}" for i in q.answer_ids[:3])
    return f"answer {stray[0]!r} is not the name of an answer node ({nodes}); make the answer the node's name"
