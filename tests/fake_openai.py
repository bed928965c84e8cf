"""A small OpenAI-compatible Chat Completions server on 127.0.0.1, scripted per test.

    server = FakeOpenAI(answer=lambda prompt: '{"answer": ...}')
    server.script = [(429, {"retry-after-ms": "10"}, {...})]  # next responses, before the normal ones
    ... http://127.0.0.1:{server.port}/v1 ...
    server.close()

Every request is recorded (headers and JSON body) in server.requests.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    def __init__(self, answer=lambda prompt: "{}", delay=0.0, usage=None, slots: int | None = None, finish=None):
        """delay: seconds per answer, or prompt -> seconds; slots: answers computed at once (1: a llama.cpp server with one
        slot, which queues the rest in the order they came); finish: prompt -> finish_reason (default stop)."""
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
            disable_nagle_algorithm = True  # headers and body are two writes: on a kept-alive connection Nagle holds the body

            def setup(self):
                super().setup()
                with server.lock:
                    server.connections.add(self.connection)

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with server.lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body, "time": time.monotonic()})
                    scripted = server.script.pop(0) if server.script else None
                    limits = server.limiter(body) if server.limiter else (True, {})
                if not limits[0]:
                    scripted = (429, limits[1], {"error": {"message": "Rate limit reached for tokens", "type": "tokens", "code": "rate_limit_exceeded"}})
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
                    usage = server.usage(prompt) if server.usage else {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020}
                    scripted = (200, {}, {
                        "id": "chatcmpl-test", "object": "chat.completion", "model": body["model"],
                        "system_fingerprint": "fp_test",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                     "finish_reason": server.finish(prompt) if server.finish else "stop"}],
                        "usage": usage,
                    })
                status, headers, payload = scripted
                headers = {**limits[1], **headers}
                data = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode("utf-8")
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
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self):
        """Stop at once, as a server process that dies: no new connection, and the kept-alive ones cut."""
        self.httpd.shutdown()
        self.httpd.server_close()
        with self.lock:
            for connection in self.connections:
                try:
                    connection.shutdown(2)
                except OSError:
                    pass


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

    def close(self):
        self.sock.close()
        for c in self.clients:
            try:
                c.close()
            except OSError:
                pass
