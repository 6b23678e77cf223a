"""Compare /proofread with textlint (preset-ja-technical-writing) and markdownlint-cli2 on the
real-article corpus: findings by line that only one side reports, and time per article.

    python scripts/compare_linters.py [--split dev[,heldout2,…]] [--tools DIR] [--show N]

Not run in CI: it needs Node.js and npm (the two linters are installed into DIR, by default
~/.cache/concierge-linters, on first use). Lines are compared, not messages: a line reported by
both counts once on each side as "both". The held-aside split is refused unless
PROOFREAD_RULES_FROZEN=1 (see eval/proofread/README.md)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.proofread_quality import (  # noqa: E402
    MANIFEST,
    SHARED,
    CorpusError,
    article_path,
    load_manifest,
    parse_splits,
    refuse_heldout,
    review_text,
)

PACKAGES = ("textlint", "textlint-rule-preset-ja-technical-writing", "markdownlint-cli2")
_MDL_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?::\d+)? (?:error |warning )?(?P<rule>MD\d+)")


def install(tools: Path) -> None:
    if all((tools / "node_modules" / ".bin" / name).exists() for name in ("textlint", "markdownlint-cli2")):
        return
    tools.mkdir(parents=True, exist_ok=True)
    if not (tools / "package.json").exists():
        (tools / "package.json").write_text('{"private": true}\n')
    subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", *PACKAGES], cwd=tools, check=True)
    (tools / ".textlintrc.json").write_text(json.dumps({"rules": {"preset-ja-technical-writing": True}}))


def textlint(tools: Path, path: Path) -> tuple[set[int], Counter[str], float]:
    start = time.perf_counter()
    out = subprocess.run([str(tools / "node_modules/.bin/textlint"), "--format", "json", str(path)], cwd=tools,
                         capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    lines: set[int] = set()
    rules: Counter[str] = Counter()
    for result in json.loads(out.stdout or "[]"):
        for message in result.get("messages", []):
            lines.add(int(message["line"]))
            rules[str(message.get("ruleId", "?")).split("/")[-1]] += 1
    return lines, rules, elapsed


def markdownlint(tools: Path, path: Path) -> tuple[set[int], Counter[str], float]:
    start = time.perf_counter()
    out = subprocess.run([str(tools / "node_modules/.bin/markdownlint-cli2"), str(path)], cwd=tools,
                         capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    lines: set[int] = set()
    rules: Counter[str] = Counter()
    for row in (out.stdout + out.stderr).splitlines():
        match = _MDL_LINE.match(row.strip())
        if match:
            lines.add(int(match.group("line")))
            rules[match.group("rule")] += 1
    return lines, rules, elapsed


async def ours(path: Path, text: str) -> tuple[set[int], Counter[str], float]:
    start = time.perf_counter()
    review = await review_text(text, path.name)
    elapsed = time.perf_counter() - start
    lines: set[int] = set()
    rules: Counter[str] = Counter()
    for issue in review["issues"]:
        if issue.get("line_start"):
            lines.add(int(issue["line_start"]))
        rules[str(issue.get("source") or issue.get("category"))] += 1
    return lines, rules, elapsed


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/compare_linters.py")
    parser.add_argument("--split", default="dev", help="one split, or several joined by commas (as the bench takes)")
    parser.add_argument("--tools", type=Path, default=Path.home() / ".cache" / "concierge-linters")
    parser.add_argument("--show", type=int, default=10, help="rules to list per tool")
    args = parser.parse_args(argv)
    try:
        splits = parse_splits(args.split)
    except CorpusError as exc:
        print(exc, file=sys.stderr)
        return 2
    reason = refuse_heldout(args.split)
    if reason:
        print(reason, file=sys.stderr)
        return 2
    install(args.tools)
    totals: dict[str, Counter[str]] = {"textlint": Counter(), "markdownlint": Counter()}
    rules: dict[str, Counter[str]] = {"ours": Counter(), "textlint": Counter(), "markdownlint": Counter()}
    times: dict[str, list[float]] = {"ours": [], "textlint": [], "markdownlint": []}
    skipped = 0
    for article in load_manifest(MANIFEST):
        if article["split"] not in splits:
            continue
        path = article_path(article, MANIFEST, SHARED)
        if not path.is_file():
            skipped += 1
            continue
        mine, my_rules, my_time = await ours(path, path.read_text(encoding="utf-8"))
        rules["ours"] += my_rules
        times["ours"].append(my_time)
        lint_runs = {"markdownlint": markdownlint(args.tools, path)}
        if article["language"] == "ja":  # the preset is for Japanese prose
            lint_runs["textlint"] = textlint(args.tools, path)
        for name, (theirs, their_rules, elapsed) in lint_runs.items():
            rules[name] += their_rules
            times[name].append(elapsed)
            totals[name].update(both=len(mine & theirs), only_ours=len(mine - theirs), only_theirs=len(theirs - mine))
    print(f"split {args.split}: {len(times['ours'])} articles ({skipped} absent)")
    for name, counts in totals.items():
        print(f"  lines flagged vs {name}: both {counts['both']}, only /proofread {counts['only_ours']}, "
              f"only {name} {counts['only_theirs']}")
    for name, values in times.items():
        if values:
            print(f"  time per article, {name}: median {statistics.median(values):.2f} s, max {max(values):.2f} s")
    for name, counter in rules.items():
        print(f"  {name} rules: " + ", ".join(f"{r} {n}" for r, n in counter.most_common(args.show)))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("CONCIERGE_LLM", "offline")
    raise SystemExit(asyncio.run(main(sys.argv[1:])))
