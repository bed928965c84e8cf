"""Whole words in texts and ids: the matching that the leakage checks, the namer and generated questions share.

In: a text and the words to look for. Out: which occur as whole words, where letters, digits and '_' form words:
'gold' is not in 'Golden_Gate_Bridge', and 'russia' is not in 'grand_duke_of_russia' unless it stands as a word of its
own; a text with no letter or digit ('.') never matches. An id is read as the words it is made of ('gold_1' holds
'gold'), and an id must not add a marker word (LEAKY_ID_WORDS) that its node's name does not have.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._article import Node


LEAKY_ID_WORDS = ("answer", "correct", "gold", "expected", "solution")  # markers an id must not add to its node


def mentioned(text: str, needles: dict[str, Any] | set[str]) -> set[str]:
    """Every needle that occurs in text as a whole word (as mentions says), in one pass over the text's word
    boundaries rather than one search per needle: mentioned('prompt.q1.kazan.txt', {'kazan', 'q2'}) -> {'kazan'}."""
    starts = [i for i in range(len(text)) if i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")]
    ends = [j for j in range(1, len(text) + 1) if j == len(text) or not (text[j].isalnum() or text[j] == "_")]
    longest = max(map(len, needles), default=0)
    found = set()
    for i in starts:
        for j in ends:
            if j > i and j - i <= longest and text[i:j] in needles and any(c.isalnum() for c in text[i:j]):
                found.add(text[i:j])
    return found


def mentions(text: str, needle: str) -> bool:
    """needle occurs in text as a whole word (both already folded): 'q1' is in 'prompt.q1.txt'; 'gold' is not
    in 'golden_gate', nor 'russia' in 'duke_of_russia'; '.' is in nothing."""
    if needle not in text or not any(c.isalnum() for c in needle):
        return False
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", text) is not None


def id_words(text: str) -> set[str]:
    """The words of an id or a name, split at '_', other non-letters and camelCase: 'goldMedal_1' -> {'gold', 'medal',
    '1'}."""
    return set(re.findall(r"[^\W_]+", re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text).casefold()))


def leaky_markers(node: Node) -> list[str]:
    """The leaky words an id adds beyond its node's own name:
    ('gold_1', 'Paris') -> ['gold']; ('Gold', 'Gold') -> []."""
    folded = node.id.casefold()
    if not any(w in folded for w in LEAKY_ID_WORDS):  # no marker in the id at all: most ids, at a tenth of the cost
        return []
    added = id_words(node.id) - id_words(node.name)
    return [w for w in LEAKY_ID_WORDS if w in added]
