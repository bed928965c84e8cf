"""Scoring (article 4.4-4.6, 8.2): the same rules for every format, and why an answer failed.

In: an answer's text and the prompt it answers (what the prompt showed, the question's gold paths). Out: every metric
of the answer (answer, path exact, edge precision and recall, valid path, evidence, abstention) and one diagnosis
(DIAGNOSES, with the article's remedy). read_reply reads a reply the same way for every format: fenced, in prose, or
the JSON object asked for. Each prompt's answers are judged against one AnswerKey, built once; score_log scores every
row of a run and repeat from the collected answers.
"""

from __future__ import annotations

import functools
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ._article import ABSTAIN
from .frameworks import cited_order
from .matrix import hop_bucket
from .progress import Progress
from .runner.config import SOLVER_MODEL
from .runner.endpoint import context_refusal
from .runner.jobs import planned_keys
from .runner.send import TRUNCATION_RATIO
from .runner.transport import MAX_JSON_DEPTH, json_depth, untrusted_json
from .solver import MISSING, asked, fold_answer, value_text, walk_ends
from .stores import is_description

if TYPE_CHECKING:
    from ._article import Graph, Question
    from .answers import Answer
    from .measure import Item
    from .runner.config import ModelConfig


class Reply(NamedTuple):
    """An answer object as the scorer reads it (answer_fields); any other key of it is ignored."""

    answer: str
    path: list[Any]  # indices, edge ids or evidence items, as given (AnswerKey._cite reads each)
    evidence: list[Any]  # evidence items, as given


def parse_answer(content: object) -> Reply | None:
    """The answer object of a reply, read by the same rules for every format, or None (read_reply)."""
    return read_reply(content)[0]


ANSWER_FENCE = re.compile(r"```[\w+-]*[ \t]*\r?\n(.*?)```", re.S)
MAX_EMBEDDED_TRIES = 64  # '{' positions tried in a reply with prose around its JSON


def read_reply(content: object) -> tuple[Reply | None, bool]:
    """(the answer, whether the reply was only the JSON object the prompt asks for). The same rules for every format:
    the whole reply as JSON; else the first fenced block (```json ... ```) that is one; else the first JSON object in
    the text that has an "answer" key (prose around it). Then the fields, read as a careful judge would (answer_fields).

    '{"answer": "Kazan", "path": [0], "evidence": []}' -> (..., True); 'Sure! ```json\\n{...}\\n```' -> (..., False)."""
    if not isinstance(content, str):
        return None, False
    value = untrusted_json(content)
    if isinstance(value, dict):
        return answer_fields(value), True
    for block in ANSWER_FENCE.findall(content):
        value = untrusted_json(block)
        if isinstance(value, dict):
            return answer_fields(value), False
    decoder, start, tries = json.JSONDecoder(), content.find("{"), 0
    while start != -1 and tries < MAX_EMBEDDED_TRIES:
        tries += 1
        try:
            value, _ = decoder.raw_decode(content, start)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict) and "answer" in value and json_depth(value) <= MAX_JSON_DEPTH:
            return answer_fields(value), False
        start = content.find("{", start + 1)
    return None, False


def answer_fields(value: dict[str, Any]) -> Reply | None:
    """The answer object with its fields as the scorer reads them, or None when there is no answer at all. An answer
    that is a number or a boolean is its text (1998 -> '1998'); a path given as digit strings is whole numbers
    (['2', '3'] -> [2, 3]); a missing path or evidence is empty; extra keys are kept and ignored. A path of evidence
    items (triples in place of indices) is kept as it is: AnswerKey maps each to the shown edge it names."""
    answer = value.get("answer")
    if isinstance(answer, (int, float)) and not isinstance(answer, bool) or isinstance(answer, bool):
        answer = value_text(answer)
    if not isinstance(answer, str):
        return None
    path = value.get("path", [])
    path = [] if path is None else path if isinstance(path, list) else [path]
    path = [
        int(x) if isinstance(x, str) and x.strip().isdigit() and x.strip().isascii() and len(x.strip()) < 10 else x
        for x in path
    ]
    evidence = value.get("evidence", [])
    evidence = [] if evidence is None else evidence if isinstance(evidence, list) else [evidence]
    return Reply(answer, path, evidence)


class Scores(NamedTuple):
    """Every metric of one answer (AnswerKey.score), in the order a scored cell holds them; None where a metric does
    not apply (an abstention question's path) or nothing was run."""

    parse_success: bool | None  # a JSON object with an answer was found (read_reply)
    json_as_asked: bool | None  # the reply was only that object, not fenced or in prose
    abstained: bool | None  # the answer was INSUFFICIENT_DATA
    answer_correct: bool | None  # matches an acceptable answer (or, on an abstention question, abstained)
    false_abstention: bool | None  # abstained where a complete path is shown
    path_exact: bool | None  # the path equals a gold path
    edge_precision: float | None  # of the cited edges, the share on the closest gold path
    edge_recall: float | None  # of the closest gold path's edges, the share cited
    valid_path: bool | None  # the cited edges are shown and make a walk
    evidence_match: bool | None  # the evidence is the path's edges as shown
    path_supports_answer: bool | None  # the answer is what the path's walk ends at
    right_answer_wrong_path: bool | None  # scenario 4
    diagnosis: str | None  # why the answer is not fully right (DIAGNOSES), None when it is


def abstention_scores(s: Scores) -> Scores:
    """An abstention question's scores: the path metrics, false_abstention to right_answer_wrong_path, do not apply."""
    return Scores(s.parse_success, s.json_as_asked, s.abstained, s.answer_correct, *(None,) * 8, s.diagnosis)


@dataclass(slots=True)
class SharedIndex:
    """What every AnswerKey of one shown graph can use, built by the first that needs it (AnswerKey._lookup)."""

    shown_at: dict[tuple[str, str, str], int] | None = None  # (source, relation, target), by ids or folded names
    described: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (source, target) -> the shown
    # edges whose relation is a description


CitedPath = list[Any]  # an answer's path as _cite reads it: indices, or any JSON value (checked where it is used)
PathFacts = tuple[bool, float, float, set[str], list[dict[str, Any]] | None]  # AnswerKey._work_out
# (variant, id of the context, permutation, mode, edges included, id of the edge order) -> graph, names, SharedIndex
ShownCache = dict[tuple[str, int, int, str, int, int], tuple["Graph", dict[str, str], SharedIndex]]


class AnswerKey:
    """What answers to one prompt are judged against, built once for all of them: the acceptable answers, the gold
    paths as the prompt shows them, and the shown graph's names and edge ids.

    The answer is right when it matches any acceptable answer (a gold answer, or the name or id of a gold
    answer node); path_exact when the path equals any gold path; precision and recall are against the gold
    path sharing the most edges with the answer's path (ties: the shorter, then the first listed)."""

    def __init__(
        self,
        shown: Graph,
        q: Question,
        names: dict[str, str] | None = None,
        sha: str = "",
        shared: SharedIndex | None = None,
        undirected: bool = False,
        order: list[int] | None = None,
    ) -> None:
        self.shown, self.q, self.sha = shown, q, sha
        self.order = order  # the shown edge an index cites, where the format shows them in an order of its own
        self.undirected = undirected  # a store's edges without direction: evidence may name an edge's ends either way
        # edge index -> the edge as an evidence item, made when first cited
        self.evidence: dict[int, dict[str, Any]] = {}
        self.names = {n.id: n.name for n in shown.nodes} if names is None else names
        self.ask = q.query.ask if q.query else None  # a property question: its answers are values, not node names
        self.accepted = (
            {fold_answer(a) for a in q.answers}
            | (
                {fold_answer(self.names.get(i, "")) for i in q.answer_ids} | {i.casefold() for i in q.answer_ids}
                if self.ask is None
                else set()
            )
        ) - {""}
        self.gold_paths = set(q.paths)
        self.path_sets = [set(p) for p in q.paths]  # in q.paths order: ties go to the first listed
        self.ends: dict[str, set[str]] = {}
        self.position = {edge_id: k for k, edge_id in enumerate(shown.edge_ids)} if shown.edge_ids else None
        self.scored: dict[str, Scores] = {}  # content -> scores: repeats often answer alike
        self.paths_seen: dict[tuple[int, ...], PathFacts] = {}  # cited path -> _path_facts
        # what every key of the same shown graph can use: "shown_at"
        self.shared = SharedIndex() if shared is None else shared
        # evidence as triples -> _evidence_facts
        self.evidence_seen: dict[tuple[tuple[str, str, str] | None, ...], tuple[tuple[int, ...], int, bool]] = {}
        self._gold_ends: set[str] | None = None

    def score(self, content: object) -> Scores:
        """Every metric of one answer. The same content scores the same: it is scored once."""
        if isinstance(content, str):
            known = self.scored.get(content)
            if known is None:
                known = self.scored[content] = self._score(content)
            return known
        return self._score(content)

    def _score(self, content: object) -> Scores:
        parsed, as_asked = read_reply(content)
        answer = parsed.answer if parsed else None
        abstained = answer is not None and answer.strip() == ABSTAIN
        if self.q.insufficient:
            diagnosis = None if abstained else "missed_abstention" if parsed is not None else "no_json"
            return Scores(parsed is not None, as_asked, abstained, abstained, *(None,) * 8, diagnosis)  # no path metric
        folded = answer_forms(answer) if answer is not None else frozenset()
        answer_correct = not abstained and not folded.isdisjoint(self.accepted)
        path = [self._cite(x) for x in parsed.path] if parsed else []
        path_exact, precision, recall, ends, evidence = self._path_facts(path)
        scores = Scores(
            parse_success=parsed is not None,
            json_as_asked=as_asked,
            abstained=abstained,
            answer_correct=answer_correct,
            false_abstention=abstained,
            path_exact=path_exact,
            edge_precision=precision,
            edge_recall=recall,
            valid_path=bool(ends),
            evidence_match=evidence is not None
            and parsed is not None
            and self._same_evidence(parsed.evidence, evidence),
            path_supports_answer=any(self._supports(f, path, ends) for f in folded),
            right_answer_wrong_path=answer_correct and not path_exact,
            diagnosis=None,
        )
        return scores._replace(diagnosis=self._diagnose(parsed, scores, path, ends))

    def _same_evidence(self, given: list[object], wanted: list[dict[str, Any]]) -> bool:
        """The evidence is the path's edges as shown; on an undirected graph an item may name an edge's ends swapped."""
        if given == wanted:
            return True
        return (
            self.undirected
            and len(given) == len(wanted)
            and all(
                g == w or isinstance(g, dict) and g == {**w, "source": w["target"], "target": w["source"]}
                for g, w in zip(given, wanted)
            )
        )

    def _cite(self, item: object) -> object:
        """One item of an answer's path as an index into the shown edges: an index stays as it
        is; with --edge-ids an edge id is its position (an index, or an id not shown, cites
        nothing: -1); an evidence item given in place of an index ({"source", "relation",
        "target"} or a list of three, by ids or names) is the shown edge it names, or -1."""
        if self.position is not None and not isinstance(item, (dict, list)):
            return self.position.get(item, -1) if isinstance(item, str) else -1
        if isinstance(item, (dict, list)):
            return self.shown_at(item)
        if self.order is not None and isinstance(item, int):
            return self.order[item] if 0 <= item < len(self.order) else -1
        return item

    def _evidence_facts(self, evidence: list[object]) -> tuple[tuple[int, ...], int, bool]:
        """(the shown edge each evidence item names, -1 for none; how many well-formed items name none; whether one of
        those is shown reversed), worked out once per distinct evidence of a prompt's answers (repeats cite alike)."""
        triples = tuple(map(evidence_triple, evidence))
        facts = self.evidence_seen.get(triples)
        if facts is None:
            cited = tuple(self._lookup(t) if t else -1 for t in triples)
            outside = [t for t, at in zip(triples, cited) if at == -1 and t is not None]
            facts = self.evidence_seen[triples] = (
                cited,
                len(outside),
                any(self._lookup((t[2], t[1], t[0])) != -1 for t in outside),
            )
        return facts

    def shown_at(self, item: object) -> int:
        """The index of the shown edge an evidence item names (by
        ids or by names, in the edge's own direction), or -1."""
        triple = evidence_triple(item)
        return -1 if triple is None else self._lookup(triple)

    def _lookup(self, triple: tuple[str, str, str]) -> int:
        index = self.shared.shown_at
        if index is None:  # (source, relation, target), by ids or folded names -> the first shown edge so
            index = self.shared.shown_at = {}
            described = self.shared.described
            props = self.shown.edge_props or ((),) * len(self.shown.edges)
            for k, (e, p) in enumerate(zip(self.shown.edges, props)):
                # a store's edge (its relation a description) is also named by its keywords, as its questions name it
                store = is_description(e.relation)
                names = (
                    (e.relation, *(v for key, v in p if key == "keywords" and isinstance(v, str)))
                    if store
                    else (e.relation,)
                )
                ends = (
                    (e.source, e.target),
                    (fold_answer(self.names.get(e.source, e.source)), fold_answer(self.names.get(e.target, e.target))),
                )
                for source, target in ends:
                    for relation in names:
                        index.setdefault((source, relation, target), k)
                    if store:
                        described.setdefault((source, target), []).append(k)
        forms = [triple, (fold_answer(triple[0]), triple[1], fold_answer(triple[2]))]
        if self.undirected:  # an edge without direction is named by its ends in either order
            forms += [(t[2], t[1], t[0]) for t in forms]
        for source, relation, target in forms:
            for name in (relation, relation.strip(RELATION_DECORATION)):  # 'LEADS->' copied from an arrow is LEADS
                at = index.get((source, name, target))
                if at is not None:
                    return at
        # a store's description named by its ends and a piece
        words = " ".join(relation.replace("_", " ").casefold().split())
        for (
            source,
            _,
            target,
        ) in forms:  # of it ('designed' of 'Leslie Lamport designed TLA+.'), as real models write it
            for k in self.shared.described.get((source, target), ()) if words else ():
                if words in " ".join(self.shown.edges[k].relation.casefold().split()):
                    return k
        return -1

    def gold_ends(self) -> set[str]:
        """The nodes the gold paths end at: the question's answer ids, else every end of a gold path's walk."""
        if self._gold_ends is None:
            ends = set(self.q.answer_ids)
            if not ends:
                for p in self.q.paths:
                    if all(0 <= i < len(self.shown.edges) for i in p):
                        ends |= walk_ends([self.shown.edges[i] for i in p])
            self._gold_ends = ends
        return self._gold_ends

    def _diagnose(self, parsed: Reply | None, s: Scores, path: CitedPath, ends: set[str]) -> str | None:
        """Why an answer to a positive question is not fully right, by the first rule that holds (README: Why answers
        fail): no_json, false_abstention, miscounted_indices, edge_reversed, edge_not_shown, broken_chain,
        right_answer_wrong_path, answer_form, wrong_branch, no_path; None when answer and path are both right."""
        if parsed is None:
            return "no_json"
        if s.abstained:
            return "false_abstention"
        if s.answer_correct and s.path_exact:
            return None
        size = len(self.shown.edges)
        cited, unnamed, reversed_ = self._evidence_facts(parsed.evidence)
        if not s.path_exact and cited and -1 not in cited and any(set(cited) == p for p in self.path_sets):
            return "miscounted_indices"  # the evidence names the gold edges; the indices do not
        if unnamed or any(not (type(i) is int and 0 <= i < size) for i in path):
            return "edge_reversed" if reversed_ else "edge_not_shown"
        if path and not ends:
            return "broken_chain"
        if s.answer_correct:
            return "right_answer_wrong_path"  # scenario 4: a real walk, but not a gold path (or no path at all)
        if ends:  # scenario 5 when the walk reaches a gold node and the answer says it otherwise
            return "answer_form" if not ends.isdisjoint(self.gold_ends()) else "wrong_branch"
        return "no_path"

    def _path_facts(self, path: CitedPath) -> PathFacts:
        """What the cited path alone decides: path exact, edge precision and recall, the end nodes of its walk, and
        the evidence it calls for (None when it cites no shown edge). Worked out once per distinct path of whole
        numbers (answers to one prompt tend to cite the same few); any other path is worked out each time."""
        if not all(type(i) is int for i in path):
            return self._work_out(path)
        key = tuple(path)
        facts = self.paths_seen.get(key)
        if facts is None:
            facts = self.paths_seen[key] = self._work_out(path)
        return facts

    def _work_out(self, path: CitedPath) -> PathFacts:
        edges = self.shown.edges
        size = len(edges)
        indices_ok = all(type(i) is int and 0 <= i < size for i in path)
        chosen = [edges[i] for i in path] if indices_ok else []
        cited = {i for i in path if type(i) is int}
        paths = self.path_sets
        gold = paths[0] if len(paths) == 1 else max(paths, key=lambda p: (len(cited & p), -len(p))) if paths else set()
        hits = len(cited & gold)
        ends = walk_ends(chosen) if chosen else set()
        path_exact = indices_ok and tuple(path) in self.gold_paths
        return (
            path_exact,
            hits / len(path) if path else 0.0,
            hits / len(gold) if gold else 0.0,
            ends,
            [self._evidence(i) for i in path] if chosen else None,
        )

    def _supports(self, folded: str, path: CitedPath, ends: set[str]) -> bool:
        """The answer is what the path's walk ends at: the name or id of its end node, or the value asked for there."""
        if self.ask is None:
            return any(folded in self._end_forms(end) for end in ends)
        if not ends or not all(type(i) is int and 0 <= i < len(self.shown.edges) for i in path):
            return False
        values = {asked(self.shown, self.ask, (tuple(path), end)) for end in ends} - {MISSING}
        return any(folded == fold_answer(value_text(v)) for v in values)

    def _end_forms(self, end: str) -> set[str]:
        """What an answer naming the node a path ends at may say: its name or its id, folded."""
        forms = self.ends.get(end)
        if forms is None:
            forms = self.ends[end] = {fold_answer(self.names.get(end, "")), end.casefold()}
        return forms

    def _evidence(self, i: int) -> dict[str, Any]:
        item = self.evidence.get(i)
        if item is None:
            item = self.evidence[i] = self.shown.edges[i]._asdict()
        return item


RELATION_DECORATION = (
    " -—–>→<←|:[]"  # what a format's syntax puts around a relation, which a model may copy into its evidence
)


def evidence_triple(item: object) -> tuple[str, str, str] | None:
    """An evidence item as (source, relation, target) strings: {"source", "relation", "target"} or a list of three."""
    if isinstance(item, dict):
        source, relation, target = item.get("source"), item.get("relation"), item.get("target")
    elif isinstance(item, list) and len(item) == 3:
        source, relation, target = item
    else:
        return None
    if isinstance(source, str) and isinstance(relation, str) and isinstance(target, str):
        return source, relation, target
    return None


def reversed_triple(item: object) -> object:
    triple = evidence_triple(item)
    return [triple[2], triple[1], triple[0]] if triple else None


NAME_AND_ID = re.compile(r"(.+?)\s*\(([^()]+)\)")


@functools.lru_cache(maxsize=8192)  # models give a few answers to a question many times over
def answer_forms(answer: str) -> frozenset[str]:
    """The answer as the article folds it (4.5), and as a careful judge reads a padded one: without a closing full stop
    or the quotes around it, and a 'name (id)' answer as each part. 'Kazan.' -> {'kazan.', 'kazan'};
    'Kazan (city_kazan)' -> also 'kazan', 'city_kazan'. No fuzzy match: an inflected form stays wrong (scenario 5)."""
    folded = fold_answer(answer)
    forms = {folded, folded.strip(" \t.!\"'`«»“”„")}
    match = NAME_AND_ID.fullmatch(folded.strip(" .!"))
    if match:
        forms |= {match.group(1).strip(" \"'«»“”"), match.group(2).strip(" \"'«»“”")}
    return frozenset(forms - {""})


# a request that failed or was never sent is a failed task, not a missing one
FAILED_SCORES = Scores(False, False, False, False, False, False, 0.0, 0.0, False, False, False, False, None)
NO_SCORES = Scores(*(None,) * len(Scores._fields))  # a prompt not run yet: no figure at all


def cell_diagnosis(
    status: str, diagnosis: str | None, record: Answer | None, truncated: bool, cap: int, question: str = ""
) -> str | None:
    """One cell's diagnosis: what the request's fate says first (request_failed, context_overflow, an answer cut at
    the cap: cut_echoing_the_prompt, cut_in_a_loop, cut_by_output_cap; cut_by_context), else what AnswerKey found in
    the answer; None for a cell fully right. question: the question's text, which an echoed prompt holds."""
    if status == "ERROR":
        return "request_failed"
    if status == "CONTEXT_OVERFLOW":
        return "context_overflow"
    if status != "OK" or diagnosis is None:
        return None
    if record is not None and record.finish_reason == "length":
        if isinstance(record.completion_tokens, int) and record.completion_tokens < cap:
            return "cut_by_context"
        return why_cut(record.content if isinstance(record.content, str) else "", question)
    return "cut_by_context" if truncated else diagnosis


# What a chat template leaves in a reply when the server applies the wrong one: the model writes the next turn's markers
TEMPLATE_MARKERS = (
    "<|im_start|>",
    "<|im_end|>",
    "<|user|>",
    "<|assistant|>",
    "<|system|>",
    "[INST]",
    "[/INST]",
    "<start_of_turn>",
    "<end_of_turn>",
    "<|start_header_id|>",
    "<|eot_id|>",
    "<|endoftext|>",
    "<|end|>",
    "</s>",
)
# a cut reply repeats itself when, in its last LOOP_TAIL characters (LOOP_MIN at least), the LOOP_PROBE characters
# just before its cut end stand three times or more, or they compress under LOOP_RATIO: a right answer's JSON
# compresses to 0.7 of its size, 400 words drawn at random from 15 to 0.24, '1, 2, ' repeated to 0.015. On
# SmolLM2-135M's 7 cut answers (bench/real): 5 repeat a date or an object's fields
LOOP_TAIL, LOOP_MIN, LOOP_PROBE, LOOP_RATIO = 2000, 200, 24, 0.1


def why_cut(content: str, question: str) -> str:
    """Why an answer ran to the output cap: it echoes the prompt (a chat template's markers, or the question's text: the
    server's template does not fit the model), it repeats itself (a loop: a longer cap makes it longer), or neither."""
    if any(marker in content for marker in TEMPLATE_MARKERS) or (len(question) >= 20 and question in content):
        return "cut_echoing_the_prompt"
    tail = content[-LOOP_TAIL:]
    if len(tail) >= LOOP_MIN:
        probe, packed = tail[-LOOP_PROBE - 10 : -10], tail.encode("utf-8")
        if tail.count(probe) >= 3 or len(zlib.compress(packed)) < LOOP_RATIO * len(packed):
            return "cut_in_a_loop"
    return "cut_by_output_cap"


EXAMPLE_CHARS = 400  # of a diagnosis example's answer text


class Example(NamedTuple):
    """The first cell of a format with a diagnosis, as results.md shows it and results.json keeps it
    (diagnosis_examples: its fields by name, after the format and the diagnosis)."""

    question_id: str
    question: str
    gold_paths: list[list[int]]
    answer: str | None  # cut at EXAMPLE_CHARS
    error: str | None  # the request's error, or its status where it has none


def diagnosis_example(item: Item, record: Answer | None, status: str) -> Example:
    """The Example of a cell: question, answer text (cut), or the error."""
    content = record.content if record is not None and isinstance(record.content, str) else None
    return Example(
        item.question.id,
        item.question.question,
        [list(p) for p in item.question.paths],
        content[:EXAMPLE_CHARS] + ("…" if len(content) > EXAMPLE_CHARS else "") if content is not None else None,
        record.error if record is not None else None if status == "OK" else status,
    )


class Cell(NamedTuple):
    """One scored cell (score_log): a prompt of the matrix, a repeat, its request's fate, the answer's metrics (None
    where the metric does not apply: an abstention question's path, a prompt not run) and the server's usage. What
    results.json's cells (as_json) and cells.csv hold, and what the aggregates, the gate and the page read. A named
    tuple: a run makes one per prompt and repeat (100,000 and more), and the aggregates read them as columns
    (zip(*cells)) in C."""

    encoding: str
    size: str
    ids: str
    permutation: int
    mode: str
    format: str
    question_id: str
    prompt_sha256: str
    prompt_tokens: int
    insufficient: bool
    hops: str  # matrix.HOP_BUCKETS
    repeat: int
    status: str  # OK, ERROR, CONTEXT_OVERFLOW, NOT_RUN
    parse_success: bool | None  # the answer's Scores, field by field
    json_as_asked: bool | None
    abstained: bool | None
    answer_correct: bool | None
    false_abstention: bool | None
    path_exact: bool | None
    edge_precision: float | None
    edge_recall: float | None
    valid_path: bool | None
    evidence_match: bool | None
    path_supports_answer: bool | None
    right_answer_wrong_path: bool | None
    diagnosis: str | None  # the cell's (cell_diagnosis): the request's fate first, then the answer's
    truncated_by_server: bool
    usage_prompt_tokens: object  # as the server counted: any JSON value, checked where it is used
    usage_cached_tokens: int | None
    usage_completion_tokens: object
    over_output_cap: bool
    latency_s: object
    retry_wait_s: object
    finish_reason: object
    error: str | None

    def as_json(self) -> dict[str, object]:
        """The cell as results.json holds it: every field by name, in this order."""
        return dict(zip(Cell._fields, self))

    @classmethod
    def from_json(cls, cell: dict[str, Any]) -> Cell:
        """A cell of a results.json (--compare): a field it lacks (an older run's) is None."""
        return cls._make(map(cell.get, cls._fields))


def score_log(
    answers: dict[tuple[str, int], Answer],
    items: list[Item],
    config: ModelConfig,
    examples: dict[tuple[str, str], Example] | None = None,
    shown: str | None = None,
) -> list[Cell]:
    """One scored record per row and repeat that the plan covers: the row's cell, the answer's metrics, usage.
    answers: Collected.best, the answer that counts per (prompt SHA-256, repeat). examples, when given, gets the first
    cell of each (format, diagnosis) (diagnosis_example). shown: what the status line of a long scoring says."""
    # None: every prompt that fits, every repeat
    planned = set(planned_keys(items, config)) if config.limit is not None else None
    shown_cache: ShownCache = {}  # each shown graph, its names, its edge index
    key: AnswerKey | None = None  # the prompt's: its repeats that answer alike are scored once
    scored: list[Cell] = []
    for item in items if shown is None else _counted(items, shown):
        row, sha, q = item.row, item.row.prompt_sha256, item.question
        head = (row.encoding, row.size, row.ids, row.permutation, row.mode, row.format, q.id, sha,
                row.prompt_tokens, q.insufficient, hop_bucket(q))  # fmt: skip
        overflow = row.overflow and config.model != SOLVER_MODEL
        for repeat in range(config.repeats):
            record = answers.get((sha, repeat))
            if overflow:
                status, scores, usage = "CONTEXT_OVERFLOW", FAILED_SCORES, None
            elif planned is not None and (sha, repeat) not in planned:
                continue  # outside --limit: not part of this run, even when the log holds an answer to it
            elif record is None:
                status, scores, usage = "NOT_RUN", None, None
            elif record.error is not None and context_refusal(record.error):
                # the server's own window: a failed task
                status, scores, usage = "CONTEXT_OVERFLOW", FAILED_SCORES, None
            elif record.error is not None:
                status, scores, usage = "ERROR", FAILED_SCORES, record
            else:
                status, usage = "OK", record
                if key is None or key.sha != sha or key.q is not q:
                    key = _answer_key(item, shown_cache)
                scores = key.score(record.content)
            if scores is not None and q.insufficient:
                scores = abstention_scores(scores)
            server_prompt = usage.prompt_tokens if usage else None
            truncated = isinstance(server_prompt, int) and server_prompt < TRUNCATION_RATIO * row.prompt_tokens
            diagnosis = None
            if scores is not None:
                diagnosis = cell_diagnosis(
                    status, scores.diagnosis, record, truncated, config.max_output_tokens, q.question
                )
                if examples is not None and diagnosis and (row.format, diagnosis) not in examples:
                    examples[(row.format, diagnosis)] = diagnosis_example(item, record, status)
            scored.append(_cell(head, repeat, status, scores or NO_SCORES, diagnosis, truncated, record, usage, config))
    return scored


def _cell(
    head: tuple[str, str, str, int, str, str, str, str, int, bool, str],
    repeat: int,
    status: str,
    m: Scores,
    diagnosis: str | None,
    truncated: bool,
    record: Answer | None,
    usage: Answer | None,
    config: ModelConfig,
) -> Cell:
    """One scored cell: the row's head (encoding to hops), the repeat, the request's fate, the answer's metrics, the
    cell's diagnosis, and what the server said (usage is the record where its counts stand: not for an overflow)."""
    completion = usage.completion_tokens if usage else None
    return Cell(
        *head,
        repeat,
        status,
        m.parse_success,
        m.json_as_asked,
        m.abstained,
        m.answer_correct,
        m.false_abstention,
        m.path_exact,
        m.edge_precision,
        m.edge_recall,
        m.valid_path,
        m.evidence_match,
        m.path_supports_answer,
        m.right_answer_wrong_path,
        diagnosis,
        truncated,
        usage.prompt_tokens if usage else None,
        usage.cached_tokens if usage else None,
        completion,
        isinstance(completion, int) and completion > config.max_output_tokens,  # the server ignored the cap
        record.latency_s if record else None,
        record.retry_wait_s if record else None,
        record.finish_reason if record else None,
        record.error if record else None,
    )


def _counted(items: list[Item], shown: str) -> Iterator[Item]:
    """The items, one after the other, with a status line on stderr when they take long (progress.Progress)."""
    progress = Progress(len(items), "prompts")
    for item in items:
        yield item
        progress.advance(1, shown)
    progress.close()


def _answer_key(item: Item, shown_cache: ShownCache) -> AnswerKey:
    """The AnswerKey of an item's prompt, over the graph it shows (built once for every prompt that shows it)."""
    row = item.row
    shown_key = (
        item.variant.name,
        id(item.context),
        row.permutation,
        row.mode,
        row.edges_included,
        id(item.order),
    )
    if shown_key not in shown_cache:
        shown = item.shown()
        shown_cache[shown_key] = (shown, {n.id: n.name for n in shown.nodes}, SharedIndex())
    graph, names, index = shown_cache[shown_key]
    order = cited_order(row.format, graph)
    return AnswerKey(graph, item.question, names, row.prompt_sha256, index, item.undirected, order)


# Why answers fail: one diagnosis per cell that is not fully right, by the first rule that holds, in this order
# (cell_diagnosis, then AnswerKey._diagnose), each with the article's remedy. README: "Why answers fail".
DIAGNOSES = {  # name -> (what it means, the remedy the article gives)
    "request_failed": (
        "the request failed (the log's error, by reason above)",
        "re-run the same command: only the failed prompts are sent again",
    ),
    "context_overflow": (
        "the prompt did not fit the context window (the tool's --context-window or the server's)",
        "a smaller context (--context-edges), a more compact format, or a larger window (scenario 3)",
    ),
    "cut_echoing_the_prompt": (
        "the answer was cut at --max-output-tokens while writing a chat template's turn markers or the "
        "prompt's question again",
        "the server's chat template does not fit the model: serve it with "
        "the model's own (llama.cpp: --jinja, or --chat-template NAME); a longer cap only echoes more",
    ),
    "cut_in_a_loop": (
        "the answer was cut at --max-output-tokens while repeating itself (the text before its cut stands "
        "three times in its last 2,000 characters, or they compress to a tenth)",
        "a loop, not a short cap: a repetition penalty, a temperature above 0, or --structured "
        "json_object; raising --max-output-tokens only makes the loop longer",
    ),
    "cut_by_output_cap": (
        "the answer was cut at --max-output-tokens (finish_reason length)",
        "raise --max-output-tokens",
    ),
    "cut_by_context": (
        "the answer or the prompt was cut by the server's context before the output cap",
        "a server with a larger context (llama.cpp: --n_ctx), or a smaller context",
    ),
    "no_json": (
        "no JSON object with an answer in the reply, even fenced or inside prose",
        "--structured json_object where the server supports it; a shorter prompt (section 10: invalid answer JSON)",
    ),
    "false_abstention": (
        "INSUFFICIENT_DATA where a complete path is shown",
        "make each edge's direction and ends explicit (scenario 2: an arrow, a column header, node types)",
    ),
    "missed_abstention": (
        "an answer where INSUFFICIENT_DATA was right (no complete path is shown)",
        "require evidence for "
        "every hop; --pseudonymize tells an answer from memory (section 10: incomplete negative example)",
    ),
    "miscounted_indices": (
        "the evidence names exactly the edges of a gold path; the path's indices do not",
        "--edge-ids: a stable id per edge instead of a position the model must count (section 10: unstable order)",
    ),
    "edge_reversed": (
        "the path or evidence cites an edge that is not shown, and its reverse is",
        "an explicit arrow, a column header, node types (scenario 2; section 10: direction reversal)",
    ),
    "edge_not_shown": (
        "the path or evidence cites an edge that is not in the shown graph (an index out of range, a made-up triple)",
        "separate records visibly, a relation legend (scenario 2); --pseudonymize tells facts from memory",
    ),
    "broken_chain": (
        "the path's edges are shown but do not follow on from each other",
        "node ids repeated at both ends of every record, a header (scenario 2)",
    ),
    "right_answer_wrong_path": (
        "the answer is right; the path is a real walk but not a gold path, or no path (scenario 4)",
        "do not count it as a success: require evidence; --pseudonymize tells guessing from memory",
    ),
    "answer_form": (
        "the path's walk reaches a gold node; the answer says something else (scenario 5)",
        "ask for the node id and the display name apart (answer_id, answer_text); check normalization",
    ),
    "wrong_branch": (
        "the path is a real walk that ends at another entity than a gold one",
        "competing entities are told apart by types and explicit relations: node types, a relation legend (scenario 2)",
    ),
    "no_path": ("a wrong answer and no path cited", "the schema asks for a path: --structured json_object; fewer hops"),
}
