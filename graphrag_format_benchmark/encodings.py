"""--encoding hf:PATH: a Hugging Face tokenizer.json, counted behind the same interface as tiktoken's encodings.

In: an --encoding name. Out: a benchmark.Tokenizer (tokenizer_for). The tokenizers package is imported only here, and
only for an hf: name; every other name goes to benchmark.load_tokenizer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._article import BenchmarkError, Tokenizer, display, load_tokenizer, sha256_hex
from .extras import not_installed


class HFEncoding:
    """A Hugging Face tokenizer.json behind tiktoken's encode_ordinary: no special tokens are added, and text that
    looks like one is counted as the ordinary text it is. Its pre-tokenizer is not one of SPLIT_PATTERNS, so
    every prompt is counted whole."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        if hasattr(tokenizer, "encode_special_tokens"):
            tokenizer.encode_special_tokens = True

    def encode_ordinary(self, text: str) -> list[int]:
        ids: list[int] = self.tokenizer.encode(text, add_special_tokens=False).ids
        return ids


def load_hf_tokenizer(name: str) -> Tokenizer:
    """--encoding hf:PATH: the tokenizer.json of a model served by vLLM or llama.cpp (Llama, Qwen, Mistral...)."""
    path = Path(name[3:])
    try:
        import tokenizers  # only here: the tiktoken runs never need it
    except ImportError:
        raise not_installed(f"--encoding {name}", "tokenizers", "hf") from None
    try:
        raw = path.read_bytes()
        tokenizer = tokenizers.Tokenizer.from_str(raw.decode("utf-8"))
    except OSError as e:
        raise BenchmarkError(
            f"--encoding {name}: cannot read {display(path)} ({e.strerror}); give the path of a tokenizer.json"
        ) from None
    except Exception as e:  # the library raises its own error types for a malformed file
        raise BenchmarkError(
            f"--encoding {name}: {display(path)} is not a Hugging Face tokenizer.json ({str(e).splitlines()[0][:120]})"
        ) from None
    sha = sha256_hex(raw)  # in the label: two files of one name are two tokenizers, counted and cached apart
    return Tokenizer(
        f"hf:{path.name}@{sha[:8]}", HFEncoding(tokenizer), sha, display(path), f"tokenizers {tokenizers.__version__}"
    )


def tokenizer_for(name: str) -> Tokenizer:
    """The tokenizer an --encoding name stands for: hf:PATH (a Hugging Face tokenizer.json), else tiktoken's
    (load_tokenizer)."""
    return load_hf_tokenizer(name) if name.startswith("hf:") else load_tokenizer(name)
