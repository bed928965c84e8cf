"""Questions drawn from the graph (--generate-questions), and questions written back in the input file's shape.

In: a checked graph and a GenerateSpec (how many, hop counts, the shares of abstentions and of questions about
properties, a seed). Out: question records in the questions file's shape, which benchmark.py then checks like any
file's (so generated and given questions meet the same rules), and how many were drawn per hop count.

Every draw takes one seeded random.Random; a near-miss abstention question walks one hop its role's peers can take
and its own nodes cannot. question_dict writes any question back in the file's shape.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from ._article import ABSTAIN, Ask, BenchmarkError, Condition, Hop, Query, validate_query
from .formats import graph_dict
from .solver import (
    MISSING,
    EdgeIndex,
    edge_index,
    fold_answer,
    gold_answers,
    incident_edges,
    partial_walks,
    prop_of,
    solve,
)
from .stores import BOOKKEEPING, is_description
from .whole_words import mentions
from .wording import Wording

if TYPE_CHECKING:
    from ._article import Graph, Question
    from .wording import Phrase


def singular_or_plural(singular: str, plural: str, values: Sequence[object]) -> dict[str, Any]:
    """A field as a question file writes it: {'answer': 'A'} for one value, {'answers': ['A', 'B']} for more."""
    return {singular: values[0]} if len(values) == 1 else {plural: list(values)}


GENERATION_DRAWS = 200  # draws per question before a hop count is given up as unable to yield more
# slots in a row of one hop count and kind left unfilled: the
# graph yields no more of them, and no draw is spent on the rest
EXHAUSTED = 3
POOL_EXACT = (
    5_000  # a role's (peer, hop) entries up to which a near miss is drawn from exact counts; beyond, by sampling
)
NEAR_MISS_TRIES = 64  # entries drawn at random for a near miss of a larger role before this draw gives up
MAX_GOLD_PATHS = 20  # a generated query with more complete walks than this is drawn again
MAX_ANSWERS = 5  # nor one with more answer nodes: a set a model can be asked to name one of
DEFAULT_PROPERTY_SHARE = 0.25  # of generated questions, on a graph with properties: about them


@dataclass(frozen=True)
class GenerateSpec:
    n: int
    hops: tuple[int, int]  # fewest and most hops
    abstain_share: float
    seed: int
    language: str  # ru or en: the question texts' language
    property_share: float = 0.0  # share of questions that ask for a property or put a condition on a hop
    wording: str = "natural"  # natural (English only; Russian is always templated) | template
    phrases: tuple[tuple[str, Phrase], ...] = ()  # --relation-phrases: relation -> how it reads


def relation_kinds(graph: Graph) -> dict[str, str]:
    """A framework store's relations by kind (stores.py: each relation is an edge's description, so no two edges share
    one): its keywords (LightRAG's) where the edge has them, else every description one kind. The roles of an untyped
    store are read from these kinds, as a typed graph's are from its types."""
    kinds = {}
    for e, props in graph.edges_with_props():
        if e.relation not in kinds and is_description(e.relation):
            kinds[e.relation] = next(
                (f"keywords {v}" for k, v in props if k == "keywords" and isinstance(v, str) and v.strip()),
                "a description",
            )
    return kinds


class Roles:
    """Who else plays a node's part: nodes of its type, or on an untyped graph the nodes at the same end of the
    relation it was reached by (of a relation of its kind, in a framework's store: relation_kinds); and which hops
    those peers can take."""

    def __init__(self, graph: Graph, index: EdgeIndex) -> None:
        self.index = index
        self.kinds = relation_kinds(graph)
        self.type = {n.id: n.type for n in graph.nodes}
        self.typed = len(set(self.type.values())) > 1
        self.by_type: dict[str, list[str]] = {}
        for n in graph.nodes:
            self.by_type.setdefault(n.type, []).append(n.id)
        self.peer_sets: dict[str, set[str]] = {}  # a typed role -> its nodes
        # (hop | property, role) -> _pool; what a pool holds is a hop (relation, direction) or a property key: Any
        self.pools: dict[tuple[str, str], tuple[list[tuple[str, Any]], Counter[Any], list[Any]]] = {}
        self.ends: dict[tuple[str, str], set[str]] = {}  # (relation, "out"|"in") -> nodes reached that way
        self.hops_of: dict[str, set[tuple[str, str]]] = {}  # node -> the (relation, direction) it can follow
        for node, relation, direction in index:
            self.hops_of.setdefault(node, set()).add((relation, direction))
            self.ends.setdefault(
                (self.kinds.get(relation, relation), "in" if direction == "out" else "out"), set()
            ).add(node)

    def peers(self, nodes: set[str], came_by: Hop) -> tuple[str, set[str]]:
        """(how the role is named, its nodes) of the nodes reached
        (by the hop came_by: at the start, one of its edges)."""
        if self.typed:
            types = sorted({self.type[v] for v in nodes})
            role = f"type {', '.join(types)}"
            if (
                role not in self.peer_sets
            ):  # built once per role: a type of a large graph has tens of thousands of nodes
                self.peer_sets[role] = {p for t in types for p in self.by_type[t]}
            return role, self.peer_sets[role]
        key = (self.kinds.get(came_by.relation, came_by.relation), came_by.direction)
        return f"reached by {key[0]} {key[1]}", self.ends.get(key, set())

    def _pool(
        self, what: str, role: str, peers: set[str], of: Callable[[str], list[Any]]
    ) -> tuple[list[tuple[str, Any]], Counter[Any], list[Any]]:
        """A role's (peer, hop or property) entries in a fixed order, how many peers have each, and those sorted: built
        once per role."""
        pool = self.pools.get((what, role))
        if pool is None:
            entries = [(p, x) for p in sorted(peers) for x in of(p)]
            having = Counter(x for _, x in entries)
            pool = self.pools[(what, role)] = (entries, having, sorted(having))
        return pool

    def _draw(
        self,
        what: str,
        role: str,
        peers: set[str],
        nodes: set[str],
        of: Callable[[str], list[Any]],
        held: set[Any],
        rng: random.Random,
    ) -> tuple[Any, int] | None:
        """What the role's peers but none of nodes have, drawn in proportion to how many peers have it, with that
        count: from exact counts while the role has at most POOL_EXACT entries; beyond, an entry drawn at random
        until one fits (the same proportion, each draw O(1); at most NEAR_MISS_TRIES), so a role of a 150,000-edge
        graph costs no pass over its nodes per question."""
        entries, having, keys = self._pool(what, role, peers, of)
        inside = Counter(x for v in nodes if v in peers for x in of(v))
        if len(entries) <= POOL_EXACT:  # the peers outside nodes that have each, as a pass over them would count
            options = [x for x in keys if x not in held and having[x] > inside[x]]
            if not options:
                return None
            x = rng.choices(options, [having[h] - inside[h] for h in options])[0]
            return x, having[x] - inside[x]
        for _ in range(NEAR_MISS_TRIES):
            p, x = entries[rng.randrange(len(entries))]
            if p not in nodes and x not in held:
                return x, having[x] - inside[x]
        return None

    def near_miss(self, nodes: set[str], came_by: Hop, rng: random.Random) -> tuple[Hop, dict[str, Any]] | None:
        """A hop the role's peers can take and none of nodes can, drawn in proportion to how many peers take it."""
        role, peers = self.peers(nodes, came_by)
        held = {h for v in nodes for h in self.hops_of.get(v, ())}
        # a store's edge reads alike both ways
        held |= {(r, "in" if d == "out" else "out") for r, d in held if r in self.kinds}
        drawn = self._draw("hop", role, peers, nodes, lambda p: sorted(self.hops_of.get(p, ())), held, rng)
        if drawn is None:
            return None
        (relation, direction), n = drawn
        return Hop(relation, direction), {"role": role, "peers": len(peers), "peers_with_hop": n}

    def missing_property(
        self, nodes: set[str], came_by: Hop, graph: Graph, rng: random.Random
    ) -> tuple[str, dict[str, Any]] | None:
        """A property the role's peers have and none of nodes has, drawn in proportion to how many peers have it."""
        if not nodes:
            return None
        role, peers = self.peers(nodes, came_by)
        props = graph.props_by_node
        held = {k for v in nodes for k, _ in props.get(v, ())}
        drawn = self._draw(
            "property", role, peers, nodes, lambda p: [k for k, v in props.get(p, ()) if askable(k, v)], held, rng
        )
        if drawn is None:
            return None
        key, n = drawn
        return key, {"role": role, "peers": len(peers), "peers_with_property": n}


def orderable(value: object) -> bool:
    """A value a generated condition may compare: a number, or a
    string that starts like an ISO date (1969, 2019-05-01)."""
    return not isinstance(value, bool) and (
        isinstance(value, (int, float))
        or isinstance(value, str)
        and re.match(r"\d{4}(-\d\d){0,2}(\b|T)", value) is not None
    )


def askable(key: str, value: object) -> bool:
    """A property a generated question may ask for or set a condition on: not a framework's bookkeeping (where a
    record came from, when, its chunk: shown with --store-fields all, never a fact to ask about), and a value a short
    answer can give."""
    return key not in BOOKKEEPING and answerable_value(value)


def answerable_value(value: object) -> bool:
    """A value a generated question may ask for: a number, a boolean,
    or a string of 1 to 3 words and at most 40 characters."""
    return not isinstance(value, str) or len(value) <= 40 and 1 <= len(value.split()) <= 3


def question_drawer(spec: GenerateSpec) -> Callable[[Graph, str], tuple[list[dict[str, Any]], dict[int, int]]]:
    """What load_inputs calls to draw the questions of --generate-questions from the graph it read (named where)."""

    def draw(graph: Graph, where: str) -> tuple[list[dict[str, Any]], dict[int, int]]:
        if not graph.edges:
            raise BenchmarkError(
                f"{where}: the graph has {len(graph.nodes):,} node(s) and no edge: no question can walk it; give a "
                "graph "
                "with relationships"
            )
        questions, counts = generate_questions(graph, spec)
        if not questions:
            raise BenchmarkError(
                f"{where}: the graph yields no question of {spec.hops[0]}-{spec.hops[1]} hops (a start needs a "
                "name no other node has, and edges to walk); try other --hops"
            )
        return questions, counts

    return draw


def generate_questions(graph: Graph, spec: GenerateSpec) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """Questions in the input file's shape, drawn with a seeded random.Random; and how many per hop count."""
    rng = random.Random(f"{spec.seed}/questions")
    index = edge_index(graph.edges)
    incident = incident_edges(graph, canonical=True)
    names = {n.id: n.name for n in graph.nodes}
    name_count = Counter(fold_answer(n.name) for n in graph.nodes)
    # a start the text names unambiguously
    starts = sorted(i for i in incident if name_count[fold_answer(names[i])] == 1)
    # no draw is spent on it otherwise: the same questions as before
    share = spec.property_share if graph.has_props else 0.0
    word = Wording(graph, spec.language, spec.wording, spec.phrases)
    draw = QuestionDraw(graph, index, incident, names, starts, Roles(graph, index), rng, word, share)
    lo, hi = spec.hops
    n_abstain = round(spec.n * spec.abstain_share)
    plan = [(lo + k % (hi - lo + 1), False) for k in range(spec.n - n_abstain)]
    plan += [(lo + k % (hi - lo + 1), True) for k in range(n_abstain)]
    made: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()  # (start, hops as JSON)
    texts: set[str] = set()
    counts: Counter[int] = Counter()
    # (hops, abstain) -> slots in a row its draws could not fill: past EXHAUSTED, the graph has no more
    missed: Counter[tuple[int, bool]] = Counter()
    for hops_n, abstain in plan:
        if missed[hops_n, abstain] >= EXHAUSTED:
            continue
        for _ in range(GENERATION_DRAWS if starts else 0):
            q = draw(hops_n, abstain)
            if (
                q is not None
                and word.reads
                and not reads_one_way(graph, validate_query(q["query"], "", set(names)), index, incident, word.reads)
            ):
                continue  # its wording would not say which of several facts to follow
            if (
                q is not None
                and not q["insufficient"]
                and any(name_count[fold_answer(a)] > 1 for a in q.get("answers", [q.get("answer")]))
            ):
                # an answer another node's name equals, case aside (PARIS beside Paris): scored right for either
                continue
            if (
                q is not None
                and (q["query"]["start"], json.dumps(q["query"]["hops"])) not in seen
                and q["question"] not in texts
            ):
                seen.add((q["query"]["start"], json.dumps(q["query"]["hops"])))
                texts.add(q["question"])  # no two questions read alike: a reader could not tell them apart
                made.append(q)
                counts[hops_n] += 1
                missed[hops_n, abstain] = 0
                break
        else:
            missed[hops_n, abstain] += 1
    # An abstention question asks for "nodes" as often as a positive one has an answer set: the wording says nothing.
    positives = [q for q in made if not q["insufficient"]]
    share = sum("answers" in q for q in positives) / len(positives) if positives else 0.0
    for q in made:
        if q["insufficient"] and rng.random() < share:
            query = validate_query(q["query"], "", set(names))
            text = word(names[query.start], list(query.hops), several=True, ask=query.ask)
            if text not in texts:
                texts.discard(q["question"])
                texts.add(text)
                q["question"] = text
    ordered = sorted(made, key=lambda q: (len(q["query"]["hops"]), q["insufficient"]))
    for k, q in enumerate(ordered, 1):
        q["id"] = f"g{k:0{len(str(len(ordered)))}d}"
    return [{"id": q.pop("id"), **q} for q in ordered], dict(sorted(counts.items()))


def reads_one_way(
    graph: Graph, query: Query, index: EdgeIndex, incident: dict[str, list[int]], reads: dict[str, tuple[str, str]]
) -> bool:
    """Whether a query over a store's relations says no more than it means: at every node a walk of it stands at, no
    edge but the ones its hop follows reads like that hop (reads: relation -> its wording, which has no direction).
    Else the question would admit an answer its gold paths do not hold: two descriptions that read alike once their
    names are masked, a description on two edges, one walked the other way. The last hop of an abstention question
    must read like no edge at all where it fails."""
    stages = partial_walks(graph, query, index)
    for hop, walks in zip(query.hops, stages):
        said = reads.get(hop.relation)
        if said is None:
            continue
        for node in {node for _, node in walks}:
            for i in incident.get(node, ()):
                e = graph.edges[i]
                follows = e.relation == hop.relation and (
                    e.source == node if hop.direction == "out" else e.target == node
                )
                if not follows and reads.get(e.relation) == said:
                    return False
    return True


@dataclass
class QuestionDraw:
    """One draw of a generated question: a walk from a random start, then a near miss for an abstention question."""

    graph: Graph
    index: EdgeIndex
    incident: dict[str, list[int]]  # solver.incident_edges
    names: dict[str, str]
    starts: list[str]
    roles: Roles
    rng: random.Random
    word: Wording
    property_share: float = 0.0

    def __call__(self, hops_n: int, abstain: bool) -> dict[str, Any] | None:
        rng, edges = self.rng, self.graph.edges
        start = rng.choice(self.starts)
        hops, node, came_by = [], start, None
        props = bool(self.property_share) and rng.random() < self.property_share  # a question about properties
        for _ in range(hops_n - abstain):
            choices = [i for i in self.incident[node] if i != came_by]
            if not choices:
                return None
            i = rng.choice(choices)
            hop = Hop(edges[i].relation, "out") if edges[i].source == node else Hop(edges[i].relation, "in")
            hops.append(hop._replace(where=self._condition(node, hop, i)) if props else hop)
            node, came_by = (edges[i].target if hop.direction == "out" else edges[i].source), i
        query = Query(start, tuple(hops))
        if abstain:
            return self._near_miss(query, props)
        if props:
            query = replace(query, ask=self._ask(node, cast(int, came_by)))  # a generated question has a hop or more
        found = solve(self.graph, query, self.index)
        ends = sorted({end for _, end in found})
        if not found or len(found) > MAX_GOLD_PATHS or len(ends) > MAX_ANSWERS:
            return None
        answers = gold_answers(self.graph, query, found)
        several = len(answers) > 1 if query.ask else len(ends) > 1
        if query.ask and query.ask.of_ == "edge" and several:
            return None  # "the last edge" is one edge: its value must be one
        text = self.word(self.names[start], list(query.hops), several=several, ask=query.ask)
        if any(mentions(fold_answer(text), a) for a in (*map(fold_answer, answers), *(e.casefold() for e in ends))):
            return None  # its wording would give the answer away (a walk back to the start)
        if several and rng.random() < 0.7:
            return None  # prefer one answer; keep some answer sets, never drop them all
        return {
            "id": "",
            "question": text,
            "insufficient": False,
            "query": _query_dict(query),
            **singular_or_plural("answer", "answers", answers),
            **singular_or_plural("answer_id", "answer_ids", ends),
            **singular_or_plural("path", "paths", [list(p) for p, _ in found]),
        }

    def _condition(self, node: str, hop: Hop, i: int) -> tuple[Condition, ...]:
        """A condition on the edge i just drawn that it meets and another edge the hop could follow does not
        (the drawn edge's value the lowest, highest or only one of its kind: <=, >= or =), or none."""
        props = self.graph.edge_props
        if not props or not props[i]:
            return ()
        siblings = [j for j in self.index.get((node, hop.relation, hop.direction), ()) if j != i]
        options = []
        for key, value in props[i]:
            if not orderable(value) or key in BOOKKEEPING:
                continue
            others = [
                v
                for j in siblings
                if (v := prop_of(props[j], key)) is not MISSING
                and isinstance(v, str) == isinstance(value, str)
                and not isinstance(v, bool)
                and v != value
            ]
            if others:
                least, most = min(cast(list[Any], others)), max(cast(list[Any], others))  # all numbers, or all texts
                op = "<=" if value < least else ">=" if value > most else "="
                options.append(Condition(key, op, value))
        return (self.rng.choice(options),) if options else ()

    def _ask(self, node: str, last: int) -> Ask | None:
        """A property of the node reached, or else of the last edge followed, to ask for instead of the node: one
        whose value a short answer can give (not a description)."""
        node_props = [k for k, v in self.graph.props_by_node.get(node, ()) if askable(k, v)]
        if node_props:
            return Ask("node", self.rng.choice(node_props))
        edge_props = (
            [k for k, v in self.graph.edge_props[last] if askable(k, v)]
            if self.graph.edge_props and last is not None
            else []
        )
        return Ask("edge", self.rng.choice(edge_props)) if edge_props else None

    def _near_miss(self, query: Query, props: bool = False) -> dict[str, Any] | None:
        """The walk of query, then one more hop that the reached nodes' role can take and they cannot; or, for a
        question about properties whose walk reaches nodes that lack a property their role's peers have, that
        property asked for."""
        if props and query.hops:
            reached = {end for _, end in solve(self.graph, query, self.index)}
            key = self.roles.missing_property(reached, query.hops[-1], self.graph, self.rng)
            if key is not None and not solve(self.graph, replace(query, ask=Ask("node", key[0])), self.index):
                query = replace(query, ask=Ask("node", key[0]))
                text = self.word(self.names[query.start], list(query.hops), ask=query.ask)
                return {
                    "id": "",
                    "question": text,
                    "insufficient": True,
                    "query": _query_dict(query),
                    "answer": ABSTAIN,
                    "path": [],
                    "answer_id": None,
                    "near_miss": {"hop": "ask", **key[1]},
                }
        if query.hops:
            reached = {end for _, end in solve(self.graph, query, self.index)}
            came_by = query.hops[-1]
        else:
            reached = {query.start}
            e = self.graph.edges[self.rng.choice(self.incident[query.start])]  # the start's role: one of its edges
            came_by = Hop(e.relation, "out") if e.target == query.start else Hop(e.relation, "in")
        if not reached:
            return None
        missed = self.roles.near_miss(reached, came_by, self.rng)
        if missed is None:
            return None
        hop, why = missed
        query = Query(query.start, (*query.hops, hop))
        if solve(self.graph, query, self.index):
            return None
        text = self.word(self.names[query.start], list(query.hops))
        return {
            "id": "",
            "question": text,
            "insufficient": True,
            "query": _query_dict(query),
            "answer": ABSTAIN,
            "path": [],
            "answer_id": None,
            "near_miss": {"hop": len(query.hops), **why},
        }


def _query_dict(query: Query) -> dict[str, Any]:
    """A query in the input file's shape: 'where' only on hops that have conditions, 'ask' only when it asks."""
    hops = [
        {
            "relation": h.relation,
            "direction": h.direction,
            **({"where": [{"property": c.key, "op": c.op, "value": c.value} for c in h.where]} if h.where else {}),
        }
        for h in query.hops
    ]
    return {
        "start": query.start,
        "hops": hops,
        **({"ask": {"property": query.ask.key, "of": query.ask.of_}} if query.ask else {}),
    }


def question_dict(q: Question, graph: Graph | None = None) -> dict[str, Any]:
    """A question in the input file's shape (singular fields where there is one value), so a variant's
    questions can be fed back with --questions; with graph, its own context's graph goes with it."""
    item = {"id": q.id, "question": q.question, **singular_or_plural("answer", "answers", q.answers)}
    item.update(singular_or_plural("path", "paths", [list(p) for p in q.paths]) if q.paths else {"path": []})
    item["insufficient"] = q.insufficient
    if q.insufficient:
        item["answer_id"] = None
    elif q.answer_ids:
        item.update(singular_or_plural("answer_id", "answer_ids", q.answer_ids))
    if q.query is not None:
        item["query"] = _query_dict(q.query)
    if graph is not None:
        item["context"] = {"graph": graph_dict(graph, flat=True)}
    return item
