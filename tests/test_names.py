"""variants/names.py and distractors.py: new names and ids in the style of the input's, which a classifier cannot tell
from the real ones."""

import collections
import json
import random
import re
import sys

import pytest

import benchmark
from graphrag_format_benchmark import matrix, solver
from graphrag_format_benchmark.variants import distractors, names as variants_names

from conftest import ROOT, grown, run_cli

sys.path.insert(0, str(ROOT / "bench"))
from kg_graphs import FILM, PEOPLE, english_typed_graph, id_shape, surface, untyped_graph

import synth_kg  # noqa: E402


@pytest.mark.parametrize("make", [english_typed_graph, untyped_graph, "article"])
def test_distractors_match_the_input_surface_within_ten_points(make, canonical):
    if make == "article":
        graph, questions = canonical.graph, canonical.questions
    else:
        problems = benchmark.Problems()
        data, qdata = make()
        graph = benchmark.validate_graph(data, "g", problems)
        questions = benchmark.validate_questions(
            qdata, "q", benchmark.GraphScope(len(graph.edges), {n.id for n in graph.nodes}, {}), problems
        )
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


@pytest.mark.parametrize("graph", [FILM, PEOPLE], ids=["film", "people"])
def test_distractor_ids_have_the_shape_of_the_real_ids_of_their_type(tmp_path, graph):
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    argv = [
        "--graph",
        str(tmp_path / "g.json"),
        "--generate-questions",
        "12",
        "--prompt",
        "en",
        "--sizes",
        "small,large",
        "--formats",
        "json",
        "--out",
        str(tmp_path / "out"),
    ]
    assert benchmark.main(argv) == 0
    real = {n["id"]: n for n in graph["nodes"]}
    heads = collections.Counter(i.split("_")[0] for i in real if "_" in i)
    shapes = collections.defaultdict(set)
    for n in graph["nodes"]:
        shapes[n["type"]].add(id_shape(n["id"], heads))
    large = json.loads((tmp_path / "out" / "graph.large.original.json").read_text(encoding="utf-8"))
    new = [n for n in large["nodes"] if n["id"] not in real]
    unseen = [n["id"] for n in new if id_shape(n["id"], heads) not in shapes[n["type"]]]
    # it was 100%: 'person_mia_ruiz' beside 'person_ana'
    assert len(new) > 100 and len(unseen) < 0.1 * len(new), unseen[:5]
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


def test_a_name_shape_with_more_title_case_words_than_pools_is_no_crash():
    vocabulary = variants_names.Vocabulary(["Ann Bob Cat Dan Eve Fay Gus", "Bob Ann Dan Cat Fay Eve Hal"])
    assert vocabulary.draw(random.Random(1)).count(" ") == 6


def test_head_words_are_the_last_words_of_a_groups_names_not_its_function_words():
    names = [
        "chartered accountant",
        "saint petersburg",
        "celle ligure",
        "den haag",
        "novelist",
        "gioia dei marsi",
        "mount of olives",
        "city of london",
    ] + [f"x{k} of y" for k in range(60)]
    assert variants_names.head_words(names) == [
        "accountant",
        "haag",
        "ligure",
        "london",
        "marsi",
        "olives",
        "petersburg",
    ]


def test_one_word_distractors_of_an_untyped_graph_are_real_words_of_their_kind_never_blends(tmp_path):
    """Distractor names of one word, where the word model used to blend ('mozambodia', 'cathodism'): a word of the
    role's kind (KIND_POOLS) or a head word of its names of several words, in their case."""
    people = [f"{f} {s}" for f in ("ana", "ben", "cleo", "dan", "eva", "finn") for s in ("ruiz", "lee", "ito", "berg")]
    countries = ["portugal", "france", "spain", "norway", "chile", "kenya", "united arab emirates", "new zealand"]
    causes = ["meningitis", "drowning", "heart failure", "lung cancer", "kidney failure", "stroke"]
    nodes = [{"id": "_".join(n.split()), "name": n, "type": "entity"} for n in people + countries + causes]
    edges = [
        e
        for k, p in enumerate(people)
        for e in (
            {"source": "_".join(p.split()), "relation": "nationality", "target": "_".join(countries[k % 8].split())},
            {"source": "_".join(p.split()), "relation": "cause_of_death", "target": "_".join(causes[k % 6].split())},
        )
    ]
    (tmp_path / "g.json").write_text(json.dumps({"nodes": nodes, "edges": edges}), encoding="utf-8")
    done = run_cli(
        "--graph",
        str(tmp_path / "g.json"),
        "--generate-questions",
        "6",
        "--prompt",
        "en",
        "--sizes",
        "medium",
        "--skip-invalid-questions",
        "--no-write-prompts",
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    made = [
        n["name"]
        for n in json.loads((tmp_path / "out" / "graph.medium.original.json").read_text(encoding="utf-8"))["nodes"]
        if n["id"] not in {m["id"] for m in nodes}
    ]
    one_word = [n for n in made if " " not in n]
    allowed = set(variants_names.KIND_POOLS["country"]) | {"failure", "cancer", "zealand", "emirates"}
    assert one_word and set(one_word) <= allowed and not set(one_word) & {n for n in countries + causes}


@pytest.mark.parametrize(
    "name, shape",
    [
        ("Maria II of Portugal", [("title", ""), ("ordinal", "upper"), ("function", "of"), ("title", "")]),
        ("maria of portugal", [("lower", ""), ("function", "of"), ("lower", "")]),
        ("Carol King", [("title", ""), ("title", "")]),  # a surname, not a title
        ("King Carol", [("honorific", "King"), ("title", "")]),
        ("Sir Lord Byron", [("honorific", "Sir"), ("honorific", "Lord"), ("title", "")]),
        ("Mix Master", [("title", ""), ("title", "")]),  # a first word is never an ordinal
        ("1998 FIFA World Cup", [("year", "9999"), ("upper", ""), ("title", ""), ("title", "")]),
        ("(1234) 2001 AB1", [("year", "(9999)"), ("year", "9999"), ("code", "A9")]),  # four digits read as a year
        ("(12345) 2001 AB1", [("code", "(9)"), ("year", "9999"), ("code", "A9")]),
        ("Louis the 14th", [("title", ""), ("function", "the"), ("ordinal", "lower")]),
    ],
)
def test_a_names_shape_names_the_class_of_each_word(name, shape):
    assert list(variants_names.name_shape(name)) == shape


@pytest.mark.parametrize(
    "name",
    [
        "Maria II of Portugal",
        "(1234) 2001 AB1",
        "Sir John Smith",
        "stoke-on-trent",
        "Анна Белова",
        "The Lord of the Rings",
        "1998 FIFA World Cup",
        "NGC 1234",
    ],
)
def test_a_redrawn_name_keeps_the_class_of_every_word_and_its_function_words(name):
    rng = random.Random(3)
    for _ in range(20):
        made = variants_names.redrawn(name, rng)
        assert [k[0] for k in variants_names.name_shape(made)] == [k[0] for k in variants_names.name_shape(name)], made
        assert variants_names.kept_words(made) == variants_names.kept_words(name)
        assert made != name and len(made.split(" ")) == len(name.split(" "))
        assert variants_names.script(made) == variants_names.script(name)


def test_a_redrawn_catalogue_designation_is_one_in_the_same_style():
    for k in range(50):
        made = variants_names.redrawn("(12345) 2001 AB1", random.Random(k))
        number, year, code = re.fullmatch(r"\(([1-9]\d{4})\) (\d{4}) ([A-HJ-NP-Z]{2}[1-9])", made).groups()
        assert abs(int(year) - 2001) <= 60 and number != "12345" and code != "AB1"
    assert variants_names.spaced("(5821) 1997 QK3") == "(5821)_1997_QK3"


def test_held_finds_an_input_name_at_any_word_start_in_one_lookup_per_start():
    held = variants_names.Held(["edward martin", "new york city"])
    assert held.held_in("edward martinez")  # as the regex it replaces: the name, then anything
    assert held.held_in("old edward martin")
    assert held.held_in("(new york city)")
    assert not held.held_in("edward marti")
    assert not held.held_in("new york")
