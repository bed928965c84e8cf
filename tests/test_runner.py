"""Model runs: the HTTP runner against a real local server, the log, resume, scoring rules, results."""

import collections
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from kg_graphs import score_answer

import benchmark
from benchmark import Edge
from graphrag_format_benchmark import (
    artifacts,
    frameworks,
    inputs as inputs_module,
    measure,
    options,
    pipeline,
    progress,
    results as results_module,
    solver,
)
from graphrag_format_benchmark.runner import (
    config as runner_config,
    endpoint,
    jobs as runner_jobs,
    pacing,
    send,
    transport,
)
from graphrag_format_benchmark.variants import contexts

import conftest
from conftest import ROOT, run_stderr
from fake_openai import FakeBatches, FakeOpenAI, TcpServer

SECRET = "sk-test-secret-4f1c9a"

# 13 edges
THIRTEEN = contexts.Context("", benchmark.Graph((), tuple(benchmark.Edge("a", "R", "b") for _ in range(13))), ())


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch):
    monkeypatch.setattr(pacing, "RETRY_BASE_DELAY", 0.001)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def solver_contents(*flags: str) -> dict[str, str]:
    """prompt -> the control solver's answer, for the plan these flags describe."""
    args = options.parse_config(list(flags))
    inputs = inputs_module.load_inputs(
        args.graph, args.questions or benchmark.DEFAULT_QUESTIONS, None, None, args.graph_format, args.graph_order
    )
    measured = measure.measure(inputs, options.make_plan(args))
    return {item.prompt(): json.dumps(send.solver_answer(item), ensure_ascii=False) for item in measured.items}


@pytest.fixture
def server():
    contents = solver_contents()
    fake = FakeOpenAI(answer=lambda prompt: contents[prompt])
    yield fake
    fake.close()


def results(out):
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def log_lines(out):
    return [
        json.loads(line)
        for line in (out / "requests.jsonl").read_text(encoding="utf-8").splitlines()
        if line.startswith("{")
    ]


# ---- scoring rules, one hand-made answer at a time


def answer(text, path, edges=None, graph=None):
    evidence = [graph.edges[i]._asdict() for i in path] if edges is None else edges
    return json.dumps({"answer": text, "path": path, "evidence": evidence}, ensure_ascii=False)


PERFECT = {
    "parse_success": True,
    "abstained": False,
    "answer_correct": True,
    "false_abstention": False,
    "path_exact": True,
    "edge_precision": 1.0,
    "edge_recall": 1.0,
    "valid_path": True,
    "evidence_match": True,
    "path_supports_answer": True,
    "right_answer_wrong_path": False,
    "json_as_asked": True,
    "diagnosis": None,
}


def test_index_of_the_right_edge_in_another_permutation(small):
    graph, q = small
    order = contexts.edge_order(THIRTEEN, "small", 1, contexts.DEFAULT_SEED)
    wrong = [order.index(i) for i in (0, 3, 6, 10)]  # where the gold edges sit in permutation 1
    scores = score_answer(answer("Казань", wrong, [graph.edges[i]._asdict() for i in (0, 3, 6, 10)]), graph, q["q1"])
    hits = len(set(wrong) & {0, 3, 6, 10})
    assert scores._asdict() == {
        **PERFECT,
        "path_exact": False,
        "edge_precision": hits / 4,
        "edge_recall": hits / 4,
        "valid_path": scores.valid_path,
        "evidence_match": False,
        "path_supports_answer": scores.path_supports_answer,
        "right_answer_wrong_path": True,
        "diagnosis": "miscounted_indices",
    }
    assert scores.valid_path is False


def test_walk_ends():
    assert solver.walk_ends([Edge("a", "R", "b"), Edge("c", "S", "b")]) == {"c"}
    assert solver.walk_ends([Edge("a", "R", "b"), Edge("c", "S", "d")]) == set()
    assert solver.walk_ends([Edge("a", "R", "b")]) == {"a", "b"}


# ---- the solver as a model: the whole pipeline offline, with known scores


def test_solver_scores_perfectly_in_mode_a_and_the_answerable_fraction_in_mode_b(tmp_path):
    argv = [
        "--model",
        "solver",
        "--sizes",
        "small,medium",
        "--ids",
        "original,short",
        "--permutations",
        "2",
        "--budget",
        "2500",
        "--out",
        str(tmp_path),
    ]
    assert benchmark.main(argv) == 0
    rows = json.loads((tmp_path / "size_report.json").read_text(encoding="utf-8"))
    for e in results(tmp_path)["aggregates"]:
        mine = [
            r
            for r in rows
            if (r["encoding"], r["size"], r["ids"], r["mode"], r["format"])
            == (e["encoding"], e["size"], e["ids"], e["mode"], e["format"])
        ]
        right = e["answer_correct"]["k"] + e["abstention_correct"]["k"]
        assert right / e["n"] == sum(r["answerable"] for r in mine) / len(mine)
        assert e["path_exact"]["k"] == e["answer_correct"]["k"] == e["evidence_match"]["k"]
        if e["mode"] == "A":
            assert (e["answer_correct"]["rate"], e["path_exact"]["rate"], e["abstention_correct"]["rate"]) == (
                1.0,
                1.0,
                1.0,
            )
    assert "## o200k_base · medium · short · mode B" in (tmp_path / "results.md").read_text(encoding="utf-8")


def test_solver_answers_every_prompt_of_a_large_graph_even_past_the_window(tmp_path):
    argv = [
        "--model",
        "solver",
        "--sizes",
        "large",
        "--context-window",
        "20000",
        "--formats",
        "json,edge_list",
        "--out",
        str(tmp_path),
    ]
    assert benchmark.main(argv) == 0
    rows = json.loads((tmp_path / "size_report.json").read_text(encoding="utf-8"))
    assert any(r["overflow"] for r in rows) and not all(r["overflow"] for r in rows)
    for e in results(tmp_path)["aggregates"]:
        assert (e["overflow"], e["path_exact"]["rate"], e["abstention_correct"]["rate"]) == (0, 1.0, 1.0)


def test_score_an_existing_log_gives_the_same_results(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    assert benchmark.main(["--model", "solver", "--permutations", "2", "--out", str(first)]) == 0
    argv = ["--model", "solver", "--permutations", "2", "--score", str(first / "requests.jsonl"), "--out", str(second)]
    assert benchmark.main(argv) == 0
    assert results(second)["aggregates"] == results(first)["aggregates"]
    assert not (second / "requests.jsonl").exists()


def test_score_with_other_flags_than_the_run_says_so(tmp_path, capsys):
    assert benchmark.main(["--model", "solver", "--out", str(tmp_path / "a")]) == 0
    log = tmp_path / "a" / "requests.jsonl"
    assert (
        benchmark.main(
            ["--model", "solver", "--formats", "json_compact", "--score", str(log), "--out", str(tmp_path / "b")]
        )
        == 2
    )
    assert run_stderr(capsys) == (
        f"error: {benchmark.display(log)}: no answer to a prompt of this command; the log was written with --formats "
        "json,jsonl,tsv,edge_list,dsl (here json_compact); pass the same flags as the run that wrote it\n"
    )
    assert not (tmp_path / "b").exists()


def test_export_batch_and_score_its_output(tmp_path):
    batch = tmp_path / "batch.jsonl"
    assert benchmark.main(["--model", "gpt-test", "--export-batch", str(batch), "--out", str(tmp_path / "out")]) == 0
    lines = [json.loads(line) for line in batch.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 30
    first = lines[0]
    assert set(first) == {"custom_id", "method", "url", "body"}
    assert (first["method"], first["url"], first["custom_id"][-3:], len(first["custom_id"])) == (
        "POST",
        "/v1/chat/completions",
        "-r0",
        43,
    )
    assert (
        first["body"]["model"] == "gpt-test"
        and first["body"]["temperature"] == 0.0
        and first["body"]["max_completion_tokens"] == 1024
    )
    contents = solver_contents()
    output = tmp_path / "output.jsonl"
    output.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"batch_req_{i}",
                    "custom_id": line["custom_id"],
                    "error": None,
                    "response": {
                        "status_code": 200,
                        "request_id": "r",
                        "body": {
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {
                                        "role": "assistant",
                                        "content": contents[line["body"]["messages"][0]["content"]],
                                    },
                                }
                            ],
                            "usage": {"prompt_tokens": 900, "completion_tokens": 50},
                        },
                    },
                },
                ensure_ascii=False,
            )
            + "\n"
            for i, line in enumerate(lines)
        ),
        encoding="utf-8",
    )
    argv = [
        "--model",
        "gpt-test",
        "--score",
        str(output),
        "--out",
        str(tmp_path / "scored"),
        "--input-price-per-million",
        "1.25",
        "--output-price-per-million",
        "5",
    ]
    assert benchmark.main(argv) == 0
    for e in results(tmp_path / "scored")["aggregates"]:
        assert (e["n"], e["path_exact"]["rate"], e["abstention_correct"]["rate"]) == (6, 1.0, 1.0)
        assert e["cost"] == round((6 * 900 * 1.25 + 6 * 50 * 5) / 1_000_000, 6)


def batch_files(tmp_path, model="gpt-test"):
    """An exported batch and its lines as the Batch API returns them: output lines for all but the last two
    prompts, whose failures are in the error file."""
    batch = tmp_path / "batch.jsonl"
    assert benchmark.main(["--model", "gpt-test", "--export-batch", str(batch), "--out", str(tmp_path / "out")]) == 0
    lines = [json.loads(line) for line in batch.read_text(encoding="utf-8").splitlines()]
    contents = solver_contents()
    output = [
        json.dumps(
            {
                "id": f"batch_req_{i}",
                "custom_id": line["custom_id"],
                "error": None,
                "response": {
                    "status_code": 200,
                    "request_id": "r",
                    "body": {
                        "model": model,
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {
                                    "role": "assistant",
                                    "content": contents[line["body"]["messages"][0]["content"]],
                                },
                            }
                        ],
                    },
                },
            }
        )
        for i, line in enumerate(lines[:-2])
    ]
    errors = [
        json.dumps(
            {
                "id": "batch_req_e",
                "custom_id": lines[-2]["custom_id"],
                "response": None,
                "error": {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the\ncompletion window expired.",
                },
            }
        ),
        json.dumps(
            {
                "id": "batch_req_f",
                "custom_id": lines[-1]["custom_id"],
                "error": None,
                "response": {
                    "status_code": 500,
                    "request_id": "r",
                    "body": {"error": {"message": "The server had an error", "type": "server_error"}},
                },
            }
        ),
    ]
    return batch, output, errors


def score(tmp_path, *files):
    flags = [f for f in files if f == "--accept-other-model"]
    files = [f for f in files if f != "--accept-other-model"]
    return benchmark.main(
        ["--model", "gpt-test", "--score", *map(str, files), "--out", str(tmp_path / "scored"), *flags]
    )


def test_a_batch_output_without_its_error_file_counts_the_missing_prompts_as_failed(tmp_path, capsys):
    _, output, errors = batch_files(tmp_path)
    (tmp_path / "output.jsonl").write_text("\n".join(output) + "\n", encoding="utf-8")
    (tmp_path / "errors.jsonl").write_text("\n".join(errors) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert score(tmp_path, tmp_path / "output.jsonl") == 1
    err = run_stderr(capsys)
    assert (
        "warning: 2 of 30 prompts have no answer line: pass the batch's error file too (they count as failed tasks, "
        "reason missing_from_batch_output)\n" in err
    )
    table = results(tmp_path / "scored")["aggregates"]
    assert sum(e["errors"] for e in table) == 2 and sum(e["n"] for e in table) == 30
    assert results(tmp_path / "scored")["requests"]["failures"] == {"missing_from_batch_output": 2}
    assert score(tmp_path, tmp_path / "errors.jsonl", tmp_path / "output.jsonl") == 1  # any order
    summary = results(tmp_path / "scored")["requests"]
    assert summary["failures"] == {
        "batch: batch_expired: This request could not be executed before the completion window expired.": 1,
        "batch: HTTP 500 (server_error): The server had an error": 1,
    }
    assert summary["missing"] == 0 and summary["files"] == [
        benchmark.display(tmp_path / "errors.jsonl"),
        benchmark.display(tmp_path / "output.jsonl"),
    ]
    report = (tmp_path / "scored" / "results.md").read_text(encoding="utf-8")
    assert (
        f"Scored: {benchmark.display(tmp_path / 'errors.jsonl')}, {benchmark.display(tmp_path / 'output.jsonl')}"
        in report
    )


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda out, batch: out + [out[0].replace('"custom_id": "', '"custom_id": "f00')],
            "matches no prompt of this command",
        ),
        (lambda out, batch: out + [out[0].replace('"batch_req_0"', '"batch_req_x"')], "was given before, at "),
        (
            lambda out, batch: batch,
            "are a Batch input line (custom_id, method, url, body): pass the batch's output file and its error file",
        ),
    ],
)
def test_unknown_conflicting_and_input_format_lines_are_refused(tmp_path, capsys, change, message):
    batch, output, _ = batch_files(tmp_path)
    lines = change(output, batch.read_text(encoding="utf-8").splitlines())
    (tmp_path / "output.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert score(tmp_path, tmp_path / "output.jsonl") == 2
    err = run_stderr(capsys)
    assert message in err and f"{benchmark.display(tmp_path / 'output.jsonl')} line " in err
    assert not (tmp_path / "scored").exists()


def test_an_identical_duplicate_line_is_counted_once_and_another_model_is_an_error_unless_accepted(tmp_path, capsys):
    _, output, errors = batch_files(tmp_path, model="gpt-test-mini-2024-07-18")
    (tmp_path / "output.jsonl").write_text("\n".join([*output, output[0], *errors]) + "\n", encoding="utf-8")
    assert score(tmp_path, tmp_path / "output.jsonl") == 2  # gpt-test-mini is another model, not a snapshot of gpt-test
    assert (
        "the answers come from model gpt-test-mini-2024-07-18, not --model gpt-test (only a dated snapshot"
        in run_stderr(capsys)
    )
    assert score(tmp_path, tmp_path / "output.jsonl", "--accept-other-model") == 1
    assert (
        "warning: answers come from model gpt-test-mini-2024-07-18, not --model gpt-test (accepted with "
        "--accept-other-model)\n" in run_stderr(capsys)
    )
    _, output, errors = batch_files(tmp_path / "dated", model="gpt-test-2026-01-01")
    (tmp_path / "dated.jsonl").write_text("\n".join([*output, *errors]) + "\n", encoding="utf-8")
    score(tmp_path, tmp_path / "dated.jsonl")
    assert "answers come from model" not in run_stderr(capsys)  # a dated snapshot is the same model


# ---- the HTTP runner against a real server on 127.0.0.1


def run(server, out, *flags, env_key=True, monkeypatch=None):
    if env_key and monkeypatch:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        flags = ("--api-key-env", "OPENAI_API_KEY", *flags)  # named explicitly: sent to this local server too
    return benchmark.main(["--model", "m-test", "--base-url", server.url, "--out", str(out), *flags])


def test_requests_are_explicit_and_the_key_never_reaches_a_file(server, tmp_path, monkeypatch, capsys):
    assert run(server, tmp_path, "--limit", "3", monkeypatch=monkeypatch) == 0
    assert len(server.requests) == 3
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert set(request["body"]) == {"model", "messages", "temperature", "seed", "max_tokens"}
    assert (request["body"]["temperature"], request["body"]["seed"], request["body"]["max_tokens"]) == (0.0, 2026, 1024)
    assert request["body"]["messages"] == [{"role": "user", "content": request["body"]["messages"][0]["content"]}]
    everything = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert SECRET.encode() not in everything
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err
    lines = log_lines(tmp_path)
    assert lines[0]["type"] == "run" and lines[0]["base_url"] == server.url and lines[0]["sampling"]["seed"] == 2026
    record = lines[1]
    for field in (
        "format",
        "question_id",
        "size",
        "mode",
        "permutation",
        "ids",
        "repeat",
        "prompt_sha256",
        "time",
        "latency_s",
        "response",
        "content",
        "usage",
        "system_fingerprint",
        "finish_reason",
        "error",
        "attempts",
    ):
        assert field in record, field
    assert (record["error"], record["attempts"], record["system_fingerprint"], record["finish_reason"]) == (
        None,
        1,
        "fp_test",
        "stop",
    )
    assert results(tmp_path)["aggregates"][0]["not_run"] == 0


def test_a_key_echoed_by_the_server_is_redacted(server, tmp_path, monkeypatch, capsys):
    server.script = [(401, {}, {"error": {"message": f"bad key {SECRET}", "code": "invalid_api_key"}})]
    # the first answer: a rejected key stops the run
    assert run(server, tmp_path, "--limit", "1", monkeypatch=monkeypatch) == 2
    text = (tmp_path / "requests.jsonl").read_text(encoding="utf-8")
    assert SECRET not in text and "bad key [redacted]" in text
    assert log_lines(tmp_path)[1]["error"] == "HTTP 401 (invalid_api_key): bad key [redacted]"
    assert SECRET not in run_stderr(capsys)


def test_the_openai_key_goes_to_openai_only_unless_named(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert benchmark.main(["--model", "m-test", "--base-url", server.url, "--out", str(tmp_path), "--limit", "1"]) == 0
    assert "Authorization" not in server.requests[0]["headers"]
    server.script = [(401, {}, {"error": {"message": "no key"}})]
    assert (
        benchmark.main(["--model", "m-test", "--base-url", server.url, "--out", str(tmp_path / "b"), "--limit", "1"])
        == 2
    )
    assert run_stderr(capsys).startswith(
        f"error: {server.url} answered HTTP 401: no key: the endpoint wants a key; name the variable that holds it "
        "with --api-key-env;"
    )


def test_structured_output_sends_the_schema(server, tmp_path):
    assert run(server, tmp_path, "--limit", "1", "--structured", "--max-tokens-field", "max_completion_tokens") == 0
    body = server.requests[0]["body"]
    assert body["response_format"]["json_schema"]["schema"] == runner_config.ANSWER_SCHEMA
    assert body["max_completion_tokens"] == 1024 and "max_tokens" not in body
    assert "Authorization" not in server.requests[0]["headers"]  # no key set: a local server needs none


def test_retries_honour_retry_after_then_succeed(server, tmp_path):
    server.script = [(429, {"retry-after-ms": "1000"}, {"error": {"code": "rate_limit_exceeded"}}), (503, {}, {})]
    assert run(server, tmp_path, "--limit", "1") == 0
    record = log_lines(tmp_path)[1]
    assert (record["attempts"], record["error"], record["status"]) == (3, None, 200)
    assert record["retry_wait_s"] >= 1.0  # the server's retry-after-ms was waited out, not the 1 ms backoff...
    # ...and the latency is the answering attempt's alone (a local answer
    # in under a second, on however busy a machine), not the waits
    assert record["latency_s"] < record["retry_wait_s"]
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    "script, error, attempts",
    [
        (
            [(500, {}, {"error": {"message": f"busy {i}"}}) for i in range(3)],
            "HTTP 500: busy 2; gave up after 3 attempts",
            3,
        ),
        (
            [(500, {}, {"error": {"message": "validation"}})] * 3,
            "HTTP 500: validation",
            2,
        ),  # the same 500 twice: not load
        ([(503, {}, {})] * 3, "HTTP 503; gave up after 3 attempts", 3),
        (
            [(400, {}, {"error": {"message": "bad", "type": "invalid_request_error"}})],
            "HTTP 400 (invalid_request_error): bad",
            1,
        ),
        (
            [(429, {}, {"error": {"message": "quota", "code": "insufficient_quota"}})],
            "HTTP 429 (insufficient_quota): quota",
            1,
        ),
        ([(200, {}, b"<html>not json</html>")], "the response is not a chat completion with a message", 1),
        ([(422, {}, {"detail": [{"msg": "field required"}]})], 'HTTP 422: [{"msg": "field required"}]', 1),
        ([(400, {}, b"bad\nrequest")], "HTTP 400: bad request", 1),
    ],
)
def test_failures_are_logged_counted_and_the_run_goes_on(server, tmp_path, capsys, script, error, attempts):
    server.script = list(script)
    assert run(server, tmp_path, "--limit", "2", "--concurrency", "1", "--max-retries", "2") == 1
    failed = [r for r in log_lines(tmp_path)[1:] if r["error"]]
    assert [(r["error"], r["attempts"]) for r in failed] == [(error, attempts)]
    assert len(log_lines(tmp_path)) == 3
    captured = capsys.readouterr()
    assert f"requests: 2 sent, 0 already in the log, 1 failed\n  1 x {error}\n" in captured.out
    assert (
        conftest.START_LINE.sub("", captured.err)
        == "error: 1 of 2 requests failed after their retries; run the same command again to retry them only\n"
    )
    table = results(tmp_path)["aggregates"]  # --limit 2: the first prompt of json and of jsonl
    assert [(e["format"], e["n"], e["errors"]) for e in table if e["n"]] == [("json", 1, 1), ("jsonl", 1, 0)]


def test_no_server_listening_is_found_before_anything_is_built_with_one_line(tmp_path, capsys):
    """The server is asked first: a run against none built every cell (45 s for 1,000) before its first request."""
    closed = FakeOpenAI()
    closed.close()
    assert benchmark.main(["--model", "m", "--base-url", closed.url, "--out", str(tmp_path / "out")]) == 2
    assert run_stderr(capsys) == (
        f"error: --base-url {closed.url}: no server answers there (Connection refused); start it, or fix "
        "--base-url; nothing was measured or sent\n"
    )
    assert not (tmp_path / "out").exists()


def test_no_server_listening_mid_run_stops_at_once_with_one_line(tmp_path, capsys, monkeypatch):
    """A server gone after the check (or never reached, behind a proxy) stops the runner at its first requests."""
    from graphrag_format_benchmark.runner import endpoint

    monkeypatch.setattr(endpoint, "check_server", lambda url: None)
    closed = FakeOpenAI()
    closed.close()
    assert benchmark.main(["--model", "m", "--base-url", closed.url, "--out", str(tmp_path)]) == 2
    err = run_stderr(capsys)
    assert err.startswith(
        f"error: no server answers at {closed.url} (ConnectionRefusedError: [Errno 111] Connection refused); "
        "start it, or fix --base-url; stopped after "
    )
    assert err.endswith(" not sent\n") and err.count("\n") == 1
    records = log_lines(tmp_path)[1:]
    assert 1 <= len(records) <= 4 and all(
        r["attempts"] == 1 and r["error"].startswith("connection error: ") for r in records
    )
    assert not (tmp_path / "results.json").exists()


@pytest.mark.parametrize(
    "status, body, cause",
    [
        (
            401,
            {"detail": "Invalid API key"},
            "HTTP 401: Invalid API key: the key was rejected; set OPENAI_API_KEY to a valid key",
        ),
        (
            404,
            {"error": {"message": "model 'm-test' not found", "type": "not_found_error"}},
            "HTTP 404 (not_found_error): model 'm-test' not found: the model or the URL is unknown; check --model "
            "'m-test' and --base-url",
        ),
    ],
)
def test_a_rejected_key_or_unknown_model_stops_at_once(server, tmp_path, capsys, monkeypatch, status, body, cause):
    server.script = [(status, {}, body)] * 40
    assert run(server, tmp_path, "--concurrency", "1", monkeypatch=monkeypatch) == 2
    assert len(server.requests) == 1
    assert run_stderr(
        capsys
    ) == f"error: {server.url} answered {cause}; stopped after 1 request(s), 29 not sent\n".replace(
        "valid key;", "valid key (or name another variable with --api-key-env);"
    )


@pytest.mark.parametrize(
    "base_url, hint",
    [
        ("http://127.0.0.1:8000", " (OpenAI-compatible servers answer under /v1: try http://127.0.0.1:8000/v1)"),
        (
            "http://u:p@127.0.0.1:8000/?k=1",
            " (OpenAI-compatible servers answer under /v1: try http://127.0.0.1:8000/v1)",
        ),
        (
            "http://127.0.0.1:8000/v1/chat/completions/",
            " (give it without /chat/completions, which the tool adds: http://127.0.0.1:8000/v1)",
        ),
        ("https://api.example.com/v1", ""),
    ],
)
def test_a_404_says_what_is_likely_wrong_with_the_url(base_url, hint):
    assert endpoint.url_hint(base_url) == hint


def test_a_404_on_a_url_without_v1_names_the_url_to_try(server, tmp_path, capsys, monkeypatch):
    server.script = [(404, {}, {"detail": "Not Found"})] * 40
    root = server.url.removesuffix("/v1")
    assert benchmark.main(["--model", "m", "--base-url", root, "--concurrency", "1", "--out", str(tmp_path)]) == 2
    assert run_stderr(capsys).startswith(
        f"error: {root} answered HTTP 404: Not Found: the model or the URL is unknown; check --model 'm' and "
        "--base-url "
        f"(OpenAI-compatible servers answer under /v1: try {root}/v1); stopped after 1 request(s)"
    )


def test_permanent_failures_exit_1_and_a_rerun_sends_only_those(server, tmp_path, capsys):
    ok = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}]}
    server.script = [(200, {}, ok)]  # the first request succeeds: the gate opens
    server.script += [(500, {}, {"error": {"message": "boom"}})] * 18  # then 6 prompts fail 3 attempts each
    assert run(server, tmp_path, "--concurrency", "1", "--max-retries", "2") == 1
    failing = {r["prompt_sha256"] for r in log_lines(tmp_path)[1:] if r["error"]}
    assert len(failing) == 6
    assert "error: 6 of 30 requests failed after their retries; run the same command again" in run_stderr(capsys)
    before = len(server.requests)
    assert run(server, tmp_path, "--concurrency", "1") == 0
    resent = [benchmark.sha256_hex(r["body"]["messages"][0]["content"]) for r in server.requests[before:]]
    assert sorted(resent) == sorted(failing)


def test_a_server_that_dies_mid_run_stops_it_within_seconds_and_a_rerun_resumes(tmp_path, capsys):
    contents = solver_contents()
    answered = []

    def answer(prompt):
        if len(answered) >= 5:  # the server goes away after its fifth answer: what it gets now, it drops
            if len(answered) == 5:
                answered.append(None)
                threading.Thread(target=fake.close).start()
            raise ConnectionAbortedError("the server is going away")
        answered.append(prompt)
        return contents[prompt]

    fake = FakeOpenAI(answer=answer)
    started = time.monotonic()
    assert (
        benchmark.main(["--model", "m-test", "--base-url", fake.url, "--out", str(tmp_path), "--concurrency", "1"]) == 1
    )
    # generous for a busy machine: not every prompt's retries (5 attempts with backoff each)
    assert time.monotonic() - started < 60
    attempts = [r["attempts"] for r in log_lines(tmp_path) if r.get("type") == "request"]
    assert sum(attempts) <= 15  # five answers and a few failed attempts (10 here), not the 25 prompts x 5 attempts left
    err = run_stderr(capsys)
    assert re.search(
        rf"error: the server at {re.escape(fake.url)} stopped answering \(3 connection failures in a row, the last: "
        r".*\); \d+ request\(s\) sent, \d+ not sent; once that is fixed \(the server started again, the key set\), "
        r"the same command sends only those",
        err,
    )
    assert sum(c["status"] == "NOT_RUN" for c in results(tmp_path)["cells"]) > 15  # results are written, resumable
    answered = sum(1 for r in log_lines(tmp_path) if r.get("type") == "request" and r["error"] is None)
    assert answered == 5
    again = FakeOpenAI(answer=lambda prompt: contents[prompt])
    try:
        assert benchmark.main(["--model", "m-test", "--base-url", again.url, "--out", str(tmp_path)]) == 0
        assert len(again.requests) == 30 - answered  # nothing answered is paid again
    finally:
        again.close()


def test_a_resumed_log_gains_no_blank_line_and_keeps_its_bytes(server, tmp_path):
    assert run(server, tmp_path, "--limit", "4") == 0
    first = (tmp_path / "requests.jsonl").read_bytes()
    assert run(server, tmp_path, "--limit", "6") == 0
    assert run(server, tmp_path, "--limit", "6") == 0
    data = (tmp_path / "requests.jsonl").read_bytes()
    assert data.startswith(first) and data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    assert b"" not in lines and len(lines) == 3 + 6  # three headers, six answers
    assert all(json.loads(line) for line in lines)


def test_a_run_says_what_it_sends_at_once_and_beats_with_an_eta_while_the_server_is_slow(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner_jobs, "HEARTBEAT", 0.3)
    monkeypatch.setattr(progress, "PROGRESS_AFTER", 0.0)
    server = FakeOpenAI(delay=0.8, slots=1)
    try:
        assert (
            benchmark.main(
                ["--model", "m", "--base-url", server.url, "--out", str(tmp_path), "--limit", "3", "--concurrency", "1"]
            )
            == 0
        )
        assert (
            benchmark.main(
                ["--model", "m", "--base-url", server.url, "--out", str(tmp_path), "--limit", "4", "--concurrency", "1"]
            )
            == 0
        )
    finally:
        server.close()
    # the measuring's own progress
    lines = [line for line in capsys.readouterr().err.splitlines() if " cells, " not in line]
    log = tmp_path / "requests.jsonl"
    assert lines[0] == f"sending 3 request(s) to {server.url}, 1 at a time (0 already answered in {log})"
    # no ETA yet
    assert re.fullmatch(r"0/3 requests, \d+ s, waiting for the first answer, 1 in flight: json q\d, \d+ s", lines[1])
    # from the pace so far
    assert any(
        re.fullmatch(r"1/3 requests, \d+ s, 0 failed(, 1 in flight: \w+ q\d, \d+ s)?, about \d+ s left", line)
        for line in lines
    )
    assert f"sending 1 request(s) to {server.url}, 1 at a time (3 already answered in {log})" in lines


def test_answers_cut_by_the_servers_context_are_told_from_answers_cut_by_the_cap(tmp_path, capsys):
    usage = iter(
        [
            {"prompt_tokens": 3900, "completion_tokens": 196},
            {"prompt_tokens": 3500, "completion_tokens": 596},
            {"prompt_tokens": 500, "completion_tokens": 1024},
        ]
    )
    server = FakeOpenAI(finish=lambda prompt: "length", usage=lambda prompt: next(usage))
    try:
        argv = ["--model", "m", "--base-url", server.url, "--out", str(tmp_path), "--limit", "3", "--concurrency", "1"]
        assert benchmark.main(argv) == 0
    finally:
        server.close()
    out = capsys.readouterr().out
    assert "  1 answer(s) cut at the output cap (finish_reason length): raise --max-output-tokens (now 1024)\n" in out
    assert (
        "  2 answer(s) cut short of the output cap, at 4,096 tokens of prompt and answer together (finish_reason "
        "length): the "
        "server's context window ended them, not --max-output-tokens; give the server a larger context (llama.cpp: "
        "--n_ctx) "
        "or send shorter prompts (--context-window to the server's, less the answer)\n"
    ) in out


class RateLimit:
    """A provider's rate limit as the fake server keeps it: limit units per window, refilled continuously. A request
    costs its prompt's o200k_base tokens and its max_tokens (unit "tokens", as OpenAI counts) or one (unit "requests").
    Answers carry the unit's x-ratelimit headers named in `headers`; a request past the limit gets a 429."""

    def __init__(self, unit: str, limit: int, window: float, headers=("limit", "remaining", "reset")):
        self.unit, self.limit, self.window, self.headers = unit, limit, window, headers
        self.level, self.stamp, self.lock, self.refused, self.admitted = (
            float(limit),
            time.monotonic(),
            threading.Lock(),
            0,
            0,
        )
        tokenizer = benchmark.load_tokenizer("o200k_base") if unit == "tokens" else None
        self.cost = (
            (lambda body: tokenizer.count(body["messages"][0]["content"]) + body["max_tokens"])
            if tokenizer
            else (lambda body: 1)
        )

    def __call__(self, body):
        cost = self.cost(body)
        with self.lock:
            now = time.monotonic()
            self.level = min(self.limit, self.level + (now - self.stamp) * self.limit / self.window)
            self.stamp = now
            admitted = self.level >= cost
            self.level -= cost if admitted else 0
            self.admitted += admitted
            self.refused += not admitted
            values = {
                "limit": str(self.limit),
                "remaining": str(int(self.level)),
                "reset": f"{int((self.limit - self.level) * self.window / self.limit * 1000)}ms",
            }
            return admitted, {f"x-ratelimit-{name}-{self.unit}": values[name] for name in self.headers}


@pytest.mark.parametrize("flag", [True, False])
def test_sending_is_paced_to_a_token_rate_limit_so_429s_are_rare_and_the_waits_are_reported(
    tmp_path, capsys, monkeypatch, flag
):
    monkeypatch.setattr(pacing, "RATE_WINDOW", 1.0)  # a "minute" of one second, on both sides
    bucket = RateLimit("tokens", 12_000, 1.0)
    server = FakeOpenAI(answer=lambda prompt: "{}")
    server.limiter = bucket
    argv = [
        "--model",
        "m",
        "--base-url",
        server.url,
        "--out",
        str(tmp_path),
        "--concurrency",
        "8",
        "--repeats",
        "2",
        "--max-output-tokens",
        "200",
        "--max-tokens-field",
        "max_tokens",
    ]
    try:
        assert benchmark.main(argv + (["--tokens-per-minute", "12000"] if flag else [])) == 0
    finally:
        server.close()
    assert bucket.admitted == 60 and bucket.refused / (bucket.admitted + bucket.refused) < 0.02  # paced, not retried
    summary = results(tmp_path)["requests"]["rate_limit_waits"]
    assert summary["requests"] > 10 and summary["seconds"] > 1.0
    line = next(line for line in capsys.readouterr().out.splitlines() if "waited for the rate limit" in line)
    assert re.fullmatch(
        rf"  {summary['requests']} of 60 request\(s\) \(\d+%\) waited for the rate limit \(--tokens-per-minute, "
        r"--requests-per-minute, or the server's x-ratelimit headers\): [\d.]+ s in all, the longest [\d.]+ s",
        line,
    )


@pytest.mark.parametrize(
    "flags, headers, most", [([], False, None), (["--requests-per-minute", "15"], False, 0.02), ([], True, 0.02)]
)
def test_sending_is_paced_to_a_request_rate_limit_by_the_flag_or_the_headers(
    tmp_path, monkeypatch, flags, headers, most
):
    monkeypatch.setattr(pacing, "RATE_WINDOW", 1.0)
    bucket = RateLimit("requests", 15, 1.0, ("limit", "remaining", "reset") if headers else ())
    server = FakeOpenAI(answer=lambda prompt: "{}")
    server.limiter = bucket
    try:
        benchmark.main(
            [
                "--model",
                "m",
                "--base-url",
                server.url,
                "--out",
                str(tmp_path),
                "--concurrency",
                "8",
                "--repeats",
                "2",
                *flags,
            ]
        )
    finally:
        server.close()
    share = bucket.refused / (bucket.admitted + bucket.refused)
    assert share < most if most else share > 0.2  # paced by either, or refused a fifth and more without


def test_without_pacing_the_same_limit_refuses_many(tmp_path, monkeypatch):
    """The bench of the test above: a server without limit headers, and no flag, so nothing paces the run."""
    monkeypatch.setattr(pacing, "RATE_WINDOW", 1.0)
    bucket = RateLimit("tokens", 12_000, 1.0, headers=())
    server = FakeOpenAI(answer=lambda prompt: "{}")
    server.limiter = bucket
    try:
        benchmark.main(
            [
                "--model",
                "m",
                "--base-url",
                server.url,
                "--out",
                str(tmp_path),
                "--concurrency",
                "8",
                "--repeats",
                "2",
                "--max-output-tokens",
                "200",
                "--max-tokens-field",
                "max_tokens",
            ]
        )
    finally:
        server.close()
    assert bucket.refused / (bucket.admitted + bucket.refused) > 0.2


def test_resume_sends_only_what_the_log_lacks(server, tmp_path):
    assert run(server, tmp_path, "--limit", "4") == 0
    assert run(server, tmp_path) == 0
    assert len(server.requests) == 30
    assert run(server, tmp_path) == 0
    assert len(server.requests) == 30
    summary = results(tmp_path)["requests"]
    assert {k: summary[k] for k in ("mode", "sent", "skipped", "failed", "failures")} == {
        "mode": "run",
        "sent": 0,
        "skipped": 30,
        "failed": 0,
        "failures": {},
    }
    # every invocation, not the last
    assert summary["log"] == {
        "invocations": 3,
        "planned": 30,
        "answered": 30,
        "failed": 0,
        "not_run": 0,
        "failures": {},
        "cut_by_length": 0,
        "cut_before_cap": 0,
        "cut_before_cap_at_tokens": [],
        "context_overflow_by_server": 0,
    }
    assert run(server, tmp_path, "--temperature", "0.5", "--limit", "1") == 0  # other sampling: a new request
    assert len(server.requests) == 31


def test_an_answer_without_content_is_scored_as_a_failure_and_not_bought_again(server, tmp_path):
    server.script = [
        (
            200,
            {},
            {
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": None, "refusal": "no"},
                        "finish_reason": "stop",
                    }
                ]
            },
        )
    ]
    assert run(server, tmp_path, "--limit", "1") == 0
    assert run(server, tmp_path, "--limit", "1") == 0
    assert len(server.requests) == 1
    cell = results(tmp_path)["cells"][0]
    assert (cell["status"], cell["parse_success"], cell["answer_correct"]) == ("OK", False, False)


def test_a_torn_last_line_is_moved_aside_sent_again_and_never_scored(server, tmp_path, capsys):
    assert run(server, tmp_path) == 0
    log = tmp_path / "requests.jsonl"
    data = log.read_bytes()
    cut = data.rstrip(b"\n").rfind(b"\n") + 40
    log.write_bytes(data[:cut])  # cut the last record mid-line
    assert run(server, tmp_path) == 0
    assert len(server.requests) == 31
    assert "its last line was torn (39 bytes); it is kept in requests.jsonl.torn" in run_stderr(capsys)
    assert (tmp_path / "requests.jsonl.torn").read_bytes() == data[cut - 39 : cut] + b"\n"
    assert all(json.loads(line) for line in log.read_bytes().splitlines())  # valid JSONL: no torn line mid-file
    assert results(tmp_path)["log"]["unreadable_lines"] == {}
    assert all(e["n"] == 6 and e["path_exact"]["rate"] == 1.0 for e in results(tmp_path)["aggregates"])


def test_an_unreadable_line_mid_log_stops_the_run_before_paying_again(server, tmp_path, capsys):
    assert run(server, tmp_path, "--limit", "5") == 0
    log = tmp_path / "requests.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    lines[3] = b"{garbage\n"
    log.write_bytes(b"".join(lines))
    before = len(server.requests)
    assert run(server, tmp_path) == 2
    assert run_stderr(capsys).endswith(
        "requests.jsonl: line(s) 4 cannot be read, so their requests would be paid again; "
        "repair or remove them, then run again\n"
    )
    assert len(server.requests) == before


def run_until_logged(server, out, concurrency: int, lines: int, stderr) -> tuple[list[str], subprocess.Popen]:
    """A model run in a process of its own, returned once its log has that many lines (header included)."""
    cmd = [
        sys.executable,
        str(ROOT / "benchmark.py"),
        "--model",
        "m",
        "--base-url",
        server.url,
        "--concurrency",
        str(concurrency),
        "--out",
        str(out),
    ]
    # SIGINT as a terminal delivers it, even when the suite itself runs where it is ignored (a job started with &)
    process = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    log, deadline = out / "requests.jsonl", time.monotonic() + 30
    while time.monotonic() < deadline and (not log.exists() or log.read_bytes().count(b"\n") < lines):
        time.sleep(0.01)
    return cmd, process


def test_a_node_on_no_edge_leaves_every_prompt_rebuildable_at_every_size_and_mode(tmp_path):
    # A hand-made graph of 12 nodes, one on no edge. A mode B pack shows exactly the nodes its edges use, so when the
    # whole graph fits the budget its pack is not mode A's text: it was, and every such prompt failed to rebuild
    # ("internal error: rebuilt prompt differs") when sent.
    people = ["Ada Lovelace", "Charles Babbage", "Mary Somerville", "Michael Faraday", "Augustus De Morgan"]
    nodes = [{"id": n.lower().replace(" ", "_"), "name": n, "type": "person"} for n in people]
    nodes += [
        {"id": i, "name": i.replace("_", " ").title(), "type": "work"}
        for i in (
            "analytical_engine",
            "difference_engine",
            "on_the_connexion",
            "formal_logic",
            "notes_on_the_engine",
            "royal_institution",
        )
    ]
    nodes.append({"id": "lonely_island", "name": "Lonely Island", "type": "place"})  # on no edge
    edges = [
        ("ada_lovelace", "wrote", "notes_on_the_engine"),
        ("notes_on_the_engine", "describes", "analytical_engine"),
        ("charles_babbage", "designed", "analytical_engine"),
        ("charles_babbage", "designed", "difference_engine"),
        ("mary_somerville", "wrote", "on_the_connexion"),
        ("mary_somerville", "tutored", "ada_lovelace"),
        ("augustus_de_morgan", "wrote", "formal_logic"),
        ("augustus_de_morgan", "tutored", "ada_lovelace"),
        ("michael_faraday", "lectured_at", "royal_institution"),
        ("charles_babbage", "corresponded_with", "michael_faraday"),
    ]
    graph = {"nodes": nodes, "edges": [{"source": a, "relation": r, "target": b} for a, r, b in edges]}
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    flags = [
        "--graph",
        str(tmp_path / "g.json"),
        "--generate-questions",
        "8",
        "--prompt",
        "en",
        "--sizes",
        "small,medium,large",
        "--budget",
        "3000",
        "--context-window",
        "20000",
        "--no-write-prompts",
    ]
    args = options.parse_config(flags)
    plan = options.make_plan(args)
    inputs, _ = pipeline.preflight(args, plan)
    answers = {}
    for item in measure.measure(inputs, plan).items:  # raises on a prompt that does not rebuild to its row's SHA-256
        answers[item.prompt()] = json.dumps(send.solver_answer(item), ensure_ascii=False)
    server = FakeOpenAI(answer=lambda prompt: answers[prompt])
    try:
        assert (
            benchmark.main(
                [*flags, "--model", "m", "--base-url", server.url, "--concurrency", "4", "--out", str(tmp_path / "out")]
            )
            == 0
        )
    finally:
        server.close()
    records = [r for r in log_lines(tmp_path / "out") if r["type"] == "request"]
    assert records and not [r["error"] for r in records if r["error"]]
    small_b = [
        r
        for r in json.loads((tmp_path / "out" / "size_report.json").read_text(encoding="utf-8"))
        if r["size"] == "small" and r["mode"] == "B"
    ]
    # the whole graph fits: the case at hand
    assert small_b and all(r["edges_included"] == r["edges_total"] for r in small_b)


def test_kill_9_then_rerun_pays_nothing_twice(tmp_path):
    contents = solver_contents()
    server = FakeOpenAI(answer=lambda prompt: contents[prompt], delay=0.05)
    try:
        cmd, process = run_until_logged(server, tmp_path, 2, 8, stderr=subprocess.DEVNULL)
        process.send_signal(signal.SIGKILL)
        process.wait()
        time.sleep(0.3)  # let the server finish reading what was already on the wire
        logged = len([r for r in log_lines(tmp_path) if r["type"] == "request"])
        sent_before = len(server.requests)
        assert 7 <= logged < 30
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        # Only the (at most 2) requests in flight at the kill are sent again; every logged one is skipped.
        assert len(server.requests) - sent_before == 30 - logged
        assert sent_before - logged <= 2
        assert all(e["n"] == 6 and e["path_exact"]["rate"] == 1.0 for e in results(tmp_path)["aggregates"])
    finally:
        server.close()


@pytest.mark.parametrize(
    "signum, code, words",
    [
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGTERM, 143, "stopped by SIGTERM"),
        (signal.SIGHUP, 129, "stopped by SIGHUP"),
    ],
)
def test_ctrl_c_and_sigterm_wait_for_the_answers_in_flight_so_none_is_paid_and_lost(tmp_path, signum, code, words):
    contents = solver_contents()
    server = FakeOpenAI(answer=lambda prompt: contents[prompt], delay=0.4)
    try:
        _, process = run_until_logged(server, tmp_path, 4, 3, stderr=subprocess.PIPE)
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)
        time.sleep(0.2)
    finally:
        server.close()
    logged = [r for r in log_lines(tmp_path) if r["type"] == "request"]
    assert process.returncode == code and 2 <= len(logged) < 30
    # every request the server got (and would bill) has its answer in the log
    assert len(server.requests) == len(logged)
    assert all(r["error"] is None for r in logged)
    assert re.search(
        r"interrupted: waiting for the answers to the [1-4] request\(s\) in flight \(at most --timeout 120 s\)", err
    )
    assert err.endswith(f"error: {words}; run the same command to resume: what was answered is in the log\n")
    assert not (tmp_path / artifacts.LOCK_NAME).exists() and not list(tmp_path.glob(".staging-*"))


def test_server_truncation_is_flagged(tmp_path):
    contents = solver_contents()
    server = FakeOpenAI(
        answer=lambda prompt: contents[prompt], usage=lambda prompt: {"prompt_tokens": 100, "completion_tokens": 5}
    )
    try:
        assert benchmark.main(["--model", "m", "--base-url", server.url, "--out", str(tmp_path)]) == 0
    finally:
        server.close()
    assert [e["truncated_by_server"] for e in results(tmp_path)["aggregates"]] == [6, 6, 6, 6, 6]


def test_overflowing_prompts_are_not_sent(server, tmp_path):
    # the baseline json cannot be judged
    assert run(server, tmp_path, "--context-window", "800", "--allow-no-verdict") == 0
    assert len(server.requests) == 24  # the json prompts (967-973 tokens) overflow
    json_row = results(tmp_path)["aggregates"][0]
    assert (json_row["format"], json_row["overflow"], json_row["n"], json_row["answer_correct"]["rate"]) == (
        "json",
        6,
        6,
        0.0,
    )
    assert "CONTEXT_OVERFLOW" in {c["status"] for c in results(tmp_path)["cells"]}


def test_cost_from_usage_and_prices(server, tmp_path):
    assert run(server, tmp_path, "--input-price-per-million", "2.5", "--output-price-per-million", "10") == 0
    for e in results(tmp_path)["aggregates"]:
        assert e["usage"] == {
            "prompt_tokens": 6000,
            "completion_tokens": 120,
            "responses_with_usage": 6,
            "cached_tokens": None,
            "cached_share": None,
        }
        assert e["cost"] == round(6000 / 1e6 * 2.5 + 120 / 1e6 * 10, 6)
    assert run(server, tmp_path / "free") == 0
    assert {e["cost"] for e in results(tmp_path / "free")["aggregates"]} == {None}


def test_log_that_cannot_be_written(tmp_path, capsys):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert benchmark.main(["--model", "solver", "--out", str(tmp_path / "file" / "out")]) == 2
    err = run_stderr(capsys)
    out = benchmark.display(tmp_path / "file" / "out")  # found before a request is sent
    assert err == f"error: --out {out}: cannot use it (Not a directory); name another folder\n"


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--score", "x.jsonl"], "--score needs --model: the model whose answers it is about"),
        (["--limit", "3"], "--limit needs --model: the model whose answers it is about"),
        (
            ["--repeats", "3"],
            "--repeats, --structured and --reasoning-effort need --model: the model whose answers they are about",
        ),
        (
            ["--model", "m", "--score", "missing.jsonl"],
            "missing.jsonl: no such file; pass the requests.jsonl of a run, or Batch API output and error files",
        ),
        (
            ["--model", "m", "--input-price-per-million", "1"],
            "give both --input-price-per-million and --output-price-per-million, each 0 or more, or neither",
        ),
        (
            ["--model", "m", "--base-url", "ftp://h/v1"],
            "--base-url 'ftp://h/v1' is not an http(s) URL; e.g. http://127.0.0.1:8000/v1",
        ),
        (["--model", "gpt-4o"], "no API key: set OPENAI_API_KEY (or name another variable with --api-key-env)"),
        (["--model", "m", "--concurrency", "0"], "--concurrency must be at least 1, got 0"),
        (["--model", "m", "--temperature", "nan"], "--temperature is nan; give a finite number"),
        (["--model", "m", "--temperature", "7"], "--temperature must be between 0 and 2, got 7.0"),
        (["--model", "m", "--timeout", "inf"], "--timeout is inf; give a finite number"),
        (["--model", "m", "--timeout", "nan"], "--timeout is nan; give a finite number"),
        (
            ["--model", "m", "--input-price-per-million", "nan", "--output-price-per-million", "1"],
            "--input-price-per-million is nan; give a finite number",
        ),
        (
            ["--permutations", "1000000000"],
            "--permutations 1,000,000,000 is over the 1,000 this tool takes; ask for less",
        ),
        (
            ["--generate-questions", "1000000"],
            "--generate-questions 1,000,000 is over the 100,000 this tool takes; ask for less",
        ),
        (
            ["--hops", "1-2"],
            "--hops, --abstain-share, --property-share, --wording and --relation-phrases shape generated questions: "
            "use them with --generate-questions N",
        ),
        (
            ["--abstain-share", "0.5"],
            "--hops, --abstain-share, --property-share, --wording and --relation-phrases shape generated questions: "
            "use them with --generate-questions N",
        ),
        (
            ["--model", "m", "--score", "a.jsonl", "--export-batch", "b.jsonl"],
            "--score reads answers and --export-batch writes requests: run them apart",
        ),
    ],
)
def test_bad_model_flags(tmp_path, capsys, flags, message):
    assert benchmark.main([*flags, "--out", str(tmp_path / "out")]) == 2
    assert run_stderr(capsys) == f"error: {message}\n"
    assert not (tmp_path / "out").exists()


# ---- reasoning models, structured-output forms, deterministic errors, timeouts


def test_temperature_and_seed_none_are_left_out_and_reasoning_effort_is_sent(server, tmp_path):
    assert (
        run(server, tmp_path, "--limit", "1", "--temperature", "none", "--seed", "none", "--reasoning-effort", "low")
        == 0
    )
    body = server.requests[0]["body"]
    assert "temperature" not in body and "seed" not in body and body["reasoning_effort"] == "low"
    assert (
        json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))["config"]["seed"] == contexts.DEFAULT_SEED
    )


def test_an_answer_cut_by_the_output_cap_is_counted_with_its_reason(server, tmp_path, capsys):
    usage = {"prompt_tokens": 900, "completion_tokens": 64, "completion_tokens_details": {"reasoning_tokens": 64}}
    server.script = [
        (
            200,
            {},
            {
                "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "length"}],
                "usage": usage,
            },
        )
    ]
    assert run(server, tmp_path, "--limit", "2", "--concurrency", "1", "--max-output-tokens", "64") == 0
    out = capsys.readouterr().out
    assert "  1 answer(s) cut at the output cap (finish_reason length): raise --max-output-tokens (now 64)\n" in out
    assert results(tmp_path)["requests"]["cut_by_length"] == 1
    assert [e["finish_reasons"] for e in results(tmp_path)["aggregates"][:2]] == [{"length": 1}, {"stop": 1}]
    assert log_lines(tmp_path)[1]["usage"]["completion_tokens_details"] == {"reasoning_tokens": 64}
    assert "finish_reason per format: json length 1; jsonl stop 1." in (tmp_path / "results.md").read_text(
        encoding="utf-8"
    )


def test_an_answer_longer_than_the_cap_is_flagged(server, tmp_path):
    server.usage = lambda prompt: {"prompt_tokens": 900, "completion_tokens": 2782}
    assert run(server, tmp_path, "--limit", "1") == 0
    assert results(tmp_path)["aggregates"][0]["over_output_cap"] == 1
    assert "Answers longer than --max-output-tokens 1024 (the server ignored the cap): json 1." in (
        tmp_path / "results.md"
    ).read_text(encoding="utf-8")


def test_structured_json_object_form(server, tmp_path):
    assert run(server, tmp_path, "--limit", "1", "--structured", "json_object") == 0
    assert server.requests[0]["body"]["response_format"] == {
        "type": "json_object",
        "schema": runner_config.ANSWER_SCHEMA,
    }


def test_a_refused_structured_form_stops_at_once_naming_the_other(server, tmp_path, capsys):
    refusal = {
        "error": {
            "message": "1 validation error for CreateChatCompletionRequest response_format.type: Input should be "
            "'text' or 'json_object'",
            "type": "internal_server_error",
        }
    }
    server.script = [(500, {}, refusal)] * 40
    assert run(server, tmp_path, "--structured", "--concurrency", "1") == 2
    assert len(server.requests) == 1
    err = run_stderr(capsys)
    assert err.startswith(f"error: {server.url} answered HTTP 500 (internal_server_error): 1 validation error")
    assert "it refuses structured output as json_schema; try --structured json_object, or leave --structured out" in err


def test_the_same_error_on_the_first_requests_stops_the_run(server, tmp_path, capsys):
    server.script = [(400, {}, {"error": {"message": "unsupported parameter: seed"}})] * 40
    assert run(server, tmp_path, "--concurrency", "1") == 2
    assert len(server.requests) == endpoint.SAME_ERROR_STOP
    assert run_stderr(capsys) == (
        f"error: the first 3 requests to {server.url} ended with the same error (HTTP 400: unsupported parameter: "
        "seed); "
        "fix its cause (see the log) before sending the rest; stopped after 3 request(s), 27 not sent\n"
    )


def test_a_timeout_on_a_server_seen_to_work_in_parallel_is_sent_again_once_with_a_hint(tmp_path, capsys):
    first = []
    slow = FakeOpenAI(
        answer=lambda prompt: "{}", delay=lambda prompt: 1.0 if first.append(prompt) or prompt == first[0] else 0.05
    )
    try:
        argv = [
            "--model",
            "m",
            "--base-url",
            slow.url,
            "--out",
            str(tmp_path),
            "--limit",
            "8",
            "--timeout",
            "0.5",
            "--concurrency",
            "4",
        ]
        # answers to the rest overtook the slow one: the server computes several at once
        assert benchmark.main(argv) == 1
    finally:
        slow.close()
    assert [r["body"]["messages"][0]["content"] for r in slow.requests].count(first[0]) == 2
    (record,) = [r for r in log_lines(tmp_path)[1:] if r["error"]]
    assert record["attempts"] == 2 and record["error"] == (
        "timed out after 0.5 s (2 time(s)): a server that queues requests answers late; lower --concurrency or raise "
        "--timeout"
    )


def test_a_one_slot_server_slower_than_the_timeout_on_one_prompt_gets_that_prompt_once(tmp_path, capsys):
    first = []
    server = FakeOpenAI(
        answer=lambda prompt: "{}",
        slots=1,
        delay=lambda prompt: 1.5 if first.append(prompt) or prompt == first[0] else 0.05,
    )
    try:
        argv = [
            "--model",
            "m",
            "--base-url",
            server.url,
            "--out",
            str(tmp_path),
            "--limit",
            "3",
            "--timeout",
            "1",
            "--concurrency",
            "1",
        ]
        assert benchmark.main(argv) == 1
    finally:
        server.close()
    prompts = [r["body"]["messages"][0]["content"] for r in server.requests]
    assert len(prompts) == 3 and prompts.count(first[0]) == 1  # not sent again while the server still computed it
    records = log_lines(tmp_path)[1:]
    assert [r["error"] for r in records] == [
        "timed out after 1 s: not sent again, since the server answers one request at a time and is still computing "
        "it; "
        "raise --timeout or cap --max-output-tokens",
        None,
        None,
    ]


# ---- send order, --limit slices, batch files within the limits


def test_each_prefix_group_is_warmed_by_its_first_prompt_before_the_rest(tmp_path):
    contents = solver_contents()
    server = FakeOpenAI(answer=lambda prompt: contents[prompt], delay=0.1)
    try:
        assert (
            benchmark.main(["--model", "m", "--base-url", server.url, "--out", str(tmp_path), "--concurrency", "4"])
            == 0
        )
    finally:
        server.close()
    fmt_of = {r["prompt_sha256"]: r["format"] for r in log_lines(tmp_path)[1:]}
    arrivals: dict[str, list[float]] = {}
    for request in server.requests:
        arrivals.setdefault(fmt_of[benchmark.sha256_hex(request["body"]["messages"][0]["content"])], []).append(
            request["time"]
        )
    for fmt, times in arrivals.items():  # the other five of a format are sent once the first has its answer
        assert len(times) == 6 and min(times[1:]) >= times[0] + 0.09, fmt
    order = [fmt_of[benchmark.sha256_hex(r["body"]["messages"][0]["content"])] for r in server.requests]
    # four workers, no one idle: the first prompts of four groups go at once; a freed worker then takes the rest
    # of a warmed group while its prefix is cached, before the fifth group's first
    assert sorted(order[:4]) == sorted(["json", "jsonl", "tsv", "edge_list"]) and order[4] != "dsl"


def test_a_free_worker_takes_a_warm_groups_job_else_the_next_groups_first_and_waits_only_when_neither_exists():
    Job = collections.namedtuple("Job", "name group")
    jobs = [Job(f"{g}{k}", g) for g in "ab" for k in range(3)]
    schedule, halt = runner_jobs.Schedule(jobs, warm=True), threading.Event()
    a0, a_rest = schedule.take(halt)
    b0, b_rest = schedule.take(halt)
    assert (a0.name, b0.name) == ("a0", "b0")  # a second worker does not wait for a's first answer: b's first goes
    waited = threading.Thread(target=lambda: taken.append(schedule.take(halt)))
    taken: list = []
    waited.start()
    time.sleep(0.1)
    assert not taken  # a third worker: nothing can go until a first answer is in
    schedule.warmed(b_rest)
    waited.join(1)
    assert taken[0][0].name == "b1" and taken[0][1] is None
    schedule.warmed(a_rest)
    assert [schedule.take(halt)[0].name for _ in range(3)] == ["b2", "a1", "a2"]  # warm groups in the order they warmed
    assert schedule.take(halt) is None  # nothing left, nothing warming: the worker ends
    cold = runner_jobs.Schedule(jobs, warm=False)  # the control solver: no cache to warm, all ready
    assert [cold.take(halt)[0].name for _ in range(6)] == [j.name for j in jobs] and cold.take(halt) is None


def test_limit_takes_a_slice_spread_over_formats_sizes_and_modes(canonical):
    args = options.parse_config(
        [
            "--sizes",
            "small,medium",
            "--budget",
            "3000",
            "--model",
            "m",
            "--limit",
            "20",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ]
    )
    measured = measure.measure(canonical, options.make_plan(args))
    jobs = runner_jobs.plan_jobs(measured.items, options.make_model_config(args))
    assert len(jobs) == 20  # small prompts fit the budget whole: their mode A and B prompts are one request
    groups = collections.Counter((j.item.row.size, j.item.row.mode, j.item.row.format) for j in jobs)
    assert {(size, fmt) for size, _, fmt in groups} == {
        (size, fmt) for size in ("small", "medium") for fmt in benchmark.ARTICLE_FORMATS
    }
    assert {mode for size, mode, _ in groups if size == "medium"} == {"A", "B"}
    assert max(groups.values()) - min(groups.values()) <= 1  # dealt round by round, not the first 20 in row order


@pytest.mark.parametrize(
    "model, flags",
    [
        ("m", []),
        ("m", ["--limit", "13"]),
        ("solver", []),
        ("m", ["--context-window", "900"]),
        ("solver", ["--context-window", "900"]),
    ],
)
def test_planned_keys_are_the_jobs_in_their_order_without_making_them(canonical, model, flags):
    args = options.parse_config(
        [
            "--sizes",
            "small,medium",
            "--budget",
            "3000",
            "--permutations",
            "2",
            "--model",
            model,
            "--repeats",
            "3",
            "--base-url",
            "http://127.0.0.1:9/v1",
            *flags,
        ]
    )
    measured = measure.measure(canonical, options.make_plan(args))
    config = options.make_model_config(args)
    jobs = [(job.sha, job.repeat) for job in runner_jobs.plan_jobs(measured.items, config)]
    assert runner_jobs.planned_keys(measured.items, config) == jobs and len(set(jobs)) == len(jobs)
    if "--context-window" in flags:  # some prompts overflow: a model is not sent them, the control solver answers all
        overflowing = {item.row.prompt_sha256 for item in measured.items if item.row.overflow}
        assert overflowing and (model == "solver") == bool(overflowing & {sha for sha, _ in jobs})


def test_limit_deals_over_hop_counts_and_a_bigger_log_is_scored_as_the_slice(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    import synth_kg

    graph = synth_kg.make_graph(800, 60, random.Random(8))
    (tmp_path / "g.json").write_text(json.dumps(graph), encoding="utf-8")
    flags = [
        "--graph",
        str(tmp_path / "g.json"),
        "--generate-questions",
        "20",
        "--prompt",
        "en",
        "--formats",
        "json,dsl",
        "--model",
        "solver",
        "--out",
        str(tmp_path / "out"),
    ]
    assert benchmark.main([*flags, "--limit", "10"]) == 0
    cells = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["cells"]
    assert len(cells) == 10 and {c["hops"] for c in cells} == {"1", "2", "3", "4+", "abstention"}
    assert benchmark.main(flags) == 0  # the whole run: the log now holds 40 answers
    assert benchmark.main([*flags, "--limit", "10", "--score", str(tmp_path / "out" / "requests.jsonl")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert len(results["cells"]) == 10 and results["requests"]["planned"] == 10


def test_batch_export_splits_within_both_limits_and_lists_the_files(tmp_path, capsys):
    batch = tmp_path / "batch.jsonl"
    argv = [
        "--model",
        "gpt-test",
        "--export-batch",
        str(batch),
        "--out",
        str(tmp_path / "out"),
        "--batch-max-requests",
        "7",
        "--context-window",
        "970",
    ]
    assert benchmark.main(argv) == 0
    captured = capsys.readouterr()
    files = sorted(tmp_path.glob("batch.*-of-*.jsonl"))
    assert [p.name for p in files] == [f"batch.{k:03d}-of-004.jsonl" for k in range(1, 5)]
    lines = [line for p in files for line in p.read_text(encoding="utf-8").splitlines()]
    # 30 prompts, 4 json ones overflow
    assert [len(p.read_text(encoding="utf-8").splitlines()) for p in files] == [
        7,
        7,
        7,
        5,
    ]
    assert len({json.loads(line)["custom_id"] for line in lines}) == 26
    assert "warning: not in the batch: 4 request(s) over --context-window and 0 outside --limit\n" in captured.err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert [f["requests"] for f in manifest["batch"]["files"]] == [7, 7, 7, 5]
    assert manifest["batch"]["left_out"] == {"over_context_window": 4, "outside_limit": 0}
    mode = files[0].stat().st_mode & 0o777
    assert mode == (tmp_path / "out" / "manifest.json").stat().st_mode & 0o777
    biggest = max(len(line.encode("utf-8")) + 1 for line in lines)
    argv = [*argv[:-4], "--context-window", "970", "--overwrite-batch"]  # replaces the export above
    assert benchmark.main([*argv, "--batch-max-bytes", str(2 * biggest)]) == 0
    sizes = [p.stat().st_size for p in tmp_path.glob("batch.*-of-*.jsonl")]
    assert (
        max(sizes) <= 2 * biggest
        and sum(len(p.read_text(encoding="utf-8").splitlines()) for p in tmp_path.glob("batch.*")) == 26
    )
    assert benchmark.main([*argv, "--batch-max-bytes", "100"]) == 2
    assert "takes" in run_stderr(capsys)


def test_cached_tokens_and_the_model_s_own_counts_are_reported_and_priced(tmp_path):
    contents = solver_contents()
    usage = lambda prompt: {
        "prompt_tokens": 800,
        "completion_tokens": 10,
        "prompt_tokens_details": {"cached_tokens": 600},
    }
    server = FakeOpenAI(answer=lambda prompt: contents[prompt], usage=usage)
    try:
        argv = [
            "--model",
            "m",
            "--base-url",
            server.url,
            "--out",
            str(tmp_path),
            "--formats",
            "json,dsl",
            "--input-price-per-million",
            "2",
            "--output-price-per-million",
            "8",
            "--cached-input-price-per-million",
            "0.5",
        ]
        assert benchmark.main(argv) == 0
    finally:
        server.close()
    json_row, dsl_row = results(tmp_path)["aggregates"]
    assert json_row["usage"]["cached_tokens"] == 3600 and json_row["usage"]["cached_share"] == 0.75
    assert json_row["cost"] == round((6 * 200 * 2 + 6 * 600 * 0.5 + 6 * 10 * 8) / 1_000_000, 6)
    assert json_row["model_prompt_tokens"] == 800.0 and json_row["pareto_tokens"] == "model_prompt_tokens"
    # the model counts both alike: a tie, both on the front
    assert (json_row["pareto"], dsl_row["pareto"]) == (
        True,
        True,
    )
    report = (tmp_path / "results.md").read_text(encoding="utf-8")
    assert "Share of prompt tokens served from the provider's prefix cache: json 0.75; dsl 0.75." in report
    assert "| json ★ | 6 | 6 | 970 (800) |" in report
    assert "| cost (USD at 2 / 8 per million input / output tokens, cached input 0.5) |" in report


# ---- what real OpenAI-compatible servers do


def test_a_context_refusal_is_scored_as_overflow_and_grouped_whatever_the_length(tmp_path, capsys):
    contents = solver_contents()
    server = FakeOpenAI(answer=lambda prompt: contents[prompt])
    ok = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}]}
    refusals = [
        (
            400,
            {},
            {
                "error": {
                    "message": f"This model's maximum context length is 512 tokens. However, you requested "
                    f"{900 + i} tokens. Please reduce the length of the messages.",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
        )
        for i in range(5)
    ]
    server.script = [(200, {}, ok), *refusals]
    try:
        argv = ["--model", "m", "--base-url", server.url, "--out", str(tmp_path), "--concurrency", "1", "--limit", "6"]
        # a prompt longer than the server's window is an outcome, not a request to retry
        assert benchmark.main(argv) == 0
        assert benchmark.main(argv) == 0
    finally:
        server.close()
    assert len(server.requests) == 6  # the refusals are not sent again
    out = capsys.readouterr().out
    assert "  5 prompt(s) refused by the server as over its context window: scored as CONTEXT_OVERFLOW" in out
    table = results(tmp_path)["aggregates"]
    assert (
        sum(e["overflow"] for e in table) == sum(e["overflow_by_server"] for e in table) == 5
        and sum(e["errors"] for e in table) == 0
    )


def test_a_200_with_an_error_and_a_response_without_usage(tmp_path, capsys):
    contents = solver_contents()
    server = FakeOpenAI(answer=lambda prompt: contents[prompt], usage=lambda prompt: None)
    ok = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}]}
    server.script = [(200, {}, ok), (200, {}, {"error": {"message": "upstream overloaded", "type": "server_error"}})]
    try:
        argv = ["--model", "m", "--base-url", server.url, "--out", str(tmp_path), "--concurrency", "1", "--limit", "3"]
        assert benchmark.main(argv) == 1
    finally:
        server.close()
    assert (
        "1 x HTTP 200 (server_error): upstream overloaded (in a response marked successful)" in capsys.readouterr().out
    )
    cells = results(tmp_path)["cells"]
    assert [c["usage_prompt_tokens"] for c in cells if c["status"] == "OK"] == [None, None]
    assert all(e["model_prompt_tokens"] is None for e in results(tmp_path)["aggregates"])


def test_timeouts_halve_the_requests_in_flight_and_say_so(tmp_path, capsys):
    contents = solver_contents()
    slow = FakeOpenAI(answer=lambda prompt: contents[prompt], delay=0.3)
    try:
        argv = [
            "--model",
            "m",
            "--base-url",
            slow.url,
            "--out",
            str(tmp_path),
            "--limit",
            "4",
            "--timeout",
            "0.2",
            "--concurrency",
            "4",
        ]
        benchmark.main(argv)
    finally:
        slow.close()
    err = run_stderr(capsys)
    assert (
        "warning: a request timed out after 0.2 s: the server queues requests; going on with 2 in flight instead of 4"
        in err
    )


# ---- stable edge ids (article 5)


def test_edge_ids_are_shown_asked_for_and_scored_across_permutations_and_packs(tmp_path, capsys):
    out = tmp_path / "out"
    argv = [
        "--edge-ids",
        "--model",
        "solver",
        "--sizes",
        "small,medium",
        "--permutations",
        "2",
        "--budget",
        "1500",
        "--formats",
        "json,tsv,dsl",
        "--out",
        str(out),
        "--write-prompts",
    ]
    assert benchmark.main(argv) == 0
    prompt = (out / "prompt.small.original.p1.A.dsl.q1.txt").read_text(encoding="utf-8")
    assert (
        '"path": [id рёбер по порядку],' in prompt and "# > id|source|relation|target" in prompt and "> e1|" in prompt
    )
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {e["path_exact"]["rate"] for e in results["aggregates"] if e["mode"] == "A"} == {1.0}
    report = (out / "size_report.md").read_text(encoding="utf-8")
    assert "## Edge ids" in report and re.search(
        r"\| small \| json \| [\d,]+ \| [\d,]+ \| \+[\d,]+ \(\d+%\) \|", report
    )
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    cost = manifest["config"]["edge_id_graph_tokens"]["by_size"]["small"]["json"]
    assert cost["with_ids"] > cost["without"] > 0


def test_the_en_prompt_says_how_indices_count(tmp_path):
    assert benchmark.main(["--prompt", "en", "--out", str(tmp_path)]) == 0
    # an edge's id where the layout prints one (GraphRAG's rows, ranked, each with its id), else its place as shown
    assert (
        '"path": [edges in order: each one\'s id where the graph shows ids, else its place from 0 in the order shown],'
        in (tmp_path / "prompt.json.q1.txt").read_text(encoding="utf-8")
    )


# ---- hostile servers


class RawServer(TcpServer):
    """A TCP server on 127.0.0.1 that answers every connection with handler(socket): drips, redirects, no end."""

    def __init__(self, handler):
        self.handler, self.seen = handler, []
        super().__init__()

    def connected(self, client):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = client.recv(65536)
            if not chunk:
                return
            data += chunk
        self.seen.append(data.decode("latin-1"))
        with contextlib.suppress(OSError):
            self.handler(client)


def drip(client):
    client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
    while True:
        client.sendall(b" ")
        time.sleep(0.05)


def endless_chunks(client):
    client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    while True:
        client.sendall(b"1\r\n \r\n")
        time.sleep(0.01)


@pytest.mark.parametrize("handler", [drip, endless_chunks])
def test_timeout_bounds_an_attempt_whatever_the_server_sends(tmp_path, capsys, handler):
    server = RawServer(handler)
    try:
        started = time.monotonic()
        code = benchmark.main(
            [
                "--model",
                "m",
                "--base-url",
                server.url,
                "--out",
                str(tmp_path),
                "--timeout",
                "0.5",
                "--limit",
                "2",
                "--concurrency",
                "2",
                "--max-retries",
                "1",
            ]
        )
        elapsed = time.monotonic() - started
    finally:
        server.close()
    # each attempt ends at 0.5 s, retried once; without the bound the server never ends
    assert code == 1 and elapsed < 60
    records = log_lines(tmp_path)[1:]
    assert records and all(r["error"].startswith("timed out after 0.5 s") for r in records)


def test_a_redirect_is_not_followed_and_the_key_stays_home(tmp_path, capsys, monkeypatch):
    other = RawServer(lambda c: c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"))
    target = other.url.replace("/v1", "/steal")
    redirect = RawServer(
        lambda c: c.sendall(f"HTTP/1.1 302 Found\r\nLocation: {target}\r\nContent-Length: 0\r\n\r\n".encode())
    )
    monkeypatch.setenv("MY_KEY", SECRET)
    try:
        code = benchmark.main(
            ["--model", "m", "--base-url", redirect.url, "--api-key-env", "MY_KEY", "--out", str(tmp_path)]
        )
    finally:
        redirect.close()
        other.close()
    assert code == 2 and not other.seen  # the other host got nothing, the key least of all
    assert (
        f"redirected to {target.split('/')[2]}, not followed: the key goes to the host of --base-url only"
        in run_stderr(capsys)
    )


def test_a_huge_body_is_cut_and_fails_the_request(tmp_path, monkeypatch):
    monkeypatch.setattr(transport, "MAX_RESPONSE_BYTES", 1000)
    server = RawServer(lambda c: c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + b" " * 5000))
    try:
        assert benchmark.main(["--model", "m", "--base-url", server.url, "--out", str(tmp_path), "--limit", "1"]) == 1
    finally:
        server.close()
    (record,) = log_lines(tmp_path)[1:]
    assert (
        record["error"] == "connection error: the response body passed 1,000 bytes; it was cut"
        and record["attempts"] == 1
    )


def test_an_error_beside_choices_in_a_200_is_a_failure_live_and_scored(server, tmp_path):
    contents = solver_contents()
    server.answer = lambda prompt: contents[prompt]
    ok = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}]}
    server.script = [(200, {}, {**ok, "error": {"message": "moderation failed"}})]
    assert run(server, tmp_path, "--concurrency", "1") == 1
    failed = [r for r in log_lines(tmp_path)[1:] if r["error"]]
    assert [r["error"] for r in failed] == ["HTTP 200: moderation failed (in a response marked successful)"]


def test_retry_after_nan_is_ignored():
    rng = random.Random(1)
    assert 0 <= pacing.retry_wait({"retry-after": "nan"}, 1, rng) <= pacing.RETRY_BASE_DELAY
    assert 0 <= pacing.retry_wait({"retry-after-ms": "inf"}, 1, rng) <= pacing.RETRY_BASE_DELAY


def test_an_empty_out_and_an_abbreviated_flag_are_refused(tmp_path, capsys):
    assert benchmark.main(["--out", ""]) == 2
    assert run_stderr(capsys) == "error: --out is empty; name an output folder (default: outputs/)\n"
    with pytest.raises(SystemExit) as stop:
        benchmark.main(["--format", "tsv", "--out", str(tmp_path)])
    assert stop.value.code == 2 and run_stderr(capsys) == (
        "benchmark.py: error: unrecognized arguments: --format tsv; --format: did you mean --formats? "
        "(python benchmark.py --help lists every flag)\n"
    )


def test_a_misspelled_flag_gets_one_line_with_the_flag_it_is_closest_to(capsys):
    with pytest.raises(SystemExit) as stop:
        benchmark.main(["--encodin", "o200k_base", "--sizs=small", "--zzz"])
    assert stop.value.code == 2 and run_stderr(capsys) == (
        "benchmark.py: error: unrecognized arguments: --encodin o200k_base --sizs=small --zzz; --encodin: did you mean "
        "--encoding?; "
        "--sizs: did you mean --sizes? (python benchmark.py --help lists every flag)\n"
    )


# ---- one run per output folder, nothing overwritten


def test_a_second_run_on_the_same_out_stops_at_once_and_pays_nothing(tmp_path, capsys):
    contents = solver_contents()
    release = threading.Event()
    fake = FakeOpenAI(answer=lambda prompt: (release.wait(10), contents[prompt])[1])
    first = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "benchmark.py"),
            "--model",
            "m",
            "--base-url",
            fake.url,
            "--out",
            str(tmp_path),
            "--concurrency",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while not fake.requests and time.monotonic() < deadline:  # the first run is sending
            time.sleep(0.05)
        assert benchmark.main(["--model", "m", "--base-url", fake.url, "--out", str(tmp_path)]) == 2
        err = run_stderr(capsys)
        assert re.fullmatch(
            rf"error: {re.escape(benchmark.display(tmp_path))} is in use by another run of this tool \(pid "
            rf"{first.pid}, since [0-9T:Z-]+\); wait for it to end, or choose another --out\n",
            err,
        )
        release.set()
        assert first.wait(60) == 0
    finally:
        release.set()
        first.kill()
        fake.close()
    assert len(fake.requests) == 30  # each prompt paid once
    assert not (tmp_path / artifacts.LOCK_NAME).exists()


def test_a_killed_run_s_lock_and_staging_folders_are_taken_over(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    import socket

    (tmp_path / artifacts.LOCK_NAME).write_text(
        f"{dead.pid} {socket.gethostname()} 2026-01-01T00:00:00Z\n", encoding="utf-8"
    )
    (tmp_path / ".staging-abc").mkdir()
    (tmp_path / ".staging-abc" / "size_report.json").write_text("[]", encoding="utf-8")
    assert benchmark.main(["--out", str(tmp_path)]) == 0
    assert not (tmp_path / artifacts.LOCK_NAME).exists() and not list(tmp_path.glob(".staging-*"))


def test_export_never_overwrites_a_log_an_input_or_an_earlier_export_unless_told(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert benchmark.main(["--model", "solver", "--out", str(out), "--limit", "3"]) == 0
    log = (out / "requests.jsonl").read_bytes()
    graph = (ROOT / "data" / "graph.json").read_bytes()
    (tmp_path / "g.json").write_bytes(graph)
    cases = [
        (out / "requests.jsonl", "is a file of --out out; write the batch elsewhere"),
        (tmp_path / "g.json", "is an input of this run; write the batch elsewhere"),
    ]
    for target, message in cases:
        argv = ["--model", "m", "--graph", "g.json", "--out", str(out), "--export-batch", str(target)]
        assert benchmark.main(argv) == 2
        assert run_stderr(capsys).endswith(message + "\n")
    assert (out / "requests.jsonl").read_bytes() == log and (tmp_path / "g.json").read_bytes() == graph
    argv = ["--model", "m", "--out", str(tmp_path / "o2"), "--export-batch", "batch.jsonl"]
    assert benchmark.main(argv) == 0
    first = (tmp_path / "batch.jsonl").read_bytes()
    assert benchmark.main(argv) == 2
    assert run_stderr(capsys).endswith(
        "--export-batch: batch.jsonl exists; choose a new path, or pass --overwrite-batch to "
        "replace an earlier export and its numbered parts\n"
    )
    assert benchmark.main([*argv, "--overwrite-batch"]) == 0  # an earlier export: replaced
    assert (tmp_path / "batch.jsonl").read_bytes() == first
    (tmp_path / "batch.jsonl").write_bytes(b"mine")
    (tmp_path / "batch.001-of-009.jsonl").write_bytes(b"notes of mine")
    assert benchmark.main([*argv, "--overwrite-batch"]) == 2  # not a batch request file: never replaced
    assert run_stderr(capsys).endswith(
        "--export-batch: batch.jsonl exists and is not a batch request file; --overwrite-batch "
        "replaces only earlier exports: move it, or choose another path\n"
    )
    assert (tmp_path / "batch.jsonl").read_bytes() == b"mine" and (
        tmp_path / "batch.001-of-009.jsonl"
    ).read_bytes() == b"notes of mine"
    graph_text = out / "graph.json.txt"  # the run's own output, named by no earlier manifest of a fresh folder
    assert (
        benchmark.main(
            ["--model", "m", "--out", str(tmp_path / "o3"), "--export-batch", str(tmp_path / "o3" / "graph.json.txt")]
        )
        == 2
    )
    assert run_stderr(capsys).endswith("is a file of --out o3; write the batch elsewhere\n") and graph_text.exists()


def test_a_full_disk_stops_the_run_with_one_line_and_a_rerun_resumes(tmp_path, capsys, monkeypatch):
    import errno

    real_fsync, calls = os.fsync, []

    def fsync(fd):
        calls.append(fd)
        if len(calls) > 8:  # the header and 7 answers fit; then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert benchmark.main(["--model", "solver", "--out", str(tmp_path), "--concurrency", "1"]) == 2
    err = run_stderr(capsys)
    assert err.count("\n") == 1 and err.endswith(
        "requests.jsonl: cannot append to the log (No space left on device); nothing more "
        "was sent, and what the log holds is kept: free some space and run the same command again\n"
    )
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert benchmark.main(["--model", "solver", "--out", str(tmp_path)]) == 0
    lines = (tmp_path / "requests.jsonl").read_bytes().splitlines()
    assert all(json.loads(line) for line in lines)
    assert sum(json.loads(line).get("type") == "request" for line in lines) == 30


# ---- Batch jobs end to end: upload, create, poll, download, score; resumed, never paid twice


def batch_argv(server, out, *more):
    return ["--model", "m", "--base-url", server.url, "--out", str(out), "--batch", "--poll-interval", "0.05", *more]


def test_a_batch_is_uploaded_created_polled_downloaded_and_scored(tmp_path, capsys):
    contents = solver_contents()
    server = FakeBatches(lambda prompt: contents[prompt], polls=3)
    try:
        assert benchmark.main(batch_argv(server, tmp_path)) == 0
    finally:
        server.close()
    assert (server.uploads, server.creates) == (1, 1)
    cells = results(tmp_path)["cells"]
    assert len(cells) == 30 and all(c["answer_correct"] for c in cells)
    state = json.loads((tmp_path / "batch" / "state.json").read_text(encoding="utf-8"))
    (part,) = state["parts"]
    assert {
        k: part[k]
        for k in ("file", "input_file_id", "batch_id", "status", "total", "completed", "failed", "output_path")
    } == {
        "file": "input.jsonl",
        "input_file_id": "file-1",
        "batch_id": "batch_1",
        "status": "completed",
        "total": 30,
        "completed": 30,
        "failed": 0,
        "output_path": "output.jsonl",
    }
    err = capsys.readouterr().err.splitlines()
    assert err[:3] == [
        "batch 1/1: uploaded input.jsonl (30 requests) as file-1",
        f"batch 1/1: created batch_1; its id is kept in {tmp_path / 'batch' / 'state.json'}: a killed command resumes "
        "polling it",
        "batch 1/1 batch_1: in_progress, 0/30 done, 0 failed (0 s)",
    ]
    assert err[-1] == "batch 1/1 batch_1: completed, 30/30 done, 0 failed (0 s)"
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["batch"]["parts"][0]["batch_id"] == "batch_1"
    assert all(h.get("Authorization") is None for _, _, h in server.requests)  # no key named: none sent


def test_a_batch_killed_mid_poll_resumes_polling_without_a_second_upload(tmp_path):
    contents = solver_contents()
    server = FakeBatches(lambda prompt: contents[prompt], polls=1)
    server.hold = True
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmark.py"), *batch_argv(server, tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        state = tmp_path / "batch" / "state.json"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (
            state.exists() and "in_progress" in state.read_text(encoding="utf-8")
        ):
            time.sleep(0.05)
        process.kill()  # kill -9 mid-poll
        process.wait()
        assert "batch_1" in state.read_text(encoding="utf-8")
        server.hold = False
        assert benchmark.main(batch_argv(server, tmp_path)) == 0  # the same command again
    finally:
        process.kill()
        server.close()
    assert (server.uploads, server.creates) == (1, 1)  # resumed: polled the same batch, paid once
    assert all(c["answer_correct"] for c in results(tmp_path)["cells"])


def test_an_expired_batch_scores_what_came_back_and_counts_the_rest_as_failed(tmp_path, capsys):
    contents = solver_contents()
    server = FakeBatches(lambda prompt: contents[prompt], polls=1, ending="expired")
    try:
        assert benchmark.main(batch_argv(server, tmp_path)) == 1
    finally:
        server.close()
    cells = results(tmp_path)["cells"]
    assert sum(c["status"] == "OK" for c in cells) == 15 and sum(c["status"] != "OK" for c in cells) == 15
    err = capsys.readouterr().err
    assert "warning: batch batch_1 expired: its answers that came back are scored, the rest count as failed\n" in err
    assert sorted(p.name for p in (tmp_path / "batch").iterdir()) == [
        "errors.jsonl",
        "input.jsonl",
        "output.jsonl",
        "state.json",
    ]


def test_a_batch_with_a_partial_error_file_scores_those_as_failed_requests(tmp_path, capsys):
    contents = solver_contents()
    server = FakeBatches(lambda prompt: contents[prompt], polls=1, ending="errors")
    try:
        assert benchmark.main(batch_argv(server, tmp_path)) == 1
    finally:
        server.close()
    summary = results(tmp_path)["requests"]
    assert summary["failed"] == 10 and summary["failures"] == {
        "batch: HTTP 400 (invalid_request_error): bad request": 10
    }


def test_a_batch_that_fails_validation_stops_with_its_errors_and_resubmits_nothing(tmp_path, capsys):
    server = FakeBatches(lambda prompt: "{}", polls=1, ending="failed")
    try:
        assert benchmark.main(batch_argv(server, tmp_path)) == 2
        assert benchmark.main(batch_argv(server, tmp_path)) == 2  # run again: the failed batch is known, not paid again
    finally:
        server.close()
    assert (server.uploads, server.creates) == (1, 1)
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: no batch returned a file to score: batch_1 failed (invalid_json_line: line 1 is not valid); fix what "
        "the errors "
        f"say, then move {tmp_path / 'batch' / 'state.json'} aside to submit again"
    )


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--score", "x.jsonl"], "--batch sends and scores a batch itself: leave out --score"),
        (["--export-batch", "b.jsonl"], "--batch sends and scores a batch itself: leave out --export-batch"),
        (["--poll-interval", "0"], "--poll-interval 0 is not a number of seconds between 0 and 3600; e.g. 30"),
    ],
)
def test_batch_flags_that_cannot_go_together_are_one_line(tmp_path, capsys, flags, message):
    assert (
        benchmark.main(
            ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "o"), "--batch", *flags]
        )
        == 2
    )
    assert capsys.readouterr().err == f"error: {message}\n"


def test_a_batch_sends_the_key_to_its_host_only_and_writes_it_nowhere(tmp_path, monkeypatch):
    monkeypatch.setenv("BATCH_KEY", SECRET)
    contents = solver_contents()
    server = FakeBatches(lambda prompt: contents[prompt], polls=1)
    try:
        assert benchmark.main(batch_argv(server, tmp_path, "--api-key-env", "BATCH_KEY")) == 0
    finally:
        server.close()
    assert server.requests and all(h.get("Authorization") == f"Bearer {SECRET}" for _, _, h in server.requests)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and not any(SECRET.encode() in p.read_bytes() for p in written)


# ---- why an answer failed: one diagnosis per cell (README: Why answers fail)

# the article's 13 edges
E = dict(enumerate(json.loads((ROOT / "data" / "graph.json").read_text(encoding="utf-8"))["edges"]))


def ev(*triples):
    return [{"source": s, "relation": r, "target": t} for s, r, t in triples]


# A hand-made answer per diagnosis AnswerKey gives, on the article's questions (q1: 0, 3, 6, 10 -> Казань; q5: 4
# backwards -> Атлас; q6: abstain).
DIAGNOSED = {
    "no_json": ("q1", "The answer is Kazan, via edges 0, 3, 6 and 10."),
    "false_abstention": ("q1", json.dumps({"answer": "INSUFFICIENT_DATA", "path": [], "evidence": []})),
    "missed_abstention": ("q6", json.dumps({"answer": "Казань", "path": [9, 10], "evidence": []}, ensure_ascii=False)),
    "miscounted_indices": (
        "q5",
        json.dumps({"answer": "Атлас", "path": [2, 3], "evidence": [E[4]]}, ensure_ascii=False),
    ),
    "edge_reversed": (
        "q1",
        json.dumps(
            {
                "answer": "Казань",
                "path": [0, 3, 6, 10],
                "evidence": ev(
                    ("person_irina", "LEADS", "project_orion"),
                    ("project_orion", "USES", "method_graph"),
                    ("org_vector", "DEVELOPED_BY", "method_graph"),
                    ("org_vector", "LOCATED_IN", "city_kazan"),
                ),
            },
            ensure_ascii=False,
        ).replace('"path": [0, 3, 6, 10]', '"path": [0, 3, 99, 10]'),
    ),
    "edge_not_shown": (
        "q1",
        json.dumps(
            {"answer": "Казань", "path": [0, 3], "evidence": ev(("person_irina", "LEADS", "org_vector"))},
            ensure_ascii=False,
        ),
    ),
    "broken_chain": (
        "q1",
        json.dumps({"answer": "Казань", "path": [0, 10], "evidence": [E[0], E[10]]}, ensure_ascii=False),
    ),
    "right_answer_wrong_path": (
        "q4",
        json.dumps({"answer": "Казань", "path": [10], "evidence": [E[10]]}, ensure_ascii=False),
    ),
    "answer_form": (
        "q1",
        json.dumps(
            {"answer": "в Казани", "path": [0, 3, 6, 10], "evidence": [E[i] for i in (0, 3, 6, 10)]}, ensure_ascii=False
        ),
    ),
    "wrong_branch": (
        "q4",
        json.dumps({"answer": "Томск", "path": [5, 8, 11], "evidence": [E[i] for i in (5, 8, 11)]}, ensure_ascii=False),
    ),
    "no_path": ("q1", json.dumps({"answer": "Томск", "path": [], "evidence": []}, ensure_ascii=False)),
}


@pytest.mark.parametrize("fmt", list(benchmark.FORMATS))
def test_diagnoses_are_the_same_in_every_format(tmp_path, fmt):
    """Through a server, every format's prompts: the same answer to the same question gets the same diagnosis."""
    by_question = {
        "q1": DIAGNOSED["edge_not_shown"][1],
        "q2": "```json\n"
        + json.dumps(
            {"answer": "Максим", "path": [11, 8, 5, 2], "evidence": [E[i] for i in (11, 8, 5, 2)]}, ensure_ascii=False
        )
        + "\n```",
        "q3": DIAGNOSED["no_json"][1],
        "q4": DIAGNOSED["wrong_branch"][1],
        "q5": DIAGNOSED["miscounted_indices"][1],
        "q6": DIAGNOSED["missed_abstention"][1],
    }
    # a layout that shows the edges in an order of its own (LightRAG's ranks) is cited by place as shown: the same
    # answer, in its indices
    order = frameworks.cited_order(
        fmt, benchmark.load_inputs(ROOT / "data" / "graph.json", ROOT / "data" / "questions.json").graph
    )
    if order is not None:
        for q, text in by_question.items():
            found = re.search(r"\{.*\}", text, re.S)
            if found and isinstance(parsed := json.loads(found.group()), dict) and parsed.get("path"):
                parsed["path"] = [order.index(i) if 0 <= i < len(order) else i for i in parsed["path"]]
                by_question[q] = text.replace(found.group(), json.dumps(parsed, ensure_ascii=False))
    # no prompt cut
    fake = FakeOpenAI(
        answer=lambda prompt: by_question[next(q for q in by_question if QUESTION_TEXT[q] in prompt)],
        usage=lambda prompt: {"prompt_tokens": 10_000, "completion_tokens": 20, "total_tokens": 10_020},
    )
    try:
        assert benchmark.main(["--model", "m", "--base-url", fake.url, "--out", str(tmp_path), "--formats", fmt]) == 0
    finally:
        fake.close()
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert {c["question_id"]: c["diagnosis"] for c in results["cells"]} == {
        "q1": "edge_not_shown",
        "q2": None,
        "q3": "no_json",
        "q4": "wrong_branch",
        "q5": "miscounted_indices",
        "q6": "missed_abstention",
    }
    assert {c["question_id"]: c["json_as_asked"] for c in results["cells"]}["q2"] is False
    (entry,) = results["aggregates"]
    assert entry["diagnoses"] == {
        "no_json": 1,
        "missed_abstention": 1,
        "miscounted_indices": 1,
        "edge_not_shown": 1,
        "wrong_branch": 1,
    }
    md = (tmp_path / "results.md").read_text(encoding="utf-8")
    assert (
        "- **miscounted indices**: the evidence names exactly the edges of a gold path; the path's indices do not. "
        "Remedy: --edge-ids" in md
    )
    q5_path = json.loads(re.search(r"\{.*\}", by_question["q5"], re.S).group())["path"]  # in the layout's own indices
    assert f'  Example ({fmt}, q5): `{{"answer": "Атлас", "path": {q5_path}' in md
    assert "| 3 | 2 | 1 |  |  |  | 1 |" in md and "| 1 | 1 |  |  | 1 |  |  |" in md  # by hop count: q3 and q4; q5


QUESTION_TEXT = {
    q["id"]: q["question"] for q in json.loads((ROOT / "data" / "questions.json").read_text(encoding="utf-8"))
}


def test_a_log_of_another_version_with_the_same_flags_names_both_versions(tmp_path, capsys):
    """--score of a log whose prompts another version made (an older question generator) said "the log was written
    with no header line says how they were made": now both versions, and what to do."""
    assert benchmark.main(["--model", "solver", "--out", str(tmp_path / "run")]) == 0
    lines = (tmp_path / "run" / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["tool_version"] == results_module.TOOL_VERSION and set(header["questions_sha256"]) == {
        "small/original"
    }
    del header["tool_version"], header["questions_sha256"]  # as an older version wrote it
    header["git"] = {"commit": "0123456789abcdef0123", "dirty": False}
    old = [json.dumps(header)] + [line.replace('"prompt_sha256": "', '"prompt_sha256": "0') for line in lines[1:]]
    (tmp_path / "old.jsonl").write_text("\n".join(old) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert (
        benchmark.main(["--model", "solver", "--score", str(tmp_path / "old.jsonl"), "--out", str(tmp_path / "score")])
        == 2
    )
    err = run_stderr(capsys)
    assert err.startswith(
        f"error: {tmp_path / 'old.jsonl'}: no answer to a prompt of this command; the log was written with the "
        "same flags by graphrag-format-benchmark an earlier version (its header names none), git "
        f"0123456789ab, and this is {results_module.TOOL_VERSION}"
    )
    assert err.endswith(
        ": its prompts are not this version's (questions drawn or worded otherwise, or another layout); score it "
        "with the version that wrote it, or run the same command with --model to send this version's prompts\n"
    )


def test_file_lines_reads_each_non_blank_line_numbered_with_its_record_or_none(tmp_path):
    from graphrag_format_benchmark.runner.log import file_lines

    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"b": 2}\n{torn\n[1]\n \t\n{"c": 3}')
    assert [(n, r) for n, _, r in file_lines(path)] == [
        (1, {"a": 1}),
        (3, {"b": 2}),
        (4, None),
        (5, None),
        (7, {"c": 3}),
    ]
    assert [line for _, line, _ in file_lines(path)][-1] == b'{"c": 3}'
    assert list(file_lines(tmp_path / "absent.jsonl")) == []
