"""The report speaks the writer's language: Japanese articles get a Japanese report and Japanese
messages from every rule, English articles stay in English."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agents.proofread.agent import ProofreadAgent
from agents.proofread.config import GraphConfig
from agents.proofread.messages import FRAGMENTS, MESSAGES, NOTES, SHARED, note_to_japanese, to_japanese
from agents.proofread.report import ENGLISH_ONLY_CATEGORIES
from agents.proofread.text import has_japanese
from bot.agent import IncomingFile
from tests.proofread.conftest import Conversation, fixture_text, start_conversation

CHECKERS = Path(__file__).resolve().parents[2] / "agents" / "proofread" / "checkers"
# The rules these tests read the messages of, on whatever their default setting is.
RULES_ON = (("http-url", "warning"), ("email", "critical"), ("draft", "suggestion"), ("code-language", "on"),
            ("md018", "warning"), ("redundant-phrase", "on"))


@pytest.fixture
async def conversation() -> Conversation:
    return await start_conversation(agent=ProofreadAgent(GraphConfig(rules=RULES_ON)))

JAPANESE_ARTICLE = """---
title: "Dockerのキャッシュを活かす"
emoji: "🐳"
type: "tech"
topics: ["docker"]
published: false
---

## はじめに

ビルドを速くするための設定をまとめます。詳しくは http://docs.docker.com/build/ を見てください。

##キャッシュの仕組み

```
docker build .
```

レイヤーは上から順に再利用されます。設定ファイルを変更することができます。
ログには taro.yamada@corp-mail.co.jp が残っていました。
"""

ENGLISH_ARTICLE = """# Caching Docker builds

Layers are reused from the top. See http://docs.docker.com/build/ for details.

##How it works

```
docker build .
```

In order to keep builds fast, order the instructions well.
"""


async def review(conversation: Conversation, text: str, name: str = "post.md"):
    return await conversation.send("/proofread", files=(IncomingFile(filename=name, content=text.encode()),))


async def test_a_japanese_article_gets_a_japanese_report(conversation: Conversation):
    final = await review(conversation, JAPANESE_ARTICLE)
    report = final.files[0].content
    assert report.startswith("# 校正レポート: Dockerのキャッシュを活かす\n")
    assert re.search(r"\*\*スコア: \d+/100 — 非承認 ❌\*\*", report)
    assert "Zennの記事、日本語、" in report
    assert "**下書き:** フロントマターが `published: false` なので、この記事はまだ公開されていません。" in report
    assert "| 重要度 | 件数 |" in report and "| 🔴 重大 |" in report and "| 🔵 提案 |" in report
    assert "重大な指摘がなく、スコアが50以上なら承認です。" in report
    assert re.search(r"^## 🔴 重大（\d+件）$", report, re.M) and re.search(r"^## 🟡 警告（\d+件）$", report, re.M)
    assert re.search(r"^### \d+\. (Markdown|リンク|コード|プライバシー|構成|文章) — \d+(〜\d+)?行目$", report, re.M)
    assert "- **問題:** " in report and "- **理由:** " in report and "## 補足" in report
    for english in ("Proofreading report", "Score:", "Severity", "Problem:", "Suggestion:", "Why:", "Notes"):
        assert english not in report
    assert final.text.startswith("校正結果: ")
    assert "全文のレポート: proofread-report.md" in final.text
    assert final.cards[0].title.startswith("校正結果: ") and "重大" in final.cards[0].fields


async def test_english_only_rules_speak_japanese_in_a_japanese_article(conversation: Conversation):
    final = await review(conversation, JAPANESE_ARTICLE)
    by_source = {issue["source"]: issue for issue in final.data["issues"]}
    assert by_source["rule:http-url"]["problem"] == "暗号化されない http:// の URL です: http://docs.docker.com/build/"
    assert by_source["pymarkdownlnt:MD018"]["problem"] == "見出しの # の後ろに空白がないため、ただの文字として表示されます。"
    assert by_source["rule:code-language"]["suggestion"].startswith("``` の後ろに言語名を書いてください")
    assert by_source["rule:email"]["problem"] == "記事にメールアドレス（ta…@corp-mail.co.jp）が含まれています。"
    assert by_source["rule:draft"]["problem"] == "この記事は下書きです（published: false）。まだ公開されていません。"
    # The language rules wrote Japanese already and are left as they were.
    assert by_source["rule:redundant-phrase"]["problem"] == "冗長な表現（〜することができる）"
    for issue in final.data["issues"]:
        if issue["category"] in ENGLISH_ONLY_CATEGORIES or issue["category"] == "language_quality":
            for key in ("problem", "suggestion", "reason", "location_description"):
                assert has_japanese(issue[key]), (issue["source"], key, issue[key])
    report = final.files[0].content
    assert "暗号化されない http:// の URL です" in report and "場所: 11行目（「はじめに」の節）" in report


async def test_an_english_article_keeps_the_english_report(conversation: Conversation):
    final = await review(conversation, ENGLISH_ARTICLE)
    report = final.files[0].content
    assert report.startswith("# Caching Docker builds\n") is False
    assert report.startswith("# Proofreading report: Caching Docker builds\n")
    assert "| Severity | Count |" in report and "English" in report
    assert final.text.startswith("Proofreading: ")
    by_source = {issue["source"]: issue for issue in final.data["issues"]}
    assert by_source["rule:http-url"]["problem"] == "Insecure http:// URL: http://docs.docker.com/build/."
    assert by_source["pymarkdownlnt:MD018"]["problem"] == "No space after the # of a heading: it renders as plain text."
    assert not any(has_japanese(issue["problem"]) for issue in final.data["issues"])


@pytest.mark.parametrize("name", ["links_bad.md", "markdown_broken.md", "code_errors.md", "privacy_leaks.md",
                                  "structure_zenn_bad.md", "frontmatter_invalid.md", "holdout/terraform_zenn.md"])
async def test_every_finding_on_the_japanese_fixtures_is_in_japanese(conversation: Conversation, name: str):
    final = await review(conversation, fixture_text(name))
    assert final.text.startswith("校正結果: ")
    untranslated = [
        (issue["source"], key, issue[key])
        for issue in final.data["issues"] if issue["category"] != "technical_accuracy"
        for key in ("problem", "suggestion", "reason", "location_description") if not has_japanese(issue[key])
    ]
    assert untranslated == []


async def test_a_japanese_recheck_reports_the_comparison_in_japanese(conversation: Conversation):
    await review(conversation, JAPANESE_ARTICLE)
    final = await review(conversation, JAPANESE_ARTICLE.replace("##キャッシュ", "## キャッシュ"))
    report = final.files[0].content
    assert "## 前の版からの変化" in report and "- 直った指摘: 1" in report and "、第2版。" in report
    assert "前の版から: 直った指摘 1件" in final.text


def test_the_message_tables_keep_every_value_of_the_english_message():
    tables = [*MESSAGES.values(), SHARED, FRAGMENTS, NOTES]
    for table in tables:
        for english, japanese in table.items():
            assert set(re.findall(r"\{(\w+)\}", english)) == set(re.findall(r"\{(\w+)\}", japanese)), english
            assert has_japanese(japanese) or english in ("{language} syntax error: {message}",), english


def test_every_rule_of_the_english_only_checkers_has_japanese_messages():
    for name in ("structure", "link", "markdown_format", "code_quality"):
        source = (CHECKERS / f"{name}.py").read_text(encoding="utf-8")
        for rule in set(re.findall(r"\"rule:([a-z0-9-]+)\"", source)):
            assert rule in MESSAGES, (name, rule)
        for rule in set(re.findall(r"^\s+\"(md\d{3})\": \(", source, re.M)):
            assert rule in MESSAGES, (name, rule)
    privacy = (CHECKERS / "privacy.py").read_text(encoding="utf-8")
    for rule in set(re.findall(r"SecretPattern\(\"([a-z0-9-]+)\"", privacy)):
        assert rule in MESSAGES, ("privacy", rule)


def test_values_inside_a_message_are_translated_and_unknown_messages_stay_as_written():
    assert to_japanese("malformed-url", "Malformed URL htps://a.jp/: unknown scheme “htps:” (a typo of https?).") == (
        "URL htps://a.jp/ の形式が正しくありません: 不明なスキーム「htps:」です（https の打ち間違い？）。"
    )
    assert to_japanese("aws-access-key", "The article contains an AWS access key ID (AKIA…0E).") == (
        "記事にAWS のアクセスキー ID（AKIA…0E）が含まれています。"
    )
    assert to_japanese("md001", "Heading level jumps by more than one. [Expected: h2; Actual: h4]") == (
        "見出しのレベルが二段以上飛んでいます。 [Expected: h2; Actual: h4]"
    )
    assert to_japanese("bare-url", "A message no table knows.") == "A message no table knows."
    assert to_japanese("no-such-rule", "Bare URL https://a.jp.") == "Bare URL https://a.jp."
    assert note_to_japanese("line 7, section “Setup”") == "7行目（「Setup」の節）"


async def test_the_progress_of_a_review_is_said_in_the_articles_language(conversation: Conversation):
    await review(conversation, JAPANESE_ARTICLE)
    japanese = conversation.statuses
    assert "記事を読んでいます…" in japanese and "採点しています…" in japanese and "リンクを確認しています…" in japanese
    assert not any(status.startswith(("Reading", "Checking", "Scoring", "Looking")) for status in japanese)
    await review(conversation, fixture_text("english_clean.md"))
    english = conversation.statuses
    assert "Reading the article…" in english and "Scoring…" in english and "Checking links…" in english
