"""Safe fixes: the fixed copy of the article and its diff, attached to the review when a fix applies."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agents.proofread.fixes import fix_article, unified_diff
from agents.proofread.parser import markdown, parse_article
from bot.agent import IncomingFile
from tests.proofread.conftest import Conversation

ROOT = Path(__file__).resolve().parents[2]


def fix(text: str, issues: list[dict[str, Any]] | None = None, *, from_file: bool = True) -> str:
    return fix_article(parse_article(text), issues or [], filename="post.md", from_file=from_file).fixed


def flagged(rule: str, *lines: int) -> list[dict[str, Any]]:
    return [{"source": f"rule:{rule}", "line_start": line} for line in lines]


def apply_unified_diff(original: str, diff: str) -> str:
    """What `patch` does with a unified diff, strictly: every context and removed line must match."""
    source = original.splitlines(keepends=True)
    out: list[str] = []
    position = 0
    lines = diff.splitlines(keepends=True)
    index = 2  # after the --- / +++ header
    while index < len(lines):
        header = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", lines[index])
        assert header, lines[index]
        start = int(header.group(1)) - (0 if header.group(2) == "0" else 1)
        out += source[position:start]
        position = start
        index += 1
        while index < len(lines) and not lines[index].startswith("@@"):
            line = lines[index]
            following = lines[index + 1] if index + 1 < len(lines) else ""
            no_newline = following.startswith("\\ No newline")
            text = line[1:-1] if no_newline else line[1:]
            if line[0] in " -":
                assert source[position] == text, (source[position], text)
                position += 1
            if line[0] in " +":
                out.append(text)
            index += 2 if no_newline else 1
    out += source[position:]
    return "".join(out)


# --- each fix ------------------------------------------------------------------------------------


def test_trailing_spaces_are_removed_but_a_hard_line_break_is_kept():
    text = "# Title  \n\nfirst line  \nsecond line\t\nlast line of the paragraph   \n\n| a | b |  \n|---|---|\n"
    assert fix(text) == (
        "# Title\n\nfirst line  \nsecond line\nlast line of the paragraph\n\n| a | b |\n|---|---|\n"
    )


def test_runs_of_blank_lines_become_one_and_blank_lines_at_the_end_go():
    assert fix("# A\n\n\n\ntext\n\n\n- item\n\n\n\n") == "# A\n\ntext\n\n- item\n"


def test_a_file_gets_its_final_newline_but_pasted_text_is_left_as_sent():
    assert fix("# A\n\ntext") == "# A\n\ntext\n"
    assert fix("# A\n\ntext", from_file=False) == "# A\n\ntext"


def test_code_fence_language_is_added_only_where_the_code_proves_it():
    text = (
        "# A\n\n```\n{\"name\": \"app\", \"version\": 1}\n```\n\n"
        "```\n#!/usr/bin/env python3\nprint('hi')\n```\n\n"
        "```\n#!/bin/bash\necho hi\n```\n\n"
        "```\nx = [1, 2]\nprint(x)\n```\n\n"  # Python? Ruby? Left to the writer.
        "```\n[1, 2, 3]\n```\n"  # a list of numbers: JSON, or any language's output
    )
    fixed = fix(text, flagged("code-language", 3, 7, 12, 17, 22))
    assert re.findall(r"^```\S*$", fixed, re.M) == [
        "```json", "```", "```python", "```", "```bash", "```", "```", "```", "```", "```",
    ]


def test_fence_language_follows_the_review_a_rule_turned_off_is_not_fixed():
    text = "# A\n\n```\n{\"a\": 1}\n```\n"
    assert fix(text, []) == text


def test_redundant_phrases_with_one_obvious_rewrite_are_shortened():
    text = (
        "# A\n\n設定を変更することができます。\nログインすることができない場合があります。\n"
        "In order to build it, run make. We cache results, in order to save time.\n"
    )
    fixed = fix(text, flagged("redundant-phrase", 3, 4) + flagged("in-order-to", 5))
    assert fixed == (
        "# A\n\n設定を変更できます。\nログインできない場合があります。\n"
        "To build it, run make. We cache results, to save time.\n"
    )


def test_phrases_whose_rewrite_could_change_the_meaning_are_left_to_the_writer():
    text = (
        "# A\n\n人を愛することができる。\nそうすることができる。\n"
        "Put the list in order to find duplicates.\n"
    )
    assert fix(text, flagged("redundant-phrase", 3, 4) + flagged("in-order-to", 5)) == text


# --- what is never touched ---------------------------------------------------------------------------


def test_code_blocks_front_matter_urls_and_inline_code_are_untouched():
    text = (
        "---\ntitle: \"実行することができる  \"\nbody: |\n  line  \n\n\n  more\n---\n\n"
        "# A\n\n"
        "```python\nx = 1  \n\n\n\ny = 2\t\n```\n\n"
        "    indented code  \n\n\n    still code\n\n"
        "<pre>\nkept  \n\n\n</pre>\n\n"
        "`実行することができる` と https://example.com/実行することができる を見てください。\n\n"
        "$$\nx  \n\n\ny\n$$\n"
    )
    parsed = parse_article(text)
    lines = text.split("\n")
    flagged_lines = [n for n, line in enumerate(lines, start=1) if "することができ" in line]
    fixed = fix(text, flagged("redundant-phrase", *flagged_lines))
    assert fixed == text
    assert parsed.front_matter is not None and parsed.front_matter.data["title"] == "実行することができる  "


def test_whitespace_fixes_never_change_the_rendered_html():
    text = (
        "# Title  \n\n\n\npara one  \ncontinues\n\n\n- item  \n\n\n  more of the item  \n\n> quote  \n>\n> more\n\n\n"
        "    code\n\n\n\n    code\n"
    )
    fixed = fix(text)
    assert fixed != text
    assert markdown().render(fixed) == markdown().render(text)


def test_applying_the_fixes_twice_changes_nothing():
    text = (
        "# A   \n\n\n設定を変更することができます。  \n\n```\n{\"a\": 1}\n```\n\n\n"
        "In order to run it, type make.\n\n\n"
    )
    issues = flagged("redundant-phrase", 4, 11) + flagged("code-language", 6)
    once = fix(text, issues)
    again = fix_article(parse_article(once), flagged("redundant-phrase", 3, 9) + flagged("code-language", 5),
                        from_file=True)
    assert again.count == 0 and again.fixed == once


# --- the diff ----------------------------------------------------------------------------------------


def test_the_diff_turns_the_original_into_the_fixed_copy():
    text = "# A  \n\n\n設定を変更することができます。\n\n```\n{\"a\": 1}\n```\n\nend"
    result = fix_article(parse_article(text), flagged("redundant-phrase", 4) + flagged("code-language", 6),
                         filename="uploads/post.md", from_file=True)
    assert result.diff.startswith("--- a/post.md\n+++ b/post.md\n")
    assert "\\ No newline at end of file" in result.diff
    assert apply_unified_diff(text, result.diff) == result.fixed
    assert result.counts == {"trailing-space": 1, "blank-lines": 1, "redundant-phrase": 1, "code-language": 1,
                             "final-newline": 1}


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs the patch program")
def test_patch_applies_the_diff_to_the_writers_file(tmp_path: Path):
    text = "# A  \n\n\n\nbody text\t\n\n```\n#!/bin/sh\necho hi\n```"
    result = fix_article(parse_article(text), flagged("code-language", 7), filename="post.md", from_file=True)
    (tmp_path / "post.md").write_text(text, encoding="utf-8")
    (tmp_path / "post.diff").write_text(result.diff, encoding="utf-8")
    subprocess.run(["patch", "-p1", "-s", "-i", "post.diff"], cwd=tmp_path, check=True, timeout=30)
    assert (tmp_path / "post.md").read_text(encoding="utf-8") == result.fixed
    assert unified_diff(result.fixed, result.fixed, "post.md") == ""


# --- through the review --------------------------------------------------------------------------------

ARTICLE = """---
title: "Caching API responses"
---

# Caching API responses<SP>

In order to keep the API fast, we cache its responses.<SP>


The cache keeps one entry per URL and drops the oldest one first.

```
{"ttl": 60, "max_entries": 1000}
```

That is all there is to it.""".replace("<SP>", "   ")


async def test_a_review_attaches_the_fixed_copy_and_its_diff(conversation: Conversation):
    final = await conversation.send("/proofread", files=(IncomingFile(filename="cache.md", content=ARTICLE.encode()),))
    names = [file.filename for file in final.files]
    assert names == ["proofread-report.md", "cache.fixed.md", "cache.diff"]
    report, fixed, diff = final.files
    assert apply_unified_diff(ARTICLE, diff.content) == fixed.content
    # “In order to” is left alone: its rule is off by default, and a fix follows its rule.
    assert "```json" in fixed.content and "In order to keep the API fast" in fixed.content
    assert fixed.content.endswith("That is all there is to it.\n")
    fixes = final.data["fixes"]
    assert fixes["count"] == 5 and "fixed" not in fixes  # the data carries no copy of the article
    assert "## Safe fixes" in report.content and "5 safe fixes applied in `cache.fixed.md`" in report.content
    assert "the other issues need the writer" in report.content
    assert "5 safe fixes applied: cache.fixed.md (diff: cache.diff)" in final.text

    # The fixed copy, sent back, needs nothing more.
    again = await conversation.send("/proofread", files=(IncomingFile(filename="cache.md",
                                                                      content=fixed.content.encode()),))
    assert [file.filename for file in again.files] == ["proofread-report.md"]
    assert again.data["fixes"]["count"] == 0
    assert "Safe fixes" not in again.files[0].content


async def test_an_article_with_nothing_to_fix_gets_no_extra_files(conversation: Conversation):
    clean = "# Title\n\nA short note about one thing.\n"
    final = await conversation.send("/proofread", files=(IncomingFile(filename="note.md", content=clean.encode()),))
    assert [file.filename for file in final.files] == ["proofread-report.md"]
    assert final.data["fixes"] == {"count": 0, "counts": {}}
    assert "safe fix" not in final.text


async def test_a_proofread_turn_through_the_console_delivers_the_two_files(tmp_path: Path):
    article = tmp_path / "cache.md"
    article.write_text(ARTICLE, encoding="utf-8")
    env = {
        "PATH": "/usr/bin:/bin", "CONCIERGE_DATA_DIR": str(tmp_path / "data"), "CONCIERGE_LLM": "offline",
        "HOME": str(tmp_path),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "ask", "--json", "--attach", str(article), "/proofread",
        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=300)
    assert proc.returncode == 0, err.decode()[-2000:]
    final = [json.loads(line) for line in out.decode().splitlines() if line.strip()][-1]
    assert final["type"] == "final"
    files = {file["filename"]: file["content"] for file in final["files"]}
    assert set(files) == {"proofread-report.md", "cache.fixed.md", "cache.diff"}
    assert apply_unified_diff(ARTICLE, files["cache.diff"]) == files["cache.fixed.md"]
