"""An OpenAI-compatible Chat Completions server for speed benches, in its own process: it answers every
request after a fixed delay and costs almost no CPU, so the client's cost is what a bench measures.

    $ python bench/answer_server.py 0.02          # prints its URL, then serves until killed

Minimal HTTP/1.1 over asyncio: keep-alive, Content-Length bodies, one fixed answer; the delay is a timer on
the event loop, not a sleeping thread, so thousands of requests can wait at once. Not for tests of error
handling: tests/fake_openai.py scripts failures.
"""

import asyncio
import json
import sys

ANSWER = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "model": "m",
        "system_fingerprint": "fp_bench",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": '{"answer": "x", "path": [], "evidence": []}'},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020},
    }
).encode()
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(ANSWER)) + ANSWER


class Answering(asyncio.Protocol):
    def __init__(self, delay: float) -> None:
        self.delay, self.buffer, self.transport = delay, b"", None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            length = 0
            for line in self.buffer[:head_end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            end = head_end + 4 + length
            if len(self.buffer) < end:
                return
            self.buffer = self.buffer[end:]
            asyncio.get_running_loop().call_later(self.delay, self.answer)

    def answer(self) -> None:
        if not self.transport.is_closing():
            self.transport.write(RESPONSE)


async def serve(delay: float) -> None:
    server = await asyncio.get_running_loop().create_server(lambda: Answering(delay), "127.0.0.1", 0, backlog=1024)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(float(sys.argv[1]) if len(sys.argv) > 1 else 0.02))
