"""A synthetic knowledge graph that looks like converted KGQA data: untyped, English, snake_case ids.

    $ python bench/synth_kg.py OUT_DIR --edges 15000 --relations 400 --questions 100 --seed 1
    $ python bench/synth_kg.py OUT_DIR --people 800 --questions 100     # Freebase-like, real-world names (Faker)

writes OUT_DIR/graph.json and OUT_DIR/questions.json. Entities carry no type (every node has type "entity"), ids are the
snake_case of their names (with _2, _3... for namesakes), relations are snake_case too. With --props, nodes and edges
carry properties as a GraphRAG store keeps them: a description naming the entity (every node), a year (founded, born,
released), edge years (since, until), a source document and a confidence (a number), and a verified flag. Questions
follow 1 to 4 hops forwards or backwards from a random start; each keeps every complete walk as a gold path and every
end node as an answer (answer sets, several paths, and walks that come back over an edge, like parents -> children ->
parents, all occur), and about a fifth are near-miss abstentions. A walk whose text would name its own answer (a start
node that is also an end node) is drawn again: every question passes the tool's leakage check (leakage.wording_leaks),
so questions.json runs as it is. Nothing here is random without the seed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from graphrag_format_benchmark.leakage import wording_leaks  # noqa: E402

FIRST = (
    "james mary robert patricia john jennifer michael linda david elizabeth william barbara richard susan joseph "
    "jessica thomas sarah charles karen daniel nancy matthew lisa anthony betty mark helen donald sandra steven "
    "ashley paul kimberly andrew emily joshua donna kenneth michelle kevin carol brian amanda george melissa edward "
    "deborah"
).split()
LAST = (
    "smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez wilson "
    "anderson taylor moore jackson martin lee thompson white harris clark lewis robinson walker young allen king "
    "wright scott torres nguyen hill flores green adams nelson baker hall rivera campbell mitchell carter roberts"
).split()
PLACE = (
    "spring river lake oak maple cedar pine north south east west new port fort mount green silver golden rock "
    "stone bridge harbor bay field wood hill vale glen ridge brook falls haven"
).split()
PLACE_END = "ton ville field ford burg port dale wood land mouth view side".split()
COUNTRY = (
    "freedonia sylvania latveria genovia ruritania elbonia wakanda zubrowka grand_fenwick narnia florin "
    "borduria syldavia kislova qurac markovia"
).split()
ORG_WORD = (
    "global united general national royal pacific atlantic central first modern allied standard northern "
    "southern eastern western"
).split()
ORG_KIND = (
    "industries motors records pictures university college bank airlines press studios foundation institute "
    "society company"
).split()
WORK_A = "the a".split()
WORK_B = "last long silent hidden broken golden secret lost dark bright wild quiet endless final red blue".split()
WORK_C = "river road night summer winter garden empire kingdom letter promise journey harbor mirror window".split()
VERBS = (
    "born died buried educated employed founded headquartered located married owned produced directed written "
    "composed published released signed played coached elected appointed awarded nominated based"
).split()
PREPS = "in at by for from with under near".split()
NOUNS = (
    "place city country organization company university team album film book label studio award position office "
    "region district party league river mountain building"
).split()

KINDS = ("person", "place", "country", "organization", "work")


def name_of(kind: str, rng: random.Random) -> str:
    if kind == "person":
        return f"{rng.choice(FIRST).title()} {rng.choice(LAST).title()}"
    if kind == "place":
        return (
            (rng.choice(PLACE) + rng.choice(PLACE_END)).title()
            if rng.random() < 0.6
            else f"{rng.choice(PLACE).title()} {rng.choice(PLACE).title()}"
        )
    if kind == "country":
        return rng.choice(COUNTRY).replace("_", " ").title()
    if kind == "organization":
        return f"{rng.choice(ORG_WORD).title()} {rng.choice(ORG_KIND).title()}"
    return f"{rng.choice(WORK_A).title()} {rng.choice(WORK_B).title()} {rng.choice(WORK_C).title()}"


def unique_id(base: str, ids: set[str]) -> str:
    """base, or base_2, base_3... for namesakes: the first not in ids, which it joins."""
    node_id, k = base, 1
    while node_id in ids:
        k += 1
        node_id = f"{base}_{k}"
    ids.add(node_id)
    return node_id


def snake(name: str) -> str:
    return "_".join("".join(c if c.isalnum() else " " for c in name.lower()).split())


PLAIN_RELATIONS = [  # --plain-relations: relations as a curated English KG names them, with their domain and range
    ("nationality", "person", "country"),
    ("place_of_birth", "person", "place"),
    ("place_of_death", "person", "place"),
    ("employer", "person", "organization"),
    ("educated_at", "person", "organization"),
    ("member_of", "person", "organization"),
    ("located_in", "place", "country"),
    ("headquartered_in", "organization", "place"),
    ("founded_by", "organization", "person"),
    ("directed_by", "work", "person"),
    ("written_by", "work", "person"),
    ("published_by", "work", "organization"),
    ("set_in", "work", "place"),
    ("capital", "country", "place"),
    ("notable_work", "person", "work"),
    ("based_on", "work", "work"),
    ("parent_organization", "organization", "organization"),
    ("twinned_with", "place", "place"),
]


def make_graph(
    n_edges: int,
    n_relations: int,
    rng: random.Random,
    typed: bool = False,
    opaque: bool = False,
    props: random.Random | None = None,
    plain: bool = False,
) -> dict:
    """typed: each node's type is its kind (person, place...) instead of "entity"; opaque: Freebase-style ids
    (m.0 and five characters) instead of snake_case names; props: properties drawn with this generator."""
    n_nodes = max(n_edges // 3, 50)
    shares = {"person": 0.45, "place": 0.2, "country": 0.03, "organization": 0.14, "work": 0.18}
    nodes, by_kind, ids = [], {k: [] for k in KINDS}, set()
    for kind, share in shares.items():
        for _ in range(max(int(n_nodes * share), 3)):
            name = name_of(kind, rng)
            base = snake(name)
            node_id, k = base, 1
            while node_id in ids:
                k += 1
                node_id = f"{base}_{k}"
            while opaque and (node_id in ids or not node_id.startswith("m.")):
                node_id = "m.0" + "".join(rng.choice("0123456789abcdefghjklmnpqrstvwxyz_") for _ in range(5))
            ids.add(node_id)
            nodes.append({"id": node_id, "name": name, "type": kind if typed else "entity"})
            by_kind[kind].append(node_id)
    relations, seen = ([(name, domain, range_) for name, domain, range_ in PLAIN_RELATIONS] if plain else []), set()
    while len(relations) < n_relations and not plain:
        name = (
            f"{rng.choice(VERBS)}_{rng.choice(PREPS)}_{rng.choice(NOUNS)}"
            if rng.random() < 0.7
            else f"{rng.choice(NOUNS)}_{rng.choice(NOUNS)}"
        )
        if name not in seen:
            seen.add(name)
            relations.append((name, rng.choice(KINDS), rng.choice(KINDS)))
    relations += [("parents", "person", "person"), ("children", "person", "person"), ("spouse", "person", "person")]
    edges, present = [], set()
    weights = [1.0 / (i + 1) ** 0.8 for i in range(len(relations))]  # a few relations are common, most are rare
    while len(edges) < n_edges:
        relation, domain, range_ = rng.choices(relations, weights)[0]
        source = by_kind[domain][int(len(by_kind[domain]) * rng.random() ** 2)]  # skewed degrees: hubs exist
        target = rng.choice(by_kind[range_])
        if source == target or (source, relation, target) in present:
            continue
        present.add((source, relation, target))
        edges.append({"source": source, "relation": relation, "target": target})
        if relation == "parents":  # the inverse edge, as Freebase keeps both: walks come back over them
            edges.append({"source": target, "relation": "children", "target": source})
            present.add((target, "children", source))
    graph = {"nodes": nodes, "edges": edges}
    if props is not None:
        add_props(graph, {node_id: kind for kind, members in by_kind.items() for node_id in members}, props)
    return graph


# --people: a Freebase-like KG of people, as converted KGQA data holds them: lowercase names, snake_case ids that keep
# hyphens, one-word nodes for countries, professions, causes of death, religions, languages and genders. The names are
# real-world ones, from Faker's locale lists (real given names, surnames and towns of ten locales, its 245 countries,
# its job titles and languages), so that a name the tool makes must pass for a real one among thousands of distinct
# words it did not choose; never from the tool's own word pools.
CAUSES = (
    (
        "meningitis pneumonia tuberculosis influenza cholera typhus malaria smallpox leukemia stroke sepsis "
        "diphtheria dysentery syphilis tetanus measles asthma cirrhosis emphysema peritonitis heart_failure "
        "heart_attack lung_cancer breast_cancer stomach_cancer pancreatic_cancer colorectal_cancer prostate_cancer "
        "drowning suicide assassination homicide car_accident plane_crash alzheimer's_disease parkinson's_disease "
        "kidney_failure liver_cancer brain_tumor aneurysm"
    )
    .replace("_", " ")
    .split(" ")
)
RELIGIONS = (
    (
        "catholicism protestantism judaism islam buddhism hinduism lutheranism anglicanism atheism "
        "eastern_orthodoxy presbyterianism methodism calvinism quakerism sikhism"
    )
    .replace("_", " ")
    .split(" ")
)
PEOPLE_LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "it_IT", "es_ES", "pl_PL", "nl_NL", "sv_SE", "pt_PT")
TOWN_LOCALES = ("de_DE", "it_IT", "pl_PL", "nl_NL", "pt_PT", "da_DK", "fi_FI", "cs_CZ", "ro_RO", "sv_SE")


def people_graph(n_people: int, rng: random.Random) -> dict:
    """An untyped KG of n_people persons and the places, countries, professions, causes of death, religions,
    languages and genders they link to (about 4.5 edges a person). Needs Faker (bench only)."""
    import importlib

    from faker import Faker

    def lower(names) -> list[str]:
        return sorted({" ".join(str(n).lower().split()) for n in names if str(n).strip()})

    given, family = [], []
    for loc in PEOPLE_LOCALES:
        person = importlib.import_module(f"faker.providers.person.{loc}").Provider
        given += lower(getattr(person, "first_names", ()))
        family += lower(getattr(person, "last_names", ()))
    given, family = sorted(set(given)), sorted(set(family))
    towns = sorted(
        {
            t
            for loc in TOWN_LOCALES
            for t in lower(importlib.import_module(f"faker.providers.address.{loc}").Provider.cities)
        }
    )
    fake = Faker("en_US")
    fake.seed_instance(rng.randint(0, 2**31))
    countries = rng.sample(lower(importlib.import_module("faker.providers.address.en").Provider.countries), 70)
    professions = rng.sample(
        lower(j.split(",")[0] for j in importlib.import_module("faker.providers.job.en_US").Provider.jobs), 90
    )
    languages = lower(fake.language_name() for _ in range(120))
    nodes, ids = [], set()

    def add(name: str) -> str:
        node_id = unique_id("_".join(name.replace("'", "").split()), ids)
        nodes.append({"id": node_id, "name": name, "type": "entity"})
        return node_id

    def person_name() -> str:
        shape = rng.random()
        if shape < 0.06:
            return rng.choice(given)  # a mononym: 'ahaz', 'plato'
        if shape < 0.22:
            return f"{rng.choice(given)} {rng.choice(given)} {rng.choice(family)}"
        if shape < 0.27:
            return f"{rng.choice(given)} of {rng.choice(towns)}"
        return f"{rng.choice(given)} {rng.choice(family)}"

    by = {
        "country": [add(c) for c in countries],
        "profession": [add(p) for p in professions],
        "cause": [add(c) for c in CAUSES],
        "religion": [add(r) for r in RELIGIONS],
        "language": [add(x) for x in languages[:40]],
        "gender": [add("male"), add("female")],
        "town": [add(t) for t in rng.sample(towns, max(n_people // 4, 20))],
    }
    by["person"] = [add(person_name()) for _ in range(n_people)]
    edges = [
        {"source": c, "relation": "contains", "target": t} for t in by["town"] for c in [rng.choice(by["country"])]
    ]
    for p in by["person"]:
        for relation, kind, share in (
            ("gender", "gender", 0.9),
            ("nationality", "country", 0.8),
            ("place_of_birth", "town", 0.6),
            ("profession", "profession", 0.9),
            ("place_of_death", "town", 0.3),
            ("cause_of_death", "cause", 0.2),
            ("religion", "religion", 0.2),
            ("languages", "language", 0.3),
        ):
            if rng.random() < share:
                edges.append(
                    {"source": p, "relation": relation, "target": by[kind][int(len(by[kind]) * rng.random() ** 2)]}
                )
        if rng.random() < 0.25:
            edges.append({"source": p, "relation": "profession", "target": rng.choice(by["profession"])})
        if rng.random() < 0.2:
            other = rng.choice(by["person"])
            if other != p:
                edges += [
                    {"source": p, "relation": "spouse", "target": other},
                    {"source": other, "relation": "spouse", "target": p},
                ]
        if rng.random() < 0.2:
            child = rng.choice(by["person"])
            if child != p:
                edges += [
                    {"source": child, "relation": "parents", "target": p},
                    {"source": p, "relation": "children", "target": child},
                ]
    seen, unique = set(), []
    for e in edges:
        if (e["source"], e["relation"], e["target"]) not in seen:
            seen.add((e["source"], e["relation"], e["target"]))
            unique.append(e)
    linked = {x for e in unique for x in (e["source"], e["target"])}
    return {"nodes": [n for n in nodes if n["id"] in linked], "edges": unique}


# --standin: the shapes real KGs have that Faker's "Given Family" people lack, from Faker's real-world lists (given
# names, surnames, towns, countries, counties, English words) and the public lists below, never the tool's own pools:
# royal and noble names with an ordinal and "of" ("maria ii of portugal"), epithets ("peter the great"), particles
# ("charles de gaulle", "ludwig van beethoven"), titles ("sir john smith"); places with "upon" and "-on-"; film and book
# titles; organisations; catalogue-numbered objects ("(1234) 2001 AB1", "ngc 1234"); events and works with years.
ORDINALS = "i ii iii iv v vi vii viii ix x xi xii xiii xiv xv xvi".split()
EPITHETS = "great bold fair wise pious good younger elder conqueror lionheart unready confessor navigator".split()
PARTICLES = "de von van da di du der la del".split()
TITLES = "sir saint lord lady dame prince princess king queen duke count".split()
RIVERS = "tyne thames avon trent severn tees wear ouse hull mersey dee tweed wye eden derwent sea".split()
EVENT_NAMES = (
    "fifa world cup|summer olympics|winter olympics|monaco grand prix|open championship|world series|"
    "cannes film festival|general election|earthquake|tour de france|eurovision song contest"
).split("|")
CATALOGUE = ("ngc", "hd", "hip", "messier", "ic", "psr")


def standin_name(kind: str, rng: random.Random, words: dict) -> str:
    """One name of a kind (person, place, work, organization, object, event) in a shape real KGs have."""
    pick = lambda key: rng.choice(words[key])  # noqa: E731
    shape = rng.random()
    if kind == "person":
        if shape < 0.45:
            return f"{pick('given')} {pick('family')}"
        if shape < 0.55:
            return f"{pick('given')} {pick('given')} {pick('family')}"
        if shape < 0.65:
            return f"{pick('given')} {rng.choice(ORDINALS)} of {pick('country')}"
        if shape < 0.72:
            return f"{pick('given')} of {pick(rng.choice(('country', 'town')))}"
        if shape < 0.77:
            return f"{pick('given')} {rng.choice(ORDINALS)}"
        if shape < 0.81:
            return f"{pick('given')} the {rng.choice(EPITHETS)}"
        if shape < 0.9:
            return f"{pick('given')} {rng.choice(PARTICLES)} {pick('family')}"
        if shape < 0.96:
            return f"{rng.choice(TITLES)} {pick('given')} {pick('family')}"
        return pick("given")
    if kind == "place":
        if shape < 0.55:
            return pick("town")
        if shape < 0.65:
            return f"{pick('town')} upon {rng.choice(RIVERS)}"
        if shape < 0.75:
            return f"{pick('town')}-on-{rng.choice(RIVERS)}"
        if shape < 0.85:
            return f"{pick('county')}"
        return f"{rng.choice(('north', 'south', 'east', 'west', 'new', 'upper', 'lower'))} {pick('town')}"
    if kind == "work":
        if shape < 0.35:
            return f"the {pick('word')} {pick('word')}"
        if shape < 0.55:
            return f"{pick('word')} of the {pick('word')}"
        if shape < 0.7:
            return f"{pick('word')} {rng.choice(('ii', '2', '3', 'part ii'))}"
        if shape < 0.85:
            return f"{pick('word')}: {pick('word')} {pick('word')}"
        return pick("word")
    if kind == "organization":
        if shape < 0.3:
            return f"university of {pick('town')}"
        if shape < 0.55:
            return (
                f"{pick('family')} {rng.choice(('& sons', 'and co.', 'ltd', 'inc.', 'group', 'records', 'pictures'))}"
            )
        if shape < 0.75:
            return (
                f"{pick('town')} "
                f"{rng.choice(('f.c.', 'city council', 'cathedral', 'university', 'symphony orchestra'))}"
            )
        return f"royal {pick('word')} society"
    if kind == "object":
        if shape < 0.5:
            letters = "".join(rng.choice("ABCDEFGHJKLMNOPQRSTUVWXYZ") for _ in range(2))
            return f"({rng.randint(1000, 99999)}) {rng.randint(1900, 2020)} {letters}{rng.randint(1, 99)}"
        return f"{rng.choice(CATALOGUE)} {rng.randint(1, 9999)}"
    year = rng.randint(1900, 2024)
    return f"{year} {rng.choice(EVENT_NAMES)}" if shape < 0.8 else f"{rng.choice(EVENT_NAMES)} {year}"


# (source kind, Freebase relation, target kind, share of the sources that have it): many relations, most of them on a
# few nodes each, as in a question's neighbourhood of a real KG: its roles are small groups
STANDIN_RELATIONS = (
    ("person", "people.person.nationality", "country", 0.6),
    ("person", "people.person.place_of_birth", "place", 0.5),
    ("person", "people.deceased_person.place_of_death", "place", 0.2),
    ("person", "people.person.profession", "profession", 0.6),
    ("person", "people.deceased_person.cause_of_death", "cause", 0.15),
    ("person", "people.person.religion", "religion", 0.15),
    ("person", "people.person.languages", "language", 0.1),
    ("person", "people.person.spouse_s", "person", 0.15),
    ("person", "people.person.parents", "person", 0.15),
    ("person", "people.person.sibling_s", "person", 0.05),
    ("person", "influence.influence_node.influenced_by", "person", 0.05),
    ("person", "royalty.monarch.kingdom", "country", 0.06),
    ("person", "royalty.noble_person.titles", "country", 0.03),
    ("person", "people.person.education", "organization", 0.1),
    ("person", "people.person.employment_history", "organization", 0.08),
    ("person", "book.author.works_written", "work", 0.08),
    ("person", "film.actor.film", "work", 0.1),
    ("person", "music.artist.origin", "place", 0.05),
    ("person", "medicine.notable_person_with_medical_condition.condition", "cause", 0.05),
    ("person", "olympics.olympic_athlete.medals_won", "event", 0.04),
    ("person", "government.politician.party", "organization", 0.05),
    ("work", "film.film.directed_by", "person", 0.5),
    ("work", "film.film.written_by", "person", 0.2),
    ("work", "film.film.initial_release_date", "year", 0.5),
    ("work", "film.film.featured_film_locations", "place", 0.1),
    ("work", "film.film.language", "language", 0.2),
    ("work", "book.written_work.subjects", "cause", 0.05),
    ("work", "media_common.adapted_work.adaptations", "work", 0.05),
    ("organization", "organization.organization.headquarters", "place", 0.6),
    ("organization", "organization.organization.founders", "person", 0.3),
    ("organization", "organization.organization.date_founded", "year", 0.3),
    ("organization", "sports.sports_team.location", "place", 0.1),
    ("object", "astronomy.astronomical_discovery.discoverer", "person", 0.8),
    ("object", "astronomy.astronomical_discovery.discovery_date", "year", 0.4),
    ("object", "astronomy.celestial_object.category", "profession", 0.05),
    ("event", "time.event.locations", "place", 0.7),
    ("event", "time.event.start_date", "year", 0.4),
    ("event", "sports.sports_championship_event.champion", "organization", 0.2),
    ("place", "location.location.people_born_here", "person", 0.05),
    ("place", "travel.travel_destination.tourist_attractions", "organization", 0.05),
    ("country", "location.country.official_language", "language", 0.4),
    ("country", "location.country.capital", "place", 0.5),
    ("country", "location.country.form_of_government", "profession", 0.05),
    ("cause", "medicine.disease.risk_factors", "cause", 0.3),
    ("cause", "medicine.disease.notable_people_with_this_condition", "person", 0.2),
)


def title_case(name: str) -> str:
    """'maria ii of portugal' -> 'Maria II of Portugal', 'the lord of the rings' -> 'The Lord of the Rings'."""
    words = name.split(" ")
    return " ".join(
        w.upper() if w in ORDINALS and k else w if k and w in FUNCTION_WORDS else w[:1].upper() + w[1:]
        for k, w in enumerate(words)
    )


FUNCTION_WORDS = set("of the upon de von van da di du der la del and a".split())


def standin_graph(n_people: int, rng: random.Random, title: bool = False) -> dict:
    """An untyped, Freebase-like KG of about 2.2 * n_people nodes in the shapes real KGs have (standin_name), lowercase
    but for catalogue designations, ids the names lower-cased with '_' for spaces (punctuation kept: '(1234)_2001_AB1'
    as Freebase-derived KGs write them). Needs Faker (bench only)."""
    import importlib

    def lower(names) -> list[str]:
        return sorted({" ".join(str(n).lower().split()) for n in names if str(n).strip() and " " not in str(n).strip()})

    words: dict[str, list[str]] = {"given": [], "family": []}
    for loc in PEOPLE_LOCALES:
        person = importlib.import_module(f"faker.providers.person.{loc}").Provider
        words["given"] += lower(getattr(person, "first_names", ()))
        words["family"] += lower(getattr(person, "last_names", ()))
    words = {k: sorted(set(v)) for k, v in words.items()}
    words["town"] = sorted(
        {
            t
            for loc in TOWN_LOCALES
            for t in lower(importlib.import_module(f"faker.providers.address.{loc}").Provider.cities)
        }
    )
    words["country"] = lower(importlib.import_module("faker.providers.address.en").Provider.countries)
    words["county"] = sorted(
        {
            " ".join(c.lower().split())
            for c in importlib.import_module("faker.providers.address.en_GB").Provider.counties
        }
    )
    words["word"] = [
        w for w in lower(importlib.import_module("faker.providers.lorem.en_US").Provider.word_list) if len(w) > 3
    ]
    nodes, ids, names = [], set(), set()

    def add(kind: str, name: str | None = None) -> str:
        for _ in range(20):
            name = name or standin_name(kind, rng, words)
            if name not in names:
                break
            name = None
        names.add(name)
        name = title_case(name) if title and kind != "object" else name
        node_id = unique_id(name.replace(" ", "_") if kind == "object" else "_".join(name.lower().split()), ids)
        nodes.append({"id": node_id, "name": name, "type": "entity"})
        return node_id

    by = {
        kind: [add(kind) for _ in range(max(int(n_people * share), 3))]
        for kind, share in (
            ("person", 1.0),
            ("place", 0.4),
            ("work", 0.35),
            ("organization", 0.2),
            ("object", 0.15),
            ("event", 0.1),
        )
    }
    by["country"] = [add("country", c) for c in rng.sample(words["country"], 40)]
    by["profession"] = [
        add("profession", p)
        for p in rng.sample(
            lower(j.split(",")[0] for j in importlib.import_module("faker.providers.job.en_US").Provider.jobs), 40
        )
    ]
    by["cause"] = [add("cause", c) for c in CAUSES[:25]]
    by["year"] = [add("year", str(y)) for y in rng.sample(range(1800, 2024), 60)]
    by["religion"] = [add("religion", r) for r in RELIGIONS]
    by["language"] = [
        add("language", x)
        for x in rng.sample(lower(importlib.import_module("faker.providers.person.en").Provider.language_names), 30)
    ]
    edges = [
        {"source": p, "relation": "location.location.containedby", "target": rng.choice(by["country"])}
        for p in by["place"]
    ]
    for kind, relation, target, share in STANDIN_RELATIONS:
        for s in by[kind]:
            if rng.random() < share:
                t = by[target][int(len(by[target]) * rng.random() ** 2)]
                if t != s:
                    edges.append({"source": s, "relation": relation, "target": t})
    seen, unique = set(), []
    for e in edges:
        if (e["source"], e["relation"], e["target"]) not in seen:
            seen.add((e["source"], e["relation"], e["target"]))
            unique.append(e)
    linked = {x for e in unique for x in (e["source"], e["target"])}
    return {"nodes": [n for n in nodes if n["id"] in linked], "edges": unique}


YEAR_KEY = {"person": "born", "place": "founded", "country": "founded", "organization": "founded", "work": "released"}
DESCRIBE = {
    "person": "{name} is a person",
    "place": "{name} is a place",
    "country": "{name} is a country",
    "organization": "{name} is an organization",
    "work": "{name} is a work",
}
DETAIL = (
    "known for its history|mentioned in several sources|of regional importance|often cited|with a long record".split(
        "|"
    )
)


def add_props(graph: dict, kinds: dict[str, str], rng: random.Random) -> None:
    """Properties as a GraphRAG store keeps them, on every node and on most edges."""
    for node in graph["nodes"]:
        kind = kinds[node["id"]]
        node["description"] = DESCRIBE[kind].format(name=node["name"]) + " " + rng.choice(DETAIL) + "."
        if rng.random() < 0.8:
            node[YEAR_KEY[kind]] = rng.randint(1800, 2020)
    for edge in graph["edges"]:
        if rng.random() < 0.7:
            start = rng.randint(1950, 2020)
            edge["since"] = start
            if rng.random() < 0.4:
                edge["until"] = start + rng.randint(1, 15)
        if rng.random() < 0.5:
            edge["source_doc"] = f"doc_{rng.randint(1, 500):04d}"
            edge["confidence"] = round(rng.uniform(0.5, 1.0), 2)
        if rng.random() < 0.2:
            edge["verified"] = rng.random() < 0.7


def walks(edges: list[dict], index: dict, start: str, hops: list[tuple[str, str]]) -> list[tuple[tuple[int, ...], str]]:
    stage = [((), start)]
    for relation, direction in hops:
        stage = [
            (p + (i,), edges[i]["target"] if direction == "out" else edges[i]["source"])
            for p, node in stage
            for i in index.get((node, relation, direction), ())
        ]
        if len(stage) > 50:
            return []
    return stage


def make_questions(graph: dict, n: int, rng: random.Random) -> list[dict]:
    edges, names = graph["edges"], {v["id"]: v["name"] for v in graph["nodes"]}
    index: dict = {}
    for i, e in enumerate(edges):
        index.setdefault((e["source"], e["relation"], "out"), []).append(i)
        index.setdefault((e["target"], e["relation"], "in"), []).append(i)
    relations = sorted({e["relation"] for e in edges})
    moves: dict = {}  # node -> [(relation, direction)] it can follow
    for node, relation, direction in index:
        moves.setdefault(node, []).append((relation, direction))
    questions, seen, tries = [], set(), 0
    while len(questions) < n and tries < 100 * n:
        tries += 1
        hops_n = 1 + len(questions) % 4
        abstain = len(questions) % 5 == 4
        start = rng.choice(edges)["source"]
        hops, node = [], start
        for _ in range(hops_n - (1 if abstain else 0)):
            options = moves.get(node, [])
            if not options:
                break
            relation, direction = rng.choice(options)
            hops.append((relation, direction))
            node = rng.choice(
                [
                    edges[i]["target"] if direction == "out" else edges[i]["source"]
                    for i in index[(node, relation, direction)]
                ]
            )
        if len(hops) != hops_n - (1 if abstain else 0):
            continue
        if abstain:
            reached = {end for _, end in walks(edges, index, start, hops)}
            last = rng.choice(relations)
            direction = rng.choice(("out", "in"))
            if not reached or any((v, last, direction) in index for v in reached):
                continue
            hops.append((last, direction))
        found = walks(edges, index, start, hops)
        if (not abstain and not found) or (start, tuple(hops)) in seen:
            continue
        seen.add((start, tuple(hops)))
        text = (
            f'Start at "{names[start]}". Follow '
            + ", then ".join(f"{r}" + (" backwards" if d == "in" else "") for r, d in hops)
            + ". Which node do you reach?"
        )
        q = {
            "id": f"q{len(questions) + 1}",
            "question": text,
            "insufficient": abstain,
            "query": {"start": start, "hops": [{"relation": r, "direction": d} for r, d in hops]},
        }
        if abstain:
            q.update(answer="INSUFFICIENT_DATA", path=[], answer_id=None)
        else:
            ends = sorted({end for _, end in found})
            q.update(answers=sorted({names[e] for e in ends}), answer_ids=ends, paths=[list(p) for p, _ in found])
            if wording_leaks(text, q["answers"], ends, [p for p, _ in found]):
                continue  # a walk back to its start: its text names its answer, which the tool's preflight refuses
        questions.append(q)
    return questions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--edges", type=int, default=5000)
    parser.add_argument(
        "--relations",
        type=int,
        default=400,
        help="made-up relations; parents, children and spouse come on top, so --relations 200 makes 202 (the "
        "made-up ones that draw no edge are not counted): the graphs the figures were measured on stay as they were",
    )
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--typed", action="store_true", help="node types are kinds (person, place...) instead of 'entity'"
    )
    parser.add_argument("--opaque-ids", action="store_true", help="Freebase-style ids (m.0xxxxx) instead of snake_case")
    parser.add_argument(
        "--plain-relations",
        action="store_true",
        help="18 relations named as a curated English KG names them (nationality, place_of_birth...) instead of "
        "--relations made-up ones",
    )
    parser.add_argument(
        "--props", action="store_true", help="properties on nodes and edges (description, years, source, confidence)"
    )
    parser.add_argument(
        "--people",
        type=int,
        metavar="N",
        help="instead: a Freebase-like KG of N people with real-world lowercase names (needs Faker), no properties",
    )
    parser.add_argument(
        "--standin",
        type=int,
        metavar="N",
        help="instead: an untyped KG of N people and the works, places, organisations, catalogue objects and events "
        "they link to, in the name shapes real KGs have (royals with 'of', titles, 'upon', catalogue numbers, years; "
        "needs Faker)",
    )
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    graph = (
        standin_graph(args.standin, rng)
        if args.standin
        else people_graph(args.people, rng)
        if args.people
        else make_graph(
            args.edges,
            args.relations,
            rng,
            typed=args.typed,
            opaque=args.opaque_ids,
            props=random.Random(args.seed + 1) if args.props else None,
            plain=args.plain_relations,
        )
    )
    questions = make_questions(graph, args.questions, rng)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "graph.json").write_text(json.dumps(graph, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (args.out / "questions.json").write_text(
        json.dumps(questions, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    print(
        f"{len(graph['nodes'])} nodes, {len(graph['edges'])} edges, {len({e['relation'] for e in graph['edges']})} "
        "relations, "
        f"{len(questions)} questions -> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
