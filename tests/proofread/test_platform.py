"""Which platform an article is written for, judged from the whole front matter; platform rules
only when that is certain; drafts reported as not public yet."""

from __future__ import annotations

import pytest

from agents.proofread.agent import ProofreadAgent
from agents.proofread.checkers import CHECKER_CLASSES, DETERMINISTIC, CheckContext
from agents.proofread.config import GraphConfig
from agents.proofread.llm import ProofreadLLM
from agents.proofread.parser import parse_article
from agents.proofread.schemas import Issue
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel
from tests.proofread.conftest import offline_deps, start_conversation

BODY = "\n## 概要\n\n本文です。\n"
ZENN = '---\ntitle: "Zennの記事"\nemoji: "🐍"\ntype: "tech"\ntopics: ["python"]\npublished: true\n---\n' + BODY
QIITA = (
    "---\ntitle: Qiitaの記事\ntags:\n  - Python\n  - Markdown\nprivate: false\nupdated_at: ''\nid: null\n"
    "organization_url_name: null\n---\n" + BODY
)
HUGO_SEVEN_TAGS = (
    '---\ntitle: "Seven tags"\ndate: 2024-05-01\ndraft: false\ntype: post\n'
    "tags: [go, hugo, web, css, html, static, blog]\ncategories: [tech]\n---\n" + BODY
)
JEKYLL = '---\nlayout: post\ntitle: "Jekyll"\npermalink: /2024/jekyll/\ntype: note\n---\n' + BODY
TOML = '+++\ntitle = "A Hugo post"\ndate = 2024-05-01\ndraft = false\nteam_url = "https://example.com/team"\n+++\n' + BODY
ZOLA = '+++\ntitle = "A Zola post"\n[taxonomies]\ntags = ["rust"]\n+++\n' + BODY


def structure(text: str) -> list[Issue]:
    context = CheckContext(config=GraphConfig(), llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)))
    return CHECKER_CLASSES["structure"](context).rules(parse_article(text))


def every_rule(text: str) -> list[Issue]:
    context = CheckContext(config=GraphConfig(), llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)))
    article = parse_article(text)
    issues: list[Issue] = []
    for category in DETERMINISTIC:
        checker = CHECKER_CLASSES[category](context)
        issues += checker._own_rules(article) if category == "markdown_format" else checker.rules(article)
    return issues


@pytest.mark.parametrize(
    ("text", "platform", "certain"),
    [
        (ZENN, "zenn", True),
        (QIITA, "qiita", True),
        (HUGO_SEVEN_TAGS, "hugo", False),
        (JEKYLL, "jekyll", False),
        (TOML, "hugo", False),
        (ZOLA, "zola", False),
        ("# Plain\n\ntext\n", "plain", False),
        ("---\nfoo: 1\n---\n" + BODY, None, False),
        ("---\ntitle: t\ntags: [a, b]\n---\n" + BODY, None, False),  # tags alone are nobody's
        ("platform:zenn\n---\ntitle: t\n---\n" + BODY, "zenn", True),
    ],
)
def test_the_platform_comes_from_the_whole_front_matter(text, platform, certain):
    article = parse_article(text)
    assert (article.platform, article.platform_certain) == (platform, certain), article.platform_evidence


def test_a_hugo_post_with_seven_tags_and_a_type_gets_no_platform_rule():
    sources = {issue.source for issue in every_rule(HUGO_SEVEN_TAGS)}
    assert not {"rule:tags-count", "rule:zenn-type", "rule:topics-count"} & sources
    assert [i for i in every_rule(HUGO_SEVEN_TAGS) if i.severity == "critical"] == []


def test_toml_front_matter_is_read_and_its_values_are_not_prose():
    article = parse_article(TOML)
    assert article.front_matter is not None and article.front_matter.data["title"] == "A Hugo post"
    assert article.front_matter.line_of("team_url") == 5
    assert article.title == "A Hugo post"
    assert [link for link in article.links if "team" in link.url] == []
    assert not {"rule:title", "rule:no-title"} & {issue.source for issue in every_rule(TOML)}


def test_broken_toml_front_matter_is_reported_with_its_line():
    (issue,) = [i for i in structure('+++\ntitle = "ok"\ndate = = 2\n+++\n' + BODY) if i.source == "rule:front-matter-yaml"]
    assert issue.severity == "critical" and "TOML" in issue.problem and issue.line_start == 3


def test_certain_platform_rules_still_run():
    qiita = QIITA.replace("  - Python\n  - Markdown\n", "".join(f"  - t{n}\n" for n in range(7)))
    assert ("rule:tags-count", "critical") in {(i.source, i.severity) for i in structure(qiita)}
    zenn = ZENN.replace('type: "tech"', 'type: "post"')
    assert ("rule:zenn-type", "critical") in {(i.source, i.severity) for i in structure(zenn)}


def test_the_writer_can_name_the_platform_and_line_numbers_stay_the_articles():
    text = "platform:qiita\n---\ntitle: t\ntags: [a, b, c, d, e, f]\n---\n" + BODY
    article = parse_article(text)
    assert article.line(1) == "---" and article.declared_platform == "qiita"
    (issue,) = [i for i in structure(text) if i.source == "rule:tags-count"]
    assert issue.line_start == 3


@pytest.mark.parametrize(
    ("text", "setting"),
    [
        (ZENN.replace("published: true", "published: false"), "published: false"),
        (QIITA.replace("private: false", "private: true"), "private: true"),
        (HUGO_SEVEN_TAGS.replace("draft: false", "draft: true"), "draft: true"),
        (TOML.replace("draft = false", "draft = true"), "draft: true"),
    ],
)
def test_drafts_are_reported_as_not_public(text, setting):
    assert parse_article(text).draft == setting
    (issue,) = [i for i in structure(text) if i.source == "rule:draft"]
    # Qiita's private: true is limited sharing: readable by URL, not listed; not a draft
    expected = "shared by link only" if setting == "private: true" else "not public yet"
    assert issue.severity == "suggestion" and expected in issue.problem


async def test_the_report_says_which_platform_and_that_a_draft_is_not_public():
    conversation = await start_conversation(offline_deps(), ProofreadAgent(GraphConfig(checkers=("structure",))))
    final = await conversation.send(ZENN.replace("published: true", "published: false") + "\n" + "本文です。\n" * 3)
    report = final.files[0].content
    assert "Zenn article" in report
    assert "not public yet" in report
    guessed = await (await start_conversation(
        offline_deps(), ProofreadAgent(GraphConfig(checkers=("structure",)))
    )).send(HUGO_SEVEN_TAGS + "\n" + "Some text here.\n" * 3)
    assert "Hugo (guessed from front matter keys" in guessed.files[0].content


def test_a_worker_process_parsing_the_text_again_keeps_the_platform_the_writer_named():
    from agents.proofread.checkers.base import rules_job

    article = parse_article("platform:qiita\n---\ntitle: t\ntags: [a, b, c, d, e, f]\n---\n" + BODY)
    issues = rules_job(CHECKER_CLASSES["structure"], GraphConfig(), "rules", article.raw, article.declared_platform)
    assert ("rule:tags-count", 3) in {(i.source, i.line_start) for i in issues}
