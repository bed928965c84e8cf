"""wording.py: how a generated question reads, naturally from relation phrases or as the templated walk."""

import json

import pytest
from kg_graphs import _phrases

import benchmark
from graphrag_format_benchmark import wording


def test_question_text_quotes_a_name_with_quotes_in_other_quotes():
    hops = [benchmark.Hop("DIRECTED", "in")]
    assert (
        wording.question_text("en", 'The "Best" Film', hops)
        == "Start at 'The \"Best\" Film'. Follow DIRECTED backwards. Which node do you reach?"
    )
    assert wording.question_text("ru", "Кафе «Уют»", hops, several=True) == (
        'Начни с "Кафе «Уют»". Пройди по DIRECTED в обратную сторону. Какие узлы получатся? Назови любой из них.'
    )


@pytest.mark.parametrize(
    "relation, words, kind",
    [
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
    ],
)
def test_relation_phrases_come_from_relation_names(relation, words, kind):
    assert wording.derive_phrase(relation) == wording.Phrase(words, kind)


@pytest.mark.parametrize(
    "start, hops, expected",
    [
        (
            "Matthew Lawrence",
            [("__people__person__nationality", "out")],
            "What is the nationality of Matthew Lawrence?",
        ),
        ("Mr Mann", [("fictional_characters_created", "in")], "Who created Mr Mann?"),
        ("Irina", [("LEADS", "out")], "What does Irina lead?"),
        ("Orion", [("LEADS", "in")], "What leads Orion?"),
        ("Vector", [("DEVELOPED_BY", "in")], "What is developed by Vector?"),
        ("Graph RAG", [("DEVELOPED_BY", "out")], "What is Graph RAG developed by?"),
        ("Portugal", [("nationality", "in")], "Whose nationality is Portugal?"),
        (
            "Irina",
            [("LEADS", "out"), ("USES", "out"), ("DEVELOPED_BY", "out"), ("LOCATED_IN", "out")],
            "Irina leads something. That one uses something. That one is developed by something. What is that one "
            "located in?",
        ),
        (
            "Eva Braun",
            [("spouse", "in"), ("nationality", "out")],
            "What is the nationality of the one whose spouse is Eva Braun?",
        ),
        (
            "Stan Lee",
            [("fictional_characters_created", "out"), ("nationality", "out")],
            "What is the nationality of the fictional characters created by Stan Lee?",
        ),
    ],
)
def test_natural_questions_read_as_a_user_asks(start, hops, expected):
    assert wording.natural_question(start, [benchmark.Hop(r, d) for r, d in hops], _phrases()) == expected


def test_natural_questions_with_conditions_asks_sets_and_a_phrase_map():
    since = benchmark.Hop("LEADS", "out", (benchmark.Condition("since", "<=", 2010),))
    assert (
        wording.natural_question("Irina", [since], _phrases())
        == "What does Irina lead (counting only links whose since is at most 2010)?"
    )
    ask = benchmark.Ask("node", "founded")
    assert (
        wording.natural_question("Irina", [benchmark.Hop("LEADS", "out")], _phrases(), ask=ask, dated=lambda k: True)
        == "When was the one Irina leads founded?"
    )
    two = [benchmark.Hop("LEADS", "out"), benchmark.Hop("USES", "out")]
    assert (
        wording.natural_question("Irina", two, _phrases(), ask=ask, dated=lambda k: True)
        == "Irina leads something. That one uses something. When was that one founded?"
    )
    assert (
        wording.natural_question("Irina", [benchmark.Hop("LEADS", "out")], _phrases(), ask=ask)
        == 'What is the value of "founded" for the one Irina leads?'
    )
    assert (
        wording.natural_question(
            "Irina", [benchmark.Hop("LEADS", "out")], _phrases(), ask=benchmark.Ask("node", "population")
        )
        == "What is the population of the one Irina leads?"
    )
    assert (
        wording.natural_question(
            "Irina", [benchmark.Hop("LEADS", "out")], _phrases(), ask=benchmark.Ask("edge", "since")
        )
        == "What is the since of the leads link from Irina?"
    )
    assert (
        wording.natural_question("Vector", [benchmark.Hop("DEVELOPED_BY", "in")], _phrases(), several=True)
        == "What is developed by Vector? (There may be several; name any one.)"
    )
    pair = {"DEVELOPED_BY": wording.Phrase("developer", "pair", "product")}
    hops = [benchmark.Hop("DEVELOPED_BY", "in"), benchmark.Hop("DEVELOPED_BY", "out")]
    assert wording.natural_question("Vector", hops, _phrases(pair)) == "What is the developer of the product of Vector?"


def test_relation_phrases_file(tmp_path):
    path = tmp_path / "phrases.tsv"
    path.write_text("# relation, phrase, inverse\nDEVELOPED_BY\tdeveloper\tproduct\n\nLEADS\tleads\n", encoding="utf-8")
    assert wording.read_relation_phrases(path) == {
        "DEVELOPED_BY": wording.Phrase("developer", "pair", "product"),
        "LEADS": wording.Phrase("leads", "act"),
    }
    path.write_text("DEVELOPED_BY developer\n", encoding="utf-8")
    with pytest.raises(benchmark.BenchmarkError) as e:
        wording.read_relation_phrases(path)
    assert str(e.value) == (
        f"{benchmark.display(path)} line 1: write 'relation<TAB>phrase' or 'relation<TAB>phrase<TAB>inverse phrase', "
        "tab-separated, each field not empty"
    )


RU_LINES = """# the article's relations, as a person asks about them
LEADS\tЧем руководит {x}?\tПод чьим руководством находится {x}?
USES\tЧто использует {x}?\tКем используется {x}?
DEVELOPED_BY\tКем разработано {x}?\tЧто разработал {x}?
LOCATED_IN\tГде находится {x}?\tДля чего {x} — место нахождения?
MEMBER_OF\tКуда входит {x}?\tКто входит в состав {x}?
RUNS\tЧто ведёт {x}?\tКем ведётся {x}?
"""


def _ru(tmp_path):
    (tmp_path / "ru.tsv").write_text(RU_LINES, encoding="utf-8")
    phrases = wording.read_relation_phrases(tmp_path / "ru.tsv")
    return lambda relation: phrases[relation]


@pytest.mark.parametrize(
    "hops, ask, several, expected",
    [
        ([("LEADS", "out")], None, False, "Чем руководит «Ирина»?"),
        (
            [("LEADS", "in")],
            None,
            True,
            "Под чьим руководством находится «Ирина»? (Их может быть несколько; назови любой.)",
        ),
        (
            [("LEADS", "out"), ("USES", "out"), ("DEVELOPED_BY", "out"), ("LOCATED_IN", "out")],
            None,
            False,
            "Где находится тот, кем разработано то, что использует то, чем руководит «Ирина»?",
        ),
        (
            [("MEMBER_OF", "out"), ("LOCATED_IN", "in")],
            None,
            False,
            "Для чего то место, куда входит «Ирина» — место нахождения?",
        ),
        (
            [("LEADS", "out")],
            benchmark.Ask("node", "founded"),
            False,
            "То, чем руководит «Ирина»: каково значение «founded»?",
        ),
        (
            [("LEADS", "out")],
            benchmark.Ask("edge", "since"),
            False,
            "Чем руководит «Ирина»? Каково значение «since» у этой связи?",
        ),
    ],
)
def test_russian_questions_read_as_a_person_asks_from_the_users_questions(tmp_path, hops, ask, several, expected):
    walk = [benchmark.Hop(r, d) for r, d in hops]
    assert wording.russian_question("Ирина", walk, _ru(tmp_path), several, ask) == expected


def test_a_russian_condition_is_said_in_russian(tmp_path):
    hop = benchmark.Hop("LEADS", "out", (benchmark.Condition("since", "<=", 2010),))
    assert (
        wording.russian_question("Ирина", [hop], _ru(tmp_path))
        == "Чем руководит «Ирина» (учитывая только связи, где «since» не больше 2010)?"
    )


@pytest.mark.parametrize(
    "line, message",
    [
        ("LEADS\tЧем руководит {x}?", "a Russian line is 'relation<TAB>question forwards<TAB>question backwards'"),
        (
            "LEADS\tЧем руководит {x}\tКто {x}?",
            "'Чем руководит {x}' must hold {x} once, end with '?' and open with a question word",
        ),
        ("LEADS\tИрина руководит {x}?\tКто {x}?", "'Ирина руководит {x}?' must hold {x} once"),
    ],
)
def test_a_russian_line_that_cannot_be_nested_is_refused_naming_the_line(tmp_path, line, message):
    (tmp_path / "ru.tsv").write_text("# x\n" + line + "\n", encoding="utf-8")
    with pytest.raises(benchmark.BenchmarkError) as error:
        wording.read_relation_phrases(tmp_path / "ru.tsv")
    assert str(error.value).startswith(f"{benchmark.display(tmp_path / 'ru.tsv')} line 2: ") and message in str(
        error.value
    )


def test_generated_russian_questions_name_no_relation_and_the_solver_answers_them_all(tmp_path, capsys):
    (tmp_path / "ru.tsv").write_text(RU_LINES, encoding="utf-8")
    out = tmp_path / "out"
    assert (
        benchmark.main(
            [
                "--generate-questions",
                "24",
                "--relation-phrases",
                str(tmp_path / "ru.tsv"),
                "--model",
                "solver",
                "--formats",
                "json",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "templated" not in capsys.readouterr().err
    questions = json.loads((out / "questions.generated.json").read_text(encoding="utf-8"))
    assert len(questions) == 24
    relations = {"LEADS", "USES", "DEVELOPED_BY", "LOCATED_IN", "MEMBER_OF", "RUNS"}
    for q in questions:
        assert not [
            r for r in relations if r in q["question"] or r.lower().replace("_", " ") in q["question"].lower()
        ], q["question"]
        assert (
            "«" in q["question"]
            and q["question"].rstrip(".)").endswith(("?", "любой"))
            and "Начни" not in q["question"]
        )
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {e["path_exact"]["rate"] for e in results["aggregates"]} == {1.0}


def test_without_russian_phrases_the_run_says_once_that_its_questions_are_templated(tmp_path, capsys):
    assert benchmark.main(["--generate-questions", "6", "--formats", "json", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert err.count("templated") == 1
    assert (
        "warning: --prompt ru: generated questions that walk any of 6 relation(s) without a Russian line in "
        "--relation-phrases "
        "(DEVELOPED_BY, LEADS, LOCATED_IN, ...) are templated ('Начни с «X». Пройди по R...'): Russian inflects names, "
        "so no "
        "wording can be derived from a relation's name; give each one a line 'relation<TAB>Чем руководит {x}?<TAB>Под "
        "чьим "
        "руководством находится {x}?'"
    ) in err


RU_MORE = (
    RU_LINES
    + """HEADS\tКто руководит {x:твор}?\tЧем руководит {x}?
SUPPORTS\tДля чего {x} — опора?\tЧто опирается на {x:вин}?
RUNS_PROJECT\tКакой проект возглавляет {x}?\tКто возглавляет {x}?
CITY\tВ каком городе находится {x}?\tЧто находится в {x:пред}?
STAFF\tСколько сотрудников у {x}?\tУ кого {x} сотрудников?
"""
)


@pytest.mark.parametrize(
    "hops, expected",
    [
        (
            [("LEADS", "out"), ("HEADS", "out")],
            "Кто руководит тем, чем руководит «Ирина»?",
        ),  # {x:твор}: the verb's instrumental
        ([("LEADS", "out"), ("SUPPORTS", "out")], "Для чего то, чем руководит «Ирина» — опора?"),
        (
            [("USES", "in"), ("SUPPORTS", "in")],
            "Что опирается на того, кем используется «Ирина»?",
        ),  # {x:вин}, тот animate
        (
            [("RUNS_PROJECT", "out"), ("USES", "out")],
            "Что использует тот, который возглавляет «Ирина»?",
        ),  # какой: its noun left out
        ([("CITY", "out"), ("LEADS", "in")], "Под чьим руководством находится тот, в котором находится «Ирина»?"),
        ([("LEADS", "out"), ("STAFF", "out")], "Сколько сотрудников у того, чем руководит «Ирина»?"),  # у: the genitive
        ([("LEADS", "out"), ("CITY", "in")], "Что находится в том, чем руководит «Ирина»?"),
    ],
)
def test_a_nested_russian_question_takes_the_case_its_slot_governs_and_any_question_word(tmp_path, hops, expected):
    """'Кто руководит то место, где ...' kept the demonstrative in the nominative where the verb governs another case;
    {x:CASE} or a preposition of one case says it. 'Какой проект ...' and 'Сколько ...' open questions too."""
    (tmp_path / "ru.tsv").write_text(RU_MORE, encoding="utf-8")
    phrases = wording.read_relation_phrases(tmp_path / "ru.tsv")
    assert wording.russian_question("Ирина", [benchmark.Hop(r, d) for r, d in hops], phrases.__getitem__) == expected


def test_a_count_question_is_never_nested_and_an_unknown_case_is_refused(tmp_path):
    (tmp_path / "ru.tsv").write_text(RU_MORE, encoding="utf-8")
    phrases = tuple(wording.read_relation_phrases(tmp_path / "ru.tsv").items())
    graph = benchmark.Graph((benchmark.Node("a", "Ирина", "person"),), ())
    say = wording.Wording(graph, "ru", "natural", phrases)
    assert say("Ирина", [benchmark.Hop("STAFF", "out"), benchmark.Hop("LEADS", "out")]).startswith("Начни с «Ирина».")
    assert (
        say("Ирина", [benchmark.Hop("LEADS", "out"), benchmark.Hop("STAFF", "out")])
        == "Сколько сотрудников у того, чем руководит «Ирина»?"
    )
    (tmp_path / "bad.tsv").write_text("LEADS\tКто руководит {x:abl}?\tЧем руководит {x}?\n", encoding="utf-8")
    with pytest.raises(
        benchmark.BenchmarkError,
        match=r"marks \{x:abl\}, no case this tool knows; write \{x:CASE\} with one of nom, gen",
    ):
        wording.read_relation_phrases(tmp_path / "bad.tsv")


def test_a_line_of_nouns_under_the_russian_prompt_is_said_to_be_nouns_with_the_question_form(tmp_path, capsys):
    (tmp_path / "ru.tsv").write_text(
        RU_LINES.replace(
            "LEADS\tЧем руководит {x}?\tПод чьим руководством находится {x}?",
            "LEADS\tруководитель\tрезультат руководства",
        ),
        encoding="utf-8",
    )
    phrases = tuple(wording.read_relation_phrases(tmp_path / "ru.tsv").items())
    graph = benchmark.Graph(
        (benchmark.Node("a", "Ирина", "person"), benchmark.Node("b", "Орион", "project")),
        (benchmark.Edge("a", "LEADS", "b"),),
    )
    wording.Wording(graph, "ru", "natural", phrases)
    assert capsys.readouterr().err == (
        "warning: --prompt ru: 1 relation(s) of --relation-phrases have a line of nouns, not of questions (LEADS: "
        "'руководитель' / "
        "'результат руководства'): Russian questions are read from two questions with {x}, 'relation<TAB>Чем руководит "
        "{x}?<TAB>Под "
        "чьим руководством находится {x}?'\n"
    )
