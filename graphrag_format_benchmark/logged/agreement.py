"""Two answers to one logged question compared by what they name: the entities of the context each answer names.

In: the answer to what was sent and the answer with the context in another format, and the subgraph the context
shows. Out: per format, how often the two agree by the entities they name (Reading: the entity ids an answer names as
whole words, casefolded; or that it abstains; or that it is no answer), beside how often their texts are equal after
the article's normalization, each with its Wilson interval, and every pair where the two figures differ, for reading
by hand.

Logged prompts ask in their own words, so answers are sentences: "Leslie Lamport collaborated with Radia Perlman." and
"Radia Perlman" name the same entity where their texts differ. Two answers agree when they name the same entities;
both abstaining agree; an answer that names no entity of the context is compared by its text; a non-answer (an empty
text, a relation's name, the prompt echoed) agrees with nothing.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from .._article import ABSTAIN, Graph
from ..solver import fold_answer
from ..statistics import wilson
from .measure import LOGGED

# what an answer that abstains says, after fold_answer: the article's label, and the usual phrasings of a model that
# finds no answer in its context
ABSTAINING = (
    ABSTAIN.casefold(),
    "insufficient data",
    "insufficient information",
    "not enough information",
    "no information",
    "cannot be determined",
    "can't be determined",
    "cannot determine",
    "does not contain",
    "doesn't contain",
    "does not mention",
    "doesn't mention",
    "does not say",
    "not mentioned",
    "not provided",
    "i don't know",
    "i do not know",
)
ECHO = 200  # characters of the prompt an answer repeats, past which it is the prompt echoed, not an answer


class Reading(NamedTuple):
    """What an answer says, for comparing: 'entities' (the ids it names, possibly none: then its folded text),
    'abstains', or 'non_answer' (why)."""

    kind: str
    entities: frozenset[str] = frozenset()
    text: str = ""


class Names:
    """A context's entities as an answer names them: each entity's folded name and id -> its id, matched as whole
    words, the longest at a place."""

    def __init__(self, graph: Graph) -> None:
        self.ids: dict[str, str] = {}
        for n in graph.nodes:
            for key in (fold_answer(n.name), fold_answer(n.id)):
                if any(c.isalnum() for c in key):
                    self.ids.setdefault(key, n.id)
        self.relations = {_plain(e.relation) for e in graph.edges}
        self.longest = max(map(len, self.ids), default=0)

    def named(self, text: str) -> frozenset[str]:
        """The ids of the entities text names (text folded): whole words, a name inside a longer one not counted."""
        starts = [m.start() for m in WORD_START.finditer(text)]
        ends = [m.end() for m in WORD_END.finditer(text)]
        found: list[tuple[int, int, str]] = []
        for i in starts:
            for j in ends[bisect.bisect_right(ends, i) :]:
                if j - i > self.longest:
                    break
                if text[i:j] in self.ids:
                    found.append((i, j, self.ids[text[i:j]]))
        kept, reach = set(), -1
        for _, j, node in sorted(found, key=lambda f: (f[0], -f[1])):  # leftmost first, the longest at a place
            if j > reach:
                kept.add(node)
                reach = j
        return frozenset(kept)


WORD_START = re.compile(r"(?<![\w])\w")
WORD_END = re.compile(r"\w(?!\w)")


def _plain(text: str) -> str:
    """A relation's name or an answer as words: 'COLLABORATED_WITH' -> 'collaborated with'."""
    return " ".join(re.sub(r"[_\W]+", " ", fold_answer(text)).split())


def reading(answer: str | None, names: Names, prompt: str, asked: frozenset[str] = frozenset()) -> Reading:
    """What an answer says: reading('Leslie Lamport worked with Radia Perlman.', ...) -> Reading('entities',
    {'Leslie Lamport', 'Radia Perlman'}), or {'Radia Perlman'} when asked (the entities the question names) holds
    Leslie Lamport; 'INSUFFICIENT_DATA' -> Reading('abstains'); '' -> Reading('non_answer', text='empty');
    'Collaborated_with' -> Reading('non_answer', text='a relation's name')."""
    text = fold_answer(answer or "")
    if not text:
        return Reading("non_answer", text="empty")
    if any(phrase in text for phrase in ABSTAINING):  # "I don't know where Lamport worked" abstains, naming him
        return Reading("abstains")
    if _plain(text) in names.relations:
        return Reading("non_answer", text="a relation's name")
    if len(text) >= ECHO and text in fold_answer(prompt):
        return Reading("non_answer", text="the prompt echoed")
    named = names.named(text)
    return Reading("entities", named - asked or named, text)  # the entities the question names are its own


def agree(a: Reading, b: Reading) -> bool:
    """Two readings agree: both abstain, or they name the same entities (by their texts when neither names one); a
    non-answer agrees with nothing."""
    if a.kind != b.kind or a.kind == "non_answer":
        return False
    if a.kind == "abstains":
        return True
    return a.entities == b.entities if a.entities or b.entities else a.text == b.text


@dataclass(slots=True)
class Tally:
    """One format's pairs, counted as they come."""

    compared: int = 0  # pairs whose two answers both came
    entities: int = 0  # of those, agreeing by the entities they name
    exact: int = 0  # of those, agreeing by their normalized texts
    non_answers: int = 0  # of those, the format's answer a non-answer
    failed: int = 0  # pairs not compared: a request failed, or its reply held no text


@dataclass(slots=True, frozen=True)
class Pair:
    """Two answers to one logged question, side by side (results.md, report.html)."""

    line: int  # the logged line
    id: str  # the line's id
    question: str  # the question, its first 400 characters
    format: str  # the format the second answer had its context in
    sent: str  # the answer to what was sent
    answer: str  # the answer in that format
    sent_names: list[str] | str  # the entities the first names (sorted), else its reading's kind ('abstains'...)
    answer_names: list[str] | str  # the same of the second; a non-answer says why: 'non_answer (empty)'
    entities_agree: bool  # the two agree by the entities they name
    texts_agree: bool  # their texts are equal after the article's normalization


@dataclass(slots=True, frozen=True)
class Rate:
    """How often a format's answers agree by one measure, with its 95% Wilson interval."""

    agree: int  # pairs that agree
    rate: float | None  # agree / compared, to 4 places (None: none compared)
    low: float | None  # the interval's bounds (None: none compared)
    high: float | None


@dataclass(slots=True, frozen=True)
class Row:
    """One format's agreement with what was sent: results.md's table row, results.json's agreement.rows[]."""

    format: str
    compared: int  # pairs whose two answers both came
    entities: Rate  # agreeing by the entities they name
    exact: Rate  # agreeing by their normalized texts
    non_answers: int  # the format's answer a non-answer
    failed: int  # pairs not compared: a request failed


@dataclass(slots=True, frozen=True)
class Agreed:
    """A model run's agreement, as results.json and report.html hold it (to_dict) and results.md shows it."""

    model: str  # the model asked
    rows: list[Row]  # a row per format, in --formats order
    differing: list[Pair]  # the pairs where agreement by entities and by text differ
    disagreements: list[Pair]  # every pair whose entities differ

    def to_dict(self) -> dict[str, Any]:
        """{"model", "rows", "differing", "disagreements"}, each record a dict in its fields' order."""
        return asdict(self)


@dataclass
class Agreement:
    """Per format, the logged questions whose two answers agree by what they name and by their texts; every pair where
    the two figures differ; the pairs that could not be compared."""

    tallies: dict[str, Tally] = field(default_factory=dict)
    differing: list[Pair] = field(default_factory=list)  # the pairs where entity and exact agreement differ
    disagreements: list[Pair] = field(default_factory=list)  # every pair whose entities differ

    def add(
        self, line: int, line_id: str, question: str, answers: dict[str, str | None], names: Names, prompt: str
    ) -> None:
        """One logged question's answers (format -> its text, None when none came; LOGGED is what was sent) into the
        tallies."""
        sent = answers.get(LOGGED)
        for fmt, got in answers.items():
            if fmt == LOGGED:
                continue
            tally = self.tallies.setdefault(fmt, Tally())
            if sent is None or got is None:
                tally.failed += 1
                continue
            asked = names.named(fold_answer(question))
            a, b = reading(sent, names, prompt, asked), reading(got, names, prompt, asked)
            by_entities, by_text = agree(a, b), fold_answer(sent) == fold_answer(got)
            tally.compared += 1
            tally.entities += by_entities
            tally.exact += by_text
            tally.non_answers += b.kind == "non_answer"
            why = f" ({b.text})" if b.kind == "non_answer" else ""
            got_names = sorted(b.entities) if b.kind == "entities" else b.kind + why
            sent_names = sorted(a.entities) if a.kind == "entities" else a.kind
            pair = Pair(line, line_id, question[:400], fmt, sent, got, sent_names, got_names, by_entities, by_text)
            if by_entities != by_text:
                self.differing.append(pair)
            if not by_entities:
                self.disagreements.append(pair)

    def results(self, model: str, formats: list[str]) -> Agreed:
        """The agreement of model's answers: a row per format (the pairs compared, agreeing by entities and by text,
        each a rate with its Wilson interval, non-answers and failed requests) and the pairs kept."""
        rows = []
        for fmt in formats:
            t = self.tallies.get(fmt, Tally())
            entities, exact = (_rate(k, t.compared) for k in (t.entities, t.exact))
            rows.append(Row(fmt, t.compared, entities, exact, t.non_answers, t.failed))
        return Agreed(model, rows, self.differing, self.disagreements)


def _rate(k: int, n: int) -> Rate:
    """k of n agreeing: the rate and its 95% Wilson interval (None for none of none)."""
    low, high = (wilson(k, n) if n else None) or (None, None)
    return Rate(k, round(k / n, 4) if n else None, low, high)
