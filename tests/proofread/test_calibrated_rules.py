"""Causes of false alarms found on published articles, each fixed in its checker: what a rule must
still find, and the look-alike it must leave alone."""

from __future__ import annotations

from agents.proofread.checkers import CHECKER_CLASSES, CheckContext
from agents.proofread.config import GraphConfig
from agents.proofread.llm import ProofreadLLM
from agents.proofread.parser import parse_article
from agents.proofread.schemas import Issue
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel

ZENN_HEAD = '---\ntitle: "テスト"\nemoji: "🧪"\ntype: "tech"\ntopics: ["python"]\npublished: true\n---\n\n'


def run(category: str, text: str) -> list[Issue]:
    context = CheckContext(config=GraphConfig(), llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)))
    return CHECKER_CLASSES[category](context).rules(parse_article(text))


def found(category: str, text: str, rule: str) -> list[int | None]:
    return [i.line_start for i in run(category, text) if i.source == rule]


def test_bold_that_wraps_onto_the_next_line_renders_and_is_not_reported():
    wrapped = "# T\n\nSet the **search\npaths** in the **Edit** menu.\n"
    assert found("markdown_format", wrapped, "rule:strong-flanking") == []
    broken = "# T\n\nこれは**「強調」**です。\n\n次の行。\n"
    assert found("markdown_format", broken, "rule:strong-flanking") == [3]


def test_collapsed_and_wrapped_references_use_their_definitions():
    text = (
        "# T\n\nSee the [wire format][] and the [Protocol\nBuffers guide][].\n\n"
        "[wire format]: https://example.com/a\n[Protocol Buffers guide]: https://example.com/b\n"
        "[never used]: https://example.com/c\n"
    )
    assert found("link", text, "rule:unused-definition") == [8]


def test_a_relative_link_to_another_article_is_not_a_local_path():
    text = ZENN_HEAD + "[前回の記事](./numpy-einsum)と[図](./images/diagram.png)。\n"
    assert found("link", text, "rule:local-path") == [9]


def test_an_http_image_and_an_http_link_are_separate_rules():
    text = "# T\n\n![図](http://img.acme-blog.net/a.png) and [site](http://acme-blog.net/).\n"
    assert {i.source: i.severity for i in run("link", text)} == {"rule:http-image": "warning", "rule:http-url": "suggestion"}


def test_one_space_around_an_english_word_does_not_hide_a_doubled_particle():
    text = ZENN_HEAD + "ユーザーは、モデルの演算処理を API を使って記述します。\n"
    assert found("language_quality", text, "rule:doubled-particle") == [9]
    # Masked code is a run of blanks: a clause break the rule cannot see through.
    masked = ZENN_HEAD + "ユーザーは、モデルの設定を `x = 1` を見ながら書きます。\n"
    assert found("language_quality", masked, "rule:doubled-particle") == []


def test_sample_text_made_of_one_word_is_not_a_doubled_word():
    assert found("language_quality", ZENN_HEAD + "平文**強調**平文平文**強調**平文\n", "rule:doubled-word") == []
    slip = ZENN_HEAD + "（余談ですが、転送料金は高いです。AWS はインターネット転送転送料金が高い）\n"
    assert found("language_quality", slip, "rule:doubled-word") == [9]


def test_steps_that_start_with_code_do_not_start_with_the_conjunction_de():
    text = ZENN_HEAD + "1. `Create` でアップロードを始める\n2. `Upload` でパートを送る\n3. `Complete` で完了させる\n"
    assert found("language_quality", text, "rule:doubled-conjunction") == []


def test_a_footnote_in_the_plain_style_does_not_mix_styles():
    body = "これはテストです。説明を書きます。動作を確認しました。結果を示します。\n\n"
    footnote = ZENN_HEAD + body + "注釈があります[^1]。\n\n[^1]: この書き方は古いので推奨されない。\n"
    assert found("language_quality", footnote, "rule:mixed-style") == []
    in_body = ZENN_HEAD + body + "この書き方は古いので推奨されない。\n"
    assert found("language_quality", in_body, "rule:mixed-style") == [11]


def test_sentence_length_reports_from_the_calibrated_limits():
    assert GraphConfig().max_sentence_chars_ja == 120 and GraphConfig().max_sentence_words_en == 50
    under, over = "あ" * 118 + "。\n", "あ" * 119 + "。\n"
    assert found("language_quality", ZENN_HEAD + under, "rule:sentence-length") == []
    assert found("language_quality", ZENN_HEAD + over, "rule:sentence-length") == [9]
    words = " ".join(["word"] * 49)
    assert found("language_quality", f"# T\n\n{words}.\n", "rule:sentence-length") == []
    assert found("language_quality", f"# T\n\n{words} more.\n", "rule:sentence-length") == [3]


def test_an_english_title_inside_a_japanese_sentence_counts_as_one_unit():
    title = "A guide to designing accessible, WCAG-conformant focus indicators"  # 56 characters, no spaces
    quoted = ZENN_HEAD + "あ" * 70 + f"は「{title}」という記事で詳しく説明されている。\n"
    assert found("language_quality", quoted, "rule:sentence-length") == []
    japanese = ZENN_HEAD + "あ" * 105 + "は「短い題名」という記事で説明されている。\n"
    assert found("language_quality", japanese, "rule:sentence-length") == [9]


def test_an_unfenced_export_header_is_metadata_not_prose():
    header = "title: 問題を解いてみた\ntags: Python 最適化\nurl: https://example.com/items/1\nbody:\n\n"
    body = "".join(f"段落{n}を書きます。\n\n" for n in range(12))
    assert [i.source for i in run("structure", header + body) if i.source == "rule:no-title"] == []
    assert found("language_quality", header + body, "rule:sentence-length") == []
    franklin = '@def title = "Custom indices"\n@def hasmath = true\n\n' + "".join(f"Para {n}.\n\n" for n in range(12))
    assert [i.source for i in run("structure", franklin) if i.source == "rule:no-title"] == []


def test_notebook_output_and_shell_logs_are_not_syntax_errors():
    notebook = "# T\n\n```python\nfrom m import f\nf??\n>>>\ndef f(g, weight='weight'):\n    ...\n(1, 2) [3\n```\n"
    assert found("code_quality", notebook, "rule:syntax-python") == []
    log = "# T\n\n```sh\n$ ./run -m model.gguf\nregister_backend: registered backend CPU (1 devices)\n```\n"
    assert found("code_quality", log, "rule:syntax-shell") == []
    output = "# T\n\n```sh\nbuild: 3947 (406a5036) with clang 18\n```\n"
    assert found("code_quality", output, "rule:syntax-shell") == []
    broken = "# T\n\n```python\ndef f(:\n    pass\n```\n"
    assert found("code_quality", broken, "rule:syntax-python") == [4]


def test_home_router_addresses_are_examples_and_a_private_ip_is_a_suggestion():
    text = "# T\n\nあなたのPCは `192.168.1.5` かもしれません。\n\nThe database listens on 10.0.1.4.\n"
    assert [(i.line_start, i.severity) for i in run("privacy", text) if i.source == "rule:private-ip"] == [
        (5, "suggestion"),
    ]
