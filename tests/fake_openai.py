"""A small OpenAI-compatible Chat Completions server on 127.0.0.1, scripted per test.

    server = FakeOpenAI(answer=lambda prompt: '{"answer": ...}')
    server.script = [(429, {"retry-after-ms": "10"}, {...})]  # next responses, before the normal ones
    ... http://127.0.0.1:{server.port}/v1 ...
    server.close()

Every request is recorded (headers and JSON body) in server.requests.
"""

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    def __init__(
        self, answer=lambda prompt: "{}", delay=0.0, usage=None, slots: int | None = None, finish=None, tls=None
    ):
        """delay: seconds per answer, or prompt -> seconds; slots: answers computed at once (1: a llama.cpp server with
        one slot, which queues the rest in the order they came); finish: prompt -> finish_reason (default stop); tls: an
        ssl.SSLContext to serve https with (each connection then is one TLS handshake, counted in self.connections)."""
        self.answer, self.delay, self.usage, self.finish = answer, delay, usage, finish
        self.slots = threading.Semaphore(slots) if slots else None
        self.script: list = []  # (status, headers, body or bytes) served before normal answers
        self.before_script = None  # called, if set, before a scripted response is sent
        self.limiter = None  # body -> (admitted, rate-limit headers), if set: a request not admitted gets a 429
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.connections: set = set()  # open client connections (keep-alive), closed with the server
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = (
                True  # headers and body are two writes: on a kept-alive connection Nagle holds the body
            )

            def setup(self):
                super().setup()
                with server.lock:
                    server.connections.add(self.connection)
                    if server.handshakes is not None:
                        server.handshakes += 1

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with server.lock:
                    server.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body, "time": time.monotonic()}
                    )
                    scripted = server.script.pop(0) if server.script else None
                    limits = server.limiter(body) if server.limiter else (True, {})
                if not limits[0]:
                    scripted = (
                        429,
                        limits[1],
                        {
                            "error": {
                                "message": "Rate limit reached for tokens",
                                "type": "tokens",
                                "code": "rate_limit_exceeded",
                            }
                        },
                    )
                if server.slots:
                    server.slots.acquire()  # a queued request waits for the slot, whether or not its client still waits
                try:
                    delay = server.delay(body["messages"][0]["content"]) if callable(server.delay) else server.delay
                    if delay:
                        time.sleep(delay)
                finally:
                    if server.slots:
                        server.slots.release()
                if scripted is not None and server.before_script:
                    server.before_script()
                if scripted is None:
                    prompt = body["messages"][0]["content"]
                    content = server.answer(prompt)
                    usage = (
                        server.usage(prompt)
                        if server.usage
                        else {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020}
                    )
                    scripted = (
                        200,
                        {},
                        {
                            "id": "chatcmpl-test",
                            "object": "chat.completion",
                            "model": body["model"],
                            "system_fingerprint": "fp_test",
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": content},
                                    "finish_reason": server.finish(prompt) if server.finish else "stop",
                                }
                            ],
                            "usage": usage,
                        },
                    )
                status, headers, payload = scripted
                headers = {**limits[1], **headers}
                data = (
                    payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode("utf-8")
                )
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):  # a scripted failure is not noise on stderr
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.url = f"http{'s' if tls is not None else ''}://127.0.0.1:{self.port}/v1"
        self.handshakes = 0 if tls is not None else None
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self):
        """Stop at once, as a server process that dies: no new connection, and the kept-alive ones cut."""
        self.httpd.shutdown()
        self.httpd.server_close()
        with self.lock:
            for connection in self.connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(2)


class TcpServer:
    """A bare TCP server on 127.0.0.1 for servers that answer with exact bytes: each connection is handed to
    self.connected(client) on a thread of its own. url ends in path."""

    def __init__(self, path: str = "/v1"):
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}{path}"
        self.clients: list = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            self.clients.append(client)
            threading.Thread(target=self.connected, args=(client,), daemon=True).start()

    def connected(self, client):
        raise NotImplementedError

    @staticmethod
    def read_request(client, buffer: bytes) -> tuple[bytes, bytes, bytes] | None:
        """The next whole request on a connection (headers and a Content-Length body) after what buffer holds:
        (head, body, what is left over), or None when the client closed the connection first."""
        while b"\r\n\r\n" not in buffer:
            chunk = client.recv(65536)
            if not chunk:
                return None
            buffer += chunk
        head, _, buffer = buffer.partition(b"\r\n\r\n")
        length = int(
            next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
        )
        while len(buffer) < length:
            buffer += client.recv(65536)
        return head, buffer[:length], buffer[length:]

    def close(self):
        self.sock.close()
        for c in self.clients:
            with contextlib.suppress(OSError):
                c.close()


class FakeBatches:
    """OpenAI's Files and Batches endpoints, scripted: POST /v1/files (multipart), POST /v1/batches, GET
    /v1/batches/ID, GET /v1/files/ID/content. A batch answers each line of its input with answer(prompt) after
    `polls` polls; ending says how it ends: completed, expired (the first half answered, the rest in the error
    file as batch_expired), failed (validation: no files), or errors (every third line a 400 in the error file)."""

    def __init__(self, answer, polls: int = 2, ending: str = "completed"):
        self.answer, self.polls, self.ending = answer, polls, ending
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.uploads, self.creates, self.requests, self.lock = 0, 0, [], threading.Lock()
        self.hold = False  # while set, batches stay in_progress
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, status, payload):
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with server.lock:
                    server.requests.append(("POST", self.path, dict(self.headers)))
                    if self.path == "/v1/files":
                        boundary = self.headers["Content-Type"].split("boundary=")[1].encode()
                        parts = body.split(b"--" + boundary)
                        content = (
                            next(p for p in parts if b'name="file"' in p).split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n", 1)[0]
                        )
                        assert any(b'name="purpose"' in p and p.rstrip().endswith(b"batch") for p in parts)
                        server.uploads += 1
                        file_id = f"file-{len(server.files) + 1}"
                        server.files[file_id] = content
                        return self.reply(
                            200, {"id": file_id, "object": "file", "purpose": "batch", "bytes": len(content)}
                        )
                    if self.path == "/v1/batches":
                        request = json.loads(body)
                        assert request["endpoint"] == "/v1/chat/completions" and request["completion_window"] == "24h"
                        server.creates += 1
                        batch_id = f"batch_{len(server.batches) + 1}"
                        lines = server.files[request["input_file_id"]].decode().splitlines()
                        server.batches[batch_id] = {"id": batch_id, "input": lines, "polls": 0, "status": "validating"}
                        return self.reply(200, server.view(batch_id))
                return self.reply(404, {"error": {"message": "no such endpoint"}})

            def do_GET(self):
                with server.lock:
                    server.requests.append(("GET", self.path, dict(self.headers)))
                    if self.path.startswith("/v1/batches/"):
                        batch_id = self.path.rsplit("/", 1)[1]
                        server.advance(batch_id)
                        return self.reply(200, server.view(batch_id))
                    if self.path.startswith("/v1/files/") and self.path.endswith("/content"):
                        return self.reply(200, server.files[self.path.split("/")[3]])
                return self.reply(404, {"error": {"message": "no such endpoint"}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def advance(self, batch_id):
        batch = self.batches[batch_id]
        if batch["status"] not in ("validating", "in_progress"):
            return
        batch["polls"] += 1
        batch["status"] = "in_progress"
        if self.hold or batch["polls"] < self.polls:
            return
        if self.ending == "failed":
            batch["status"] = "failed"
            batch["errors"] = {
                "object": "list",
                "data": [{"code": "invalid_json_line", "message": "line 1 is not valid", "line": 1}],
            }
            return
        out, err = [], []
        for k, line in enumerate(batch["input"]):
            request = json.loads(line)
            if self.ending == "expired" and k >= len(batch["input"]) // 2:
                err.append(
                    {
                        "id": f"req_{k}",
                        "custom_id": request["custom_id"],
                        "response": None,
                        "error": {
                            "code": "batch_expired",
                            "message": "This request could not be executed before the completion window expired.",
                        },
                    }
                )
            elif self.ending == "errors" and k % 3 == 2:
                err.append(
                    {
                        "id": f"req_{k}",
                        "custom_id": request["custom_id"],
                        "response": {
                            "status_code": 400,
                            "body": {"error": {"message": "bad request", "type": "invalid_request_error"}},
                        },
                        "error": None,
                    }
                )
            else:
                prompt = request["body"]["messages"][0]["content"]
                out.append(
                    {
                        "id": f"req_{k}",
                        "custom_id": request["custom_id"],
                        "error": None,
                        "response": {
                            "status_code": 200,
                            "body": {
                                "id": "chatcmpl",
                                "object": "chat.completion",
                                "model": request["body"]["model"],
                                "choices": [
                                    {
                                        "index": 0,
                                        "message": {"role": "assistant", "content": self.answer(prompt)},
                                        "finish_reason": "stop",
                                    }
                                ],
                                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                            },
                        },
                    }
                )
        for kind, rows in (("output", out), ("error", err)):
            if rows:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                batch[f"{kind}_file_id"] = file_id
        batch["done"], batch["failed"] = len(out), len(err)
        batch["status"] = "expired" if self.ending == "expired" else "completed"

    def view(self, batch_id):
        batch = self.batches[batch_id]
        return {
            "id": batch_id,
            "object": "batch",
            "status": batch["status"],
            "endpoint": "/v1/chat/completions",
            "output_file_id": batch.get("output_file_id"),
            "error_file_id": batch.get("error_file_id"),
            "errors": batch.get("errors"),
            "request_counts": {
                "total": len(batch["input"]),
                "completed": batch.get("done", 0),
                "failed": batch.get("failed", 0),
            },
        }

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
