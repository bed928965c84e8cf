"""LLM calls read out of trace exports: what teams log instead of request bodies.

In: one decoded JSON line of a --from-prompts file. Out: None when the line is no trace record (read.py reads it as a
request body), else a Call per LLM call it holds (its messages as (role, content) pairs, the answer logged beside them,
the model it named, and which source it came from) and a NotCall per record that is no LLM call (a retrieval span, a
chain run), so that every record is counted. The sources, told apart by their shapes:

- OpenTelemetry: a line as the Collector's file exporter writes it (OTLP JSON),
  {"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}; a span is an LLM call by the GenAI semantic conventions
  (gen_ai.input.messages, structured parts or a JSON string; the older gen_ai.prompt.{i}.role and .content) or
  OpenInference's (Arize Phoenix: span kind LLM, llm.input_messages.{i}.message.role and .content). The answer:
  gen_ai.output.messages, gen_ai.completion.{i}.content, llm.output_messages.{i}.message.content.
- A span a line of its own, its attributes a map, nested or dotted (Phoenix's span export): read as above.
- Langfuse: an observation (type GENERATION: input a message list, output its answer; other types are no call).
- LangSmith: a run (run_type llm: inputs.messages, as LangChain serializes messages or as the OpenAI client sends them;
  outputs.generations or outputs.choices).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SOURCES = {  # a Call's source -> how results.md names it
    "request": "request bodies",
    "gen_ai": "OpenTelemetry spans (GenAI conventions)",
    "openinference": "OpenInference spans (Arize Phoenix)",
    "langfuse": "Langfuse observations",
    "langsmith": "LangSmith runs",
}
ROLES = {
    "human": "user",
    "ai": "assistant",
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "function",
    "ChatMessage": "user",
}


@dataclass(frozen=True)
class Call:
    """One LLM call of a trace: its id, its messages (role, content as the source has it), the answer logged beside
    them (None when the trace holds none), the model it named, its source (SOURCES)."""

    id: str
    messages: list[tuple[str, object]]
    answer: str | None
    model: str | None
    source: str


@dataclass(frozen=True)
class NotCall:
    """A trace record that is no LLM call (a retrieval span, a chain run, a Langfuse SPAN): skipped and counted."""

    id: str
    kind: str


@dataclass(slots=True, frozen=True)
class TraceSpan:
    """A span as read out of its line, whichever shape the line had."""

    name: object  # its name, as logged (None: none)
    id: object  # its span id, as logged (None: none)
    attributes: dict[str, Any]  # its attributes as a flat map: dotted key -> Python value


def trace_records(data: dict[str, Any]) -> list[Call | NotCall] | None:
    """The LLM calls and other records of a trace line; None when the line is no trace record."""
    if isinstance(data.get("resourceSpans"), list):
        return [_span(span) for span in _otlp_spans(data)]
    if isinstance(data.get("attributes"), dict) and ("span_kind" in data or "context" in data or "span_id" in data):
        return [_span(TraceSpan(data.get("name"), _span_id(data), _flat(data["attributes"])))]
    if isinstance(data.get("type"), str) and "input" in data and ("traceId" in data or "trace_id" in data):
        return [_langfuse(data)]
    if isinstance(data.get("run_type"), str) and isinstance(data.get("inputs"), dict):
        return [_langsmith(data)]
    return None


# -----------------------------------------------------------------------------
# OpenTelemetry: OTLP JSON, and spans with their attributes as a map


def _otlp_spans(data: dict[str, Any]) -> list[TraceSpan]:
    """Each span of an OTLP JSON line, its attributes as a flat map (key -> Python value)."""
    spans = []
    for resource in data["resourceSpans"]:
        for scope in (
            resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans") or []
            if isinstance(resource, dict)
            else []
        ):
            for span in scope.get("spans") or [] if isinstance(scope, dict) else []:
                if isinstance(span, dict):
                    attributes = {
                        a["key"]: _any_value(a.get("value"))
                        for a in span.get("attributes") or []
                        if isinstance(a, dict) and isinstance(a.get("key"), str)
                    }
                    spans.append(TraceSpan(span.get("name"), span.get("spanId"), attributes))
    return spans


def _any_value(value: object) -> object:
    """An OTLP AnyValue as Python: {"stringValue": "x"} -> "x", {"arrayValue": {"values": [...]}} -> [...]."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value or "boolValue" in value:
        return value.get("doubleValue", value.get("boolValue"))
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return {kv.get("key"): _any_value(kv.get("value")) for kv in (value["kvlistValue"] or {}).get("values") or []}
    return None


def _flat(attributes: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested attributes as dotted keys ({"llm": {"input_messages": [{"message": {...}}]}} -> llm.input_messages.0
    .message.role ...); a JSON-string value and a list of messages are kept too (gen_ai.input.messages)."""
    flat: dict[str, Any] = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        flat[name] = value
        if isinstance(value, dict):
            flat.update(_flat(value, name + "."))
        elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
            flat.update(_flat({str(k): v for k, v in enumerate(value)}, name + "."))
    return flat


def _span_id(data: dict[str, Any]) -> object:
    context = data.get("context")
    return (context.get("span_id") if isinstance(context, dict) else None) or data.get("span_id")


def _span(span: TraceSpan) -> Call | NotCall:
    """A span as an LLM call, by the GenAI conventions or OpenInference's; else a NotCall."""
    attrs, name = span.attributes, span.name
    span_id = str(span.id or name or "span")
    model = attrs.get("gen_ai.request.model") or attrs.get("gen_ai.response.model") or attrs.get("llm.model_name")
    model = model if isinstance(model, str) else None
    if "gen_ai.input.messages" in attrs:
        messages = _gen_ai_messages(attrs["gen_ai.input.messages"])
        answer = _gen_ai_answer(attrs.get("gen_ai.output.messages"))
        return Call(span_id, messages, answer, model, "gen_ai")
    if "gen_ai.prompt.0.role" in attrs or "gen_ai.prompt.0.content" in attrs:
        messages = _indexed(attrs, "gen_ai.prompt.{}.role", "gen_ai.prompt.{}.content")
        answer = attrs.get("gen_ai.completion.0.content")
        return Call(span_id, messages, answer if isinstance(answer, str) else None, model, "gen_ai")
    kind = attrs.get("openinference.span.kind")
    if kind == "LLM" or "llm.input_messages.0.message.role" in attrs:
        messages = _indexed(
            attrs,
            "llm.input_messages.{}.message.role",
            "llm.input_messages.{}.message.content",
            "llm.input_messages.{}.message.contents",
        )
        answer = attrs.get("llm.output_messages.0.message.content")
        return Call(span_id, messages, answer if isinstance(answer, str) else None, model, "openinference")
    return NotCall(span_id, f"a span that is no LLM call ({kind or name or 'unnamed'})")


MAX_MESSAGES = 100_000  # messages read of one call: a bound on a hostile export's indices


def _indexed(
    attrs: dict[str, Any], role_key: str, content_key: str, parts_key: str | None = None
) -> list[tuple[str, object]]:
    """Messages kept as indexed attributes (gen_ai.prompt.0.role, gen_ai.prompt.0.content, ...), in order, until the
    first index with neither."""
    messages = []
    for i in range(MAX_MESSAGES):
        role, content = attrs.get(role_key.format(i)), attrs.get(content_key.format(i))
        if content is None and parts_key is not None:
            content = _openinference_parts(attrs, parts_key.format(i))
        if role is None and content is None:
            break
        messages.append((str(role or "user"), content))
    return messages


def _openinference_parts(attrs: dict[str, Any], key: str) -> list[dict[str, Any]] | None:
    """OpenInference's message.contents.{j}.message_content.text (and .type) as OpenAI-style parts."""
    parts = []
    for j in range(MAX_MESSAGES):
        kind = attrs.get(f"{key}.{j}.message_content.type")
        text = attrs.get(f"{key}.{j}.message_content.text")
        if kind is None and text is None:
            break
        parts.append({"type": kind or "text", "text": text} if text is not None else {"type": kind})
    return parts or None


def _gen_ai_messages(value: object) -> list[tuple[str, object]]:
    """gen_ai.input.messages: [{"role", "parts": [{"type": "text", "content": ...}]}], a JSON string of it, or a
    list of OpenAI-style messages."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return [("user", value)]
    if not isinstance(value, list):
        return []
    out = []
    for m in value:
        if isinstance(m, dict):
            parts = m.get("parts")
            content = [_part(p) for p in parts] if isinstance(parts, list) else m.get("content")
            out.append((str(m.get("role", "user")), content))
    return out


def _part(part: object) -> object:
    """A GenAI part as an OpenAI-style one: {"type": "text", "content": "x"} -> {"type": "text", "text": "x"}."""
    if isinstance(part, dict) and part.get("type") == "text" and "content" in part and "text" not in part:
        return {"type": "text", "text": part["content"]}
    return part


def _gen_ai_answer(value: object) -> str | None:
    messages = _gen_ai_messages(value)
    texts = [text for _, content in messages if (text := _plain_text(content)) is not None]
    return "".join(texts) if texts else None


def _plain_text(content: object) -> str | None:
    """A message's text: a string, or its text parts joined; None for none."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(texts) if texts else None
    return None


# -----------------------------------------------------------------------------
# Langfuse observations and LangSmith runs


def _langfuse(data: dict[str, Any]) -> Call | NotCall:
    obs_id, kind, model = str(data.get("id") or "observation"), data["type"], data.get("model")
    if kind != "GENERATION":
        return NotCall(obs_id, f"a Langfuse {kind} observation, no LLM call")
    value = data["input"]
    value = value.get("messages", value) if isinstance(value, dict) else value
    model = model if isinstance(model, str) else None
    return Call(obs_id, _messages(value), _answer(data.get("output")), model, "langfuse")


def _langsmith(data: dict[str, Any]) -> Call | NotCall:
    run_id, kind = str(data.get("id") or data.get("name") or "run"), data["run_type"]
    if kind != "llm":
        return NotCall(run_id, f"a LangSmith {kind} run, no LLM call")
    inputs = data["inputs"]
    value = inputs.get("messages", inputs.get("prompts"))
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):  # LangChain: a batch of one
        value = value[0]
    extra = data.get("extra")
    params = extra.get("invocation_params") if isinstance(extra, dict) else None
    params = params if isinstance(params, dict) else {}
    model = next(
        (v for v in (inputs.get("model"), params.get("model"), params.get("model_name")) if isinstance(v, str)), None
    )
    return Call(run_id, _messages(value), _answer(data.get("outputs")), model, "langsmith")


def _messages(value: object) -> list[tuple[str, object]]:
    """A message list as the SDKs keep it: OpenAI-style {"role", "content"}, LangChain's serialized messages
    ({"lc": 1, "id": [..., "HumanMessage"], "kwargs": {"content"}}, or {"type": "human", "content"}), a prompt
    string."""
    if isinstance(value, str):
        return [("user", value)]
    out: list[tuple[str, object]] = []
    for m in value if isinstance(value, list) else []:
        if isinstance(m, str):
            out.append(("user", m))
        elif isinstance(m, dict):
            kwargs = m["kwargs"] if isinstance(m.get("kwargs"), dict) else m
            kind = m["id"][-1] if isinstance(m.get("id"), list) and m["id"] else kwargs.get("type")
            role = m.get("role") or kwargs.get("role") or ROLES.get(str(kind), kind)
            out.append((str(role or "user"), kwargs.get("content")))
    return out


def _answer(output: Any) -> str | None:
    """The answer logged beside a call: a string, a message, OpenAI's choices, LangChain's generations."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        if isinstance(output.get("content"), (str, list)):
            return _plain_text(output["content"])
        choices = output.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            return _plain_text(message.get("content")) if isinstance(message, dict) else None
        generations = output.get("generations")
        while isinstance(generations, list) and generations and isinstance(generations[0], list):
            generations = generations[0]
        if isinstance(generations, list) and generations and isinstance(generations[0], dict):
            first = generations[0]
            text = first.get("text")
            if isinstance(text, str) and text:
                return text
            message = first.get("message")
            kwargs = message.get("kwargs", message) if isinstance(message, dict) else {}
            return _plain_text(kwargs.get("content")) if isinstance(kwargs, dict) else None
    return None
