"""Hand-made knowledge graphs and helpers the tests of several modules share: a family graph with answer sets,
a film graph, people graphs, and the scripted runs of the gate."""

import collections
import json
import random
import re
import sys

from hypothesis import strategies as st

import benchmark
from graphrag_format_benchmark import (
    charts,
    inputs as inputs_module,
    measure,
    options,
    questions as questions_module,
    scoring,
    wording,
)
from graphrag_format_benchmark.variants import names as variants_names

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import synth_kg  # noqa: E402

TOKENIZERS = {name: benchmark.load_tokenizer(name) for name in benchmark.SHIPPED_ENCODINGS}


def write(tmp_path, graph, questions):
    (tmp_path / "g.json").write_text(json.dumps(graph, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "q.json").write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    return [
        "--graph",
        str(tmp_path / "g.json"),
        "--questions",
        str(tmp_path / "q.json"),
        "--out",
        str(tmp_path / "out"),
    ]


# A family: parents and children both ways, as Freebase keeps them. "Who are Ann's siblings?" walks
# parents, then children: it comes back over the first edge to Ann herself, and on to Bob.
FAMILY = {
    "nodes": [
        {"id": i, "name": n, "type": "entity"}
        for i, n in (
            ("ann", "Ann"),
            ("bob", "Bob"),
            ("carl", "Carl"),
            ("dora", "Dora"),
            ("golden_gate_bridge", "Golden Gate Bridge"),
            ("grand_duke_of_russia", "Grand Duke of Russia"),
            ("russia", "Russia"),
            ("dot", "."),
        )
    ],
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
    "id": "siblings",
    "question": "Whose parent is also a parent of Carl's daughter?",
    "answers": ["Ann", "Bob"],
    "answer_ids": ["ann", "bob"],
    "paths": [[0, 0], [0, 1]],
    "insufficient": False,
    "query": {
        "start": "ann",
        "hops": [{"relation": "parents", "direction": "out"}, {"relation": "parents", "direction": "in"}],
    },
}


QUESTIONS = [
    SIBLINGS,
    {
        "id": "kids",
        "question": "Who are the children of Carl?",
        "answers": ["Ann", "Bob"],
        "answer_ids": ["ann", "bob"],
        "paths": [[2], [3]],
        "insufficient": False,
        "query": {"start": "carl", "hops": [{"relation": "children", "direction": "out"}]},
    },
    {
        "id": "gold",
        "question": "What does the gold medalist's stepmother live near?",
        "answer": "Golden Gate Bridge",
        "answer_id": "golden_gate_bridge",
        "path": [4, 5],
        "insufficient": False,
        "query": {
            "start": "carl",
            "hops": [{"relation": "spouse", "direction": "out"}, {"relation": "lives_near", "direction": "out"}],
        },
    },
    {
        "id": "country",
        "question": "Which country is grand_duke_of_russia from?",
        "answer": "Russia",
        "answer_id": "russia",
        "path": [6],
        "insufficient": False,
        "query": {"start": "grand_duke_of_russia", "hops": [{"relation": "country", "direction": "out"}]},
    },
    {
        "id": "acquaintance",
        "question": "Whom does Carl know. Really.",
        "answer": ".",
        "answer_id": "dot",
        "path": [7],
        "insufficient": False,
        "query": {"start": "carl", "hops": [{"relation": "knows", "direction": "out"}]},
    },
    {
        "id": "none",
        "question": "Where does Bob live?",
        "answer": "INSUFFICIENT_DATA",
        "path": [],
        "insufficient": True,
        "answer_id": None,
        "query": {"start": "bob", "hops": [{"relation": "lives_near", "direction": "out"}]},
    },
]


def problems_of(tmp_path, capsys, questions, *flags):
    code = benchmark.main([*write(tmp_path, FAMILY, questions), "--prompt", "en", *flags])
    where = benchmark.display(tmp_path / "q.json")
    # test_stores says it
    err = re.sub(r"read [\d,]+ entities, [\d,]+ relations from [^\n]*\n", "", capsys.readouterr().err)
    return code, err.replace(where, "q.json").splitlines()


HOSTILE = st.sampled_from(
    [
        "\n",
        "\r\n",
        " ",
        "\t",
        "/",
        "\\",
        "|",
        "{",
        "}",
        '"',
        "'s",
        "->",
        " -",
        "\u2028",
        "\x85",
        "\u3000",
        "\x1c",
        "й",
        "ё",
        "漢",
        "🙂",
        "1234",
        "<|endoftext|>",
        "e\u0301",
        "ГРАФ",
        "QUESTION",
        "\n\n",
    ]
)


TEXT = st.lists(st.one_of(HOSTILE, st.text(max_size=6)), max_size=6).map("".join)


def surface(names, ids):
    """Shares of names per script and casing pattern, and of ids per shape."""

    def casing(name):
        words = [w for w in name.split(" ") if any(c.isalpha() for c in w)]
        return "title" if words and all(w[0].isupper() for w in words) else "lower" if name.islower() else "mixed"

    def shape(i):
        return (
            "snake" if re.fullmatch(r"[^\W_]+(_[^\W_]+)*", i) else "other",
            i.isascii(),
            any(c.isdigit() for c in i),
            any(c.isupper() for c in i),
        )

    shares = {}
    for label, values in (
        ("script", [variants_names.script(n) for n in names]),
        ("casing", [casing(n) for n in names]),
        ("id", [shape(i) for i in ids]),
    ):
        for key, n in collections.Counter(values).items():
            shares[(label, key)] = n / len(values)
    return shares


def english_typed_graph():
    rng = random.Random(5)
    people = [
        f"{f} {s}"
        for f in ("Alice", "Brian", "Chloe", "David", "Emma", "Frank", "Grace", "Henry")
        for s in ("Stone", "Reed", "Hale", "Moss", "Vance", "Pike")
    ][::5]
    cities = [
        "Springfield",
        "Riverton",
        "Oak Harbor",
        "Maple Falls",
        "Fort Ridge",
        "Pine Bluff",
        "Cedar Vale",
        "Glen Park",
    ]
    firms = [
        f"{a} {b}"
        for a in ("Acme", "Globex", "Initech", "Umbrella", "Vertex", "Hooli")
        for b in ("Labs", "Motors", "Press", "Works")
    ][::3]
    nodes = [{"id": f"person_{p.lower().replace(' ', '_')}", "name": p, "type": "person"} for p in people]
    nodes += [{"id": f"city_{c.lower().replace(' ', '_')}", "name": c, "type": "city"} for c in cities]
    nodes += [{"id": f"org_{f.lower().replace(' ', '_')}", "name": f, "type": "organization"} for f in firms]
    by_type = {t: [n["id"] for n in nodes if n["type"] == t] for t in ("person", "city", "organization")}
    edges = [
        {"source": p, "relation": "WORKS_AT", "target": rng.choice(by_type["organization"])} for p in by_type["person"]
    ]
    edges += [
        {"source": o, "relation": "LOCATED_IN", "target": rng.choice(by_type["city"])} for o in by_type["organization"]
    ]
    names = {n["id"]: n["name"] for n in nodes}
    questions = []
    for k, e in enumerate(edges[:12:3]):  # persons 0, 3, 6, 9: where does their employer sit?
        second = next(x for x in edges if x["source"] == e["target"])
        questions.append(
            {
                "id": f"q{k + 1}",
                "question": f"Where is the employer of person {k + 1}?",
                "answer": names[second["target"]],
                "answer_id": second["target"],
                "path": [edges.index(e), edges.index(second)],
                "insufficient": False,
                "query": {
                    "start": e["source"],
                    "hops": [
                        {"relation": "WORKS_AT", "direction": "out"},
                        {"relation": "LOCATED_IN", "direction": "out"},
                    ],
                },
            }
        )
    return {"nodes": nodes, "edges": edges}, questions


def untyped_graph():
    rng = random.Random(3)
    graph = synth_kg.make_graph(600, 60, rng)
    return graph, synth_kg.make_questions(graph, 12, rng)


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
    cities = [
        add("city", c) for c in ("Port Alder", "Lake Rowan", "Fort Ember", "Glen Mira", "Oak Harbor", "Pine Vale")
    ]
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
            reached = {
                e["target"] if h["direction"] == "out" else e["source"]
                for e in edges
                for v in reached
                if e["relation"] == h["relation"] and e["source" if h["direction"] == "out" else "target"] == v
            }
        last = (hops[-1]["relation"], hops[-1]["direction"])
        assert not any(last in takes[v] for v in reached)  # it is an abstention
        if role == "type":
            peers = {n for n, t in node_type.items() if t in {node_type[v] for v in reached}}
        elif len(hops) > 1:
            prev = hops[-2]
            peers = {
                e["target"] if prev["direction"] == "out" else e["source"]
                for e in edges
                if e["relation"] == prev["relation"]
            }
        else:
            peers = {
                e[end]
                for e in edges
                for end in ("source", "target")
                for v in reached
                if e[end] != v and any(e["relation"] == x["relation"] and x[end] == v for x in edges)
            }
        near += any(last in takes[p] for p in peers - reached)
    return near / len(abstentions), len(abstentions)


def gate_inputs(tmp_path, n=60):
    rng = random.Random(33)
    graph = synth_kg.make_graph(1500, 120, rng)
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    # the token figures asserted on these runs are of the templated texts
    return [
        "--graph",
        str(tmp_path / "g.json"),
        "--generate-questions",
        str(n),
        "--prompt",
        "en",
        "--formats",
        "json,tsv,dsl",
        "--wording",
        "template",
    ]


def measured_items(*argv: str):
    """A command's flags as read, and the items its measurement makes (what a model run sends), as benchmark.main
    makes them."""
    args = options.parse_config(list(argv))
    plan = options.make_plan(args)
    spec = options.make_generate_spec(args, plan)
    inputs = inputs_module.load_inputs(
        args.graph,
        args.questions or benchmark.DEFAULT_QUESTIONS,
        None,
        questions_module.question_drawer(spec) if spec else None,
    )
    return args, measure.measure(inputs, plan).items


def scripted_run(tmp_path, answer_of, *flags):
    """A model run against a fake server whose answer to each prompt is answer_of(item)."""
    from fake_openai import FakeOpenAI

    argv = [*flags, "--model", "m"]
    _, items = measured_items(*argv, "--base-url", "http://127.0.0.1:9/v1")
    answers = {item.prompt(): answer_of(item) for item in items}
    server = FakeOpenAI(answer=lambda prompt: answers[prompt])
    try:
        return benchmark.main([*argv, "--base-url", server.url, "--out", str(tmp_path / "out")])
    finally:
        server.close()


def verdict_record(v):
    """A verdict of results.json back as the gate's record (gate.Verdict), its checks and Holm's step with it."""
    from graphrag_format_benchmark import gate

    checks = {
        name: gate.Check(**{**c, "outcomes": c["outcomes"] and gate.Outcomes(**c["outcomes"])})
        for name, c in v["checks"].items()
    }
    return gate.Verdict(**{**v, "checks": checks, "holm": v.get("holm") and gate.Holm(**v["holm"])})


def svg_marks(path):
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    return [
        (panel.get("data-title"), mark.attrib)
        for panel in root.iter(f"{ns}g")
        for mark in panel
        if mark.get("class") == "mark"
    ]


FILM = {  # what a new user tries first: 17 nodes, 3 studios, 2 cities
    "nodes": [
        {"id": i, "name": n, "type": t}
        for i, n, t in (
            ("studio_lumen", "Lumen Studios", "studio"),
            ("studio_aurora", "Aurora Pictures", "studio"),
            ("studio_kestrel", "Kestrel Films", "studio"),
            ("city_lyon", "Lyon", "city"),
            ("city_oslo", "Oslo", "city"),
            ("film_tide", "The Long Tide", "film"),
            ("film_glass", "Glass Harbor", "film"),
            ("film_ember", "Ember Road", "film"),
            ("film_north", "North of Nowhere", "film"),
            ("film_quiet", "The Quiet Year", "film"),
            ("person_ines", "Ines Varga", "person"),
            ("person_tomas", "Tomas Brandt", "person"),
            ("person_mira", "Mira Okafor", "person"),
            ("person_leo", "Leo Santos", "person"),
            ("person_ana", "Ana Lindqvist", "person"),
            ("person_jon", "Jon Ruiz", "person"),
            ("person_eva", "Eva Kohl", "person"),
        )
    ],
    "edges": [
        {"source": s, "relation": r, "target": t}
        for s, r, t in (
            ("film_tide", "PRODUCED_BY", "studio_lumen"),
            ("film_glass", "PRODUCED_BY", "studio_aurora"),
            ("film_ember", "PRODUCED_BY", "studio_kestrel"),
            ("film_north", "PRODUCED_BY", "studio_lumen"),
            ("film_quiet", "PRODUCED_BY", "studio_aurora"),
            ("studio_lumen", "BASED_IN", "city_lyon"),
            ("studio_aurora", "BASED_IN", "city_oslo"),
            ("studio_kestrel", "BASED_IN", "city_oslo"),
            ("person_ines", "DIRECTED", "film_tide"),
            ("person_tomas", "DIRECTED", "film_glass"),
            ("person_mira", "DIRECTED", "film_ember"),
            ("person_leo", "ACTED_IN", "film_tide"),
            ("person_ana", "ACTED_IN", "film_north"),
            ("person_jon", "ACTED_IN", "film_quiet"),
            ("person_eva", "ACTED_IN", "film_glass"),
        )
    ],
}


def id_shape(node_id: str, heads: collections.Counter) -> tuple:
    """What an id looks like without what it says: a prefix that several ids share kept, each other word as its
    case and digits ('person_ana' -> ('person', 'a'); 'Golden_Gate' -> ('A', 'A'); 'm.0abc1' -> ('a.9a9',))."""
    tokens = node_id.split("_")
    kept = [tokens.pop(0)] if len(tokens) > 1 and heads[tokens[0]] > 1 else []
    return (*kept, *(re.sub(r"[a-z]+", "a", re.sub(r"[A-Z][a-z]*", "A", re.sub(r"[0-9]+", "9", t))) for t in tokens))


PEOPLE = {  # ids made of a type prefix and the first name, as hand-made graphs often are (ids like 'person_ana')
    "nodes": [
        {"id": f"person_{first.lower()}", "name": f"{first} {last}", "type": "person"}
        for first, last in (
            ("Ana", "Ruiz"),
            ("Tom", "Baker"),
            ("Lee", "Chen"),
            ("Maya", "Patel"),
            ("Omar", "Haddad"),
            ("Sara", "Novak"),
            ("Ivan", "Petrov"),
            ("Nina", "Berg"),
        )
    ]
    + [
        {"id": f"studio_{n.split()[0].lower()}", "name": n, "type": "studio"}
        for n in ("Nova Pictures", "Apex Films", "Lumen Studios")
    ]
    + [{"id": f"city_{n.lower()}", "name": n, "type": "city"} for n in ("Lisbon", "Oslo", "Austin", "Kyoto")],
    "edges": [
        {"source": f"person_{p}", "relation": r, "target": t}
        for p, r, t in (
            ("ana", "WORKS_AT", "studio_nova"),
            ("tom", "WORKS_AT", "studio_apex"),
            ("lee", "WORKS_AT", "studio_lumen"),
            ("maya", "WORKS_AT", "studio_nova"),
            ("omar", "WORKS_AT", "studio_apex"),
            ("sara", "KNOWS", "person_ana"),
            ("ivan", "KNOWS", "person_tom"),
            ("nina", "KNOWS", "person_lee"),
            ("ana", "BORN_IN", "city_lisbon"),
            ("tom", "BORN_IN", "city_austin"),
            ("lee", "BORN_IN", "city_kyoto"),
            ("maya", "BORN_IN", "city_oslo"),
        )
    ]
    + [
        {"source": s, "relation": "BASED_IN", "target": t}
        for s, t in (("studio_nova", "city_lisbon"), ("studio_apex", "city_austin"))
    ],
}


def svg_label_boxes(path):
    """Per panel, the estimated boxes of the mark labels, as the chart code estimates them."""
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    return {
        panel.get("data-title"): [
            charts.label_box(float(t.get("x")), float(t.get("y")), t.text)
            for t in panel.iter(f"{ns}text")
            if t.get("class") == "label"
        ]
        for panel in ET.parse(path).getroot().iter(f"{ns}g")
    }


def _phrases(mapping=None):
    return lambda relation: (mapping or {}).get(relation) or wording.derive_phrase(relation)


def people_graph_by_hand() -> dict:
    """An untyped graph of 12 people and what a KG links them to: kinds that only the relations tell."""
    people = [f"{f} {s}" for f in ("ana", "ben", "cleo", "dan") for s in ("ruiz", "lee", "ito")]
    links = {
        "religion": ["catholicism", "islam", "buddhism"],
        "gender": ["male", "female"],
        "cause_of_death": ["meningitis", "drowning", "heart failure"],
        "place_of_birth": ["celle ligure", "saint petersburg", "den haag"],
    }
    nodes = [
        {"id": "_".join(n.split()), "name": n, "type": "entity"}
        for n in people + [x for names in links.values() for x in names]
    ]
    edges = [
        {"source": "_".join(p.split()), "relation": relation, "target": "_".join(names[k % len(names)].split())}
        for k, p in enumerate(people)
        for relation, names in links.items()
    ]
    edges += [
        {"source": "ana_ruiz", "relation": "spouse", "target": "ben_lee"},
        {"source": "ben_lee", "relation": "spouse", "target": "ana_ruiz"},
    ]
    return {"nodes": nodes, "edges": edges}


def hostile_names_graph(namesakes: int = 5000) -> dict:
    """An untyped graph of the name shapes a real KG throws at a namer, each a role of its own: catalogue
    designations with an id in the same style ('(1234)_2001_AB1'), names of digits and punctuation only, single
    letters (all 26), emoji, numbers, `namesakes` names sharing one first word ('john ...'), a kind with one member,
    duplicate names, and ids in no common scheme."""
    nodes, edges = [], []

    def add(name, node_id, relation, target):
        nodes.append({"id": node_id, "name": name, "type": "entity"})
        edges.append({"source": node_id, "relation": relation, "target": target})

    nodes += [
        {"id": "hub", "name": "edwin hubble", "type": "entity"},
        {"id": "club", "name": "the club", "type": "entity"},
    ]
    for k in range(30):
        name = f"({1000 + 37 * k}) {1990 + k % 30} {chr(65 + k % 26)}{chr(66 + k % 20)}{k % 9 + 1}"
        add(name, "_".join(name.split()), "discovered_by", "hub")
    for k, name in enumerate(["1-2-3", "(42)", "3.14", "#1", "--", "4/5", "+7", "0.5%"]):
        add(name, f"p{k}~", "symbol_of", "hub")
    for k in range(26):
        add(chr(65 + k), f"letter_{chr(97 + k)}", "grade_of", "club")
    for k, name in enumerate(["🎉", "🚀🚀", "★", "♥ ♥", "🎉🎉"]):
        add(name, f"e{k}", "emoji_of", "club")
    for year in (1066, 1492, 1789, 1917, 1945, 1999, 2001):
        add(str(year), str(year), "year_of", "club")
    add("narnia", "narnia", "only_kind_of", "club")
    for node_id in ("paris", "paris_2", "paris_texas"):
        add("paris", node_id, "twinned_with", "club")
    for k, node_id in enumerate(["x9!q", "Zz--3", "%41b", "a.b.c", "ÆØÅ"]):
        add(f"odd thing {k}", node_id, "odd_of", "club")
    lasts = synth_kg.LAST + [w + "son" for w in synth_kg.FIRST]
    for k in range(namesakes):
        name = (
            f"john {lasts[k % len(lasts)]} "
            f"{synth_kg.FIRST[k // len(lasts) % len(synth_kg.FIRST)]}{'' if k < 5000 else k}"
        )
        add(name, f"john_{k}", "member_of", "club")
    return {"nodes": nodes, "edges": edges}


def score_answer(content, shown, q, names=None) -> scoring.Scores:
    """Every metric of one answer to one prompt, as scoring judges it (an AnswerKey of what the prompt showed)."""
    return scoring.AnswerKey(shown, q, names).score(content)


def make_cell(**fields) -> scoring.Cell:
    """A scored cell of the given fields, every other field None (as tests need only some)."""
    return scoring.Cell(**{**dict.fromkeys(scoring.Cell._fields), **fields})
