"""A synthetic knowledge graph that looks like converted KGQA data: untyped, English, snake_case ids.

    $ python bench/synth_kg.py OUT_DIR --edges 15000 --relations 400 --questions 100 --seed 1
    $ python bench/synth_kg.py OUT_DIR --people 800 --questions 100     # Freebase-like, real-world names (Faker)

writes OUT_DIR/graph.json and OUT_DIR/questions.json. Entities carry no type (every node has type
"entity"), ids are the snake_case of their names (with _2, _3... for namesakes), relations are
snake_case too. With --props, nodes and edges carry properties as a GraphRAG store keeps them: a
description naming the entity (every node), a year (founded, born, released), edge years (since,
until), a source document and a confidence (a number), and a verified flag. Questions follow 1 to 4 hops forwards or backwards from a random start; each keeps
every complete walk as a gold path and every end node as an answer (answer sets, several paths, and
walks that come back over an edge, like parents -> children -> parents, all occur), and about a fifth
are near-miss abstentions. Some question texts name their own answer (a start node that is also an
end node): those are the ones a leakage check must drop. Nothing here is random without the seed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

FIRST = "james mary robert patricia john jennifer michael linda david elizabeth william barbara richard susan joseph jessica thomas sarah charles karen daniel nancy matthew lisa anthony betty mark helen donald sandra steven ashley paul kimberly andrew emily joshua donna kenneth michelle kevin carol brian amanda george melissa edward deborah".split()
LAST = "smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez wilson anderson taylor moore jackson martin lee thompson white harris clark lewis robinson walker young allen king wright scott torres nguyen hill flores green adams nelson baker hall rivera campbell mitchell carter roberts".split()
PLACE = "spring river lake oak maple cedar pine north south east west new port fort mount green silver golden rock stone bridge harbor bay field wood hill vale glen ridge brook falls haven".split()
PLACE_END = "ton ville field ford burg port dale wood land mouth view side".split()
COUNTRY = "freedonia sylvania latveria genovia ruritania elbonia wakanda zubrowka grand_fenwick narnia florin borduria syldavia kislova qurac markovia".split()
ORG_WORD = "global united general national royal pacific atlantic central first modern allied standard northern southern eastern western".split()
ORG_KIND = "industries motors records pictures university college bank airlines press studios foundation institute society company".split()
WORK_A = "the a".split()
WORK_B = "last long silent hidden broken golden secret lost dark bright wild quiet endless final red blue".split()
WORK_C = "river road night summer winter garden empire kingdom letter promise journey harbor mirror window".split()
VERBS = "born died buried educated employed founded headquartered located married owned produced directed written composed published released signed played coached elected appointed awarded nominated based".split()
PREPS = "in at by for from with under near".split()
NOUNS = "place city country organization company university team album film book label studio award position office region district party league river mountain building".split()

KINDS = ("person", "place", "country", "organization", "work")


def name_of(kind: str, rng: random.Random) -> str:
    if kind == "person":
        return f"{rng.choice(FIRST).title()} {rng.choice(LAST).title()}"
    if kind == "place":
        return (rng.choice(PLACE) + rng.choice(PLACE_END)).title() if rng.random() < 0.6 else f"{rng.choice(PLACE).title()} {rng.choice(PLACE).title()}"
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
    ("nationality", "person", "country"), ("place_of_birth", "person", "place"), ("place_of_death", "person", "place"),
    ("employer", "person", "organization"), ("educated_at", "person", "organization"), ("member_of", "person", "organization"),
    ("located_in", "place", "country"), ("headquartered_in", "organization", "place"), ("founded_by", "organization", "person"),
    ("directed_by", "work", "person"), ("written_by", "work", "person"), ("published_by", "work", "organization"),
    ("set_in", "work", "place"), ("capital", "country", "place"), ("notable_work", "person", "work"),
    ("based_on", "work", "work"), ("parent_organization", "organization", "organization"), ("twinned_with", "place", "place"),
]


def make_graph(n_edges: int, n_relations: int, rng: random.Random, typed: bool = False, opaque: bool = False,
               props: random.Random | None = None, plain: bool = False) -> dict:
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
        name = f"{rng.choice(VERBS)}_{rng.choice(PREPS)}_{rng.choice(NOUNS)}" if rng.random() < 0.7 else f"{rng.choice(NOUNS)}_{rng.choice(NOUNS)}"
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
CAUSES = ("meningitis pneumonia tuberculosis influenza cholera typhus malaria smallpox leukemia stroke sepsis "
          "diphtheria dysentery syphilis tetanus measles asthma cirrhosis emphysema peritonitis heart_failure "
          "heart_attack lung_cancer breast_cancer stomach_cancer pancreatic_cancer colorectal_cancer prostate_cancer "
          "drowning suicide assassination homicide car_accident plane_crash alzheimer's_disease parkinson's_disease "
          "kidney_failure liver_cancer brain_tumor aneurysm").replace("_", " ").split(" ")
RELIGIONS = ("catholicism protestantism judaism islam buddhism hinduism lutheranism anglicanism atheism "
             "eastern_orthodoxy presbyterianism methodism calvinism quakerism sikhism").replace("_", " ").split(" ")
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
    towns = sorted({t for loc in TOWN_LOCALES for t in lower(importlib.import_module(f"faker.providers.address.{loc}").Provider.cities)})
    fake = Faker("en_US")
    fake.seed_instance(rng.randint(0, 2**31))
    countries = rng.sample(lower(importlib.import_module("faker.providers.address.en").Provider.countries), 70)
    professions = rng.sample(lower(j.split(",")[0] for j in importlib.import_module("faker.providers.job.en_US").Provider.jobs), 90)
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

    by = {"country": [add(c) for c in countries], "profession": [add(p) for p in professions],
          "cause": [add(c) for c in CAUSES], "religion": [add(r) for r in RELIGIONS], "language": [add(x) for x in languages[:40]],
          "gender": [add("male"), add("female")], "town": [add(t) for t in rng.sample(towns, max(n_people // 4, 20))]}
    by["person"] = [add(person_name()) for _ in range(n_people)]
    edges = [{"source": c, "relation": "contains", "target": t} for t in by["town"] for c in [rng.choice(by["country"])]]
    for p in by["person"]:
        for relation, kind, share in (("gender", "gender", 0.9), ("nationality", "country", 0.8), ("place_of_birth", "town", 0.6),
                                      ("profession", "profession", 0.9), ("place_of_death", "town", 0.3), ("cause_of_death", "cause", 0.2),
                                      ("religion", "religion", 0.2), ("languages", "language", 0.3)):
            if rng.random() < share:
                edges.append({"source": p, "relation": relation, "target": by[kind][int(len(by[kind]) * rng.random() ** 2)]})
        if rng.random() < 0.25:
            edges.append({"source": p, "relation": "profession", "target": rng.choice(by["profession"])})
        if rng.random() < 0.2:
            other = rng.choice(by["person"])
            if other != p:
                edges += [{"source": p, "relation": "spouse", "target": other}, {"source": other, "relation": "spouse", "target": p}]
        if rng.random() < 0.2:
            child = rng.choice(by["person"])
            if child != p:
                edges += [{"source": child, "relation": "parents", "target": p}, {"source": p, "relation": "children", "target": child}]
    seen, unique = set(), []
    for e in edges:
        if (e["source"], e["relation"], e["target"]) not in seen:
            seen.add((e["source"], e["relation"], e["target"]))
            unique.append(e)
    linked = {x for e in unique for x in (e["source"], e["target"])}
    return {"nodes": [n for n in nodes if n["id"] in linked], "edges": unique}


YEAR_KEY = {"person": "born", "place": "founded", "country": "founded", "organization": "founded", "work": "released"}
DESCRIBE = {"person": "{name} is a person", "place": "{name} is a place", "country": "{name} is a country",
            "organization": "{name} is an organization", "work": "{name} is a work"}
DETAIL = "known for its history|mentioned in several sources|of regional importance|often cited|with a long record".split("|")


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
        stage = [(p + (i,), edges[i]["target"] if direction == "out" else edges[i]["source"])
                 for p, node in stage for i in index.get((node, relation, direction), ())]
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
            node = rng.choice([edges[i]["target"] if direction == "out" else edges[i]["source"] for i in index[(node, relation, direction)]])
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
        text = f'Start at "{names[start]}". Follow ' + ", then ".join(
            f"{r}" + (" backwards" if d == "in" else "") for r, d in hops) + ". Which node do you reach?"
        q = {"id": f"q{len(questions) + 1}", "question": text, "insufficient": abstain,
             "query": {"start": start, "hops": [{"relation": r, "direction": d} for r, d in hops]}}
        if abstain:
            q.update(answer="INSUFFICIENT_DATA", path=[], answer_id=None)
        else:
            ends = sorted({end for _, end in found})
            q.update(answers=sorted({names[e] for e in ends}), answer_ids=ends, paths=[list(p) for p, _ in found])
        questions.append(q)
    return questions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--edges", type=int, default=5000)
    parser.add_argument("--relations", type=int, default=400)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--typed", action="store_true", help="node types are kinds (person, place...) instead of 'entity'")
    parser.add_argument("--opaque-ids", action="store_true", help="Freebase-style ids (m.0xxxxx) instead of snake_case")
    parser.add_argument("--plain-relations", action="store_true",
                        help="18 relations named as a curated English KG names them (nationality, place_of_birth...) instead of --relations made-up ones")
    parser.add_argument("--props", action="store_true", help="properties on nodes and edges (description, years, source, confidence)")
    parser.add_argument("--people", type=int, metavar="N",
                        help="instead: a Freebase-like KG of N people with real-world lowercase names (needs Faker), no properties")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    graph = people_graph(args.people, rng) if args.people else make_graph(args.edges, args.relations, rng, typed=args.typed, opaque=args.opaque_ids,
                       props=random.Random(args.seed + 1) if args.props else None, plain=args.plain_relations)
    questions = make_questions(graph, args.questions, rng)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "graph.json").write_text(json.dumps(graph, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (args.out / "questions.json").write_text(json.dumps(questions, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(graph['nodes'])} nodes, {len(graph['edges'])} edges, {len({e['relation'] for e in graph['edges']})} relations, "
          f"{len(questions)} questions -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
