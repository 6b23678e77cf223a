"""Causes of false alarms found on a second set of published articles, each fixed where it arises:
what a rule must still find, and the look-alike it must leave alone."""

from __future__ import annotations

from agents.proofread.checkers import CHECKER_CLASSES, CheckContext
from agents.proofread.checkers.spelling import is_known
from agents.proofread.config import GraphConfig
from agents.proofread.llm import ProofreadLLM
from agents.proofread.parser import parse_article
from agents.proofread.rules import DEFAULT_SETTINGS, apply_rule_control, markdownlint_equivalents
from agents.proofread.schemas import Issue
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel

ZENN_HEAD = '---\ntitle: "テスト"\nemoji: "🧪"\ntype: "tech"\ntopics: ["python"]\npublished: true\n---\n\n'


def checked(category: str, text: str) -> list[Issue]:
    context = CheckContext(config=GraphConfig(), llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)))
    return CHECKER_CLASSES[category](context).rules(parse_article(text))


def language(text: str) -> list[Issue]:
    return checked("language_quality", text)


def found(text: str, rule: str) -> list[int | None]:
    return [issue.line_start for issue in language(text) if issue.source == rule]


def problems(sentence: str, rule: str) -> list[str]:
    """The problems `rule` names in one sentence of a Zenn article."""
    return [issue.problem for issue in language(ZENN_HEAD + sentence + "\n") if issue.source == rule]


def lint_issue(source: str, line: int) -> Issue:
    return Issue(category="markdown_format", severity="suggestion", line_start=line, line_end=line,
                 location_description="", problem="p", suggestion="s", reason="r", source=source)


# --- markdownlint's rule names in inline comments --------------------------------------------------


def test_a_markdownlint_comment_naming_a_rule_by_its_name_turns_that_rule_off():
    text = (
        "# Figures\n\n![a](a.png)\n\n<!-- markdownlint-disable no-emphasis-as-heading -->\n"
        "*Figure 1: the first figure*\n<!-- markdownlint-enable -->\n\n*Figure 2: the second figure*\n"
    )
    article = parse_article(text)
    on = {"md036": "on"}
    kept = apply_rule_control([lint_issue("pymarkdownlnt:MD036", 6), lint_issue("pymarkdownlnt:MD036", 9)],
                              on, article.suppressions)
    assert [issue.line_start for issue in kept] == [9]


def test_markdownlint_names_and_numbers_stand_for_themselves_and_for_our_equivalents():
    assert markdownlint_equivalents("no-emphasis-as-heading") == ("md036",)
    assert markdownlint_equivalents("MD028") == ("md028",)
    assert markdownlint_equivalents("no-blanks-blockquote") == ("md028",)
    assert markdownlint_equivalents("fenced-code-language") == ("md040", "code-language")
    assert markdownlint_equivalents("no-such-rule") == ()


def test_quotes_kept_apart_and_emphasis_lines_are_not_reported_by_default():
    issues = [lint_issue("pymarkdownlnt:MD028", 4), lint_issue("pymarkdownlnt:MD036", 8)]
    assert apply_rule_control(issues, {}) == []
    assert DEFAULT_SETTINGS["md028"] == DEFAULT_SETTINGS["md036"] == "off"
    assert len(apply_rule_control(issues, {"md028": "on", "md036": "on"})) == 2


# --- spelling ----------------------------------------------------------------------------------------


def test_general_technical_and_informal_words_are_known():
    for word in ("libc", "crypto", "tech", "mmap", "kubectl", "sheeple", "hacky", "truthy", "laggy"):
        assert is_known(word), word
    assert not is_known("recieved")


def test_misspellings_quoted_with_sic_are_left_alone_and_others_still_found():
    text = (
        "# Feedback\n\nOne reader wrote:\n\n"
        '> "The packges here are grate and the docs are\n> clear. [sic]"\n\n'
        "We recieved many more notes like it.\n"
    )
    assert [(i.line_start, i.problem.split("“")[1].split("”")[0]) for i in language(text)
            if i.source == "rule:spelling"] == [(8, "recieved")]
    assert found(text.replace(" [sic]", ""), "rule:spelling") == [5, 8]


# --- sentence length ---------------------------------------------------------------------------------


def test_a_code_span_wrapped_onto_the_next_line_is_not_prose():
    path = "/".join(["segment"] * 30)
    intro = "この記事では請求の情報を取得する方法を説明します。使うのは公開されている機能だけです。\n\n"
    text = ZENN_HEAD + intro + f"なお、`GET\n/{path}` という API もあります。\n"
    assert parse_article(text).language == "ja"
    assert found(text, "rule:sentence-length") == []
    long_sentence = "この文はとても長く" + "、説明を続けていき" * 14 + "ます。"
    assert found(ZENN_HEAD + intro + long_sentence + "\n", "rule:sentence-length") == [11]


def test_the_alt_texts_of_a_row_of_img_tags_are_not_a_sentence():
    alts = [" ".join(["which tools do you use on a normal working day"] * 2) for _ in range(4)]
    row = " ".join(f'<img src="chart{n}.svg" alt="{alt}"\nclass="chart" />' for n, alt in enumerate(alts))
    text = f"# Results\n\nThe charts below show the answers.\n\n{row}\n"
    assert found(text, "rule:sentence-length") == []


def test_a_long_english_sentence_with_a_dash_aside_is_reported_from_45_words():
    def sentence(words: int, middle: str) -> str:
        half = ["word"] * (words // 2 - 1)
        return " ".join(["The", *half, middle, *half, "end."])

    aside = sentence(46, "— and this aside —")
    assert len(aside.replace("—", "").split()) >= 45
    plain = sentence(46, "and this part")
    assert found(f"# Notes\n\n{aside}\n", "rule:sentence-length") == [3]
    assert found(f"# Notes\n\n{plain}\n", "rule:sentence-length") == []
    assert found(f"# Notes\n\n{sentence(52, 'and this part')}\n", "rule:sentence-length") == [3]
    ranged = sentence(44, "from 2 – 500 items")  # 48 words; an en dash between numbers is a range
    assert found(f"# Notes\n\n{ranged}\n", "rule:sentence-length") == []


# --- です/ます and だ/である ------------------------------------------------------------------------


def test_a_note_in_a_message_box_may_differ_in_style_from_the_body():
    body = "".join(f"これは{n}番目の説明です。\n\n" for n in range(6))
    boxed = ZENN_HEAD + body + ":::message\nこの記事は別の場所から移したものである。\n:::\n"
    assert found(boxed, "rule:mixed-style") == []
    inline = ZENN_HEAD + body + "この記事は別の場所から移したものである。\n"
    assert found(inline, "rule:mixed-style") == [21]


def test_warning_evidence_is_recounted_from_the_judged_findings_of_the_development_articles():
    import json
    from collections import Counter
    from pathlib import Path

    from agents.proofread.rules import DEVELOPMENT_SPLITS, MIN_WARNING_EVIDENCE, WARNING_EVIDENCE

    root = Path(__file__).resolve().parents[2] / "eval" / "proofread"
    articles = json.loads((root / "corpus.json").read_text(encoding="utf-8"))["articles"]
    split = {a["id"]: a["split"] for a in articles}
    right: Counter[str] = Counter()
    judged: Counter[str] = Counter()
    for label in json.loads((root / "labels.json").read_text(encoding="utf-8"))["labels"]:
        if split.get(label["article"]) in DEVELOPMENT_SPLITS and label.get("severity") == "warning":
            rule = label["rule"].removeprefix("rule:")
            judged[rule] += 1
            right[rule] += label["verdict"] == "true"
    earned = {
        rule: (right[rule], judged[rule])
        for rule in judged
        if judged[rule] >= MIN_WARNING_EVIDENCE and right[rule] >= 0.9 * judged[rule]
    }
    assert earned == WARNING_EVIDENCE


def test_rules_never_right_on_the_development_articles_are_off_until_a_project_turns_them_on():
    import json
    from collections import Counter
    from pathlib import Path

    from agents.proofread.rules import DEVELOPMENT_SPLITS

    root = Path(__file__).resolve().parents[2] / "eval" / "proofread"
    articles = json.loads((root / "corpus.json").read_text(encoding="utf-8"))["articles"]
    split = {a["id"]: a["split"] for a in articles}
    verdicts: dict[str, Counter[str]] = {}
    for label in json.loads((root / "labels.json").read_text(encoding="utf-8"))["labels"]:
        if split.get(label["article"]) in DEVELOPMENT_SPLITS:
            verdicts.setdefault(label["rule"].removeprefix("rule:"), Counter())[label["verdict"]] += 1
    for rule in ("private-ip", "internal-hostname", "syntax-shell"):
        assert verdicts[rule]["true"] == 0 and verdicts[rule]["false"] >= 5, rule
        assert DEFAULT_SETTINGS[rule] == "off"
    issues = [lint_issue(f"rule:{rule}", 3) for rule in ("private-ip", "internal-hostname", "syntax-shell", "weak-phrase")]
    assert apply_rule_control(issues, {}) == []
    assert len(apply_rule_control(issues, {"private-ip": "on", "internal-hostname": "on", "syntax-shell": "on",
                                           "weak-phrase": "on"})) == 4


# --- rounds 124–132 ---------------------------------------------------------------------------------


def test_a_quoted_sentence_on_a_line_of_its_own_ends_there_and_the_next_line_is_judged_alone():
    polite = "".join(f"{n}つ目の設定を確認しました。\n" for n in "一二三四五")
    quote = "「Vitest3 が Vite6 を一番最初にサポートするバージョンである。」\n"
    text = ZENN_HEAD + polite + "リリースノートには次のように書かれていました。\n" + quote
    slip = text + "つまり、Vitest 2 までは Vite 6 をサポートしてない。\n"
    # The writer's own plain sentence after the quotation is the slip, reported on its own line.
    assert found(slip, "rule:mixed-style") == [slip.count("\n")]
    # The quotation (a translation of the release note) keeps its own style.
    assert found(text + "なので型エラーが発生していたのです。\n", "rule:mixed-style") == []


def privacy(text: str) -> list[str | None]:
    return [issue.source for issue in checked("privacy", text)]


def test_a_projects_published_test_key_the_article_links_is_not_a_leak():
    key = (
        '```sh\nexport PERMS_KEY="-----BEGIN RSA PRIVATE KEY-----\\nMIIEpgIBAAKCAQEA3RY0qLmdthY6Q0RZ4oyNQSL035Bm'
        'YLNdleX1qVpG1zfQeLWf\\n-----END RSA PRIVATE KEY-----"\n```\n'
    )

    def intro(path: str) -> str:
        return (ZENN_HEAD + "環境変数 `PERMS_KEY` を与えなければ機能しませんでした。\n"
                f"[`{path}` の中にある `perms_key`](https://github.com/mozilla/reticulum/blob/0f0af37e/{path}#L67-L68)"
                " をそのまま使うことによって対処しました。\n\n")

    assert "rule:private-key" not in privacy(intro("config/test.exs") + key)
    assert "rule:private-key" not in privacy(intro("spec/fixtures/server.pem") + key)
    # A key linked to a file outside the tests, or given with no source, is still reported.
    assert "rule:private-key" in privacy(intro("config/prod.exs") + key)
    assert "rule:private-key" in privacy(ZENN_HEAD + "この鍵を使いました。\n\n" + key)


def test_a_labelled_translation_of_a_quoted_passage_keeps_the_sources_style():
    polite = "".join(f"{n}つ目の設定を確認しました。\n" for n in "一二三四五")
    quote = "> Push the state to the leaves.\n\n"
    translated = ZENN_HEAD + polite + quote + "翻訳：状態をリーフにプッシュする。例えば、時計だけを更新する。\n"
    assert found(translated, "rule:mixed-style") == []
    # The same words as the writer's own sentence, with no label, are a slip.
    own = ZENN_HEAD + polite + quote + "状態をリーフにプッシュする。\n"
    assert found(own, "rule:mixed-style") == [own.count("\n")]


# --- rounds 133–139 ---------------------------------------------------------------------------------


def test_an_inline_footnote_is_no_part_of_its_sentences_style_or_length():
    polite = "".join(f"{n}つ目の設定を確認しました。\n" for n in "一二三四五")
    aside = "レビューは表示されるだけにします^[マージを止めるとストレスがある]．\n"
    text = ZENN_HEAD + polite + aside
    # The plain words are the footnote's, printed at the article's end (round 134).
    assert found(text, "rule:mixed-style") == []
    slip = ZENN_HEAD + polite + "レビューは表示されるだけにする．\n"
    assert found(slip, "rule:mixed-style") == [slip.count("\n")]
    # Its length is the note's own: the sentence around it is read without it, and the note's
    # sentences are read where it is printed.
    body = "、".join(["設定ファイルの書き方は版ごとに違う"] * 4)
    note = "、".join(["古い版では別の名前だった"] * 6)
    assert found(ZENN_HEAD + polite + f"{body}ので確認しました^[{note}]。\n", "rule:sentence-length") == []
    joined = ZENN_HEAD + polite + f"{body}ので確認しました、{note}。\n"
    assert found(joined, "rule:sentence-length") == [joined.count("\n")]
    long_note = ZENN_HEAD + polite + f"確認しました^[{note}、{body}]。\n"
    assert found(long_note, "rule:sentence-length") == [long_note.count("\n")]


# --- rounds 140–145 ---------------------------------------------------------------------------------


def test_a_bare_question_states_nothing_in_either_style():
    polite = "".join(f"{n}つ目の設定を確認しました。\n" for n in "一二三四五")
    asked = ZENN_HEAD + polite + "ゼロから実装するか、既存のパーサジェネレータを使うか。\n"
    # 「…使うか。」 asks (a choice, a checklist item, a beat of inner voice): no slip (round 142).
    assert found(asked, "rule:mixed-style") == []
    stated = ZENN_HEAD + polite + "既存のパーサジェネレータを使う。\n"
    assert found(stated, "rule:mixed-style") == [stated.count("\n")]
    # Only a question on the bare verb: one on the plain past (「…済んだか。」) still counts as plain.
    past = ZENN_HEAD + polite + "移行の設定はもう済んだか。\n"
    assert found(past, "rule:mixed-style") == [past.count("\n")]


def code_sources(text: str) -> list[str | None]:
    return [issue.source for issue in checked("code_quality", text)]


def test_an_ini_file_named_under_a_toml_tag_is_not_checked_as_toml():
    cnf = "[mysqld]\n# binlog を有効にする\nlog_bin=mysql-bin\nread_only=ON\n"
    # A MySQL option file shown under ```toml:master.cnf (round 144): INI, fine as it is.
    assert "rule:syntax-toml" not in code_sources(f"# 設定\n\n```toml:master.cnf\n{cnf}```\n")
    # The same lines as a TOML file, or with no file named, are still TOML that does not parse.
    assert "rule:syntax-toml" in code_sources(f"# 設定\n\n```toml:config.toml\n{cnf}```\n")
    assert "rule:syntax-toml" in code_sources(f"# 設定\n\n```toml\n{cnf}```\n")


def test_a_verb_that_already_says_can_with_a_re_too_many_gets_both_fixes_named():
    def ranuki(sentence: str) -> list[Issue]:
        return [issue for issue in language(ZENN_HEAD + sentence + "\n") if issue.source == "rule:ranuki"]

    # 「いただけれる」 is いただける with a れ too many (round 143): 「いただけられる」 alone would be wrong.
    (issue,) = ranuki("Liquid で開発される方に使っていただけれると嬉しいです。")
    assert "「いただける」" in issue.suggestion and "「いただけられる」" in issue.suggestion
    (issue,) = ranuki("手順を全部覚えれるようにまとめました。")
    assert "「覚えられる」" in issue.suggestion
    # A ら-less word the dictionary knows as one gets its one fix.
    (issue,) = ranuki("ダッシュボードが見れることを確認しました。")
    assert issue.problem == "ら抜き言葉: 「見れる」" and issue.suggestion == "「見られる」と書いてください。"


# --- rounds 146–147 ---------------------------------------------------------------------------------


def test_a_placeholder_between_a_private_keys_markers_is_no_leak():
    def config(body: str) -> str:
        return (ZENN_HEAD + "設定ファイルに証明書と鍵を貼ります。\n\n```js\nmodule.exports = {\n"
                f"  key: `-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----`\n}}\n```\n")

    # 「...秘密鍵の中身をまるごと貼る...」 says where a key goes (round 146): a critical would reject the article.
    assert "rule:private-key" not in privacy(config("...秘密鍵の中身をまるごと貼る..."))
    assert "rule:private-key" not in privacy(ZENN_HEAD + 'const key = "-----BEGIN PRIVATE KEY-----\\nkeyhere\\n-----END PRIVATE KEY-----";\n')
    # Base64 between the markers is a key, however short the excerpt.
    assert "rule:private-key" in privacy(config("MIIEowIBAAKCAQEAlbVmDfrg23RukbZlPL3Go9XMWDNJ"))
    assert "rule:private-key" in privacy(
        ZENN_HEAD + 'const key = "-----BEGIN RSA PRIVATE KEY-----\\nMIIEpQIBAAKCAQEA3ZWfqTchVarAgYxhqLhS\\n-----END RSA PRIVATE KEY-----";\n'
    )


# --- rounds 148–149 ---------------------------------------------------------------------------------


def test_a_paragraph_with_no_full_stop_is_a_statement_per_line():
    answer = ("midi コントローラでマルチエフェクターの操作をするための信号を生成するアプリ\n"
              "生成された信号は文字列で表示され、ワンタッチでクリップボードにコピーできる\n"
              "指定できる操作は以下\n1〜6 番目のエフェクタの ON\nF0 52 00 6E 64 20 00 aa 00 01 00 00 00 00 F7\n"
              "aa の箇所に 00〜05 の値が入り、エフェクタの番号を指定する\n")
    # An answer typed a line per item into a tool (round 148): no sentence of 228 characters.
    text = ZENN_HEAD + ":::details 返答内容\n" + answer + ":::\n"
    assert found(text, "rule:sentence-length") == []
    # The same lines with a full stop at the end are one sentence the writer wrapped.
    stopped = ZENN_HEAD + ":::details 返答内容\n" + answer.rstrip() + "です。\n:::\n"
    assert found(stopped, "rule:sentence-length") != []


# --- rounds 150–156 ---------------------------------------------------------------------------------


def test_lines_a_logger_printed_under_one_tag_need_no_language():
    log = ("flutter: **_ Request _**\nflutter: uri: http://127.0.0.1:8000/api/v1/todos\nflutter: method: GET\n"
           "flutter: headers:\nflutter: Accept: application/json\n")
    # A dio logger's output (round 154), read as Markdown for its `**_ Request _**`: no tag would fit it.
    text = ZENN_HEAD + "以下のような詳細な通信内容のログを出力が可能。便利。\n\n```\n" + log + "```\n"
    assert "rule:code-language" not in code_sources(text)
    # Markdown whose lines open with different words, or YAML keys, still read as what they are.
    markdown = "flutter: **_ Request _**\nuri: http://127.0.0.1:8000/api/v1/todos\nmethod: GET\n"
    assert "rule:code-language" in code_sources(ZENN_HEAD + "設定です。\n\n```\n" + markdown + "```\n")
    assert "rule:code-language" in code_sources(ZENN_HEAD + "設定です。\n\n```\nserver:\n  port: 80\nlogging:\n  level: info\n```\n")


def test_a_list_item_that_is_only_a_link_quotes_the_linked_pages_title():
    # 「まくまく Git ノート」, a site's name in a reference list (round 153): not the writer's doubled word.
    reference = "- [git diff での日本語の文字化けを防ぐ - まくまく Git ノート](https://maku77.github.io/p/cj2uie9/)\n"
    assert found(ZENN_HEAD + "## 参考\n\n" + reference, "rule:doubled-word") == []
    # The writer's own list item with a link in it is still read.
    own = "- 設定をを変える手順は[こちら](https://example.com/)にあります。\n"
    assert found(ZENN_HEAD + "## 手順\n\n" + own, "rule:doubled-word") == [11]


# --- rounds 157–159 ---------------------------------------------------------------------------------


def test_a_plain_sentence_that_the_next_one_sums_up_with_to_iu_koto_ni_is_quoted():
    polite = "trdsql は便利です。毎回テーブルを作ります。インポートも簡単です。\n\n"
    # 「…インポートする。ということになります。」 (round 157): the plain clause is what という sums up.
    quoted = ZENN_HEAD + polite + "これはTEMPORARYテーブルにインポートして、その結果を通常のテーブルにインポートする。ということになります。\n"
    assert found(quoted, "rule:mixed-style") == []
    # 「…。ということで」 goes on from the writer's own sentence, which still slipped.
    going_on = ZENN_HEAD + polite + "結果を通常のテーブルにインポートする。ということで、次に進みます。\n"
    assert found(going_on, "rule:mixed-style") == [11]


def test_a_topic_announced_with_ni_kanshite_desuga_sets_nothing_against_anything():
    # 「(1) の部分に関してですが、」 (round 157) only names the topic: one contrast follows.
    text = ZENN_HEAD + "(1) の部分に関してですが、これに関して理由はわかりませんが、エラーになるため分岐しています。\n"
    assert found(text, "rule:doubled-conjunctive-ga") == []
    # Two contrasts are still two.
    contrast = ZENN_HEAD + "速度は出ますが、メモリを食いますが、それでも使っています。\n"
    assert found(contrast, "rule:doubled-conjunctive-ga") == [9]


def test_ranuki_in_kana_and_in_a_conjugated_form_names_the_dictionary_forms_fix():
    def ranuki(sentence: str) -> list[Issue]:
        return [issue for issue in language(ZENN_HEAD + sentence + "\n") if issue.source == "rule:ranuki"]

    # 「見れます」 was told 「「られる」と書いてください」: the fix comes from the dictionary form.
    (issue,) = ranuki("ブラウザを開くと、ここで処理の結果が見れます。")
    assert issue.problem == "ら抜き言葉: 「見れ」" and issue.suggestion == "「見られる」の形で書いてください。"
    # 見れる written in kana (round 154's 「様子もみれますね」).
    (issue,) = ranuki("過減衰より臨界減衰の方が先に平衡位置へ収束される様子もみれますね。")
    assert issue.suggestion == "「みられる」の形で書いてください。"
    assert ranuki("まずはこの手順を自分の手元で試してみます。") == ranuki("最後に処理の結果をみることにします。") == []


def test_community_and_maintenance_misspelt_are_named():
    def misspelt(sentence: str) -> list[str]:
        return problems(sentence, "rule:ja-misspelling")

    # 「メンテナス」 (round 152) and 「コミニティー」 (round 156).
    assert misspelt("ひとまずそこだけメンテナスをする。") == ["よくある表記の誤りです: 「メンテナス」（「メンテナンス」）"]
    assert misspelt("公式コミニティーで要望が出ています。") == ["よくある表記の誤りです: 「コミニティー」（「コミュニティー」）"]
    assert misspelt("メンテナンスはコミュニティで行います。") == []


# --- rounds 164–166 ---------------------------------------------------------------------------------


def structure_sources(text: str) -> list[str | None]:
    return [issue.source for issue in checked("structure", text)]


def test_an_emoji_that_unicode_files_as_punctuation_is_one_emoji():
    front = '---\ntitle: "Desmos.jl を作った"\nemoji: "{}"\ntype: "tech"\ntopics: ["julia"]\npublished: true\n---\n\n本文です。\n'
    # 〽 (round 165) and ‼ are emoji, though their general category is punctuation.
    for emoji in ("〽", "‼", "〽\ufe0f"):
        assert "rule:zenn-emoji" not in structure_sources(front.format(emoji)), emoji
    # Plain punctuation is still no emoji.
    for value in ("。", "!!", "〽〽"):
        assert "rule:zenn-emoji" in structure_sources(front.format(value)), value


# --- rounds 167–177 ---------------------------------------------------------------------------------


def test_a_doubled_word_of_a_name_an_acronym_spells_out_is_the_names_own():
    # 「YACC（Yet Another Compiler Compiler）」 (round 169): the initials spell YACC.
    assert found(ZENN_HEAD + "YACC（Yet Another Compiler Compiler）形式で記述された構文定義ファイルです。\n",
                 "rule:doubled-word") == []
    # A capitalised word typed twice with no acronym it spells is still a slip.
    intro = "コンソールの上部にある検索窓に名前を入れて、"
    assert found(ZENN_HEAD + intro + "「Elastic Container Container」の画面を開きます。\n", "rule:doubled-word") == [9]
    assert found(ZENN_HEAD + intro + "ECS（Elastic Container Container）の画面を開きます。\n", "rule:doubled-word") == [9]


def test_a_line_that_trails_off_in_two_middle_dots_ends_its_sentence():
    # 「…いいのに・・」 then the next thought on the next line (round 174) was read as one long sentence.
    text = ZENN_HEAD + (
        "ドキュメントかダッシュボードに注釈でも入れてくれたらいいのに・・\n"
        "ちなみにEventBridgeストリームも期限内にAWS側の受け入れ設定をしないと、"
        "せっかく作成したパートナーイベントソースが自動的に削除されてしまうので、設定したら忘れないうちに"
        "すぐに受け入れ設定まで終わらせておきましょう。\n"
    )
    assert found(text, "rule:sentence-length") == []
    # The same two lines joined by a comma stay one long sentence.
    assert found(text.replace("いいのに・・\n", "いいのにと思いつつ、"), "rule:sentence-length") == [9]


def test_a_bold_line_on_its_own_is_a_display_whose_register_is_the_writers_choice():
    def mixed(text: str) -> list[int | None]:
        return found(ZENN_HEAD + text, "rule:mixed-style")

    polite = "".join(f"この手順では{step}を設定します。\n\n" for step in ("ネットワーク", "ストレージ", "認証", "監視"))
    # A constraint set in bold on a line of its own (round 175's 「**"早番"と"遅番"が連続しない。**」).
    assert mixed(polite + "**早番と遅番が連続しない。**\n\n" + "- **新人の看護師さんができる限り被らない。**\n") == []
    # The same sentence in the running text is a slip of style.
    assert mixed(polite + "早番と遅番が連続しない。\n") == [17]
    # Bold words inside a plain sentence leave it running text.
    assert mixed(polite + "ここでは**早番**と**遅番**が連続しない。\n") == [17]


def conjugation(sentence: str) -> list[str]:
    return problems(sentence, "rule:ja-conjugation")


def test_an_object_running_into_a_verbal_noun_made_the_subject_of_kanou_or_hitsuyou_is_named():
    # Over the mirror 15 such lines of 13 writers, each a slip (を with が).
    assert conjugation("文書作成には自分のPC等にLaTeXをインストールが必要です。") == [
        "助詞の誤りかもしれません: 「をインストールが必要」"]
    assert conjugation("HTMLソースを確認することで、対応有無を判別が可能です。") == ["助詞の誤りかもしれません: 「を判別が可能」"]
    assert conjugation("CloudWatch メトリクス上の異常値を自動検出ができるサービスです。") == [
        "助詞の誤りかもしれません: 「を自動検出ができる」"]
    # 必要とする is a verb of its own, and a noun that is no verbal noun takes が as its subject.
    assert conjugation("AWS を顧客が必要とする場所に延伸するサービスです。") == []
    assert conjugation("このファイルを開くには管理者の権限が必要です。") == []
    assert conjugation("ここでは通信の制御ができます。") == conjugation("ここでは通信を制御できます。") == []


def test_a_verbal_noun_after_no_ending_the_sentence_with_dekiru_is_named():
    (issue,) = [i for i in language(ZENN_HEAD + "ステップバイステップで SAM を使用した Lambda 関数の作成できます。\n")
                if i.source == "rule:ja-conjugation"]
    assert issue.problem == "助詞の誤りかもしれません: 「の作成できます」"
    assert "「の作成ができます」" in issue.suggestion  # が before できる, not the を of 「の作成をしました」
    # 「私の作成できる範囲」: の marks the subject of a relative clause.
    assert conjugation("私の作成できる範囲で資料をまとめました。") == []


def test_a_response_that_comes_back_is_kaette_written_with_the_kanji_of_returning():
    def misspelt(sentence: str) -> list[str]:
        return problems(sentence, "rule:ja-misspelling")

    # Over the mirror 20 such lines of 14 writers and one 帰り値, each a slip.
    assert misspelt("これで以下のレスポンスが帰ってきたら成功です。") == ["よくある表記の誤りです: 「帰って」（「返って」）"]
    assert misspelt("コマンドを実行して結果が帰ってくれば成功です。") == ["よくある表記の誤りです: 「帰って」（「返って」）"]
    assert misspelt("`useRouter` の帰り値に含まれる locale を使っていました。") == ["よくある表記の誤りです: 「帰り値」（「返り値」）"]
    # People come home: 帰って is right.
    assert misspelt("父が帰ってきたので、その日の作業はそこまでにしました。") == []
    assert misspelt("これで以下のレスポンスが返ってきたら成功です。") == []


def test_a_note_marked_with_a_reference_mark_keeps_its_own_register():
    plain = "".join(f"この手順では{step}を設定する。\n\n" for step in ("ネットワーク", "ストレージ", "認証", "監視"))
    # Round 173: 「※ そのまま使って実際に動作するファイルではないです。」 under a plain memo's sample.
    assert found(ZENN_HEAD + plain + "※ そのまま使って実際に動作するファイルではないです。\n", "rule:mixed-style") == []
    assert found(ZENN_HEAD + plain + "そのまま使って実際に動作するファイルではないです。\n", "rule:mixed-style") == [17]


# --- rounds 178–198 ---------------------------------------------------------------------------------


def test_an_expired_jwt_assigned_in_a_query_is_no_secret():
    import base64
    import json

    def token(claims: dict) -> str:
        part = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
        return f"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.{part}.LfQhIqEBemmwxSZfSCedaqpKa-SlT9yPOYsyj56M5V8"

    def sources(jwt: str) -> set[str | None]:
        # Round 179: a CTF write-up shows the admin token its exploit captured (critical, article rejected).
        text = f"# 解法\n\n```\nReceived GET request for /?token={jwt}\n```\n"
        return {issue.source for issue in checked("privacy", text)}

    assert sources(token({"username": "admin", "isAdmin": True, "iat": 1718453702, "exp": 1718457302})) == set()
    # A token that is still valid, or says nothing of its expiry, is a secret wherever it is written.
    assert sources(token({"username": "admin", "exp": 4102444800})) == {"rule:jwt"}
    assert sources(token({"sub": "1234567890", "name": "John"})) == {"rule:jwt"}


def test_a_te_form_the_dictionary_misreads_still_ends_a_clause():
    # Round 183: ぶんまわし is read as the noun for a compass and its て as a 副助詞; each を has its own verb.
    assert problems("AIをぶんまわして変換機能をC++でWebAssembly化したライブラリです。", "rule:doubled-particle") == []
    assert problems("ここでは設定をファイルを変更するだけで反映できます。", "rule:doubled-particle") != []


def test_the_name_a_writer_introduces_themself_by_is_no_misspelling():
    def spelling(sentence: str) -> list[str]:
        return problems(sentence, "rule:spelling")

    # Round 179: 「こんにちは、hatsu です。」 is the writer's handle, one letter from “hats”.
    assert spelling("こんにちは、hatsu です。") == []
    assert spelling("はじめまして、株式会社サンプルの hatsu と申します。") == []
    # The same word elsewhere in a sentence is still checked.
    assert spelling("この設定は hatsu の値を使います。") != []


def test_an_rl_training_framework_named_in_lower_case_is_a_term():
    # Round 178: 「rollout エンジンに vLLM を使える verl」 (volcengine/verl), not “very”.
    assert is_known("verl")
    assert problems("rollout エンジンに vLLM を使える verl は今後の課題です。", "rule:spelling") == []


def test_a_japanese_page_name_ending_a_bare_url_alone_on_its_line_is_the_address():
    def swallowed(line: str) -> set[str | None]:
        issues = checked("markdown_format", ZENN_HEAD + "本文です。\n\n" + line + "\n")
        return {issue.source for issue in issues if issue.source == "rule:bare-url-swallow"}

    # Round 185: the Wikipedia article the sentence above names.
    assert swallowed("https://ja.wikipedia.org/wiki/ヌメロニム") == set()
    assert swallowed("- https://github.com/eguchi244/Laravel9-Tutorial-PJ/tree/Chapter01/イントロダクションと環境構築") == set()
    # Prose glued to the address still is: a particle opens it, or the line goes on.
    assert swallowed("- https://github.com/aws-samples/awsome-distributed-training/のサンプルリストの整理") == {
        "rule:bare-url-swallow"}
    assert swallowed("詳しくは https://example.com/docs/を参照してください。") == {"rule:bare-url-swallow"}


def syntax(block: str) -> set[str | None]:
    """The rules that fire on one code block of a Zenn article."""
    return {issue.source for issue in checked("code_quality", ZENN_HEAD + "設定例です。\n\n" + block + "\n")}


def test_a_template_whose_blanks_are_named_in_words_is_no_syntax_error():
    # Round 185: Snowflake CLI's config.toml with the reader's connection name left blank.
    blank = '```toml\n[connections.{コネクション名}]\naccount = "{アカウント名}"\n```'
    assert "rule:syntax-toml" not in syntax(blank)
    assert "rule:syntax-toml" in syntax('```toml\n[connections.my conn]\naccount = "x"\n```')


def test_config_files_that_take_trailing_commas_and_indented_excerpts_are_not_syntax_errors():
    # Round 181: a VS Code snippets file (prefix/body) is JSONC; round 189: CMake reads its presets with jsoncpp.
    snippets = '```json\n{\n    "def main": {\n        "prefix": ":main",\n        "body": [\n            "main()",\n        ],\n    }\n}\n```'
    assert "rule:syntax-json" not in syntax(snippets)
    presets = '```json:CMakePresets.json\n{\n  "version": 3,\n  "configurePresets": [{"name": "github",}]\n}\n```'
    assert "rule:syntax-json" not in syntax(presets)
    assert "rule:syntax-json" in syntax(presets.replace("CMakePresets.json", "package.json"))
    # Round 189: `    env:` then a step, lines lifted from inside a workflow at their own indentation.
    excerpt = "```yaml:.github/workflows/build.yml\n    env:\n      SDK: C:\\\\SDK\n\n    - name: Setup\n      run: echo\n```"
    assert "rule:syntax-yaml" not in syntax(excerpt)
    assert "rule:syntax-yaml" in syntax("```yaml\nenv:\n  SDK: x\n- name: Setup\n  run: echo\n```")


def test_the_ros_2_build_tool_is_a_term():
    # Round 186: 「colcon buildを行うことで生成される」, not “colon”.
    assert is_known("colcon")


def test_a_fence_left_open_inside_a_closed_box_ends_with_the_box():
    def unclosed(body: str) -> list[tuple[str, int | None]]:
        issues = checked("markdown_format", ZENN_HEAD + body)
        return [(issue.severity, issue.line_start) for issue in issues if issue.source == "rule:unclosed-fence"]

    # Round 190: a pasted reply's stray ``` just before the :::details closes; markdown-it ends the
    # fence with the box, so only an empty code block shows and the article is not lost.
    boxed = ":::details レスポンス\n```swift\nlet a = 1\n```\n\nこれで完成します！\n```\n:::\n\n以降の本文です。\n"
    assert unclosed(boxed) == [("suggestion", 15)]
    # Outside any box the rest of the article is code: still a critical.
    assert unclosed("本文です。\n\n```swift\nlet a = 1\n\n以降の本文です。\n") == [("critical", 11)]


def test_a_polite_line_end_followed_by_an_aside_ends_its_sentence():
    def lengths(body: str) -> list[int | None]:
        return found(ZENN_HEAD + body, "rule:sentence-length")

    first = "記事執筆時点では、スマホから直接Codex AppやCLIのセッションを操作する公式体験はまだ限定的です（モバイルアプリを出すぽい匂わせはある）"
    second = "ただCodexの場合はサブスク枠で、サードパーティツールの利用が可能なのでそちらで補うことができます"
    # Round 192: two sentences on two lines, neither ended with 。, each under the limit.
    assert lengths(first + "\n" + second + "\n") == []
    # An aside that runs on into the next line's words is part of one long sentence still.
    wrapped = first.replace("（モバイルアプリを出すぽい匂わせはある）", "（モバイルアプリを出すぽい匂わせはある")
    assert lengths(wrapped + "\n" + second + "）\n") == [9]


def test_a_number_sign_before_a_number_names_an_issue_or_a_session_not_a_heading():
    def md018(line: str) -> list[int | None]:
        issues = checked("markdown_format", ZENN_HEAD + "本文です。\n\n" + line + "\n")
        return [issue.line_start for issue in issues if issue.source == "pymarkdownlnt:MD018"]

    # Round 195: a reading group's report names its sessions.
    assert md018("#3,#4 で触れていきます！") == []
    assert md018("#2で触れていきます！") == []
    # A heading whose space was forgotten is still named, numbered or not.
    assert md018("#1. はじめに") == [11]
    assert md018("#1.テストケース設計") == [11]
    assert md018("##まとめ") == [11]


def test_a_noun_of_place_said_twice_goes_a_level_further():
    # Round 197: 「ディレクトリの中の中で作ったCargoプロジェクト」 under 「ディレクトリの中で…」.
    assert problems("ルートディレクトリにあるディレクトリの中の中で作ったプロジェクトでも起きます。", "rule:doubled-word") == []
    assert problems("この設定についてについて説明します。", "rule:doubled-word") != []


# --- rounds 199– -----------------------------------------------------------------------------------


def test_a_fixed_noun_after_wo_and_then_toshite_is_a_compound_particle():
    # Round 200: 「さまざまなアクションを Raycast を起点として実行しています」: を起点として, like を起点に.
    assert problems("さまざまなアクションを Raycast を起点として実行しています。", "rule:doubled-particle") == []
    assert problems("さまざまなアクションを Raycast を起点に実行しています。", "rule:doubled-particle") == []
    # A second object stays a doubled を, with として or without.
    assert problems("設定をファイルを書き換えて変更します。", "rule:doubled-particle") != []
    assert problems("この値を結果を出力として使います。", "rule:doubled-particle") != []
    # A verbal noun that took its own を, then を例として (a post in the sweep): the second を is a slip.
    assert problems("記事のタイトルを取得を例として説明します。", "rule:doubled-particle") != []
    assert problems("記事のタイトルを取得を例に説明します。", "rule:doubled-particle") != []


def test_paragraphs_numbered_by_hand_are_list_items_whose_style_is_their_own():
    polite = "".join(f"この記事では{n}番目の手順を説明します。\n\n" for n in range(1, 6))
    plan = "１：共通化できるメソッドは、共通化する。\n\n２： 出力が違う部分のみ、入れ替えられる形にする。\n\n③ Strategy パターンで改修していく。\n\n"
    # Round 203: a plan numbered by hand, then 「のような方針で進めていこうと思いました。」
    assert found(ZENN_HEAD + polite + plan + "のような方針で進めていこうと思いました。\n", "rule:mixed-style") == []
    # The same plain sentences as running text are still named.
    prose = plan.replace("１：", "").replace("２： ", "").replace("③ ", "")
    assert found(ZENN_HEAD + polite + prose, "rule:mixed-style") != []
    # Round 206: items numbered by hand on the lines of one paragraph, under 「以下の通りです。」
    steps = "行っていることは以下の通りです。\n  ①タグで囲んで値を指定する\n  ②スロット内部に要素を記述する。値に連動できる\n"
    assert found(ZENN_HEAD + polite + steps, "rule:mixed-style") == []
    # A time at the start of a line is no number of an item.
    assert found(ZENN_HEAD + polite + "10:30に会場へ集合して、全員で移動する。\n", "rule:mixed-style") != []


def test_a_second_wo_inside_a_clause_quoted_by_to_is_the_quoted_clauses_own():
    # Round 205: 「これを公式サイトでは梯子を登る（climb the ladder）と表現しています」
    assert problems("これを公式サイトでは梯子を登る（climb the ladder）と表現しています。", "rule:doubled-particle") == []
    assert problems("これをデータを消すと呼びます。", "rule:doubled-particle") == []
    # A conditional と is no quotation: the two objects still compete.
    assert problems("設定をボタンを押すと変更できます。", "rule:doubled-particle") != []


def test_a_code_block_captioned_in_words_names_no_file():
    # Round 205: VimGolf's start and end texts under ```:Start file and ```:End file.
    text = ZENN_HEAD + "問題です。\n\n```:Start file\n21 8 144 3 89 5 13 34 55 2\n```\n"
    assert "rule:code-language" not in code_sources(text)
    # A file name still asks for its language, with a space after the colon or not.
    assert "rule:code-language" in code_sources(ZENN_HEAD + "設定です。\n\n```:Makefile\nall:\n\tcc main.c\n```\n")
    assert "rule:code-language" in code_sources(ZENN_HEAD + "設定です。\n\n```: ./ssh/config\nHost a\n```\n")


def test_a_ga_inside_a_bracketed_aside_is_the_asides_own():
    # Round 212: 「…宿痾（なぜだかは忘れたが…）なのでいいのだが、マニュアルは…間違っている。」
    sentence = "ぴったりの値にならないことは宿痾（なぜだかは忘れたが…）なのでいいのだが、マニュアルはやはり間違っている。"
    assert problems(sentence, "rule:doubled-conjunctive-ga") == []
    assert problems("値は合わないが、理由は忘れたが、マニュアルは間違っている。", "rule:doubled-conjunctive-ga") != []
    # An aside inside an aside is one more turn of a sentence already hard to follow (round 4).
    nested = "これ自体は関係しませんが(環境が固定的(最新版が20.04になりますが)ですので、使うことがない)、その中に書きます。"
    assert problems(nested, "rule:doubled-conjunctive-ga") != []


def test_a_verbal_noun_and_ka_offer_two_actions_each_with_its_own_wo():
    # Round 211: 「`<CR>` でディレクトリを開閉かファイルを開けます。」
    assert problems("`<CR>` でディレクトリを開閉かファイルを開けます。", "rule:doubled-particle") == []
    assert problems("これを何か別のものを使って試します。", "rule:doubled-particle") != []


def test_moonbit_is_a_programming_language():
    assert is_known("moonbit")  # round 213: 「次はmoonbitを触りたい」


def test_a_feeling_said_plainly_is_the_writers_voice_not_a_slip():
    polite = "".join(f"この記事では{n}番目の設定を説明します。\n" for n in range(1, 6))
    # Rounds 201, 213: 「このサイトで数値いじってるだけで楽しい。」「…面倒くさい。」
    for feeling in ("このサイトで数値をいじってるだけで楽しい。", "プロジェクトごとに設定するのは面倒くさい。", "悲しすぎる。"):
        assert found(ZENN_HEAD + polite + feeling + "\n", "rule:mixed-style") == [], feeling
    # A statement, a request of the reader and an attribute stay slips.
    for slip in ("このコマンドはファイルを削除する。", "ここは必ず確認してほしい。", "この方法では失敗することが多い。"):
        assert found(ZENN_HEAD + polite + slip + "\n", "rule:mixed-style") == [14], slip
    # Feelings still count towards the plain style: five polite sentences against four plain ones,
    # one of them a feeling, is no majority to slip from (a memo mixing both).
    plain = "一つ目は失敗した。\n二つ目も失敗した。\n三つ目も失敗した。\n本当に悩ましい。\n"
    assert found(ZENN_HEAD + polite + plain, "rule:mixed-style") == []


def test_a_word_right_after_a_code_span_opening_a_list_item_is_a_particle():
    # Round 220: 「* `Predictor` から `Segment` への依存を削減」 then 「* `FRIEND_TEST` から `TestPeer` へ変更」
    items = "主な変更です。\n\n* `Predictor` から `Segment` への依存を削減\n* `FRIEND_TEST` から `TestPeer` へ変更\n"
    assert found(ZENN_HEAD + items, "rule:doubled-conjunction") == []
    assert found(ZENN_HEAD + "しかし、試しました。\nしかし、動きませんでした。\n", "rule:doubled-conjunction") != []



# --- rounds 223– -------------------------------------------------------------------------------


def markdown_sources(text: str) -> list[tuple[str | None, int | None]]:
    return [(issue.source, issue.line_start) for issue in checked("markdown_format", text)]


def test_a_caption_over_two_lines_describes_its_figure():
    # Round 230: 「*図1：ハブ中心性（左）とオーソリティ中心性（右）」 then 「出所）Stachurski et al. (2022)*」
    figure = "![](https://example.com/hub.png =350x)\n*図1：ハブ中心性（左）とオーソリティ中心性（右）\n出所）Stachurski et al. (2022)*\n"
    assert ("rule:image-alt", 9) not in markdown_sources(ZENN_HEAD + figure)
    # A caption over two lines that only names its source still describes nothing, and an
    # emphasis that never closes is no caption.
    source_only = "![](https://example.com/hub.png)\n*出典：\nStachurski et al. (2022)*\n"
    assert ("rule:image-alt", 9) in markdown_sources(ZENN_HEAD + source_only)
    unclosed = "![](https://example.com/hub.png)\n*図1：ハブ中心性\nの比較\n\n次の段落です。\n"
    assert ("rule:image-alt", 9) in markdown_sources(ZENN_HEAD + unclosed)


def test_a_value_written_in_words_for_the_reader_is_no_credential():
    # Round 230: Hardhat's config with `apiKey: "EtherScanのAPIKey"`: what to put there, in Japanese.
    config = "```js\nmodule.exports = {\n  etherscan: {\n    apiKey: \"EtherScanのAPIKey\"\n  }\n};\n```\n"
    assert "rule:hardcoded-credential" not in code_sources(ZENN_HEAD + "設定です。\n\n" + config)
    literal = config.replace("EtherScanのAPIKey", "correcthorsebattery")
    assert "rule:hardcoded-credential" in code_sources(ZENN_HEAD + "設定です。\n\n" + literal)


def test_a_data_block_that_sets_variants_side_by_side_is_not_one_document():
    # Round 239: mise.toml with `# ✅ …` over `node = "22"` and `# ❌ …` over `node = "22.5.0"`.
    variants = '```toml:mise.toml\n[tools]\n# ✅ install_before が効く\nnode = "22"\n\n# ❌ スキップされる\nnode = "22.5.0"\n```\n'
    assert "rule:syntax-toml" not in code_sources(ZENN_HEAD + "設定です。\n\n" + variants)
    for marks in (("# NG", "# OK"), ("# 悪い例", "# 良い例")):
        yaml = f"```yaml\n{marks[0]}\nname: a\n{marks[1]}\nname: b\n  bad: [\n```\n"
        assert "rule:syntax-yaml" not in code_sources(ZENN_HEAD + "設定です。\n\n" + yaml)
    # One marked line is a comment like any other: the block is still one document.
    single = '```toml\n[tools]\n# ✅ これで動く\nnode = "22"\nnode = "22.5.0"\n```\n'
    assert "rule:syntax-toml" in code_sources(ZENN_HEAD + "設定です。\n\n" + single)


def test_several_spaces_after_a_heading_marker_are_one_finding_per_article():
    # Round 236: a plugin list whose twenty `###  Name` headings each had a finding of their own.
    headings = "".join(f"###  Plugin {n}\n\n説明です。\n\n" for n in range(1, 6))
    found = checked("markdown_format", ZENN_HEAD + "## 一覧\n\n" + headings)
    assert [i.line_start for i in found if i.source == "pymarkdownlnt:MD019"] == [11, 15, 19, 23, 27]
    issues = [i for i in apply_rule_control(found, {}) if i.source == "pymarkdownlnt:MD019"]
    assert [i.problem for i in issues] == ["5 headings have several spaces after the # (lines 11, 15, 19, 23, 27)."]
    # Three or fewer stay findings of their own.
    few = [i for i in apply_rule_control(found[:3], {}) if i.source == "pymarkdownlnt:MD019"]
    assert len(few) == len([i for i in found[:3] if i.source == "pymarkdownlnt:MD019"])


def test_an_emoji_between_two_sentences_ends_the_first():
    # Round 241: 「…本音になります 😅 v3 系の…早計でしたね 💦 言ってしまえば、…」 is three sentences.
    line = ("正直期待値をちょっと下回った、というのが本音になります 😅 v3 系のシンタックスをサポートするという事前の告知から、"
            "色々復刻すると思ってしまいましたがそれは早計でしたね 💦 言ってしまえば、`export default {}` を明示的に"
            "書かなくても良くなった、くらいのアップデートでした。")
    assert problems(line, "rule:sentence-length") == []
    # An emoji after a particle, or before one, is inside its sentence.
    clauses = ("設定ファイルを読み込んでから環境変数を確認し、必要であればキャッシュを消してからもう一度ビルドを実行して、"
               "その結果をログに残しておくと、後で問題が起きたときに原因を追いやすくなるので、手順として文書にまとめ、"
               "新しく入ったメンバーにも共有できるようにチームで決めておくと便利です。")
    assert problems(clauses, "rule:sentence-length") != []
    assert problems("この機能は 🔥 " + clauses, "rule:sentence-length") != []
    assert problems("家族 👨‍👩‍👧 で" + clauses, "rule:sentence-length") != []


def test_a_reference_entry_with_little_japanese_is_no_long_japanese_sentence():
    # Round 244: 「- Reuters通信: 「TikTok CEO: …」 ([TikTok CEO: … | Reuters](https://…)) (…)（…ニュース）」
    # under 参考資料: its length is an English title given three times, not Japanese prose.
    title = "TikTok CEO: App has never shared US data with Chinese government"
    url = "https://www.reuters.com/technology/tiktok-ceo-app-has-never-shared-us-data-with-chinese-goverment-2023-03-22/"
    entry = f"- Reuters通信: 「{title}」 ([{title} | Reuters]({url})) ([{title} | Reuters])（米議会公聴会でのTikTok CEO証言に関するニュース）  \n"
    text = ZENN_HEAD + "**参考資料・URL**\n\n" + entry + "\n---\n\n:::message\n**開発のご相談について**\n:::\n"
    assert found(text, "rule:sentence-length") == []
    # A long sentence with English names in it is still one (30 or more kana and kanji).
    sentence = ("Google Cloud Run と AWS App Runner と Azure Container Apps を比べると、" + "料金体系も起動時間も" * 6
                + "かなり違うので、用途に合わせて選ぶ必要があります。")
    assert problems(sentence, "rule:sentence-length") != []


def test_a_table_whose_header_cells_caption_its_images_holds_captioned_figures():
    # Round 245: 「|画像1：貼り付け後のCharuco Board|」「|---|」「|![][1]|」, reference-style images.
    figures = ("|画像1：貼り付け後のCharuco Board|\n|---|\n|![][1]|\n\n"
               "|画像3：webカメラのボード|画像4：iphoneカメラのボード|\n|---|---|\n|![][3]|![][4]|\n\n"
               "[1]: /images/a.png\n[3]: /images/c.png\n[4]: /images/d.png\n")
    assert [s for s in markdown_sources(ZENN_HEAD + figures) if s[0] == "rule:image-alt"] == []
    # Headers that only say which is which (入力前 / 入力後), or one that names only a source, caption nothing.
    states = "| 入力前 | 入力後 |\n| ---- | ---- |\n| ![](/images/a.png) | ![](/images/b.png) |\n"
    assert len([s for s in markdown_sources(ZENN_HEAD + states) if s[0] == "rule:image-alt"]) == 2
    source = "|図1：出典 https://example.com|\n|---|\n|![](/images/a.png)|\n"
    assert len([s for s in markdown_sources(ZENN_HEAD + source) if s[0] == "rule:image-alt"]) == 1
