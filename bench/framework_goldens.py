"""The frameworks' own contexts for fixture subgraphs, as golden files: the proof that our layouts are their bytes.

    $ python bench/framework_goldens.py                 # all five frameworks, into tests/golden/frameworks/
    $ python bench/framework_goldens.py --only lightrag --venvs /tmp/fw

For each framework, a venv of its own (under --venvs, default bench/.framework-venvs/, never the project's venv and
never CI) gets the framework at its pinned version (FRAMEWORKS); each fixture's store is written by
bench/framework_stores.py (the same bytes every time), and bench/framework_drivers.py, run with that venv's Python,
builds the context with the framework's own code. What it printed lands, unchanged, in
tests/golden/frameworks/FIXTURE/LAYOUT.txt, and the whole request the framework sends (its messages, the context in
its own prompt) in FIXTURE/LAYOUT.request.json; VERSIONS.json says which versions made them (pip freeze of each venv).
tests/test_framework_goldens.py reads the same stores with our readers and compares our layouts with these bytes.
Needs the package index (pip) the first time; about 3 minutes and 2.5 GB of venvs.
"""

from __future__ import annotations

import argparse
import json
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


def fixtures() -> dict[str, tuple[list, list] | Path]:
    """fixture -> its (entities, relations) records, or a graph.json to use as it is (the article's graph: typed,
    directed, ids that are not names; for the Neo4j layouts only)."""
    entities, relations = framework_stores.large_records(n_people=8, seed=3)
    return {
        "small": (framework_stores.ENTITIES, framework_stores.RELATIONS),
        "hostile": (framework_stores.HOSTILE_ENTITIES, framework_stores.HOSTILE_RELATIONS),
        "medium": (entities, relations),
        "article": ROOT / "data" / "graph.json",
    }


def write_fixture(folder: Path, fixture: tuple[list, list] | Path) -> list[str]:
    """The fixture's stores in folder; the frameworks that can read them."""
    if isinstance(fixture, Path):
        folder.mkdir(parents=True)
        shutil.copyfile(fixture, folder / "graph.json")
        return ["langchain", "neo4j_graphrag"]
    for kind in ("lightrag", "graphrag", "llamaindex", "neo4j"):
        framework_stores.MAKERS[kind](folder, *fixture)
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
            for framework in (f for f in chosen if f in readers):
                python = venv(args.venvs, framework)
                done = subprocess.run(
                    [str(python), str(HERE / "framework_drivers.py"), framework, str(folder)],
                    capture_output=True,
                    text=True,
                    encoding="utf-8",
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
