"""Per-rule control: stable rule ids, project settings from the environment or a file, and inline
disable comments (ours, textlint's and markdownlint's)."""

from __future__ import annotations

import json

import pytest

from agents.proofread.agent import ProofreadAgent
from agents.proofread.config import GraphConfig
from agents.proofread.parser import parse_article
from agents.proofread.rules import RuleConfigError, apply_rule_control, grouped_lines, rule_id
from agents.proofread.schemas import Issue
from tests.proofread.conftest import offline_deps, start_conversation


def issue(source: str, line: int = 3, severity: str = "warning") -> Issue:
    return Issue(category="link", severity=severity, line_start=line, line_end=line, location_description="",
                 problem="p", suggestion="s", reason="r", source=source)


def test_every_issue_has_a_stable_rule_id():
    assert rule_id(issue("rule:duplicate-link")) == "duplicate-link"
    assert rule_id(issue("pymarkdownlnt:MD001")) == "md001"
    assert rule_id(issue("llm")) == "llm"


def test_settings_come_from_the_environment_and_a_file(tmp_path):
    config_file = tmp_path / "proofread.yaml"
    config_file.write_text("rules:\n  http-url: off\n  bare-url: warning\n  duplicate-link: true\n")
    config = GraphConfig.from_env({
        "PROOFREAD_CONFIG": str(config_file),
        "PROOFREAD_RULES": "bare-url=critical, rule:image-alt=suggestion",
    })
    assert config.rule_settings == {
        "http-url": "off", "bare-url": "critical", "duplicate-link": "on", "image-alt": "suggestion",
    }
    json_file = tmp_path / "proofread.json"
    json_file.write_text(json.dumps({"rules": {"MD001": "off"}}))
    assert GraphConfig.from_env({"PROOFREAD_CONFIG": str(json_file)}).rule_settings == {"md001": "off"}


@pytest.mark.parametrize(
    "environ",
    [
        {"PROOFREAD_RULES": "bare-url=loud"},
        {"PROOFREAD_RULES": "bare-url"},
        {"PROOFREAD_CONFIG": "/nonexistent/proofread.yaml"},
    ],
)
def test_bad_settings_are_refused_with_a_clear_message(environ):
    with pytest.raises(RuleConfigError) as caught:
        GraphConfig.from_env(environ)
    assert "PROOFREAD_" in str(caught.value)


def test_settings_turn_rules_off_change_severity_and_turn_default_off_rules_on():
    issues = [issue("rule:image-alt"), issue("rule:code-language", severity="suggestion"), issue("rule:duplicate-link")]
    assert [i.source for i in apply_rule_control(issues, {})] == ["rule:image-alt", "rule:code-language"]
    kept = apply_rule_control(issues, {"image-alt": "off", "code-language": "warning", "duplicate-link": "on"})
    assert [(i.source, i.severity) for i in kept] == [
        ("rule:code-language", "warning"), ("rule:duplicate-link", "warning"),
    ]


def test_calibrated_defaults_turn_noisy_rules_off_and_demote_others_until_a_project_says_on():
    issues = [issue("rule:bare-url", severity="suggestion"), issue("rule:hedge", severity="suggestion"),
              issue("rule:syntax-python"), issue("rule:http-image")]
    # http-image has no evidence on the development articles: its warning is shown as a suggestion.
    assert [(i.source, i.severity) for i in apply_rule_control(issues, {})] == [
        ("rule:syntax-python", "suggestion"), ("rule:http-image", "suggestion"),
    ]
    kept = apply_rule_control(issues, {"bare-url": "on", "syntax-python": "on", "http-image": "on"})
    assert [(i.source, i.severity) for i in kept] == [
        ("rule:bare-url", "suggestion"), ("rule:syntax-python", "warning"), ("rule:http-image", "warning"),
    ]


def test_only_rules_with_evidence_warn_by_default():
    warned = [issue("rule:image-alt"), issue("rule:mixed-style"), issue("pymarkdownlnt:MD056"), issue("llm")]
    kept = apply_rule_control(warned, {})
    assert [(i.source, i.severity) for i in kept] == [
        ("rule:image-alt", "suggestion"),  # 40 of 96 right on the development articles
        ("rule:mixed-style", "suggestion"), ("pymarkdownlnt:MD056", "suggestion"),  # too few judged
        ("llm", "warning"),  # a model's judgement is not a rule's
    ]
    assert apply_rule_control([issue("rule:mixed-style")], {"mixed-style": "warning"})[0].severity == "warning"


ARTICLE = """# Title

<!-- proofread-disable bare-url -->
line 4 https://example.com/a
<!-- proofread-enable bare-url -->
line 6 https://example.com/b

<!-- proofread-disable-next-line http-url -->
line 9 http://example.com/c

<!-- textlint-disable -->
line 12
<!-- textlint-enable -->

<!-- markdownlint-disable MD034 -->
line 16
<!-- markdownlint-enable MD034 -->

```html
<!-- proofread-disable -->
```
line 22
"""


def test_inline_comments_switch_rules_off_for_their_lines():
    article = parse_article(ARTICLE)

    def kept(source: str, line: int) -> bool:
        on = {"bare-url": "on", "http-url": "on"}  # both off by default
        return bool(apply_rule_control([issue(source, line)], on, article.suppressions))

    assert not kept("rule:bare-url", 4) and kept("rule:bare-url", 6) and kept("rule:http-url", 4)
    assert not kept("rule:http-url", 9) and kept("rule:http-url", 6)
    assert not kept("rule:anything", 12) and kept("rule:anything", 14)
    assert not kept("rule:bare-url", 16) and kept("rule:http-url", 16)  # MD034 is our bare-url
    assert kept("rule:anything", 22)  # a comment inside a code block is code, not a directive


def test_an_unclosed_disable_lasts_to_the_end():
    article = parse_article("text\n\n<!-- proofread-disable -->\n\nmore\n\nend\n")
    assert apply_rule_control([issue("rule:x", 7)], {}, article.suppressions) == []


async def test_the_review_applies_settings_and_inline_comments():
    text = (
        "# Links\n\nSee https://example.com/one for details.\n\n"
        "<!-- proofread-disable-next-line bare-url -->\nAnd https://example.com/two as well.\n\n"
        "Old [site](http://example.org/) here.\n"
    )
    agent = ProofreadAgent(
        GraphConfig(checkers=("markdown_format", "link"), rules=(("http-url", "off"), ("bare-url", "on")))
    )
    final = await (await start_conversation(offline_deps(), agent)).send(text)
    found = {(i["source"], i["line_start"]) for i in final.data["issues"]}
    assert ("rule:bare-url", 3) in found
    assert ("rule:bare-url", 6) not in found
    assert not [source for source, _line in found if source == "rule:http-url"]


def test_many_images_without_alt_text_are_one_finding_naming_every_line():
    shots = "".join(f"Step {n}.\n\n![](/images/step{n}.png)\n\n" for n in range(1, 7))
    text = f"# Tutorial\n\n{shots}"
    found = [i for i in apply_rule_control(_checked(text), {}) if i.source == "rule:image-alt"]
    assert len(found) == 1
    assert found[0].problem == "6 images have no alt text (lines 5, 9, 13, 17, 21, 25)."
    assert found[0].line_start == 5
    # Three or fewer stay one finding each; lines disabled inline are not counted.
    few = "# Tutorial\n\n" + "".join(f"![](/images/{n}.png)\n\n" for n in range(3))
    assert len([i for i in apply_rule_control(_checked(few), {}) if i.source == "rule:image-alt"]) == 3
    quiet = f"# Tutorial\n\n<!-- proofread-disable image-alt -->\n{shots}<!-- proofread-enable -->\n![](/x.png)\n"
    parsed = parse_article(quiet)
    kept = apply_rule_control(_checked(quiet), {}, parsed.suppressions)
    assert [(i.problem, i.line_start) for i in kept if i.source == "rule:image-alt"] == [("Image /x.png has no alt text.", 29)]


def test_a_table_of_contents_with_spaces_inside_its_link_texts_is_one_finding():
    from agents.proofread.checkers import CHECKER_CLASSES
    from agents.proofread.linter import LinterWorker
    from agents.proofread.messages import to_japanese
    from tests.proofread.test_false_alarms import context

    entries = "".join(f"- [Part {n} ](#part-{n})\n" for n in range(1, 6))
    checker = CHECKER_CLASSES["markdown_format"](context())
    checker.context.linter = LinterWorker()
    try:
        linted = checker._linter(parse_article(f"# Guide\n\n{entries}"))
    finally:
        checker.context.linter.close()
    found = [i for i in apply_rule_control(linted, {}) if i.source == "pymarkdownlnt:MD039"]
    assert [(i.problem, i.line_start) for i in found] == [("5 links have spaces inside their text (lines 3, 4, 5, 6, 7).", 3)]
    assert to_japanese("md039", found[0].problem) == "内側に空白のあるリンクテキストが5個あります（3, 4, 5, 6, 7行目）。"
    assert grouped_lines(found[0]) == [3, 4, 5, 6, 7]


def test_a_habit_of_bold_ending_in_a_full_stop_is_one_finding():
    from agents.proofread.messages import to_japanese
    from tests.proofread.test_false_alarms import run

    text = "# 記録\n\n" + "".join(f"{n}回目に試した。**結果は失敗だった。**次に進む。\n\n" for n in range(5))
    found = [i for i in apply_rule_control(run("markdown_format", text), {}) if i.source == "rule:strong-flanking"]
    assert [(i.problem, i.line_start) for i in found] == [
        ("5 bold spans next to punctuation will not render (lines 3, 5, 7, 9, 11).", 3)
    ]
    assert to_japanese("strong-flanking", found[0].problem) == "記号に接していて太字にならない箇所が5箇所あります（3, 5, 7, 9, 11行目）。"


def test_a_writer_who_never_tags_code_blocks_gets_one_finding_naming_every_block():
    from agents.proofread.messages import to_japanese
    from tests.proofread.test_false_alarms import run

    blocks = "".join(f"Step {n}:\n\n```\nimport os\nprint(os.getcwd(), {n})\n```\n\n" for n in range(4))
    found = [i for i in apply_rule_control(run("code_quality", f"# Setup\n\n{blocks}"), {}) if i.source == "rule:code-language"]
    assert [(i.problem, i.line_start) for i in found] == [("4 code blocks have no language tag (lines 5, 12, 19, 26).", 5)]
    assert to_japanese("code-language", found[0].problem) == "言語名のないコードブロックが4個あります（5, 12, 19, 26行目）。"
    assert grouped_lines(found[0]) == [5, 12, 19, 26]
    three = "".join(f"Step {n}:\n\n```\nimport os\nprint(os.getcwd(), {n})\n```\n\n" for n in range(3))
    assert len([i for i in apply_rule_control(run("code_quality", f"# Setup\n\n{three}"), {})
                if i.source == "rule:code-language"]) == 3


def test_in_order_to_is_a_rule_of_its_own_off_by_default_that_a_project_can_turn_on():
    text = "# Build\n\nIt goes without saying that we cache the results in order to save time.\n"
    from tests.proofread.test_false_alarms import run

    found = run("language_quality", text)
    default = {i.source for i in apply_rule_control(found, {})}
    assert "rule:in-order-to" not in default and "rule:redundant-phrase" in default
    kept = {i.source for i in apply_rule_control(found, {"in-order-to": "on"})}
    assert {"rule:in-order-to", "rule:redundant-phrase"} <= kept


def _checked(text: str) -> list[Issue]:
    from tests.proofread.test_false_alarms import run

    return run("markdown_format", text)


def test_email_is_off_by_default_and_a_project_can_turn_it_on():
    from tests.proofread.test_false_alarms import run

    found = run("privacy", "# Contact\n\nOur build logs show jane.doe.writer@gmail.com as the committer.\n")
    assert "rule:email" in {i.source for i in found}
    assert "rule:email" not in {i.source for i in apply_rule_control(found, {})}
    assert "rule:email" in {i.source for i in apply_rule_control(found, {"email": "on"})}


def test_many_images_over_http_are_one_finding_in_either_language():
    from agents.proofread.messages import to_japanese
    from tests.proofread.test_false_alarms import run

    figures = "".join(f"Plot {n}.\n\n![plot {n}](http://dl.dropbox.com/u/1/plot{n}.png)\n\n" for n in range(1, 6))
    found = [i for i in apply_rule_control(run("link", f"# ggplot\n\n{figures}"), {}) if i.source == "rule:http-image"]
    assert [(i.problem, i.line_start) for i in found] == [
        ("5 images load over insecure http:// (lines 5, 9, 13, 17, 21).", 5)
    ]
    assert to_japanese("http-image", found[0].problem) == "暗号化されない http:// で読み込む画像が5枚あります（5, 9, 13, 17, 21行目）。"


def test_an_article_that_slips_into_the_other_style_often_gets_one_finding_naming_each_sentence():
    from tests.proofread.test_false_alarms import JA_HEAD, run

    polite = "".join(f"この設定は{n}番目の項目を変更します。\n\n" for n in range(12))
    plain = "".join(f"この手順は{n}回目の作業である。\n\n" for n in range(4))
    found = [i for i in apply_rule_control(run("language_quality", JA_HEAD + polite + plain), {})
             if i.source == "rule:mixed-style"]
    assert [(i.problem, i.line_start) for i in found] == [
        ("記事の大半と文体（です/ます調、だ/である調）が違う文が4文あります（27, 29, 31, 33行目）。", 27)
    ]
    assert found[0].suggestion == "です/ます調に書き直してください。"
    assert grouped_lines(found[0]) == [27, 29, 31, 33]
    three = JA_HEAD + polite + plain.split("\n\n", 1)[1]  # three slips: each its own finding
    assert [i.line_start for i in apply_rule_control(run("language_quality", three), {})
            if i.source == "rule:mixed-style"] == [27, 29, 31]


def test_a_group_of_findings_made_in_english_stays_in_english():
    issues = [Issue(category="language_quality", severity="warning", line_start=n, line_end=n, location_description="",
                    problem="This sentence uses the だ/である style; the article mostly uses です/ます (9 sentences against 4).",
                    suggestion="Rewrite it in the です/ます style.", reason="r", source="rule:mixed-style")
              for n in (3, 5, 7, 9)]
    assert [i.problem for i in apply_rule_control(issues, {})] == [
        "4 sentences are not in the style most of the article is written in (lines 3, 5, 7, 9)."
    ]


def test_curl_piped_into_a_shell_is_off_by_default_and_a_project_can_turn_it_on():
    text = "# Install\n\n```bash\ncurl -sS https://starship.rs/install.sh | sh\nchmod 777 /tmp/x\n```\n"
    from tests.proofread.test_false_alarms import run

    found = run("code_quality", text)
    assert "rule:curl-pipe-shell" in {i.source for i in found}  # the checker still sees it…
    default = {i.source for i in apply_rule_control(found, {})}
    assert "rule:curl-pipe-shell" not in default and "rule:chmod-777" in default  # …the writer does not
    assert "rule:curl-pipe-shell" in {i.source for i in apply_rule_control(found, {"curl-pipe-shell": "on"})}
