"""README.md, docs/ and bench/README.md: every relative link points at a file that exists and, with an anchor, at a
heading of that file (GitHub's anchors: lower case, punctuation but '-' and '_' dropped, spaces as '-')."""

import re
from pathlib import Path

import pytest

from conftest import ROOT

DOCS = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")  # a code fence opens a line (CommonMark); ```` ```json ```` inline does not


def prose(path: Path) -> list[str]:
    """A Markdown file's lines outside its fenced code blocks: a fence is closed by a line of the same character, at
    least as long, and nothing after it."""
    lines, fence = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        opened = FENCE.match(line)
        if not fence and opened:
            fence = opened[1]
        elif (
            fence
            and opened
            and opened[1][0] == fence[0]
            and len(opened[1]) >= len(fence)
            and not line[opened.end() :].strip()
        ):
            fence = ""
        elif not fence:
            lines.append(line)
    return lines


def anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of a Markdown file's headings (a repeated heading gets -1, -2...)."""
    seen: dict[str, int] = {}
    out = set()
    for line in prose(path):
        if not re.match(r"#{1,6} ", line):
            continue
        text = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        k = seen.get(text, 0)
        out.add(text if k == 0 else f"{text}-{k}")
        seen[text] = k + 1
    return out


def links(path: Path) -> list[str]:
    text = "\n".join(prose(path))
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_of_the_docs_reaches_a_file_and_a_heading(doc):
    broken = []
    for target in links(doc):
        file_part, _, anchor = target.partition("#")
        linked = (doc.parent / file_part).resolve() if file_part else doc
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no such heading")
    assert broken == []


def test_the_link_check_finds_a_broken_file_and_a_broken_heading(tmp_path):
    (tmp_path / "a.md").write_text(
        "# Real heading: its (parts)\n[ok](#real-heading-its-parts) [gone](b.md) [no](#nowhere)\n", encoding="utf-8"
    )
    assert links(tmp_path / "a.md") == ["#real-heading-its-parts", "b.md", "#nowhere"]
    assert anchors(tmp_path / "a.md") == {"real-heading-its-parts"}


def test_an_inline_fence_is_no_code_block_and_hides_no_link(tmp_path):
    """docs/model-runs.md quotes ```` ```json ```` inline: read as a fence, it hid a broken link 60 lines on."""
    (tmp_path / "a.md").write_text(
        "the first block (```` ```json ````) is read\n[one](gone.md)\n\n"
        "```bash\n[not a link](x.md)\n# no heading\n```\n"
        "~~~~\n```\n[still code](y.md)\n~~~~\n## After\n[two](#after)\n",
        encoding="utf-8",
    )
    assert links(tmp_path / "a.md") == ["gone.md", "#after"]
    assert anchors(tmp_path / "a.md") == {"after"}
