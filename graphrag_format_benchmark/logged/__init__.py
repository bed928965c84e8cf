"""--from-prompts FILE: the prompts a user's framework logged, read back into subgraphs and measured in every format.

In: a JSONL file of logged requests (read.py). Out, in --out: logged.json (each prompt: its layout, its subgraph's size,
each format's graph and prompt tokens, or why it was left out), results.md (what each format would save on that
traffic), report.html (a logged prompt beside its alternatives), manifest.json. layouts.py finds a framework's context
in a prompt and proves its parse by writing it again to the same bytes; measure.py counts every format; run.py is the
run.
"""
