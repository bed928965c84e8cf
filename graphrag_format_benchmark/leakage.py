"""The leakage preflight (article 8.3): nothing but the graph may lead a model to the answer.

In: the questions, the graph variants, the template and the names of the files a run writes. Out: each check with its
result (pass, fail or warn) and what it found, by question. Matching is by whole words, where letters, digits and '_'
form words: 'gold' is not in 'Golden_Gate_Bridge', and 'russia' is not in the id 'grand_duke_of_russia' unless it
stands as a word of its own; a text with no letter or digit (a node named '.') never matches (whole_words.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._article import ABSTAIN
from .solver import fold_answer
from .whole_words import LEAKY_ID_WORDS, leaky_markers, mentioned, mentions

if TYPE_CHECKING:
    from ._article import Question, Template
    from .variants.contexts import Context


LEAKAGE_MODES = ("fail", "warn")


def _path_forms(path: tuple[int, ...]) -> list[str]:
    return [sep.join(map(str, path)) for sep in (", ", ",", "-", "_", " ")] if len(path) > 1 else []


def _answer_forms(q: Question) -> list[str]:
    return answer_forms(q.answers, q.answer_ids)


def answer_forms(answers: Iterable[str], answer_ids: Iterable[str]) -> list[str]:
    """The forms a leak is looked for in: the answers folded and the answer ids casefolded, each once."""
    return list(dict.fromkeys(a for a in (*map(fold_answer, answers), *(i.casefold() for i in answer_ids)) if a))


def wording_leaks(
    text: str, answers: Iterable[str], answer_ids: Iterable[str], paths: Iterable[tuple[int, ...]]
) -> list[str]:
    """What a question's wording gives away, as the checks question_has_no_answer and no_gold_path_outside_the_graph
    find it: ('Start at "Oslo". Follow capital backwards.', ['Oslo'], ['oslo'], [(3,)]) -> ['oslo']; a question drawn
    elsewhere (bench/synth_kg.py) is kept only when this is empty."""
    folded = fold_answer(text)
    return [a for a in answer_forms(answers, answer_ids) if mentions(folded, a)] + [
        f for p in paths for f in _path_forms(tuple(p)) if f in text
    ]


@dataclass(frozen=True)
class LeakageCheck:
    """One leakage check of article 8.3 and its outcome; record() is the manifest's dict."""

    name: str
    result: str  # pass, fail or warn
    detail: str  # what it checks, and the first findings
    found: list[tuple[str | None, str]]  # (the question at fault, or None for the template or a file; what was found)

    def record(self) -> dict[str, Any]:
        return {
            "check": self.name,
            "result": self.result,
            "detail": self.detail,
            "found": [{"question": qid, "found": what} for qid, what in self.found],
        }


def leakage_checks(
    questions: tuple[Question, ...],
    graphs: list[tuple[str, tuple[Context, ...]]],
    template: Template,
    file_names: list[str],
) -> list[LeakageCheck]:
    """Each check of article 8.3 with its result (pass, fail or warn) and its findings (question, found);
    graphs: (variant name, its contexts), for the checks of node ids and node order."""
    text = fold_answer(template.render("", "", ""))
    positives = [q for q in questions if not q.insufficient]
    forms = {q.id: _answer_forms(q) for q in positives}
    checks = []

    def check(name: str, found: list[tuple[str | None, str]], detail: str, level: str = "fail") -> None:
        shown = ", ".join(f"{qid}: {what}" if qid else what for qid, what in found[:5])
        shown += f" and {len(found) - 5} more" if len(found) > 5 else ""
        checks.append(LeakageCheck(name, level if found else "pass", f"{detail}: {shown}" if found else detail, found))

    check(
        "template_has_no_answer",
        [(q.id, repr(a)) for q in positives for a in forms[q.id] if mentions(text, a)],
        f"the instruction and answer schema hold no gold answer or answer id ({ABSTAIN}, the abstention label every "
        "prompt carries, is exempt)",
    )
    check(
        "question_has_no_answer",
        [(q.id, repr(a)) for q in positives for a in wording_leaks(q.question, q.answers, q.answer_ids, ())],
        "no question's wording contains its own answer or answer id",
    )
    check(
        "no_gold_path_outside_the_graph",
        [(q.id, repr(f)) for q in questions for p in q.paths for f in _path_forms(p) if f in text or f in q.question],
        "neither the template nor a question writes out a gold path",
    )
    owners: dict[str, list[str]] = {}  # answer form -> the questions it answers
    for q in positives:
        for a in forms[q.id]:
            owners.setdefault(a, []).append(q.id)
    check(
        "file_names_have_no_answer",
        [
            (qid, f"{name} has {a!r}")
            for name in sorted(set(file_names))
            for a in sorted(mentioned(fold_answer(name), owners))
            for qid in owners[a]
        ],
        "no output file name contains a gold answer or answer id",
    )
    _check_node_ids(check, graphs, text)
    check(
        "answer_not_always_first",
        _always_first(graphs),
        "in every variant, some gold answer is not the first node of its type in the node list",
        level="warn",
    )
    return checks


def _check_node_ids(check: Callable[..., None], graphs: list[tuple[str, tuple[Context, ...]]], text: str) -> None:
    """The checks of the graphs' node ids: none quoted by the template, none adding a marker word its name lacks."""
    graph_list = [(name, c.graph, c.questions) for name, contexts in graphs for c in contexts]
    ids = sorted({n.id for _, g, _ in graph_list for n in g.nodes})
    check(
        "no_few_shot_examples",
        [(None, repr(i)) for i in ids if not i.isalpha() and mentions(text, i.casefold())],
        "the template quotes no node id of the graph, so no few-shot example can repeat a gold path (ids of letters "
        "alone, like 'target', are ordinary words and not counted)",
    )
    nodes = {n.id: n for _, g, _ in graph_list for n in g.nodes}
    check(
        "ids_are_neutral",
        [
            (
                None,
                f"node id {i!r} (named {nodes[i].name!r}) adds the word "
                f"{', '.join(map(repr, leaky_markers(nodes[i])))}",
            )
            for i in ids
            if leaky_markers(nodes[i])
        ],
        f"no node id adds a marker word ({', '.join(LEAKY_ID_WORDS)}) that its node's name does not have: 'gold_1' for "
        "'Paris' would, 'Gold' for 'Gold' does not",
    )


def _always_first(graphs: list[tuple[str, tuple[Context, ...]]]) -> list[tuple[str | None, str]]:
    """The variants where every gold answer is the first node of its type in the node list, over every context of a
    variant (one question's own context is always "first" by chance)."""
    always_first: list[tuple[str | None, str]] = []
    for name, contexts in graphs:
        led = firsts = 0
        for c in contexts:
            first: dict[str, str] = {}
            types = {n.id: n.type for n in c.graph.nodes}
            for n in c.graph.nodes:
                first.setdefault(n.type, n.id)
            for q in c.questions:
                if q.answer_ids:
                    led += 1
                    firsts += any((t := types.get(a)) is not None and first.get(t) == a for a in q.answer_ids)
        if led and firsts == led and (len(contexts) == 1 or led > 1):
            always_first.append((None, name))
    return always_first
