"""--pseudonymize: every entity renamed to a made-up name in its own style, one pseudonym per entity for the run.

In: the variants and a seed. Out: the id variant 'pseudonyms', beside the original names, with the questions'
texts, answers and answer ids following, and the renaming's SHA-256 for the manifest. An untyped graph's kinds are
read from its relations (role_groups); a one-word name is renamed within its kind (KIND_POOLS, another name of its
group, a head word), never to a blend. still_named finds what a renamed question text still gives away.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from .._article import Edge, Graph, Node, json_bytes, sha256_hex, warn
from ..progress import Progress
from ..solver import fold_answer
from ..stores import is_description
from .names import (
    NAME_DRAWS,
    WORD_MODEL_MIN_WORDS,
    Held,
    Namer,
    Vocabulary,
    WordModel,
    closed_value,
    common_words,
    head_words,
    in_case_of,
    kept_words,
    name_words,
    redrawn,
    script,
)

if TYPE_CHECKING:
    from .._article import Props
    from .contexts import Context, Variant


ROLE_MERGE = 0.5  # two roles are one group when this share of the smaller role's nodes plays both
ROLE_MERGE_MIN = 3  # ... and the smaller role has at least this many nodes (one odd node does not join two kinds)


def role_groups(graph: Graph) -> dict[str, str]:
    """An untyped graph's kinds, read from its relations: node id -> the key of its group. Roles (relation,
    direction) whose nodes mostly play both are one group (union-find over roles, merged when ROLE_MERGE of the
    smaller role's nodes play the other too): a person is the source of nationality, profession and spouse
    alike; the targets of nationality and the sources of contains (countries) are one group, the targets of
    profession another. A node goes to the group most of its roles' nodes are in; the key names the group's
    largest role ('nationality>' : what nationality points to). Deterministic: sorted, no draw."""
    plays: dict[str, set[tuple[str, str]]] = {}
    for e in graph.edges:
        plays.setdefault(e.target, set()).add((e.relation, ">"))
        plays.setdefault(e.source, set()).add((e.relation, "<"))
    members: dict[tuple[str, str], int] = Counter(r for roles in plays.values() for r in roles)
    both: Counter[tuple[tuple[str, str], tuple[str, str]]] = Counter(
        pair for roles in plays.values() for pair in itertools.combinations(sorted(roles), 2)
    )
    parent = {r: r for r in members}

    def root(r: tuple[str, str]) -> tuple[str, str]:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for (a, b), k in sorted(both.items()):
        smaller = min(members[a], members[b])
        if smaller >= ROLE_MERGE_MIN and k >= ROLE_MERGE * smaller:
            ra, rb = sorted((root(a), root(b)))
            parent[rb] = ra
    size: Counter[tuple[str, str]] = Counter()
    for r, k in members.items():
        size[root(r)] += k
    key: dict[tuple[str, str], str] = {}
    for r in sorted(members, key=lambda r: (-members[r], r)):  # each group named after its largest role
        key.setdefault(root(r), "".join(r[::-1]) if r[1] == "<" else "".join(r))
    groups = {}
    for node, roles in plays.items():
        weight: Counter[tuple[str, str]] = Counter()
        for r in roles:
            weight[root(r)] += members[r]
        groups[node] = key[min(weight, key=lambda g: (-weight[g], key[g]))]
    return groups


class Pseudonyms:
    """--pseudonymize's renaming, one per run: every entity gets one pseudonym, whatever the size, context,
    permutation or format it is shown in. The input's nodes are named first, in the input's order, so that
    their pseudonyms do not depend on the sizes asked for; a distractor is named when it first appears.
    A pseudonym is drawn like a distractor's name (words of the names of its role, in the same shape) and
    shares no word with the name it replaces ('Carol Lewis' never becomes 'Carol Torres')."""

    def __init__(self, graph: Graph, seed: int) -> None:
        self.namer = Namer(graph, random.Random(f"{seed}/pseudonyms"))
        self.namer.type_slack = math.inf  # every node is renamed: the mix of types is the input's by construction
        self.namer.keep_shape = True
        self.namer.kind_words = False  # a real country for a real country is a counterfactual, not a pseudonym
        several = [n.name.casefold() for n in graph.nodes if " " in n.name.strip()]
        self.namer.holds_input = Held(several) if several else None
        self.rng = random.Random(f"{seed}/pseudonyms/fallback")
        # (group, 'head' or 'word') -> its words in a seeded order, dealt in turn
        self.head_decks: dict[tuple[str | None, str], list[str]] = {}
        self.models: dict[str, WordModel | None] = {}  # group -> the character model of its one-word names (_invented)
        # the graph's words
        self.model_words = sorted({w for n in graph.nodes for w in n.name.split() if w.isalpha() and len(w) >= 4})
        self.graph_words = {w.casefold() for w in self.namer.graph_words}  # no made-up word is a word of a real name
        self.kept: Counter[str | None] = Counter()  # closed class -> names kept as they are (closed_value)
        # (role, folded real name) -> its pseudonym, for the name's other entities
        self.namesakes: dict[tuple[tuple[str, str], str], str] = {}
        self.renamed: dict[str, Node] = {}  # entity id -> its pseudonym node
        self.real = graph.nodes  # the input's nodes: the names a question text may still hold
        self.warned: set[str] = set()  # questions already said to still name a real name (once, not once per size)
        # the fallback: every name's words
        self.everyone = Vocabulary([n.name for n in graph.nodes], self.namer.graph_words)
        # node id -> its kind: its type, or on an untyped graph its role group, read from its relations
        self.groups = {n.id: n.type for n in graph.nodes} if self.namer.typed else role_groups(graph)
        by_group: dict[str, list[str]] = {}
        for n in graph.nodes:
            if n.id in self.groups:
                by_group.setdefault(self.groups[n.id], []).append(n.name)
        for group, names in by_group.items():
            self.namer.role_names[("group", group)] = names
        self.heads = {group: head_words(names) for group, names in by_group.items()}
        self.words = {
            group: sorted(set(name_words(names)) - set(self.heads[group])) for group, names in by_group.items()
        }
        self.common = {group: common_words(names) for group, names in by_group.items()}  # words a pseudonym keeps
        played: dict[
            tuple[str, str], Counter[str | None]
        ] = {}  # (relation, 'out' | 'in') -> the groups of the input's nodes in it
        for e in graph.edges:
            for role, end in (((e.relation, "out"), e.target), ((e.relation, "in"), e.source)):
                played.setdefault(role, Counter())[self.groups.get(end)] += 1
        self.role_group = {role: groups.most_common(1)[0][0] for role, groups in played.items()}
        self.reported: Counter[str] = Counter()  # namer.fallbacks already said, by kind
        self.examples: dict[str, str] = {}  # a kind of fallback -> its first case, for the warning
        self.rename(graph)

    def rename(self, graph: Graph) -> dict[str, Node]:
        """Name the graph's nodes that have no pseudonym yet; the pseudonym of each of its nodes."""
        roles: dict[str, tuple[str, str]] = {}
        for e in graph.edges:
            roles.setdefault(e.target, (e.relation, "out"))
            roles.setdefault(e.source, (e.relation, "in"))
        todo = [n for n in graph.nodes if n.id not in self.renamed]
        progress = Progress(len(todo), "pseudonyms")  # a line on stderr only past a few seconds
        for n in todo:  # a distractor takes the group of the input's nodes in its role, or of its type
            seen_as = roles.get(n.id)
            group = self.groups.get(n.id) or (
                n.type if self.namer.typed else self.role_group.get(seen_as) if seen_as is not None else None
            )
            role = ("group", group) if group in self.heads else roles.get(n.id, ("", "out"))
            self.renamed[n.id] = self._new(n, role)
            progress.advance(1, "--pseudonymize: naming")
        progress.close()
        return {n.id: self.renamed[n.id] for n in graph.nodes}

    def _new(self, n: Node, role: tuple[str, str]) -> Node:
        if closed_value(n.name) is not None:  # a month, a gender, a year: no one's name, and any other would be real
            self.kept[closed_value(n.name)] += 1
            self.examples.setdefault("kept", n.name)
            return n
        homonym = (role, n.name.casefold())  # real namesakes of one kind (three films 'Heat') stay namesakes: one
        if homonym in self.namesakes:  # pseudonym for the name, each with an id of its own
            name = self.namesakes[homonym]
            forced = self.namer._named(n, name) or self.namer._named(n, name, forced=True, namesake=True)
            return cast(Node, forced)  # forced: a node whatever is taken
        node = self._drawn(n, role)
        self.namesakes[homonym] = node.name
        return node

    def _drawn(self, n: Node, role: tuple[str, str]) -> Node:
        namer = self.namer
        # 'of', 'sir', 'university': no one's own
        common = self.common.get(role[1], set()) if role[0] == "group" else set()
        titles = kept_words(n.name)
        own = {w.casefold() for w in n.name.split(" ")} - titles
        namer.keep = own & common if own - common else set()  # but a name of common words only is redrawn whole
        kept = {part for w in namer.keep for part in re.findall(r"[^\W_]+", w)}  # 'inc' of 'inc.'
        kept |= {part for w in titles for part in re.findall(r"[^\W_]+", w)}
        namer.avoid = {w.casefold() for w in re.findall(r"[^\W_]+", n.name)} - kept
        namer.replacing = n.name.casefold().split(" ")
        try:
            if len(n.name.split()) == 1:
                return self._one_word(n, role)
            node = namer.new_node(n, role)
            if node is None and namer.keep:  # every name with its common words kept is in use: all its words drawn
                namer.avoid |= {part for w in namer.keep for part in re.findall(r"[^\W_]+", w)}
                namer.keep = set()
                node = namer.new_node(n, role)
            for attempt in range(
                NAME_DRAWS
            ):  # the group's names are spent: the words at the same places of every group's
                if node is not None:
                    return node
                name = self.everyone.draw(self.rng, n.name, attempt >= NAME_DRAWS // 2, namer.avoid, namer.keep)
                node = namer._named(n, name) if name and namer._fresh(name) else None
                if node is not None:
                    self._count(n, cast(str, name), "words of other groups' names at the same places")
            return node or self._last_resort(n)
        finally:
            namer.avoid, namer.keep, namer.replacing = set(), set(), []

    def _one_word(self, n: Node, role: tuple[str, str]) -> Node:
        """A one-word name's pseudonym, never another name of the graph: a word of its type's pool or of its group's
        names (new_node: a first name, a head word 'Petersburg'), else a word made by a character model of its
        group's one-word names ('Lorvia') or of all the graph's words, else the name redrawn by syllables. Never a
        word of another group's names: a city is not renamed 'Esposito', a religion not 'Petersburg'."""
        node = self.namer.new_node(n, role)
        node = node or self._from_heads(n, role)
        node = node or self._invented(n, role)
        return node or self._last_resort(n)

    def _invented(self, n: Node, role: tuple[str, str]) -> Node | None:
        """A word drawn by a character model (WordModel) of the one-word names of n's group, then of all the graph's
        words of four letters or more, in n's case, that is no name nor word of the graph (NAME_DRAWS tries)."""
        if not re.sub(r"[-'.]", "", n.name).isalpha():  # a code, a symbol, a number: redrawn in its own shape instead
            return None
        group = role[1] if role[0] == "group" else ""
        if group not in self.models:
            words = [w for w in self.namer.role_names.get(("group", group), []) if " " not in w.strip() and w.isalpha()]
            self.models[group] = WordModel(words) if len(set(words)) >= WORD_MODEL_MIN_WORDS else None
        if "" not in self.models:
            self.models[""] = (
                WordModel(self.model_words) if len(set(self.model_words)) >= WORD_MODEL_MIN_WORDS else None
            )
        models = [m for m in (self.models[group], self.models[""]) if m is not None]  # its group's, then the graph's
        for attempt in range(NAME_DRAWS if models else 0):
            word = models[min(2 * attempt // NAME_DRAWS, len(models) - 1)].draw(self.rng)
            name = (
                (
                    word[:1].upper() + word[1:].lower()
                    if n.name[:1].isupper() and not n.name.isupper()
                    else in_case_of(word.casefold(), n.name)
                )
                if word
                else None
            )
            if name and name.casefold() not in self.graph_words and self.namer._fresh(name):
                node = self.namer._named(n, name)
                if node is not None:
                    self._count(n, name, "words made by a character model of their group's one-word names")
                    return node
        return None

    def report(self) -> None:
        """Say, once per kind, what the pseudonyms made so far could not keep (namer.fallbacks), with an example."""
        for what, times in sorted(self.namer.fallbacks.items()):
            if times > self.reported[what]:
                example = self.examples.get(what, "")
                warn(
                    f"--pseudonymize: {times} of {len(self.renamed)} pseudonym(s) so far are {what}{example}: no real "
                    "name of "
                    "their group was left to draw from"
                )
                self.reported[what] = times
        kept = sum(self.kept.values())
        if kept > self.reported["kept"]:
            classes = ", ".join(f"{k} {kind}(s)" for kind, k in sorted(self.kept.items()))
            warn(
                f"--pseudonymize: {kept} name(s) are kept as they are, values of a small closed class ({classes}; such "
                "as "
                f"{self.examples['kept']!r}): they name no one, and another value would be a real one swapped in"
            )
            self.reported["kept"] = kept

    def _last_resort(self, n: Node) -> Node:
        """A pseudonym for a name no real word can rename: the name redrawn in its own shape (redrawn: a catalogue
        designation's digits and letters by kind, a word by syllables in its case and script, function words
        kept), NAME_DRAWS times at most; then, for a name nothing redraws (an emoji, punctuation), the name with a
        number added. Always a fresh name, in bounded time; counted in namer.fallbacks, which the run reports."""
        namer = self.namer
        for _ in range(NAME_DRAWS):
            name = redrawn(n.name, self.rng, namer.keep)
            if namer._fresh(name):
                return self._made(n, name, "made up in the shape of the name they replace")
        base = next(
            (b for b in (redrawn(n.name, self.rng, namer.keep) for _ in range(NAME_DRAWS)) if namer._fresh(b + " 2")),
            n.name,
        )
        for k in range(2, len(namer.names) + 3):  # one of these is free: there are fewer names in use
            name = f"{base} {k}"
            if name.casefold() not in namer.names:
                break
        return self._made(n, name, "the name they replace with a number added (nothing in it could be redrawn)")

    def _made(self, n: Node, name: str, what: str) -> Node:
        node = cast(Node, self.namer._named(n, name, forced=True))  # forced: a node whatever is taken
        self._count(n, name, what)
        return node

    def _count(self, n: Node, name: str, what: str) -> None:
        self.namer.fallbacks[what] += 1
        self.examples.setdefault(what, f" (such as {n.name!r} -> {name!r})")

    def _from_heads(self, n: Node, role: tuple[str, str]) -> Node | None:
        """A head word (head_words) of the node's group, then another word of its names (name_words), in its case,
        fresh, drawn in a seeded order; else None. Real words of the group's own names: a one-word film title
        takes 'Silent' of 'The Silent Heat' before a made-up word, which an n-gram classifier tells apart more."""
        group = role[1] if role[0] == "group" else None
        for kind, pool in (("head", self.heads), ("word", self.words)):
            words = pool.get(group, []) if group is not None else []
            # dealt in turn: each node
            deck = self.head_decks.setdefault((group, kind), self.rng.sample(words, len(words)))
            for _ in range(min(len(deck), 4 * NAME_DRAWS)):  # tries the next ones, a bounded number (a group of 5,000
                name = in_case_of(deck[-1], n.name)  # one-word names tried whole per node cost 25 million tries)
                deck.insert(0, deck.pop())
                if name.isalpha() == n.name.isalpha() and self.namer._fresh(name):
                    node = self.namer._named(n, name)
                    if node is not None:
                        return node
        return None


def with_pseudonyms(variant: Variant, pseudonyms: Pseudonyms) -> Variant:
    """--pseudonymize: every node renamed to its pseudonym (see Pseudonyms) with an id in its id's style; edges, gold
    answers, answer ids, queries, the question texts, the properties that quote a name and the relations that are a
    store's descriptions follow; types, relations' names and gold paths stay. A model that answers from memory instead
    of the graph scores lower here than on the original names, on the same questions."""
    contexts, mappings = [], {}
    for context in variant.contexts:
        renamed, mapping = _pseudonyms(context, pseudonyms.rename(context.graph), pseudonyms)
        contexts.append(renamed)
        mappings[context.id] = mapping
    pseudonyms.report()
    mapping_file = json_bytes(mappings[""] if variant.shared else mappings)
    return replace(variant, ids="pseudonyms", contexts=tuple(contexts), mapping_sha256=sha256_hex(mapping_file))


def _pseudonyms(
    context: Context, renamed: dict[str, Node], pseudonyms: Pseudonyms
) -> tuple[Context, dict[str, list[str]]]:
    """with_pseudonyms for one context: the renamed context and its renaming (old id -> [new id, new name])."""
    graph = context.graph
    by_name = {n.name: renamed[n.id].name for n in graph.nodes}
    # an id quoted in a question
    by_name.update({n.id: renamed[n.id].id for n in graph.nodes if len(n.id) > 2 and n.id not in by_name})
    text = Replacer(by_name, words=True).sub
    # a store's: names in it follow
    relations = {e.relation: text(e.relation) for e in graph.edges if is_description(e.relation)}
    folded = {fold_answer(n.name): renamed[n.id].name for n in graph.nodes}

    def props(all_props: tuple[Props, ...]) -> tuple[Props, ...]:
        return tuple(tuple((k, text(v) if isinstance(v, str) else v) for k, v in p) for p in all_props)

    new_graph = Graph(
        tuple(renamed[n.id] for n in graph.nodes),
        tuple(
            Edge(renamed[e.source].id, relations.get(e.relation, e.relation), renamed[e.target].id) for e in graph.edges
        ),
        graph.edge_ids,
        props(graph.node_props),
        props(graph.edge_props),
    )
    questions = tuple(
        replace(
            q,
            question=text(q.question),
            answers=q.answers
            if q.insufficient
            else tuple(dict.fromkeys(folded.get(fold_answer(a), text(a)) for a in q.answers)),
            answer_ids=tuple(renamed[i].id for i in q.answer_ids),
            query=replace(
                q.query,
                start=renamed[q.query.start].id,
                hops=tuple(h._replace(relation=relations.get(h.relation, h.relation)) for h in q.query.hops),
            )
            if q.query
            else None,
        )
        for q in context.questions
    )
    new_names = Replacer({n.name: " " for n in new_graph.nodes})
    for q in questions:
        left = still_named(new_names.sub(q.question), pseudonyms.real)  # the pseudonyms' own words are no leftovers
        if left and q.id not in pseudonyms.warned:
            pseudonyms.warned.add(q.id)
            warn(
                f"--pseudonymize: the text of question {q.id} may still name {', '.join(map(repr, left[:3]))} in "
                "another "
                "form than the graph's; rename it in the questions file, or use generated questions"
            )
    mapping = {n.id: [renamed[n.id].id, renamed[n.id].name] for n in graph.nodes}
    return replace(context, graph=new_graph, questions=questions), mapping


class Replacer:
    """Every occurrence in a text of a key of mapping (keys of blanks aside) replaced by its value, leftmost first and
    the longest at each place, as a regex of the keys sorted longest first would, without compiling one: 6,600 names
    took 1.6 s to compile, for each size. At each place only the lengths of the keys that begin with its character
    are tried. With words, a key counts only as a whole word or words, in any case ('ADA LOVELACE' is 'Ada Lovelace',
    'Cambridge' is not in 'Cambridgeshire'), and its value takes the case the text gives it (upper, title or lower)."""

    def __init__(self, mapping: dict[str, str], words: bool = False) -> None:
        self.words = words
        keyed = {k: v for k, v in mapping.items() if k.strip()}
        if (
            words
        ):  # by the lower case of each key, where lowering keeps its length (a key whose case is tricky stays as it is)
            keyed = {
                **{k: v for k, v in keyed.items() if len(k.lower()) != len(k)},
                **{
                    k.lower(): v
                    for k, v in sorted(keyed.items(), key=lambda kv: kv[0] != kv[0].lower())
                    if len(k.lower()) == len(k)
                },
            }
        self.mapping = keyed
        lengths: dict[str, set[int]] = {}
        for key in self.mapping:
            lengths.setdefault(key[0], set()).add(len(key))
        self.lengths = {c: sorted(ns, reverse=True) for c, ns in lengths.items()}

    def sub(self, text: str) -> str:
        seen = text.lower() if self.words and len(text.lower()) == len(text) else text
        out, i, last = [], 0, 0
        while i < len(text):
            n = next(
                (
                    n
                    for n in self.lengths.get(seen[i], ())
                    if seen[i : i + n] in self.mapping and self._whole(seen, i, n)
                ),
                0,
            )
            if n:
                out += [text[last:i], self._cased(text[i : i + n], self.mapping[seen[i : i + n]])]
                i = last = i + n
            else:
                i += 1
        return "".join(out) + text[last:]

    def _whole(self, text: str, i: int, n: int) -> bool:
        if not self.words:
            return True
        before, after = text[i - 1 : i], text[i + n : i + n + 1]
        return not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_")

    def _cased(self, found: str, value: str) -> str:
        if not self.words or found == value:
            return value
        if found.isupper():
            return value.upper()
        if found.islower():
            return value.lower()
        if found.istitle() and value.isupper():
            return " ".join(w[:1] + w[1:].lower() for w in value.split(" "))
        return value


def still_named(question: str, nodes: tuple[Node, ...]) -> list[str]:
    """The names a renamed question text (its pseudonyms taken out) may still hold: a word of a name of several words
    standing alone ('Thompson' of 'Karen Thompson'), or in Cyrillic an inflected form of a name's word ('Ирины' for
    'Ирина': the same word but for its last one to three letters). Only capitalised words of four letters or more count,
    and never the text's first word: 'Which' is not 'White'."""
    found = re.findall(r"[^\W\d_]+", question)
    words = {w for w in found[1:] if len(w) >= 4 and w[0].isupper()}
    if not words:
        return []
    left = []
    for n in nodes:
        for part in n.name.split(" ") if " " in n.name.strip() else [n.name]:
            part = part.strip(",.;:()\"'")
            if len(part) < 4:
                continue
            if (
                part in words
                and " " in n.name.strip()
                or (
                    script(part) == "CYRILLIC"
                    and len(part) >= 5
                    and any(
                        w != part and w[:-k] == part[:-k] and abs(len(w) - len(part)) <= 2
                        for w in words
                        for k in (1, 2, 3)
                        if len(w) > k + 2
                    )
                )
            ):
                left.append(n.name)
    return sorted(set(left))
