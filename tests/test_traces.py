"""logged/traces.py: trace exports as the ecosystems' own libraries write them, read as the requests they logged.

Each export is made here by its own library at the version pinned in requirements.lock.txt: OpenTelemetry's SDK and
its OTLP encoder (the Collector's file exporter writes the same OTLP JSON), the GenAI conventions' and OpenInference's
attribute names from their packages, LangSmith's Run with LangChain's own serialized messages, Langfuse's
ObservationV2. The contexts in them are the frameworks' own requests (tests/golden/frameworks)."""

import datetime
import json
import uuid

from google.protobuf.json_format import MessageToDict
from langchain_core.load import dumpd
from langchain_core.messages import HumanMessage, SystemMessage
from langfuse.api import ObservationV2
from langsmith.schemas import Run
from openinference.semconv.trace import MessageAttributes, OpenInferenceSpanKindValues, SpanAttributes
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai

from graphrag_format_benchmark.logged import read, traces

from conftest import ROOT, run_cli

GOLDEN = ROOT / "tests" / "golden" / "frameworks" / "small"
ANSWER = "Leslie Lamport worked at Microsoft Research."


def messages_of(layout: str) -> list[dict]:
    return json.loads((GOLDEN / f"{layout}.request.json").read_text(encoding="utf-8"))["messages"]


def otlp_line(make_spans) -> str:
    """One line as the Collector's file exporter writes it: the spans make_spans(tracer) ends, as OTLP JSON."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    make_spans(provider.get_tracer("app"))
    return json.dumps(MessageToDict(encode_spans(exporter.get_finished_spans())))


def gen_ai_spans(tracer) -> None:
    """A RAG request as GenAI instrumentation records it: a retrieval span (no LLM call), a chat span in today's
    conventions (gen_ai.input.messages of structured parts, as JSON), one in the older (gen_ai.prompt.{i}.*)."""
    with tracer.start_as_current_span("retrieve"):
        pass
    graphrag = messages_of("graphrag")
    with tracer.start_as_current_span("chat gpt-4o-mini") as span:
        span.set_attribute(gen_ai.GEN_AI_OPERATION_NAME, "chat")
        span.set_attribute(gen_ai.GEN_AI_REQUEST_MODEL, "gpt-4o-mini")
        parts = [{"role": m["role"], "parts": [{"type": "text", "content": m["content"]}]} for m in graphrag]
        span.set_attribute(gen_ai.GEN_AI_INPUT_MESSAGES, json.dumps(parts))
        answer = [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}], "finish_reason": "stop"}]
        span.set_attribute(gen_ai.GEN_AI_OUTPUT_MESSAGES, json.dumps(answer))
    lightrag = messages_of("lightrag")
    with tracer.start_as_current_span("chat gpt-4o-mini") as span:
        span.set_attribute(gen_ai.GEN_AI_REQUEST_MODEL, "gpt-4o-mini")
        for k, m in enumerate(lightrag):
            span.set_attribute(f"{gen_ai.GEN_AI_PROMPT}.{k}.role", m["role"])
            span.set_attribute(f"{gen_ai.GEN_AI_PROMPT}.{k}.content", m["content"])
        span.set_attribute(f"{gen_ai.GEN_AI_COMPLETION}.0.content", "Microsoft Research")


def openinference_attributes(layout: str) -> dict:
    """An LLM span's attributes as OpenInference's instrumentation writes them."""
    attributes = {
        SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.LLM.value,
        SpanAttributes.LLM_MODEL_NAME: "gpt-4o-mini",
    }
    for k, m in enumerate(messages_of(layout)):
        attributes[f"{SpanAttributes.LLM_INPUT_MESSAGES}.{k}.{MessageAttributes.MESSAGE_ROLE}"] = m["role"]
        attributes[f"{SpanAttributes.LLM_INPUT_MESSAGES}.{k}.{MessageAttributes.MESSAGE_CONTENT}"] = m["content"]
    attributes[f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.0.{MessageAttributes.MESSAGE_CONTENT}"] = ANSWER
    return attributes


def openinference_spans(tracer) -> None:
    with tracer.start_as_current_span("ChatCompletion") as span:
        span.set_attributes(openinference_attributes("llamaindex"))
    with tracer.start_as_current_span("retrieve") as span:
        span.set_attribute(SpanAttributes.OPENINFERENCE_SPAN_KIND, OpenInferenceSpanKindValues.RETRIEVER.value)


def langsmith_runs() -> list[str]:
    """An LLM run as LangChain's tracer sends it (its messages serialized by langchain_core), and a chain run."""
    system, user = messages_of("langchain")[0], messages_of("neo4j_graphrag")[-1]
    start, trace = datetime.datetime(2026, 12, 7, 12, 0), uuid.UUID(int=1)
    llm = Run(
        id=uuid.UUID(int=2),
        name="ChatOpenAI",
        start_time=start,
        run_type="llm",
        trace_id=trace,
        inputs={
            "messages": [
                [dumpd(SystemMessage(content=system["content"])), dumpd(HumanMessage(content=user["content"]))]
            ]
        },
        outputs={"generations": [[{"text": ANSWER, "type": "ChatGeneration"}]]},
        extra={"invocation_params": {"model": "gpt-4o-mini"}},
    )
    chain = Run(
        id=uuid.UUID(int=3),
        name="GraphCypherQAChain",
        start_time=start,
        run_type="chain",
        trace_id=trace,
        inputs={"query": "Which organization did Leslie Lamport work at?"},
    )
    return [json.dumps(run.model_dump(mode="json")) for run in (llm, chain)]


def langfuse_observations() -> list[str]:
    start = datetime.datetime(2026, 12, 7, 12, 0)
    generation = ObservationV2(
        id="obs-1",
        trace_id="trace-1",
        start_time=start,
        project_id="p",
        type="GENERATION",
        input=messages_of("lightrag"),
        output={"role": "assistant", "content": ANSWER},
        model="gpt-4o-mini",
    )
    span = ObservationV2(id="obs-2", trace_id="trace-1", start_time=start, project_id="p", type="SPAN", input={"q": 1})
    return [json.dumps(o.model_dump(mode="json", by_alias=True)) for o in (generation, span)]


def test_every_source_is_read_as_the_requests_it_logged_and_what_is_no_call_is_counted(tmp_path):
    lines = [
        otlp_line(gen_ai_spans),
        otlp_line(openinference_spans),
        json.dumps(
            {
                "name": "ChatCompletion",
                "context": {"span_id": "0xabc"},
                "span_kind": "LLM",
                "attributes": {
                    "llm.input_messages": [
                        {"message.role": m["role"], "message.content": m["content"]} for m in messages_of("graphrag")
                    ],
                    "openinference.span.kind": "LLM",
                },
            }
        ),  # Phoenix's span export: one span a line
        *langsmith_runs(),
        *langfuse_observations(),
        json.dumps({"id": "body", "messages": messages_of("lightrag")}),  # a request body beside them
    ]
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run_cli("--from-prompts", str(path), "--formats", "json,tsv", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    records = [json.loads(x) for x in (tmp_path / "out" / "logged.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["line"], r.get("layout"), r.get("not_a_call", "")[:24]) for r in records] == [
        (1, None, "a span that is no LLM ca"),
        (1, "graphrag", ""),
        (1, "lightrag", ""),
        (2, "llamaindex", ""),
        (2, None, "a span that is no LLM ca"),
        (3, "graphrag", ""),
        (4, "langchain", ""),
        (5, None, "a LangSmith chain run, n"),
        (6, "lightrag", ""),
        (7, None, "a Langfuse SPAN observat"),
        (8, "lightrag", ""),
    ]
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert results["counts"]["sources"] == {
        "gen_ai": 2,
        "openinference": 2,
        "langsmith": 1,
        "langfuse": 1,
        "request": 1,
    }
    assert sum(results["counts"]["not_calls"].values()) == 4 and results["counts"]["lines"] == 7
    md = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert (
        "Read from: OpenTelemetry spans (GenAI conventions) 2, OpenInference spans (Arize Phoenix) 2, LangSmith runs "
        "1, Langfuse observations 1, request bodies 1; 4 trace record(s) that are no LLM call skipped"
    ) in md
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["preflight"]["logged"]["sources"] == results["counts"]["sources"]


def test_a_calls_answer_and_model_are_read_beside_its_messages():
    (line,) = [otlp_line(gen_ai_spans)]
    calls = [r for r in read.parse_line(1, line.encode()) if isinstance(r, read.Logged)]
    assert [(c.model, c.answer, c.source, c.question) for c in calls] == [
        ("gpt-4o-mini", ANSWER, "gen_ai", "Which organization did Leslie Lamport work at?"),
        ("gpt-4o-mini", "Microsoft Research", "gen_ai", "Which organization did Leslie Lamport work at?"),
    ]
    assert calls[0].messages == tuple((m["role"], m["content"]) for m in messages_of("graphrag"))
    (run, _) = (read.parse_line(1, x.encode()) for x in langsmith_runs())
    assert [(c.model, c.answer, c.source, c.messages[0][0]) for c in run] == [
        ("gpt-4o-mini", ANSWER, "langsmith", "system")
    ]
    (generation,) = read.parse_line(1, langfuse_observations()[0].encode())
    assert (generation.model, generation.answer, generation.source) == ("gpt-4o-mini", ANSWER, "langfuse")


def test_a_line_that_is_no_trace_is_read_as_a_request_body():
    assert traces.trace_records({"messages": [{"role": "user", "content": "x"}]}) is None
    assert traces.trace_records({"resourceSpans": []}) == []


def test_the_answer_a_trace_logged_is_what_was_sents_when_the_model_is_the_one_that_answered(tmp_path):
    """A trace holds the answer to what was sent: for the model that gave it, it is not paid for again."""
    from fake_openai import FakeOpenAI

    path = tmp_path / "traces.jsonl"
    path.write_text(otlp_line(gen_ai_spans) + "\n", encoding="utf-8")
    fake = FakeOpenAI(answer=lambda system: "Microsoft Research")
    try:
        for model, sent in (("gpt-4o-mini", 2), ("another-model", 4)):  # two calls, each in json (and as sent)
            done = run_cli(
                "--from-prompts",
                str(path),
                "--formats",
                "json",
                "--model",
                model,
                "--base-url",
                fake.url,
                "--out",
                str(tmp_path / model),
            )
            assert done.returncode == 0, done.stderr
            assert len(fake.requests) == sent
            fake.requests.clear()
    finally:
        fake.close()
    md = (tmp_path / "gpt-4o-mini" / "results.md").read_text(encoding="utf-8")
    assert (
        "2 answer(s) to what was sent are those the traces logged beside the prompts, by gpt-4o-mini itself: not asked "
        "again (only each format's alternative was sent)."
    ) in md
    assert "logged beside the prompts" not in (tmp_path / "another-model" / "results.md").read_text(encoding="utf-8")
    rows = json.loads((tmp_path / "gpt-4o-mini" / "results.json").read_text(encoding="utf-8"))["agreement"]["rows"]
    assert (rows[0]["compared"], rows[0]["entities"]["agree"]) == (2, 2)  # the sentence and the name: one entity
