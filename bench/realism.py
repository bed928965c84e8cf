"""Can a model tell the tool's synthetic inputs from the real thing without reading the facts? Measured.

    $ python bench/realism.py            # several minutes on 2 cores (each generated graph and its twin)
    $ python bench/realism.py --json     # the same figures as JSON

For each graph (the article's; a 30-node English typed graph; synthetic KGs from bench/synth_kg.py: typed, untyped, and
untyped with Freebase-style ids; a MetaQA-like movie graph with years and one-word names; an untyped KG of people with
Faker's real-world names, lowercase, bench/synth_kg.py --people) and each size (medium, large), the real run of
benchmark.py makes the distractor graph (40 generated questions give the anchors), and against the graph's own nodes:

- digits: the share of names with a digit, real nodes and distractors;
- top first word: per type (per graph when untyped), the largest share one first word has among the names,
  real and distractors, the worst type shown;
- AUC: a character n-gram classifier (multinomial naive Bayes over 1- to 4-grams of the name) trained to
  tell distractor names from real ones, 5-fold cross-validated; 0.5 is chance. Only graphs of 200+ nodes
  (fewer real names are too few to train on). With scikit-learn installed, a logistic regression on tf-idf
  character n-grams is run too, as a second adversary;
- cross-graph AUC: the same naive Bayes trained on a generated graph's real and made names and scored on its twin
  (the same generator, another seed), both ways: within one graph, cross-validation rewards the classifier for
  words both classes share and reads far under 0.5 (see cross_graph_auc);
- made-up one-word names: one-word distractors (and pseudonyms) that are no word of the graph's names nor of the
  tool's pools: blends a language model would see through, which a character model cannot.

And for the generated question sets (200 questions, abstain share 0.5): the share of abstention questions
whose last hop some node of the same role takes (type on a typed graph; the nodes reached by the same
relation and direction on an untyped one, the start's peers for a one-hop question), checked here without
the tool's code: a question whose break no peer could take is refusable from the schema alone.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from graphrag_format_benchmark.variants import names as variants_names  # noqa: E402  (KIND_POOLS: the words a one-word pseudonym may be besides the graph's own)

import synth_kg  # noqa: E402

UNIX = {  # a hand-made graph of the size a new user tries first
    "person": [
        "Thompson, Ken",
        "Ritchie, Dennis",
        "Kernighan, Brian",
        "Pike, Rob",
        "McIlroy, Doug",
        "Joy, Bill",
        "Cox, Russ",
        "Griesemer, Robert",
        "Aho, Alfred",
        "Weinberger, Peter",
    ],
    "project": ["Unix", "Plan 9", "Go", "C", "AWK", "BSD", "vi", "UTF-8", "Inferno", "grep"],
    "organization": ["Bell Labs", "Google", "UC Berkeley", "Sun Microsystems", "Princeton University"],
    "city": ["Murray Hill", "Mountain View", "Berkeley", "Princeton", "New York"],
}


def unix_graph(rng: random.Random) -> dict:
    nodes = [
        {"id": f"{kind}_{re.sub(r'[^a-z0-9]+', '_', name.lower()).strip('_')}", "name": name, "type": kind}
        for kind, names in UNIX.items()
        for name in names
    ]
    by = {kind: [n["id"] for n in nodes if n["type"] == kind] for kind in UNIX}
    edges = []
    for p in by["person"]:
        edges += [
            {"source": p, "relation": "WORKED_AT", "target": rng.choice(by["organization"])},
            {"source": p, "relation": "CREATED", "target": rng.choice(by["project"])},
        ]
    edges += [{"source": o, "relation": "LOCATED_IN", "target": rng.choice(by["city"])} for o in by["organization"]]
    edges += [
        {"source": j, "relation": "MAINTAINED_BY", "target": rng.choice(by["organization"])} for j in by["project"]
    ]
    return {"nodes": nodes, "edges": edges}


def movie_graph(rng: random.Random, n_movies: int = 300) -> dict:
    """MetaQA-like and untyped: films, people, years, genres and languages as nodes, many of them one word or
    a number ("1994", "Drama", "Heat"), the names a blend or a numbered name would stand out among."""
    words = (
        "heat ran vertigo alien rocky jaws psycho fargo rushmore memento arrival gravity interstellar inception "
        "casablanca chinatown amadeus gandhi platoon unforgiven braveheart titanic gladiator crash departed argo "
        "birdman spotlight moonlight parasite nomadland oppenheimer whiplash boyhood her room brooklyn lion fences "
        "lady bird roma joker tenet dune elvis babylon tar aftersun"
    ).split()
    adjectives = "dark silent last lost wild broken golden secret".split()
    first = "james mary robert linda david susan mark karen paul nancy steven lisa kevin betty brian helen".split()
    last = "smith jones brown davis miller wilson moore taylor clark lewis walker hall young king wright hill".split()
    nodes, ids = [], set()

    def add(name: str) -> str:
        node_id = synth_kg.unique_id(re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_"), ids)
        nodes.append({"id": node_id, "name": name, "type": "entity"})
        return node_id

    years = [add(str(y)) for y in range(1950, 2024)]
    genres = [
        add(g)
        for g in "Drama Comedy Thriller Horror Western Musical Romance Documentary Animation Crime Mystery "
        "Fantasy".split()
    ]
    languages = [add(g) for g in "English French German Italian Spanish Japanese Korean Hindi Swedish Russian".split()]
    people = [add(f"{rng.choice(first).title()} {rng.choice(last).title()}") for _ in range(250)]
    edges = []
    for _ in range(n_movies):
        w = rng.choice(words).title()
        title = (
            w
            if rng.random() < 0.5
            else f"The {rng.choice(adjectives).title()} {w}"
            if rng.random() < 0.5
            else f"{w} {rng.randint(2, 4)}"
        )
        m = add(title)
        edges += [
            {"source": m, "relation": "release_year", "target": rng.choice(years)},
            {"source": m, "relation": "has_genre", "target": rng.choice(genres)},
            {"source": m, "relation": "in_language", "target": rng.choice(languages)},
            {"source": m, "relation": "directed_by", "target": rng.choice(people)},
            {"source": m, "relation": "starred_actors", "target": rng.choice(people)},
        ]
    return {"nodes": nodes, "edges": edges}


def graphs() -> dict[str, tuple[dict, dict | None]]:
    """name -> (graph, its twin: the same generator with another seed, for the cross-graph adversary; None for a
    graph that has no generator)."""
    article = json.loads((ROOT / "data" / "graph.json").read_text(encoding="utf-8"))
    made = {
        "synthetic KG (typed, en)": lambda seed: synth_kg.make_graph(2400, 200, random.Random(seed), typed=True),
        "synthetic KG (untyped, en)": lambda seed: synth_kg.make_graph(2400, 200, random.Random(seed)),
        "synthetic KG (untyped, m.0 ids)": lambda seed: synth_kg.make_graph(
            2400, 200, random.Random(seed), opaque=True
        ),
        "movies (untyped, years, one-word names)": movie_graph_seeded,
        "people KG (untyped, lowercase, Faker's real names)": lambda seed: synth_kg.people_graph(
            800, random.Random(seed)
        ),
        "stand-in KG (untyped, lowercase, real KG shapes)": lambda seed: synth_kg.standin_graph(
            240, random.Random(seed)
        ),
        "stand-in KG (untyped, Title Case, real KG shapes)": lambda seed: synth_kg.standin_graph(
            240, random.Random(seed), title=True
        ),
    }
    return {
        "article (14 nodes, ru, typed)": (article, None),
        "unix (30 nodes, en, typed)": (unix_graph(random.Random(1)), None),
        **{name: (make(k + 2), make(k + 102)) for k, (name, make) in enumerate(made.items())},
    }


def movie_graph_seeded(seed: int) -> dict:
    return movie_graph(random.Random(seed))


# ---- the adversary: which names are distractors?


def ngrams(name: str) -> list[str]:
    text = f" {name} "
    return [text[i : i + n] for n in range(1, 5) for i in range(len(text) - n + 1)]


def naive_bayes_scores(train: list[tuple[str, int]], test: list[str]) -> list[float]:
    counts = [collections.Counter(), collections.Counter()]
    for name, label in train:
        counts[label].update(ngrams(name))
    vocab = len(set(counts[0]) | set(counts[1])) + 1
    totals = [sum(c.values()) + vocab for c in counts]
    return [
        sum(math.log((counts[1][g] + 1) / totals[1]) - math.log((counts[0][g] + 1) / totals[0]) for g in ngrams(name))
        for name in test
    ]


def auc(scores: list[float], labels: list[int]) -> float:
    """Probability that a random distractor scores above a random real name (ties count half)."""
    ranked = sorted(zip(scores, labels))
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        rank_sum += sum(label for _, label in ranked[i:j]) * (i + j + 1) / 2
        i = j
    pos = sum(labels)
    neg = len(labels) - pos
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def cross_graph_auc(one: tuple[list[str], list[str]], other: tuple[list[str], list[str]]) -> float:
    """The naive Bayes adversary trained on one graph's (real, made) names and scored on its twin's, and the other way
    round, averaged. Within one graph, cross-validation rewards the adversary for a word it saw in the other class:
    a made name recombines the real names' words, so the held-out real name's words were seen as made ones and the
    AUC falls far below 0.5 (0.21 for a plain recombiner of the people KG's names) without any tell. A twin drawn
    with another seed shares no such pairing: only what tells made names from real ones in general carries over."""

    def one_way(train, test):
        scores = naive_bayes_scores([(n, 0) for n in train[0]] + [(n, 1) for n in train[1]], test[0] + test[1])
        return auc(scores, [0] * len(test[0]) + [1] * len(test[1]))

    return (one_way(one, other) + one_way(other, one)) / 2


def cross_validated_auc(real: list[str], fake: list[str], folds: int = 5, seed: int = 0) -> dict:
    data = [(n, 0) for n in real] + [(n, 1) for n in fake]
    random.Random(seed).shuffle(data)
    result = {
        "naive_bayes": statistics_mean(
            [
                auc(
                    naive_bayes_scores(
                        [d for k, d in enumerate(data) if k % folds != f],
                        [n for k, (n, _) in enumerate(data) if k % folds == f],
                    ),
                    [y for k, (_, y) in enumerate(data) if k % folds == f],
                )
                for f in range(folds)
            ]
        )
    }
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import cross_val_score
    except ImportError:
        return result
    names, labels = [n for n, _ in data], [y for _, y in data]
    model = __import__("sklearn.pipeline", fromlist=["make_pipeline"]).make_pipeline(
        TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4)),
        LogisticRegression(max_iter=2000, class_weight="balanced"),
    )
    result["logistic_regression"] = float(cross_val_score(model, names, labels, cv=folds, scoring="roc_auc").mean())
    return result


def statistics_mean(values: list[float]) -> float:
    return sum(values) / len(values)


# ---- surface figures


def digit_share(names: list[str]) -> float:
    return sum(any(c.isdigit() for c in n) for n in names) / len(names) if names else 0.0


def top_first_word(nodes: list[dict]) -> tuple[float, str]:
    """The largest share one first word has among the names of one type: (share, 'type: word')."""
    by_type: dict[str, list[str]] = collections.defaultdict(list)
    for n in nodes:
        by_type[n["type"]].append(n["name"].split(" ")[0])
    best = (0.0, "")
    for kind, firsts in by_type.items():
        if len(firsts) >= 5:
            word, k = collections.Counter(firsts).most_common(1)[0]
            best = max(best, (k / len(firsts), f"{kind}: {word}"))
    return best


def run_sizes(graph: dict, folder: Path) -> dict[str, list[dict]]:
    """The distractor nodes of medium and large, made by a real run of benchmark.py."""
    (folder / "graph.json").write_text(json.dumps(graph, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmark.py"),
            "--graph",
            str(folder / "graph.json"),
            "--generate-questions",
            "40",
            "--sizes",
            "medium,large",
            "--formats",
            "json,edge_list",
            "--no-write-prompts",
            "--skip-invalid-questions",
            "--out",
            str(folder / "out"),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmark.py failed: {done.stderr}")
    real = {n["id"] for n in graph["nodes"]}
    out = {}
    for size in ("medium", "large"):
        variant = json.loads((folder / "out" / f"graph.{size}.original.json").read_text(encoding="utf-8"))
        out[size] = [n for n in variant["nodes"] if n["id"] not in real]
    out["warnings"] = [line for line in done.stderr.splitlines() if "distractor branches" in line]
    return out


def real_words(graph: dict) -> set[str]:
    """The words a made one-word name may be and still be a real
    word: the graph's own names' words and the tool's pools."""
    words = {w.casefold() for n in graph["nodes"] for w in n["name"].split()} | {
        w for pool in variants_names.KIND_POOLS.values() for w in pool
    }
    return words | {
        w.casefold()
        for pool in [*variants_names.WORD_POOLS, *variants_names.NAME_POOLS.values()]
        for name in pool
        for w in name.split()
    }


def made_up(graph: dict, made: list[dict]) -> list[int]:
    """[one-word made names that are no real word (a blend: 'mozambodia'), one-word made names]."""
    one_word = [n["name"] for n in made if len(n["name"].split()) == 1 and not n["name"].isdecimal()]
    words = real_words(graph)
    return [sum(w.casefold() not in words for w in one_word), len(one_word)]


def pseudonyms(graph: dict, folder: Path) -> dict:
    """--pseudonymize on the graph, by a real run at sizes small and medium: the real names against their pseudonyms
    (the input's nodes only): the n-gram adversary's AUC, the share that keeps its number of words, the share that keeps
    a word of its own, and the entities whose pseudonym differs between sizes."""
    (folder / "graph.json").write_text(json.dumps(graph, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmark.py"),
            "--graph",
            str(folder / "graph.json"),
            "--generate-questions",
            "40",
            "--sizes",
            "small,medium",
            "--formats",
            "json",
            "--pseudonymize",
            "--no-write-prompts",
            "--skip-invalid-questions",
            "--out",
            str(folder / "pseudo"),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmark.py failed: {done.stderr}")
    real = {n["id"]: n for n in graph["nodes"]}
    named: dict[str, set[str]] = collections.defaultdict(set)
    for size in ("small", "medium"):
        before = json.loads((folder / "pseudo" / f"graph.{size}.original.json").read_text(encoding="utf-8"))["nodes"]
        after = json.loads((folder / "pseudo" / f"graph.{size}.pseudonyms.json").read_text(encoding="utf-8"))["nodes"]
        for a, b in zip(before, after):
            if a["id"] in real:
                named[a["id"]].add(b["name"])
    pairs = [(real[i]["name"], sorted(names)[0]) for i, names in named.items()]
    words = real_words(graph)
    one_word = [b for a, b in pairs if len(a.split()) == 1 and not b.isdecimal()]
    out = {
        "entities": len(pairs),
        "changed_between_sizes": sum(len(names) > 1 for names in named.values()),
        "made_up_one_word": [sum(b.casefold() not in words for b in one_word), len(one_word)],
        "pairs": pairs,
        "same_word_count": round(sum(len(a.split()) == len(b.split()) for a, b in pairs) / len(pairs), 3),
        "keeps_own_word": round(sum(bool(own_words(a) & own_words(b)) for a, b in pairs) / len(pairs), 3),
        "same_shape": round(
            sum(classes(a) == classes(b) for a, b in pairs if " " in a) / max(sum(" " in a for a, _ in pairs), 1), 3
        ),
        "fallbacks": [line.split(": ", 2)[-1] for line in done.stderr.splitlines() if "pseudonym(s) so far" in line],
        "warnings": sum("may still name" in line for line in done.stderr.splitlines()),
    }
    if len(pairs) >= 200:
        out["auc"] = {
            k: round(v, 3) for k, v in cross_validated_auc([a for a, _ in pairs], [b for _, b in pairs]).items()
        }
    return out


def own_words(name: str) -> set[str]:
    """A name's words that are its own: not function words nor honorifics ('of', 'sir'), which a pseudonym keeps."""
    return {w.casefold() for w in name.split()} - variants_names.kept_words(name)


def classes(name: str) -> list[str]:
    """A name's shape as the tool reads it, case aside: ['plain',
    'ordinal', 'of', 'plain'] for 'maria ii of portugal'."""
    return [
        kind[1].casefold()
        if kind[0] == "function"
        else kind[0]
        if kind[0] in ("honorific", "ordinal", "year", "code")
        else "plain"
        for kind in variants_names.name_shape(name)
    ]


def near_miss_share(graph: dict, questions: list[dict]) -> tuple[float, int]:
    edges, types = graph["edges"], {n["id"]: n["type"] for n in graph["nodes"]}
    typed = len(set(types.values())) > 1
    takes, index = collections.defaultdict(set), collections.defaultdict(list)
    for e in edges:
        takes[e["source"]].add((e["relation"], "out"))
        takes[e["target"]].add((e["relation"], "in"))
        index[(e["source"], e["relation"], "out")].append(e["target"])
        index[(e["target"], e["relation"], "in")].append(e["source"])
    ends = collections.defaultdict(set)  # (relation, direction) -> nodes reached that way
    for (_, relation, direction), reached in index.items():
        ends[(relation, direction)].update(reached)
    abstentions = [q for q in questions if q["insufficient"]]
    near = 0
    for q in abstentions:
        hops, reached = q["query"]["hops"], {q["query"]["start"]}
        for h in hops[:-1]:
            reached = {t for v in reached for t in index[(v, h["relation"], h["direction"])]}
        last = (hops[-1]["relation"], hops[-1]["direction"])
        if typed:
            peers = {n for n, t in types.items() if t in {types[v] for v in reached}}
        elif len(hops) > 1:
            peers = ends[(hops[-2]["relation"], hops[-2]["direction"])]
        else:
            peers = {p for v in reached for r, d in takes[v] for p in ends[(r, "in" if d == "out" else "out")]}
        near += any(last in takes[p] for p in peers - reached)
    return (near / len(abstentions) if abstentions else float("nan")), len(abstentions)


def generated(graph: dict, folder: Path) -> list[dict]:
    (folder / "graph.json").write_text(json.dumps(graph, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmark.py"),
            "--graph",
            str(folder / "graph.json"),
            "--generate-questions",
            "200",
            "--abstain-share",
            "0.5",
            "--prompt",
            "en",
            "--formats",
            "json",
            "--no-write-prompts",
            "--skip-invalid-questions",
            "--out",
            str(folder / "gen"),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmark.py failed: {done.stderr}")
    return json.loads((folder / "gen" / "questions.generated.json").read_text(encoding="utf-8"))


def measure(only: str = "") -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, (graph, twin)) in enumerate(graphs().items()):
            if only not in name:
                continue
            folder = Path(tmp) / str(k)
            folder.mkdir()
            made = run_sizes(graph, folder)
            real = graph["nodes"]
            share, n_abstain = near_miss_share(graph, generated(graph, folder))
            renamed = pseudonyms(graph, folder)
            twin_made = twin_renamed = None
            if twin is not None:
                (folder / "twin").mkdir()
                twin_made, twin_renamed = run_sizes(twin, folder / "twin"), pseudonyms(twin, folder / "twin")
                renamed["cross_graph_auc"] = round(
                    cross_graph_auc(
                        tuple(map(list, zip(*renamed["pairs"]))), tuple(map(list, zip(*twin_renamed["pairs"])))
                    ),
                    3,
                )
            del renamed["pairs"]
            for size in ("medium", "large"):
                fake = made[size]
                row = {
                    "graph": name,
                    "size": size,
                    "real": len(real),
                    "distractors": len(fake),
                    "made_up_one_word": made_up(graph, fake),
                    "digits": [
                        round(digit_share([n["name"] for n in real]), 3),
                        round(digit_share([n["name"] for n in fake]), 3),
                    ],
                    "top_first_word": [top_first_word(real), top_first_word(fake)],
                    "near_misses": [round(share, 3), n_abstain],
                    "warnings": made["warnings"],
                    "pseudonyms": renamed,
                }
                if len(real) >= 200 and len(fake) >= 50:
                    row["auc"] = {
                        k: round(v, 3)
                        for k, v in cross_validated_auc([n["name"] for n in real], [n["name"] for n in fake]).items()
                    }
                if twin_made is not None:
                    row["cross_graph_auc"] = round(
                        cross_graph_auc(
                            ([n["name"] for n in real], [n["name"] for n in fake]),
                            ([n["name"] for n in twin["nodes"]], [n["name"] for n in twin_made[size]]),
                        ),
                        3,
                    )
                rows.append(row)
    return rows


def cross(row: dict) -> str:
    return f"{row['cross_graph_auc']:.2f}" if "cross_graph_auc" in row else "(no twin)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--only", default="", metavar="TEXT", help="only the graphs whose name holds TEXT ('stand-in', 'people')"
    )
    args = parser.parse_args(argv)
    rows = measure(args.only)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    print(
        "| graph | size | real / distractor nodes | digits real / distractors | top first word real / distractors | "
        "n-gram AUC (NB; LR) | cross-graph AUC (NB) | made-up one-word distractors | near-miss abstentions |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        (real_top, real_word), (fake_top, fake_word) = r["top_first_word"]
        aucs = "; ".join(f"{v:.2f}" for v in r.get("auc", {}).values()) or "(under 200 nodes)"
        print(
            f"| {r['graph']} | {r['size']} | {r['real']:,} / {r['distractors']:,} | {r['digits'][0]:.2f} / "
            f"{r['digits'][1]:.2f} | "
            f"{real_top:.2f} ({real_word}) / {fake_top:.2f} ({fake_word}) | {aucs} | {cross(r)} | "
            f"{r['made_up_one_word'][0]} of {r['made_up_one_word'][1]} | "
            f"{r['near_misses'][0]:.2f} of {r['near_misses'][1]} |"
        )
    for r in rows[::2]:  # the warnings of one run, shared by its two sizes
        for w in r["warnings"]:
            print(f"- {r['graph']}: {w.removeprefix('warning: ')}")
    print()
    print(
        "| graph | entities | n-gram AUC, real names against their pseudonyms (NB; LR) | cross-graph AUC (NB) | "
        "made-up one-word pseudonyms | same number of words | same shape (multi-word) | keeps a word of its own | "
        "entities renamed differently between sizes | 'may still name' warnings |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows[::2]:
        p = r["pseudonyms"]
        aucs = "; ".join(f"{v:.2f}" for v in p.get("auc", {}).values()) or "(under 200 nodes)"
        print(
            f"| {r['graph']} | {p['entities']:,} | {aucs} | {cross(p)} | {p['made_up_one_word'][0]} of "
            f"{p['made_up_one_word'][1]} | "
            f"{p['same_word_count']:.2f} | {p['same_shape']:.2f} | {p['keeps_own_word']:.2f} | "
            f"{p['changed_between_sizes']} | {p['warnings']} |"
        )
    for r in rows[::2]:
        for line in r["pseudonyms"]["fallbacks"]:
            print(f"- {r['graph']}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
