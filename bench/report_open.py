"""How long report.html takes to open and to show a question, in headless Chromium (Debian's, through Playwright).

    $ python bench/report_open.py RUN_DIR [RUN_DIR ...] [--rounds 3]

For each run folder: its report.html's size, then per round the time from opening it (file://) until the token view
and the first question's prompts are drawn, and the time to draw the next question's prompts once picked.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

# the closed network's flags (see tests/conftest.py)
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("no chromium: apt-get install chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        for run in args.runs:
            page_file = run / "report.html"
            opens, picks = [], []
            for _ in range(args.rounds):
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                start = time.perf_counter()
                page.goto(page_file.as_uri())
                page.wait_for_selector("#tokenView span")
                page.wait_for_selector("#prompts .prompt pre")
                opens.append(time.perf_counter() - start)
                options = page.eval_on_selector_all("#questionPick option", "o => o.length")
                before = page.eval_on_selector("#questionText p", "p => p.textContent")
                start = time.perf_counter()
                page.select_option("#questionPick", str(min(1, options - 1)))
                page.wait_for_function(
                    "t => document.querySelector('#questionText p').textContent !== t || "
                    "document.querySelectorAll('#questionPick option').length < 2",
                    arg=before,
                )
                page.wait_for_selector("#prompts .prompt pre")
                picks.append(time.perf_counter() - start)
                page.close()
            size = page_file.stat().st_size / 1e6
            print(
                f"{run}: {size:.1f} MB; opens in {min(opens):.2f}-{max(opens):.2f} s, a question in "
                f"{min(picks):.2f}-{max(picks):.2f} s "
                f"({args.rounds} rounds)"
            )
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
