"""python -m graphrag_format_benchmark: the same command line as python benchmark.py."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m graphrag_format_benchmark"))
