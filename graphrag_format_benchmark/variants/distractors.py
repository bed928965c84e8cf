"""Sizes medium and large (article 7.2): distractor branches that leave every answer alone.

In: a context and the questions' queries. Out: a seeded, endless stream of branches (Distractors), and the context
with the stream's first n interleaved at seeded positions (with_distractors).

A branch is a chain of one to three new nodes hanging off a question's start node, drawn by a random walk over the
input's own edges (each step a real relation and direction, and a real node whose role the new node copies). A
branch touches the rest of the graph only at its anchor; it is safe when no question's walk standing at the anchor
can end inside it or come back out of it. The solver then proves the whole variant.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

from .._article import Edge, Graph, warn
from ..solver import edge_index, partial_walks
from ..stores import is_description, replace_names
from .names import TYPE_SHARE_SLACK, Namer

if TYPE_CHECKING:
    from .._article import Node, Props, Query, Question
    from .contexts import Context


T = TypeVar("T")
# ("node", type, key) -> [(value, its node's name)]; ("edge", relation, key) -> [(value, (source name, target name))]
PropertyPools = dict[tuple[str, str, str], list[tuple[Any, str | tuple[str, str]]]]

MEDIUM_BRANCHES = (10, 20)  # distractor branches per start node in medium: drawn from this range
BRANCH_LENGTHS = (1, 2, 2, 3)
BRANCH_DRAWS = 40  # draws per branch before an anchor is given up as unable to take one
HELD = "held"  # Distractors._branch: no branch for now, only because the shares of new names are full


class Branch(NamedTuple):
    """A distractor branch: new nodes and the edges that chain them to the anchor, with their properties."""

    nodes: list[Node]
    edges: list[Edge]
    node_props: list[Props]
    edge_props: list[Props]


class Distractors:
    """A seeded, endless stream of safe distractor branches; its first n items are the same for any n. key: the
    context they are drawn for ("" for the shared graph); namer: a namer of the whole input graph to fork, so that a
    context's new nodes are named from every name of their role and never by a name in use anywhere in it; kinds:
    without one, the input's kinds its formats do not show (RunInputs.kinds), for a namer of its own."""

    def __init__(
        self,
        graph: Graph,
        questions: tuple[Question, ...],
        seed: int,
        key: str = "",
        namer: Namer | None = None,
        kinds: dict[str, str] | None = None,
    ):
        self.rng = random.Random(f"{seed}/{key}/distractors" if key else f"{seed}/distractors")
        self.graph = graph
        self.incident: dict[str, list[int]] = {}  # node id -> the edges that touch it
        for i, e in enumerate(graph.edges):
            self.incident.setdefault(e.source, []).append(i)
            if e.target != e.source:
                self.incident.setdefault(e.target, []).append(i)
        self.reach = self._reach(graph, [q for q in questions if q.query])
        self.namer = Namer(graph, self.rng, kinds) if namer is None else namer.fork(self.rng)
        self.pools = self._property_pools(graph) if graph.has_props else None
        starts = list(dict.fromkeys(q.query.start for q in questions if q.query))
        self.anchors = [a for a in starts if a in self.incident]
        low, high = MEDIUM_BRANCHES
        self.medium_counts = [self.rng.randint(low, high) for _ in self.anchors]
        self.items: list[Branch] = []
        self.failed: set[str] = set()  # anchors that can take no more branches
        self.unnamed: set[str] = set()  # of those, the ones whose branches could not be named
        self.exhausted = False  # a whole round of anchors made no branch: the stream ends here
        self._slots = self._slot_order()

    @staticmethod
    def _reach(graph: Graph, questions: list[Question]) -> dict[str, list[tuple[int, Query]]]:
        """node id -> [(j, query)]: some walk of query stands at that node after j < len(hops) hops."""
        index = edge_index(graph.edges)
        reach: dict[str, list[tuple[int, Query]]] = {}
        for q in questions:
            if q.query is None:  # the distractors' callers give questions with a query
                continue
            for j, walks in enumerate(partial_walks(graph, q.query, index)[:-1]):
                for node in {node for _, node in walks}:
                    reach.setdefault(node, []).append((j, q.query))
        return reach

    @staticmethod
    def _property_pools(graph: Graph) -> PropertyPools:
        """Where a new record's property values come from: (node type, key) -> [(value, name of its node)] and
        (relation, key) -> [(value, None)] over the input's records."""
        pools: PropertyPools = {}
        for n, props in graph.nodes_with_props():
            for k, v in props:
                pools.setdefault(("node", n.type, k), []).append((v, n.name))
        names = {n.id: n.name for n in graph.nodes}
        for e, props in graph.edges_with_props():
            for k, v in props:
                pools.setdefault(("edge", e.relation, k), []).append((v, (names[e.source], names[e.target])))
        return pools

    def _props_like(self, kind: str, group: str, props: Props, name: str | tuple[str, str] | None = None) -> Props:
        """Properties for a new record that copies one with props: the same keys, each value drawn from the values
        that key has on records of the same type (nodes) or relation (edges); a value that names its own node (an
        edge's: its two ends, in a description) names the new one (ones) instead."""
        out = []
        for k, _ in props:
            value, owner = self.rng.choice(cast(PropertyPools, self.pools)[(kind, group, k)])  # props: it has pools
            if isinstance(value, str) and owner and name:
                ends: dict[str, str] = dict(zip(owner, name)) if kind == "edge" else {cast(str, owner): cast(str, name)}
                value = replace_names(value, ends)
            out.append((k, value))
        return tuple(out)

    @property
    def medium(self) -> int:
        return sum(self.medium_counts)

    def _slot_order(self) -> Iterator[str]:
        """Anchors round-robin: first each anchor's medium count, then all of them forever."""
        round_no = 0
        while True:
            for a, anchor in enumerate(self.anchors):
                if round_no >= MEDIUM_BRANCHES[1] or round_no < self.medium_counts[a]:
                    yield anchor
            round_no += 1

    def first(self, n: int) -> list[Branch]:
        """The first n branches, or all there can be when no anchor can take another (names spent or held back
        by the shares, or every branch would complete a question's path): fewer than n then, for any larger n.
        Medium's branches keep the article's count per start node whatever the mix of types; past them, no type
        grows much more common among new nodes than among the input's (Namer.type_slack)."""
        stalled = 0  # anchors in a row that took no branch only because the shares were full
        while len(self.items) < n and not self.exhausted:
            self.namer.type_slack = math.inf if len(self.items) < self.medium else TYPE_SHARE_SLACK
            live = len(self.anchors) - len(self.failed)
            if not live or stalled >= live:
                self.exhausted = True  # a whole round made nothing
                break
            anchor = next(self._slots)
            if anchor in self.failed:
                continue
            branch = self._branch(anchor)
            if isinstance(branch, str):  # HELD
                stalled += 1
            elif branch is None:
                self._give_up(anchor)
            else:
                stalled = 0
                self.items.append(branch)
        return self.items[:n]

    def _give_up(self, anchor: str) -> None:
        self.failed.add(anchor)
        if anchor not in self.unnamed:
            had = sum(1 for b in self.items if anchor in (b.edges[0].source, b.edges[0].target))
            warn(
                f"no distractor branch can hang off {anchor!r} without completing a question's path; it gets "
                f"{'no more' if had else 'none'}"
            )

    def shortage(self, size: str, made: int, wanted: int | None) -> str:
        """Why a size got fewer branches than it wanted (None: large, which wants to fill the window)."""
        roles = ", ".join(role for role, _ in self.namer.unnamed.most_common(3))
        why = (
            (
                f"the graph's names are too few to vary into more new names without numbers or blends (spent first: "
                f"{roles})"
            )
            if roles
            else "no anchor can take another branch without completing a question's path"
        )
        sample = self.graph.edges[:100]
        if roles and not self.namer.typed and 2 * sum(is_description(e.relation) for e in sample) > len(sample):
            why += (
                "; its entities have one type and each relation is a description of its own, so few names share a role"
            )
        if wanted is None:
            return (
                f"large: {made} distractor branches could be made, fewer than it takes to fill --context-window: {why}"
            )
        return f"{size}: {made} of the {wanted} distractor branches it needs could be made: {why}"

    def _draw(self, anchor: str) -> list[tuple[str, str, str, int]]:
        """Steps (relation, direction, input node it copies, input
        edge it copies) of a random walk over the input's edges."""
        steps, here, came_by = [], anchor, None
        for _ in range(self.rng.choice(BRANCH_LENGTHS)):
            choices = [i for i in self.incident.get(here, ()) if i != came_by]
            if not choices:
                break
            i = self.rng.choice(choices)
            e = self.graph.edges[i]
            step = (e.relation, "out", e.target, i) if e.source == here else (e.relation, "in", e.source, i)
            steps.append(step)
            here, came_by = step[2], i
        return steps

    def _safe(self, anchor: str, steps: list[tuple[str, str, str, int]]) -> bool:
        """False if a question's walk standing at the anchor could end inside the branch or come back out of it.
        Positions along the chain: 0 the anchor, k the k-th new node."""
        for j, query in self.reach.get(anchor, ()):
            positions = {0}
            for hop in query.hops[j:]:
                moved = set()
                for p in positions:
                    if p < len(steps) and steps[p][:2] == (hop.relation, hop.direction):
                        moved.add(p + 1)
                    if p > 0 and steps[p - 1][0] == hop.relation and steps[p - 1][1] != hop.direction:
                        moved.add(p - 1)
                if 0 in moved:
                    return False  # back at the anchor through the branch: it could go on from there
                positions = moved
            if positions:
                return False
        return True

    def _branch(self, anchor: str) -> Branch | str | None:
        """A safe branch off anchor with at least one named node; after BRANCH_DRAWS draws, HELD when a share held
        its names back for now, else None."""
        named_none = held = False
        for _ in range(BRANCH_DRAWS):
            drawn = self._draw(anchor)
            steps = next((drawn[:n] for n in range(len(drawn), 0, -1) if self._safe(anchor, drawn[:n])), None)
            if not steps:  # the longest safe start of the draw
                continue
            nodes, edges, current = [], [], anchor
            for (
                relation,
                direction,
                like,
                copied,
            ) in steps:  # a start of a safe chain is safe: a chain cut where names run out
                node = self.namer.new_node(self.namer.nodes[like], (relation, direction))
                if node is None:
                    break
                nodes.append(node)
                edge = Edge(current, relation, node.id) if direction == "out" else Edge(node.id, relation, current)
                edges.append((self._described(edge, copied, nodes), like, copied))
                current = node.id
            if nodes:
                return self._with_props(nodes, edges)
            named_none = True
            held = held or self.namer.held
        if held:
            return HELD
        if named_none:
            self.unnamed.add(anchor)
        return None

    def _described(self, edge: Edge, copied: int, nodes: list[Node]) -> Edge:
        """A store's edge (its relation a description, stores.py) copied onto new nodes: the description names them,
        not the real ends of the edge it copies ('Leslie Lamport designed TLA+.' -> 'Ann Lee designed Zed.')."""
        if not is_description(edge.relation):
            return edge
        real = self.graph.edges[copied]
        names = {**{n.id: n.name for n in nodes}}
        name: Callable[[str], str] = lambda node_id: names.get(node_id) or self.namer.nodes[node_id].name  # noqa: E731
        mapping = {
            self.namer.nodes[real.source].name: name(edge.source),
            self.namer.nodes[real.target].name: name(edge.target),
        }
        return edge._replace(relation=replace_names(edge.relation, mapping))

    def _with_props(self, nodes: list[Node], edges: list[tuple[Edge, str, int]]) -> Branch:
        """The branch, its records given properties like the records they copy (none on a graph without any)."""
        if self.pools is None:
            return Branch(nodes, [e for e, _, _ in edges], [], [])
        by_node, copied_props = self.graph.props_by_node, self.graph.edge_props
        node_props = [
            self._props_like("node", self.namer.nodes[like].type, by_node.get(like, ()), node.name)
            for node, (_, like, _) in zip(nodes, edges)
        ]
        names = {**{n.id: n.name for n in nodes}}
        name: Callable[[str], str] = lambda node_id: names.get(node_id) or self.namer.nodes[node_id].name  # noqa: E731
        edge_props = [
            self._props_like(
                "edge",
                self.graph.edges[i].relation,
                copied_props[i] if copied_props else (),
                (name(e.source), name(e.target)),
            )
            for e, _, i in edges
        ]
        return Branch(nodes, [e for e, _, _ in edges], node_props, edge_props)


def interleave(originals: list[T], extras: list[T], rng: random.Random) -> tuple[list[T], list[int]]:
    """originals spread among extras at seeded positions, both keeping their order; and where each original went."""
    total = len(originals) + len(extras)
    positions = sorted(rng.sample(range(total), len(originals)))
    merged, extra_iter, slots = [], iter(extras), set(positions)
    original_iter = iter(originals)
    for i in range(total):
        merged.append(next(original_iter) if i in slots else next(extra_iter))
    return merged, positions


def with_distractors(context: Context, stream: Distractors, size: str, n: int, seed: int) -> tuple[Context, int]:
    """The context's graph plus the stream's first n branches, originals interleaved at seeded positions; and how
    many branches it got."""
    branches = stream.first(n) if n else []
    if not branches:
        return context, 0
    graph = context.graph
    rng = random.Random(context.seed(seed, size, "interleave"))
    new_edges = [(e, p) for b in branches for e, p in zip(b.edges, b.edge_props or itertools.repeat(()))]
    new_nodes = [(v, p) for b in branches for v, p in zip(b.nodes, b.node_props or itertools.repeat(()))]
    edges, edge_pos = interleave(list(graph.edges_with_props()), new_edges, rng)
    nodes, _ = interleave(list(graph.nodes_with_props()), new_nodes, rng)
    merged = Graph(
        tuple(n for n, _ in nodes),
        tuple(e for e, _ in edges),
        (),
        tuple(p for _, p in nodes) if graph.has_props else (),
        tuple(p for _, p in edges) if graph.has_props else (),
    )
    return replace(context, graph=merged, questions=tuple(q.moved(edge_pos) for q in context.questions)), len(branches)
