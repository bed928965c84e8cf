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
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from .._article import BenchmarkError, display
from .traces import NotCall as TraceNotCall, trace_records

MAX_LINE_BYTES = 64_000_000  # one logged request: far beyond any context window, short of filling the memory


@dataclass(frozen=True)
class Logged:
    """One logged request: where it is, its id, the question asked, and the messages sent (role, text)."""

    line: int  # 1-based line of the file
    id: str  # the line's "id" or "custom_id", else "line N"
    question: str  # its "question", else the last user message
    messages: tuple[tuple[str, str], ...]
    model: str | None = None  # the model the request named
    # parts of a message that are not text (an image, audio, a file), by type: counted in no prompt, and a request
    # that holds any is not sent again (it would go without them)
    other_parts: tuple[str, ...] = ()
    answer: str | None = None  # the answer a trace logged beside the prompt (None: a request body has none)
    source: str = "request"  # where it was read from (traces.SOURCES)


@dataclass(frozen=True)
class NotCall:
    """A trace record that is no LLM call (a retrieval span, a chain run): skipped and counted, by its kind."""

    line: int
    id: str
    kind: str


@dataclass(frozen=True)
class Unread:
    """A line that is not a logged request, and why."""

    line: int
    id: str
    reason: str
    source: str = "request"


TEXT_PARTS = ("text", "input_text", "output_text")


def _text(content: object, where: str, others: list[str]) -> str:
    """A message's text: its content, the text parts of a list of parts (the others' types noted in others), or ""
    for none (an assistant's tool call has content null)."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        texts = [p.get("text") for p in content if p.get("type") in TEXT_PARTS]
        if all(isinstance(t, str) for t in texts):
            others += [str(p.get("type")) for p in content if p.get("type") not in TEXT_PARTS]
            return "".join(cast(list[str], texts))
    raise ValueError(f"{where}'s content is neither text nor a list of text parts")


def _body(data: dict[str, Any]) -> object:
    """The request a line holds: its "body" or "request" (the Batch API's input, a proxy's log), else the line."""
    for key in ("body", "request"):
        if isinstance(data.get(key), dict):
            return data[key]
    return data


def _unencodable(values: list[str]) -> str | None:
    """The first lone surrogate in values ('U+D800'), which no UTF-8 request can hold, or None."""
    for value in values:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            return f"U+{ord(value[e.start]):04X}"
    return None


# where the frameworks' templates put the user's query: LlamaIndex's text QA ("Query: ...\nAnswer: "), LangChain's
# Cypher QA ("Question: ...\nHelpful Answer:"), neo4j-graphrag's RAG template ("Question:\n...\n\nAnswer:")
QUERY_IN_TEMPLATE = (
    re.compile(r"\nQuery: (.+)\nAnswer: ?$"),
    re.compile(r"\nQuestion: (.+)\nHelpful Answer: ?$"),
    re.compile(r"\nQuestion:\n(.+?)\n\nAnswer:\n?$", re.S),
)


def asked(text: str) -> str:
    """The question a user message asks: the query a framework's template wraps, else the message itself."""
    tail = text[-4000:]  # the query ends the template: a long context before it is not searched
    for pattern in QUERY_IN_TEMPLATE:
        m = pattern.search(tail)
        if m:
            return m.group(1)
    return text


def parse_line(line_no: int, raw: bytes) -> list[Logged | Unread | NotCall]:
    """The requests of one line of the file: a request body (or {"question", "prompt"}) is one Logged request, a trace
    line as many as the LLM calls it holds (traces.py), each record that is no LLM call a NotCall; Unread with the
    reason for a line that is none of these; nothing for a blank line."""
    if not raw.strip():
        return []
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as e:
        return [Unread(line_no, f"line {line_no}", f"not JSON ({str(e)[:80]})")]
    if not isinstance(data, dict):
        return [Unread(line_no, f"line {line_no}", "not a JSON object")]
    records = trace_records(data)
    if records is not None:
        return [
            NotCall(line_no, _id(r.id, line_no), r.kind)
            if isinstance(r, TraceNotCall)
            else _logged(line_no, _id(r.id, line_no), r.messages, None, r.model, r.answer, r.source)
            for r in records
        ] or [Unread(line_no, f"line {line_no}", "a trace line that holds no span")]
    line_id = _id(data.get("id", data.get("custom_id")), line_no)
    body, prompt = _body(data), data.get("prompt")
    given = body.get("messages") if isinstance(body, dict) else None
    if isinstance(given, list):
        messages = [(m.get("role", "user"), m.get("content")) if isinstance(m, dict) else None for m in given]
    elif isinstance(prompt, str):
        messages = [("user", prompt)]
    else:
        return [Unread(line_no, line_id, 'neither a chat request ("messages") nor {"question", "prompt"}')]
    model = body.get("model") if isinstance(body, dict) else None
    return [_logged(line_no, line_id, messages, data.get("question"), model, None, "request")]


def _id(given: object, line_no: int) -> str:
    """A record's id as logged.jsonl names it: its own when it is text UTF-8 can write, else 'line N'."""
    ok = isinstance(given, str) and given.strip() and _unencodable([given]) is None
    return cast(str, given) if ok else f"line {line_no}"


def _logged(
    line_no: int,
    line_id: str,
    given: list[Any],
    question: object,
    model: object,
    answer: str | None,
    source: str,
) -> Logged | Unread:
    """One request from its messages as a line gives them ((role, content) pairs; None for one that is no object)."""
    others = cast(list[str], [])
    try:
        if any(m is None for m in given):
            raise ValueError("a message is not an object")
        messages = tuple(
            (str(role), _text(content, f"message {k + 1}", others)) for k, (role, content) in enumerate(given)
        )
    except ValueError as e:
        return Unread(line_no, line_id, str(e), source)
    if not messages:
        return Unread(line_no, line_id, "no messages", source)
    if not any(text for _, text in messages):
        return Unread(line_no, line_id, "no message holds text", source)
    if not isinstance(question, str):
        question = asked(next((text for role, text in reversed(messages) if role == "user"), messages[-1][1]))
    bad = _unencodable([question, *(role for role, _ in messages), *(text for _, text in messages), answer or ""])
    if bad is not None:
        return Unread(
            line_no,
            line_id,
            f"a message holds the lone surrogate {bad}, which UTF-8 cannot encode: no API was sent such a request",
            source,
        )
    model = model if isinstance(model, str) and _unencodable([model]) is None else None
    return Logged(line_no, line_id, question, messages, model, tuple(dict.fromkeys(others)), answer, source)


BOMS = (  # byte order marks of the encodings a JSON Lines file is not in (UTF-8's own is read)
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def check_log_file(path: Path) -> None:
    """Refuse, before a byte is read, what is no JSON Lines file: a missing or unreadable path, a FIFO or a device (a
    read would wait, or never end), a file in UTF-16 or UTF-32, lines that end in a carriage return alone."""
    where = display(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise BenchmarkError(
            f"--from-prompts {where}: no such file; give the JSON Lines file your framework's prompts were logged to"
        ) from None
    except OSError as e:
        raise BenchmarkError(
            f"--from-prompts {where}: cannot read it ({e.strerror or e}); give a readable file"
        ) from None
    if not stat.S_ISREG(st.st_mode):
        raise BenchmarkError(
            f"--from-prompts {where}: not a regular file (a folder, a pipe or a device); give the JSON Lines file your "
            "prompts were logged to"
        )
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError as e:
        raise BenchmarkError(
            f"--from-prompts {where}: cannot read it ({e.strerror or e}); give a readable file"
        ) from None
    encoding = next((name for bom, name in BOMS if head.startswith(bom)), None)
    if encoding is None and head.count(b"\x00") > len(head) // 4:  # every other byte NUL: UTF-16 without its mark
        encoding = "UTF-16 or UTF-32"
    if encoding is not None:
        raise BenchmarkError(
            f"--from-prompts {where}: the file is in {encoding}; JSON Lines are UTF-8: convert it first (iconv -f "
            f"{encoding.split()[0]} -t UTF-8 {where} > log.jsonl)"
        )
    if b"\n" not in head and head.count(b"\r") > 1:
        raise BenchmarkError(
            f"--from-prompts {where}: its lines end in a carriage return alone (CR, no LF); JSON Lines end in LF: "
            f"convert it first (tr '\\r' '\\n' < {where} > log.jsonl)"
        )


def raw_lines(path: Path) -> Iterator[tuple[int, bytes | Unread]]:
    """Each line of the file, in order, read one at a time: its number and its bytes, or Unread for one too long."""
    check_log_file(path)
    with open(path, "rb") as f:
        for line_no, raw in enumerate(iter(lambda: f.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(raw) > MAX_LINE_BYTES:
                while raw and not raw.endswith(b"\n"):  # the rest of the line, read and let go a piece at a time
                    raw = f.readline(MAX_LINE_BYTES)
                yield line_no, Unread(line_no, f"line {line_no}", f"over {MAX_LINE_BYTES:,} bytes")
                continue
            yield line_no, raw
