"""charts.py: every line of text a chart lays out stays inside its canvas, by our estimate and as Chromium draws it."""

import json
import re

from kg_graphs import FAMILY, QUESTIONS, svg_label_boxes, svg_marks, write

import benchmark
from graphrag_format_benchmark import charts

LONG_MODELS = [
    "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M",
    "meta-llama/Llama-3.1-70B-Instruct-Turbo",
    "gpt-4o-mini-2024-07-18",
    "mistral",
    "SmolLM2-135M-Instruct (a model with a very long name indeed, longer than any panel)",
]
SVG_TEXT = re.compile(
    r'<text(?: class="[^"]*")? x="([\d.-]+)" y="([\d.-]+)" font-size="(\d+)" text-anchor="(\w+)" '
    r'font-family="[^"]*">([^<]*)</text>'
)


def chart_with_long_names() -> str:
    points = [
        charts.Point(
            "json",
            k * 0.2,
            0.98,
            {"model": name},
            name if k == 3 else "",
            0.9,
            1.0,
            k % 2 == 0,
            charts.model_style(k),
        )
        for k, name in enumerate(LONG_MODELS)
    ]
    panel = charts.Panel(
        "small · original · A", "format", "path exact", [(0, "json"), (1, "dsl")], (-0.05, 1.05, False), points
    )
    legend = [(name, "", charts.model_style(k)) for k, name in enumerate(LONG_MODELS)]
    return charts.svg_chart(
        "Path exact per format, one mark per model",
        [panel],
        legend,
        "filled: accepted by that model's gate (or its baseline); hollow: not accepted; whiskers: 95% interval "
        "over questions; a caption long enough to wrap over several lines of the footnote",
    )


def test_every_text_of_a_chart_is_inside_its_canvas_by_its_laid_out_width():
    svg = chart_with_long_names()
    width, height = map(float, re.search(r'width="([\d.]+)" height="([\d.]+)"', svg).groups())
    texts = SVG_TEXT.findall(svg)
    assert len(texts) > 10
    for x, y, size, anchor, text in texts:
        w = charts.text_width(
            text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&"), int(size)
        )
        left = {"start": float(x), "middle": float(x) - w / 2, "end": float(x) - w}[anchor]
        assert left >= 0 and left + w <= width and 0 < float(y) <= height, (text, left, left + w, width)


def test_chromium_draws_every_text_of_a_chart_inside_its_canvas(browser, tmp_path):
    (tmp_path / "chart.svg").write_text(chart_with_long_names(), encoding="utf-8")
    page = browser.new_page()
    page.goto((tmp_path / "chart.svg").as_uri())
    outside = page.evaluate("""() => { const svg = document.querySelector('svg');
        const W = svg.width.baseVal.value, H = svg.height.baseVal.value;
        return Array.from(document.querySelectorAll('text')).map(t => [t.textContent, t.getBBox()])
          .filter(([s, b]) => b.x < 0 || b.x + b.width > W || b.y < 0 || b.y + b.height > H).map(([s]) => s); }""")
    assert outside == []


def test_a_one_panel_chart_has_nothing_past_its_canvas(tmp_path):
    import xml.etree.ElementTree as ET

    assert benchmark.main(["--model", "solver", "--out", str(tmp_path)]) == 0  # a first model run: one size, one mode
    root = ET.parse(tmp_path / "results.svg").getroot()
    width = float(root.get("width"))
    texts = [t for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("text-anchor") == "start"]
    legend = [t.text for t in texts if t.get("class") == "legend"]
    # every format named (tsv and edge_list were past 550 px)
    assert legend == [
        "json (baseline)",
        "jsonl",
        "tsv",
        "edge_list",
        "dsl",
    ]
    for t in texts:
        assert float(t.get("x")) + len(t.text) * 5.0 <= width, t.text  # 10-px sans-serif: about 5 px a character
    assert " ".join(t.text for t in texts if t.get("class") is None and t.get("font-size") == "10").endswith(
        "whiskers: 95% interval"
    )


def test_every_mark_of_the_svg_charts_equals_the_json_figures(tmp_path):
    argv = [
        *write(tmp_path, FAMILY, QUESTIONS),
        "--model",
        "solver",
        "--sizes",
        "small,medium",
        "--budget",
        "900",
        "--formats",
        "json,tsv,dsl",
    ]
    assert benchmark.main(argv) == 0
    out = tmp_path / "out"
    table = json.loads((out / "results.json").read_text(encoding="utf-8"))["aggregates"]
    marks = svg_marks(out / "results.svg")
    assert len(marks) == len(table)
    for title, mark in marks:
        e = next(
            e
            for e in table
            if " · ".join((e["encoding"], e["size"], e["ids"], e["mode"])) == title
            and e["format"] == mark["data-format"]
        )
        assert (float(mark["data-tokens"]), float(mark["data-rate"])) == (e["prompt_tokens"], e["path_exact"]["rate"])
        assert [float(mark["data-low"]), float(mark["data-high"])] == e["path_exact"]["ci95"]
        assert mark["data-pareto"] == str(bool(e.get("pareto")))
    summary = json.loads((out / "size_summary.json").read_text(encoding="utf-8"))
    for title, mark in svg_marks(out / "size_report.svg"):
        mode = title.rsplit(" ", 1)[-1]
        e = next(
            e for e in summary if (e["mode"], e["format"], e["size"]) == (mode, mark["data-format"], mark["data-size"])
        )
        key, metric = ("data-prompt-tokens", "prompt_tokens") if mode == "A" else ("data-answerable", "answerable")
        assert float(mark[key]) == e[metric]["mean"]
    assert "![Prompt tokens against path exact match](results.svg)" in (out / "results.md").read_text(encoding="utf-8")
    assert "](size_report.svg)" in (out / "size_report.md").read_text(encoding="utf-8")


def test_chart_labels_never_overlap_ticks_are_round_and_formats_keep_their_style(tmp_path):
    argv = [
        "--out",
        str(tmp_path / "out"),
        "--model",
        "solver",
        "--sizes",
        "small,medium,large",
        "--context-window",
        "8000",
        "--budget",
        "1500",
        "--formats",
        ",".join(benchmark.FORMATS),
    ]
    assert benchmark.main(argv) == 0
    for name in ("results.svg", "size_report.svg"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        for title, boxes in svg_label_boxes(tmp_path / "out" / name).items():
            assert len(boxes) >= 7, title  # close formats: the labels that would pile up
            assert not [(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1 :] if charts._overlap(a, b) > 0], title
        for fmt in benchmark.FORMATS:
            marker, dash, colour = charts.format_style(fmt)
            assert f'stroke="{colour}"' in text
        assert "tiktoken" not in text and "(o200k_base)" in text
    # large reaches the window
    assert 'class="hline"' in (tmp_path / "out" / "size_report.svg").read_text(encoding="utf-8")
    assert charts.nice_ticks(400, 60000, log=True) == [500, 1000, 2000, 5000, 10000, 20000, 50000]
    assert charts.nice_ticks(80000, 230000) == [100000, 150000, 200000]


def test_a_results_chart_label_never_lies_across_a_whisker(tmp_path):
    """Labels kept off each other, but one could sit across another format's 95% whisker (the article's five formats
    at 1.00, their whiskers side by side): the whiskers are obstacles too."""
    import xml.etree.ElementTree as ET

    assert (
        benchmark.main(
            ["--out", str(tmp_path / "out"), "--model", "solver", "--permutations", "2", "--no-write-prompts"]
        )
        == 0
    )
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.parse(tmp_path / "out" / "results.svg").getroot()
    whiskers = [
        (float(w.get("x1")), *sorted((float(w.get("y1")), float(w.get("y2")))))
        for w in root.iter(f"{ns}line")
        if w.get("class") == "whisker"
    ]
    boxes = [box for found in svg_label_boxes(tmp_path / "out" / "results.svg").values() for box in found]
    assert len(whiskers) == 5 and len(boxes) == 5
    assert [(b, w) for b in boxes for w in whiskers if b[0] < w[0] < b[2] and b[1] < w[2] and w[1] < b[3]] == []
