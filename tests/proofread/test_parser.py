"""The parser: exact, absolute line numbers for everything the checkers and the model see."""

from __future__ import annotations

from agents.proofread.parser import parse_article
from tests.proofread.conftest import fixture_text

ZENN = """---
title: "T"
emoji: "🧪"
type: "tech"
topics: ["python"]
published: false
---

## はじめに

本文です。[リンク](https://example.com/a) と ![図](https://example.com/b.png =250x)

```python:main.py
print("hi")
```

:::message
注意
:::
"""


def test_front_matter_is_parsed_and_the_body_starts_after_it():
    article = parse_article(ZENN)
    assert article.front_matter is not None
    assert article.front_matter.data["topics"] == ["python"]
    assert article.front_matter.line_of("emoji") == 3
    assert article.front_matter_line_count == 7
    assert article.body_start_line == 8
    assert article.article_type == "zenn"


def test_numbered_body_uses_absolute_line_numbers():
    article = parse_article(ZENN)
    numbered = article.get_numbered_body().split("\n")
    assert numbered[0] == "8: "
    assert numbered[1] == "9: ## はじめに"
    assert "11: 本文です。" in article.get_numbered_body()
    for entry in numbered:
        number, _, text = entry.partition(": ")
        assert article.line(int(number)) == text


def test_code_blocks_links_headings_and_containers_carry_their_lines():
    article = parse_article(ZENN)
    (block,) = article.code_blocks
    assert (block.language, block.filename, block.start_line, block.end_line) == ("python", "main.py", 13, 15)
    assert block.content == 'print("hi")'
    links = {(link.kind, link.url, link.line) for link in article.links}
    assert ("inline", "https://example.com/a", 11) in links
    assert ("image", "https://example.com/b.png", 11) in links  # Zenn's =250x size is not part of the URL
    assert [(h.level, h.text, h.line) for h in article.headings] == [(2, "はじめに", 9)]
    assert [(c.kind, c.start_line, c.end_line) for c in article.containers] == [("message", 17, 19)]


def test_line_numbers_shift_exactly_by_the_front_matter():
    body = "## A\n\ntext https://example.com/x\n\n```\ncode\n```\n"
    plain = parse_article(body)
    with_front = parse_article("---\ntitle: x\ntags: [a]\n---\n" + body)
    assert with_front.body_start_line - plain.body_start_line == 4
    assert [h.line + 4 for h in plain.headings] == [h.line for h in with_front.headings]
    assert [link.line + 4 for link in plain.links] == [link.line for link in with_front.links]
    assert [b.start_line + 4 for b in plain.code_blocks] == [b.start_line for b in with_front.code_blocks]


def test_windows_line_endings_keep_line_numbers():
    article = parse_article("---\r\ntitle: x\r\n---\r\n\r\n# H\r\n")
    assert article.headings[0].line == 5
    assert article.line(5) == "# H"


def test_unclosed_fence_is_recorded_without_an_end():
    article = parse_article("text\n\n```bash\necho hi\n\n## not a heading\n")
    (block,) = article.code_blocks
    assert block.end_line is None and not block.closed
    assert article.headings == []


def test_setext_heading_and_thematic_break_are_told_apart():
    article = parse_article("Paragraph line\n---\n\nAfter a blank\n\n---\n")
    assert [(h.level, h.text, h.line, h.style) for h in article.headings] == [(2, "Paragraph line", 1, "setext")]


def test_platform_type_comes_from_front_matter_keys():
    assert parse_article(fixture_text("qiita_clean.md")).article_type == "qiita"
    assert parse_article(fixture_text("zenn_clean.md")).article_type == "zenn"
    assert parse_article(fixture_text("english_clean.md")).article_type == "markdown"
    assert parse_article(fixture_text("english_clean.md")).language == "en"
    assert parse_article(fixture_text("zenn_clean.md")).language == "ja"


def test_diff_blocks_and_qiita_filenames():
    article = parse_article("```diff js:app.js\n-a\n+b\n```\n\n```diff_ruby\n-a\n```\n")
    first, second = article.code_blocks
    assert (first.language, first.filename, first.diff) == ("js", "app.js", True)
    assert (second.language, second.diff) == ("ruby", True)


def test_bare_urls_record_what_a_renderer_would_swallow():
    article = parse_article("詳細は https://example.com/docsを参照。\n\nhttps://zenn.dev\n")
    first, card = article.links
    assert (first.url, first.swallowed) == ("https://example.com/docs", "を参照。")
    assert card.alone_on_line and card.line == 3


def test_invalid_front_matter_reports_the_yaml_error_line():
    article = parse_article(fixture_text("frontmatter_invalid.md"))
    assert article.front_matter is not None
    assert article.front_matter.error
    assert article.front_matter.error_line == 2
