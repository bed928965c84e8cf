"""graphrag-format-benchmark: which serialization of a retrieved subgraph gives the best answers per token.

benchmark.py, beside this package, is the article's script: the five formats, the round-trip check, prompt
building and token counting by parts, reading graph.json and questions.json, writing the outputs. This package is
everything the tool does beyond it, one module per concern, in the order data flows:

    stores         the GraphRAG frameworks' stores read as graphs (GraphRAG parquet, LightRAG GraphML, LlamaIndex JSON)
    inputs         graph files (triples, RDF, GraphML, Neo4j, the frameworks' stores) and prompt templates as users
                   have them
    formats        the formats beyond the article's five, as benchmark.Format records (join_registries adds them)
    frameworks     the GraphRAG frameworks' own context layouts as formats (graphrag, lightrag, llamaindex, langchain)
    solver         the control solver (article 8.5)
    whole_words    whole words in texts and ids: what the leakage checks, the namer and questions match
    wording        how a generated question reads
    questions      questions drawn from the graph (--generate-questions), and written in the file's shape
    variants/      contexts, distractors, names, short and edge ids, pseudonyms
    encodings      --encoding hf:PATH
    leakage        the leakage preflight (article 8.3)
    matrix         the Plan, its variants and file names
    measure        every prompt of the matrix, measured; mode B packing
    progress       a status line for long work
    extras         which extra installs an optional library; the error when one is missing
    statistics     intervals over questions
    markdown       Markdown text helpers
    sizes          size_report.md, size_summary.json
    runner/        model runs: HTTP, pacing, the log, the Batch API
    scoring        answers scored and diagnosed
    answers        the answers that count, from logs and Batch files
    aggregates     per group and format, every metric over questions (Aggregate)
    gate           the acceptance gate
    results        results.json, results.md, results.svg, cells.csv
    charts         the SVG charts
    comparison     --compare
    report         report.html
    options        the flags and what they make
    pipeline       one run, from the flags to the published folder
    cli            main(): python -m graphrag_format_benchmark, or python benchmark.py with any flag
"""

from ._article import FORMATS, PROMPT_TEMPLATES, Format
from .formats import PEER_FORMATS
from .frameworks import FRAMEWORK_FORMATS
from .inputs import ENGLISH_TEMPLATE


def register_template(name: str, text: str) -> None:
    """Add a built-in prompt template (--prompt NAME) beside the article's: a name taken already is refused."""
    if name in PROMPT_TEMPLATES:
        raise ValueError(f"prompt template {name!r} registered twice; each name is one template")
    PROMPT_TEMPLATES[name] = text


def register_formats(formats: dict[str, Format]) -> None:
    """Add formats to benchmark.FORMATS, after those it holds (the report order): the only way in. A name taken
    already is refused, so that one module's format never silently replaces another's, and so is anything but a
    Format."""
    taken = sorted(set(formats) & set(FORMATS))
    if taken:
        raise ValueError(f"format(s) {', '.join(taken)} registered twice; each name is one format")
    loose = sorted(name for name, fmt in formats.items() if not isinstance(fmt, Format))
    if loose:
        raise TypeError(
            f"format(s) {', '.join(loose)}: register a benchmark.Format (serializer, parser, library, no_edge_ids)"
        )
    FORMATS.update(formats)


def join_registries() -> None:
    """The package's formats (the peers', then the frameworks', in the report order) and the English prompt join the
    script's registries, benchmark.FORMATS and benchmark.PROMPT_TEMPLATES, each through the one function that refuses a
    name taken already: the one place anything is registered, here, once for the package (a second call does
    nothing). Called where a run first reads the registries (options.make_parser, whose --formats help lists them,
    and options.make_plan), as tiktoken's registry finds its constructors on first use: importing the package changes
    nothing of the script's. Code that reads benchmark.FORMATS without a parser or a plan calls it first."""
    if "en" in PROMPT_TEMPLATES and all(name in FORMATS for name in (*PEER_FORMATS, *FRAMEWORK_FORMATS)):
        return
    register_formats(PEER_FORMATS)
    register_formats(FRAMEWORK_FORMATS)
    register_template("en", ENGLISH_TEMPLATE)
