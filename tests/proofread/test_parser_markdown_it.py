"""The parser on markdown-it-py tokens: what is prose, code, HTML or platform syntax is decided by a
CommonMark parser, and every part keeps its exact line."""

from __future__ import annotations

import pickle

from agents.proofread.parser import parse_article

ARTICLE = """---
title: "トークンで読む"
emoji: "🧩"
type: "tech"
topics: ["markdown"]
published: true
---

本文は[折り返した
リンクの文字列](https://example.com/wrapped)で始まります。

| 列 | 値 |
|---|---|
| a | https://example.com/in-table |

数式 $x^2$ と脚注[^note]、インライン脚注^[補足です]。

$$
E = mc^2
$$

::::details 開く
:::message alert
入れ子の中身
:::
::::

@[card](https://zenn.dev/zenn/articles/markdown-guide)
@[youtube](dQw4w9WgXcQ)

![図](https://example.com/figure.png =250x)

<div class="embed">
<p>これは埋め込みのHTMLで、段落ではありません https://example.com/in-html</p>
</div>

    indented code https://example.com/in-code

[^note]: 脚注の本文です。
"""


def kinds(text: str) -> dict[int, str]:
    article = parse_article(text)
    return {number: article.kind(number) for number in range(1, article.line_count + 1)}


def test_a_link_whose_text_wraps_is_one_link_on_its_first_line():
    article = parse_article(ARTICLE)
    (wrapped,) = [link for link in article.links if link.url == "https://example.com/wrapped"]
    assert (wrapped.kind, wrapped.line, wrapped.text) == ("inline", 9, "折り返した リンクの文字列")
    assert not [link for link in article.links if link.kind == "bare" and "wrapped" in link.url]


def test_blocks_get_their_line_kinds_from_the_tokens():
    found = kinds(ARTICLE)
    assert found[9] == found[10] == "text"
    assert {found[12], found[13], found[14]} == {"table"}
    assert found[18] == found[19] == found[20] == "math"
    assert found[22] == found[23] == "container" and found[24] == "text"
    assert found[25] == found[26] == "container"
    assert found[33] == found[34] == found[35] == "html"  # an HTML block is not prose
    assert found[37] == "code"  # indented code
    assert found[39] == "text"  # the footnote's text is prose


def test_containers_nest_by_their_colons():
    article = parse_article(ARTICLE)
    assert [(c.kind, c.start_line, c.end_line) for c in article.containers] == [
        ("details", 22, 26), ("message", 23, 25),
    ]


def test_zenn_embeds_and_sized_images_are_links_not_text():
    article = parse_article(ARTICLE)
    by_kind = {(link.kind, link.text, link.url, link.line) for link in article.links}
    assert ("embed", "card", "https://zenn.dev/zenn/articles/markdown-guide", 28) in by_kind
    assert ("embed", "youtube", "dQw4w9WgXcQ", 29) in by_kind
    (image,) = [link for link in article.links if link.kind == "image"]
    assert (image.url, image.text, image.extra, image.line) == ("https://example.com/figure.png", "図", "=250x", 31)


def test_urls_in_html_and_code_are_not_bare_urls_but_table_cells_are_read():
    bare = [link.url for link in parse_article(ARTICLE).links if link.kind == "bare"]
    assert bare == ["https://example.com/in-table"]


def test_a_fence_inside_a_quote_or_a_list_is_closed_and_keeps_its_lines():
    article = parse_article("> ```js\n> const a = 1\n> ```\n\n- item\n\n  ```py\n  x = 1\n  ```\n")
    quoted, listed = article.code_blocks
    assert (quoted.language, quoted.content, quoted.start_line, quoted.end_line) == ("js", "const a = 1", 1, 3)
    assert (listed.language, listed.content, listed.start_line, listed.end_line) == ("py", "x = 1", 7, 9)


def test_a_setext_heading_over_several_lines_records_its_underline():
    article = parse_article("これは段落の一行目で、\n二行目で終わります。\n---\n")
    (heading,) = article.headings
    assert (heading.style, heading.line, heading.line_end, heading.level) == ("setext", 1, 3, 2)


def test_reference_definitions_and_undefined_references():
    article = parse_article("[defined][ref] and [missing][nope]\n\n[ref]: https://example.com/ref\n")
    links = {(link.kind, link.url, link.line) for link in article.links}
    assert ("inline", "https://example.com/ref", 1) in links
    assert ("reference", "nope", 1) in links
    assert ("definition", "https://example.com/ref", 3) in links


def test_a_link_target_with_a_space_is_still_seen_as_a_link():
    (link,) = parse_article("See [the API](https://exa mple.com/api) here.\n").links
    assert (link.kind, link.url, link.extra) == ("inline", "https://exa", "mple.com/api")


def test_the_parsed_article_is_plain_data():
    article = parse_article(ARTICLE)
    again = pickle.loads(pickle.dumps(article))
    assert again == article
    assert again.model_dump()["links"]
