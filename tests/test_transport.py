"""The sending machinery of model runs: http_post (httpx2 under one deadline per attempt) against raw servers
that answer with exact bytes (framings, keep-alive, a connection closed while idle, malformed answers,
deadlines), the log's group commit, and the prompts kept for repeats."""

import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
import types

import pytest

import benchmark
from graphrag_format_benchmark.runner import config, jobs, log as runner_log, transport

from conftest import run_stderr
from fake_openai import FakeOpenAI, TcpServer


class LateBytes(TcpServer):
    """Answers each request on a connection; with late, sends one byte nobody asked for 50 ms after each answer."""

    def __init__(self, late: bool):
        super().__init__("/v1/chat/completions")
        self.late, self.connections, self.sent = late, 0, threading.Event()

    def connected(self, client):
        self.connections += 1
        buffer = b""
        with client:
            try:
                while (request := self.read_request(client, buffer)) is not None:
                    buffer = request[2]
                    client.sendall(OK)
                    if self.late:
                        time.sleep(0.05)
                        client.sendall(b"H")
                        self.sent.set()
            except OSError:  # the client dropped the connection it would not trust: what the test wants
                pass


def test_a_clean_connection_is_reused_at_once_and_one_with_a_waiting_byte_is_dropped():
    clean, late = LateBytes(False), LateBytes(True)
    try:
        for _ in range(5):
            assert post(clean)[0] == 200  # at once, one after another: the same connection every time
        assert clean.connections == 1
        for _ in range(3):
            assert post(late)[0] == 200
            assert late.sent.wait(60)  # the late byte is on the socket (loopback) when the connection is taken again:
            late.sent.clear()  # it is dropped, never read as an answer; no timing to guess on a busy machine
        assert late.connections == 3
    finally:
        clean.close()
        late.close()


class Scripted(TcpServer):
    """A TCP server on 127.0.0.1: on each connection, reads whole requests (headers and a Content-Length body) and
    answers the n-th request of that connection with answers[connection][n] (bytes, or None to close at once)."""

    def __init__(self, *answers: list[bytes | None]):
        self.answers, self.requests, self.connections, self.lock = list(answers), [], 0, threading.Lock()
        super().__init__("/v1/chat/completions")

    def connected(self, client):
        with self.lock:  # connections in the order accepted... or nearly: the tests open them one at a time
            script = self.answers[self.connections] if self.connections < len(self.answers) else []
            self.connections += 1
        data = b""
        with client:
            for answer in script:
                request = self.read_request(client, data)
                if request is None:
                    return
                head, body, data = request
                self.requests.append((head.decode("latin-1"), body))
                if answer is None:
                    return
                client.sendall(answer)
            time.sleep(0.2)  # the script is done: close


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"


def post(server, timeout=5.0):
    return transport.http_post(server.url, {"Content-Type": "application/json"}, b'{"a": 1}', timeout)


@pytest.fixture(autouse=True)
def fresh_connections():
    transport._connections.__dict__.clear()  # no connection kept from another test
    yield
    transport._connections.__dict__.clear()


def test_the_request_is_exact_bytes_and_the_answer_is_read_by_content_length():
    server = Scripted([b"HTTP/1.1 201 Created\r\nX-Thing:  spaced value \r\nContent-Length: 5\r\n\r\nhello"])
    try:
        assert post(server) == (201, {"x-thing": "spaced value", "content-length": "5"}, b"hello")
    finally:
        server.close()
    ((head, body),) = server.requests
    port = server.url.split(":")[2].split("/")[0]
    # the body as it will be logged: no compression asked for
    assert head == (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: */*\r\nConnection: keep-alive\r\n"
        "Accept-Encoding: identity\r\nUser-Agent: graphrag-format-benchmark\r\nContent-Type: application/json\r\n"
        "Content-Length: 8"
    )
    assert body == b'{"a": 1}'


def test_chunked_bodies_with_extensions_and_trailers_and_a_100_continue_before():
    answer = (
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n"
    )
    server = Scripted([answer, OK])
    try:
        status, headers, body = post(server)
        assert (status, body) == (200, b"abc0123456789")
        # the chunked answer was read to its end: kept alive
        assert post(server)[2] == b"{}" and server.connections == 1
    finally:
        server.close()


def test_a_kept_alive_connection_serves_the_next_request_and_one_closed_while_idle_is_replaced():
    # the first connection: two answers, then closed when the third request comes; the second: one answer, then
    # closed with the fourth request unread (a reset)
    server = Scripted([OK, OK, None], [OK], [OK])
    try:
        assert [post(server)[2] for _ in range(4)] == [b"{}", b"{}", b"{}", b"{}"]
    finally:
        server.close()
    assert server.connections == 3 and len(server.requests) == 5  # each request on a closed connection went again, once


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\n\r\n{}",  # no length: the body runs to the connection's end
    ],
)
def test_a_connection_the_server_ends_is_not_kept(answer):
    server = Scripted([answer], [OK])
    try:
        assert post(server)[2] == b"{}" and post(server)[2] == b"{}"
    finally:
        server.close()
    assert server.connections == 2


@pytest.mark.parametrize(
    "answer, error",
    [  # in the words of httpx2's HTTP/1.1 parser (h11)
        (b"SSH-2.0-OpenSSH\r\n\r\n", "illegal status line: bytearray(b'SSH-2.0-OpenSSH')"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",
            "peer closed connection without sending complete message body (received 2 bytes, expected 10)",
        ),
        (b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n{}", "bad Content-Length"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "illegal chunk header: bytearray(b'zz\\r\\n')",
        ),
        (
            b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70000,
            "Server disconnected without sending a response.",
        ),  # headers past h11's 16 KiB: never taken
        (b"HTTP/1.1 20 OK\r\n\r\n", "illegal status line: bytearray(b'HTTP/1.1 20 OK')"),
        (b"HTTP/1.1 2000\r\n\r\n", "illegal status line: bytearray(b'HTTP/1.1 2000')"),
    ],
)
def test_a_malformed_answer_is_a_connection_error_naming_what_was_wrong(answer, error):
    server = Scripted([answer])
    try:
        with pytest.raises(transport.ProtocolError) as caught:
            post(server)
    finally:
        server.close()
    assert str(caught.value) == error and isinstance(caught.value, ConnectionError)


def test_a_204_has_no_body_even_without_a_length_and_the_connection_is_kept():
    server = Scripted([b"HTTP/1.1 204 No Content\r\n\r\n", OK])
    try:
        # not read until the connection ends: that would wait for the timeout
        assert post(server, timeout=2.0) == (
            204,
            {},
            b"",
        )
        assert post(server)[2] == b"{}" and server.connections == 1
    finally:
        server.close()


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n",  # said in advance: fails before a byte of the body is read
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"40\r\n"
        + b"x" * 64
        + b"\r\n"
        + b"40\r\n"
        + b"x" * 64
        + b"\r\n",
    ],
)
def test_a_body_past_the_cap_fails_as_it_passes_it(monkeypatch, answer):
    monkeypatch.setattr(transport, "MAX_RESPONSE_BYTES", 100)
    server = Scripted([answer])  # the server keeps the connection open: the cap ends the request, not the server
    try:
        with pytest.raises(transport.ResponseTooLarge, match="passed 100 bytes"):
            post(server, timeout=30.0)
    finally:
        server.close()


def test_one_deadline_thread_ends_many_attempts_each_at_its_own_time():
    deadlines, ended = transport.Deadlines(), []
    threads = threading.active_count()  # other tests' servers may still be ending in this process
    started = time.monotonic()
    entries = [
        deadlines.arm(t, lambda t=t: ended.append((t, time.monotonic() - started))) for t in (0.6, 0.2, 0.4, 0.3)
    ]
    deadlines.disarm(entries[3])
    while len(ended) < 3 and time.monotonic() - started < 60:  # on a busy machine the thread may run late, never early
        time.sleep(0.05)
    time.sleep(0.2)
    assert [t for t, _ in ended] == [0.2, 0.4, 0.6]  # in deadline order; the disarmed one never ran
    assert all(t <= at for t, at in ended)  # never early
    assert ended[0][1] < ended[2][1]  # each at its own time, not all at the last one
    assert threading.active_count() <= threads + 1  # one thread, not one per attempt


def test_an_https_url_to_a_plain_server_is_a_connection_error_not_a_crash():
    plain = socket.socket()
    plain.bind(("127.0.0.1", 0))
    plain.listen(1)

    def answer():
        client, _ = plain.accept()
        with client:
            client.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")  # plain HTTP to a TLS hello
            time.sleep(0.2)

    threading.Thread(target=answer, daemon=True).start()
    try:
        with pytest.raises(
            OSError
        ) as caught:  # ssl.SSLError is an OSError: logged and retried like any connection fault
            transport.http_post(f"https://127.0.0.1:{plain.getsockname()[1]}/v1/chat/completions", {}, b"{}", 5.0)
    finally:
        plain.close()
    assert type(caught.value).__name__ == "SSLError"


def test_lines_written_together_share_an_fsync_and_each_returns_only_once_on_disk(tmp_path, monkeypatch):
    synced, real_fsync = [], os.fsync
    log = runner_log.Log(tmp_path / "requests.jsonl", config.Redactor([]))

    def fsync(fd):
        time.sleep(0.002)  # a disk that takes its time, so that lines pile up behind it
        real_fsync(fd)
        synced.append(os.fstat(fd).st_size)  # what this fsync made durable

    monkeypatch.setattr(os, "fsync", fsync)
    seen_on_disk = []

    def worker(k):
        for i in range(25):
            log.write({"worker": k, "i": i})
            durable = (tmp_path / "requests.jsonl").read_bytes()[: max(synced)]
            seen_on_disk.append(json.dumps({"worker": k, "i": i}).encode() in durable)  # synced before write() returned

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    lines = (tmp_path / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted((r["worker"], r["i"]) for r in map(json.loads, lines)) == [
        (k, i) for k in range(16) for i in range(25)
    ]
    assert len(synced) < len(lines) / 2  # 400 lines, far fewer fsyncs
    assert all(seen_on_disk)


def test_a_failed_write_fails_every_writer_waiting_on_it_and_all_that_follow(tmp_path, monkeypatch):
    log = runner_log.Log(tmp_path / "requests.jsonl", config.Redactor([]))

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    errors = []

    def worker():
        try:
            log.write({"x": 1})
        except OSError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 8 and set(errors) <= {"[Errno 28] No space left on device", "No space left on device"}
    with pytest.raises(OSError, match="No space left on device"):
        log.write({"after": 1})


def test_recent_prompts_are_rebuilt_once_and_kept_within_their_budget():
    built = []

    class Item:
        def __init__(self, sha):
            self.row = types.SimpleNamespace(prompt_sha256=sha)

        def prompt(self):
            built.append(self.row.prompt_sha256)
            return self.row.prompt_sha256 * 100  # 100 characters

    prompts, items = jobs.RecentPrompts(budget=250), [Item(c) for c in "abc"]
    assert [prompts.get(items[k]) for k in (0, 0, 1, 0)] == ["a" * 100, "a" * 100, "b" * 100, "a" * 100]
    assert built == ["a", "b"]  # a repeat of a prompt is not rebuilt
    prompts.get(items[2])  # 300 characters over a budget of 250: the least recently used (b) goes
    assert list(prompts.texts) == ["a", "c"] and prompts.size == 200
    prompts.get(items[1])
    assert built == ["a", "b", "c", "b"]


# ---- proxies from the environment, as httpx2 reads them


def test_a_request_goes_through_the_proxy_of_http_proxy_and_bypasses_it_for_no_proxy(monkeypatch):
    server, proxy = Scripted([OK]), Scripted([OK])
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy.url.rsplit("/v1", 1)[0])
    try:
        assert post(server)[2] == b"{}"
        transport._connections.__dict__.clear()  # a worker reads the environment when it makes its client
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert post(server)[2] == b"{}"
    finally:
        server.close()
        proxy.close()
    ((proxied, _),) = proxy.requests
    # absolute form: the proxy is asked for the server's URL
    assert proxied.startswith(f"POST {server.url} HTTP/1.1\r\n")
    ((direct, _),) = server.requests
    assert direct.startswith("POST /v1/chat/completions HTTP/1.1\r\n")


def test_requests_through_an_http_proxy_keep_one_connection_alive(monkeypatch):
    proxy = Scripted([OK] * 5)  # its first connection answers five requests
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy.url.rsplit("/v1", 1)[0])
    try:
        for _ in range(5):
            assert transport.http_post("http://127.0.0.1:9/v1/chat/completions", {}, b"{}", 5.0)[0] == 200
    finally:
        proxy.close()
    assert proxy.connections == 1 and len(proxy.requests) == 5


def test_a_proxy_that_refuses_the_tunnel_is_a_proxy_failure_that_stops_the_run_at_once(tmp_path, monkeypatch, capsys):
    proxy = socket.socket()
    proxy.bind(("127.0.0.1", 0))
    proxy.listen(4)
    asked = []

    def refuse():
        while True:
            try:
                client, _ = proxy.accept()
            except OSError:
                return
            with client:
                asked.append(client.recv(65536).split(b"\r\n")[0])
                client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=refuse, daemon=True).start()
    for name in ("NO_PROXY", "no_proxy", "https_proxy", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.getsockname()[1]}")
    monkeypatch.setenv("KEY", "sk-abc")
    try:
        with pytest.raises(transport.ProxyFailure, match=r"^the proxy failed: 403 Forbidden$"):
            transport.http_post("https://api.example.test/v1/chat/completions", {}, b"{}", 5.0)
        transport._connections.__dict__.clear()
        code = benchmark.main(
            [
                "--model",
                "m",
                "--base-url",
                "https://api.example.test/v1",
                "--api-key-env",
                "KEY",
                "--out",
                str(tmp_path / "o"),
            ]
        )
    finally:
        proxy.close()
    # the key would go inside the tunnel, never to the proxy
    assert asked[0] == b"CONNECT api.example.test:443 HTTP/1.1"
    # the run stops with the requests in flight (--concurrency 4), not their retries
    assert code == 2 and len(asked) <= 1 + 4
    last = run_stderr(capsys).splitlines()[-1]
    stopped = re.fullmatch(
        r"error: the proxy failed: 403 Forbidden on the way to https://api.example.test/v1; fix the proxy variable "
        r"\(HTTPS_PROXY, HTTP_PROXY, ALL_PROXY\), or name the host in NO_PROXY; stopped after (\d) request\(s\), "
        r"(\d+) not sent",
        last,
    )
    assert stopped and 1 <= int(stopped[1]) <= 4 and int(stopped[1]) + int(stopped[2]) == 30, last


# ---- connections kept alive over TLS: one handshake per worker for a whole run


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_a_tls_server_sees_at_most_one_handshake_per_worker(tmp_path, monkeypatch):
    """60 requests at --concurrency 4 to a local HTTPS server whose certificate is
    made here and trusted through SSL_CERT_FILE, as a user trusts a private CA:
    keep-alive means one TCP and TLS handshake per worker, not per request."""
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(tmp_path / "key.pem"),
            "-out",
            str(tmp_path / "cert.pem"),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "cert.pem"))
    server = FakeOpenAI(delay=0.05, tls=context)
    try:
        assert server.url.startswith("https://")
        assert (
            benchmark.main(
                [
                    "--model",
                    "m",
                    "--base-url",
                    server.url,
                    "--out",
                    str(tmp_path / "out"),
                    "--permutations",
                    "2",
                    "--concurrency",
                    "4",
                ]
            )
            == 0
        )
    finally:
        server.close()
    assert len(server.requests) == 60 and 1 <= server.handshakes <= 4


def test_every_worker_client_shares_one_tls_context_read_once(monkeypatch):
    """Each worker's client read the certificates again (25-50 ms each): 8 workers started 0.2-0.4 s late. One context
    for all, read once, by the first worker while the others wait for it."""
    import httpx2

    made = []
    real = httpx2.create_ssl_context
    monkeypatch.setattr(httpx2, "create_ssl_context", lambda **kw: made.append(real(**kw)) or made[-1])
    transport._tls_context.cache_clear()
    clients = []

    def worker():
        transport._connections.__dict__.clear()  # a fresh thread has no client: this one builds its own
        clients.append(transport._worker_client()[0])

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    transport._tls_context.cache_clear()
    assert len(made) == 1 and len({id(c) for c in clients}) == 4
    contexts = {id(pool._ssl_context) for c in clients for pool in c.pools()}
    assert contexts == {id(made[0])}


@pytest.mark.parametrize(
    "line",
    [
        b'{"custom_id": "abc-r0", "response": {"body": {"usage": {"prompt_tokens": 700}}}}',
        b'{"a": "\\ud800"}',  # a lone surrogate: msgspec refuses, json reads it
        b'{"a": 123456789012345678901234567890}',  # past 64 bits: an int (orjson would make it a float)
        b'{"a": NaN, "b": 1e400, "c": -0.0, "d": 1.5e-320}',
        b'{"a": 1, "a": 2}',
        b'{"a": "\\u00e9\xc3\xa9"}',
        b'{"a": "\xff"}',  # not UTF-8
        b"\xef\xbb\xbf{}",  # a byte order mark
        b"[" * 5000 + b"]" * 5000,  # deeper than either reads
        b"{torn",
        b"",
    ],
)
def test_json_decoded_by_msgspec_is_what_json_decodes_or_the_same_error(monkeypatch, line):
    """transport.loads: msgspec where installed (the models extra), json otherwise or where msgspec refuses; the
    same value, or the same kind of error, either way."""

    def outcome(decode):
        try:
            value = decode(line)
        except ValueError:  # json's JSONDecodeError and UnicodeDecodeError, or msgspec's errors: one kind
            return "ValueError"
        except RecursionError:
            return "RecursionError"
        return repr(value)  # a lone surrogate, NaN and -0.0 as they are

    with_msgspec = outcome(transport.loads)
    monkeypatch.setattr(transport, "_msgspec_decoder", lambda: None)  # msgspec absent
    without = outcome(transport.loads)
    assert with_msgspec == without == outcome(lambda b: json.loads(b.decode("utf-8")))
