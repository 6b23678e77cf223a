"""The /proofread agent through its compiled graph, turn by turn, with the offline model."""

from __future__ import annotations

import re

import pytest
from langchain_core.messages import BaseMessage

from agents.proofread.agent import ProofreadAgent
from agents.proofread.checkers import CHECKER_CLASSES, CheckContext
from agents.proofread.checkers.privacy import PrivacyChecker
from agents.proofread.config import GraphConfig
from agents.proofread.llm import ProofreadLLM
from agents.proofread.scoring import calculate_score, determine_approval
from bot.agent import BadInput, IncomingFile, TurnInput
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel
from tests.proofread.conftest import Conversation, fixture_text, offline_deps, start_conversation


async def test_review_returns_score_counts_issues_and_the_full_report(conversation: Conversation):
    final = await conversation.send(fixture_text("privacy_leaks.md"))
    data = final.data
    counts = data["counts"]
    assert counts["critical"] == 8  # the secrets; its email, private IP and hostname are suggestions
    assert data["score"] == calculate_score(counts["critical"], counts["warning"], counts["suggestion"]) == 0
    assert data["approved"] is False
    assert [i["number"] for i in data["issues"]] == list(range(1, len(data["issues"]) + 1))
    assert {i["severity"] for i in data["issues"]} <= {"critical", "warning", "suggestion"}
    assert "0/100" in final.text and "非承認" in final.text  # a Japanese article: a Japanese report
    report = final.files[0]
    assert report.filename == "proofread-report.md"
    assert "## 🔴 重大（8件）" in report.content
    assert "21行目" in report.content
    assert final.cards[0].fields["重大"] == "8"


async def test_report_quotes_offending_lines_but_never_the_secret(conversation: Conversation):
    final = await conversation.send(fixture_text("privacy_leaks.md"))
    report = final.files[0].content
    assert "AKIAUJZDE8GXD6NCF10E" not in report and "ghp_NhFdnXsiVpzz63" not in report
    assert "taro.yamada" not in report
    assert re.search(r"21 \|\s+aws_access_key_id=\"AKIA…0E\"", report)
    assert all("AKIAUJZDE8GXD6NCF10E" not in str(issue) for issue in final.data["issues"])


async def test_line_numbers_in_the_report_are_exact_with_front_matter(conversation: Conversation):
    text = fixture_text("markdown_broken.md")
    lines = text.split("\n")
    final = await conversation.send(text)
    by_source = {i["source"]: i["line_start"] for i in final.data["issues"]}
    assert lines[by_source["pymarkdownlnt:MD018"] - 1] == "##ベースイメージ"
    assert lines[by_source["rule:unclosed-fence"] - 1] == "```bash"
    assert lines[by_source["rule:image-alt"] - 1].startswith("![](")
    for issue in final.data["issues"]:
        assert f"{issue['line_start']} | " in final.files[0].content


async def test_clean_article_is_approved_with_a_perfect_score(conversation: Conversation):
    final = await conversation.send(fixture_text("qiita_clean.md"))
    assert final.data["score"] == 100 and final.data["approved"] is True
    assert final.data["issues"] == []


async def test_each_checker_reports_progress_through_the_stream(conversation: Conversation):
    await conversation.send(fixture_text("english_clean.md"))
    assert {checker.status_text for checker in CHECKER_CLASSES.values()} <= set(conversation.statuses)
    assert conversation.statuses[0] == "Reading the article…"
    assert conversation.statuses[-1] == "Scoring…"
    await conversation.send(fixture_text("zenn_clean.md"))  # a Japanese article: in Japanese
    assert {checker.status_text_ja for checker in CHECKER_CLASSES.values()} <= set(conversation.statuses)
    assert conversation.statuses[0] == "記事を読んでいます…"
    assert conversation.statuses[-1] == "採点しています…"


async def test_offline_model_skips_technical_accuracy_and_the_report_says_so(conversation: Conversation):
    final = await conversation.send(fixture_text("english_clean.md"))
    assert "Technical accuracy was not checked" in final.files[0].content
    assert "Technical accuracy was not checked" in final.text
    assert not [i for i in final.data["issues"] if i["category"] == "technical_accuracy"]


class ExplodingChecker(PrivacyChecker):
    def rules(self, article):
        raise RuntimeError("checker blew up")


async def test_a_checker_that_raises_does_not_stop_the_others():
    context = CheckContext(config=GraphConfig(), llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)))
    checkers = [
        ExplodingChecker(context) if name == "privacy" else cls(context) for name, cls in CHECKER_CLASSES.items()
    ]
    conversation = await start_conversation(offline_deps(proofread_checkers=checkers))
    final = await conversation.send(fixture_text("structure_zenn_bad.md"))
    assert final.data["errors"] == [
        {"step": "check_privacy", "error_type": "RuntimeError", "message": "checker blew up"}
    ]
    categories = {i["category"] for i in final.data["issues"]}
    assert {"markdown_format", "structure"} <= categories
    assert "## 失敗したチェック" in final.files[0].content
    assert "check_privacy" in final.files[0].content


async def test_explain_issue_answers_from_the_stored_report(conversation: Conversation):
    first = await conversation.send(fixture_text("code_errors.md"))
    third = first.data["issues"][2]
    final = await conversation.send("explain issue 3")
    assert final.data["action"] == "explain"
    assert final.files == []
    assert third["problem"] in final.text
    assert f"{third['line_start']}: " in final.text
    assert (await conversation.send("3番目の指摘を説明して")).text == final.text
    missing = await conversation.send("explain issue 99")
    assert "no issue 99" in missing.text


async def test_a_finding_is_named_by_its_place_in_the_report_too(conversation: Conversation):
    """"explain the first issue" got the help text; only "explain issue 1" was read."""
    first = await conversation.send(fixture_text("code_errors.md"))
    issues = first.data["issues"]
    numbered = (await conversation.send("explain issue 1")).text
    assert (await conversation.send("explain the first issue")).text == numbered
    assert (await conversation.send("最初の指摘を説明して")).text == numbered
    assert (await conversation.send("the first issueを説明して")).text == numbered  # was the help text
    last = await conversation.send("and the last finding?")
    assert last.data["action"] == "explain" and issues[-1]["problem"] in last.text


async def test_the_summary_offers_to_explain_a_finding_it_has(conversation: Conversation):
    flawed = await conversation.send(fixture_text("code_errors.md"))
    shown = flawed.data["issues"][0]["number"]
    assert f"「{shown}番目の指摘を説明して」" in flawed.text  # a Japanese article: the offer in Japanese
    clean = await start_conversation()
    approved = await clean.send(fixture_text("qiita_clean.md"))
    assert approved.data["issues"] == []
    assert "explain issue" not in approved.text and "指摘を説明" not in approved.text  # nothing to explain
    assert "proofread-report.md" in approved.text


async def test_recheck_with_a_new_version_compares_with_the_previous_one(conversation: Conversation):
    original = fixture_text("code_errors.md")
    first = await conversation.send(original)
    fixed = original.replace("def health()\n", "def health():\n").replace('  "version": "1.0.0",\n', '  "version": "1.0.0"\n')
    fixed = fixed.replace("## アプリケーション\n", "## アプリケーション\n\n本文を一行追加しました。\n")
    second = await conversation.send("re-check after my fix:\n" + fixed)
    assert second.data["action"] == "recheck"
    assert second.data["version"] == 2
    assert second.data["comparison"]["fixed"] == 2
    assert second.data["comparison"]["new"] == 0
    assert second.data["comparison"]["remaining"] == len(first.data["issues"]) - 2
    assert second.data["score"] == first.data["score"] + 1  # two suggestions fixed (JSON, Python): ⌊s ÷ 2⌋ drops by one
    assert "前の版から: 直った指摘 2件、新しい指摘 0件" in second.text
    state = await conversation.state()
    assert state["article"] == fixed.replace("\r\n", "\n")


async def test_recheck_by_attachment(conversation: Conversation):
    await conversation.send(fixture_text("links_bad.md"))
    clean = IncomingFile("article.md", fixture_text("qiita_clean.md").encode())
    final = await conversation.send("修正しました", files=(clean,))
    assert final.data["action"] == "recheck"
    assert final.data["score"] == 100
    assert final.data["comparison"]["new"] == 0


async def test_follow_ups_without_a_new_version(conversation: Conversation):
    await conversation.send(fixture_text("links_bad.md"))
    assert "paste the new version" in (await conversation.send("re-check please")).text
    listing = await conversation.send("list the issues")
    assert listing.text.startswith("指摘10件")  # the report's language (duplicate-link and http-url are off by default)
    assert "How can" not in (await conversation.send("how do I fix the links?")).text


async def test_follow_up_before_any_report_asks_for_the_article(conversation: Conversation):
    final = await conversation.send("explain issue 2")
    assert "no proofreading report" in final.text
    assert final.data["score"] is None


async def test_short_text_on_the_first_turn_is_proofread():
    conversation = await start_conversation()
    final = await conversation.send("This is is a test.")
    assert final.data["action"] == "review"
    assert [i["source"] for i in final.data["issues"]] == ["rule:doubled-word"]


async def test_messages_hold_the_conversation_not_the_article(conversation: Conversation):
    article = fixture_text("language_ja.md")
    await conversation.send(article)
    for _ in range(12):
        await conversation.send("explain issue 1")
    messages: list[BaseMessage] = (await conversation.state())["messages"]
    assert len(messages) <= 20
    assert all(len(str(m.content)) < 2000 for m in messages)
    assert not any("型ヒントの基本を紹介します" in str(m.content) for m in messages)


async def test_prompt_injection_in_the_article_changes_nothing(conversation: Conversation):
    final = await conversation.send(fixture_text("injection.md"))
    counts = final.data["counts"]
    assert counts["critical"] == 1
    assert final.data["approved"] is False
    assert final.data["score"] == calculate_score(counts["critical"], counts["warning"], counts["suggestion"])
    assert final.data["approved"] == determine_approval(counts["critical"], final.data["score"])


# --- turn input --------------------------------------------------------------------------------


def test_empty_input_is_refused():
    with pytest.raises(BadInput, match="attach"):
        ProofreadAgent().turn_input(TurnInput(text="   "))


def test_oversize_text_and_attachment_are_refused():
    agent = ProofreadAgent()
    with pytest.raises(BadInput, match="200 KB"):
        agent.turn_input(TurnInput(text="あ" * 70_000))
    big = IncomingFile("big.md", b"a" * 200_001)
    with pytest.raises(BadInput, match="up to 200 KB"):
        agent.turn_input(TurnInput(text="", attachments=(big,)))


def test_binary_and_non_utf8_attachments_are_refused():
    agent = ProofreadAgent()
    with pytest.raises(BadInput, match="binary"):
        agent.turn_input(TurnInput(text="", attachments=(IncomingFile("a.png", b"\x89PNG\x00\x00"),)))
    with pytest.raises(BadInput, match="UTF-8"):
        agent.turn_input(TurnInput(text="", attachments=(IncomingFile("a.md", "記事".encode("shift_jis")),)))
    with pytest.raises(BadInput, match="empty"):
        agent.turn_input(TurnInput(text="", attachments=(IncomingFile("a.md", b"  \n"),)))


def test_a_markdown_attachment_is_preferred_and_its_name_kept():
    files = (IncomingFile("notes.png", b"\x89PNG\x00"), IncomingFile("post.md", b"# Title\n"))
    update = ProofreadAgent().turn_input(TurnInput(text="please", attachments=files))
    assert update["incoming"] == {"text": "please", "attachment": "# Title\n", "filename": "post.md"}


def test_graph_config_is_frozen_and_validated():
    config = GraphConfig()
    with pytest.raises(AttributeError):
        config.parallel = False  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown checkers"):
        GraphConfig(checkers=("markdown_format", "spelling"))
    with pytest.raises(ValueError, match="link_timeout"):
        GraphConfig(link_timeout=0)
    assert GraphConfig.from_env({"PROOFREAD_CHECK_LINKS_ONLINE": "1", "PROOFREAD_LINK_TIMEOUT": "2.5"}) == GraphConfig(
        check_links_online=True, link_timeout=2.5
    )


def test_a_failed_check_withholds_approval_and_the_verdict_says_so() -> None:
    from agents.proofread.scoring import verdict

    assert determine_approval(0, 95) is True
    assert determine_approval(0, 95, failed_checks=1) is False
    assert verdict({"approved": False, "errors": [{}, {}]}) == "not approved: 2 checks failed"
    assert verdict({"approved": False, "errors": []}) == "not approved"
    assert verdict({"approved": True, "errors": []}) == "approved"
