"""Verify the proofread evaluation corpus against corpus.json.

Checks, for every article whose file is present, that its size and SHA-256 match the record, and that
the recorded split is the one the fixed split rule gives. The split rule covers the first 36 articles
(``dev`` and ``heldout``); the second held-out set (``heldout2``) was collected later as a block, so
its articles are taken as recorded, and the check only requires that none of them comes from a
repository of the first set. The third held-out set (``heldout3``) was collected the same way, after
``heldout2``; none of its articles may come from a repository of the first set or of ``heldout2``,
and each later block (``heldout4`` up to the newest number the records name, with no number left
out) none from a repository of any earlier set.
Articles stored outside the repository (``stored: "shared"``) are looked up under ``--shared`` and
reported as missing when absent there. Each record's ``language`` must be the one the article's
letters point to (counted, never printed).

Only file metadata is read here: the check prints no article text, so it is safe to run on the
held-aside part.

    python eval/proofread/check_corpus.py [--shared /work/shared/proofread_corpus]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SHARED = Path("/work/shared/proofread_corpus")
# Strata of the split rule, in this order: Japanese Zenn, Japanese Qiita, English blogs.
STRATA = ("zenn", "qiita", "en")
# Splits given by the split rule, and the later held-out blocks that the rule does not cover, in the
# order they were collected: each block must share no repository with the rule splits or an earlier block.
RULE_SPLITS = ("dev", "heldout")
_BLOCK = re.compile(r"heldout([1-9]\d*)")  # a later block: heldout2, heldout3, …
PLATFORMS = {"zenn", "qiita", "hugo", "jekyll", "zola", "other"}
FIELDS = (
    "id",
    "platform",
    "language",
    "repo",
    "path",
    "commit",
    "licence",
    "stored",
    "split",
    "bytes",
    "sha256",
)


def stratum(article: dict) -> str:
    return "en" if article["language"] == "en" else article["platform"]


def expected_splits(articles: list[dict]) -> dict[str, str]:
    """The split rule: order by (stratum, sha256); every third position (0-based index % 3 == 2) is held out.

    Only the articles of the first set are ordered; the later blocks' articles are left out
    of the walk, so adding them does not move the others.
    """
    ruled = [a for a in articles if a["split"] in RULE_SPLITS]
    ordered = sorted(ruled, key=lambda a: (STRATA.index(stratum(a)), a["sha256"]))
    return {a["id"]: ("heldout" if i % 3 == 2 else "dev") for i, a in enumerate(ordered)}


def script_of(text: str) -> str:
    """The language an article's letters point to, counted, never printed: Japanese when kana make a
    fiftieth of its letters, Chinese when Han characters do (and kana do not), English otherwise."""
    kana = sum(1 for ch in text if "\u3040" <= ch <= "\u30ff")
    han = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    letters = kana + han + sum(1 for ch in text if ch.isascii() and ch.isalpha()) or 1
    if kana * 50 >= letters:
        return "ja"
    return "zh" if han * 50 >= letters else "en"


def block_splits(articles: list[dict]) -> tuple[str, ...]:
    """heldout2 … heldoutN, N the newest block the records name: a new held-out set is data only."""
    numbers = [int(m.group(1)) for a in articles if (m := _BLOCK.fullmatch(str(a.get("split", ""))))]
    return tuple(f"heldout{n}" for n in range(2, max(numbers, default=1) + 1))


def article_file(article: dict, shared: Path) -> Path:
    base = HERE if article["stored"] == "repo" else shared
    return base / "articles" / f"{article['id']}.md"


def check(corpus_path: Path, shared: Path) -> list[str]:
    problems: list[str] = []
    articles = json.loads(corpus_path.read_text(encoding="utf-8"))["articles"]
    blocks = block_splits(articles)
    ids = [a.get("id") for a in articles]
    for dup, n in Counter(ids).items():
        if n > 1:
            problems.append(f"{dup}: id appears {n} times")
    for a in articles:
        missing = [f for f in FIELDS if f not in a]
        if missing:
            problems.append(f"{a.get('id')}: missing fields {', '.join(missing)}")
            continue
        if a["platform"] not in PLATFORMS or a["language"] not in ("ja", "en", "zh"):
            problems.append(f"{a['id']}: unknown platform/language {a['platform']}/{a['language']}")
        if a["stored"] not in ("repo", "shared") or a["split"] not in (*RULE_SPLITS, *blocks):
            problems.append(f"{a['id']}: bad stored/split value {a['stored']}/{a['split']}")
            continue
        path = article_file(a, shared)
        if not path.is_file():
            problems.append(f"{a['id']}: file not found at {path}")
            continue
        data = path.read_bytes()
        if len(data) != a["bytes"]:
            problems.append(f"{a['id']}: {len(data)} bytes, corpus.json says {a['bytes']}")
        if hashlib.sha256(data).hexdigest() != a["sha256"]:
            problems.append(f"{a['id']}: sha256 differs from corpus.json")
        script = script_of(data.decode("utf-8", errors="replace"))
        if script != a["language"]:
            problems.append(f"{a['id']}: recorded language {a['language']}, its letters say {script}")
    if problems:
        return problems
    for aid, split in expected_splits(articles).items():
        recorded = next(a["split"] for a in articles if a["id"] == aid)
        if recorded != split:
            problems.append(f"{aid}: recorded split {recorded}, the rule gives {split}")
    earlier_repos = {a["repo"]: "the first set" for a in articles if a["split"] in RULE_SPLITS}
    for block in blocks:
        members = [a for a in articles if a["split"] == block]
        if not members:
            problems.append(f"{block}: no article, but later blocks exist (blocks are numbered without gaps)")
        problems.extend(
            f"{a['id']}: {block} article from {a['repo']}, a repository of {earlier_repos[a['repo']]}"
            for a in members
            if a["repo"] in earlier_repos
        )
        for a in members:
            earlier_repos.setdefault(a["repo"], block)
    stray = {p.stem for p in (HERE / "articles").glob("*.md")} - {
        a["id"] for a in articles if a["stored"] == "repo"
    }
    problems.extend(f"{s}: file in articles/ without a corpus.json record" for s in sorted(stray))
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE / "corpus.json")
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    args = parser.parse_args(argv)
    problems = check(args.corpus, args.shared)
    for p in problems:
        print(p, file=sys.stderr)
    articles = json.loads(args.corpus.read_text(encoding="utf-8"))["articles"]
    counts = Counter((a["split"], a["platform"], a["language"]) for a in articles)
    for (split, platform, language), n in sorted(counts.items()):
        print(f"{split:8} {platform:7} {language}  {n}")
    print(f"{len(articles)} articles, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
