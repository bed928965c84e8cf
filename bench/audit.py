"""The hand audit of real answers: the tool's judgement of each answer beside the one written by hand.

    $ python bench/audit.py bench/real/audit.tsv RUN_DIR [RUN_DIR ...]

Each RUN_DIR is a model run's --out (its requests.jsonl and results.json). audit.tsv has one line per audited answer:
model, prompt SHA-256 prefix (12 hex), format, question, and the hand judgement: answer right (1/0, - for an
abstention question), path exact (1/0/-), abstained (1/0), parsed (1/0), diagnosis (or '-' for fully right), and a
note. The script prints the table the bench README shows (answer text cut, path, evidence shown/not shown/reversed,
hand and tool judgements, agreement) and the agreement rate. With --draft it writes a draft audit.tsv of every answer
in the runs, hand columns empty, to be filled in by hand (never from the tool's columns).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from graphrag_format_benchmark import scoring  # noqa: E402

FIELDS = ("answer_correct", "path_exact", "abstained", "parse_success", "diagnosis")


def answers(run: Path) -> list[dict]:
    """Every answered cell of a run: the log's text beside results.json's scores."""
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    model = results["model"]["model"] if isinstance(results.get("model"), dict) else results.get("model")
    cells = {(c["prompt_sha256"], c["repeat"]): c for c in results["cells"]}
    rows = []
    logged = Path(results["log"]["name"])  # a --score run names the log it read
    for line in (logged if logged.is_file() else run / "requests.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("type") != "request" or r.get("error"):
            continue
        cell = cells.get((r["prompt_sha256"], r["repeat"]))
        if cell is None or cell["status"] != "OK":
            continue
        content = r["response"]["choices"][0]["message"]["content"]
        rows.append(
            {
                "model": model,
                "sha": r["prompt_sha256"][:12],
                "format": r["format"],
                "question": r["question_id"],
                "permutation": r["permutation"],
                "content": content,
                "cell": cell,
            }
        )
    return rows


def flag(value: object) -> str:
    return "-" if value is None else "1" if value is True else "0" if value is False else str(value)


def evidence_note(content: str) -> str:
    parsed = scoring.parse_answer(content)
    if parsed is None:
        return ""
    return f"path {json.dumps(parsed.path)}, {len(parsed.evidence)} evidence item(s)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audit", type=Path)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--draft", action="store_true")
    args = parser.parse_args(argv)
    rows = [row for run in args.runs for row in answers(run)]
    if args.draft:
        with open(args.audit, "w", encoding="utf-8") as f:
            f.write("model\tsha\tformat\tquestion\tanswer_right\tpath_exact\tabstained\tparsed\tdiagnosis\tnote\n")
            for row in rows:
                f.write(f"{row['model']}\t{row['sha']}\t{row['format']}\t{row['question']}\t\t\t\t\t\t\n")
        print(f"{len(rows)} answers -> {args.audit}")
        return 0
    hand = {}
    for line in args.audit.read_text(encoding="utf-8").splitlines()[1:]:
        model, sha, _, _, right, exact, abstained, parsed, diagnosis, *note = line.split("\t")
        hand[(model, sha)] = (right, exact, abstained, parsed, diagnosis, note[0] if note else "")
    agree = judged = 0
    print(
        "| model | format | q | answer (cut) | path, evidence | hand: right/exact/abst/parse, diagnosis | tool | agree "
        "|"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        mine = hand.get((row["model"], row["sha"]))
        if mine is None or not mine[4]:
            continue
        cell = row["cell"]
        tool = (
            flag(cell["answer_correct"] if not cell["insufficient"] else None),
            flag(cell["path_exact"]),
            flag(cell["abstained"]),
            flag(cell["parse_success"]),
            cell["diagnosis"] or "-",
        )
        same = tool == mine[:5]
        judged += 1
        agree += same
        text = " ".join(row["content"].split())
        parsed = scoring.parse_answer(row["content"])
        said = parsed.answer if parsed else text[:40]
        print(
            f"| {row['model']} | {row['format']} | {row['question']} | {said[:30]} | {evidence_note(row['content'])} | "
            f"{'/'.join(mine[:4])}, {mine[4]}{' (' + mine[5] + ')' if mine[5] else ''} | {'/'.join(tool[:4])}, "
            f"{tool[4]} | "
            f"{'yes' if same else 'NO'} |"
        )
    print(
        f"\n{agree} of {judged} audited answers judged alike ({agree / judged:.1%})"
        if judged
        else "nothing audited yet"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
