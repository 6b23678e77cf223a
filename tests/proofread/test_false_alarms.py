"""False alarms that made writers distrust the proofreader, each reproduced in a small article:
none of them is reported any more, and the true problem next to it still is."""

from __future__ import annotations

from agents.proofread.agent import ProofreadAgent
from agents.proofread.checkers import CHECKER_CLASSES, CheckContext
from agents.proofread.checkers.privacy import redact_personal
from agents.proofread.config import GraphConfig
from agents.proofread.linter import LinterWorker
from agents.proofread.llm import ProofreadLLM
from agents.proofread.parser import parse_article
from agents.proofread.schemas import Issue
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel
from tests.proofread.conftest import offline_deps, start_conversation


def context(**config) -> CheckContext:
    return CheckContext(config=GraphConfig(**config), llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)))


def run(category: str, text: str) -> list[Issue]:
    checker = CHECKER_CLASSES[category](context())
    article = parse_article(text)
    return checker._own_rules(article) if category == "markdown_format" else checker.rules(article)


def sources(category: str, text: str) -> set[str | None]:
    return {issue.source for issue in run(category, text)}


def test_a_link_whose_text_wraps_onto_the_next_line_is_not_a_bare_url():
    text = "# Notes\n\nThe guide [explains the whole\nsetup in detail](https://example.com/guide) for you.\n"
    assert "rule:bare-url" not in sources("markdown_format", text)
    assert "rule:bare-url" in sources("markdown_format", "# Notes\n\nSee https://example.com/guide for it.\n")


def test_an_html_embed_block_is_not_prose():
    text = (
        "# Embeds\n\nA paragraph.\n\n"
        '<blockquote class="twitter-tweet"><p lang="ja">とても長いツイートの本文で、文が終わらないまま続いていく'
        "ようなものでも記事の文章ではない https://t.co/abc</p></blockquote>\n"
        '<script async src="https://platform.twitter.com/widgets.js"></script>\n'
    )
    article = parse_article(text)
    assert [number for number, _line in article.prose_lines()] == [1, 3]
    assert "rule:bare-url" not in sources("markdown_format", text)


def test_hugo_shortcodes_and_site_paths_are_not_broken_links():
    head = '---\ntitle: "Hugo"\ndate: 2024-01-01\ndraft: false\n---\n\n'
    text = head + (
        'See [the other post]({{< ref "other.md" >}}) and {{< figure src="/images/diagram.png" >}}.\n\n'
        "![Diagram](/images/diagram.png)\n\n[About](/about/)\n\n{{% notice info %}}\nNote\n{{% /notice %}}\n"
    )
    assert run("link", text) == []
    assert "rule:bare-url" not in sources("markdown_format", text)
    # A path on the writer's own machine is still a problem.
    assert "rule:local-path" in sources("link", head + "![shot](file:///Users/me/shot.png)\n")


def test_an_intentional_setext_heading_is_left_alone():
    text = "Title\n=====\n\nSection\n-------\n\nText of the section.\n"
    assert "rule:setext-heading" not in sources("markdown_format", text)
    accidental = "This sentence was meant to be followed by a rule.\n---\n\nMore text.\n"
    (issue,) = [i for i in run("markdown_format", accidental) if i.source == "rule:setext-heading"]
    assert issue.line_start == 1 and issue.line_end == 2


PARAGRAPHS = "".join(f"これは{n}番目の段落で、手順を説明しています。\n\n" for n in range(6))


def test_a_closing_paragraph_before_references_is_a_conclusion():
    text = (
        f"## はじめに\n\n{PARAGRAPHS}## 手順\n\n{PARAGRAPHS}"
        "以上、よろしければ参考にしてみてください。\n\n## 参考\n\n- [公式](https://example.com)\n"
    )
    assert "rule:conclusion" not in sources("structure", text)


def test_release_notes_need_no_conclusion():
    text = f"# Release notes v2.3.0\n\n## v2.3.0\n\n{PARAGRAPHS}## v2.2.0\n\n{PARAGRAPHS}- fixed a bug\n"
    assert not {"rule:conclusion", "rule:introduction"} & sources("structure", text)


def test_a_missing_conclusion_is_only_a_suggestion():
    text = f"## はじめに\n\n{PARAGRAPHS}## 手順\n\n{PARAGRAPHS}```sh\nmake\n```\n"
    (issue,) = [i for i in run("structure", text) if i.source == "rule:conclusion"]
    assert issue.severity == "suggestion"


async def test_a_reference_list_is_not_reported_as_duplicate_links():
    text = (
        "# Reading\n\nThe [Python docs](https://docs.python.org/3/) explain it.\n\n## References\n\n"
        "- [Python docs](https://docs.python.org/3/)\n- [PEP 8](https://peps.python.org/pep-0008/)\n"
    )
    agent = ProofreadAgent(GraphConfig(checkers=("link",)))
    final = await (await start_conversation(offline_deps(), agent)).send(text)
    assert [i for i in final.data["issues"] if i["source"] == "rule:duplicate-link"] == []


def test_a_private_ip_at_the_end_of_a_sentence_is_found():
    text = "# Network\n\nThe database listens on 10.0.1.4.\n\nVersion 1.2.3.4.5 is not an address.\n"
    found = [(i.source, i.line_start) for i in run("privacy", text)]
    assert found == [("rule:private-ip", 3)]
    assert "10.0.1.4" not in redact_personal("on 10.0.1.4.")


UNREADABLE = (
    "# Title\n\nIntro paragraph.\n\n## Thanks\n\n| a |> b\n- item\n\n##Broken heading\n\nText.\n"
)


async def test_the_linter_tripping_on_one_part_keeps_its_rules_for_the_rest_and_prints_nothing(capfd):
    worker = LinterWorker()
    try:
        checker = CHECKER_CLASSES["markdown_format"](context())
        checker.context.linter = worker
        result = await checker.check(parse_article(UNREADABLE))
    finally:
        worker.close()
    assert result.errors == []
    (note,) = result.skipped
    assert "could not read lines 6–8" in note.reason
    assert "try again" not in note.reason
    # The heading without a space after ## is still found, by the linter and by our own rule.
    assert ("pymarkdownlnt:MD018", 10) in {(i.source, i.line_start) for i in result.issues}
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err and "Traceback" not in captured.out
