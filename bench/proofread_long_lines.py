"""The proofreader's own rules on articles of the size limit whose text is one long run of a kind
(an image pasted as a data: URI, a word without spaces, a run of spaces, a line of doubled words,
thousands of `# ` lines, a code block of blank lines, a code line with a run of spaces), against a
realistic article of the same size measured in the same run.

    python -m bench proofread-long-lines [--kb 200] [--limit 60] [--runs 1]

Each article is parsed and every checker's rules run over it (technical accuracy needs a model;
pymarkdownlnt, the third-party linter, runs under its own time limit and is left out), as a work
pool job runs them, in a fresh child process per article (the dictionaries loaded once, untimed).
The table gives seconds and the ratio to the realistic article: a rule that reads a run once
keeps the ratio near 1, one that rereads it from each position grows with the square of its
length. A child that has not finished after `--limit` seconds is stopped (the bot's work pool
stops a job after CONCIERGE_WORK_TIMEOUT, 30 s by default, and reports the check as failed)."""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable

from bench._common import child_output
from bench.proofread import build_article

CHECKERS = [
    ("code_quality", "CodeQualityChecker", "rules"),
    ("language_quality", "LanguageQualityChecker", "rules"),
    ("link", "LinkChecker", "rules"),
    ("markdown_format", "MarkdownFormatChecker", "_own_rules"),
    ("privacy", "PrivacyChecker", "rules"),
    ("structure", "StructureChecker", "rules"),
]
HEAD = "# An article\n\nIts first paragraph.\n\n"


def _fill(unit: str, size: int) -> str:
    return unit * (size // len(unit.encode()))


ARTICLES: dict[str, Callable[[int], str]] = {
    "realistic (baseline)": lambda n: build_article(n // 1000),
    "data: URI image": lambda n: HEAD + "![diagram](data:image/png;base64," + _fill("iVBORw0KGgo", n - 90) + ")\n",
    "one word, no spaces": lambda n: HEAD + _fill("x", n - 40) + "\n",
    "a run of spaces": lambda n: HEAD + "a" + " " * (n - 50) + "b\n",
    "one line of doubled words": lambda n: HEAD + _fill("word ", n - 40) + "\n",
    "`# ` lines": lambda n: _fill("# h\n", n),
    "a code block of blank lines": lambda n: HEAD + "```python\nprint(1)\n" + "\n" * (n - 60) + "print(2)\n```\n",
    "a code line with a run of spaces": lambda n: HEAD + "```python\nx = 1" + " " * (n - 60) + "\n```\n",
}

CHILD = """
import importlib, json, sys, time
from agents.proofread.checkers.base import _parsed, rules_job
from agents.proofread.config import GraphConfig
checkers = json.loads(sys.argv[1])
rules_job(getattr(importlib.import_module("agents.proofread.checkers.language_quality"), "LanguageQualityChecker"),
          GraphConfig(), "rules", "# Warm\\n\\nこれは文です。This is a sentence.\\n")  # dictionaries, untimed
text = sys.stdin.read()
started = time.perf_counter()
_parsed(text, None)  # parsed once, as in a worker: the checkers' rules_job calls reuse it
for module, name, method in checkers:
    checker = getattr(importlib.import_module("agents.proofread.checkers." + module), name)
    rules_job(checker, GraphConfig(), method, text)
print(time.perf_counter() - started)
"""


def _time(text: str, limit: float) -> float | None:
    out = child_output(CHILD, json.dumps(CHECKERS), stdin=text, limit=limit)
    return None if out is None else float(out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench proofread-long-lines")
    parser.add_argument("--kb", type=int, default=200, help="article size in KB (default 200, the size limit)")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds before a child is stopped (default 60)")
    parser.add_argument("--runs", type=int, default=1, help="timed runs per article; the median is shown")
    args = parser.parse_args(argv)
    size = args.kb * 1000
    print(f"Every checker's rules (no model, no third-party linter) on {args.kb} KB articles; "
          f"median of {args.runs} run(s), stopped after {args.limit:g} s.\n")
    print("| Article | Seconds | × realistic |")
    print("|---|---:|---:|")
    baseline: float | None = None
    for name, make in ARTICLES.items():
        text = make(size)
        times = [_time(text, args.limit) for _ in range(args.runs)]
        finished = [t for t in times if t is not None]
        if len(finished) < len(times):
            print(f"| {name} | > {args.limit:g} | > {args.limit / baseline:.0f} |" if baseline else f"| {name} | > {args.limit:g} | |", flush=True)
            continue
        seconds = statistics.median(finished)
        baseline = baseline or seconds
        print(f"| {name} | {seconds:.2f} | {seconds / baseline:.2f} |", flush=True)
    return 0
