"""One POST to the endpoint (http_post), over httpx2: what no library promises is ours.

In: a URL, headers, a JSON body and a deadline. Out: (status, headers, body), or an error the runner can classify.
httpx2 does HTTP/1.1 framing, TLS, proxies from the environment and keep-alive (one client per worker thread); ours
are one deadline per attempt whatever the server sends (Deadlines: one thread ends them all), the body cap
(MAX_RESPONSE_BYTES), no redirects, and no unsolicited bytes taken for an answer. Also: JSON a server or a model sent,
depth-guarded (untrusted_json), and token counts as a server gives them (server_count, Usage).
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import itertools
import json
import os
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import socket

MAX_JSON_DEPTH = 64  # deeper JSON from a server or a file is refused: nothing this tool reads nests half as deep


def json_depth(value: object) -> int:
    """How deeply a parsed JSON value nests, without recursion: json_depth([[1], {"a": []}]) -> 3."""
    depth, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            depth = max(depth, level)
            if level > MAX_JSON_DEPTH:
                return level
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return depth


@functools.cache
def _msgspec_decoder() -> Any:
    """msgspec's JSON decoder (the models extra), or None where msgspec is not installed."""
    try:
        import msgspec
    except ImportError:
        return None
    return msgspec.json.Decoder()


def loads(data: bytes | str) -> Any:
    """json.loads's value, decoded by msgspec where it is installed (4x the stdlib's speed on a Batch output's lines,
    and exact on integers of any size, where orjson turns them into floats); where msgspec refuses what json reads
    (a lone surrogate, NaN, a number past a float's range), json reads it: the same value either way, or the same
    ValueError (a UnicodeDecodeError included) or RecursionError."""
    decoder = _msgspec_decoder()
    if decoder is not None:
        try:
            return decoder.decode(data)
        except ValueError:  # msgspec.DecodeError and ValidationError are ValueErrors: json decides
            pass
    return json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)


def untrusted_json(text: str) -> object:
    """JSON that a server or a model sent: the value, or None when it is not JSON, nests deeper than MAX_JSON_DEPTH (an
    answer of a thousand '[' from a model stuck in a loop), or holds a number Python refuses to convert."""
    try:
        value = loads(text)
    except (ValueError, RecursionError):
        return None
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:  # no deeper than its opening brackets: no walk needed
        return value  # (the walk cost 2.5 s of scoring 100,800 Batch lines)
    return value if json_depth(value) <= MAX_JSON_DEPTH else None


MAX_RESPONSE_BYTES = 32_000_000  # a chat completion is kilobytes; a body past this is cut and the request failed


class ResponseTooLarge(OSError):
    """The server sent more than MAX_RESPONSE_BYTES: the request fails instead of filling memory."""


class AttemptTimeout(TimeoutError):
    """One attempt (connect, headers and body together) took longer than --timeout."""


class ProtocolError(ConnectionError):
    """The server's answer is not HTTP/1.1 as we read it (a bad status line, a cut body): the server is there,
    so the request is retried like one under load."""


class Deadlines:
    """One thread that ends every worker's attempts at their deadlines: a timer thread per attempt cost more CPU
    than the request itself. arm() returns an entry; disarm() it when the attempt ends; an entry past its
    deadline has its callback run once, on this thread."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        # [deadline, sequence, callback or None once disarmed or run]: mixed types, in a list disarm() changes in place
        self.heap: list[list[Any]] = []
        self.sequence = itertools.count()
        self.thread: threading.Thread | None = None

    def arm(self, timeout: float, callback: Callable[[], None]) -> list[Any]:
        entry = [time.monotonic() + timeout, next(self.sequence), callback]
        with self.cond:
            if self.thread is None:
                self.thread = threading.Thread(target=self._watch, name="deadlines", daemon=True)
                self.thread.start()
            heapq.heappush(self.heap, entry)
            if self.heap[0] is entry:
                self.cond.notify()
        return entry

    def disarm(self, entry: list[Any]) -> None:
        with self.cond:
            entry[2] = None  # left in the heap; dropped when it comes to the top

    def _watch(self) -> None:
        with self.cond:
            while True:
                while self.heap and self.heap[0][2] is None:
                    heapq.heappop(self.heap)
                if not self.heap:
                    self.cond.wait()
                    continue
                wait = self.heap[0][0] - time.monotonic()
                if wait > 0:
                    self.cond.wait(wait)
                    continue
                entry = heapq.heappop(self.heap)
                callback, entry[2] = entry[2], None
                callback()  # quick: sets an event and shuts a socket down


_deadlines = Deadlines()


class _Sockets:
    """The network backend of one worker's client: httpcore's own, with each socket it opens kept, so that the
    deadline thread can shut the one in use down (a blocked read wakes at once) whatever the server sends: a drip
    of one byte at a time or chunks that never end pass every per-read timeout a library has. Proxied and TLS
    connections go through connect_tcp too."""

    def __init__(self) -> None:
        import httpcore2

        self.inner = httpcore2.SyncBackend()
        self.socks: list[socket.socket] = []
        self.connects = 0
        self.expired = False  # this worker's attempt is past its deadline: a socket that opens now is shut at once

    def connect_tcp(  # httpcore's NetworkBackend method; it and its stream (Any) ship no types
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[tuple[Any, ...]] | None = None,
    ) -> Any:
        stream = self.inner.connect_tcp(host, port, timeout, local_address, socket_options)
        self.connects += 1
        self.socks = [s for s in self.socks if s.fileno() != -1] + [stream.get_extra_info("socket")]
        if self.expired:
            self.shutdown()
        return stream

    def connect_unix_socket(  # never used: --base-url is http(s)
        self, path: str, timeout: float | None = None, socket_options: Iterable[tuple[Any, ...]] | None = None
    ) -> Any:
        return self.inner.connect_unix_socket(path, timeout, socket_options)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)

    def shutdown(self) -> None:
        import socket

        self.expired = True
        for sock in self.socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


@functools.cache
def _client_class() -> type:
    """httpx2.Client whose transports (direct, and one per proxy it reads from the environment) use a worker's
    _Sockets: httpx2 builds them inside its constructor and takes no network backend, so the two methods that
    build them are where it is set."""
    import httpx2

    class Client(httpx2.Client):
        def __init__(self, backend: _Sockets, **kwargs: Any) -> None:
            self.backend = backend
            super().__init__(**kwargs)

        def _init_transport(self, *args: Any, **kwargs: Any) -> Any:  # httpx2's transports: no types
            return self._own(super()._init_transport(*args, **kwargs))

        def _init_proxy_transport(self, *args: Any, **kwargs: Any) -> Any:
            return self._own(super()._init_proxy_transport(*args, **kwargs))

        def _own(self, transport: Any) -> Any:
            pool = getattr(transport, "_pool", None)
            if pool is None or not hasattr(pool, "_network_backend"):
                raise RuntimeError(
                    f"httpx2 {httpx2.__version__} builds its transports in another way: pin the version of "
                    "requirements.lock.txt"
                )
            pool._network_backend = self.backend
            return transport

        def pools(self) -> list[Any]:
            return [cast(Any, t)._pool for t in (self._transport, *self._mounts.values()) if t is not None]

    return Client


@functools.lru_cache(maxsize=4)
def _tls_context(cert_file: str | None = None, cert_dir: str | None = None) -> ssl.SSLContext:
    """The certificates (the environment's SSL_CERT_FILE or SSL_CERT_DIR, else certifi's), read once for every worker's
    client: each client read them again (25-50 ms each), so 8 workers started 0.2-0.4 s late, the first answers with
    them (a run of 180 requests at 100 ms, 8 in flight: 1.46x the ideal)."""
    import httpx2

    return httpx2.create_ssl_context(trust_env=True)


_tls_lock = threading.Lock()


def _worker_client() -> tuple[Any, _Sockets]:  # the client: _client_class()'s, of httpx2 (no types)
    """This thread's client and its sockets: one each per worker, so that keep-alive is per worker and a deadline
    shuts only its own worker's connection. Every client shares one TLS context (_tls_context)."""
    worker = _connections
    if worker.client is None or worker.backend is None:
        import httpx2

        with _tls_lock:  # the first worker reads the certificates; the others wait for them instead of reading them too
            # read again if they change
            tls = _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        worker.backend = _Sockets()
        worker.client = _client_class()(
            worker.backend,
            verify=tls,
            follow_redirects=False,
            trust_env=True,
            timeout=None,
            limits=httpx2.Limits(max_connections=4, max_keepalive_connections=2, keepalive_expiry=5.0),
            headers={"Accept-Encoding": "identity", "User-Agent": "graphrag-format-benchmark"},
        )
    return worker.client, worker.backend


def _drop_connections(client: Any, idle_only: bool) -> None:
    for pool in client.pools():
        for conn in pool.connections:
            if not idle_only or conn.is_idle():
                conn.close()


def _drop_unsolicited(client: Any) -> None:
    """Close each idle kept-alive connection with a byte waiting on it: past the end of the last answer in its HTTP/1.1
    parser (h11), or readable on its socket now (select with a zero timeout; a TLS record already decrypted counts
    too). The next request would take those bytes for its answer; a connection the server closed shows readable
    too, and is replaced without a failed attempt."""
    import select

    for pool in client.pools():
        for conn in list(pool.connections):
            if not conn.is_idle():
                continue
            inner = getattr(conn, "_connection", None)
            h11_state = getattr(inner, "_h11_state", None)
            stream = getattr(inner, "_network_stream", None)
            sock = stream.get_extra_info("socket") if stream is not None else None
            ssl_object = stream.get_extra_info("ssl_object") if stream is not None else None
            waiting = h11_state is not None and bool(h11_state.trailing_data[0])
            if not waiting and sock is not None and sock.fileno() != -1:
                waiting = bool(select.select([sock], [], [], 0)[0]) or (
                    ssl_object is not None and ssl_object.pending() > 0
                )
            if waiting:
                conn.close()


class _Worker(threading.local):
    """Each worker thread's own client (and so its keep-alive connections) and its sockets; None until it is made."""

    client: Any = None  # _client_class()'s (httpx2 ships no types)
    backend: _Sockets | None = None


_connections = _Worker()


def _cause(e: BaseException) -> OSError | None:
    """The OSError under an httpx2 error (refused, unknown host, reset, a certificate): the runner tells 'no server
    there' from 'a server that cut its answer' by it."""
    seen = e.__cause__ or e.__context__
    while seen is not None:
        if isinstance(seen, OSError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


class ProxyFailure(ConnectionError):
    """The proxy of HTTPS_PROXY / HTTP_PROXY / ALL_PROXY refused or failed the tunnel: no answer can come through it,
    so until one request has succeeded it stops the run at once, as no server there does."""


# what a model run posts through: http_post's signature (url, headers, body, timeout) -> (status, headers, body)
Post = Callable[[str, dict[str, str], bytes, float], tuple[int, dict[str, str], bytes]]


def http_post(url: str, headers: dict[str, str], data: bytes, timeout: float) -> tuple[int, dict[str, str], bytes]:
    """POST and return (status, headers with lower-case names, body); raises OSError on connection faults.

    Through httpx2 (proxies and certificates from the environment, as it reads them: HTTPS_PROXY, HTTP_PROXY,
    ALL_PROXY, NO_PROXY, SSL_CERT_FILE, SSL_CERT_DIR). timeout bounds the whole attempt, whatever the server
    sends: at the deadline the worker's socket is shut down (Deadlines, _Sockets). A body past
    MAX_RESPONSE_BYTES fails the request as it is read. Redirects are not followed (the key goes to --base-url's
    host only): a 3xx is returned as it is. A kept-alive connection is reused (one per worker for a whole run)
    unless a byte is waiting on it when it is taken again, buffered in the HTTP parser or readable on its socket (a
    zero-timeout check, no wait): HTTP/1.1 cannot tell an unsolicited response from the answer to the next request,
    so such a connection is dropped, never read; one the server closed while idle is replaced and the request sent
    on a new one, once."""
    import httpx2

    client, backend = _worker_client()
    _drop_unsolicited(client)
    for attempt in (1, 2):
        backend.expired, connects, answered = False, backend.connects, False
        deadline = _deadlines.arm(timeout, backend.shutdown)
        try:
            with client.stream("POST", url, headers=headers, content=data, timeout=timeout) as response:
                answered = True
                length = response.headers.get("content-length", "")
                if length.isdigit() and int(length) > MAX_RESPONSE_BYTES:
                    raise ResponseTooLarge(f"the response body passed {MAX_RESPONSE_BYTES:,} bytes; it was cut")
                chunks, size = [], 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > MAX_RESPONSE_BYTES:
                        raise ResponseTooLarge(f"the response body passed {MAX_RESPONSE_BYTES:,} bytes; it was cut")
                    chunks.append(chunk)
                status, response_headers = response.status_code, dict(response.headers)
        except (httpx2.HTTPError, OSError) as e:
            if backend.expired or isinstance(e, httpx2.TimeoutException):
                raise AttemptTimeout(f"no complete answer within {timeout:g} s") from None
            if isinstance(e, OSError):  # ResponseTooLarge
                raise
            if (
                attempt == 1
                and backend.connects == connects
                and not answered
                and isinstance(e, (httpx2.RemoteProtocolError, httpx2.NetworkError))
            ):
                continue  # the server had closed the kept-alive connection while it was idle: a new one
            if isinstance(e, httpx2.ProxyError):
                raise ProxyFailure(f"the proxy failed: {e}") from None
            cause = _cause(e)
            if cause is not None and not isinstance(e, httpx2.RemoteProtocolError):
                raise cause from None
            raise ProtocolError(str(e) or type(e).__name__) from None
        finally:
            _deadlines.disarm(deadline)
        if backend.expired:  # a deadline that passed as the answer completed: the answer stands, the socket does not
            _drop_connections(client, idle_only=False)
        else:
            _drop_unsolicited(client)
        return status, response_headers, b"".join(chunks)
    raise AssertionError("unreachable")


MAX_COUNT = 10**12  # a token count past this is no count a server could mean


def server_count(value: object) -> int | None:
    """A token count as a server gives it, or None when it cannot
    be one (not a whole number, negative, absurdly large)."""
    return value if type(value) is int and 0 <= value <= MAX_COUNT else None


@dataclass(slots=True, frozen=True)
class Usage:
    """The counts of a response's usage that are read, each a server_count (None when absent or no count)."""

    prompt_tokens: int | None  # usage.prompt_tokens: the prompt, by the server's count
    completion_tokens: int | None  # usage.completion_tokens: the answer
    cached_tokens: int | None  # usage.prompt_tokens_details.cached_tokens (OpenAI, vLLM): what a prefix cache served

    @classmethod
    def of(cls, usage: object) -> Usage:
        """The counts of usage as the server sent it (any JSON value)."""
        if not isinstance(usage, dict):
            return cls(None, None, None)
        details = usage.get("prompt_tokens_details")
        return cls(
            server_count(usage.get("prompt_tokens")),
            server_count(usage.get("completion_tokens")),
            server_count(details.get("cached_tokens")) if isinstance(details, dict) else None,
        )
