"""The logged subgraphs as one graph: logged_graph.json, the ground generated questions are proven on.

In: each measured prompt's subgraph, as its layout showed it. Out: one graph of this tool's JSON records, each entity
once and each fact once. The frameworks show one entity in several ways: GraphRAG upper-cases its titles ("LESLIE
LAMPORT"), LlamaIndex keys a node by its name with each '"' a space, LightRAG and Neo4j by their names: an entity is
its name folded (casefolded, '"' a space, whitespace collapsed), shown by the first of its names that is not all
upper case. A fact is (source, relation, target) folded the same way. LightRAG shows a relationship by its description
alone; where another showing of the same two entities names the relation (LlamaIndex's ALGORITHM_DESIGN, a Neo4j
type), the fact takes that name and keeps the description as a property; a description that no showing names stays
the relation, as a store's is (questions then quote it). Memory grows with the distinct facts, not with the prompts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._article import Graph, Node, Props
from ..stores import DEFAULT_RELATION, DEFAULT_TYPE, is_description


def folded(text: str) -> str:
    """A name as the union keys it: 'LESLIE  LAMPORT' and 'Leslie "Lamport"' -> 'leslie lamport'."""
    return " ".join(text.replace('"', " ").casefold().split())


@dataclass(slots=True)
class Entity:
    """An entity of the union, filled in as later showings spell its name or give its type and properties."""

    id: str  # its name folded: the union's key
    name: str  # the first of its names that is not all upper case (else the first)
    type: str  # the first type shown other than the default
    props: dict[str, Any]  # every property shown, the first value of each


class Union:
    """The union of the logged subgraphs (see the module's docstring)."""

    def __init__(self) -> None:
        self.nodes: dict[str, Entity] = {}  # folded name -> the entity
        self.facts: dict[tuple[str, str, str], dict[str, Any]] = {}  # (source, relation, target), folded -> properties
        # two entities, folded -> a relation's name some showing gave them, in its direction
        self.named: dict[frozenset[str], tuple[str, str, str]] = {}
        self.conflicts = 0  # a property shown with two values: the first kept

    def add(self, graph: Graph) -> None:
        keys = {n.id: folded(n.name) or folded(n.id) for n in graph.nodes}
        for n, props in graph.nodes_with_props():
            self._node(keys[n.id], n, props)
        for e, props in graph.edges_with_props():
            source, target = keys.get(e.source, folded(e.source)), keys.get(e.target, folded(e.target))
            if e.relation != DEFAULT_RELATION and not is_description(e.relation):
                self.named.setdefault(frozenset((source, target)), (e.relation, source, target))
            fact = self.facts.setdefault((source, e.relation, target), {})
            self._merge(fact, dict(props))

    def _node(self, key: str, node: Node, props: Props) -> None:
        known = self.nodes.get(key)
        if known is None:
            self.nodes[key] = Entity(key, node.name, node.type, dict(props))
            return
        if known.name.isupper() and not node.name.isupper():  # GraphRAG's title: another showing spells the name
            known.name = node.name
        if known.type == DEFAULT_TYPE:
            known.type = node.type
        self._merge(known.props, dict(props))

    def _merge(self, into: dict[str, Any], props: dict[str, Any]) -> None:
        for k, v in props.items():
            if into.setdefault(k, v) != v:
                self.conflicts += 1

    def records(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """graph.json's node and edge records (benchmark.validate_graph reads them): node ids are the folded names."""
        nodes = [{"id": n.id, "name": n.name, "type": n.type, **n.props} for n in self.nodes.values()]
        for key in {end for s, _, t in self.facts for end in (s, t)} - set(self.nodes):  # named only by a fact
            nodes.append({"id": key, "name": key, "type": DEFAULT_TYPE})
        # (source, relation folded, target) -> its name and properties
        merged: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
        for (source, relation, target), props in self.facts.items():
            named = self.named.get(frozenset((source, target)))
            if named is not None and (relation == DEFAULT_RELATION or is_description(relation)):
                # a description where another showing named the relation: that name, in its direction
                props = {**({"description": relation} if relation != DEFAULT_RELATION else {}), **props}
                relation, source, target = named
            known = merged.setdefault((source, folded(relation), target), (relation, {}))
            self._merge(known[1], props)  # each fact once, whichever framework showed it
        edges = [
            {"source": source, "relation": relation, "target": target, **props}
            for (source, _, target), (relation, props) in merged.items()
        ]
        return nodes, edges
