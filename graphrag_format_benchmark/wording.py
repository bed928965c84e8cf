"""How a generated question reads: natural, as a user asks, or the templated walk.

In: a query (start, hops, conditions, an asked property) and how relations read (derived from their names, or
--relation-phrases). Out: the question's text (Wording). English has natural wording; every language of
QUESTION_TEXTS has the templated one; Russian reads naturally from the questions a user writes per relation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ._article import BenchmarkError, display, read_text, warn
from .solver import value_text
from .stores import is_description, replace_names

if TYPE_CHECKING:
    from ._article import Ask, Condition, Graph, Hop


# Generated question sets (--generate-questions N): positive questions are random walks from a random
# start, forwards or backwards along existing edges, never back over the edge just taken; every complete
# walk of the resulting query is a gold path, so answer sets come out as they are (up to MAX_ANSWERS).
# Abstention questions are near misses like the article's q6: a real walk, then a last hop whose relation
# nodes of the same role do have, but not the nodes reached, so that nothing but the facts tells the model
# to abstain. A node's role is its type; on an untyped graph (one type), the nodes at the same end of the
# relation it was reached by (the other targets of spouse, say), and for the start, of one of its edges.
# They are then validated and proven like a hand-written file.
# language -> (opening with the start's name, a hop forwards, a hop backwards, joiner, closing, closing for a set)
QUESTION_TEXTS = {
    "ru": (
        "Начни с {start}. Пройди по ",
        "{relation}",
        "{relation} в обратную сторону",
        ", затем по ",
        ". Какой узел получится?",
        ". Какие узлы получатся? Назови любой из них.",
    ),
    "en": (
        "Start at {start}. Follow ",
        "{relation}",
        "{relation} backwards",
        ", then ",
        ". Which node do you reach?",
        ". Which nodes do you reach? Name any one of them.",
    ),
}
# language -> (closing for a node's property, for a set of nodes, for the last edge's), and a hop's condition
ASK_TEXTS = {
    "ru": (
        ". Каково значение {key} у узла, к которому ты придёшь?",
        ". Каковы значения {key} у узлов, к которым ты придёшь? Назови любое из них.",
        ". Каково значение {key} у последнего ребра пути?",
        "{hop} (только где {conditions})",
        " и ",
    ),
    "en": (
        ". What is the {key} of the node you reach?",
        ". What is the {key} of the nodes you reach? Name any one of them.",
        ". What is the {key} of the last edge you follow?",
        "{hop} (only where {conditions})",
        " and ",
    ),
}
QUOTES = {"ru": ("«»", '""', "„“", "''"), "en": ('""', "''", "“”", "«»")}  # the first pair the name does not hold


def quoted(language: str, name: str) -> str:
    """The name in quotes it does not contain: ('en', 'Tomsk')
    -> '"Tomsk"'; ('en', 'The "Best"') -> "'The \"Best\"'"."""
    pair = next((p for p in QUOTES[language] if p[0] not in name and p[1] not in name), QUOTES[language][0])
    return pair[0] + name + pair[1]


def question_text(language: str, start: str, hops: list[Hop], several: bool = False, ask: Ask | None = None) -> str:
    """'Start at "Tomsk". Follow LOCATED_IN backwards, then DEVELOPED_BY. Which node do you reach?'; a hop with
    conditions reads 'DEVELOPED_BY (only where since <= 2010)', an ask 'What is the founded of the node you reach?'"""
    opening, forwards, backwards, joiner, closing, closing_set = QUESTION_TEXTS[language]
    ask_node, ask_set, ask_edge, conditional, also = ASK_TEXTS[language]
    steps = [(forwards if h.direction == "out" else backwards).format(relation=h.relation) for h in hops]
    steps = [
        conditional.format(hop=step, conditions=also.join(f"{c.key} {c.op} {value_text(c.value)}" for c in h.where))
        if h.where
        else step
        for step, h in zip(steps, hops)
    ]
    if ask is not None:
        closing = (ask_edge if ask.of_ == "edge" else ask_set if several else ask_node).format(key=ask.key)
    elif several:
        closing = closing_set
    return opening.format(start=quoted(language, start)) + joiner.join(steps) + closing


# Natural wording (--wording natural, the default for English): the question a GraphRAG user asks, with no
# relation name verbatim. Each relation gets a phrase from its name (__people__person__nationality ->
# 'nationality', DEVELOPED_BY -> 'developed by', LEADS -> 'leads'), or from --relation-phrases FILE, and a
# kind that decides how a hop reads forwards and backwards:
#   noun    'the nationality of X'           backwards: 'the one whose nationality is X'
#   state   'what X is developed by'         backwards: 'the one developed by X'
#   act     'the one X leads'                backwards: 'the one that leads X'
#   made    'the characters created by X'    backwards: 'the one who created X'
#   pair    a user's phrase and inverse phrase, both nouns: 'the developer of X', backwards 'the product of X'
# A walk nests these from the start outwards; the last hop is the question ('What does Irina lead?').
# The wording only says what the query is; the query, its gold paths and the solver's proof are unchanged.
PREPOSITIONS = frozenset("by in of at to from on for with into as about under over within near".split())
STATE_WORDS = frozenset(
    (
        "located based born contained included situated made part member published released married "
        "employed involved set filmed buried educated headquartered written named known used owned "
        "developed created produced directed founded designed built composed"
    ).split()
)
IRREGULAR_PARTICIPLES = frozenset(
    "born made written known built held taken given begun done won sold shown drawn grown".split()
)
CONDITION_WORDS = {
    "=": "is",
    "!=": "is not",
    "<": "is less than",
    "<=": "is at most",
    ">": "is more than",
    ">=": "is at least",
}


class Phrase(NamedTuple):
    """How one relation reads in a natural question: its words and their kind (see above)."""

    words: str
    # noun | state | act | made | pair | link | described | ru
    # (words, inverse: the Russian questions forwards and backwards)
    kind: str
    inverse: str = ""  # pair only: the noun for a hop backwards


def relation_words(name: str) -> list[str]:
    """The words of a relation or property name, namespace dropped:
    '__people__person__nationality' -> ['nationality'], 'DEVELOPED_BY' -> ['developed', 'by'],
    'http://x.org/ont#birthPlace' -> ['birth', 'place'], 'ex:hasParent' -> ['parent']."""
    last = re.split(r"__|[/#:.]", name.strip("_/#:. "))[-1] or name
    last = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", last)
    words = [w.lower() for w in re.split(r"[\s_\-]+", last) if w]
    if len(words) > 1 and words[0] in ("has", "is", "have"):
        words = words[1:]
    return words or [name]


def derive_phrase(relation: str) -> Phrase:
    """The phrase and kind of a relation from its name alone (what --relation-phrases overrides)."""
    words = relation_words(relation)
    text = " ".join(words)
    verb_case = relation.isupper() or relation.replace("_", "").isupper()
    if len(words) > 1 and words[-1] in (
        "created",
        "written",
        "directed",
        "produced",
        "composed",
        "designed",
        "founded",
        "edited",
    ):
        return Phrase(text, "made")
    if words[-1] in PREPOSITIONS and len(words) > 1:
        return Phrase(
            text, "state" if words[0] in STATE_WORDS or words[0] in ("part", "member", "child", "subclass") else "act"
        )
    if verb_case and (words[0].endswith(("s", "ed")) and not words[0].endswith("ss")):
        return Phrase(text, "act")
    return Phrase(text, "noun")


def third_person_base(verb: str) -> str:
    """'leads' -> 'lead', 'carries' -> 'carry', 'watches' -> 'watch', 'uses' -> 'use'."""
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "xes", "sses", "zes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb


def read_relation_phrases(path: Path) -> dict[str, Phrase]:
    """--relation-phrases FILE: one relation a line, 'relation<TAB>phrase<TAB>inverse phrase' (both nouns: 'developer',
    'product'); or one phrase alone, read in the kind the relation's name gives; or, for Russian, two questions with
    {x} ('relation<TAB>Чем руководит {x}?<TAB>Под чьим руководством находится {x}?', see russian_phrase). Blank lines
    and '#' lines skipped."""
    phrases = {}
    for line_no, line in enumerate(read_text(path, "--relation-phrases")[0].splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) not in (2, 3) or not all(fields):
            raise BenchmarkError(
                f"{display(path)} line {line_no}: write 'relation<TAB>phrase' or 'relation<TAB>phrase<TAB>inverse "
                "phrase', "
                "tab-separated, each field not empty"
            )
        if fields[0] in phrases:
            raise BenchmarkError(
                f"{display(path)} line {line_no}: relation {fields[0]!r} is given twice; keep one line"
            )
        if any("{x}" in f for f in fields[1:]):
            phrases[fields[0]] = russian_phrase(fields[1:], f"{display(path)} line {line_no}")
            continue
        phrases[fields[0]] = (
            Phrase(fields[1], "pair", fields[2])
            if len(fields) == 3
            else derive_phrase(fields[0])._replace(words=fields[1])
        )
    return phrases


def _condition_words(where: tuple[Condition, ...]) -> str:
    """' (counting only links whose since is at most 2010)', or '' for a hop with no condition."""
    if not where:
        return ""
    said = " and ".join(
        f"{' '.join(relation_words(c.key))} {CONDITION_WORDS[c.op]} {value_text(c.value)}" for c in where
    )
    return f" (counting only links whose {said})"


# kind -> form -> (forwards, backwards): a hop as a noun phrase inside a longer one ("nested"), as the question of the
# last hop ("asked"), or as a sentence about an unknown in a longer walk ("stated"). {x}: what the hop starts from;
# {w}: the relation's phrase; {inv}: a pair's inverse phrase; {verb}: the phrase's last word; {c}: the hop's condition.
PHRASINGS = {
    "pair": {
        "nested": ("the {w} of {x}{c}", "the {inv} of {x}{c}"),
        "asked": ("What is the {w} of {x}{c}?", "What is the {inv} of {x}{c}?"),
        "stated": ("the {w} of {x}{c} is something.", "the {inv} of {x}{c} is something."),
    },
    "noun": {
        "nested": ("the {w} of {x}{c}", "the one whose {w} is {x}{c}"),
        "asked": ("What is the {w} of {x}{c}?", "Whose {w} is {x}{c}?"),
        "stated": ("the {w} of {x}{c} is something.", "something has {x} as its {w}{c}."),
    },
    "state": {
        "nested": ("the one {x} is {w}{c}", "the one {w} {x}{c}"),
        "asked": ("What is {x} {w}{c}?", "What is {w} {x}{c}?"),
        "stated": ("{x} is {w} something{c}.", "something is {w} {x}{c}."),
    },
    "made": {
        "nested": ("the {w} by {x}{c}", "the one who {verb} {x}{c}"),
        "asked": ("What are the {w} by {x}{c}?", "Who {verb} {x}{c}?"),
        "stated": ("something is among the {w} by {x}{c}.", "someone {verb} {x}{c}."),
    },
    "act": {
        "nested": ("the one {x} {w}{c}", "the one that {w} {x}{c}"),
        "asked": ("What is it that {x} {w}{c}?", "What {w} {x}{c}?"),
        "stated": ("{x} {w} something{c}.", "something {w} {x}{c}."),
    },
    # a framework store's edges (stores.py) have no direction and no type: worded by their keywords or description
    "link": {
        "nested": ('the one linked by "{w}" to {x}{c}',) * 2,
        "asked": ('What is linked by "{w}" to {x}{c}?',) * 2,
        "stated": ('something is linked by "{w}" to {x}{c}.',) * 2,
    },
    "described": {
        "nested": ('the one linked, as "{w}" says, to {x}{c}',) * 2,
        "asked": ('What is linked, as "{w}" says, to {x}{c}?',) * 2,
        "stated": ('something is linked, as "{w}" says, to {x}{c}.',) * 2,
    },
}
MASK = "___"  # a name in a described relation, where the question would give it away
DESCRIBED_WORDS = 24  # a described hop quotes at most this many words of the description, then "…"


def sentence_hop(form: str, x: str, hop: Hop, template: str) -> str:
    """A one-hop question of a store's edge whose description names both its ends ({S} and {T} in template), as a person
    asks it: the known end named, the other asked for. ('asked', 'Paxos', in, '{S} was designed as an alternative to
    {T}') -> 'What was designed as an alternative to Paxos?'; ('asked', 'Leslie Lamport', out, '{S} has worked at {T}
    since 2001') -> 'Leslie Lamport has worked at what since 2001?'; nested: 'the one that Leslie Lamport has worked at
    since 2001'."""
    known, unknown = ("{S}", "{T}") if hop.direction == "out" else ("{T}", "{S}")
    text, c = template.replace(known, x), _condition_words(hop.where)
    if form == "nested":
        if text.startswith(unknown):
            return "the one that" + text[len(unknown) :] + c
        return "the one that " + " ".join(text.replace(unknown, " ").split()) + c
    if text.startswith(unknown):
        return "What" + text[len(unknown) :] + c + "?"
    return text.replace(unknown, "what") + c + "?"


def phrase_hop(form: str, x: str, hop: Hop, p: Phrase) -> str:
    """One hop in one of PHRASINGS' forms: ('asked', 'Irina', LEADS out) -> 'What does Irina lead?' (an upper-case verb
    ending in s reads 'does ... lead'); ('nested', 'Irina', LEADS out) -> 'the one Irina leads'."""
    if p.kind == "sentence":
        if form == "asked":
            return sentence_hop(form, x, hop, p.words)
        # inside a longer walk the masked description says it: nested clauses of sentences lose a reader
        p = Phrase(p.inverse, "described")
    out = hop.direction == "out"
    first, *rest = p.words.split()
    if form == "asked" and p.kind == "act" and out and first.endswith("s") and not first.endswith("ss"):
        text = "What does {x} " + " ".join([third_person_base(first), *rest]) + "{c}?"
    else:
        text = PHRASINGS[p.kind][form][0 if out else 1]
    text = text.format(x=x, w=p.words, inv=p.inverse, verb=p.words.split()[-1], c=_condition_words(hop.where))
    return text[0].upper() + text[1:] if form == "stated" else text


# kinds whose walks read as one noun phrase: 'the nationality of the spouse of X'
NESTING_KINDS = frozenset(("noun", "pair", "made", "link", "described", "sentence"))


def natural_question(
    start: str,
    hops: list[Hop],
    phrases: Callable[[str], Phrase],
    several: bool = False,
    ask: Ask | None = None,
    dated: Callable[[str], bool] = lambda key: False,
) -> str:
    """A question as a user asks it: ('Matthew Lawrence', [nationality out]) -> 'What is the nationality of Matthew
    Lawrence?'; ('Mr Mann', [characters_created in]) -> 'Who created Mr Mann?'. Several answers: '... (There may be
    several; name any one.)'. An ask of a node's property: 'What is the population of <the walk>?'; when was for a
    participle key with dates (founded); of the last edge's: 'What is the since of the leads link from Irina?'."""
    if len(hops) > 1 and not {phrases(h.relation).kind for h in hops} <= NESTING_KINDS:
        return _sequential_question(start, hops, phrases, several, ask, dated)
    if (
        len(hops) > 1 or ask is not None
    ):  # a store's description reads as a person's question for one hop, asked of its far end
        phrases = _as_described(phrases)
    np = start
    for hop in hops[:-1]:
        np = phrase_hop("nested", np, hop, phrases(hop.relation))
    last = hops[-1]
    if ask is None:
        text = phrase_hop("asked", np, last, phrases(last.relation))
    elif ask.of_ == "edge":
        p = phrases(last.relation)
        link = '"' + p.words + '"' if p.kind in STORE_KINDS else p.words
        text = (
            f"What is the {' '.join(relation_words(ask.key))} of the {link} link "
            f"{'from' if last.direction == 'out' else 'to'} {np}{_condition_words(last.where)}?"
        )
    else:
        text = _property_question(phrase_hop("nested", np, last, phrases(last.relation)), ask.key, dated)
    return text + (" (There may be several; name any one.)" if several else "")


def _as_described(phrases: Callable[[str], Phrase]) -> Callable[[str], Phrase]:
    def phrase(relation: str) -> Phrase:
        p = phrases(relation)
        return Phrase(p.inverse, "described") if p.kind == "sentence" else p

    return phrase


def _property_question(reached: str, key: str, dated: Callable[[str], bool]) -> str:
    """'What is the population of X?'; 'When was X founded?' for a participle key whose values are dates or years."""
    words = relation_words(key)
    if words[-1].endswith("ed") or words[-1] in IRREGULAR_PARTICIPLES:
        return (
            f"When was {reached} {' '.join(words)}?"
            if dated(key)
            else f'What is the value of "{" ".join(words)}" for {reached}?'
        )
    return f"What is the {' '.join(words)} of {reached}?"


def _sequential_question(
    start: str,
    hops: list[Hop],
    phrases: Callable[[str], Phrase],
    several: bool,
    ask: Ask | None,
    dated: Callable[[str], bool],
) -> str:
    """A longer walk with verbs, a sentence a hop: 'Irina leads something. That one uses something. What is that one
    developed by?'; an ask is put to the node reached ('... When was that one founded?')."""
    sentences, subject = [], start
    for hop in hops[:-1]:
        sentences.append(phrase_hop("stated", subject, hop, phrases(hop.relation)))
        subject = "that one"
    if ask is not None and ask.of_ == "node":
        sentences.append(phrase_hop("stated", subject, hops[-1], phrases(hops[-1].relation)))
        text = _property_question("that one", ask.key, dated) + (
            " (There may be several; name any one.)" if several else ""
        )
        return " ".join(sentences) + " " + text
    return " ".join(sentences) + " " + natural_question(subject, hops[-1:], phrases, several, ask, dated)


# Russian natural wording (--prompt ru with Russian lines in --relation-phrases). Russian inflects names and a template
# cannot, so a relation reads as two questions its user writes, forwards and backwards, with {x} where the quoted name
# (or a nested phrase) stands in the nominative: 'Чем руководит {x}?', 'Под чьим руководством находится {x}?'. A walk
# nests them from the start outwards as relative clauses, the question word's demonstrative before it: 'Что использует
# то, чем руководит «Ирина»?'; 'Где находится тот, кем разработано то, что использует то, чем руководит «Ирина»?'.
RU_DEMONSTRATIVES = {
    **dict.fromkeys("кто кого кому кем ком чей чья чьё чьи чьего чьей чьему чьим чьём чьих чьими".split(), "тот"),
    **dict.fromkeys("что чего чему чем чём".split(), "то"),
    **dict.fromkeys("где куда откуда".split(), "то место"),
    "когда": "то время",
}
RU_PREPOSITIONS = frozenset("без в во для до за из к ко на над о об от по под при про с со у через".split())
RU_CONDITIONS = {"=": "равно", "!=": "не равно", "<": "меньше", "<=": "не больше", ">": "больше", ">=": "не меньше"}
RU_SEVERAL = " (Их может быть несколько; назови любой.)"
# какой and its forms open a question too ('Какой проект возглавляет {x}?', 'В каком городе
# находится {x}?'): nested, they read 'тот, который возглавляет «Ирина»', 'то место... '
# aside: the question's noun is left out (it would have to be declined), the relative pronoun
# takes the question word's own form (каком -> котором) and the demonstrative its gender
RU_WHICH = {
    "какой": "m",
    "какого": "m",
    "какому": "m",
    "каким": "m",
    "каком": "m",
    "какая": "f",
    "какую": "f",
    "какое": "n",
    "какие": "p",
    "каких": "p",
    "какими": "p",
}
RU_COUNT = frozenset(("сколько",))  # asks a count: a question of its own, never nested (the walk is then templated)
RU_CASES = {
    "nom": 0,
    "gen": 1,
    "dat": 2,
    "acc": 3,
    "ins": 4,
    "pre": 5,
    "им": 0,
    "род": 1,
    "дат": 2,
    "вин": 3,
    "твор": 4,
    "пред": 5,
}
# the demonstrative of a nested question, declined: {x:ins} in
# 'Кто руководит {x:ins}?' gives 'тем, чем руководит «Ирина»'
RU_DECLINED = {
    "тот": ("тот", "того", "тому", "того", "тем", "том"),
    "то": ("то", "того", "тому", "то", "тем", "том"),
    "та": ("та", "той", "той", "ту", "той", "той"),
    "те": ("те", "тех", "тем", "тех", "теми", "тех"),
    "то место": ("то место", "того места", "тому месту", "то место", "тем местом", "том месте"),
    "то время": ("то время", "того времени", "тому времени", "то время", "тем временем", "том времени"),
}
RU_GENDERED = {"m": "тот", "f": "та", "n": "то", "p": "те"}
# a preposition right before {x} that takes one case only says it: 'для {x}' is genitive, 'к {x}' dative
RU_PREPOSITION_CASE = {
    **dict.fromkeys("без для до из от у около после против вокруг кроме среди".split(), 1),
    **dict.fromkeys("к ко по".split(), 2),
    **dict.fromkeys("через про сквозь".split(), 3),
    **dict.fromkeys("над перед между".split(), 4),
    **dict.fromkeys("при о об".split(), 5),
}
RU_SLOT = re.compile(r"\{x(?::(\w+))?\}")


def _question_word(question: str) -> str:
    words = question.split()
    return (words[1] if len(words) > 1 and words[0].casefold() in RU_PREPOSITIONS else words[0]).casefold().strip(",?")


def russian_phrase(questions: list[str], where: str) -> Phrase:
    """A Russian line of --relation-phrases: the question forwards and backwards, each with {x} once (or {x:CASE}, the
    case the verb governs there: nom gen dat acc ins pre, or им род дат вин твор пред) and a question word
    (RU_DEMONSTRATIVES, a form of какой, сколько) first or after a preposition, ending in '?'; as a Phrase of kind
    'ru'."""
    if len(questions) != 2:
        raise BenchmarkError(
            f"{where}: a Russian line is 'relation<TAB>question forwards<TAB>question backwards', each with "
            "{x} where the name stands: 'LEADS<TAB>Чем руководит {x}?<TAB>Под чьим руководством находится {x}?'"
        )
    openers = sorted({*RU_DEMONSTRATIVES, *RU_WHICH, *RU_COUNT})
    for question in questions:
        slots = RU_SLOT.findall(question)
        if len(slots) != 1 or not question.endswith("?") or _question_word(question) not in openers:
            raise BenchmarkError(
                f"{where}: {question!r} must hold {{x}} once, end with '?' and open with a question word "
                f"({', '.join(openers)}), after a preposition if any: 'Под чьим руководством находится {{x}}?'"
            )
        if slots[0] and slots[0].casefold() not in RU_CASES:
            raise BenchmarkError(
                f"{where}: {question!r} marks {{x:{slots[0]}}}, no case this tool knows; write {{x:CASE}} with one "
                f"of {', '.join(RU_CASES)}, or {{x}} where the name stands in the nominative"
            )
    return Phrase(questions[0], "ru", questions[1])


def russian_case(question: str) -> int:
    """The case the nested phrase takes at question's {x}: its mark ({x:ins}), else the one case of a preposition right
    before it ('для {x}': genitive), else the nominative (index into RU_DECLINED's forms)."""
    found = RU_SLOT.search(question)
    if found and found.group(1):
        return RU_CASES[found.group(1).casefold()]
    before = question[: found.start()].split() if found else []
    return RU_PREPOSITION_CASE.get(before[-1].casefold(), 0) if before else 0


def russian_nested(question: str, x: str, case: int = 0) -> str:
    """The question as a noun phrase in the case of the slot it fills: ('Чем руководит {x}?', '«Ирина»') -> 'то, чем
    руководит «Ирина»'; in the instrumental, 'тем, чем руководит «Ирина»'; 'Какой проект возглавляет {x}?' -> 'тот,
    который возглавляет «Ирина»'."""
    words = question.split()
    k = 1 if words[0].casefold() in RU_PREPOSITIONS else 0
    word = _question_word(question)
    if word in RU_WHICH:  # the question's noun left out, the pronoun in the question word's form
        demonstrative = RU_GENDERED[RU_WHICH[word]]
        pronoun = "котор" + (word[len("как") :] if word != "какой" else "ый")
        nxt = (
            k + 2
            if len(words) > k + 1 and words[k + 1].casefold() not in ("{x}",) and not words[k + 1].startswith("{x")
            else k + 1
        )
        clause = " ".join([*(w.lower() for w in words[:k]), pronoun, *words[nxt:]])
    else:
        demonstrative = RU_DEMONSTRATIVES[word]
        clause = question[0].lower() + question[1:]
    clause = clause[:-1] if clause.endswith("?") else clause
    slot = RU_SLOT.search(clause)  # read_relation_phrases keeps only lines with one
    nested = f"{RU_DECLINED[demonstrative][case]}, {clause}"
    return nested.replace(slot.group(0), x) if slot else nested


def russian_question(
    start: str, hops: list[Hop], phrases: Callable[[str], Phrase], several: bool = False, ask: Ask | None = None
) -> str:
    """A Russian question as a user asks it, from the phrases of kind 'ru' of the walk's relations (see above)."""

    def text(hop: Hop) -> str:
        p = phrases(hop.relation)
        question = p.words if hop.direction == "out" else p.inverse
        if hop.where:
            said = " и ".join(f"«{c.key}» {RU_CONDITIONS[c.op]} {value_text(c.value)}" for c in hop.where)
            question = f"{question[:-1]} (учитывая только связи, где {said})?"
        return question

    x = quoted("ru", start)
    texts = [text(hop) for hop in hops]
    for k, question in enumerate(texts[:-1]):
        x = russian_nested(question, x, russian_case(texts[k + 1]))
    last = texts[-1]
    if ask is not None and ask.of_ == "node":
        reached = russian_nested(last, x)
        return f"{reached[0].upper()}{reached[1:]}: каково значение «{ask.key}»?" + (RU_SEVERAL if several else "")
    asked = RU_SLOT.sub(lambda _: x, last, count=1) + (RU_SEVERAL if several else "")
    return asked + (f" Каково значение «{ask.key}» у этой связи?" if ask is not None else "")


STORE_KINDS = ("link", "described", "sentence")


def store_phrases(graph: Graph) -> dict[str, Phrase]:
    """How a framework store's relations read (stores.py: an edge's relation is its description): by the edge's keywords
    (LightRAG's) where no other relation has the same, else by its description with the names of the ends of its edges
    masked (MASK), so that the question says which fact to follow and not where it leads. Relations that read as
    names (LEADS, location.location.containedby) are left to derive_phrase."""
    ends: dict[str, set[str]] = {}
    keywords: dict[str, set[str]] = {}
    names = {n.id: n.name for n in graph.nodes}
    edges_of: dict[str, list[tuple[str, str]]] = {}
    for e, props in graph.edges_with_props():
        if is_description(e.relation):
            ends.setdefault(e.relation, set()).update((names[e.source], names[e.target]))
            edges_of.setdefault(e.relation, []).append((names[e.source], names[e.target]))
            keywords.setdefault(e.relation, set()).update(
                str(v) for k, v in props if k == "keywords" and str(v).strip()
            )
    single = {r: pair[0] for r, pair in edges_of.items() if len(pair) == 1}  # a description of one edge: its ends known
    by_keywords: dict[str, int] = {}
    for words in keywords.values():
        for w in words:
            by_keywords[w] = by_keywords.get(w, 0) + 1
    phrases = {}
    for relation, named in ends.items():
        own = sorted(w for w in keywords[relation] if by_keywords[w] == 1)
        if len(keywords[relation]) == 1 and own:
            phrases[relation] = Phrase(own[0], "link")
            continue
        text = replace_names(" ".join(relation.split()), dict.fromkeys(named, MASK))
        said = text.split(" ")
        if (
            len(said) > DESCRIBED_WORDS
        ):  # a long description (GraphRAG summarizes into paragraphs): its opening says which
            text = " ".join(said[:DESCRIBED_WORDS]) + "…"
        masked = text[:-1] if text.endswith(".") and not text.endswith("..") else text
        template = (
            sentence_template(relation, *single[relation])
            if relation in single and len(said) <= DESCRIBED_WORDS
            else None
        )
        phrases[relation] = Phrase(template, "sentence", masked) if template else Phrase(masked, "described")
    return phrases


def sentence_template(description: str, source: str, target: str) -> str | None:
    """The description with its edge's ends as {S} and {T}, where it names each once as whole words and nothing else
    of the edge is in braces: 'Raft was designed as an alternative to Paxos.' -> '{S} was designed as an alternative to
    {T}'; None where a person's question cannot be made of it (an end unnamed or named twice, a self-loop)."""
    text = " ".join(description.split())
    if source.casefold() == target.casefold() or "{" in text or "}" in text:
        return None
    marked = replace_names(text, {source: "{S}", target: "{T}"})
    if marked.count("{S}") != 1 or marked.count("{T}") != 1:
        return None
    return marked[:-1] if marked.endswith(".") and not marked.endswith("..") else marked


class Wording:
    """The text of a generated question: natural (English; see natural_question) or the templated walk (question_text),
    the only one for Russian. phrases: --relation-phrases, over what relation names give."""

    def __init__(self, graph: Graph, language: str, wording: str, phrases: tuple[tuple[str, Phrase], ...] = ()) -> None:
        self.language, self.natural = language, wording == "natural" and language == "en"
        self.phrases: dict[str, Phrase] = dict(phrases)
        self.derived: dict[str, Phrase] = {}
        self.graph = graph
        self.dates: dict[str, bool] = {}
        self.russian = (
            {r for r, p in self.phrases.items() if p.kind == "ru"}
            if wording == "natural" and language == "ru"
            else set()
        )
        stored = store_phrases(graph)
        # a store's relation -> how its hop reads: two relations that read alike are one to a reader, either way
        self.reads = {
            r: ("described", p.inverse) if p.kind == "sentence" else (p.kind, p.words)
            for r, p in stored.items()
            if r not in self.phrases
        }
        self.phrases = {**stored, **self.phrases}
        if wording == "natural" and language == "ru":
            missing = sorted({e.relation for e in graph.edges} - self.russian)
            pairs = [r for r in missing if r in dict(phrases)]  # a line of nouns ('руководитель'), not of questions
            if pairs:
                p = dict(phrases)[pairs[0]]
                warn(
                    f"--prompt ru: {len(pairs)} relation(s) of --relation-phrases have a line of nouns, not of "
                    f"questions ({pairs[0]}: "
                    f"{p.words!r}{' / ' + repr(p.inverse) if p.inverse else ''}{', ...' if len(pairs) > 1 else ''}): "
                    "Russian questions "
                    "are read from two questions with {x}, 'relation<TAB>Чем руководит {x}?<TAB>Под чьим руководством "
                    "находится {x}?'"
                )
                missing = [r for r in missing if r not in pairs]
            if missing:
                warn(
                    f"--prompt ru: generated questions that walk any of {len(missing)} relation(s) without a Russian "
                    "line in "
                    f"--relation-phrases ({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}) are templated "
                    "('Начни с «X». "
                    "Пройди по R...'): Russian inflects names, so no wording can be derived from a relation's name; "
                    "give each "
                    "one a line 'relation<TAB>Чем руководит {x}?<TAB>Под чьим руководством находится {x}?'"
                )

    def __call__(self, start: str, hops: list[Hop], several: bool = False, ask: Ask | None = None) -> str:
        if (
            self.russian
            and all(h.relation in self.russian for h in hops)
            and not any(
                _question_word(p.words if h.direction == "out" else p.inverse)
                in RU_COUNT  # a count nests in no question
                for h in hops[:-1]
                if (p := self.phrase(h.relation))
            )
        ):
            return russian_question(start, hops, self.phrase, several, ask)
        if not self.natural:  # a store's relation is shown as its phrase: its description would name the answer
            hops = [
                h._replace(relation=f'"{p.inverse if p.kind == "sentence" else p.words}"')
                if (p := self.phrase(h.relation)).kind in STORE_KINDS
                else h
                for h in hops
            ]
            return question_text(self.language, start, hops, several=several, ask=ask)
        return natural_question(start, hops, self.phrase, several, ask, self.dated)

    def phrase(self, relation: str) -> Phrase:
        known = self.phrases.get(relation) or self.derived.get(relation)
        if known is None:
            known = self.derived[relation] = derive_phrase(relation)
        return known

    def dated(self, key: str) -> bool:
        """Whether a node property's values are dates or years (an ask reads 'When was X founded?')."""
        if key not in self.dates:
            values = [v for props in self.graph.props_by_node.values() for k, v in props if k == key]
            self.dates[key] = bool(values) and all(
                (isinstance(v, str) and re.match(r"\d{4}(-\d\d){0,2}(\b|T)", v))
                or (type(v) is int and 1000 <= v <= 2100)
                for v in values
            )
        return self.dates[key]
