"""The flags: the parser (make_parser), their checks, and the settings they make.

In: the command line. Out: a frozen RunConfig (read_config: argparse's namespace read once, typed), checked before any
work (check_flags: every number finite and in range, no flag that the others make meaningless), and the run's
settings: the Plan, the ModelConfig, the GateSpec and the GenerateSpec.
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import math
import os
import re
import stat
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import join_registries
from ._article import (
    ARTICLE_FORMATS,
    CONTEXT_WINDOW,
    DATA,
    FORMATS,
    GENERATED_QUESTIONS,
    OUTPUTS,
    ROOT,
    BenchmarkError,
    Parser,
    display,
    warn,
)
from .encodings import tokenizer_for
from .extras import not_installed
from .frameworks import FRAMEWORK_BUDGETS, Budget
from .gate import DEFAULT_ABSTENTION_TOLERANCE, DEFAULT_TOLERANCE, GateSpec
from .inputs import GRAPH_FORMATS, GRAPH_ORDERS, load_template
from .leakage import LEAKAGE_MODES
from .matrix import Plan
from .questions import DEFAULT_PROPERTY_SHARE, GenerateSpec
from .runner.config import (
    BATCH_MAX_BYTES,
    BATCH_MAX_REQUESTS,
    SOLVER_MODEL,
    STRUCTURED_FORMS,
    ModelConfig,
    is_loopback,
    public_url,
)
from .stores import STORE_FIELDS
from .variants.contexts import CONTEXT_KINDS, DEFAULT_SEED, ID_VARIANTS, SIZES
from .wording import QUESTION_TEXTS, read_relation_phrases


def comma_names(value: str) -> tuple[str, ...]:
    """An argparse type: comma-separated names, each stripped: 'json, dsl' -> ('json', 'dsl'). Which names a flag
    knows is parse_names', where its registry is read."""
    return tuple(v.strip() for v in value.split(","))


def parse_names(names: tuple[str, ...], known: list[str] | tuple[str, ...], flag: str) -> list[str]:
    """The names of a comma_names flag, each known and listed once: ('json', 'dsl') -> ['json', 'dsl']."""
    for name in names:
        if name not in known:
            raise BenchmarkError(f"unknown name {name!r} in {flag}; choose from {', '.join(known)}")
    twice = next((name for k, name in enumerate(names) if name in names[:k]), None)
    if twice is not None:
        raise BenchmarkError(f"{flag} lists {twice!r} twice: {','.join(names)!r}")
    return list(names)


def whole_number(value: str) -> int:
    """An argparse type: a whole number written in ASCII digits
    ('٣' is a digit to Python's int, not to a user's shell)."""
    text = value.strip()
    if not (text.lstrip("+-").isdigit() and text.isascii()) or len(text) > 18:
        raise argparse.ArgumentTypeError(f"invalid whole number: {value!r}")
    return int(text)


def real_number(value: str) -> float:
    """An argparse type: a number written in ASCII ('nan' and
    'inf' pass here and are refused by check_flags, by name)."""
    if not value.strip().isascii() or len(value) > 40:
        raise argparse.ArgumentTypeError(f"invalid number: {value!r}")
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {value!r}") from None


def _or_none(kind: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse type that also takes 'none': _or_none(float)('0.5') -> 0.5, ('none') -> None."""

    def parse(value: str) -> object:
        return None if value.lower() == "none" else kind(value)

    parse.__name__ = kind.__name__
    return parse


def _out_folder(value: str) -> Path | None:
    """--out as a path; None for an empty one, which check_flags refuses (Path('') would be the current folder)."""
    return Path(value) if value.strip() else None


DISTRIBUTION = "graphrag-format-benchmark"  # its name on PyPI and in pyproject.toml


def tool_version(root: Path = ROOT) -> str:
    """This tool's version: a checkout's pyproject.toml's (the code that runs), else the installed package's."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == DISTRIBUTION:
            return str(project["version"])
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


class _Version(argparse.Action):
    """--version: the tool's name and version on stdout, exit code 0; read only when asked for."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: object, values: object, option: object = None
    ) -> None:
        print(f"{DISTRIBUTION} {tool_version()}")  # on stdout, as argparse's own version action prints
        parser.exit(0)


DEFAULT_OUT = (
    OUTPUTS  # outputs/ beside benchmark.py in a checkout; installed, the working folder's (benchmark.INSTALLED)
)

# Every flag in --help's order: (group, flag, argparse's keywords), group None being the main one.
FLAGS: list[tuple[str | None, str, dict[str, Any]]] = [
    (None, "--version", dict(action=_Version, help="print the tool's name and version, and exit")),
    (
        None,
        "--encoding",
        dict(
            type=comma_names,
            default="o200k_base",
            help="tiktoken encoding(s), comma-separated (default: o200k_base)",
        ),
    ),
    (None, "--graph", dict(type=Path, default=DATA / "graph.json", help="graph file (default: data/graph.json)")),
    (
        None,
        "--graph-format",
        dict(
            choices=list(GRAPH_FORMATS),
            help="how to read --graph (default: a framework's store by its folder or file name: graphrag, lightrag, "
            "llamaindex; else by its extension: .json, .tsv/.csv triples, .ttl/.nt RDF, .graphml, .jsonl Neo4j APOC "
            "export)",
        ),
    ),
    (
        None,
        "--store-fields",
        dict(
            choices=STORE_FIELDS,
            default="sent",
            help="of a framework's store, read what its context sends (the default: bookkeeping such as source ids, "
            "file paths and timestamps left out, and what it does not show, LightRAG's keywords and weight, "
            "GraphRAG's and LlamaIndex's entity types), or all of it",
        ),
    ),
    (
        None,
        "--graph-order",
        dict(
            choices=GRAPH_ORDERS,
            default="file",
            help="the order nodes and edges are shown in: as the file lists them (default), or sorted (nodes by id, "
            "edges by source, relation, target), the same whatever file the graph comes from",
        ),
    ),
    (None, "--questions", dict(type=Path, help="questions file (default: data/questions.json)")),
    (None, "--out", dict(type=_out_folder, default=DEFAULT_OUT, help="output folder (default: outputs/)")),
    (
        None,
        "--from-prompts",
        dict(
            type=Path,
            metavar="FILE",
            help='the prompts your framework logged (JSON Lines: chat request bodies, or {"question", '
            '"prompt"}): each one\'s context read back exactly and measured in every format; results.md says what '
            "each format would save on that traffic (docs/logged-prompts.md)",
        ),
    ),
    (
        None,
        "--formats",
        dict(
            type=comma_names,
            default=",".join(ARTICLE_FORMATS),
            help=f"comma-separated formats, in report order (default: {','.join(ARTICLE_FORMATS)}; known: "
            "{known_formats})",
        ),
    ),
    (
        None,
        "--sizes",
        dict(
            type=comma_names,
            default="small",
            help=f"comma-separated graph sizes: {', '.join(SIZES)} (default: small)",
        ),
    ),
    (
        None,
        "--ids",
        dict(
            type=comma_names,
            default="original",
            help=f"comma-separated id variants: {', '.join(ID_VARIANTS)} (default: original)",
        ),
    ),
    (
        None,
        "--permutations",
        dict(
            type=whole_number,
            default=1,
            metavar="K",
            help="edge orders per graph variant, 0 the canonical one (default: 1)",
        ),
    ),
    (None, "--budget", dict(type=whole_number, metavar="N", help="also run mode B: pack each prompt into N tokens")),
    (
        None,
        "--context-window",
        dict(
            type=whole_number,
            default=CONTEXT_WINDOW,
            metavar="N",
            help=f"prompts over N tokens overflow (default: {CONTEXT_WINDOW})",
        ),
    ),
    (
        None,
        "--seed",
        dict(
            type=_or_none(whole_number),
            default=DEFAULT_SEED,
            help=f"seed of distractors, orders, ids and model sampling (default: {DEFAULT_SEED}); none: no sampling "
            "seed is sent, and the matrix keeps the default seed",
        ),
    ),
    (
        None,
        "--write-prompts",
        dict(
            action=argparse.BooleanOptionalAction,
            default=None,
            help="write every prompt file (default: yes for the article's layout, one small graph as given; no for a "
            "matrix run)",
        ),
    ),
    (
        None,
        "--prompt",
        dict(
            metavar="ru|en|FILE",
            help="prompt template: ru (the article's, default), en (the same in English) or a UTF-8 file with "
            "{format_name}, {graph} and {question} once each",
        ),
    ),
    (
        None,
        "--leakage",
        dict(
            choices=LEAKAGE_MODES,
            default="fail",
            help="a failing leakage check stops the run (fail, default) or only warns",
        ),
    ),
    (
        None,
        "--generate-questions",
        dict(
            type=whole_number,
            metavar="N",
            help="draw N questions from the graph instead of reading --questions, and write them to "
            f"{GENERATED_QUESTIONS} in --out",
        ),
    ),
    (None, "--hops", dict(metavar="LO-HI", help="hop counts of generated questions, spread evenly (default: 1-4)")),
    (
        None,
        "--abstain-share",
        dict(type=real_number, metavar="S", help="share of generated near-miss abstention questions (default: 0.2)"),
    ),
    (
        None,
        "--property-share",
        dict(
            type=real_number,
            metavar="S",
            help="share of generated questions about properties, on a graph that has any: a condition on a hop, and "
            "a property asked for at the end (default: 0.25)",
        ),
    ),
    (
        None,
        "--wording",
        dict(
            choices=("natural", "template"),
            help="how generated questions read: natural asks as a user would, naming no relation verbatim ('Who "
            "created Mr Mann?'); template spells out the walk ('Start at \"Mr Mann\". Follow created backwards. "
            "...'). Default: natural; in Russian, natural only for relations with a Russian line in "
            "--relation-phrases",
        ),
    ),
    (
        None,
        "--relation-phrases",
        dict(
            type=Path,
            metavar="FILE",
            help="how relations read in natural questions: 'relation<TAB>phrase<TAB>inverse phrase' a line (two nouns: "
            "developer, product), or 'relation<TAB>phrase'; others are derived from their names. In Russian, two "
            "questions with {x}: 'LEADS<TAB>Чем руководит {x}?<TAB>Под чьим руководством находится {x}?'",
        ),
    ),
    (
        None,
        "--pseudonymize",
        dict(
            action="store_true",
            help="add the id variant 'pseudonyms': every node renamed to a seeded, made-up name and id in the style "
            "of the graph's own, questions and answers following, beside the original names, so that answering from "
            "memory shows as a difference on the same questions",
        ),
    ),
    (
        None,
        "--edge-ids",
        dict(
            action="store_true",
            help="show a stable id (e1, e2, ... in each graph variant's canonical order) on every edge in every "
            "format, and ask for the path as those ids instead of positions (article 5: a permutation changes the "
            "indices)",
        ),
    ),
    (
        None,
        "--context",
        dict(
            choices=CONTEXT_KINDS,
            help="what each prompt shows: shared (the whole graph, for every question; the default), given (each "
            "question's own 'context' in the questions file; the default when they have one), khop (each question's "
            "neighbourhood, cut from the graph: --context-hops, --context-edges)",
        ),
    ),
    (
        None,
        "--context-hops",
        dict(
            type=whole_number,
            metavar="N",
            help="--context khop: how many hops out from a question's start (default: the question's own hop count)",
        ),
    ),
    (
        None,
        "--context-edges",
        dict(
            type=whole_number,
            metavar="N",
            help="--context khop: the most edges of a context besides its gold paths' (default: 300)",
        ),
    ),
    (
        None,
        "--context-tokens",
        dict(
            metavar="N|FRAMEWORK",
            help="--context khop: cut each context, farthest edges first, until the graph written in the baseline "
            "format counts at most N tokens (the first --encoding); or to a framework layout's own default budget: "
            "graphrag 4200 tokens and lightrag 14000 tokens counted in their layouts, llamaindex 30 triplets, "
            "langchain 10 records (top_k), neo4j_graphrag none (docs/contexts.md); gold edges always stay",
        ),
    ),
    (
        None,
        "--skip-invalid-questions",
        dict(
            action="store_true",
            help="drop each question that fails validation, the solver or a leakage check, list it with its reason, "
            "and go on",
        ),
    ),
    (
        "model runs and scoring",
        "--model",
        dict(help=f"send every prompt to this model ('{SOLVER_MODEL}': the control solver answers, offline)"),
    ),
    (
        "model runs and scoring",
        "--base-url",
        dict(default="https://api.openai.com/v1", help="OpenAI-compatible endpoint, up to /v1 (default: OpenAI)"),
    ),
    (
        "model runs and scoring",
        "--api-key-env",
        dict(
            metavar="NAME",
            help="environment variable holding the API key, sent to --base-url whatever its host (default: "
            "OPENAI_API_KEY, sent only to OpenAI's own hosts)",
        ),
    ),
    (
        "model runs and scoring",
        "--temperature",
        dict(
            type=_or_none(real_number),
            default=0.0,
            help="sampling temperature, sent unless none (reasoning models accept only their default) (default: 0)",
        ),
    ),
    (
        "model runs and scoring",
        "--reasoning-effort",
        dict(metavar="LEVEL", help="sent as reasoning_effort (minimal, low, medium, high...) when given"),
    ),
    (
        "model runs and scoring",
        "--max-output-tokens",
        dict(type=whole_number, default=1024, metavar="N", help="answer length cap, always sent (default: 1024)"),
    ),
    (
        "model runs and scoring",
        "--max-tokens-field",
        dict(
            choices=("auto", "max_tokens", "max_completion_tokens"),
            default="auto",
            help="request field for --max-output-tokens; auto: max_completion_tokens for api.openai.com, else "
            "max_tokens",
        ),
    ),
    (
        "model runs and scoring",
        "--structured",
        dict(
            nargs="?",
            const="json_schema",
            choices=STRUCTURED_FORMS,
            metavar="json_schema|json_object",
            help="send the answer JSON schema as response_format: json_schema (default, OpenAI) or json_object (the "
            "form llama.cpp and older servers accept)",
        ),
    ),
    (
        "model runs and scoring",
        "--concurrency",
        dict(type=whole_number, default=4, metavar="N", help="requests in flight (default: 4)"),
    ),
    (
        "model runs and scoring",
        "--repeats",
        dict(
            type=whole_number,
            default=1,
            metavar="R",
            help="answers per prompt; repeat r samples with seed + r (default: 1)",
        ),
    ),
    (
        "model runs and scoring",
        "--limit",
        dict(type=whole_number, metavar="N", help="send only the first N distinct prompts: a dry slice"),
    ),
    (
        "model runs and scoring",
        "--timeout",
        dict(type=real_number, default=120.0, metavar="S", help="seconds per request attempt (default: 120)"),
    ),
    (
        "model runs and scoring",
        "--max-retries",
        dict(
            type=whole_number,
            default=5,
            metavar="N",
            help="retries on connection errors, 408, 409, 429 and 5xx (default: 5)",
        ),
    ),
    (
        "model runs and scoring",
        "--tokens-per-minute",
        dict(
            type=whole_number,
            metavar="N",
            help="pace sending to the provider's token rate limit: each request counts its prompt tokens and "
            "--max-output-tokens, as OpenAI counts them (without it, the server's x-ratelimit headers alone pace the "
            "run)",
        ),
    ),
    (
        "model runs and scoring",
        "--requests-per-minute",
        dict(type=whole_number, metavar="N", help="pace sending to the provider's request rate limit (as above)"),
    ),
    (
        "model runs and scoring",
        "--input-price-per-million",
        dict(type=real_number, metavar="USD", help="price of a million prompt tokens, for the cost columns"),
    ),
    (
        "model runs and scoring",
        "--output-price-per-million",
        dict(type=real_number, metavar="USD", help="price of a million completion tokens"),
    ),
    (
        "model runs and scoring",
        "--cached-input-price-per-million",
        dict(
            type=real_number,
            metavar="USD",
            help="price of a million prompt tokens served from the provider's prefix cache "
            "(usage.prompt_tokens_details.cached_tokens); without it they cost the input price",
        ),
    ),
    (
        "model runs and scoring",
        "--baseline",
        dict(
            metavar="FORMAT",
            help="the format the others are judged against; one of --formats (default: json, else the first)",
        ),
    ),
    (
        "model runs and scoring",
        "--tolerance",
        dict(
            type=real_number,
            metavar="T",
            help="how much worse than the baseline a format may be and pass, a share between 0 and 1 (default: "
            f"{DEFAULT_TOLERANCE})",
        ),
    ),
    (
        "model runs and scoring",
        "--abstention-tolerance",
        dict(
            type=real_number,
            metavar="T",
            help="the same for abstaining right on the abstention questions, which are usually a fifth of a set "
            f"(default: {DEFAULT_ABSTENTION_TOLERANCE})",
        ),
    ),
    (
        "model runs and scoring",
        "--allow-no-verdict",
        dict(
            action="store_true",
            help="send the prompts even when no verdict can come out of them (every baseline prompt over "
            "--context-window, or a --budget that leaves the gold paths out); without it such a run stops before the "
            "first request",
        ),
    ),
    (
        "model runs and scoring",
        "--models",
        dict(
            type=Path,
            metavar="FILE",
            help="run several models in one command: a JSON list of models (model, base_url, and any of name, "
            "api_key_env, encoding, prices, ...), each into --out/NAME with the other flags of this command, "
            "resumable per model; then --compare the finished ones into --out",
        ),
    ),
    (
        "model runs and scoring",
        "--compare",
        dict(
            type=Path,
            nargs="+",
            metavar="DIR",
            help="compare finished model runs (their --out folders) over the questions they share: comparison.md, "
            ".json and .svg into --out; nothing is measured or sent",
        ),
    ),
    (
        "model runs and scoring",
        "--score",
        dict(
            type=Path,
            nargs="+",
            metavar="FILE",
            help="score existing logs of this tool, or a Batch API output file and its error file in any order; no "
            "network",
        ),
    ),
    (
        "model runs and scoring",
        "--accept-other-model",
        dict(
            action="store_true",
            help="--score a Batch output whose answers come from another model than --model (a dated snapshot needs "
            "no flag)",
        ),
    ),
    (
        "model runs and scoring",
        "--export-batch",
        dict(type=Path, metavar="FILE", help="write the prompts as OpenAI Batch API request files; send nothing"),
    ),
    (
        "model runs and scoring",
        "--overwrite-batch",
        dict(
            action="store_true",
            help="let --export-batch replace an earlier export at the same path, and its numbered parts (never an "
            "input or an output of --out)",
        ),
    ),
    (
        "model runs and scoring",
        "--batch",
        dict(
            action="store_true",
            help="send the prompts through the Batch API at --base-url (its Files and Batches endpoints): export "
            "them into --out/batch, upload, create one batch per file, poll, download the output and error files and "
            "score them; the ids are kept in --out/batch/state.json, so the same command run again resumes and never "
            "submits twice",
        ),
    ),
    (
        "model runs and scoring",
        "--poll-interval",
        dict(type=real_number, default=30.0, metavar="S", help="seconds between polls of a --batch (default: 30)"),
    ),
    (
        "model runs and scoring",
        "--batch-max-requests",
        dict(
            type=whole_number,
            default=BATCH_MAX_REQUESTS,
            metavar="N",
            help=f"requests per batch file; more are split into numbered files (default: {BATCH_MAX_REQUESTS:,}, the "
            "API's limit)",
        ),
    ),
    (
        "model runs and scoring",
        "--batch-max-bytes",
        dict(
            type=whole_number,
            default=BATCH_MAX_BYTES,
            metavar="N",
            help=f"bytes per batch file (default: {BATCH_MAX_BYTES:,}, within the API's 200 MB)",
        ),
    ),
]


def _field(flag: str, kwargs: dict[str, Any]) -> str:
    """The RunConfig field a flag sets: '--max-output-tokens' -> 'max_output_tokens'."""
    return str(kwargs.get("dest", flag[2:].replace("-", "_")))


FLAG_FIELDS = {flag: _field(flag, kwargs) for _, flag, kwargs in FLAGS}  # '--formats' -> 'formats'


def make_parser(prog: str = "benchmark.py") -> Parser:
    """The parser of every flag (FLAGS), with a one-line error that names the flag a mistyped one is closest to. The
    package's formats and templates join the script's registries here, the first place a run reads them."""
    join_registries()
    parser = Parser(
        prog=prog,
        allow_abbrev=False,  # --format is not --formats
        description="Serialize a graph in several formats, check each round-trips, build prompts, count tokens.",
        epilog="exit codes: 0 the run succeeded (with --model: every planned request has an answer); 1 some requests "
        "failed after their retries (the results count them; run the same command again to retry them only); "
        "2 bad input or flags, or an endpoint that cannot serve the run (no server at --base-url, key rejected, "
        "model unknown), found before anything is written; 130 interrupted",
    )
    groups: dict[str | None, Any] = {None: parser}  # group name -> where its flags go
    for group, flag, keywords in FLAGS:
        if group not in groups:
            groups[group] = parser.add_argument_group(group)
        if "{known_formats}" in keywords.get(
            "help", ""
        ):  # the registry as it stands when the parser is made, not at import
            keywords = {**keywords, "help": keywords["help"].replace("{known_formats}", ",".join(FORMATS))}
        groups[group].add_argument(flag, **keywords)
    return parser


@dataclass(frozen=True)
class RunConfig:
    """The command line read once (read_config): every flag's value, typed and frozen, as argparse made it (a list
    made a tuple; a comma-separated flag the tuple of its names), with the command as given and the flags it named.
    Below the command line this is what a run reads; the namespace stays in cli and here. One field per flag of
    FLAGS, named as argparse names it."""

    encoding: tuple[str, ...]  # comma_names: split and stripped, checked in make_plan
    graph: Path
    graph_format: str | None
    store_fields: str
    graph_order: str
    questions: Path | None
    out: Path  # None (an empty --out) only until check_flags refuses it
    from_prompts: Path | None
    formats: tuple[str, ...]  # comma_names: split and stripped, checked in make_plan
    sizes: tuple[str, ...]  # comma_names: split and stripped, checked in make_plan
    ids: tuple[str, ...]  # comma_names: split and stripped, checked in make_plan
    permutations: int
    budget: int | None
    context_window: int
    seed: int | None
    write_prompts: bool | None
    prompt: str | None
    leakage: str
    generate_questions: int | None
    hops: str | None
    abstain_share: float | None
    property_share: float | None
    wording: str | None
    relation_phrases: Path | None
    pseudonymize: bool
    edge_ids: bool
    context: str | None
    context_hops: int | None
    context_edges: int | None
    context_tokens: str | None
    skip_invalid_questions: bool
    model: str | None
    base_url: str
    api_key_env: str | None
    temperature: float | None
    reasoning_effort: str | None
    max_output_tokens: int
    max_tokens_field: str
    structured: str | None
    concurrency: int
    repeats: int
    limit: int | None
    timeout: float
    max_retries: int
    tokens_per_minute: int | None
    requests_per_minute: int | None
    input_price_per_million: float | None
    output_price_per_million: float | None
    cached_input_price_per_million: float | None
    baseline: str | None
    tolerance: float | None
    abstention_tolerance: float | None
    allow_no_verdict: bool
    models: Path | None
    compare: tuple[Path, ...] | None
    score: tuple[Path, ...] | None
    accept_other_model: bool
    export_batch: Path | None
    overwrite_batch: bool
    batch: bool
    poll_interval: float
    batch_max_requests: int
    batch_max_bytes: int
    argv: tuple[str, ...] = ()  # the command line as given, for the records (runner.config.public_argv hides keys)
    given: frozenset[str] = frozenset()  # the flags the command line named, as typed ('--formats')

    def named(self, *flags: str) -> list[str]:
        """Those of flags the command line named: named('--model', '--base-url') -> ['--model']."""
        return [flag for flag in flags if flag in self.given]


def read_config(args: argparse.Namespace, argv: list[str] | tuple[str, ...]) -> RunConfig:
    """The namespace of make_parser().parse_args(argv) as a RunConfig."""
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in vars(args).items()}
    known = {flag for _, flag, _ in FLAGS}
    given = frozenset(flag for flag in (a.split("=", 1)[0] for a in argv if a.startswith("--")) if flag in known)
    return RunConfig(**values, argv=tuple(argv), given=given)


def parse_config(argv: list[str] | tuple[str, ...], prog: str = "benchmark.py") -> RunConfig:
    """read_config of argv parsed by make_parser (argparse's own error and exit on a bad flag)."""
    return read_config(make_parser(prog).parse_args(list(argv)), argv)


# Sizes past these are refused before any work: each would run for hours or fill the memory with no word.
FLAG_LIMITS = {
    "permutations": 1000,
    "generate_questions": 100_000,
    "repeats": 1000,
    "concurrency": 256,
    "context_window": 10_000_000,
    "budget": 10_000_000,
    "max_output_tokens": 1_000_000,
    "max_retries": 100,
    "batch_max_requests": 50_000,
    "tokens_per_minute": 10**12,
    "requests_per_minute": 10**9,
    "batch_max_bytes": 200_000_000,
    "context_hops": 20,
    "context_edges": 1_000_000,
}


def check_flags(run_config: RunConfig) -> None:
    """Every number flag finite and in range, and no flag that the others make meaningless, before any work."""
    for flag in (
        "temperature",
        "timeout",
        "tolerance",
        "abstention_tolerance",
        "abstain_share",
        "property_share",
        "input_price_per_million",
        "output_price_per_million",
        "cached_input_price_per_million",
    ):
        value = getattr(run_config, flag)
        if value is not None and not math.isfinite(value):
            raise BenchmarkError(f"--{flag.replace('_', '-')} is {value}; give a finite number")
    for flag, most in FLAG_LIMITS.items():
        value = getattr(run_config, flag)
        if value is not None and value > most:
            raise BenchmarkError(
                f"--{flag.replace('_', '-')} {value:,} is over the {most:,} this tool takes; ask for less"
            )
    if run_config.temperature is not None and not 0 <= run_config.temperature <= 2:
        raise BenchmarkError(f"--temperature must be between 0 and 2, got {run_config.temperature}")
    if run_config.timeout > 3600:
        raise BenchmarkError(f"--timeout {run_config.timeout:g} is over an hour per attempt; give at most 3600 seconds")
    if run_config.timeout < MIN_TIMEOUT:
        raise BenchmarkError(
            f"--timeout {run_config.timeout:g} is under {MIN_TIMEOUT:g} s: no server answers that fast; give at least "
            f"{MIN_TIMEOUT:g}"
        )
    if run_config.out is None:
        raise BenchmarkError("--out is empty; name an output folder (default: outputs/)")
    check_out_folder(run_config.out)
    if run_config.model is not None and not run_config.model.strip():
        raise BenchmarkError("--model is empty; name the model the endpoint serves (or 'solver')")
    if run_config.generate_questions is None and (
        run_config.hops is not None
        or run_config.abstain_share is not None
        or run_config.property_share is not None
        or run_config.wording is not None
        or run_config.relation_phrases is not None
    ):
        raise BenchmarkError(
            "--hops, --abstain-share, --property-share, --wording and --relation-phrases shape generated questions: "
            "use them with --generate-questions N"
        )
    if run_config.score is not None and run_config.export_batch is not None:
        raise BenchmarkError("--score reads answers and --export-batch writes requests: run them apart")
    if run_config.batch and (run_config.score is not None or run_config.export_batch is not None):
        raise BenchmarkError(
            "--batch sends and scores a batch itself: leave out "
            f"{'--score' if run_config.score is not None else '--export-batch'}"
        )
    if run_config.batch and run_config.model is None:
        raise BenchmarkError(
            "--batch sends the prompts to a model's Batch API: give it with --model NAME and --base-url URL"
        )
    if run_config.batch and run_config.model == SOLVER_MODEL:
        raise BenchmarkError(
            "--batch with --model solver: the control solver answers here, with no Batch API; leave out --batch"
        )
    if not math.isfinite(run_config.poll_interval) or not 0 < run_config.poll_interval <= 3600:
        raise BenchmarkError(
            f"--poll-interval {run_config.poll_interval:g} is not a number of seconds between 0 and 3600; e.g. 30"
        )


MIN_TIMEOUT = 0.01


def check_out_folder(out: Path) -> None:
    """--out is a folder, or a path where one can be made: not a file, a device, a broken or looping symlink."""
    where = display(out)
    try:
        info = os.stat(out)
    except FileNotFoundError:
        if os.path.islink(out):
            raise BenchmarkError(
                f"--out {where} is a symlink to nothing (or to itself); point it at a folder, or name another --out"
            ) from None
        return
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise BenchmarkError(
                f"--out {where} is a symlink to nothing (or to itself); point it at a folder, or name another --out"
            ) from None
        raise BenchmarkError(f"--out {where}: cannot use it ({e.strerror}); name another folder") from None
    if not stat.S_ISDIR(info.st_mode):
        raise BenchmarkError(f"--out {where} is not a folder; name a folder (it is made if missing)")


def make_model_config(run_config: RunConfig) -> ModelConfig | None:
    """The model run the flags ask for, checked (None without --model, whose flags are then refused)."""
    if run_config.model is None:
        for flag in (
            "score",
            "export_batch",
            "limit",
            "input_price_per_million",
            "output_price_per_million",
            "cached_input_price_per_million",
        ):
            if getattr(run_config, flag) is not None:
                raise BenchmarkError(f"--{flag.replace('_', '-')} needs --model: the model whose answers it is about")
        if run_config.repeats != 1 or run_config.structured or run_config.reasoning_effort:
            raise BenchmarkError(
                "--repeats, --structured and --reasoning-effort need --model: the model whose answers they are about"
            )
        return None
    _check_model_numbers(run_config)
    try:
        parts = urllib.parse.urlsplit(run_config.base_url)
        parts.port  # noqa: B018 - raises for a port out of range
    except ValueError as e:
        raise BenchmarkError(f"--base-url is not a valid URL ({e}); e.g. http://127.0.0.1:8000/v1") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BenchmarkError(
            f"--base-url {public_url(run_config.base_url)!r} is not an http(s) URL; e.g. http://127.0.0.1:8000/v1"
        )
    openai = parts.hostname == "openai.com" or parts.hostname.endswith(".openai.com")
    key_env = run_config.api_key_env or ("OPENAI_API_KEY" if openai else None)  # OpenAI's key goes to OpenAI only
    field = run_config.max_tokens_field
    if field == "auto":
        field = "max_completion_tokens" if openai else "max_tokens"
    if run_config.model != SOLVER_MODEL and run_config.score is None and run_config.export_batch is None:
        _check_key(run_config, key_env, openai, parts)
    return ModelConfig(
        model=run_config.model,
        base_url=run_config.base_url.rstrip("/"),
        api_key_env=key_env,
        temperature=run_config.temperature,
        seed=run_config.seed,
        max_output_tokens=run_config.max_output_tokens,
        max_tokens_field=field,
        structured=run_config.structured,
        reasoning_effort=run_config.reasoning_effort,
        concurrency=run_config.concurrency,
        repeats=run_config.repeats,
        limit=run_config.limit,
        timeout=run_config.timeout,
        max_retries=run_config.max_retries,
        edge_ids=run_config.edge_ids,
        tokens_per_minute=run_config.tokens_per_minute,
        requests_per_minute=run_config.requests_per_minute,
    )


def _check_model_numbers(run_config: RunConfig) -> None:
    """A model run's counts, retries, timeout and prices in range, and httpx2 there when the prompts are sent."""
    for flag in ("concurrency", "repeats", "limit", "max_output_tokens", "batch_max_requests", "batch_max_bytes"):
        value = getattr(run_config, flag)
        if value is not None and value < 1:
            raise BenchmarkError(f"--{flag.replace('_', '-')} must be at least 1, got {value}")
    if run_config.max_retries < 0 or run_config.timeout <= 0:
        raise BenchmarkError("--max-retries must be 0 or more and --timeout above 0")
    sends = run_config.model != SOLVER_MODEL and run_config.score is None and run_config.export_batch is None
    if sends and importlib.util.find_spec("httpx2") is None:
        raise not_installed("sending to --model", "httpx2", "models")
    prices = (
        run_config.input_price_per_million,
        run_config.output_price_per_million,
        run_config.cached_input_price_per_million,
    )
    if (prices[0] is None) != (prices[1] is None) or any(p is not None and p < 0 for p in prices):
        raise BenchmarkError(
            "give both --input-price-per-million and --output-price-per-million, each 0 or more, or neither"
        )
    if prices[2] is not None and prices[0] is None:
        raise BenchmarkError(
            "--cached-input-price-per-million needs --input-price-per-million and --output-price-per-million"
        )


def _check_key(run_config: RunConfig, key_env: str | None, openai: bool, parts: urllib.parse.SplitResult) -> None:
    """The key the prompts would be sent with: there for OpenAI, fit for a header, never over plain http off this
    machine. An error says where in the key the fault is, never what the key holds."""
    key = os.environ.get(key_env, "") if key_env else ""
    if key_env and not key and openai:
        raise BenchmarkError(f"no API key: set {key_env} (or name another variable with --api-key-env)")
    bad = next((k for k, c in enumerate(key) if c.isspace() or not c.isprintable()), None)
    if bad is not None:  # it would go into a header, then into an error message: say where, never what
        raise BenchmarkError(
            f"the key in {key_env} holds whitespace or a control character at position {bad + 1} of "
            f"{len(key)}; set it again without it"
        )
    foreign = next((k for k, c in enumerate(key) if ord(c) > 255), None)
    if foreign is not None:
        raise BenchmarkError(
            f"the key in {key_env} holds a character an HTTP header cannot carry at position {foreign + 1} of "
            f"{len(key)}; set it again as the provider gave it"
        )
    if key and parts.scheme == "http" and not is_loopback(parts.hostname or ""):
        raise BenchmarkError(
            f"--base-url {public_url(run_config.base_url)} is plain http: the key in {key_env} would cross the "
            "network in clear text; use https (plain http is fine on 127.0.0.1)"
        )


def make_gate_spec(run_config: RunConfig, plan: Plan) -> GateSpec | None:
    """--baseline and --tolerance, checked: they judge a model's answers, so they need a model run or --score."""
    given = [
        f
        for f, v in (
            ("--baseline", run_config.baseline),
            ("--tolerance", run_config.tolerance),
            ("--abstention-tolerance", run_config.abstention_tolerance),
        )
        if v is not None
    ]
    if run_config.model is None or run_config.export_batch is not None:
        if given:
            raise BenchmarkError(
                f"{' and '.join(given)} judge a model's answers: use {'them' if len(given) > 1 else 'it'} "
                "with --model (a run or --score), not without one or with --export-batch"
            )
        return None
    baseline = (
        run_config.baseline
        if run_config.baseline is not None
        else "json"
        if "json" in plan.formats
        else plan.formats[0]
    )
    if baseline not in FORMATS:
        raise BenchmarkError(
            f"unknown format {baseline!r} in --baseline; choose one of --formats: {', '.join(plan.formats)}"
        )
    if baseline not in plan.formats:
        raise BenchmarkError(
            f"--baseline {baseline} is not among --formats {','.join(plan.formats)}; add it to --formats "
            "or choose one of them"
        )
    tolerance = DEFAULT_TOLERANCE if run_config.tolerance is None else run_config.tolerance
    abstention = (
        DEFAULT_ABSTENTION_TOLERANCE if run_config.abstention_tolerance is None else run_config.abstention_tolerance
    )
    for flag, value, example in (("--tolerance", tolerance, 0.05), ("--abstention-tolerance", abstention, 0.15)):
        if not math.isfinite(value) or not 0 < value < 1:
            raise BenchmarkError(f"{flag} must be a share between 0 and 1 (exclusive), got {value}; e.g. {example}")
    return GateSpec(baseline, tolerance, abstention)


def baseline_format(baseline: str | None, formats: list[str]) -> str:
    """The format the others are judged against: --baseline, else json when it is measured, else the first format."""
    return baseline or ("json" if "json" in formats else formats[0])


def make_plan(run_config: RunConfig) -> Plan:
    join_registries()  # a RunConfig made without make_parser reads the same registries
    if run_config.context != "khop" and (
        run_config.context_hops is not None
        or run_config.context_edges is not None
        or run_config.context_tokens is not None
    ):
        raise BenchmarkError(
            "--context-hops, --context-edges and --context-tokens shape the contexts of --context khop: use them with "
            "it"
        )
    for flag, value in (
        ("--permutations", run_config.permutations),
        ("--budget", run_config.budget),
        ("--context-window", run_config.context_window),
        ("--context-hops", run_config.context_hops),
        ("--context-edges", run_config.context_edges),
    ):
        if value is not None and value < 1:
            raise BenchmarkError(f"{flag} must be at least 1, got {value}")
    import tiktoken

    hf = [name for name in run_config.encoding if name.startswith("hf:")]
    encodings = parse_names(run_config.encoding, [*tiktoken.list_encoding_names(), *hf], "--encoding")
    formats = parse_names(run_config.formats, list(FORMATS), "--formats")
    for fmt in formats:
        if run_config.edge_ids and FORMATS[fmt].no_edge_ids:
            raise BenchmarkError(
                f"--edge-ids: format {fmt} cannot carry edge ids ({FORMATS[fmt].no_edge_ids}); leave {fmt} out of "
                "--formats"
            )
        library = FORMATS[fmt].library
        if library and importlib.util.find_spec(library[0]) is None:
            raise not_installed(f"--formats {fmt}", library[1], "peers")
    sizes = [s for s in SIZES if s in parse_names(run_config.sizes, SIZES, "--sizes")]
    ids = [
        i
        for i in ID_VARIANTS
        if i in parse_names(run_config.ids, ID_VARIANTS, "--ids") or (i == "pseudonyms" and run_config.pseudonymize)
    ]
    article_layout = (
        sizes == ["small"] and ids == ["original"] and run_config.permutations == 1 and run_config.budget is None
    )
    baseline = baseline_format(run_config.baseline, formats)
    budget = context_budget(run_config.context_tokens, baseline)
    if budget is not None and budget.limit is None:
        warn(f"--context-tokens {run_config.context_tokens}: {budget.source}; the contexts are not cut")
    return Plan(
        formats=formats,
        tokenizers=[tokenizer_for(name) for name in encodings],
        sizes=sizes,
        ids=ids,
        permutations=run_config.permutations,
        budget=run_config.budget,
        context_window=run_config.context_window,
        seed=DEFAULT_SEED if run_config.seed is None else run_config.seed,
        write_prompts=(None if article_layout else False)
        if run_config.write_prompts is None
        else run_config.write_prompts,
        template=load_template(run_config.prompt or "ru", run_config.edge_ids),
        edge_ids=run_config.edge_ids,
        context=run_config.context or "shared",
        context_hops=run_config.context_hops,
        context_edges=300 if run_config.context_edges is None else run_config.context_edges,
        context_tokens=budget.limit if budget else None,
        context_tokens_format=budget.layout if budget else baseline,
        context_tokens_unit=budget.unit if budget else "tokens",
    )


# beyond any context: a longer number is refused, not parsed (int() refuses past 4,300 digits)
MAX_CONTEXT_TOKENS = 10**12


def context_budget(value: str | None, baseline: str) -> Budget | None:
    """--context-tokens: a whole number of tokens counted in the baseline's format, or a framework layout's own default
    budget (frameworks.FRAMEWORK_BUDGETS)."""
    if value is None:
        return None
    if value in FRAMEWORK_BUDGETS:
        return FRAMEWORK_BUDGETS[value]
    digits = value.strip()
    if not digits.isdigit() or len(digits) > len(str(MAX_CONTEXT_TOKENS)) or not 1 <= int(digits) <= MAX_CONTEXT_TOKENS:
        raise BenchmarkError(
            f"--context-tokens takes a number of tokens from 1 to {MAX_CONTEXT_TOKENS:,}, or a framework layout "
            f"({', '.join(FRAMEWORK_BUDGETS)}); got {value[:40]!r}{'...' if len(value) > 40 else ''}"
        )
    return Budget(int(digits), "tokens", baseline, "--context-tokens")


def make_generate_spec(run_config: RunConfig, plan: Plan) -> GenerateSpec | None:
    if run_config.generate_questions is None:
        return None
    # a longer number is no hop count, and int() refuses one past 4,300 digits
    match = re.fullmatch(r"(\d{1,6})(?:-(\d{1,6}))?", (run_config.hops or "1-4").strip())
    lo, hi = (int(match.group(1)), int(match.group(2) or match.group(1))) if match else (0, 0)
    share = 0.2 if run_config.abstain_share is None else run_config.abstain_share
    about_props = DEFAULT_PROPERTY_SHARE if run_config.property_share is None else run_config.property_share
    if run_config.generate_questions < 1 or not 1 <= lo <= hi or not 0 <= share <= 1 or not 0 <= about_props <= 1:
        raise BenchmarkError(
            "--generate-questions takes N of 1 or more, --hops LO-HI with 1 <= LO <= HI (e.g. 1-4), "
            "--abstain-share and --property-share a share from 0 to 1"
        )
    if run_config.questions is not None:
        raise BenchmarkError("--generate-questions draws the questions: leave --questions out")
    language = plan.template.name if plan.template.name in QUESTION_TEXTS else "en"
    phrases = (
        tuple(sorted(read_relation_phrases(run_config.relation_phrases).items())) if run_config.relation_phrases else ()
    )
    return GenerateSpec(
        run_config.generate_questions,
        (lo, hi),
        share,
        plan.seed,
        language,
        about_props,
        run_config.wording or "natural",
        phrases,
    )
