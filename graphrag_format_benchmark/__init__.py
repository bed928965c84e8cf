"""graphrag-format-benchmark: which serialization of a retrieved subgraph gives the best answers per token.

benchmark.py, beside this package, is the article's script: the five formats, the round-trip check, prompt
building and token counting by parts, reading graph.json and questions.json, writing the outputs. This package is
everything the tool does beyond it, one module per concern, in the order data flows:

    stores         the GraphRAG frameworks' stores read as graphs (GraphRAG parquet, LightRAG GraphML, LlamaIndex JSON)
    inputs         graph files (triples, RDF, GraphML, Neo4j, the frameworks' stores) and prompt templates as users have them
    formats        the formats beyond the article's five, registered into benchmark.FORMATS
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
    statistics     intervals over questions
    markdown       Markdown text helpers
    sizes          size_report.md, size_summary.json
    runner/        model runs: HTTP, pacing, the log, the Batch API
    scoring        answers scored and diagnosed
    answers        the answers that count, from logs and Batch files
    gate           the acceptance gate
    results        results.json, results.md, results.svg, cells.csv
    charts         the SVG charts
    comparison     --compare
    report         report.html
    options        the flags and what they make
    pipeline       one run, from the flags to the published folder
    cli            main(): python -m graphrag_format_benchmark, or python benchmark.py with any flag
"""

from . import formats, frameworks, inputs  # noqa: F401  the peers' and frameworks' formats, the English template join the registries
