"""Real knowledge graphs: answer sets, several gold paths, every problem at once, whole-word leakage checks,
prompt languages, counting a prompt by parts, and distractors that look like the input."""

import collections
import json
import math
import random
import re
import sys
import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

import benchmark
from benchmark import Edge, Graph, Node
from graphrag_format_benchmark import (
    charts,
    gate,
    inputs as inputs_module,
    matrix,
    measure,
    options,
    questions as questions_module,
    scoring,
    solver,
    statistics,
    wording,
    words,
)
from graphrag_format_benchmark.runner import send
from graphrag_format_benchmark.variants import contexts, distractors, names as variants_names, pseudonyms

from conftest import ROOT, grown, run_cli

sys.path.insert(0, str(ROOT / "bench"))
import synth_kg  # noqa: E402

TOKENIZERS = {name: benchmark.load_tokenizer(name) for name in benchmark.SHIPPED_ENCODINGS}


def write(tmp_path, graph, questions):
    (tmp_path / "g.json").write_text(json.dumps(graph, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "q.json").write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    return ["--graph", str(tmp_path / "g.json"), "--questions", str(tmp_path / "q.json"), "--out", str(tmp_path / "out")]


# A family: parents and children both ways, as Freebase keeps them. "Who are Ann's siblings?" walks
# parents, then children: it comes back over the first edge to Ann herself, and on to Bob.
FAMILY = {
    "nodes": [{"id": i, "name": n, "type": "entity"} for i, n in
              (("ann", "Ann"), ("bob", "Bob"), ("carl", "Carl"), ("dora", "Dora"), ("golden_gate_bridge", "Golden Gate Bridge"),
               ("grand_duke_of_russia", "Grand Duke of Russia"), ("russia", "Russia"), ("dot", "."))],
    "edges": [
        {"source": "ann", "relation": "parents", "target": "carl"},  # 0
        {"source": "bob", "relation": "parents", "target": "carl"},  # 1
        {"source": "carl", "relation": "children", "target": "ann"},  # 2
        {"source": "carl", "relation": "children", "target": "bob"},  # 3
        {"source": "carl", "relation": "spouse", "target": "dora"},  # 4
        {"source": "dora", "relation": "lives_near", "target": "golden_gate_bridge"},  # 5
        {"source": "grand_duke_of_russia", "relation": "country", "target": "russia"},  # 6
        {"source": "carl", "relation": "knows", "target": "dot"},  # 7
    ],
}
SIBLINGS = {
    "id": "siblings", "question": "Whose parent is also a parent of Carl's daughter?", "answers": ["Ann", "Bob"],
    "answer_ids": ["ann", "bob"], "paths": [[0, 0], [0, 1]], "insufficient": False,
    "query": {"start": "ann", "hops": [{"relation": "parents", "direction": "out"}, {"relation": "parents", "direction": "in"}]},
}
QUESTIONS = [
    SIBLINGS,
    {"id": "kids", "question": "Who are the children of Carl?", "answers": ["Ann", "Bob"], "answer_ids": ["ann", "bob"],
     "paths": [[2], [3]], "insufficient": False,
     "query": {"start": "carl", "hops": [{"relation": "children", "direction": "out"}]}},
    {"id": "gold", "question": "What does the gold medalist's stepmother live near?", "answer": "Golden Gate Bridge",
     "answer_id": "golden_gate_bridge", "path": [4, 5], "insufficient": False,
     "query": {"start": "carl", "hops": [{"relation": "spouse", "direction": "out"}, {"relation": "lives_near", "direction": "out"}]}},
    {"id": "country", "question": "Which country is grand_duke_of_russia from?", "answer": "Russia", "answer_id": "russia",
     "path": [6], "insufficient": False,
     "query": {"start": "grand_duke_of_russia", "hops": [{"relation": "country", "direction": "out"}]}},
    {"id": "acquaintance", "question": "Whom does Carl know. Really.", "answer": ".", "answer_id": "dot", "path": [7],
     "insufficient": False, "query": {"start": "carl", "hops": [{"relation": "knows", "direction": "out"}]}},
    {"id": "none", "question": "Where does Bob live?", "answer": "INSUFFICIENT_DATA", "path": [], "insufficient": True,
     "answer_id": None, "query": {"start": "bob", "hops": [{"relation": "lives_near", "direction": "out"}]}},
]


# ---- answer sets and several gold paths


def test_answer_sets_and_walks_back_over_an_edge_pass_the_solver_and_every_leakage_check(tmp_path, capsys):
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", "en"]) == 0
    err = capsys.readouterr().err
    assert err == ""  # gold is not in golden_gate_bridge, russia not in grand_duke_of_russia, "." not in the template
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["preflight"]["questions"] == {"measured": 6, "several_answers_or_paths": 2, "abstention": 1}
    assert {c["check"]: c["result"] for c in manifest["preflight"]["leakage"]}["question_has_no_answer"] == "pass"


def test_solver_model_scores_every_answer_and_path_of_answer_sets(tmp_path):
    argv = [*write(tmp_path, FAMILY, QUESTIONS), "--prompt", "en", "--model", "solver", "--sizes", "small,medium",
            "--formats", ",".join(benchmark.FORMATS)]
    assert benchmark.main(argv) == 0
    table = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["aggregates"]
    for e in table:
        assert (e["answer_correct"]["rate"], e["path_exact"]["rate"], e["abstention_correct"]["rate"]) == (1.0, 1.0, 1.0), e["format"]
    rows = json.loads((tmp_path / "out" / "size_report.json").read_text(encoding="utf-8"))
    row = next(r for r in rows if r["question_id"] == "siblings" and r["size"] == "small")
    assert row["gold_path"] == [0, 0] and row["gold_paths"] == [[0, 0], [0, 1]]
    assert "gold_paths" not in next(r for r in rows if r["question_id"] == "gold")


def test_scoring_takes_any_answer_and_path_and_the_best_matching_gold_path():
    graph = benchmark.load_inputs.__globals__["validate_graph"](FAMILY, "g", benchmark.Problems())
    q = benchmark.Question("kids", "?", ("Ann", "Bob"), ((2,), (3,)), False, ("ann", "bob"), None)

    def score(answer, path):
        evidence = [graph.edges[i]._asdict() for i in path]
        return scoring.score_answer(json.dumps({"answer": answer, "path": path, "evidence": evidence}), graph, q)

    assert score("bob", [3])["answer_correct"] and score("bob", [3])["path_exact"]
    assert score("Ann", [2])["path_exact"] and not score("Carl", [2])["answer_correct"]
    both = score("Ann", [2, 3])  # best gold path: [2] (ties go to the shorter, then the first listed)
    assert (both["path_exact"], both["edge_precision"], both["edge_recall"]) == (False, 0.5, 1.0)


def test_singular_and_plural_forms_must_agree(tmp_path, capsys):
    bad = [dict(SIBLINGS, answer="Ann")]
    assert benchmark.main(write(tmp_path, FAMILY, bad)) == 2
    assert capsys.readouterr().err == (
        "error: q.json: questions[0] gives both 'answer' and 'answers' and they disagree; keep one of them\n".replace(
            "q.json", benchmark.display(tmp_path / "q.json"))
    )


# ---- every problem at once, messages a user can act on


def problems_of(tmp_path, capsys, questions, *flags):
    code = benchmark.main([*write(tmp_path, FAMILY, questions), "--prompt", "en", *flags])
    where = benchmark.display(tmp_path / "q.json")
    return code, capsys.readouterr().err.replace(where, "q.json").splitlines()


def test_every_problem_is_reported_at_once_before_anything_is_measured(tmp_path, capsys):
    misspelled = dict(QUESTIONS[1], query={"start": "carl", "hops": [{"relation": "chidlren", "direction": "out"}]})
    backwards = dict(QUESTIONS[1], id="back", query={"start": "carl", "hops": [{"relation": "children", "direction": "in"}]})
    one_path = dict(SIBLINGS, id="one", answers=["Ann", "Bob"], paths=[[0, 0]])
    no_query = {"id": "loose", "question": "?", "answer": "Dora", "answer_id": "dora", "path": [0, 5], "insufficient": False}
    wrong_name = dict(QUESTIONS[2], id="name", answer="The Bridge")
    code, err = problems_of(tmp_path, capsys, [misspelled, backwards, one_path, no_query, wrong_name])
    assert code == 2
    assert err == [
        "error: q.json: question kids: hop 1 of 1 (chidlren out) finds no edge from the start 'carl'; relations they "
        "can follow forwards (out): children, knows, spouse; did you mean 'children'?",
        "error: q.json: question back: hop 1 of 1 (children in) finds no edge from the start 'carl'; relations they "
        "can follow backwards (in): parents; children leaves them in the other direction: use \"out\"",
        "error: q.json: question one: the query finds 2 complete path(s), the question lists 1 gold path(s); found but "
        "not listed: [0, 1] (ann -parents-> carl, bob -parents-> carl); list every complete path in `paths` or narrow the query",
        "error: q.json: question loose: path [0, 5] (ann -parents-> carl, dora -lives_near-> golden_gate_bridge) is not a "
        "connected walk; fix the path",
        "error: q.json: question name: answer 'The Bridge' is not the name of an answer node ('golden_gate_bridge' is "
        "named 'Golden Gate Bridge'); make the answer the node's name",
        "error: 5 problems found; nothing was written; pass --skip-invalid-questions to drop the questions at fault and go on",
    ]
    assert not (tmp_path / "out").exists()


def test_the_list_of_problems_is_capped(tmp_path, capsys):
    broken = [dict(QUESTIONS[2], id=f"q{i}", path=[7, 7]) for i in range(60)]
    code, err = problems_of(tmp_path, capsys, broken)
    assert code == 2 and len(err) == 52
    assert err[-2:] == ["error: ... and 10 more problems",
                        "error: 60 problems found; nothing was written; pass --skip-invalid-questions to drop the questions at fault and go on"]


def test_skip_invalid_questions_drops_each_with_its_reason_and_goes_on(tmp_path, capsys):
    leaky = dict(QUESTIONS[2], id="leaky", question="Is it the Golden Gate Bridge?")
    code, err = problems_of(tmp_path, capsys, [*QUESTIONS, leaky], "--skip-invalid-questions", "--sizes", "small,medium")
    assert code == 0
    assert err == [
        "warning: skipped question leaky: q.json: question leaky: leakage check question_has_no_answer failed: "
        "'golden gate bridge'; fix the question, or pass --leakage warn to measure anyway",
        "warning: 1 question(s) skipped, 6 kept",
        "warning: no distractor branch can hang off 'grand_duke_of_russia' without completing a question's path; it gets none",
        "warning: medium: 0 of the 55 distractor branches it needs could be made: the graph's names are too few to vary into "
        "more new names without numbers or blends (spent first: like carl, like dora)",
    ]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert [s["question"] for s in manifest["preflight"]["skipped_questions"]] == ["leaky"]
    report = (tmp_path / "out" / "size_report.md").read_text(encoding="utf-8")
    assert "Skipped by --skip-invalid-questions: 1 question(s)." in report and "| leaky | " in report
    rows = json.loads((tmp_path / "out" / "size_report.json").read_text(encoding="utf-8"))
    assert "leaky" not in {r["question_id"] for r in rows}


def test_skipping_every_question_is_an_error(tmp_path, capsys):
    code, err = problems_of(tmp_path, capsys, [dict(QUESTIONS[2], path=[7, 7])], "--skip-invalid-questions")
    assert code == 2 and err[-1] == "error: q.json: every question was skipped (1 with problems); nothing was written"


def test_leakage_warn_records_the_warning_and_measures(tmp_path, capsys):
    leaky = [dict(QUESTIONS[2], question="Is it the Golden Gate Bridge?")]
    code, err = problems_of(tmp_path, capsys, leaky, "--leakage", "warn", "--permutations", "2")
    assert code == 0
    assert err == ["warning: leakage check question_has_no_answer: no question's wording contains its own answer or "
                   "answer id: gold: 'golden gate bridge'"]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    check = next(c for c in manifest["preflight"]["leakage"] if c["check"] == "question_has_no_answer")
    assert check["result"] == "warn" and check["found"] == [{"question": "gold", "found": "'golden gate bridge'"}]
    assert "| question_has_no_answer | warn |" in (tmp_path / "out" / "size_report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("text, needle, found", [
    ("golden_gate_bridge", "gold", False), ("golden gate bridge", "gold", False), ("the gold-medal", "gold", True),
    ("grand_duke_of_russia", "russia", False), ("made in russia.", "russia", True), ("whom does carl know. really.", ".", False),
    ("prompt.json.q1.txt", "q1", True), ("prompt.json.q11.txt", "q1", False),
])
def test_leakage_matches_whole_words_only(text, needle, found):
    assert words.mentions(text, needle) is found


# ---- prompt languages


def test_english_prompts_hold_no_cyrillic_outside_the_graph(tmp_path):
    argv = [*write(tmp_path, FAMILY, QUESTIONS), "--prompt", "en", "--write-prompts"]
    assert benchmark.main(argv) == 0
    prompts = sorted((tmp_path / "out").glob("prompt.*.txt"))
    assert len(prompts) == 30
    for path in prompts:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("You are performing an exact traversal of a directed graph.\n\nGraph format: ")
        assert not re.search("[\u0400-\u04ff]", text), path.name
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["prompt"] == {"template": "en", "sha256": benchmark.sha256_hex(benchmark.PROMPT_TEMPLATES["en"])}


def test_a_template_file_is_checked_and_used(tmp_path, capsys):
    template = tmp_path / "t.txt"
    template.write_text('Answer as {"answer": ...}.\n{format_name}:\n{graph}\nQ:\n{question}\n', encoding="utf-8")
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", str(template)]) == 0
    text = (tmp_path / "out" / "prompt.dsl.kids.txt").read_text(encoding="utf-8")
    assert text.startswith('Answer as {"answer": ...}.\ndsl:\n# @ id|name|type\n') and text.endswith("\nQ:\nWho are the children of Carl?\n")
    template.write_text("Q: {question}\n{format_name} graph, then the JSON answer:\n{graph}", encoding="utf-8")  # question first
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", str(template)]) == 0
    for row in json.loads((tmp_path / "out" / "size_report.json").read_text(encoding="utf-8")):  # counted whole, exactly
        text = (tmp_path / "out" / f"prompt.{row['format']}.{row['question_id']}.txt").read_text(encoding="utf-8")
        assert row["prompt_tokens"] == TOKENIZERS["o200k_base"].count(text) and text.startswith("Q: ")
    for bad, message in (("{graph}{question}", "has {format_name} 0 times"), ("{format_name}{graph}{graph}{question}", "has {graph} 2 times"),
                         ("{format_name}{graph}{question}{answer}", "has the unknown field {answer}")):
        template.write_text(bad, encoding="utf-8")
        assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", str(template)]) == 2
        assert message in capsys.readouterr().err


def test_a_template_that_holds_an_answer_fails_the_leakage_check(tmp_path, capsys):
    template = tmp_path / "t.txt"
    template.write_text("{format_name} {graph}\nFor example, Dora.\n{question}\n", encoding="utf-8")
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", str(template)]) == 0  # Dora is no answer
    capsys.readouterr()
    template.write_text("{format_name} {graph}\nFor example, Golden Gate Bridge.\n{question}\n", encoding="utf-8")
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", str(template)]) == 2
    assert "question gold: leakage check template_has_no_answer failed: 'golden gate bridge'" in capsys.readouterr().err


# ---- counting a prompt by parts


@pytest.mark.parametrize("left, right, splits", [
    ("ГРАФ\n", "{", True), ("ВОПРОС\n", "Где?", True), ("}\n\n", "B", False), ("a\n", " b", False), ("a\n", "/b", False),
    ("a \n", "b", False), ("a", "\nb", False), ("", "x", True), ("x\n", "", True),
])
def test_the_proven_boundary(left, right, splits):
    assert benchmark.splits_between(left, right) is splits


HOSTILE = st.sampled_from(["\n", "\r\n", " ", "\t", "/", "\\", "|", "{", "}", '"', "'s", "->", " -", "\u2028", "\x85", "\u3000",
                           "\x1c", "й", "ё", "漢", "🙂", "1234", "<|endoftext|>", "e\u0301", "ГРАФ", "QUESTION", "\n\n"])
TEXT = st.lists(st.one_of(HOSTILE, st.text(max_size=6)), max_size=6).map("".join)


@settings(max_examples=200, deadline=None)
@given(names=st.lists(TEXT, min_size=1, max_size=5), question=TEXT, fmt=st.sampled_from(list(benchmark.FORMATS)),
       language=st.sampled_from(list(benchmark.PROMPT_TEMPLATES)), encoding=st.sampled_from(list(TOKENIZERS)))
def test_counting_by_parts_equals_a_full_count(names, question, fmt, language, encoding):
    names = [unicodedata.normalize("NFC", n) for n in names]
    nodes = tuple(Node(f"n{i}{n}", n, n or "t") for i, n in enumerate(names))
    edges = tuple(Edge(nodes[i].id, names[i], nodes[-1 - i].id) for i in range(len(nodes)))
    template = inputs_module.load_template(language)
    shown = benchmark.FormattedGraph(template, fmt, benchmark.serialized(fmt, Graph(nodes, edges)))
    tokenizer, counts = TOKENIZERS[encoding], benchmark.TokenCounts()
    prompt = template.render(fmt, shown.text, question)
    assert shown.tokens(counts, tokenizer, question) == len(tokenizer.encoding.encode_ordinary(prompt))
    assert shown.prompt_sha256(question) == benchmark.sha256_hex(prompt)
    assert shown.graph_tokens(counts, tokenizer) == len(tokenizer.encoding.encode_ordinary(shown.text))


def test_the_shipped_encodings_have_proven_patterns():
    assert all(t.splits for t in TOKENIZERS.values())
    import tiktoken_ext.openai_public as public
    assert benchmark.sha256_hex(public.r50k_pat_str) in benchmark.SPLIT_PATTERNS


def test_no_write_prompts_and_write_prompts(tmp_path):
    assert run_cli("--no-write-prompts", "--out", str(tmp_path / "a")).returncode == 0
    assert not list((tmp_path / "a").glob("prompt.*"))
    assert run_cli("--out", str(tmp_path / "b")).returncode == 0
    assert len(list((tmp_path / "b").glob("prompt.*"))) == 30


# ---- distractors that look like the input


def surface(names, ids):
    """Shares of names per script and casing pattern, and of ids per shape."""
    def casing(name):
        words = [w for w in name.split(" ") if any(c.isalpha() for c in w)]
        return "title" if words and all(w[0].isupper() for w in words) else "lower" if name.islower() else "mixed"

    def shape(i):
        return ("snake" if re.fullmatch(r"[^\W_]+(_[^\W_]+)*", i) else "other", i.isascii(), any(c.isdigit() for c in i),
                any(c.isupper() for c in i))

    shares = {}
    for label, values in (("script", [variants_names.script(n) for n in names]), ("casing", [casing(n) for n in names]),
                          ("id", [shape(i) for i in ids])):
        for key, n in collections.Counter(values).items():
            shares[(label, key)] = n / len(values)
    return shares


def english_typed_graph():
    rng = random.Random(5)
    people = [f"{f} {s}" for f in ("Alice", "Brian", "Chloe", "David", "Emma", "Frank", "Grace", "Henry")
              for s in ("Stone", "Reed", "Hale", "Moss", "Vance", "Pike")][::5]
    cities = ["Springfield", "Riverton", "Oak Harbor", "Maple Falls", "Fort Ridge", "Pine Bluff", "Cedar Vale", "Glen Park"]
    firms = [f"{a} {b}" for a in ("Acme", "Globex", "Initech", "Umbrella", "Vertex", "Hooli") for b in ("Labs", "Motors", "Press", "Works")][::3]
    nodes = [{"id": f"person_{p.lower().replace(' ', '_')}", "name": p, "type": "person"} for p in people]
    nodes += [{"id": f"city_{c.lower().replace(' ', '_')}", "name": c, "type": "city"} for c in cities]
    nodes += [{"id": f"org_{f.lower().replace(' ', '_')}", "name": f, "type": "organization"} for f in firms]
    by_type = {t: [n["id"] for n in nodes if n["type"] == t] for t in ("person", "city", "organization")}
    edges = [{"source": p, "relation": "WORKS_AT", "target": rng.choice(by_type["organization"])} for p in by_type["person"]]
    edges += [{"source": o, "relation": "LOCATED_IN", "target": rng.choice(by_type["city"])} for o in by_type["organization"]]
    names = {n["id"]: n["name"] for n in nodes}
    questions = []
    for k, e in enumerate(edges[:12:3]):  # persons 0, 3, 6, 9: where does their employer sit?
        second = next(x for x in edges if x["source"] == e["target"])
        questions.append({
            "id": f"q{k + 1}", "question": f"Where is the employer of person {k + 1}?", "answer": names[second["target"]],
            "answer_id": second["target"], "path": [edges.index(e), edges.index(second)], "insufficient": False,
            "query": {"start": e["source"], "hops": [{"relation": "WORKS_AT", "direction": "out"}, {"relation": "LOCATED_IN", "direction": "out"}]},
        })
    return {"nodes": nodes, "edges": edges}, questions


def untyped_graph():
    rng = random.Random(3)
    graph = synth_kg.make_graph(600, 60, rng)
    return graph, synth_kg.make_questions(graph, 12, rng)


@pytest.mark.parametrize("make", [english_typed_graph, untyped_graph, "article"])
def test_distractors_match_the_input_surface_within_ten_points(make, canonical):
    if make == "article":
        graph, questions = canonical.graph, canonical.questions
    else:
        problems = benchmark.Problems()
        data, qdata = make()
        graph = benchmark.validate_graph(data, "g", problems)
        questions = benchmark.validate_questions(qdata, "q", benchmark.GraphScope(len(graph.edges), {n.id for n in graph.nodes}, {}), problems)
        solver.check_questions(graph, questions, "q", problems)
        bad = set(problems.questions())
        questions = tuple(q for q in questions if q.id not in bad)
    stream = distractors.Distractors(graph, questions, 11)
    variant = grown(graph, questions, stream, "medium", stream.medium, 11)
    matrix.preflight_solver(variant)
    new = [n for n in variant.contexts[0].graph.nodes if n not in graph.nodes]
    assert len(new) >= 15
    before = surface([n.name for n in graph.nodes], [n.id for n in graph.nodes])
    after = surface([n.name for n in new], [n.id for n in new])
    for key in before.keys() | after.keys():
        assert abs(before.get(key, 0) - after.get(key, 0)) <= 0.10, (key, before.get(key, 0), after.get(key, 0))
    originals = {n.name.casefold() for n in graph.nodes}
    for n in new:
        assert n.name.casefold() not in originals
        assert not any(n.name.casefold().startswith(o + " ") for o in originals)
    relations = {(e.relation) for e in graph.edges}
    assert {e.relation for e in variant.contexts[0].graph.edges} <= relations


def test_medium_on_an_untyped_graph_with_hundreds_of_relations_is_drawn_not_enumerated(tmp_path):
    rng = random.Random(9)
    graph = synth_kg.make_graph(3000, 300, rng)
    questions = synth_kg.make_questions(graph, 20, rng)
    done = run_cli(*write(tmp_path, graph, questions), "--sizes", "medium", "--permutations", "2", "--prompt", "en",
                   "--skip-invalid-questions", "--model", "solver")
    assert done.returncode == 0, done.stderr
    table = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["aggregates"]
    assert {(e["answer_correct"]["rate"], e["path_exact"]["rate"]) for e in table} == {(1.0, 1.0)}


# ---- generated question sets


def test_generated_questions_are_spread_proven_and_reproducible(tmp_path):
    rng = random.Random(21)
    graph = synth_kg.make_graph(2500, 200, rng)
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    argv = ["--graph", str(tmp_path / "g.json"), "--generate-questions", "100", "--hops", "1-4", "--prompt", "en",
            "--model", "solver", "--formats", "json,dsl", "--no-write-prompts", "--wording", "template"]
    done = run_cli(*argv, "--out", str(tmp_path / "a"))
    assert (done.returncode, done.stderr) == (0, "")  # the solver and every leakage check accept them
    generated = (tmp_path / "a" / "questions.generated.json").read_bytes()
    questions = json.loads(generated)
    kinds = collections.Counter((len(q["query"]["hops"]), q["insufficient"]) for q in questions)
    assert kinds == {(h, False): 20 for h in range(1, 5)} | {(h, True): 5 for h in range(1, 5)}
    assert all(q["question"].startswith('Start at "') for q in questions)
    positives = [q for q in questions if not q["insufficient"]]
    assert all(q["question"].endswith(". Which nodes do you reach? Name any one of them." if "answer_ids" in q else ". Which node do you reach?")
               for q in positives)
    assert all(len(q.get("answer_ids", [None])) <= questions_module.MAX_ANSWERS for q in positives)
    table = json.loads((tmp_path / "a" / "results.json").read_text(encoding="utf-8"))["aggregates"]
    assert {(e["answer_correct"]["rate"], e["path_exact"]["rate"], e["abstention_correct"]["rate"]) for e in table} == {(1.0, 1.0, 1.0)}
    assert run_cli(*argv, "--out", str(tmp_path / "b")).returncode == 0
    assert (tmp_path / "b" / "questions.generated.json").read_bytes() == generated  # the same seed, the same set
    again = run_cli("--graph", str(tmp_path / "g.json"), "--questions", str(tmp_path / "a" / "questions.generated.json"),
                    "--prompt", "en", "--formats", "json,dsl", "--out", str(tmp_path / "c"), "--no-write-prompts")
    assert again.returncode == 0, again.stderr  # fed back as a questions file
    rows = lambda out: [r["prompt_sha256"] for r in json.loads((out / "size_report.json").read_text(encoding="utf-8"))]  # noqa: E731
    assert rows(tmp_path / "c") == rows(tmp_path / "a")


def test_a_small_graph_yields_what_it_can_and_says_how_many_per_hop_count(tmp_path, capsys):
    argv = [*write(tmp_path, FAMILY, QUESTIONS)[:2], "--generate-questions", "40", "--hops", "1-2", "--out", str(tmp_path / "out")]
    assert benchmark.main(argv) == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: the graph yields \d+ of the 40 questions asked for \(1 hop\(s\): \d+, 2 hop\(s\): \d+\)", err)
    questions = json.loads((tmp_path / "out" / "questions.generated.json").read_text(encoding="utf-8"))
    assert questions and all(q["question"].startswith("Начни с «") for q in questions)  # the article's language by default


def typed_english_graph(seed=7, people=60):
    """People, organizations, projects, cities and countries, each type with relations of its own."""
    rng = random.Random(seed)
    first = "Ada Ben Cleo Dan Eve Finn Gus Hana Ivo Jade Kai Lena Milo Nora Otto Pia".split()
    last = "Stone Reed Hale Moss Vance Pike Lowe Quinn".split()
    nodes, edges = [], []

    def add(kind, name):
        node_id = f"{kind}_{name.lower().replace(' ', '_')}"
        if all(n["id"] != node_id for n in nodes):
            nodes.append({"id": node_id, "name": name, "type": kind})
        return node_id

    countries = [add("country", c) for c in ("Aurelia", "Brevia", "Calder")]
    cities = [add("city", c) for c in ("Port Alder", "Lake Rowan", "Fort Ember", "Glen Mira", "Oak Harbor", "Pine Vale")]
    orgs = [add("organization", f"{a} {b}") for a in ("Acme", "Globex", "Initech", "Vertex") for b in ("Labs", "Works")]
    projects = [add("project", p) for p in ("Orion", "Atlas", "Pulse", "Vega", "Lyra", "Nova", "Draco", "Hydra")]
    persons = [add("person", f"{rng.choice(first)} {rng.choice(last)}") for _ in range(people)]
    persons = list(dict.fromkeys(persons))
    edges += [{"source": c, "relation": "IN_COUNTRY", "target": rng.choice(countries)} for c in cities]
    edges += [{"source": o, "relation": "LOCATED_IN", "target": rng.choice(cities)} for o in orgs]
    edges += [{"source": o, "relation": "MAINTAINS", "target": p} for p in projects for o in rng.sample(orgs, 1)]
    for p in persons:
        edges.append({"source": p, "relation": "WORKS_AT", "target": rng.choice(orgs)})
        if rng.random() < 0.5:
            edges.append({"source": p, "relation": "LEADS", "target": rng.choice(projects)})
        if rng.random() < 0.4:
            edges.append({"source": p, "relation": "KNOWS", "target": rng.choice(persons)})
    return {"nodes": nodes, "edges": [e for e in edges if e["source"] != e["target"]]}


def independent_near_miss_share(graph, questions, role):
    """Of the abstention questions, the share whose last hop some node of the same role can take, checked here
    without the tool's own code: role 'type' (same type) or 'relation' (reached by the same relation and direction)."""
    edges = graph["edges"]
    node_type = {n["id"]: n["type"] for n in graph["nodes"]}
    takes = collections.defaultdict(set)  # node -> (relation, direction) it can follow
    for e in edges:
        takes[e["source"]].add((e["relation"], "out"))
        takes[e["target"]].add((e["relation"], "in"))
    near = 0
    abstentions = [q for q in questions if q["insufficient"]]
    for q in abstentions:
        hops = q["query"]["hops"]
        reached = {q["query"]["start"]}
        for h in hops[:-1]:
            reached = {e["target"] if h["direction"] == "out" else e["source"] for e in edges for v in reached
                       if e["relation"] == h["relation"] and e["source" if h["direction"] == "out" else "target"] == v}
        last = (hops[-1]["relation"], hops[-1]["direction"])
        assert not any(last in takes[v] for v in reached)  # it is an abstention
        if role == "type":
            peers = {n for n, t in node_type.items() if t in {node_type[v] for v in reached}}
        elif len(hops) > 1:
            prev = hops[-2]
            peers = {e["target"] if prev["direction"] == "out" else e["source"] for e in edges if e["relation"] == prev["relation"]}
        else:
            peers = {e[end] for e in edges for end in ("source", "target") for v in reached
                     if e[end] != v and any(e["relation"] == x["relation"] and x[end] == v for x in edges)}
        near += any(last in takes[p] for p in peers - reached)
    return near / len(abstentions), len(abstentions)


@pytest.mark.parametrize("kind", ["typed", "untyped"])
def test_generated_abstentions_are_near_misses_a_schema_cannot_refuse(tmp_path, kind):
    if kind == "typed":
        graph, role = typed_english_graph(), "type"
    else:
        graph, role = synth_kg.make_graph(1200, 120, random.Random(21)), "relation"
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    argv = ["--graph", str(tmp_path / "g.json"), "--generate-questions", "80", "--abstain-share", "0.5", "--prompt", "en",
            "--out", str(tmp_path / "out")]
    assert benchmark.main(argv) == 0
    questions = json.loads((tmp_path / "out" / "questions.generated.json").read_text(encoding="utf-8"))
    share, n = independent_near_miss_share(graph, questions, role)
    assert n >= 30 and share >= 0.9
    abstentions = [q for q in questions if q["insufficient"]]
    assert all(q["near_miss"]["hop"] == len(q["query"]["hops"]) and q["near_miss"]["peers_with_hop"] >= 1 for q in abstentions)
    assert any(len(q["query"]["hops"]) > 1 for q in abstentions)  # breaks after a real walk, like the article's q6


def test_question_text_quotes_a_name_with_quotes_in_other_quotes():
    hops = [benchmark.Hop("DIRECTED", "in")]
    assert wording.question_text("en", 'The "Best" Film', hops) == "Start at 'The \"Best\" Film'. Follow DIRECTED backwards. Which node do you reach?"
    assert wording.question_text("ru", "Кафе «Уют»", hops, several=True) == (
        'Начни с "Кафе «Уют»". Пройди по DIRECTED в обратную сторону. Какие узлы получатся? Назови любой из них.')


def test_generate_questions_and_a_questions_file_do_not_mix(tmp_path, capsys):
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--generate-questions", "5"]) == 2
    assert capsys.readouterr().err == "error: --generate-questions draws the questions: leave --questions out\n"


def test_results_and_size_report_per_hop_count(tmp_path):
    argv = [*write(tmp_path, FAMILY, QUESTIONS), "--model", "solver", "--budget", "700", "--formats", "json,dsl"]
    assert benchmark.main(argv) == 0
    table = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["aggregates"]
    a = next(e for e in table if (e["mode"], e["format"]) == ("A", "json"))
    assert {b: part["n"] for b, part in a["by_hops"].items()} == {"1": 3, "2": 2, "abstention": 1}
    assert a["by_hops"]["2"]["path_exact"]["rate"] == 1.0 and a["by_hops"]["abstention"]["abstention_correct"]["rate"] == 1.0
    report = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert "| json | 1.00 (0.44–1.00) [3] | 1.00 (0.34–1.00) [2] |  |  | 1.00 (0.21–1.00) [1] |" in report
    size_report = (tmp_path / "out" / "size_report.md").read_text(encoding="utf-8")
    rows = json.loads((tmp_path / "out" / "size_report.json").read_text(encoding="utf-8"))
    b_json = {r["question_id"]: r["answerable"] for r in rows if (r["mode"], r["format"]) == ("B", "json")}
    one_hop = [b_json[q] for q in ("kids", "country", "acquaintance")]
    assert f"| json | {sum(one_hop) / 3:.2f} | " in size_report and "Answerable per hop count:" in size_report


# ---- the acceptance gate


def gate_inputs(tmp_path, n=60):
    rng = random.Random(33)
    graph = synth_kg.make_graph(1500, 120, rng)
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    return ["--graph", str(tmp_path / "g.json"), "--generate-questions", str(n), "--prompt", "en", "--formats", "json,tsv,dsl",
            "--wording", "template"]  # the token figures asserted on these runs are of the templated texts


def test_the_solver_on_200_questions_is_accepted_on_every_format(tmp_path, capsys):
    assert benchmark.main([*gate_inputs(tmp_path, 200), "--model", "solver", "--out", str(tmp_path / "out")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert [(v["format"], v["verdict"], v["positive_questions"], v["abstention_questions"]) for v in results["verdicts"]] == [
        ("tsv", "accept", 160, 40), ("dsl", "accept", 160, 40)]
    tsv = results["verdicts"][0]
    assert tsv["checks"]["path_exact"]["lower"] == -0.0223 and tsv["checks"]["path_exact"]["method"] == "newcombe method 11 (continuity corrected)"
    assert tsv["checks"]["abstention"]["result"] == "pass" and tsv["checks"]["abstention"]["tolerance"] == 0.15  # 40 agree: bound -0.085
    assert tsv["holm"] == {"p_value": 0.003259, "threshold": 0.025, "formats": 2, "shown": True}
    report = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert report.index("## Verdicts against json") < report.index("## o200k_base")
    assert re.search(r"Recommendation for o200k_base · small · original · A: ship (tsv|dsl), which saves \d+% .* accepted over "
                     r"160 positive and 40 abstention questions\.", report)
    assert re.search(r"verdict for o200k_base · small · original · A: ship (tsv|dsl)", capsys.readouterr().out)
    assert "| format | prompt tokens | answer | path exact | abstention |\n" in report  # no model-only columns for the solver


def test_sixty_perfect_questions_are_too_few_to_accept_and_say_how_many_would_do(tmp_path):
    assert benchmark.main([*gate_inputs(tmp_path), "--model", "solver", "--out", str(tmp_path / "out")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    tsv = results["verdicts"][0]
    assert (tsv["verdict"], tsv["positive_questions"], tsv["undecided"]) == ("undecided", 48, ["path_exact", "valid_path", "abstention"])
    # 74 positive questions that all agree pass at 0.05 (two formats: alpha 0.025), 25 abstention questions at 0.15;
    # with a fifth of the questions abstentions, 125 in all
    assert tsv["questions_needed"] == {"path_exact": 74, "valid_path": 74, "abstention": 25} and tsv["questions_to_generate"] == 125
    report = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert "about 125 questions in all would show it with 80% power if it is as good" in report
    assert ("Recommendation for o200k_base · small · original · A: no decision yet: about 125 questions in all (--generate-questions 125) "
            "would show the closest format no worse with 80% power if it is as good as json; until then, json stays.") in report


def test_the_article_s_six_questions_decide_nothing_at_any_number_of_permutations(tmp_path, capsys):
    assert benchmark.main(["--model", "solver", "--permutations", "5", "--out", str(tmp_path / "out")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert {v["verdict"] for v in results["verdicts"]} == {"undecided"}
    assert {v["positive_questions"] for v in results["verdicts"]} == {5}  # 25 prompts, but 5 positive questions
    check = results["verdicts"][0]["checks"]["path_exact"]
    assert (check["lower"], check["method"]) == (-0.5991, "guarded paired t over question means")  # -ln(0.05) / 5 at least
    assert "ship" not in (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert "ship" not in capsys.readouterr().out


def scripted_run(tmp_path, answer_of, *flags):
    """A model run against a fake server whose answer to each prompt is answer_of(item)."""
    from fake_openai import FakeOpenAI
    argv = [*flags, "--model", "m"]
    args = options.make_parser().parse_args([*argv, "--base-url", "http://127.0.0.1:9/v1"])
    plan = options.make_plan(args)
    spec = options.make_generate_spec(args, plan)
    inputs = inputs_module.load_inputs(args.graph, args.questions or benchmark.DEFAULT_QUESTIONS, None,
                                   questions_module.question_drawer(spec) if spec else None)
    answers = {item.prompt(): answer_of(item) for item in measure.measure(inputs, plan).items}
    server = FakeOpenAI(answer=lambda prompt: answers[prompt])
    try:
        return benchmark.main([*argv, "--base-url", server.url, "--out", str(tmp_path / "out")])
    finally:
        server.close()


def test_a_model_wrong_everywhere_gets_no_verdict_and_no_recommendation(tmp_path, capsys):
    wrong = json.dumps({"answer": "nobody", "path": [0], "evidence": []})
    assert scripted_run(tmp_path, lambda item: wrong, *gate_inputs(tmp_path, 40), "--formats", "json,jsonl,tsv") == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert {v["verdict"] for v in results["verdicts"]} == {"undecided"}
    assert "under the floor 0.20" in results["verdicts"][0]["blocked_by"][0]
    out = capsys.readouterr().out
    assert "verdict for o200k_base · small · original · A: no recommendation: the baseline json gets 0.00 of the positive" in out
    assert "ship" not in out and "ship" not in (tmp_path / "out" / "results.md").read_text(encoding="utf-8")


def test_a_format_wrong_on_its_3_hop_questions_is_rejected_and_the_hop_table_shows_where(tmp_path):
    def answer_of(item):
        wrong = item.row["format"] == "dsl" and matrix.hop_bucket(item.question) == "3"
        return "{}" if wrong else json.dumps(send.solver_answer(item), ensure_ascii=False)

    assert scripted_run(tmp_path, answer_of, *gate_inputs(tmp_path, 80), "--tolerance", "0.1") == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    verdict = {v["format"]: v for v in results["verdicts"]}
    assert verdict["tsv"]["checks"]["path_exact"]["result"] == "pass"  # 64 positive questions pass at 0.1; 16 abstention
    assert (verdict["tsv"]["verdict"], verdict["tsv"]["undecided"]) == ("undecided", ["abstention"])  # questions cannot, yet
    assert verdict["dsl"]["verdict"] == "reject" and "path_exact" in verdict["dsl"]["failed"]
    dsl = next(e for e in results["aggregates"] if e["format"] == "dsl")
    assert dsl["by_hops"]["3"]["path_exact"]["rate"] == 0.0 and dsl["by_hops"]["2"]["path_exact"]["rate"] == 1.0


@pytest.mark.parametrize("a, b, c, d, expected", [
    (6, 0, 0, 0, (0.0, -0.4141, 0.4141)),  # no disagreement still leaves a width
    (200, 0, 0, 0, (0.0, -0.0179, 0.0179)),
    (0, 0, 0, 120, (0.0, -0.0296, 0.0296)),  # everyone wrong: only the baseline floor stops an accept
    (40, 0, 10, 0, (-0.2, -0.3184, -0.091)),  # worked by hand in the README
    (30, 5, 3, 12, (0.04, -0.0667, 0.1457)),  # the corrected phi narrows it less than the plain one
    (25, 0, 0, 5, (0.0, -0.0866, 0.0866)),  # ties: a, d split counts under the correction
])
def test_newcombe_paired_interval_with_continuity_correction(a, b, c, d, expected):
    assert tuple(round(x, 4) for x in statistics.newcombe_cc(a, b, c, d, 1.6448536269514722)) == expected


def test_the_guarded_t_interval_on_fractional_outcomes():
    # no spread: the rule of three's width (-ln 0.05 / n), where a plain t interval has none
    assert tuple(round(x, 4) for x in statistics.guarded_t([0.0] * 40, 0.05, -1, 1)) == (0.0, -0.0749, 0.0749)
    # thirds from three permutations: a plain t interval with 0.5 pseudo-questions at -1 and 1 in its variance
    values = [0.0] * 10 + [1 / 3] * 15 + [-1 / 3] * 15
    mean, se = statistics.guarded_se(values, -1, 1)
    plain = (sum((v - mean) ** 2 for v in values) + 0.5 * ((1 + mean) ** 2 + (1 - mean) ** 2)) / 40 / 41
    assert se == pytest.approx(plain ** 0.5) and mean == pytest.approx(0.0)
    assert statistics.t_quantile(0.95, 39) * se > -math.log(0.05) / 40  # the spread, not the floor, decides here
    assert statistics.guarded_t(values, 0.05, -1, 1)[1] == pytest.approx(-statistics.t_quantile(0.95, 39) * se)
    assert statistics.t_quantile(0.95, 39) == pytest.approx(1.6849, abs=1e-4)


def test_a_question_counts_once_however_many_permutations_and_repeats():
    paired = gate.Paired({"q1": [(True, True)] * 5, "q2": [(True, False), (True, True)]})
    check = gate.paired_check(paired, 0.05)
    assert check["questions"] == 2 and check["outcomes"] == {"both": 1.5, "only_format": 0.5, "only_baseline": 0.0, "neither": 0.0}
    assert check["method"] == "guarded paired t over question means" and paired.differences() == [0.0, 0.5]


def test_permutations_buy_power_when_a_question_is_not_always_answered_alike():
    # the same 60 questions: once (binary), and three times where the format misses now and then
    once = gate.Paired({f"q{i}": [(i % 10 != 0, True)] for i in range(60)})
    thrice = gate.Paired({f"q{i}": [(k != i % 10, True) for k in range(3)] for i in range(60)})
    assert once.bounds(0.05)[0] == pytest.approx(thrice.bounds(0.05)[0])  # the same difference, -0.1
    assert thrice.bounds(0.05)[1] > once.bounds(0.05)[1]  # a narrower bound from the same questions


def test_holm_lets_through_only_what_survives_the_family():
    judged = [{"format": f, "verdict": "accept", "p_value": p, "undecided": []} for f, p in (("a", 0.01), ("b", 0.03), ("c", 0.04))]
    gate.holm(judged)
    assert [(v["verdict"], v["holm"]["threshold"]) for v in judged] == [("accept", 0.016667), ("undecided", 0.025), ("undecided", 0.05)]
    assert judged[1]["undecided"] == ["holm"]


def test_questions_for_power_decides_at_about_its_power():
    # differences with a spread: the number asked for passes an equal format about 80% of the time
    rng = random.Random(3)
    sample = [rng.choice((-1, 0, 0, 0, 0, 0, 0, 0, 1)) / 1 for _ in range(50)]
    n = gate.questions_for_power(sample, 0.05, 0.05)
    sd = (sum(x * x for x in sample) / 49) ** 0.5
    passes = sum(statistics.guarded_t([rng.choice((-1, 0, 0, 0, 0, 0, 0, 0, 1)) for _ in range(n)], 0.05, -1, 1)[1] >= -0.05
                 for _ in range(400)) / 400
    assert 500 < n < 700 and abs(sd - 0.47) < 0.1 and 0.72 < passes < 0.88


def test_failed_requests_and_a_mode_b_budget_that_tells_nothing_block_every_verdict():
    def cell(fmt, qid, ok, status="OK"):
        return {"encoding": "e", "size": "small", "ids": "original", "mode": "B", "format": fmt, "question_id": qid,
                "permutation": 0, "repeat": 0, "status": status, "insufficient": False, "path_exact": ok, "valid_path": ok,
                "answer_correct": ok}
    scored = [cell("json", f"q{i}", True) for i in range(300)] + [cell("dsl", f"q{i}", i > 0, "ERROR" if i == 0 else "OK") for i in range(300)]
    table = [{"encoding": "e", "size": "small", "ids": "original", "mode": "B", "format": f, "prompt_tokens": t, "n": 300,
              "errors": int(f == "dsl"), "overflow_by_server": 0, "path_exact": {"rate": 1.0}, "model_prompt_tokens": None,
              "path_exact_spread": None} for f, t in (("json", 900), ("dsl", 450))]
    (v,) = gate.verdicts(scored, table, "json", 0.05)
    assert v["verdict"] == "undecided" and v["blocked_by"][0].startswith("1 request(s) of dsl and json failed")
    note = {matrix.GroupKey("e", "small", "original", "B"): "e · small · original: at --budget 900 ... cannot tell the formats apart"}
    (v,) = gate.verdicts(scored, table, "json", 0.05, note)
    assert v["blocked_by"][0].endswith("cannot tell the formats apart")
    assert gate.recommendation([v], "json").startswith("no recommendation: e · small · original: at --budget 900")


@pytest.mark.parametrize("flags, message", [
    (["--baseline", "foo"], "error: unknown format 'foo' in --baseline; choose one of --formats: json, tsv"),
    (["--baseline", "dsl"], "error: --baseline dsl is not among --formats json,tsv; add it to --formats or choose one of them"),
    (["--tolerance", "2"], "error: --tolerance must be a share between 0 and 1 (exclusive), got 2.0; e.g. 0.05"),
    (["--tolerance", "nan"], "error: --tolerance is nan; give a finite number"),
    (["--tolerance", "0"], "error: --tolerance must be a share between 0 and 1 (exclusive), got 0.0; e.g. 0.05"),
    (["--abstention-tolerance", "1"], "error: --abstention-tolerance must be a share between 0 and 1 (exclusive), got 1.0; e.g. 0.15"),
])
def test_bad_gate_flags(tmp_path, capsys, flags, message):
    assert benchmark.main(["--model", "solver", "--formats", "json,tsv", "--out", str(tmp_path / "out"), *flags]) == 2
    assert capsys.readouterr().err.strip() == message
    assert not (tmp_path / "out").exists()


def test_gate_flags_without_a_model_run(tmp_path, capsys):
    assert benchmark.main(["--baseline", "json", "--tolerance", "0.1", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == ("error: --baseline and --tolerance judge a model's answers: use them with --model "
                                               "(a run or --score), not without one or with --export-batch")


# ---- pictures


def svg_marks(path):
    import xml.etree.ElementTree as ET
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    return [(panel.get("data-title"), mark.attrib) for panel in root.iter(f"{ns}g")
            for mark in panel if mark.get("class") == "mark"]


def test_a_one_panel_chart_has_nothing_past_its_canvas(tmp_path):
    import xml.etree.ElementTree as ET
    assert benchmark.main(["--model", "solver", "--out", str(tmp_path)]) == 0  # a first model run: one size, one mode
    root = ET.parse(tmp_path / "results.svg").getroot()
    width = float(root.get("width"))
    texts = [t for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("text-anchor") == "start"]
    legend = [t.text for t in texts if t.get("class") == "legend"]
    assert legend == ["json (baseline)", "jsonl", "tsv", "edge_list", "dsl"]  # every format named (tsv and edge_list were past 550 px)
    for t in texts:
        assert float(t.get("x")) + len(t.text) * 5.0 <= width, t.text  # 10-px sans-serif: about 5 px a character
    assert " ".join(t.text for t in texts if t.get("class") is None and t.get("font-size") == "10").endswith("whiskers: 95% interval")


def test_every_mark_of_the_svg_charts_equals_the_json_figures(tmp_path):
    argv = [*write(tmp_path, FAMILY, QUESTIONS), "--model", "solver", "--sizes", "small,medium", "--budget", "900", "--formats", "json,tsv,dsl"]
    assert benchmark.main(argv) == 0
    out = tmp_path / "out"
    table = json.loads((out / "results.json").read_text(encoding="utf-8"))["aggregates"]
    marks = svg_marks(out / "results.svg")
    assert len(marks) == len(table)
    for title, mark in marks:
        e = next(e for e in table if " · ".join((e["encoding"], e["size"], e["ids"], e["mode"])) == title and e["format"] == mark["data-format"])
        assert (float(mark["data-tokens"]), float(mark["data-rate"])) == (e["prompt_tokens"], e["path_exact"]["rate"])
        assert [float(mark["data-low"]), float(mark["data-high"])] == e["path_exact"]["ci95"]
        assert mark["data-pareto"] == str(bool(e.get("pareto")))
    summary = json.loads((out / "size_summary.json").read_text(encoding="utf-8"))
    for title, mark in svg_marks(out / "size_report.svg"):
        mode = title.rsplit(" ", 1)[-1]
        e = next(e for e in summary if (e["mode"], e["format"], e["size"]) == (mode, mark["data-format"], mark["data-size"]))
        key, metric = ("data-prompt-tokens", "prompt_tokens") if mode == "A" else ("data-answerable", "answerable")
        assert float(mark[key]) == e[metric]["mean"]
    assert "![Prompt tokens against path exact match](results.svg)" in (out / "results.md").read_text(encoding="utf-8")
    assert "](size_report.svg)" in (out / "size_report.md").read_text(encoding="utf-8")


# ---- distractors that blend in

FILM = {  # what a new user tries first: 17 nodes, 3 studios, 2 cities
    "nodes": [{"id": i, "name": n, "type": t} for i, n, t in (
        ("studio_lumen", "Lumen Studios", "studio"), ("studio_aurora", "Aurora Pictures", "studio"), ("studio_kestrel", "Kestrel Films", "studio"),
        ("city_lyon", "Lyon", "city"), ("city_oslo", "Oslo", "city"),
        ("film_tide", "The Long Tide", "film"), ("film_glass", "Glass Harbor", "film"), ("film_ember", "Ember Road", "film"),
        ("film_north", "North of Nowhere", "film"), ("film_quiet", "The Quiet Year", "film"),
        ("person_ines", "Ines Varga", "person"), ("person_tomas", "Tomas Brandt", "person"), ("person_mira", "Mira Okafor", "person"),
        ("person_leo", "Leo Santos", "person"), ("person_ana", "Ana Lindqvist", "person"), ("person_jon", "Jon Ruiz", "person"),
        ("person_eva", "Eva Kohl", "person"))],
    "edges": [{"source": s, "relation": r, "target": t} for s, r, t in (
        ("film_tide", "PRODUCED_BY", "studio_lumen"), ("film_glass", "PRODUCED_BY", "studio_aurora"), ("film_ember", "PRODUCED_BY", "studio_kestrel"),
        ("film_north", "PRODUCED_BY", "studio_lumen"), ("film_quiet", "PRODUCED_BY", "studio_aurora"),
        ("studio_lumen", "BASED_IN", "city_lyon"), ("studio_aurora", "BASED_IN", "city_oslo"), ("studio_kestrel", "BASED_IN", "city_oslo"),
        ("person_ines", "DIRECTED", "film_tide"), ("person_tomas", "DIRECTED", "film_glass"), ("person_mira", "DIRECTED", "film_ember"),
        ("person_leo", "ACTED_IN", "film_tide"), ("person_ana", "ACTED_IN", "film_north"), ("person_jon", "ACTED_IN", "film_quiet"),
        ("person_eva", "ACTED_IN", "film_glass"))],
}


def test_a_17_node_film_graph_runs_at_every_size_and_says_how_many_distractors_it_got(tmp_path, capsys):
    (tmp_path / "g.json").write_text(json.dumps(FILM), encoding="utf-8")
    argv = ["--graph", str(tmp_path / "g.json"), "--generate-questions", "12", "--prompt", "en", "--sizes", "small,medium,large",
            "--model", "solver", "--out", str(tmp_path / "out")]
    assert benchmark.main(argv) == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: large: \d+ distractor branches could be made, fewer than it takes to fill --context-window: the graph's "
                     r"names are too few", err)
    real = {n["name"] for n in FILM["nodes"]}
    for size in ("medium", "large"):
        graph = json.loads((tmp_path / "out" / f"graph.{size}.original.json").read_text(encoding="utf-8"))
        new = [n["name"] for n in graph["nodes"] if n["name"] not in real]
        assert not any(c.isdigit() for name in new for c in name)  # nothing numbered
        assert len(set(new)) == len(new)
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert {e["path_exact"]["rate"] for e in results["aggregates"]} == {1.0}


def id_shape(node_id: str, heads: collections.Counter) -> tuple:
    """What an id looks like without what it says: a prefix that several ids share kept, each other word as its
    case and digits ('person_ana' -> ('person', 'a'); 'Golden_Gate' -> ('A', 'A'); 'm.0abc1' -> ('a.9a9',))."""
    tokens = node_id.split("_")
    kept = [tokens.pop(0)] if len(tokens) > 1 and heads[tokens[0]] > 1 else []
    return (*kept, *(re.sub(r"[a-z]+", "a", re.sub(r"[A-Z][a-z]*", "A", re.sub(r"[0-9]+", "9", t))) for t in tokens))


PEOPLE = {  # ids made of a type prefix and the first name, as hand-made graphs often are (ids like 'person_ana')
    "nodes": [{"id": f"person_{first.lower()}", "name": f"{first} {last}", "type": "person"} for first, last in (
        ("Ana", "Ruiz"), ("Tom", "Baker"), ("Lee", "Chen"), ("Maya", "Patel"), ("Omar", "Haddad"), ("Sara", "Novak"),
        ("Ivan", "Petrov"), ("Nina", "Berg"))]
    + [{"id": f"studio_{n.split()[0].lower()}", "name": n, "type": "studio"} for n in ("Nova Pictures", "Apex Films", "Lumen Studios")]
    + [{"id": f"city_{n.lower()}", "name": n, "type": "city"} for n in ("Lisbon", "Oslo", "Austin", "Kyoto")],
    "edges": [{"source": f"person_{p}", "relation": r, "target": t} for p, r, t in (
        ("ana", "WORKS_AT", "studio_nova"), ("tom", "WORKS_AT", "studio_apex"), ("lee", "WORKS_AT", "studio_lumen"),
        ("maya", "WORKS_AT", "studio_nova"), ("omar", "WORKS_AT", "studio_apex"), ("sara", "KNOWS", "person_ana"),
        ("ivan", "KNOWS", "person_tom"), ("nina", "KNOWS", "person_lee"), ("ana", "BORN_IN", "city_lisbon"),
        ("tom", "BORN_IN", "city_austin"), ("lee", "BORN_IN", "city_kyoto"), ("maya", "BORN_IN", "city_oslo"))]
    + [{"source": s, "relation": "BASED_IN", "target": t} for s, t in (("studio_nova", "city_lisbon"), ("studio_apex", "city_austin"))],
}


@pytest.mark.parametrize("graph", [FILM, PEOPLE], ids=["film", "people"])
def test_distractor_ids_have_the_shape_of_the_real_ids_of_their_type(tmp_path, graph):
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    argv = ["--graph", str(tmp_path / "g.json"), "--generate-questions", "12", "--prompt", "en", "--sizes", "small,large",
            "--formats", "json", "--out", str(tmp_path / "out")]
    assert benchmark.main(argv) == 0
    real = {n["id"]: n for n in graph["nodes"]}
    heads = collections.Counter(i.split("_")[0] for i in real if "_" in i)
    shapes = collections.defaultdict(set)
    for n in graph["nodes"]:
        shapes[n["type"]].add(id_shape(n["id"], heads))
    large = json.loads((tmp_path / "out" / "graph.large.original.json").read_text(encoding="utf-8"))
    new = [n for n in large["nodes"] if n["id"] not in real]
    unseen = [n["id"] for n in new if id_shape(n["id"], heads) not in shapes[n["type"]]]
    assert len(new) > 100 and len(unseen) < 0.1 * len(new), unseen[:5]  # it was 100%: 'person_mia_ruiz' beside 'person_ana'
    people = [n for n in new if n["type"] == "person"]
    assert len(people) > 50 and len({n["name"].split()[0] for n in people}) > 30  # new first names, from the pool


def test_a_character_n_gram_classifier_cannot_tell_distractors_from_real_names(tmp_path):
    import realism
    graph = synth_kg.make_graph(1500, 120, random.Random(5))
    made = realism.run_sizes(graph, tmp_path)
    real = [n["name"] for n in graph["nodes"]]
    for size in ("medium", "large"):
        fake = [n["name"] for n in made[size]]
        assert len(fake) > 200 and realism.digit_share(fake) <= realism.digit_share(real)
        assert realism.top_first_word(made[size])[0] <= realism.top_first_word(graph["nodes"])[0] + 0.02
        assert realism.cross_validated_auc(real, fake)["naive_bayes"] <= 0.6


# ---- leakage: names are not markers


def test_a_real_entity_named_gold_runs_and_a_marker_id_stops_naming_the_graph_and_the_id(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    graph = {"nodes": [{"id": "m.0gold", "name": "Gold", "type": "entity"}, {"id": "m.0au", "name": "Au", "type": "entity"},
                       {"id": "gold_1", "name": "Paris", "type": "entity"}, {"id": "m.0fr", "name": "France", "type": "entity"}],
             "edges": [{"source": "m.0gold", "relation": "symbol", "target": "m.0au"},
                       {"source": "gold_1", "relation": "country", "target": "m.0fr"}]}
    questions = [{"id": "q1", "question": "What is the symbol of Gold?", "answer": "Au", "answer_id": "m.0au", "path": [0],
                  "insufficient": False, "query": {"start": "m.0gold", "hops": [{"relation": "symbol", "direction": "out"}]}}]
    argv = write(tmp_path, graph, questions)
    assert benchmark.main(argv) == 2
    assert capsys.readouterr().err == (
        "error: g.json: leakage check ids_are_neutral failed: node id 'gold_1' (named 'Paris') adds the word 'gold'; "
        "rename the id, or pass --leakage warn to measure anyway\n")
    graph["nodes"][2]["id"] = graph["edges"][1]["source"] = "m.0paris"
    assert benchmark.main(write(tmp_path, graph, questions)) == 0  # the entity Gold is a name, not a marker


@pytest.mark.parametrize("node, markers", [
    (Node("gold_1", "Paris", "city"), ["gold"]), (Node("Gold", "Gold", "element"), []),
    (Node("correctAnswer", "Kazan", "city"), ["answer", "correct"]), (Node("golden_gate", "Golden Gate", "bridge"), []),
])
def test_leaky_markers(node, markers):
    assert words.leaky_markers(node) == markers


def test_skipped_questions_are_named_on_stdout_and_in_results(tmp_path, capsys):
    leaky = dict(QUESTIONS[2], id="leaky", question="Is it the Golden Gate Bridge?")
    argv = [*write(tmp_path, FAMILY, [*QUESTIONS, leaky]), "--skip-invalid-questions", "--model", "solver"]
    assert benchmark.main(argv) == 0
    out = capsys.readouterr().out
    assert "skipped 1 question(s) (--skip-invalid-questions): leaky (" in out and "question_has_no_answer failed" in out
    report = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert "Skipped by --skip-invalid-questions: 1 question(s): leaky (" in report


def test_prompt_files_are_written_by_default_only_while_they_stay_small(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(benchmark, "PROMPT_FILES_MAX_BYTES", 20_000)
    assert benchmark.main(["--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().err == ("warning: prompt files are not written: they would take 0 MB, over the 0 MB written by "
                                       "default; pass --write-prompts to write them anyway\n")
    assert not list((tmp_path / "out").glob("prompt.*"))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["write_prompts"] == {"write": False, "bytes": 71154}  # the bytes the 30 prompt files take
    assert benchmark.main(["--out", str(tmp_path / "again"), "--write-prompts"]) == 0
    assert len(list((tmp_path / "again").glob("prompt.*"))) == 30


def test_an_english_graph_under_the_default_russian_prompt_gets_a_hint(tmp_path, capsys):
    assert benchmark.main(write(tmp_path, FAMILY, QUESTIONS)) == 0
    assert capsys.readouterr().err == ("warning: the graph's names hold no Cyrillic, but the prompt is the article's Russian one "
                                       "(the default, --prompt ru); for an English graph try --prompt en\n")
    assert benchmark.main([*write(tmp_path, FAMILY, QUESTIONS), "--prompt", "ru"]) == 0  # said on purpose: no hint
    assert capsys.readouterr().err == ""


def svg_label_boxes(path):
    """Per panel, the estimated boxes of the mark labels, as the chart code estimates them."""
    import xml.etree.ElementTree as ET
    ns = "{http://www.w3.org/2000/svg}"
    return {panel.get("data-title"): [charts.label_box(float(t.get("x")), float(t.get("y")), t.text)
                                      for t in panel.iter(f"{ns}text") if t.get("class") == "label"]
            for panel in ET.parse(path).getroot().iter(f"{ns}g")}


def test_chart_labels_never_overlap_ticks_are_round_and_formats_keep_their_style(tmp_path):
    argv = ["--out", str(tmp_path / "out"), "--model", "solver", "--sizes", "small,medium,large", "--context-window", "8000",
            "--budget", "1500", "--formats", ",".join(benchmark.FORMATS)]
    assert benchmark.main(argv) == 0
    for name in ("results.svg", "size_report.svg"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        for title, boxes in svg_label_boxes(tmp_path / "out" / name).items():
            assert len(boxes) >= 7, title  # close formats: the labels that would pile up
            assert not [(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1:] if charts._overlap(a, b) > 0], title
        for fmt in benchmark.FORMATS:
            marker, dash, colour = charts.format_style(fmt)
            assert f'stroke="{colour}"' in text
        assert "tiktoken" not in text and "(o200k_base)" in text
    assert 'class="hline"' in (tmp_path / "out" / "size_report.svg").read_text(encoding="utf-8")  # large reaches the window
    assert charts.nice_ticks(400, 60000, log=True) == [500, 1000, 2000, 5000, 10000, 20000, 50000]
    assert charts.nice_ticks(80000, 230000) == [100000, 150000, 200000]


# ---- pseudonymized entities (the memorization control of KG-LLM-Bench)


def test_pseudonyms_keep_every_real_name_out_of_the_prompts_and_the_solver_right(tmp_path, capsys):
    graph = synth_kg.make_graph(800, 80, random.Random(12))
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["--graph", str(tmp_path / "g.json"), "--generate-questions", "24", "--prompt", "en", "--pseudonymize",
            "--sizes", "small,medium", "--model", "solver", "--formats", "json,dsl", "--write-prompts", "--out", str(out)]
    assert benchmark.main(argv) == 0
    assert "may still name" not in capsys.readouterr().err  # generated questions quote names whole: nothing is left
    pseudonym = {}  # entity id -> {(pseudonym id, name)} over the sizes
    for size in ("small", "medium"):
        before = json.loads((out / f"graph.{size}.original.json").read_text(encoding="utf-8"))["nodes"]
        after = json.loads((out / f"graph.{size}.pseudonyms.json").read_text(encoding="utf-8"))["nodes"]
        for a, b in zip(before, after, strict=True):
            pseudonym.setdefault(a["id"], set()).add((b["id"], b["name"]))
            assert not {w.casefold() for w in a["name"].split()} & {w.casefold() for w in b["name"].split()}, (a, b)
    assert all(len(names) == 1 for names in pseudonym.values())  # one pseudonym per entity, whatever the size
    originals = {n["id"]: n["name"] for n in graph["nodes"]}
    kept = [len(originals[i].split()) == len(next(iter(names))[1].split()) for i, names in pseudonym.items() if i in originals]
    assert sum(kept) >= 0.9 * len(kept)  # the shape of the name: its number of words
    real = {n["name"] for n in graph["nodes"] if " " in n["name"]}
    prompts = list(out.glob("prompt.*.pseudonyms.*.txt"))
    assert prompts
    for path in prompts:
        text = path.read_text(encoding="utf-8")
        assert not [name for name in real if name in text], path.name  # no real multi-word entity name
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {e["ids"] for e in results["aggregates"]} == {"original", "pseudonyms"}  # side by side, the same questions
    assert {e["path_exact"]["rate"] for e in results["aggregates"] if e["mode"] == "A"} == {1.0}
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["pseudonyms"]["seed"] == contexts.DEFAULT_SEED
    assert set(manifest["config"]["pseudonyms"]["mapping_sha256"]) == {"small", "medium"}
    renamed = json.loads((out / "questions.small.pseudonyms.json").read_text(encoding="utf-8"))
    again = json.loads((out / "questions.small.original.json").read_text(encoding="utf-8"))
    assert [q["id"] for q in renamed] == [q["id"] for q in again] and [q.get("path") for q in renamed] == [q.get("path") for q in again]


@pytest.mark.parametrize("question, names, left", [
    ("Which company did Walter White found?", ["Walter White"], ["Walter White"]),  # not renamed: a leftover
    ("Which company did Tom Baker found?", ["Walter White"], []),  # 'Which' is no stem of 'White'
    ("Where was Thompson born?", ["Karen Thompson"], ["Karen Thompson"]),  # a word of a name, alone
    ("Where was Karen born?", ["Karen"], []),  # a one-word name left whole is the renaming's business, not this check's
    ("Где работает коллега Ирины?", ["Ирина"], ["Ирина"]),  # an inflected form
    ("Ирины коллега где работает?", ["Ирина"], []),  # never the text's first word
    ("Who works with the lead of this team?", ["Leadership Forum"], []),  # lower case: an ordinary word
])
def test_a_pseudonymized_question_is_said_to_still_name_only_a_real_leftover(question, names, left):
    nodes = tuple(Node(f"n{k}", name, "t") for k, name in enumerate(names))
    assert pseudonyms.still_named(question, nodes) == left


def test_a_name_shape_with_more_title_case_words_than_pools_is_no_crash():
    vocabulary = variants_names.Vocabulary(["Ann Bob Cat Dan Eve Fay Gus", "Bob Ann Dan Cat Fay Eve Hal"])
    assert vocabulary.draw(random.Random(1)).count(" ") == 6


def test_a_hand_made_graph_of_30_nodes_gets_its_medium_distractors_when_one_type_is_held_back_for_good(tmp_path, capsys):
    """The unix graph's organizations ('Bell Labs', 'Sun Microsystems') can take new second words from a pool, but each
    new first word would pass its share: such names are held back, and while nothing of the type is made they stay so.
    Held back twice with no new node of the type between counts as spent: the other types go on (13 of 253 branches
    were made, every anchor stalled on organizations; 83 before the pools)."""
    import realism
    (tmp_path / "unix.json").write_text(json.dumps(realism.unix_graph(random.Random(1))), encoding="utf-8")
    argv = ["--graph", str(tmp_path / "unix.json"), "--generate-questions", "40", "--sizes", "medium", "--formats", "json",
            "--no-write-prompts", "--skip-invalid-questions", "--prompt", "en", "--out", str(tmp_path / "out")]
    assert benchmark.main(argv) == 0
    medium = json.loads((tmp_path / "out" / "graph.medium.original.json").read_text(encoding="utf-8"))
    assert len(medium["nodes"]) - 30 >= 253 and "distractor branches it needs could be made" not in capsys.readouterr().err


# ---- natural wording of generated questions


@pytest.mark.parametrize("relation, words, kind", [
    ("__people__person__nationality", "nationality", "noun"),
    ("DEVELOPED_BY", "developed by", "state"),
    ("LEADS", "leads", "act"),
    ("ACTED_IN", "acted in", "act"),
    ("LOCATED_IN", "located in", "state"),
    ("place_of_birth", "place of birth", "noun"),
    ("http://dbpedia.org/ontology/birthPlace", "birth place", "noun"),
    ("ex:hasParent", "parent", "noun"),
    ("fictional_characters_created", "fictional characters created", "made"),
    ("part_of", "part of", "state"),
])
def test_relation_phrases_come_from_relation_names(relation, words, kind):
    assert wording.derive_phrase(relation) == wording.Phrase(words, kind)


def _phrases(mapping=None):
    return lambda relation: (mapping or {}).get(relation) or wording.derive_phrase(relation)


@pytest.mark.parametrize("start, hops, expected", [
    ("Matthew Lawrence", [("__people__person__nationality", "out")], "What is the nationality of Matthew Lawrence?"),
    ("Mr Mann", [("fictional_characters_created", "in")], "Who created Mr Mann?"),
    ("Irina", [("LEADS", "out")], "What does Irina lead?"),
    ("Orion", [("LEADS", "in")], "What leads Orion?"),
    ("Vector", [("DEVELOPED_BY", "in")], "What is developed by Vector?"),
    ("Graph RAG", [("DEVELOPED_BY", "out")], "What is Graph RAG developed by?"),
    ("Portugal", [("nationality", "in")], "Whose nationality is Portugal?"),
    ("Irina", [("LEADS", "out"), ("USES", "out"), ("DEVELOPED_BY", "out"), ("LOCATED_IN", "out")],
     "Irina leads something. That one uses something. That one is developed by something. What is that one located in?"),
    ("Eva Braun", [("spouse", "in"), ("nationality", "out")], "What is the nationality of the one whose spouse is Eva Braun?"),
    ("Stan Lee", [("fictional_characters_created", "out"), ("nationality", "out")],
     "What is the nationality of the fictional characters created by Stan Lee?"),
])
def test_natural_questions_read_as_a_user_asks(start, hops, expected):
    assert wording.natural_question(start, [benchmark.Hop(r, d) for r, d in hops], _phrases()) == expected


def test_natural_questions_with_conditions_asks_sets_and_a_phrase_map():
    since = benchmark.Hop("LEADS", "out", (benchmark.Condition("since", "<=", 2010),))
    assert wording.natural_question("Irina", [since], _phrases()) == "What does Irina lead (counting only links whose since is at most 2010)?"
    ask = benchmark.Ask("node", "founded")
    assert (wording.natural_question("Irina", [benchmark.Hop("LEADS", "out")], _phrases(), ask=ask, dated=lambda k: True)
            == "When was the one Irina leads founded?")
    two = [benchmark.Hop("LEADS", "out"), benchmark.Hop("USES", "out")]
    assert (wording.natural_question("Irina", two, _phrases(), ask=ask, dated=lambda k: True)
            == "Irina leads something. That one uses something. When was that one founded?")
    assert (wording.natural_question("Irina", [benchmark.Hop("LEADS", "out")], _phrases(), ask=ask)
            == 'What is the value of "founded" for the one Irina leads?')
    assert (wording.natural_question("Irina", [benchmark.Hop("LEADS", "out")], _phrases(), ask=benchmark.Ask("node", "population"))
            == "What is the population of the one Irina leads?")
    assert (wording.natural_question("Irina", [benchmark.Hop("LEADS", "out")], _phrases(), ask=benchmark.Ask("edge", "since"))
            == "What is the since of the leads link from Irina?")
    assert (wording.natural_question("Vector", [benchmark.Hop("DEVELOPED_BY", "in")], _phrases(), several=True)
            == "What is developed by Vector? (There may be several; name any one.)")
    pair = {"DEVELOPED_BY": wording.Phrase("developer", "pair", "product")}
    hops = [benchmark.Hop("DEVELOPED_BY", "in"), benchmark.Hop("DEVELOPED_BY", "out")]
    assert wording.natural_question("Vector", hops, _phrases(pair)) == "What is the developer of the product of Vector?"


def test_relation_phrases_file(tmp_path):
    path = tmp_path / "phrases.tsv"
    path.write_text("# relation, phrase, inverse\nDEVELOPED_BY\tdeveloper\tproduct\n\nLEADS\tleads\n", encoding="utf-8")
    assert wording.read_relation_phrases(path) == {"DEVELOPED_BY": wording.Phrase("developer", "pair", "product"),
                                                     "LEADS": wording.Phrase("leads", "act")}
    path.write_text("DEVELOPED_BY developer\n", encoding="utf-8")
    with pytest.raises(benchmark.BenchmarkError) as e:
        wording.read_relation_phrases(path)
    assert str(e.value) == (f"{benchmark.display(path)} line 1: write 'relation<TAB>phrase' or 'relation<TAB>phrase<TAB>inverse phrase', "
                            "tab-separated, each field not empty")


def test_natural_generated_questions_name_no_relation_and_are_proven(tmp_path):
    rng = random.Random(21)
    graph = synth_kg.make_graph(2500, 200, rng)
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    done = run_cli("--graph", str(tmp_path / "g.json"), "--generate-questions", "100", "--hops", "1-4", "--prompt", "en",
                   "--model", "solver", "--formats", "json", "--no-write-prompts", "--out", str(tmp_path / "a"))
    assert (done.returncode, done.stderr) == (0, "")  # the solver and every leakage check accept them
    questions = json.loads((tmp_path / "a" / "questions.generated.json").read_text(encoding="utf-8"))
    relations = {e["relation"] for e in graph["edges"]}
    assert len(questions) == 100
    for q in questions:
        assert not q["question"].startswith("Start at") and q["question"].endswith(("?", "name any one.)"))
        assert not [r for r in relations if "_" in r and r in q["question"]], q["question"]
    table = json.loads((tmp_path / "a" / "results.json").read_text(encoding="utf-8"))["aggregates"]
    assert {(e["answer_correct"]["rate"], e["path_exact"]["rate"], e["abstention_correct"]["rate"]) for e in table} == {(1.0, 1.0, 1.0)}


def test_pseudonym_ids_follow_a_freebase_style_id_scheme(tmp_path):
    """Ids that are names lower-cased with underscores for spaces and punctuation kept ('jean-paul_sartre'): every
    pseudonym's id is made from its name the same way, never random letters in the id's shape."""
    people = ["ferdinand georg of saxe-coburg-gotha", "eva braun", "mary-kate olsen", "jean-paul sartre", "o'neill smith",
              "anne of cleves", "louis xiv of france", "al-khwarizmi"]
    places = ["portugal", "france", "saxe-coburg", "spain", "austria-hungary"]
    nodes = [{"id": "_".join(n.split()), "name": n, "type": "entity"} for n in people + places]
    edges = [{"source": "_".join(p.split()), "relation": "nationality", "target": places[k % len(places)]} for k, p in enumerate(people)]
    (tmp_path / "g.json").write_text(json.dumps({"nodes": nodes, "edges": edges}), encoding="utf-8")
    done = run_cli("--graph", str(tmp_path / "g.json"), "--generate-questions", "6", "--prompt", "en", "--pseudonymize",
                   "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    renamed = json.loads((tmp_path / "out" / "graph.small.pseudonyms.json").read_text(encoding="utf-8"))["nodes"]
    assert len(renamed) == 13 and all(n["id"] == "_".join(n["name"].lower().split()) for n in renamed)
    assert all(a["id"] != b["id"] for a, b in zip(nodes, renamed)) and len({n["id"] for n in renamed}) == 13


def people_graph_by_hand() -> dict:
    """An untyped graph of 12 people and what a KG links them to: kinds that only the relations tell."""
    people = [f"{f} {s}" for f in ("ana", "ben", "cleo", "dan") for s in ("ruiz", "lee", "ito")]
    links = {"religion": ["catholicism", "islam", "buddhism"], "gender": ["male", "female"],
             "cause_of_death": ["meningitis", "drowning", "heart failure"], "place_of_birth": ["celle ligure", "saint petersburg", "den haag"]}
    nodes = [{"id": "_".join(n.split()), "name": n, "type": "entity"} for n in people + [x for names in links.values() for x in names]]
    edges = [{"source": "_".join(p.split()), "relation": relation, "target": "_".join(names[k % len(names)].split())}
             for k, p in enumerate(people) for relation, names in links.items()]
    edges += [{"source": "ana_ruiz", "relation": "spouse", "target": "ben_lee"}, {"source": "ben_lee", "relation": "spouse", "target": "ana_ruiz"}]
    return {"nodes": nodes, "edges": edges}


def test_role_groups_read_kinds_from_the_relations_of_an_untyped_graph():
    raw = people_graph_by_hand()
    graph = benchmark.Graph(tuple(benchmark.Node(n["id"], n["name"], n["type"]) for n in raw["nodes"]),
                            tuple(benchmark.Edge(e["source"], e["relation"], e["target"]) for e in raw["edges"]))
    groups = pseudonyms.role_groups(graph)
    by_group = {}
    for node, group in groups.items():
        by_group.setdefault(group, set()).add(node)
    people = {n["id"] for n in raw["nodes"][:12]}
    # a person is the source of religion, gender, cause_of_death, place_of_birth and spouse alike: one group, named after
    # its largest role; each kind of target is a group of its own
    assert sorted(by_group.values(), key=sorted) == sorted([people, {"catholicism", "islam", "buddhism"}, {"male", "female"},
                                                            {"meningitis", "drowning", "heart_failure"},
                                                            {"celle_ligure", "saint_petersburg", "den_haag"}], key=sorted)
    assert groups["ana_ruiz"] == "<cause_of_death" and groups["male"] == "gender>"
    assert pseudonyms.role_groups(graph) == groups  # no draw: the same every time


def test_head_words_are_the_last_words_of_a_groups_names_not_its_function_words():
    names = ["chartered accountant", "saint petersburg", "celle ligure", "den haag", "novelist", "gioia dei marsi", "mount of olives",
             "city of london"] + [f"x{k} of y" for k in range(60)]
    assert variants_names.head_words(names) == ["accountant", "haag", "ligure", "london", "marsi", "olives", "petersburg"]


def test_one_word_pseudonyms_are_other_names_of_their_group_never_a_blend_nor_another_kind(tmp_path):
    """Religions, genders and causes of death are in no word pool: each one-word name takes another one-word name of its own
    group (a derangement, so none keeps its own), with that name's id; names of several words keep their word count."""
    raw = people_graph_by_hand()
    (tmp_path / "g.json").write_text(json.dumps(raw), encoding="utf-8")
    done = run_cli("--graph", str(tmp_path / "g.json"), "--generate-questions", "6", "--prompt", "en", "--pseudonymize",
                   "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    renamed = json.loads((tmp_path / "out" / "graph.small.pseudonyms.json").read_text(encoding="utf-8"))["nodes"]
    by_old = {a["id"]: b for a, b in zip(raw["nodes"], renamed)}
    for kind in (["catholicism", "islam", "buddhism"], ["male", "female"], ["meningitis", "drowning"]):
        assert sorted(by_old[x]["name"] for x in kind) == sorted(kind) and all(by_old[x]["name"] != x for x in kind)
        assert all(by_old[x]["id"] == by_old[x]["name"] for x in kind)
    assert all(len(by_old[n["id"]]["name"].split()) == len(n["name"].split()) for n in raw["nodes"])
    assert len({n["id"] for n in renamed}) == len(renamed) and len({n["name"] for n in renamed}) == len(renamed)


def test_one_word_distractors_of_an_untyped_graph_are_real_words_of_their_kind_never_blends(tmp_path):
    """Distractor names of one word, where the word model used to blend ('mozambodia', 'cathodism'): a word of the role's
    kind (KIND_POOLS) or a head word of its names of several words, in their case."""
    people = [f"{f} {s}" for f in ("ana", "ben", "cleo", "dan", "eva", "finn") for s in ("ruiz", "lee", "ito", "berg")]
    countries = ["portugal", "france", "spain", "norway", "chile", "kenya", "united arab emirates", "new zealand"]
    causes = ["meningitis", "drowning", "heart failure", "lung cancer", "kidney failure", "stroke"]
    nodes = [{"id": "_".join(n.split()), "name": n, "type": "entity"} for n in people + countries + causes]
    edges = [e for k, p in enumerate(people) for e in (
        {"source": "_".join(p.split()), "relation": "nationality", "target": "_".join(countries[k % 8].split())},
        {"source": "_".join(p.split()), "relation": "cause_of_death", "target": "_".join(causes[k % 6].split())})]
    (tmp_path / "g.json").write_text(json.dumps({"nodes": nodes, "edges": edges}), encoding="utf-8")
    done = run_cli("--graph", str(tmp_path / "g.json"), "--generate-questions", "6", "--prompt", "en", "--sizes", "medium",
                   "--skip-invalid-questions", "--no-write-prompts", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    made = [n["name"] for n in json.loads((tmp_path / "out" / "graph.medium.original.json").read_text(encoding="utf-8"))["nodes"]
            if n["id"] not in {m["id"] for m in nodes}]
    one_word = [n for n in made if " " not in n]
    allowed = set(variants_names.KIND_POOLS["country"]) | {"failure", "cancer", "zealand", "emirates"}
    assert one_word and set(one_word) <= allowed and not set(one_word) & {n for n in countries + causes}


def test_one_word_pseudonyms_of_a_known_kind_stay_of_that_kind(tmp_path):
    """A small untyped role whose names are countries (or professions) is renamed with other countries (professions) in
    the same case: never a surname, never a made-up blend."""
    people = [f"{f} {s}" for f in ("ana", "ben", "cleo", "dan") for s in ("ruiz", "lee", "ito")]
    countries, jobs = ["portugal", "france", "spain", "norway"], ["novelist", "actor", "physicist"]
    nodes = [{"id": "_".join(n.split()), "name": n, "type": "entity"} for n in people + countries + jobs]
    edges = [e for k, p in enumerate(people) for e in (
        {"source": "_".join(p.split()), "relation": "nationality", "target": countries[k % 4]},
        {"source": "_".join(p.split()), "relation": "profession", "target": jobs[k % 3]})]
    (tmp_path / "g.json").write_text(json.dumps({"nodes": nodes, "edges": edges}), encoding="utf-8")
    done = run_cli("--graph", str(tmp_path / "g.json"), "--generate-questions", "6", "--prompt", "en", "--pseudonymize",
                   "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    renamed = json.loads((tmp_path / "out" / "graph.small.pseudonyms.json").read_text(encoding="utf-8"))["nodes"]
    by_old = dict(zip((n["id"] for n in nodes), renamed))
    assert all(by_old[c]["name"] in variants_names.KIND_POOLS["country"] and by_old[c]["name"] not in countries for c in countries)
    assert all(by_old[j]["name"] in variants_names.KIND_POOLS["profession"] and by_old[j]["name"] not in jobs for j in jobs)
