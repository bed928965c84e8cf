"""A model run's settings (ModelConfig), and the API key kept out of everything written or printed (Redactor).

In: the flags of a model run. Out: ModelConfig (what a request sends and how the run sends it); public forms of URLs
and command lines for logs and manifests; a Redactor that removes the key in every derived form.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

BATCH_MAX_REQUESTS = 50_000  # the Batch API's limits per input file
BATCH_MAX_BYTES = 200_000_000
SOLVER_MODEL = "solver"  # --model solver: answers from the control solver, no network
STRUCTURED_FORMS = ("json_schema", "json_object")


def _answer_schema(cited: str) -> dict[str, Any]:
    """The JSON schema of an answer whose path cites edges as cited: 'integer' (indices) or 'string' (edge ids)."""
    return {
        "type": "object",
        "properties": {
            "answer": {"type": "string"},
            "path": {"type": "array", "items": {"type": cited}},
            "evidence": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "source": {"type": "string"},
                        "relation": {"type": "string"},
                        "target": {"type": "string"},
                    },
                    "required": ["source", "relation", "target"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["answer", "path", "evidence"],
        "additionalProperties": False,
    }


ANSWER_SCHEMA = _answer_schema("integer")
EDGE_ID_ANSWER_SCHEMA = _answer_schema("string")  # --edge-ids


@dataclass(frozen=True)
class ModelConfig:
    model: str
    base_url: str  # up to and including /v1, no trailing slash
    api_key_env: str | None  # name of the variable that holds the key (None: send none); the key itself is never stored
    temperature: float | None  # None: not sent (reasoning models take only their default)
    seed: int | None  # sent as the sampling seed, repeat r sends seed + r; None: not sent
    max_output_tokens: int
    max_tokens_field: str  # max_tokens (most servers, Ollama only reads this) or max_completion_tokens (OpenAI)
    structured: str | None  # response_format with the answer schema: json_schema (OpenAI) or json_object (llama.cpp)
    reasoning_effort: str | None  # sent as reasoning_effort when given
    concurrency: int
    repeats: int
    limit: int | None  # only the first N prompts: a dry slice
    timeout: float
    max_retries: int
    edge_ids: bool = False  # the answer's path cites edge ids (strings), not indices
    tokens_per_minute: int | None = None  # --tokens-per-minute: sending is paced to it (Pacer)
    requests_per_minute: int | None = None  # --requests-per-minute: the same

    def sampling(self, repeat: int) -> dict[str, Any]:
        """Every request field that can change an answer, besides the prompt: part of the resume key."""
        schema = EDGE_ID_ANSWER_SCHEMA if self.edge_ids else ANSWER_SCHEMA
        form = (
            {"type": "json_schema", "json_schema": {"name": "graph_answer", "strict": True, "schema": schema}}
            if self.structured == "json_schema"
            else {"type": "json_object", "schema": schema}
            if self.structured == "json_object"
            else None
        )
        return {
            **({} if self.temperature is None else {"temperature": self.temperature}),
            **({} if self.seed is None else {"seed": self.seed + repeat}),
            self.max_tokens_field: self.max_output_tokens,
            **({} if self.reasoning_effort is None else {"reasoning_effort": self.reasoning_effort}),
            **({} if form is None else {"response_format": form}),
        }

    def body(self, prompt: str, repeat: int) -> dict[str, Any]:
        return {"model": self.model, "messages": [{"role": "user", "content": prompt}], **self.sampling(repeat)}


def is_loopback(host: str) -> bool:
    """The host is this machine, decided by its address, never by how its name starts: '127.0.0.1', '::1', 'localhost'
    are; '127.attacker.example' and '127.0.0.1.nip.io' are names that any DNS can point elsewhere."""
    import ipaddress

    if host.casefold() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def public_url(url: str) -> str:
    """A URL without user info, query or fragment, fit for a log: 'https://u:p@h/v1?key=x' -> 'https://h/v1'."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def public_argv(argv: Sequence[str]) -> list[str]:
    """The command line as it may be written down: --base-url without user info, query or fragment."""
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--base-url" and i + 1 < len(argv):
            out += [arg, public_url(argv[i + 1])]
            i += 2
            continue
        out.append("--base-url=" + public_url(arg[len("--base-url=") :]) if arg.startswith("--base-url=") else arg)
        i += 1
    return out


class Redactor:
    """Removes the API key (and the base URL's credentials) from anything about to be written or printed: the
    secret as it is and in every form a server could echo it in (repr and JSON escapes, URL-encoded, in any case,
    in base64 at any alignment, 'Bearer KEY' in base64), and any piece of those of REDACT_WINDOW characters or
    more (a prefix, the key less its last character). A piece shorter than that is no usable secret."""

    def __init__(self, secrets: list[str]) -> None:
        exact, pieces = set(), set()
        for secret in filter(None, secrets):
            forms = {
                secret,
                repr(secret)[1:-1],
                json.dumps(secret)[1:-1],
                urllib.parse.quote(secret, safe=""),
                urllib.parse.quote_plus(secret),
            }
            raw = secret.encode("utf-8")
            for prefix in (
                b"",
                b"Bearer ",
                b"x:",
            ):  # base64 at each of its three alignments, and as an Authorization value
                encoded = base64.b64encode(prefix + raw).decode("ascii")
                forms.add(encoded[math.ceil(len(prefix) * 4 / 3) :].rstrip("="))
            forms.add(base64.b64encode(b"Bearer " + raw).decode("ascii"))
            if len(secret) < 4:
                continue
            exact |= {f for f in forms if len(f) >= 4}
            pieces |= {
                f[i : i + REDACT_WINDOW].lower()
                for f in forms
                if len(f) >= REDACT_WINDOW
                for i in range(len(f) - REDACT_WINDOW + 1)
            }
        self.secrets = sorted(exact, key=len, reverse=True)
        self.pieces = sorted(pieces)

    @overload
    def __call__(self, value: str) -> str: ...
    @overload
    def __call__(self, value: object) -> object: ...
    def __call__(self, value: object) -> object:
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        return value

    def _text(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
        folded = text.lower()
        found = [piece for piece in self.pieces if piece in folded]  # each a scan in C; none, almost always
        if not found:
            return text
        if len(folded) != len(text):  # a character whose lower case is longer: find the pieces without folding
            spans = [m.span() for piece in found for m in re.finditer(re.escape(piece), text, re.IGNORECASE)]
        else:
            spans = [
                (m.start(), m.start() + len(piece)) for piece in found for m in re.finditer(re.escape(piece), folded)
            ]
        out, end = [], 0
        for start, stop in sorted(spans):
            if start > end:
                out.append(text[end:start])
                out.append("[redacted]")
            elif not out or out[-1] != "[redacted]":
                out.append("[redacted]")
            end = max(end, stop)
        return "".join(out) + text[end:]


REDACT_WINDOW = 10  # characters of a piece of the key (or of one of its forms) that count as the key


def key_and_redactor(config: ModelConfig) -> tuple[str, Redactor]:
    """The API key a run sends (the value of --api-key-env's variable; none for the control solver), and the Redactor
    of it and of --base-url's credentials."""
    key = os.environ.get(config.api_key_env, "") if config.model != SOLVER_MODEL and config.api_key_env else ""
    url = urllib.parse.urlsplit(config.base_url)
    return key, Redactor([key, url.password or "", url.query])


def auth_headers(key: str) -> dict[str, str]:
    """The headers every request to the provider carries: who sends it, and the key when there is one."""
    return {"User-Agent": "graphrag-format-benchmark", **({"Authorization": f"Bearer {key}"} if key else {})}
