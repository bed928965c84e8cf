"""Text for the Markdown reports: a table cell, a share as a percent."""

from __future__ import annotations


def percent(share: float) -> str:
    """A share as a whole percent, never '-0%': 0.1234 -> '12%', -0.001 -> '0%'."""
    text = f"{share:.0%}"
    return "0%" if text == "-0%" else text


def md_cell(text: str) -> str:
    """Text for a Markdown table cell: pipes escaped, one line."""
    return text.replace("|", "\\|").replace("\n", " ")
