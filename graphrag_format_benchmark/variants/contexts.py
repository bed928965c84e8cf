"""The graph a question's prompt shows (Context), and the variants that group them (Variant).

In: the checked inputs. Out: the graph a question's prompt shows (matrix.input_contexts picks the kind): one shared
graph for every question (the article's setting), each question's own as its file gives it, or --context khop's
neighbourhood of the question's start, cut breadth first with the edges of the relations it names kept (KHop). Also the
displayed edge order of a permutation (edge_order) and the subgraph of some edges (subgraph).
"""

from __future__ import annotations

import itertools
import random
import statistics
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from ..solver import describe_path, edge_index, incident_edges, partial_walks

if TYPE_CHECKING:
    from .._article import Graph, Problems, Question


SIZES = ("small", "medium", "large")
ID_VARIANTS = ("original", "short", "pseudonyms")
DEFAULT_SEED = 2026


@dataclass(frozen=True)
class Context:
    """The graph some questions' prompts show: the whole graph for every question (the article's setting, id
    ""), or one question's own subgraph (its id), given by the questions file or cut by --context khop."""

    id: str
    graph: Graph  # in its canonical order (permutation 0)
    questions: tuple[Question, ...]  # paths index into graph.edges; ids follow any renaming

    def seed(self, seed: int, size: str, what: str) -> str:
        """The seed string of a random choice about this context: '2026/medium/interleave' for the shared graph (as
        ever), '2026/medium/q7/interleave' for question q7's own."""
        return f"{seed}/{size}/{self.id}/{what}" if self.id else f"{seed}/{size}/{what}"


@dataclass(frozen=True)
class Variant:
    size: str  # small | medium | large
    ids: str  # original | short | pseudonyms
    contexts: tuple[Context, ...]  # one shared graph, or one per question
    branches: int  # distractor branches added to the input graph, over every context
    shortage: str = ""  # why it has fewer branches than its size wants, when the graph's names ran out
    mapping_sha256: str = ""  # --pseudonymize: SHA-256 of the renaming (old id -> [new id, new name])

    @property
    def name(self) -> str:
        return f"{self.size}/{self.ids}"

    @property
    def questions(self) -> tuple[Question, ...]:
        return tuple(q for c in self.contexts for q in c.questions)

    @property
    def shared(self) -> bool:
        """One graph for every question: the article's setting."""
        return len(self.contexts) == 1 and not self.contexts[0].id


# Contexts: what each question's prompt shows. The article's setting is one shared graph. A GraphRAG prompt
# shows the subgraph retrieved for its question instead: given by the questions file ("context": edges and
# nodes of the input graph, or a graph of its own), or cut by --context khop. Either way a context is a small
# graph of its own, with its own edge order, and every size, id variant, permutation and mode works on it as
# on the shared graph; the solver proves each one.
CONTEXT_KINDS = ("shared", "given", "khop")
RELATION_FLOOR = (
    2  # khop: edges of each relation a question names that a context holds at least (where the graph has them)
)
RELATION_SEARCH = 20_000  # khop: nodes a search for such edges past the depth sees at most


def cut_context(graph: Graph, q: Question, edges: list[int], nodes: list[str] | tuple[()] = ()) -> Context:
    """The question's context of the graph's edges (in that order) and nodes (listed first; then every other end of
    those edges, in order of first appearance), properties with them; its paths re-indexed into it."""
    wanted = list(
        dict.fromkeys([*nodes, *(end for i in edges for end in (graph.edges[i].source, graph.edges[i].target))])
    )
    at = {n.id: k for k, n in enumerate(graph.nodes)}
    keep = [at[v] for v in wanted]
    picked = graph.pick(edges)
    sub = replace(
        picked,
        nodes=tuple(graph.nodes[k] for k in keep),
        node_props=tuple(graph.node_props[k] for k in keep) if graph.node_props else (),
    )
    position = {old: new for new, old in enumerate(edges)}
    return Context(q.id, sub, (replace(q.moved(position), context=None),))


def given_context(graph: Graph, q: Question) -> Context:
    """A question's context as its file gives it: its own graph, or edges and nodes of the input graph."""
    given = q.context
    if given is None:  # called for the questions that give one
        raise AssertionError(f"question {q.id} gives no context")  # an internal bug
    if given.graph is not None:
        return Context(q.id, given.graph, (replace(q, context=None),))
    return cut_context(graph, q, list(given.edges), list(given.nodes))


def context_problems(graph: Graph, questions: tuple[Question, ...], src: str, problems: Problems) -> None:
    """A given context of the input graph must hold the question's start and every edge of its gold paths."""
    for q in questions:
        if not q.context or q.context.graph is not None:
            continue
        edges = set(q.context.edges)
        missing = sorted({i for p in q.paths for i in p} - edges)
        nodes = set(q.context.nodes) | {end for i in edges for end in (graph.edges[i].source, graph.edges[i].target)}
        if missing:
            problems.add(
                f"{src}: question {q.id}: its context leaves out gold edge(s) "
                f"{describe_path(graph.edges, tuple(missing))}; "
                "add them to the context, or make the question an abstention one",
                q.id,
            )
        elif q.query and q.query.start not in nodes:
            problems.add(
                f"{src}: question {q.id}: its context leaves out the start {q.query.start!r}; add it to the context",
                q.id,
            )


class TokenBudget(NamedTuple):
    """--context-tokens: a context graph's token count (in the baseline's format), the most it may count, and the
    search for the largest cut that fits (matrix.largest_fitting)."""

    count: Callable[[Graph], int]
    limit: int
    search: Callable[[Callable[[int], int], int, int, int, int, int | None], tuple[int, int]]


class KHop:
    """--context khop: per question, the neighbourhood of its start node, cut from the input graph. Breadth first
    out to --context-hops (each question's own hop count when not given), over edges in either direction; the
    edges of each layer are taken in a seeded random order until --context-edges is reached. The gold paths'
    edges (for an abstention question, the walks its query makes before the hop that fails) are always inside,
    at the place the search reaches them; those beyond the depth follow the rest. As a retriever that matches
    the question's words would, a context holds at least RELATION_FLOOR edges of each relation the question
    names: where the neighbourhood has fewer, the search goes on past the depth for edges of that relation only
    (without it, a near-miss abstention's failing relation is missing from most contexts, and its absence alone
    would tell a model to abstain). The nodes are the edges' ends, the start first. Every edge is a real edge
    of the graph: the distractors a production prompt has."""

    def __init__(
        self, graph: Graph, hops: int | None, budget: int, seed: int, tokens: TokenBudget | None = None
    ) -> None:
        self.graph, self.hops, self.budget, self.seed = graph, hops, budget, seed
        self.tokens = tokens  # --context-tokens: how a context's graph is counted, the most it may count, how to search
        self.over: list[str] = []  # questions whose gold edges alone are over the token budget
        self.index = edge_index(graph.edges)
        self.incident = incident_edges(graph, canonical=True)
        self.beyond: dict[str, int] = {}  # question id -> gold edges outside the searched depth

    def must(self, q: Question) -> list[int]:
        """The edges a question's context always holds, in order."""
        if not q.insufficient:
            return list(dict.fromkeys(i for p in q.paths for i in p))
        if q.query is None:
            return []
        stages = partial_walks(self.graph, q.query, self.index)[1:]  # the last is empty, or the walks an ask fails on
        return list(dict.fromkeys(i for walks in stages for path, _ in walks for i in path))[: self.budget]

    def start(self, q: Question) -> str | None:
        if q.query:
            return q.query.start
        if not q.paths or not q.paths[0]:
            return None
        first = self.graph.edges[q.paths[0][0]]
        if len(q.paths[0]) > 1:
            second = self.graph.edges[q.paths[0][1]]
            return first.source if first.target in (second.source, second.target) else first.target
        return first.source

    def context(self, q: Question) -> Context:
        rng = random.Random(f"{self.seed}/{q.id}/khop")
        must = self.must(q)
        needed = set(must)
        named = {h.relation for h in q.query.hops} if q.query else set()
        reserve = min(RELATION_FLOOR * len(named), max(self.budget - len(needed), 0))  # kept for _named_relations
        room = max(self.budget - len(needed) - reserve, 0)
        depth = (
            self.hops if self.hops is not None else len(q.query.hops) if q.query else max(map(len, q.paths), default=1)
        )
        start = self.start(q)
        taken: list[int] = []
        chosen: set[int] = set()
        frontier, reached = ([start], {start}) if start is not None else ([], set())
        for _ in range(depth):
            layer = list(dict.fromkeys(i for v in frontier for i in self.incident.get(v, ()) if i not in chosen))
            rng.shuffle(layer)
            frontier = []
            for i in layer:
                if i in needed:
                    pass
                elif room:
                    room -= 1
                else:
                    continue
                taken.append(i)
                chosen.add(i)
                for end in (self.graph.edges[i].source, self.graph.edges[i].target):
                    if end not in reached:
                        reached.add(end)
                        frontier.append(end)
        outside = [i for i in must if i not in chosen]
        self.beyond[q.id] = len(outside) if not q.insufficient else 0
        found = self._named_relations(q, start, taken + outside, room + reserve)
        edges, nodes = taken + found + outside, [start] if start is not None else []
        if self.tokens is None:
            return cut_context(self.graph, q, edges, nodes)
        return self._within_tokens(q, edges, nodes, needed)

    def _within_tokens(self, q: Question, edges: list[int], nodes: list[str], needed: set[int]) -> Context:
        """The context cut to the token budget: the most of its other edges, nearest first, with which its graph fits
        (the budget's search: a context grows in tokens about linearly with its edges, so a few counts); its gold edges
        always stay."""
        others = [i for i in edges if i not in needed]
        tokens = self.tokens
        if tokens is None:  # called only with a token budget
            raise AssertionError("a context cut to tokens without a budget")  # an internal bug
        count, limit = tokens.count, tokens.limit

        def cut(k: int) -> Context:
            kept = set(others[:k]) | needed
            return cut_context(self.graph, q, [i for i in edges if i in kept], nodes)

        everything = cut(len(others))
        whole = count(everything.graph)
        if whole <= limit:
            return everything
        least = count(cut(0).graph)
        if least > limit:
            self.over.append(q.id)
            return cut(0)
        k, _ = tokens.search(lambda n: count(cut(n).graph), limit, 0, least, len(others), whole)
        return cut(k)

    def _named_relations(self, q: Question, start: str | None, have: list[int], room: int) -> list[int]:
        """Edges of the relations the question names that the context lacks (up to RELATION_FLOOR each, within
        room), nearest to the start first: a breadth-first search over the whole graph, seeing at most
        RELATION_SEARCH nodes."""
        if q.query is None or start is None or not room:
            return []
        counts = Counter(self.graph.edges[i].relation for i in have)
        wanted = {
            h.relation: RELATION_FLOOR - counts[h.relation] for h in q.query.hops if counts[h.relation] < RELATION_FLOOR
        }
        found: list[int] = []
        seen, chosen = {start}, set(have)
        queue = deque([start])
        while queue and wanted and len(found) < room and len(seen) < RELATION_SEARCH:
            for i in self.incident.get(queue.popleft(), ()):
                e = self.graph.edges[i]
                if i not in chosen and wanted.get(e.relation, 0) > 0 and len(found) < room:
                    found.append(i)
                    chosen.add(i)
                    wanted[e.relation] -= 1
                    if not wanted[e.relation]:
                        del wanted[e.relation]
                for end in (e.source, e.target):
                    if end not in seen:
                        seen.add(end)
                        queue.append(end)
        return found

    def summary(self, contexts: list[Context]) -> ContextSummary:
        beyond = [qid for qid, n in self.beyond.items() if n]
        return replace(
            context_summary(contexts, "khop"),
            khop=KHopSummary(self.hops, self.budget, beyond, self.over if self.tokens is not None else None),
        )


@dataclass(frozen=True)
class KHopSummary:
    """What --context khop did, for the manifest and size_report.md."""

    hops: int | None  # --context-hops; None: each question's own hop count
    edges: int  # --context-edges: the most edges a context holds besides its gold paths'
    beyond_depth: list[str]  # questions whose gold edges lie beyond the depth, added after the rest
    over_tokens: list[str] | None  # questions whose gold edges alone are over --context-tokens; None without it

    @property
    def depth(self) -> int | str:
        """--context-hops, as the manifest and size_report.md say it."""
        return self.hops if self.hops is not None else "each question's own hop count"

    def record(self) -> dict[str, Any]:
        over = self.over_tokens
        return {
            "hops": self.depth,
            "gold_beyond_depth": len(self.beyond_depth),
            "gold_beyond_depth_questions": self.beyond_depth[:20],
            **({"gold_over_tokens": len(over), "gold_over_tokens_questions": over[:20]} if over is not None else {}),
        }


@dataclass(frozen=True)
class ContextSummary:
    """How large the contexts are, and for the abstention questions with a query, how many contexts show an edge of
    the relation whose hop fails (else a model could abstain from the relation's absence alone); record() is the
    manifest's preflight "contexts" (whose "edges" is --context-edges for khop, as it always was)."""

    kind: str  # given or khop
    contexts: int
    edges: dict[str, float] | None  # per context: min, median, max; None without a context
    nodes: dict[str, float] | None
    abstention_shown: int  # abstention questions whose context shows the failing hop's relation
    abstention_of: int  # abstention questions with a query
    khop: KHopSummary | None = None

    def record(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "contexts": self.contexts,
            "edges": self.edges if self.khop is None else self.khop.edges,
            "nodes": self.nodes,
            "abstention_relation_shown": {"contexts": self.abstention_shown, "of": self.abstention_of},
            **(self.khop.record() if self.khop else {}),
        }


def context_summary(contexts: list[Context], kind: str) -> ContextSummary:
    """The ContextSummary of these contexts (the khop facts are KHop.summary's)."""
    sizes = sorted(len(c.graph.edges) for c in contexts)
    nodes = sorted(len(c.graph.nodes) for c in contexts)
    misses = [(c, q.query) for c in contexts for q in c.questions if q.insufficient and q.query]
    shown = sum(any(e.relation == query.hops[-1].relation for e in c.graph.edges) for c, query in misses)
    return ContextSummary(
        kind,
        len(contexts),
        {"min": sizes[0], "median": statistics.median(sizes), "max": sizes[-1]} if sizes else None,
        {"min": nodes[0], "median": statistics.median(nodes), "max": nodes[-1]} if nodes else None,
        shown,
        len(misses),
    )


def edge_order(context: Context, size: str, k: int, seed: int) -> list[int]:
    """Displayed order of a context's edges for permutation k (0 keeps the canonical order)."""
    order = list(range(len(context.graph.edges)))
    if k:
        random.Random(context.seed(seed, size, f"permutation/{k}")).shuffle(order)
    return order


def subgraph(graph: Graph) -> Graph:
    """The graph's edges with exactly the nodes they use, in the nodes' order: no dangling ids, no idle nodes."""
    used = {e.source for e in graph.edges} | {e.target for e in graph.edges}
    keep = [n.id in used for n in graph.nodes]
    return replace(
        graph,
        nodes=tuple(itertools.compress(graph.nodes, keep)),
        node_props=tuple(itertools.compress(graph.node_props, keep)) if graph.node_props else (),
    )
