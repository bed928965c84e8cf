"""wording.py: how a generated question reads, naturally from relation phrases or as the templated walk."""


import pytest
from kg_graphs import (
    _phrases,
)

import benchmark
from graphrag_format_benchmark import (
    wording,
)


def test_question_text_quotes_a_name_with_quotes_in_other_quotes():
    hops = [benchmark.Hop("DIRECTED", "in")]
    assert wording.question_text("en", 'The "Best" Film', hops) == "Start at 'The \"Best\" Film'. Follow DIRECTED backwards. Which node do you reach?"
    assert wording.question_text("ru", "Кафе «Уют»", hops, several=True) == (
        'Начни с "Кафе «Уют»". Пройди по DIRECTED в обратную сторону. Какие узлы получатся? Назови любой из них.')


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
