"""The frameworks' own stores and contexts for fixture subgraphs, as golden files: the proof that our layouts are their
bytes, on stores their own storage code wrote.

    $ python bench/framework_goldens.py                 # all five frameworks, into tests/golden/frameworks/
    $ python bench/framework_goldens.py --only lightrag --venvs /tmp/fw

For each framework, a venv of its own (under --venvs, default bench/.framework-venvs/, never the project's venv and
never CI) gets the framework at its pinned version (FRAMEWORKS). Each fixture's records (bench/framework_stores.py) go
to records.json; bench/framework_drivers.py, run with each framework's venv, writes the framework's store with the
framework's own storage code (GraphRAG's finalize_graph and parquet tables, LightRAG's NetworkXStorage, LlamaIndex's
PropertyGraphIndex and SimplePropertyGraphStore.persist; a Neo4j graph.json is ours: the drivers make neo4j's own
Records of it), kept in tests/golden/frameworks/FIXTURE/store/; then it builds each context with the framework's own
code from that store. What it printed lands, unchanged, in FIXTURE/LAYOUT.txt, and the whole request the framework
sends (its messages, the context in its own prompt) in FIXTURE/LAYOUT.request.json; VERSIONS.json says which versions
made them (pip freeze of each venv). tests/test_framework_goldens.py reads the kept stores with our readers and
compares our layouts with these bytes. Needs the package index (pip) the first time; about 3 minutes and 2.5 GB of
venvs. PYTHONHASHSEED is fixed for the drivers: LlamaIndex keeps its triplets in a set, persisted in hash order.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import framework_stores  # noqa: E402

ROOT = HERE.parent
GOLDEN = ROOT / "tests" / "golden" / "frameworks"
# framework -> the pins its venv is made with (its own package, and the driver whose repr a layout is)
FRAMEWORKS = {
    "graphrag": ("graphrag==3.3.0",),
    "lightrag": ("lightrag-hku==1.5.7",),
    "llamaindex": ("llama-index-core==0.14.25",),
    "langchain": ("langchain-neo4j==0.11.0", "langchain-core==1.8.3", "neo4j==6.4.1"),
    "neo4j_graphrag": ("neo4j-graphrag==1.22.0", "neo4j==6.4.1"),
}
# the store each framework reads from a fixture's folder
READS = {
    "graphrag": "graphrag",
    "lightrag": "lightrag",
    "llamaindex": "llamaindex",
    "langchain": "neo4j",
    "neo4j_graphrag": "neo4j",
}


def fixtures() -> dict[str, tuple[list, list, dict] | Path]:
    """fixture -> its (entities, relations, document metadata) records, or a graph.json to use as it is (the article's
    graph: typed, directed, ids that are not names; for the Neo4j layouts only)."""
    entities, relations = framework_stores.large_records(n_people=8, seed=3)
    return {
        "small": (framework_stores.ENTITIES, framework_stores.RELATIONS, {}),
        "hostile": (framework_stores.HOSTILE_ENTITIES, framework_stores.HOSTILE_RELATIONS, {}),
        "medium": (entities, relations, {}),
        "awkward": (
            framework_stores.AWKWARD_ENTITIES,
            framework_stores.AWKWARD_RELATIONS,
            framework_stores.AWKWARD_METADATA,
        ),
        "article": ROOT / "data" / "graph.json",
    }


STORE_KINDS = {"graphrag": "graphrag", "lightrag": "lightrag", "llamaindex": "llamaindex"}  # framework -> store written


def write_fixture(folder: Path, fixture: tuple[list, list, dict] | Path) -> list[str]:
    """The fixture's records in folder (records.json, and the Neo4j graph.json, which is ours); the frameworks that
    can read them."""
    (folder / "neo4j").mkdir(parents=True)
    if isinstance(fixture, Path):
        shutil.copyfile(fixture, folder / "neo4j" / "graph.json")
        return ["langchain", "neo4j_graphrag"]
    entities, relations, metadata = fixture
    records = {"entities": entities, "relations": relations, "file_name": "papers/lamport.txt", "metadata": metadata}
    (folder / "records.json").write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
    framework_stores.neo4j_graph(folder / "neo4j", entities, relations, metadata)
    return list(FRAMEWORKS)


def venv(root: Path, framework: str) -> Path:
    """The venv's Python, the framework installed at its pins (made once)."""
    python = root / framework / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(root / framework)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *FRAMEWORKS[framework]],
            check=True,
        )
    return python


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--venvs", type=Path, default=HERE / ".framework-venvs", help="where the frameworks' venvs are made"
    )
    parser.add_argument("--only", choices=FRAMEWORKS, action="append", help="these frameworks only (repeatable)")
    parser.add_argument("--out", type=Path, default=GOLDEN)
    args = parser.parse_args(argv)
    chosen = args.only or list(FRAMEWORKS)
    versions_file = args.out / "VERSIONS.json"
    versions = json.loads(versions_file.read_text(encoding="utf-8")) if versions_file.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, fixture in fixtures().items():
            folder = Path(tmp) / name
            readers = write_fixture(folder, fixture)
            store = args.out / name / "store"
            if (store / "neo4j").exists():
                shutil.rmtree(store / "neo4j")
            shutil.copytree(folder / "neo4j", store / "neo4j")
            for framework in (f for f in chosen if f in readers):
                python = venv(args.venvs, framework)
                env = {**os.environ, "PYTHONHASHSEED": "0"}
                drive = [str(python), str(HERE / "framework_drivers.py")]
                if framework in STORE_KINDS:  # its store, by its own storage code, kept beside the goldens
                    made = subprocess.run(
                        [*drive, "store", framework, str(folder)], capture_output=True, text=True, env=env
                    )
                    if made.returncode != 0:
                        print(made.stderr[-3000:], file=sys.stderr)
                        return 1
                    if (store / STORE_KINDS[framework]).exists():
                        shutil.rmtree(store / STORE_KINDS[framework])
                    shutil.copytree(folder / STORE_KINDS[framework], store / STORE_KINDS[framework])
                done = subprocess.run(
                    [*drive, framework, str(folder)], capture_output=True, text=True, encoding="utf-8", env=env
                )
                if done.returncode != 0:
                    print(done.stderr[-3000:], file=sys.stderr)
                    return 1
                for layout, text in json.loads(done.stdout).items():
                    if layout.startswith("prompt:"):  # the whole request the framework sends: its messages
                        path, text = (
                            args.out / name / f"{layout[7:]}.request.json",
                            json.dumps({"messages": text}, ensure_ascii=False, indent=1),
                        )
                    else:
                        path = args.out / name / f"{layout}.txt"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(text.encode("utf-8"))
                    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {len(text):,} characters")
    for framework in chosen:
        freeze = subprocess.run(
            [str(venv(args.venvs, framework)), "-m", "pip", "freeze"], capture_output=True, text=True, check=True
        )
        versions[framework] = {
            "pins": list(FRAMEWORKS[framework]),
            "python": subprocess.run(
                [str(venv(args.venvs, framework)), "-c", "import sys; print(sys.version.split()[0])"],
                capture_output=True,
                text=True,
            ).stdout.strip(),
            "freeze": sorted(freeze.stdout.split()),
        }
    args.out.mkdir(parents=True, exist_ok=True)
    versions_file.write_text(json.dumps(dict(sorted(versions.items())), indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
