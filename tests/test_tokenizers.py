"""Offline tokenizers: shipped BPE files, exact token counts, clear errors."""

import hashlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata

import pytest
import tiktoken
import tiktoken_ext.openai_public
from hypothesis import given, settings, strategies as st
from kg_graphs import TEXT, TOKENIZERS

import benchmark
from benchmark import BenchmarkError, Edge, Graph, Node
from graphrag_format_benchmark import inputs as inputs_module

from conftest import ROOT, run_cli

TINY = Graph((Node("a", "Ирина", "person"), Node("b", "Орион", "project")), (Edge("a", "LEADS", "b"),))

# encoding -> format -> tokens of the tiny graph alone
TINY_TOKENS = {
    "o200k_base": {
        "json": 95,
        "jsonl": 55,
        "tsv": 31,
        "edge_list": 27,
        "dsl": 40,
        "json_compact": 49,
        "pipe_table": 43,
        "toon": 42,
        "yaml": 52,
        "markdown_kv": 46,
        "ison": 29,
        "isongraph": 66,  # 32 of them the comment line that says how to read a reference
        "turtle": 103,
        "graphrag": 60,
        "lightrag": 178,
        "llamaindex": 35,
        "llamaindex_properties": 35,
        "llamaindex_text": 45,
        "llamaindex_text_properties": 45,
        "langchain": 54,
        "neo4j_graphrag": 143,
    },
    "cl100k_base": {
        "json": 96,
        "jsonl": 56,
        "tsv": 31,
        "edge_list": 28,
        "dsl": 41,
        "json_compact": 48,
        "pipe_table": 45,
        "toon": 43,
        "yaml": 53,
        "markdown_kv": 47,
        "ison": 30,
        "isongraph": 67,
        "turtle": 101,
        "graphrag": 62,
        "lightrag": 179,
        "llamaindex": 36,
        "llamaindex_properties": 36,
        "llamaindex_text": 46,
        "llamaindex_text_properties": 46,
        "langchain": 55,
        "neo4j_graphrag": 145,
    },
}
TINY_PROMPT_TOKENS = {"o200k_base": 172, "cl100k_base": 209}  # dsl prompt for the question "Кто?"


def test_bpe_table_matches_tiktoken_source():
    # Our url -> sha256 table must say what tiktoken itself checks.
    source = inspect.getsource(tiktoken_ext.openai_public)
    pairs = dict(re.findall(r'"(https://[^"]+\.tiktoken)",\s*expected_hash="([0-9a-f]{64})"', source))
    for name, (url, sha) in benchmark.BPE_FILES.items():
        assert pairs[url] == sha, name


@pytest.mark.parametrize("name", benchmark.SHIPPED_ENCODINGS)
def test_shipped_file_is_what_tiktoken_expects(name):
    url, sha = benchmark.BPE_FILES[name]
    shipped = ROOT / "data" / "tiktoken" / hashlib.sha1(url.encode()).hexdigest()
    assert hashlib.sha256(shipped.read_bytes()).hexdigest() == sha


@pytest.mark.parametrize("name", benchmark.SHIPPED_ENCODINGS)
def test_tiktoken_loads_shipped_file_with_no_network(name, tmp_path):
    # A fresh interpreter, an empty user cache and no way to download: the shipped file must be used.
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import benchmark, tiktoken.load\n"
        "def offline(url): raise ConnectionError('no network in this test')\n"
        "tiktoken.load.read_file = offline\n"
        f"t = benchmark.load_tokenizer({name!r}); print(t.bpe_source, t.count('a -LEADS-> b'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT)],
        env={"TIKTOKEN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
    )
    url, _ = benchmark.BPE_FILES[name]
    assert done.stderr == ""
    assert done.stdout == f"data/tiktoken/{hashlib.sha1(url.encode()).hexdigest()} 6\n"
    assert list(tmp_path.iterdir()) == []  # nothing written into the user's cache


@pytest.mark.parametrize("name", benchmark.SHIPPED_ENCODINGS)
@pytest.mark.parametrize("fmt", list(benchmark.FORMATS))
def test_tiny_graph_token_counts(name, fmt):
    tokenizer = benchmark.load_tokenizer(name)
    assert tokenizer.count(benchmark.serialize_checked(fmt, TINY)) == TINY_TOKENS[name][fmt]


@pytest.mark.parametrize("name", benchmark.SHIPPED_ENCODINGS)
def test_tiny_prompt_token_count(name):
    prompt = benchmark.ARTICLE_TEMPLATE.render("dsl", benchmark.serialize_checked("dsl", TINY), "Кто?")
    assert benchmark.load_tokenizer(name).count(prompt) == TINY_PROMPT_TOKENS[name]


def test_exact_token_ids():
    assert benchmark.load_tokenizer("o200k_base").encoding.encode_ordinary("a -LEADS-> b") == [
        64,
        533,
        1400,
        88124,
        609,
        287,
    ]


def test_special_token_text_counts_as_ordinary_text():
    # tiktoken's encode() raises on "<|endoftext|>"; an API sees ordinary text, and so do we.
    assert benchmark.load_tokenizer("o200k_base").count("<|endoftext|>") == 7


def test_user_cache_dir_is_respected(tmp_path, monkeypatch):
    url, _ = benchmark.BPE_FILES["cl100k_base"]
    key = hashlib.sha1(url.encode()).hexdigest()
    shutil.copy(ROOT / "data" / "tiktoken" / key, tmp_path / key)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    tokenizer = benchmark.load_tokenizer("cl100k_base")
    assert tokenizer.bpe_source == f"TIKTOKEN_CACHE_DIR ({tmp_path})"
    assert tokenizer.count("a -LEADS-> b") == 6


def test_unknown_encoding():
    with pytest.raises(BenchmarkError) as caught:
        benchmark.load_tokenizer("o300k")
    assert str(caught.value) == (
        f"unknown encoding 'o300k' in --encoding; tiktoken knows {', '.join(tiktoken.list_encoding_names())}"
    )


def test_unshipped_encoding_without_network(tmp_path, monkeypatch):
    def offline(url):
        raise ConnectionError("no network in this test")

    monkeypatch.setattr(tiktoken.load, "read_file", offline)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(BenchmarkError) as caught:
        benchmark.load_tokenizer("r50k_base")
    key = hashlib.sha1(benchmark.BPE_FILES["r50k_base"][0].encode()).hexdigest()
    assert str(caught.value) == (
        "encoding 'r50k_base' is not shipped with this repo and tiktoken could not load it "
        f"(ConnectionError: no network in this test); put its BPE file, named {key}, in a folder and set "
        "TIKTOKEN_CACHE_DIR to it, or use a shipped encoding: o200k_base, cl100k_base"
    )


def test_corrupted_shipped_file_is_refused(tmp_path, monkeypatch):
    url, sha = benchmark.BPE_FILES["cl100k_base"]
    key = hashlib.sha1(url.encode()).hexdigest()
    (tmp_path / key).write_bytes((ROOT / "data" / "tiktoken" / key).read_bytes().replace(b"\n", b"\r\n", 1))
    monkeypatch.setattr(benchmark, "TIKTOKEN_DIR", tmp_path)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    with pytest.raises(BenchmarkError, match=f"has SHA-256 [0-9a-f]{{64}}, tiktoken expects {sha}; restore it with"):
        benchmark.load_tokenizer("cl100k_base")
    assert (tmp_path / key).exists()  # tiktoken never saw it, so it could not delete it


def test_cli_counts_cl100k_offline(tmp_path):
    done = run_cli(
        "--encoding", "cl100k_base", "--out", str(tmp_path / "out"), env={"TIKTOKEN_CACHE_DIR": str(tmp_path)}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].startswith("json\t")


# ---- a Hugging Face tokenizer.json, for models served by vLLM or llama.cpp


def small_hf_tokenizer(path):
    """A byte-level BPE trained here on a few lines: a real tokenizer.json, made without a download."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    corpus = [
        '{"source": "person_irina", "relation": "LEADS", "target": "project_orion"}',
        "Ты выполняешь точный обход графа.",
        "edge_list NODES EDGES -LEADS-> @ > | person project method org city",
    ] * 20
    tokenizer.train_from_iterator(corpus, trainer)
    tokenizer.save(str(path))
    return tokenizer


def test_hf_tokenizer_counts_the_prompts_and_is_recorded(tmp_path):
    hf = small_hf_tokenizer(tmp_path / "tokenizer.json")
    done = run_cli(
        "--encoding", f"hf:{tmp_path / 'tokenizer.json'},o200k_base", "--out", str(tmp_path / "out"), "--write-prompts"
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "out" / "size_report.json").read_text(encoding="utf-8"))
    label = f"hf:tokenizer.json@{benchmark.sha256_hex((tmp_path / 'tokenizer.json').read_bytes())[:8]}"
    mine = [r for r in rows if r["encoding"] == label]
    assert len(mine) == 30 and {r["tokenizer"] for r in mine} == {f"tokenizers {__import__('tokenizers').__version__}"}
    for r in mine:
        text = (tmp_path / "out" / f"prompt.{r['format']}.{r['question_id']}.txt").read_text(encoding="utf-8")
        assert r["prompt_tokens"] == len(hf.encode(text, add_special_tokens=False).ids)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    entry = next(e for e in manifest["encodings"] if e["name"] == label)
    assert entry["bpe_sha256"] == benchmark.sha256_hex((tmp_path / "tokenizer.json").read_bytes())


def test_tokenizers_is_imported_only_for_an_hf_encoding(tmp_path):
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import benchmark; "
        "code = benchmark.main(['--out', sys.argv[2]]); print(code, 'tokenizers' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(ROOT), str(tmp_path)], capture_output=True, text=True)
    assert done.stdout.splitlines()[-1] == "0 False"


def test_a_bad_tokenizer_file_is_one_line(tmp_path, capsys):
    (tmp_path / "t.json").write_text("{}", encoding="utf-8")
    assert benchmark.main(["--encoding", f"hf:{tmp_path / 't.json'}", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"error: --encoding hf:{tmp_path / 't.json'}: ")
        and "is not a Hugging Face tokenizer.json" in err
    )
    assert err.count("\n") == 1


def test_two_hf_tokenizers_of_one_file_name_are_labelled_and_counted_apart(tmp_path):
    import tokenizers
    from tokenizers import models, pre_tokenizers, trainers

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    small_hf_tokenizer(tmp_path / "a" / "tokenizer.json")
    other = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]"))
    other.pre_tokenizer = pre_tokenizers.Whitespace()
    other.train_from_iterator(["a b c d e f"] * 10, trainers.BpeTrainer(vocab_size=40, special_tokens=["[UNK]"]))
    other.save(str(tmp_path / "b" / "tokenizer.json"))
    done = run_cli(
        "--encoding",
        f"hf:{tmp_path / 'a' / 'tokenizer.json'},hf:{tmp_path / 'b' / 'tokenizer.json'}",
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "out" / "size_report.json").read_text(encoding="utf-8"))
    labels = list(dict.fromkeys(r["encoding"] for r in rows))
    assert len(labels) == 2 and all(label.startswith("hf:tokenizer.json@") for label in labels)
    json_tokens = {
        label: next(r["graph_tokens"] for r in rows if r["encoding"] == label and r["format"] == "json")
        for label in labels
    }
    assert len(set(json_tokens.values())) == 2  # each its own count, not the first one's cached


@pytest.mark.parametrize(
    "left, right, splits",
    [
        ("ГРАФ\n", "{", True),
        ("ВОПРОС\n", "Где?", True),
        ("}\n\n", "B", False),
        ("a\n", " b", False),
        ("a\n", "/b", False),
        ("a \n", "b", False),
        ("a", "\nb", False),
        ("", "x", True),
        ("x\n", "", True),
    ],
)
def test_the_proven_boundary(left, right, splits):
    assert benchmark.splits_between(left, right) is splits


@settings(max_examples=200, deadline=None)
@given(
    names=st.lists(TEXT, min_size=1, max_size=5),
    question=TEXT,
    fmt=st.sampled_from(list(benchmark.FORMATS)),
    language=st.sampled_from(list(benchmark.PROMPT_TEMPLATES)),
    encoding=st.sampled_from(list(TOKENIZERS)),
)
def test_counting_by_parts_equals_a_full_count(names, question, fmt, language, encoding):
    names = [unicodedata.normalize("NFC", n) for n in names]
    nodes = tuple(Node(f"n{i}{n}", n, n or "t") for i, n in enumerate(names))
    edges = tuple(Edge(nodes[i].id, names[i], nodes[-1 - i].id) for i in range(len(nodes)))
    template = inputs_module.load_template(language)
    try:
        text = benchmark.serialized(fmt, Graph(nodes, edges))
    except BenchmarkError as e:  # a name ISON's writer cannot carry (a row's end loses U+2028): refused in one line
        assert fmt in ("ison", "isongraph") and str(e).startswith(f"format {fmt} cannot carry "), e
        return
    shown = benchmark.FormattedGraph(template, fmt, text)
    tokenizer, counts = TOKENIZERS[encoding], benchmark.TokenCounts()
    prompt = template.render(fmt, shown.text, question)
    assert shown.tokens(counts, tokenizer, question) == len(tokenizer.encoding.encode_ordinary(prompt))
    assert shown.prompt_sha256(question) == benchmark.sha256_hex(prompt)
    assert shown.graph_tokens(counts, tokenizer) == len(tokenizer.encoding.encode_ordinary(shown.text))


def test_the_shipped_encodings_have_proven_patterns():
    assert all(t.splits for t in TOKENIZERS.values())
    import tiktoken_ext.openai_public as public

    assert benchmark.sha256_hex(public.r50k_pat_str) in benchmark.SPLIT_PATTERNS


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "o200k_harmony"])
def test_a_shipped_encoding_is_tiktokens_own_and_the_environment_is_left_alone(name, monkeypatch):
    """load_tokenizer set TIKTOKEN_CACHE_DIR for the whole process around each load; it now runs tiktoken's own
    constructor on the shipped file's bytes, and the result is the encoding tiktoken builds from its cache."""
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    written = []

    class Watched(dict):  # the process's environment, every write to it recorded
        def __setitem__(self, key, value):
            written.append(key)
            super().__setitem__(key, value)

    monkeypatch.setattr(os, "environ", Watched(os.environ))
    benchmark._SHIPPED.pop(name, None)  # made again here, not taken from an earlier test's load
    ours = benchmark.load_tokenizer(name).encoding
    monkeypatch.undo()
    assert written == []
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(ROOT / "data" / "tiktoken"))
    theirs = tiktoken.get_encoding(name)
    text = 'Ирина руководит «Орион» {"a": [1, 2]} 日本語 <|endoftext|> x\u0301 🙂\n\n  done'
    assert (ours._pat_str, ours._special_tokens, ours.n_vocab) == (
        theirs._pat_str,
        theirs._special_tokens,
        theirs.n_vocab,
    )
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text) and ours is not theirs
