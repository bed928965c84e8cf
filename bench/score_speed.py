"""Time and peak memory of --score on a 100,800-line Batch API output, against the same command's offline part.

    $ python bench/score_speed.py --rounds 3

The article's graph and questions at --permutations 168 make 5,040 distinct prompts; --repeats 20 makes
100,800 requests. The control solver answers them once (requests.jsonl), and its answers become a Batch
output file (98%: chat completions from a dated snapshot; a quarter of the repeats cite the solver's path,
the others that path reversed, one edge short or one edge more; every answer text distinct, so that no
answer is scored from another's; completion tokens that vary) and an error file (2%: server errors), as the
Batch API returns them. Then, side by side in fresh processes, in alternating order:

    benchmark.py --permutations 168 --no-write-prompts --out A                       # the offline part
    benchmark.py --permutations 168 --no-write-prompts --model gpt-x --repeats 20 --score OUTPUT ERRORS --out B

Prints each round's wall time and peak RSS (from /usr/bin/time) and the medians; "beyond" is the score's
wall time minus the offline part's in the same round. Each round also times the floor, in a fresh process of its own:
the least work any scorer of these files must do on one core, decoding every Batch line's JSON (with the scorer's
decoder: msgspec where installed) and encoding and writing a 35-field result row per line (FLOOR); "beyond / floor"
is the machine-independent figure. The budget (#56): the one-process score at most 1.2x the two-process code's
(paired, farm-bench) and 2x the floor.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--permutations", "168", "--no-write-prompts"]
MODEL = ["--model", "gpt-x", "--repeats", "20"]


FLOOR = """
import json, sys
try:  # the decoder the scorer uses (the models extra), else json's
    import msgspec
    loads = msgspec.json.Decoder().decode
except ImportError:
    loads = json.loads
encode = json.JSONEncoder(ensure_ascii=False).encode
texts = ("encoding", "size", "ids", "mode", "format", "question_id", "prompt_sha256", "status", "hops")
numbers = ("permutation", "prompt_tokens", "repeat", "usage_prompt_tokens", "usage_cached_tokens")
flags = ("insufficient", "parse_success", "json_as_asked", "abstained", "answer_correct", "false_abstention",
         "path_exact", "valid_path", "evidence_match", "path_supports_answer", "right_answer_wrong_path",
         "truncated_by_server", "over_output_cap")
row = {**dict.fromkeys(texts, "x" * 12), **dict.fromkeys(numbers, 1234), **dict.fromkeys(flags, True)}
row.update(edge_precision=0.6666666666666666, edge_recall=0.75, latency_s=None, retry_wait_s=0.0, diagnosis=None,
           error=None)
with open(sys.argv[3], "w", encoding="utf-8") as out:
    for path in sys.argv[1:3]:
        with open(path, "rb") as f:
            for line in f:
                r = loads(line)
                body = (r.get("response") or {}).get("body") or {}
                choice = (body.get("choices") or [{}])[0]
                usage = body.get("usage") or {}
                cell = {**row, "question_id": r["custom_id"], "usage_completion_tokens": usage.get("completion_tokens"),
                        "finish_reason": choice.get("finish_reason")}
                out.write("    " + encode(cell) + ",\\n")
"""


def floor_seconds(output: Path, errors: Path, tmp: Path) -> float:
    """Wall seconds of FLOOR in a fresh process."""
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%e", sys.executable, "-c", FLOOR, str(output), str(errors), str(tmp / "floor.out")],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"the floor failed: {done.stderr[-2000:]}")
    return float(done.stderr.strip().splitlines()[-1])


def timed(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS in MiB of one fresh process."""
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M", sys.executable, str(ROOT / "benchmark.py"), *argv],
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 1):
        sys.exit(f"benchmark.py failed ({done.returncode}): {done.stderr[-2000:]}")
    wall, kib = done.stderr.strip().splitlines()[-1].split()
    return float(wall), int(kib) // 1024


def batch_files(tmp: Path) -> tuple[Path, Path]:
    solver = tmp / "solver"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmark.py"),
            *FLAGS,
            "--model",
            "solver",
            "--repeats",
            "20",
            "--out",
            str(solver),
        ],
        check=True,
        capture_output=True,
    )
    output, errors = tmp / "output.jsonl", tmp / "errors.jsonl"
    with (
        open(solver / "requests.jsonl", encoding="utf-8") as log,
        open(output, "w", encoding="utf-8") as out,
        open(errors, "w", encoding="utf-8") as err,
    ):
        for n, line in enumerate(log):
            r = json.loads(line)
            if r.get("type") != "request":
                continue
            custom_id = f"{r['prompt_sha256'][:40]}-r{r['repeat']}"
            if n % 50 == 7:
                err.write(
                    json.dumps(
                        {
                            "id": f"batch_req_{n}",
                            "custom_id": custom_id,
                            "response": None,
                            "error": {"code": "server_error", "message": "The server had an error."},
                        }
                    )
                    + "\n"
                )
                continue
            answer = json.loads(r["content"])
            # repeats that cite other paths: the solver's, reversed, one edge short, one edge more
            variant = r["repeat"] % 4
            answer["path"] = [answer["path"], answer["path"][::-1], answer["path"][:-1], answer["path"] + [0]][variant]
            content = json.dumps(answer, ensure_ascii=False) + " " * r["repeat"]  # and no two answer texts alike
            body = {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion",
                "created": 1764000000,
                "model": "gpt-x-2024-08-06",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content, "refusal": None},
                        "logprobs": None,
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": 700,
                    "completion_tokens": 40 + 3 * r["repeat"],
                    "total_tokens": 740 + 3 * r["repeat"],
                    "prompt_tokens_details": {"cached_tokens": 512},
                },
                "system_fingerprint": "fp_0",
            }
            out.write(
                json.dumps(
                    {
                        "id": f"batch_req_{n}",
                        "custom_id": custom_id,
                        "response": {"status_code": 200, "request_id": f"req_{n}", "body": body},
                        "error": None,
                    }
                )
                + "\n"
            )
    return output, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        output, errors = batch_files(tmp)
        lines = sum(output.read_bytes().count(b"\n") for output in (output, errors))
        print(f"{lines:,} Batch lines ({output.stat().st_size / 1e6:.0f} MB of output)", file=sys.stderr)
        beyond, offline_rss, score_rss, floors = [], [], [], []
        for round_ in range(args.rounds):
            runs = {}
            for name in ("offline", "score") if round_ % 2 == 0 else ("score", "offline"):
                extra = [*MODEL, "--score", str(output), str(errors)] if name == "score" else []
                runs[name] = timed([*FLAGS, *extra, "--out", str(tmp / f"{name}{round_}")])
            beyond.append(runs["score"][0] - runs["offline"][0])
            floors.append(floor_seconds(output, errors, tmp))
            offline_rss.append(runs["offline"][1])
            score_rss.append(runs["score"][1])
            print(
                f"round {round_ + 1}: offline part {runs['offline'][0]:.2f} s ({runs['offline'][1]} MiB), score "
                f"{runs['score'][0]:.2f} s "
                f"({runs['score'][1]} MiB): {beyond[-1]:.2f} s beyond the offline part; floor {floors[-1]:.2f} s, "
                f"beyond / floor {beyond[-1] / floors[-1]:.2f}",
                file=sys.stderr,
            )
        print(
            f"median of {args.rounds}: {statistics.median(beyond):.2f} s beyond the offline part (range "
            f"{min(beyond):.2f}-"
            f"{max(beyond):.2f}), peak RSS {statistics.median(score_rss)} MiB (offline part "
            f"{statistics.median(offline_rss)} MiB); "
            f"floor {statistics.median(floors):.2f} s, beyond / floor "
            f"{statistics.median(b / f for b, f in zip(beyond, floors)):.2f} "
            "(range "
            f"{min(b / f for b, f in zip(beyond, floors)):.2f}-{max(b / f for b, f in zip(beyond, floors)):.2f})",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
