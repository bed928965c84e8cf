"""Nothing a server, a model or a file can send crashes the tool, poisons its log or leaks a key (the second hostile
campaign's reproductions, kept so the next campaign starts from them)."""

import base64
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse

import pytest

import benchmark
from graphrag_format_benchmark import artifacts, inputs as inputs_module, leakage, measure, options
from graphrag_format_benchmark.runner import config, send, transport

from conftest import ROOT, run_cli, run_stderr
from fake_openai import FakeOpenAI, TcpServer

sys.path.insert(0, str(ROOT / "tests"))


def solver_contents() -> dict[str, str]:
    args = options.parse_config(["--model", "solver"])
    inputs = inputs_module.load_inputs(args.graph, benchmark.DEFAULT_QUESTIONS)
    items = measure.measure(inputs, options.make_plan(args)).items
    return {item.prompt(): json.dumps(send.solver_answer(item), ensure_ascii=False) for item in items}


def results(out) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


# ---- answers that poisoned the log: a run, its resume and --score each end with the answer failed and named


POISONS = {
    "an answer of a thousand [": lambda body: body["choices"][0]["message"].update(content="[" * 1000),
    "a response field nested 990 deep": lambda body: body.update(extra="DEEP"),
    "usage.prompt_tokens of 401 digits": lambda body: body["usage"].update(prompt_tokens=int("9" * 401)),
    "finish_reason an object": lambda body: body["choices"][0].update(finish_reason={"why": ["x"]}),
}


@pytest.mark.parametrize("poison", POISONS, ids=list(POISONS))
def test_a_poisoned_answer_fails_alone_and_the_log_stays_readable(tmp_path, poison):
    contents = solver_contents()
    first = next(iter(contents))
    server = FakeOpenAI(answer=lambda prompt: contents[prompt])
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "usage": {"prompt_tokens": 900, "completion_tokens": 9},
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": contents[first]}, "finish_reason": "stop"}
        ],
    }
    POISONS[poison](body)
    server.script = [(200, {}, json.dumps(body).replace('"DEEP"', "[" * 990 + "1" + "]" * 990).encode("utf-8"))]
    argv = ["--model", "m", "--base-url", server.url, "--out", str(tmp_path), "--concurrency", "1"]
    try:
        assert benchmark.main(argv) in (0, 1)
        assert benchmark.main(argv) in (0, 1)  # the resume reads the log it wrote
    finally:
        server.close()
    assert benchmark.main([*argv, "--score", str(tmp_path / "requests.jsonl")]) in (0, 1)
    for line in (tmp_path / "requests.jsonl").read_text(encoding="utf-8").splitlines():
        assert transport.json_depth(json.loads(line)) <= transport.MAX_JSON_DEPTH + 2
    cells = results(tmp_path)["cells"]
    assert len(cells) == 30 and sum(c["parse_success"] is False for c in cells) <= 1


def test_batch_lines_that_crashed_the_scorer_are_failed_answers_or_named(tmp_path, capsys):
    args = ["--model", "m", "--formats", "json", "--out", str(tmp_path / "out")]
    assert benchmark.main([*args, "--export-batch", str(tmp_path / "batch.jsonl")]) == 0
    ids = [
        json.loads(line)["custom_id"] for line in (tmp_path / "batch.jsonl").read_text(encoding="utf-8").splitlines()
    ]

    def line(custom_id, **body):
        response = {
            "id": "x",
            "model": "m",
            "usage": {"prompt_tokens": 900, "completion_tokens": 9},
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
        }
        response.update(body)
        return json.dumps({"custom_id": custom_id, "response": {"status_code": 200, "body": response}})

    lines = [
        line(ids[0], usage={"prompt_tokens": int("9" * 401), "completion_tokens": 1}),
        line(
            ids[1],
            choices=[{"index": 0, "message": {"role": "assistant", "content": "[" * 1000}, "finish_reason": {"a": 1}}],
        ),
        *(line(i) for i in ids[2:]),
    ]
    (tmp_path / "out.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert benchmark.main([*args, "--score", str(tmp_path / "out.jsonl")]) == 0
    (tmp_path / "bad.jsonl").write_text(line(ids[0][:40] + "-r" + "9" * 5000) + "\n", encoding="utf-8")
    assert benchmark.main([*args, "--score", str(tmp_path / "bad.jsonl")]) == 2
    assert "matches no prompt of this command" in run_stderr(capsys)


def test_a_log_line_whose_fields_have_the_wrong_types_is_skipped_not_a_crash(tmp_path):
    assert benchmark.main(["--model", "solver", "--out", str(tmp_path), "--limit", "3"]) == 0
    log = tmp_path / "requests.jsonl"
    record = json.loads(log.read_text(encoding="utf-8").splitlines()[1])
    record.update(prompt_sha256=["a list"], error={"an": "object"}, finish_reason=7)
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
    assert benchmark.main(["--model", "solver", "--out", str(tmp_path), "--limit", "3"]) == 0
    assert benchmark.main(["--model", "solver", "--out", str(tmp_path / "s"), "--limit", "3", "--score", str(log)]) == 0


# ---- an unsolicited response is never taken for the answer to the next request


class Unsolicited(TcpServer):
    """Answers each request, then at once sends a second response nobody asked for on the same connection."""

    def __init__(self, contents):
        super().__init__()
        self.contents, self.requests = contents, 0

    def connected(self, client):
        with contextlib.suppress(OSError, ValueError, StopIteration):  # the client dropped the connection
            self.serve_requests(client)

    def serve_requests(self, client):
        buffer = b""
        while (request := self.read_request(client, buffer)) is not None:
            _, raw, buffer = request
            body = json.loads(raw)
            self.requests += 1
            right = self.contents[body["messages"][0]["content"]]
            injected = json.dumps({"answer": "INJECTED", "path": [], "evidence": []})
            responses = b""
            for content in (right, injected):
                payload = json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "model": "m",
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                        ],
                    }
                ).encode()
                responses += (
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(payload)
                    + payload
                )
            # Both written at once, as a server writes what it sends unasked right behind its answer: the promise is
            # that bytes waiting on a connection when it is taken again are never read as an answer (a zero-timeout
            # check). Two writes from a Python thread measured this process's thread switching instead: the second could
            # come after the next request had left, where no client can tell it from the answer without waiting.
            client.sendall(responses)
            time.sleep(0.02)


@pytest.mark.parametrize("concurrency", ["1", "8"])
def test_an_unsolicited_response_is_never_logged_as_an_answer(tmp_path, concurrency):
    server = Unsolicited(solver_contents())
    try:
        assert (
            benchmark.main(
                ["--model", "m", "--base-url", server.url, "--out", str(tmp_path), "--concurrency", concurrency]
            )
            == 0
        )
    finally:
        server.close()
    logged = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text(encoding="utf-8").splitlines()[1:]]
    assert len(logged) == 30 and not any("INJECTED" in (r["content"] or "") for r in logged)
    assert all(c["answer_correct"] for c in results(tmp_path)["cells"])


# ---- the key in any form it can be echoed in never reaches a file or stderr


KEY = "sk-test-0123456789abcdefghijKLMNOPQRSTUV"


@pytest.mark.parametrize(
    "form",
    [
        KEY,
        KEY.upper(),
        urllib.parse.quote(KEY, safe=""),
        base64.b64encode(b"Bearer " + KEY.encode()).decode(),
        KEY[:-1],
        KEY[:12],
        base64.b64encode(KEY.encode()).decode(),
        base64.b64encode(b"x" + KEY.encode()).decode(),
    ],
)
def test_a_key_echoed_in_any_form_is_redacted_everywhere(tmp_path, form):
    server = FakeOpenAI()
    server.script = [
        (401, {}, {"error": {"message": f"bad key {form} (sent as Authorization)", "code": "invalid_api_key"}})
    ]
    try:
        done = run_cli(
            "--model",
            "m",
            "--base-url",
            server.url,
            "--api-key-env",
            "MY_KEY",
            "--out",
            str(tmp_path / "out"),
            "--concurrency",
            "1",
            env={"MY_KEY": KEY},
        )
    finally:
        server.close()
    assert done.returncode == 2
    leaked = [KEY[i : i + 10].lower() for i in range(len(KEY) - 9)]
    written = "".join(
        p.read_text(encoding="utf-8", errors="replace") for p in (tmp_path / "out").rglob("*") if p.is_file()
    )
    for text in (done.stderr, written):
        folded = text.lower()
        assert not any(piece in folded for piece in leaked) and form not in text
        assert base64.b64encode(b"Bearer " + KEY.encode()).decode()[8:20] not in text


@pytest.mark.parametrize(
    "host, loopback",
    [
        ("127.0.0.1", True),
        ("127.12.0.5", True),
        ("::1", True),
        ("localhost", True),
        ("127.attacker.example", False),
        ("127.0.0.1.nip.io", False),
        ("10.0.0.1", False),
    ],
)
def test_loopback_is_decided_by_address_not_by_name(host, loopback):
    assert config.is_loopback(host) is loopback


def test_a_key_is_never_sent_over_plain_http_to_a_name_that_starts_like_loopback(tmp_path):
    done = run_cli(
        "--model",
        "m",
        "--base-url",
        "http://127.attacker.example/v1",
        "--api-key-env",
        "MY_KEY",
        "--out",
        str(tmp_path / "o"),
        env={"MY_KEY": KEY},
    )
    assert (
        done.returncode == 2 and "is plain http: the key in MY_KEY would cross the network in clear text" in done.stderr
    )


# ---- one run per folder, whatever the timing


RACE = """
import sys, time
sys.path.insert(0, sys.argv[1])
import benchmark
from graphrag_format_benchmark import artifacts
from pathlib import Path
lock = artifacts.OutLock(Path(sys.argv[2]))
start = float(sys.argv[3])
while time.time() < start:
    pass
try:
    lock.acquire()
except benchmark.BenchmarkError:
    print("busy", flush=True)
    sys.exit(0)
took = time.monotonic()  # the same clock in every process of the machine
time.sleep(0.3)
print("held", took, time.monotonic(), flush=True)
lock.release()
"""


def holders_at_once(outputs: list[str]) -> int:
    """How many of the racers held the lock while another did: one that started late and took it after the first
    had released it held it alone."""
    spans = [tuple(map(float, line.split()[1:])) for line in outputs if line.startswith("held")]
    return sum(any(a < d and c < b for k, (c, d) in enumerate(spans) if k != j) for j, (a, b) in enumerate(spans))


def test_two_runs_racing_for_one_folder_never_both_get_it(tmp_path):
    doubles = 0
    for round_ in range(12):
        out = tmp_path / f"r{round_}"
        if round_ % 2:  # a dead run's lock, empty, as a kill between create and write would leave it
            out.mkdir()
            (out / artifacts.LOCK_NAME).write_bytes(b"")
        start = time.time() + 0.3
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", RACE, str(ROOT), str(out), str(start)], stdout=subprocess.PIPE, text=True
            )
            for _ in range(3)
        ]
        outputs = [p.communicate(timeout=30)[0].strip() for p in procs]
        doubles += holders_at_once(outputs) > 0
        assert any(line.startswith("held") for line in outputs)
    assert doubles == 0


# ---- inputs and flags that gave a traceback or the wrong words


def test_a_graph_that_is_a_device_or_a_fifo_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "fifo.json")
    for graph in ("/dev/zero", str(tmp_path / "fifo.json")):
        done = run_cli("--graph", graph, "--out", str(tmp_path / "o"))
        assert done.returncode == 2 and done.stderr.strip().endswith(
            "is not a regular file; pass a file with --graph"
        ), done.stderr


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--concurrency", "٣", "--model", "m"], "argument --concurrency: invalid whole number: '٣'"),
        (
            ["--timeout", "1e-300", "--model", "m"],
            "error: --timeout 1e-300 is under 0.01 s: no server answers that fast; give at least 0.01",
        ),
        (["--model", ""], "error: --model is empty; name the model the endpoint serves (or 'solver')"),
        (
            ["--model", "m", "--base-url", "http://127.0.0.1:99999/v1"],
            "error: --base-url is not a valid URL (Port out of range 0-65535)",
        ),
        (["--model", "m", "--base-url", "http://[::1/v1"], "error: --base-url is not a valid URL (Invalid IPv6 URL)"),
    ],
)
def test_bad_flags_are_one_line(tmp_path, flags, message):
    done = run_cli(*flags, "--out", str(tmp_path / "o"))
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_a_key_a_header_cannot_carry_is_refused_naming_its_position(tmp_path):
    done = run_cli(
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--api-key-env",
        "MY_KEY",
        "--out",
        str(tmp_path / "o"),
        env={"MY_KEY": "sk-ключ"},
    )
    assert done.returncode == 2 and done.stderr == (
        "error: the key in MY_KEY holds a character an HTTP header cannot carry at position 4 "
        "of 7; set it again as the provider gave it\n"
    )


def test_server_error_text_with_terminal_escapes_is_printed_inert(tmp_path):
    server = FakeOpenAI()
    server.script = [
        (400, {}, {"error": {"message": "no \x1b]0;pwned\x07 \x1b[2J \x1b]52;c;ZXZpbA==\x07", "code": "bad"}})
    ] * 3
    try:
        done = run_cli("--model", "m", "--base-url", server.url, "--out", str(tmp_path / "o"), "--concurrency", "1")
    finally:
        server.close()
    assert done.returncode == 2 and "\x1b" not in done.stderr + done.stdout and "\\x1b]0;pwned\\x07" in done.stderr


def test_a_401_after_answers_in_flight_keeps_their_results(tmp_path):
    contents = solver_contents()
    gate = threading.Event()
    server = FakeOpenAI(answer=lambda prompt: (gate.wait(30), contents[prompt])[1])
    server.script = [(401, {}, {"error": {"message": "key revoked", "code": "invalid_api_key"}})]

    # the 401 goes out while other requests wait for their answers, however busy the machine
    def once_others_are_in_flight():
        deadline = time.monotonic() + 30
        while len(server.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        threading.Timer(0.3, gate.set).start()

    server.before_script = once_others_are_in_flight
    try:
        code = benchmark.main(["--model", "m", "--base-url", server.url, "--out", str(tmp_path), "--concurrency", "8"])
    finally:
        gate.set()
        server.close()
    assert code == 1 and (tmp_path / "results.json").exists()
    answered = sum(c["status"] == "OK" for c in results(tmp_path)["cells"])
    assert 1 <= answered < 30


@pytest.mark.parametrize("value", ["a\n\u0301", "x\r\u0300y", "t\u0301", "|\u0327", "\\\u0301"])
@pytest.mark.parametrize("fmt", list(benchmark.FORMATS))
def test_a_newline_or_escape_followed_by_a_combining_mark_is_carried(fmt, value):
    graph = benchmark.Graph(
        (benchmark.Node("a", value, "t"), benchmark.Node("b", "B", "t")), (benchmark.Edge("a", "R", "b"),)
    )
    text = benchmark.serialize_checked(fmt, graph)
    assert benchmark.first_difference(graph, benchmark.FORMATS[fmt].parse(text)) is None


def test_a_name_past_the_csv_modules_field_limit_is_carried_by_tsv():
    graph = benchmark.Graph((benchmark.Node("a", "x" * 131_073, "t"),), ())
    assert benchmark.parse_tsv(benchmark.serialize_checked("tsv", graph)) == graph


def test_file_names_are_checked_once_each_not_against_every_question(tmp_path):
    questions = [
        {"id": f"q{i}", "question": f"Where is thing {i}?", "answer": f"Thing {i}", "path": [], "insufficient": False}
        for i in range(4000)
    ]
    names = [f"prompt.small.original.p0.A.json.q{i}.txt" for i in range(4000)]
    qs = tuple(benchmark.Question(q["id"], q["question"], (q["answer"],), (), False) for q in questions)
    started = time.process_time()
    checks = leakage.leakage_checks(qs, [], benchmark.ARTICLE_TEMPLATE, names)
    assert (
        time.process_time() - started < 30
        and next(c for c in checks if c.name == "file_names_have_no_answer").result == "pass"
    )
