"""The lines of a logged-prompts file, one request each.

In: --from-prompts FILE, JSON Lines (UTF-8), each line one of
  - an OpenAI chat request body, as a proxy or a tracing tool records it:
    {"model": ..., "messages": [{"role", "content"}]}
    (content a string, or a list of {"type": "text", "text": ...} parts);
  - the same wrapped as the Batch API's input or a proxy's log wraps it: {"custom_id": ..., "body": {...}} or
    {"request": {...}};
  - {"question": ..., "prompt": ...}: the text sent, as one user message.
Out: Logged per line (its id, question, messages), or Unread with the reason; a blank line is skipped. Lines are read
one at a time (memory holds one), each at most MAX_LINE_BYTES.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from benchmark import BenchmarkError, display

MAX_LINE_BYTES = 64_000_000  # one logged request: far beyond any context window, short of filling the memory


@dataclass(frozen=True)
class Logged:
    """One logged request: where it is, its id, the question asked, and the messages sent (role, text)."""

    line: int  # 1-based line of the file
    id: str  # the line's "id" or "custom_id", else "line N"
    question: str  # its "question", else the last user message
    messages: tuple[tuple[str, str], ...]
    model: str | None = None  # the model the request named


@dataclass(frozen=True)
class Unread:
    """A line that is not a logged request, and why."""

    line: int
    id: str
    reason: str


def _text(content: object, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        texts = [p.get("text") for p in content if p.get("type") in ("text", "input_text")]
        if all(isinstance(t, str) for t in texts):
            return "".join(texts)
    raise ValueError(f"{where}'s content is neither text nor a list of text parts")


def parse_line(line_no: int, raw: bytes) -> Logged | Unread | None:
    """One line of the file: a Logged request, Unread with the reason, or None for a blank line."""
    if not raw.strip():
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as e:
        return Unread(line_no, f"line {line_no}", f"not JSON ({str(e)[:80]})")
    if not isinstance(data, dict):
        return Unread(line_no, f"line {line_no}", "not a JSON object")
    given_id = data.get("id", data.get("custom_id"))
    line_id = given_id if isinstance(given_id, str) and given_id.strip() else f"line {line_no}"
    body = data.get("body", data.get("request", data))
    try:
        if isinstance(body, dict) and isinstance(body.get("messages"), list):
            messages = tuple(
                (str(m.get("role", "user")), _text(m.get("content"), f"message {k + 1}"))
                for k, m in enumerate(body["messages"])
                if isinstance(m, dict)
            )
            if len(messages) != len(body["messages"]):
                raise ValueError("a message is not an object")
        elif isinstance(data.get("prompt"), str):
            messages = (("user", data["prompt"]),)
        else:
            return Unread(line_no, line_id, 'neither a chat request ("messages") nor {"question", "prompt"}')
    except ValueError as e:
        return Unread(line_no, line_id, str(e))
    if not messages:
        return Unread(line_no, line_id, "no messages")
    question = data.get("question")
    if not isinstance(question, str):
        question = next((text for role, text in reversed(messages) if role == "user"), messages[-1][1])
    model = body.get("model") if isinstance(body, dict) and isinstance(body.get("model"), str) else None
    return Logged(line_no, line_id, question, messages, model)


def raw_lines(path: Path) -> Iterator[tuple[int, bytes | Unread]]:
    """Each line of the file, in order, read one at a time: its number and its bytes, or Unread for one too long."""
    where = display(path)
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise BenchmarkError(
            f"--from-prompts {where}: no such file; give the JSON Lines file your framework's prompts were logged to"
        ) from None
    except OSError as e:
        raise BenchmarkError(
            f"--from-prompts {where}: cannot read it ({e.strerror or e}); give a readable file"
        ) from None
    if not path.is_file():
        f.close()
        raise BenchmarkError(
            f"--from-prompts {where}: not a regular file; give the JSON Lines file your prompts were logged to"
        )
    with f:
        for line_no, raw in enumerate(iter(lambda: f.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(raw) > MAX_LINE_BYTES:
                while raw and not raw.endswith(b"\n"):  # the rest of the line, read and let go a piece at a time
                    raw = f.readline(MAX_LINE_BYTES)
                yield line_no, Unread(line_no, f"line {line_no}", f"over {MAX_LINE_BYTES:,} bytes")
                continue
            yield line_no, raw


def read_log(path: Path) -> Iterator[Logged | Unread]:
    """Each line of the file, in order, parsed; blank lines skipped."""
    for line_no, raw in raw_lines(path):
        parsed = raw if isinstance(raw, Unread) else parse_line(line_no, raw)
        if parsed is not None:
            yield parsed
