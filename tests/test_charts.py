"""charts.py: every line of text a chart lays out stays inside its canvas, by our estimate and as Chromium draws it."""

import re

from graphrag_format_benchmark import charts

LONG_MODELS = ["Qwen2.5-Coder-1.5B-Instruct-Q4_K_M", "meta-llama/Llama-3.1-70B-Instruct-Turbo", "gpt-4o-mini-2024-07-18",
               "mistral", "SmolLM2-135M-Instruct (a model with a very long name indeed, longer than any panel)"]
TEXT = re.compile(r'<text(?: class="[^"]*")? x="([\d.-]+)" y="([\d.-]+)" font-size="(\d+)" text-anchor="(\w+)" font-family="[^"]*">([^<]*)</text>')


def chart_with_long_names() -> str:
    points = [{"format": "json", "style": charts.model_style(k), "label": name if k == 3 else "", "x": k * 0.2, "y": 0.98,
               "low": 0.9, "high": 1.0, "filled": k % 2 == 0, "data": {"model": name}} for k, name in enumerate(LONG_MODELS)]
    panel = {"title": "small · original · A", "x_label": "format", "y_label": "path exact", "x": [(0, "json"), (1, "dsl")],
             "y": (-0.05, 1.05, False), "points": points}
    legend = [(name, "", charts.model_style(k)) for k, name in enumerate(LONG_MODELS)]
    return charts.svg_chart("Path exact per format, one mark per model", [panel], legend,
                            "filled: accepted by that model's gate (or its baseline); hollow: not accepted; whiskers: 95% interval "
                            "over questions; a caption long enough to wrap over several lines of the footnote")


def test_every_text_of_a_chart_is_inside_its_canvas_by_its_laid_out_width():
    svg = chart_with_long_names()
    width, height = map(float, re.search(r'width="([\d.]+)" height="([\d.]+)"', svg).groups())
    texts = TEXT.findall(svg)
    assert len(texts) > 10
    for x, y, size, anchor, text in texts:
        w = charts.text_width(text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&"), int(size))
        left = {"start": float(x), "middle": float(x) - w / 2, "end": float(x) - w}[anchor]
        assert 0 <= left and left + w <= width and 0 < float(y) <= height, (text, left, left + w, width)


def test_chromium_draws_every_text_of_a_chart_inside_its_canvas(browser, tmp_path):
    (tmp_path / "chart.svg").write_text(chart_with_long_names(), encoding="utf-8")
    page = browser.new_page()
    page.goto((tmp_path / "chart.svg").as_uri())
    outside = page.evaluate("""() => { const svg = document.querySelector('svg'), W = svg.width.baseVal.value, H = svg.height.baseVal.value;
        return Array.from(document.querySelectorAll('text')).map(t => [t.textContent, t.getBBox()])
          .filter(([s, b]) => b.x < 0 || b.x + b.width > W || b.y < 0 || b.y + b.height > H).map(([s]) => s); }""")
    assert outside == []
