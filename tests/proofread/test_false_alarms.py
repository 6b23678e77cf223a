"""False alarms that made writers distrust the proofreader, each reproduced in a small article:
none of them is reported any more, and the true problem next to it still is."""

from __future__ import annotations

import warnings

from agents.proofread.agent import ProofreadAgent
from agents.proofread.checkers import CHECKER_CLASSES, CheckContext
from agents.proofread.checkers.privacy import redact_personal
from agents.proofread.config import GraphConfig
from agents.proofread.linter import LinterWorker
from agents.proofread.llm import ProofreadLLM
from agents.proofread.messages import to_japanese
from agents.proofread.parser import parse_article
from agents.proofread.rules import apply_rule_control
from agents.proofread.schemas import Issue
from agents.proofread.text import mask_for_prose
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel
from tests.proofread.conftest import offline_deps, start_conversation


def context(**config) -> CheckContext:
    return CheckContext(config=GraphConfig(**config), llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)))


def run(category: str, text: str) -> list[Issue]:
    checker = CHECKER_CLASSES[category](context())
    article = parse_article(text)
    return checker._own_rules(article) if category == "markdown_format" else checker.rules(article)


def lines(category: str, text: str, rule: str) -> list[int | None]:
    return [issue.line_start for issue in run(category, text) if issue.source == rule]


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


# --- causes found on the second held-out set (heldout2), fixed before heldout3 was read ----------


def test_a_reference_definition_may_put_its_destination_on_the_next_line():
    text = "# Refs\n\nSee [the spec][s].\n\n[s]:\n  https://example.com/spec\n"
    assert "rule:empty-link" not in sources("link", text)
    assert [(link.kind, link.url) for link in parse_article(text).links if link.kind == "definition"] == [
        ("definition", "https://example.com/spec")
    ]


JA_HEAD = "## ひらがなだけでかいたみだし\n\n"  # enough kana for the parser to read the article as Japanese
MIXED = JA_HEAD + "".join(f"この設定は{n}番目の項目を変更します。\n\n" for n in range(4))


def test_image_alt_text_is_not_counted_as_prose_style():
    alt = MIXED + "![画面を録画したもの。この機能はとても便利である。](shot.gif)\n"
    assert "rule:mixed-style" not in sources("language_quality", alt)
    assert "rule:mixed-style" in sources("language_quality", MIXED + "この機能はとても便利である。\n")


def test_a_very_short_sentence_does_not_count_as_a_style_switch():
    assert "rule:mixed-style" not in sources("language_quality", MIXED + "疲れた。\n")
    assert "rule:mixed-style" in sources("language_quality", MIXED + "ここで作業に疲れた。\n")


def test_an_address_in_parentheses_leaves_its_closing_bracket_to_the_sentence():
    paragraph = (
        "その crate (https://crates.io/crates/lingua) は、文字列がどの言語で書かれたものかを判定するクレートです。\n"
        "このクレートの基本的な機能を使って、日本語と英語とそれ以外とを区別できると考えました。\n"
        "これは予想していたよりもずっとうまく動きました。\n書いてみたコードは短いので、この記事の末尾にそのまま掲載しておきます。\n"
    )
    assert "rule:sentence-length" not in sources("language_quality", JA_HEAD + paragraph)


def test_a_sentence_said_to_the_reader_does_not_count_as_a_style_switch():
    for spoken in ("静的サイトの運用はとても楽でいいぞ。", "この場所は東京の中央区なんだ。", "この方法はとても便利だよね。"):
        assert "rule:mixed-style" not in sources("language_quality", MIXED + spoken + "\n"), spoken
    assert "rule:mixed-style" in sources("language_quality", MIXED + "この場所は東京の中央区だ。\n")
    assert "rule:mixed-style" in sources("language_quality", MIXED + "この方法はとても便利だ。\n")


def test_a_section_written_in_its_own_register_is_no_style_switch():
    """An open letter or an appeal to the reader, a whole section in です/ます inside a だ/である
    essay, is the writer's choice; the same sentences mixed into a plain section are slips."""
    plain = "".join(f"この設定は{n}番目の項目を変更する。\n\n" for n in range(6))
    letter = "".join(f"皆さんにお願いしたいことが{n}つあります。\n\n" for n in range(1, 5)) + "これは提案にすぎない。\n\n"
    essay = "# ひらがなのたいとる\n\n## せってい\n\n" + plain + "## てがみ\n\n" + letter
    assert lines("language_quality", essay, "rule:mixed-style") == []
    mixed = "".join(f"皆さんにお願いしたいことが{n}つあります。\n\nこの設定は{n}番目の項目を変更する。\n\n" for n in (1, 2))
    slipped = "# ひらがなのたいとる\n\n## せってい\n\n" + plain + "## まぜた\n\n" + mixed
    assert lines("language_quality", slipped, "rule:mixed-style") == [19, 23]


def test_thanks_stay_polite_in_a_plain_article():
    plain = JA_HEAD + "".join(f"この設定は{n}番目の項目を変更する。\n\n" for n in range(4))
    for thanks in ("設定の書き方はこの記事を参考にさせていただきました。", "レビューしてくれた同僚にありがとうございます。"):
        assert "rule:mixed-style" not in sources("language_quality", plain + thanks + "\n"), thanks
    assert "rule:mixed-style" in sources("language_quality", plain + "設定の書き方はこの記事を参考にしました。\n")


def test_mathematical_prose_keeps_its_plain_style_in_a_polite_article():
    inline = MIXED + "期待値は $t = k/\\sqrt{N}$ と変数変換すると便利である。\n"
    before_block = MIXED + "すると次の式が成り立つのである。\n\n$$\nx = y\n$$\n"
    assert "rule:mixed-style" in sources("language_quality", MIXED + "すると次の式が成り立つのである。\n")
    assert "rule:mixed-style" not in sources("language_quality", inline)
    assert "rule:mixed-style" not in sources("language_quality", before_block)


def test_excerpts_with_an_ellipsis_and_json_with_comments_are_not_syntax_errors():
    yaml_excerpt = "# Compose\n\n```yaml\nservices:\n  web:\n    image: app\n...\n  db:\n    image: pg\n```\n"
    jsonc = '# Settings\n\n```json\n{\n  // format on save\n  "editor.formatOnSave": true\n}\n```\n'
    assert "rule:syntax-yaml" not in sources("code_quality", yaml_excerpt)
    assert "rule:syntax-json" not in sources("code_quality", jsonc)
    broken = '# Settings\n\n```json\n{"editor.formatOnSave": true,,}\n```\n'
    assert "rule:syntax-json" in sources("code_quality", broken)


def test_jitsu_wa_is_an_adverb_not_a_doubled_particle():
    assert "rule:doubled-particle" not in sources("language_quality", JA_HEAD + "実はこの設定は正しいです。\n")
    assert "rule:doubled-particle" in sources("language_quality", JA_HEAD + "私は彼は好きです。\n")


def test_footnote_definitions_are_separate_sentences():
    notes = "".join(f"[^{n}]: See the {n}th chapter of the manual for the details of this option\n" for n in range(9))
    assert "rule:sentence-length" not in sources("language_quality", "# Notes\n\nText here.[^1]\n\n" + notes)


def test_phrase_tails_and_derived_words_are_not_misspellings_but_typos_still_are():
    text = "# Notes\n\nThe server and vice versa, with chunking and liveness probes.\n"
    assert "rule:spelling" not in sources("language_quality", text)
    assert "rule:spelling" in sources("language_quality", "# Notes\n\nThe begining of the text.\n")


# --- causes found on the third held-out set (heldout3), fixed before heldout4 was collected -------


def test_a_heading_indented_by_two_spaces_renders_and_is_not_reported_as_indented():
    indented, jumped = linted("# Title\n\nIntro.\n\n  ## Setup\n\n  Text of the setup.\n", "# Title\n\n  #### Setup\n\nText.\n")
    assert "pymarkdownlnt:MD023" not in {source for source, _line in indented}
    # The linter's other rules still see the indented heading: a jump from # to #### is reported.
    assert "pymarkdownlnt:MD001" in {source for source, _line in jumped}


def test_program_output_in_a_powershell_transcript_is_not_shell_syntax():
    transcript = (
        "# Keys\n\n```sh\n> ssh-keygen -t ed25519\nGenerating public/private ed25519 key pair.\n"
        "Enter file in which to save the key (C:\\Users\\me/.ssh/id_ed25519)\n"
        "> gpg --version\ngpg (GnuPG) 2.4.3; Copyright (C) 2023 g10 Code GmbH\n"
        "PS C:\\work> git status\nuid   [  ultimate  ] Your name <me@example.com>\n```\n"
    )
    assert "rule:syntax-shell" not in sources("code_quality", transcript)
    continued = "# Loop\n\n```sh\n$ for i in 1 2; do\n>   echo $i\n> done\n1\n2\n```\n"
    assert "rule:syntax-shell" not in sources("code_quality", continued)
    broken = "# Keys\n\n```sh\n> if [ -f x ]; then\n> echo (broken\n```\n"
    assert "rule:syntax-shell" in sources("code_quality", broken)


def sentence_words(text: str) -> list[int | None]:
    return [issue.line_start for issue in run("language_quality", text) if issue.source == "rule:sentence-length"]


WORDS = " ".join(["word"] * 30)


def test_a_curly_quotation_closed_by_a_straight_quote_does_not_swallow_the_paragraph():
    text = f"# Notes\n\nI had been “watching\" the project for months. {WORDS}. {WORDS}.\n"
    assert sentence_words(text) == []
    assert sentence_words(f"# Notes\n\nI had been watching the project {WORDS} {WORDS}.\n") == [3]


def test_a_full_stop_inside_a_closing_quotation_or_emphasis_ends_the_sentence():
    lead = " ".join(["lead"] * 20)
    quoted = f"# Notes\n\nThe goal of {lead} is to be more “efficient and effective.” {WORDS}.\n"
    emphasised = f"# Notes\n\nWhat matters for {lead} is *having data to put in it.* {WORDS}.\n"
    assert sentence_words(quoted) == []
    assert sentence_words(emphasised) == []
    assert sentence_words(f"# Notes\n\nWhat matters for {lead} is *having data to put in it* {WORDS}.\n") == [3]
    # A question in brackets is an aside: the sentence goes on after it.
    assert sentence_words(f"# Notes\n\nA deploy for {lead} (or perhaps later?) would make {WORDS}.\n") == [3]


def test_a_link_whose_url_has_parentheses_is_not_counted_as_text():
    url = "https://example.com/blog/focus/#examining-(current)-" + "-".join(["browser-focus-indicators"] * 6)
    text = ZENN + f"- ブラウザの既定の表示では[コントラスト比が基準を満たせない場合]({url})がある\n"
    assert sentence_words(text) == []
    long_item = "- ブラウザの既定の表示では" + "コントラスト比が基準を満たせない場合があり、" * 6 + "困る\n"
    assert sentence_words(ZENN + long_item) != []


ZENN = (
    '---\ntitle: "テスト"\nemoji: "🧪"\ntype: "tech"\ntopics: ["css"]\npublished: true\n---\n\n'
    "## ひらがなのみだし\n\nこれはにほんごのきじです。\n\n"
)


def test_kernel_tracing_and_graphics_words_are_known():
    text = "# Tracing\n\nA kprobe fires in the kernel, and the shader generators run on the card.\n"
    assert "rule:spelling" not in sources("language_quality", text)
    assert "rule:spelling" in sources("language_quality", "# Tracing\n\nA kprobe fires at the begining.\n")


def test_a_stack_trace_needs_no_language_tag_but_code_does():
    trace = (
        "# Error\n\n```\nException in thread \"pool-2\" java.lang.IllegalStateException: Not on FX thread\n"
        "\tat com.sun.javafx.tk.Toolkit.checkFxUserThread(Toolkit.java:229)\n"
        "\tat javafx.scene.Parent$2.onProposedChange(Parent.java:367)\n"
        "\tat java.lang.Thread.run(Thread.java:748)\n```\n"
    )
    python = (
        "# Error\n\n```\nTraceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n"
        "    main()\n  File \"app.py\", line 2, in main\nZeroDivisionError: division by zero\n```\n"
    )
    assert "rule:code-language" not in sources("code_quality", trace)
    assert "rule:code-language" not in sources("code_quality", python)
    code = "# Code\n\n```\npublic class App {\n  void run() { at(1); }\n}\n```\n"
    assert "rule:code-language" in sources("code_quality", code)


def test_an_error_message_or_an_ml_let_in_form_needs_no_language_tag_but_javascript_does():
    error = (  # gcloud's message pasted as it came (round 136): read as Markdown for its `***`
        "# 失敗集\n\n怒られたやつ。\n\n```\nERROR: (gcloud.datastore.indexes.create) There was a problem "
        "refreshing your current auth tokens: ('***\\n  \"error\": ***\\n')\n```\n"
    )
    ml = (  # a compiler's ML-style output (round 139): `let … = (…) in` is no JavaScript
        "# 変換\n\n実行すると、\n```\nlet f_8(env_7, x_0) =\n  let f_3 = (@f_10, x_0) in\n  f_3\n```\n"
    )
    assert "rule:code-language" not in sources("code_quality", error)
    assert "rule:code-language" not in sources("code_quality", ml)
    script = "# JS\n\n```\nlet total = (a + b) * 2;\nconsole.log(total);\n```\n"
    session = "# Run\n\n```\n$ git push\nerror: failed to push some refs to origin\n```\n"
    assert "rule:code-language" in sources("code_quality", script)
    assert "rule:code-language" in sources("code_quality", session)


def test_a_closing_mark_as_the_last_heading_is_not_an_empty_section():
    body = "# はじめに\n\n本文です。\n\n# おわりに\n\n以上です。\n\n"
    assert "rule:empty-section" not in sources("structure", body + "# 🔚END\n")
    assert "rule:empty-section" not in sources("structure", body + "## 完\n")
    assert "rule:empty-section" in sources("structure", body + "# 今後の課題\n")
    assert "rule:empty-section" in sources("structure", "# END\n\n# 本文\n\n本文です。\n")


# --- causes found on the fourth held-out set (heldout4), fixed before heldout5 was collected ------


def test_private_addresses_and_hostnames_in_program_output_are_not_reported():
    log = (
        "# Logs\n\n```\n# apache access log\n"
        '10.0.1.22 - - [15/Oct/2010:11:46:46 -0700] "GET /favicon.ico HTTP/1.1" 404 209\n'
        "[Fri Oct 15 11:46:46 2010] [error] [client 10.0.1.22] File does not exist\n```\n\n"
        '```console\n$ curl -s localhost:8080/status\n{"host":"build01.corp.internal","ok":true}\n```\n'
    )
    assert [i for i in run("privacy", log) if i.source in ("rule:private-ip", "rule:internal-hostname")] == []
    # What the writer wrote — a command, a configuration, a sentence — is still theirs to check.
    written = (
        "# Setup\n\nThe cache runs on 10.0.3.7.\n\n"
        '```console\n$ curl http://10.0.3.8/status\n{"ok":true}\n```\n\n'
        "```yaml\nupstream: build01.corp.internal\n```\n"
    )
    assert [(i.source, i.line_start) for i in run("privacy", written)] == [
        ("rule:private-ip", 3), ("rule:private-ip", 6), ("rule:internal-hostname", 11),
    ]


def test_a_machines_mdns_name_is_not_an_internal_hostname():
    text = (
        "# Logging\n\n```javascript\n{\n"
        '  "name": "hello",\n  "hostname": "banana.local",\n  "pid": 40087\n}\n```\n\n'
        "Our domain controller is dc01.corp.local.\n"
    )
    assert [(i.source, i.line_start) for i in run("privacy", text)] == [("rule:internal-hostname", 11)]


def test_a_passcode_in_a_public_meeting_link_does_not_reject_the_article():
    text = (
        "# Get involved\n\n1. Join the weekly meeting on Fridays.\n"
        "    1. [Zoom Meeting](https://zoom-lfx.platform.linuxfoundation.org/meeting/91295593969"
        "?password=17825db5-c698-44cc-9f00-ef1f61f5d3fb).\n"
    )
    assert run("privacy", text) == []
    # A key or token passed in a link is worth a look, not a rejection; the same value assigned
    # in code, and a token of a known format in a link, are still critical.
    keyed = "# API\n\nOpen [the feed](https://api.example.org/v1/feed?api_key=Zk8qW2mX9vL4tR7pN3sB).\n"
    assert [(i.source, i.severity) for i in run("privacy", keyed)] == [("rule:link-secret", "suggestion")]
    assigned = '# API\n\n```python\npassword = "17825db5-c698-44cc-9f00-ef1f61f5d3fb"\n```\n'
    assert [(i.source, i.severity) for i in run("privacy", assigned)] == [("rule:assigned-secret", "critical")]
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    hooked = f"# CI\n\nThe badge is at https://ci.example.org/badge?token={token}.\n"
    assert [(i.source, i.severity) for i in run("privacy", hooked)] == [("rule:github-token", "critical")]


CONTRIBUTORS = (
    "Aidan Fitzgerald, Akshat Kedia, Ale Muñoz, Alex Wood, Alexey Kopytko, Alexey Pelykh, Ali Thompson, "
    "Ana María Martínez Gómez, Ananthakumar, Andreas Möller, Andrew Lyndem, Andrew Marcuse, Andy Alt, Anne "
    "Gentle, Anny, Anuj Bhatnagar, argv-minus-one, Arjun Thakur, Arthur Attwell, Ashwin Maroli, Behrang, "
    "Belhassen Chelbi, Ben Keith, Ben Otte, Bilawal Hameed, Karel Bílek, Keith Mifsud, Kelly-Ann Green,\n"
    "Ken Salomon, Kevin Plattret, krissy, Kyle Barbour, Lars Kanis, Leandro Facchinetti and Liam Rosenfeld."
)


def test_a_list_of_contributor_names_is_not_a_long_sentence_nor_a_misspelling():
    text = (
        "# Thank you\n\nSpecial thanks to the contributors who made this release possible via a pull "
        f"request (in alphabetical order): {CONTRIBUTORS}\n"
    )
    assert sentence_words(text) == []
    assert "rule:spelling" not in sources("language_quality", text)
    # A long sentence of clauses is still long, and a lower-case slip in running text still a typo.
    clauses = ", ".join(f"then the {n}th step runs the build again" for n in range(8))
    assert sentence_words(f"# Build\n\nFirst we set it up{clauses}.\n") == [3]
    assert "rule:spelling" in sources("language_quality", "# Notes\n\nWe recieved the patch from Kyle.\n")


def test_a_clojurescript_repl_under_a_console_tag_is_not_shell():
    repl = (
        "# REPL\n\n```console\nPrompt will show when Figwheel connects to your application\n"
        "dev:cljs.user=> (+ 1 2)\n3\ndev:cljs.user=> (require '[cljs.nodejs :as nodejs])\nnil\n```\n\n"
        "```console\nirb(main):001:0> puts(\"hi\"\nhi\n```\n"
    )
    assert "rule:syntax-shell" not in sources("code_quality", repl)  # the rule itself, off by default
    broken = "# Keys\n\n```console\n$ if [ -f x ]; then\n$ echo (broken\n```\n"
    assert "rule:syntax-shell" in sources("code_quality", broken)


def test_daemon_names_and_informal_abbreviations_are_words():
    text = (
        "# Metrics\n\nAd hoc fields allow for a lightly spec'd comm channel: records with a metric "
        "could feed to statsd, others to journald.\n"
    )
    assert "rule:spelling" not in sources("language_quality", text)


def linter_issues(*texts: str) -> list[list[Issue]]:
    """pymarkdownlnt's findings, as our checker keeps them (before rule control), for each text."""
    worker = LinterWorker()
    try:
        checker = CHECKER_CLASSES["markdown_format"](context())
        checker.context.linter = worker
        return [checker._linter(parse_article(text)) for text in texts]
    finally:
        worker.close()


def linted(*texts: str) -> list[set[tuple[str | None, int | None]]]:
    """(rule, line) of pymarkdownlnt's findings, as our checker keeps them, for each text."""
    return [{(i.source, i.line_start) for i in issues} for issues in linter_issues(*texts)]


def test_text_that_is_no_code_needs_no_language_tag_but_code_and_sessions_do():
    untagged = [
        # a program's output, a model's quoted answer, an ASCII diagram, notation
        "Error from server: error when creating \"STDIN\": admission webhook \"validate.kyverno.svc-fail\" denied"
        " the request:\n\nresource Deployment/default/nginx was blocked due to the following policies\n",
        "deployment.apps/nginx created",
        "緯度経度 (35, 135) の地点は「兵庫県西脇市」に位置します。\n\n兵庫県の県庁所在地は「神戸市」です。",
        " +-----+    +------+\n |  A  | -> |dialog|\n +-----+    +------+",
        "ij,jk->ik | arg0,arg1->out1\nik,kl->il | out1,arg2->out0",
        "Output written on sample.dvi (1 page, 1076 bytes).",
        ",,,,,,,,:,,,,,,,,,,,,\n,,,,,??%%%%%?::*SS%S?:,,,,\n,,,,:%,,,,,+S%%%%%%%%%%,,,,,,\n,,,,,,,,**,,,,,,,**,,,,",  # ASCII art a program drew
    ]
    for content in untagged:
        text = f"# Notes\n\n```\n{content}\n```\n"
        assert "rule:code-language" not in sources("code_quality", text), content
    code = {
        "$ kubectl get pods\nNAME   READY\nweb    1/1": "console",
        "git clone https://github.com/x/y.git\ncd y\nmake": "sh",
        "from pathlib import Path\n\nprint(Path.cwd())": "python",
        '{\n  "mcpServers": {"demo": {"command": "npx"}}\n}': "json",
        "GRANT SELECT ON raw_mncpl TO www;": "sql",
        "[Resolve]\nDNS=169.254.169.254": "ini",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web": "yaml",
        "**Hello**, world!": "markdown",
    }
    for content, language in code.items():
        (issue,) = [i for i in run("code_quality", f"# Notes\n\n```\n{content}\n```\n") if i.source == "rule:code-language"]
        assert f"```{language}" in issue.suggestion, content
    # A file name with no language (Zenn's ```:Racket) was meant to carry one.
    assert "rule:code-language" in sources("code_quality", "# REPL\n\n```:Racket\n> (+ 1 3)\n4\n```\n")


def test_a_run_of_adjacent_links_wrapped_after_their_text_is_neither_spaced_nor_reversed():
    run_of_links = (
        "# Links\n\n[https://example.com/a\n](https://example.com/a)[https://example.com/b\n"
        "](https://example.com/b)[https://example.com/c](https://example.com/c)\n"
    )
    spaced = "# Links\n\nSee [ the guide ](https://example.com/guide) and (this)[https://example.com/x].\n"
    found_run, found_spaced = linted(run_of_links, spaced)
    assert not {rule for rule, _ in found_run} & {"pymarkdownlnt:MD039", "pymarkdownlnt:MD011"}
    assert {("pymarkdownlnt:MD039", 3), ("pymarkdownlnt:MD011", 3)} <= found_spaced


def test_a_quoted_list_item_that_starts_at_three_is_numbered_on_purpose():
    quoted = "# List\n\n1. one\n2. two\n3. three\n\nThis time:\n\n> 3. three\n\nonly.\n"
    skipped = "# List\n\n1. one\n3. two\n4. three\n"
    found_quoted, found_skipped = linted(quoted, skipped)
    assert "pymarkdownlnt:MD029" not in {rule for rule, _ in found_quoted}
    assert "pymarkdownlnt:MD029" in {rule for rule, _ in found_skipped}


def test_list_numbering_and_quote_spacing_render_the_same_and_are_off_unless_a_project_asks():
    """md029 and md027 flag source that renders as the writer meant (CommonMark numbers a list from
    its first item; spaces after > vanish): off by default, on when a project turns them on."""
    text = "# List\n\n1. one\n3. two\n4. three\n\n>  Two spaces.\n"
    (issues,) = linter_issues(text)
    wanted = {"pymarkdownlnt:MD029", "pymarkdownlnt:MD027"}
    assert wanted <= {i.source for i in issues}  # the linter still sees them…
    assert not wanted & {i.source for i in apply_rule_control(issues, {})}  # …the writer does not
    assert wanted <= {i.source for i in apply_rule_control(issues, {"md029": "on", "md027": "on"})}


def test_an_h1_equal_to_the_title_repeats_it_only_where_the_platform_shows_the_title():
    blog = "---\ntitle: Configuration preview\ndate: 2025-01-01\nauthor: nushell\n---\n\n# Configuration preview\n\nText.\n"
    zenn = (
        '---\ntitle: "設定のプレビュー"\nemoji: "🐢"\ntype: "tech"\ntopics: ["nushell"]\npublished: true\n---\n\n'
        "# 設定のプレビュー\n\n本文です。\n"
    )
    assert "rule:duplicate-title" not in sources("structure", blog)
    assert "rule:duplicate-title" in sources("structure", zenn)


def test_a_quoted_desu_or_a_thought_trailing_off_is_no_switch_of_style():
    plain = "".join(f"これは{n}番目の説明である。" for n in range(6))
    polite = "".join(f"これは{n}番目の説明です。" for n in range(6))
    quoted = f"# 文体\n\n{plain}\n\n先頭に来るのは「正解はXです。」だ。\n"
    musing = f"# 文体\n\n{polite}\n\nClaudeだと問題ないのではないか…。\n"
    assert "rule:mixed-style" not in sources("language_quality", quoted)
    assert "rule:mixed-style" not in sources("language_quality", musing)
    switched = f"# 文体\n\n{plain}\n\n先頭に来るのは「正解はX」です。\n"
    assert "rule:mixed-style" in sources("language_quality", switched)


def test_a_note_a_thematic_break_sets_off_may_keep_its_own_style():
    plain = "".join(f"これは{n}番目の説明である。\n\n" for n in range(6))
    preface = "# 和訳\n\nこの記事は英語の記事を翻訳したものです。\n\n---\n\n"
    postscript = "\n---\n\n読んでいただきありがとうございました。\n"
    assert "rule:mixed-style" not in sources("language_quality", preface + plain + postscript)
    # In the body, or in a long first stretch, the same sentence is a switch of style.
    body = plain + "この記事は英語の記事を翻訳したものです。\n\n" + plain
    assert "rule:mixed-style" in sources("language_quality", "# 和訳\n\n---\n\n" + body)
    long_preface = "# 和訳\n\n" + "この記事は翻訳です。\n\n" * 4 + "---\n\n" + plain * 3
    assert "rule:mixed-style" in sources("language_quality", long_preface)


def test_a_whole_sentence_in_brackets_ends_where_they_close():
    from agents.proofread.text import split_sentences

    lines = [
        (1, "It ran on the Java Virtual Machine, which was heavy."),
        (2, "(The JVM is good at scaling up, but not good at scaling down.)"),
        (3, "Even though we got good at tuning it, it was too much."),
        (4, "We tried it (or perhaps later?) with the new proxy."),
    ]
    texts = [s.text for s in split_sentences(lines, japanese=False)]
    assert texts == [
        "It ran on the Java Virtual Machine, which was heavy.",
        "(The JVM is good at scaling up, but not good at scaling down.)",
        "Even though we got good at tuning it, it was too much.",
        "We tried it (or perhaps later?) with the new proxy.",
    ]


def test_formatting_verbs_and_listed_variants_are_not_misspellings():
    text = "# Plots\n\nThe bolded line marks the mean, overlayed on the raw samples.\n"
    assert "rule:spelling" not in sources("language_quality", text)
    assert "rule:spelling" in sources("language_quality", "# Plots\n\nThe bolded line marks fourty means.\n")


def test_an_address_whose_path_is_japanese_swallows_nothing():
    slug = "https://ja.stackoverflow.com/questions/65708/rustのresultについての質問-errore0277-the-size"
    assert "rule:bare-url-swallow" not in sources("markdown_format", f"# 参考\n\n[^1]: {slug}\n\n本文[^1]。\n")
    prose = "# 参考\n\n詳しくは https://example.com/docsを参照してください。\n"
    assert "rule:bare-url-swallow" in sources("markdown_format", prose)


def test_a_paragraph_that_starts_with_a_version_number_is_no_list_item():
    text = "# v2\n\n## 次は何か\n\n2.xの旅はまだ始まったばかりです。次の機能に焦点を当てます：\n- HTML\n- Vue\n"
    assert "rule:list-marker-space" not in sources("markdown_format", text)
    broken = "# v2\n\n## 次は何か\n\n1.項目がつながっています。\n- HTML\n- Vue\n"
    assert "rule:list-marker-space" in sources("markdown_format", broken)


def test_bundler_and_resp_are_words_of_technical_writing():
    text = "# Builds\n\nEach bundler optimises each runtime (resp. entrypoint) on its own.\n"
    assert "rule:spelling" not in sources("language_quality", text)


def test_a_key_naming_where_a_secret_is_kept_is_no_hardcoded_credential():
    manifest = "# VM\n\n```yaml\nvolumes:\n  - secret:\n      secretName: my-pub-key\n```\n"
    assert "rule:hardcoded-credential" not in sources("code_quality", manifest)
    leaked = "# VM\n\n```yaml\nstringData:\n  secretKey: correcthorsebattery\n```\n"
    assert "rule:hardcoded-credential" in sources("code_quality", leaked)


def test_shell_names_and_british_spellings_inside_a_word_are_not_misspellings():
    text = "# Shells\n\nThe prompt comes from tcsh, and the behavioural change is favourable.\n"
    assert "rule:spelling" not in sources("language_quality", text)
    assert "rule:spelling" in sources("language_quality", "# Shells\n\nThere are fourty shells.\n")


def test_words_either_side_of_a_code_span_or_a_hyphen_are_not_doubled():
    text = (
        "# Release\n\nWe moved from `v0.55.0` to `v0.56.0` to fix the parser.\n\n"
        "Enable the add-on on the Policies page.\n\nThe fix is is in, and the\nthe docs follow.\n"
    )
    found = sorted(issue.problem for issue in run("language_quality", text) if issue.source == "rule:doubled-word")
    # “is is” typed twice; “the” at the end of a line and again at the start of the next.
    assert found == ["Doubled word: “is is”.", "Doubled word: “the the”."], found


def test_a_public_contact_address_is_no_leak():
    text = (
        "# Support\n\nReach out at [team@babeljs.io](mailto:team@babeljs.io) or security@tauri.app, "
        "or write to <mailto:taro.yamada@gmail.com>.\n"
    )
    assert "rule:email" not in sources("privacy", text)
    assert "rule:email" in sources("privacy", "# Config\n\ngit config user.email taro.yamada@gmail.com\n")


def test_a_side_effect_import_or_a_bare_require_is_javascript():
    for code in ("global.test = 'test'\nimport './test'\n", "'use strict';\n\nrequire('./test');\nglobal.test = 'test';\n"):
        found = run("code_quality", f"# Modules\n\nThe code:\n\n```\n{code}```\n")
        assert any("javascript" in (issue.suggestion or "") for issue in found), found


def test_sections_all_at_level_three_under_the_page_title_are_a_choice_not_a_jump():
    post = "---\ntitle: A release\n---\n\n### What is new\n\nText.\n\n#### Details\n\nText.\n\n### Thanks\n\nText.\n"
    uneven = "---\ntitle: A release\n---\n\n### What is new\n\nText.\n\n## Thanks\n\nText.\n"
    consistent, jumped = linted(post, uneven)
    assert "pymarkdownlnt:MD001" not in {source for source, _line in consistent}
    assert "pymarkdownlnt:MD001" in {source for source, _line in jumped}


def test_an_address_given_to_be_written_to_or_a_fediverse_handle_is_no_leak():
    invited = "# Help\n\nYou can mail all of us at info@example.org or me personally at taro@yamada.dev if you prefer.\n"
    handle = "# Links\n\n- [@taro@mastodon.social](https://mastodon.social/@taro)\n"
    japanese = "# 連絡先\n\n不具合はメールで taro@yamada.dev までお知らせください。\n"
    for text in (invited, handle, japanese):
        assert "rule:email" not in sources("privacy", text), text
    assert "rule:email" in sources("privacy", "# Log\n\nThe commit author was taro@yamada.dev yesterday.\n")
    assert "rule:email" in sources("privacy", "# Config\n\n```yaml\nemail: taro@yamada.dev\n```\n")


def test_a_list_of_one_word_names_is_not_spell_checked():
    names = "# Thanks\n\nThe authors of the core:\n\n- Apointos\n- reem\n- TyOverby\n- eddyb\n"
    assert "rule:spelling" not in sources("language_quality", names)
    prose = "# Thanks\n\nThe authors of the core:\n\n- Apointos wrote it\n- reem fixed the begining\n- eddyb\n"
    assert "rule:spelling" in sources("language_quality", prose)


def test_a_full_stop_inside_closing_quotes_ends_an_english_sentence():
    words = " ".join(["word"] * 26)
    straight = f'# T\n\nWe share the idea of a "{words}." It {words} too.\n'
    curly = f"# T\n\nThe paper says “{words}. {words.capitalize()}.” That is all.\n"
    for text in (straight, curly):
        assert "rule:sentence-length" not in sources("language_quality", text), text
    assert "rule:sentence-length" in sources("language_quality", f'# T\n\nWe share the idea of a "{words}" and {words}.\n')


def test_mathjax_formulas_in_escaped_parentheses_are_not_prose():
    formula = r"\\( v_n(2046, 2^{52} - 1) = 2^{1024} - 2^{971} \\)"
    text = JA_HEAD + f"次に大きい値は {formula} と {formula} であり、その次に大きい値は {formula} と {formula} である。\n"
    assert "rule:sentence-length" not in sources("language_quality", text)
    spelled_out = JA_HEAD + "次に大きい値は" + "とても" * 40 + "大きい値である。\n"
    assert "rule:sentence-length" in sources("language_quality", spelled_out)


def test_an_english_passage_quoted_in_a_japanese_article_is_not_one_japanese_sentence():
    quote = " ".join(["The phrase “the Number value for (x)” means a value chosen in the following manner."] * 12)
    body = "".join(f"この節では{n}番目の値がどのように選ばれるかを日本語で説明していく。\n\n" for n in range(30))
    text = JA_HEAD + body + "仕様の原文を引用する。\n\n<blockquote lang=\"en\">\n\n  " + quote + "\n\n</blockquote>\n"
    assert "rule:sentence-length" not in sources("language_quality", text)


def test_wo_tsujite_is_a_compound_particle():
    text = JA_HEAD + "各ファイルの情報をサーバを通じて各端末と同期します。\n"
    assert "rule:doubled-particle" not in sources("language_quality", text)
    assert "rule:doubled-particle" in sources("language_quality", JA_HEAD + "各ファイルの情報をサーバを送ります。\n")


def test_informal_words_chosen_on_purpose_are_not_misspellings():
    text = "# Notes\n\nA little work later and voila, it can be done in a bajillion ways; we smush the nodes.\n"
    assert "rule:spelling" not in sources("language_quality", text)


def test_a_hashtag_list_item_and_spaces_in_alt_text_are_not_markdown_faults():
    text = "# T\n\nText here.\n\n![ 図2: 隠れたコスト ](/a.png)\n\nSee [ the link ](https://x.y) now.\n\n- #DeveloperExperience タグで\n- other\n"
    (found,) = linted(text)
    assert ("pymarkdownlnt:MD039", 7) in found  # the link's visible text still counts
    assert ("pymarkdownlnt:MD039", 5) not in found and ("pymarkdownlnt:MD018", 9) not in found


def test_inflections_compounds_and_tool_names_are_words():
    text = (
        "# Notes\n\nThe parser attaches a program to each file; wakeups propagate between tasks. "
        "It is easy to onboard, and htop or tracee show what runs.\n"
    )
    assert "rule:spelling" not in sources("language_quality", text)
    assert "rule:spelling" in sources("language_quality", "# Notes\n\nWe enabled it in the lastest versions.\n")


def test_an_array_type_in_link_text_is_no_reversed_link_and_a_calendar_id_no_address():
    (found,) = linted("# Issues\n\n- [Allow the option to be (true | string)[]?](https://example.com/issues/1)\n")
    assert "pymarkdownlnt:MD011" not in {source for source, _line in found}
    calendar = "# Call\n\nJoin the [weekly call](https://calendar.google.com/embed?src=c_6cm5hud8@group.calendar.google.com).\n"
    assert "rule:email" not in sources("privacy", calendar)



def test_tables_touching_a_heading_or_a_fence_render_and_are_not_reported_by_default():
    """md058 fires only beside a heading or a fence, where the table renders; the table that runs
    into text (its next line taken as a row) is reported as such (table-run-in)."""
    table = "| Key | Description |\n| --- | --- |\n| a | b |\n"
    text = "# T\n\nText.\n\n#### Configuration\n" + table + "```\nx\n```\n\nSome text.\n\n" + table + "More text.\n"
    (found,) = linter_issues(text)
    assert {(i.source, i.line_start) for i in found} >= {("pymarkdownlnt:MD058", 6), ("rule:table-run-in", 18)}
    kept = {(i.source, i.line_start) for i in apply_rule_control(found, {})}
    assert ("rule:table-run-in", 18) in kept and not {rule for rule, _ in kept} & {"pymarkdownlnt:MD058"}
    assert ("pymarkdownlnt:MD058", 6) in {(i.source, i.line_start) for i in apply_rule_control(found, {"md058": "on"})}


def test_an_enumeration_of_terms_counts_as_one_unit_in_a_japanese_sentence():
    terms = "、".join(["トゥート", "ブースト", "メンション", "フォロー", "ハッシュタグ", "インスタンス", "タイムライン", "リモートフォロー",
                     "ローカルタイムライン", "連合タイムライン", "通知", "お気に入り"])
    listed = JA_HEAD + f"この記事では、{terms}といった用語の意味を、はじめて使う人に向けてひとつずつ順番に説明します。\n"
    assert "rule:sentence-length" not in sources("language_quality", listed)
    clauses = JA_HEAD + (
        "この記事では、サービスの料金が増えるにつれて、どの組織のどのリポジトリでいくらかかっているかを"
        "正確に把握するのが難しくなってくるので、請求の明細を取り出して集計し、グラフにして眺められるようにする"
        "仕組みを、手元で動かせる小さなスクリプトとしてまとめていきます。\n"
    )
    assert "rule:sentence-length" in sources("language_quality", clauses)


def test_settings_that_name_hold_or_hash_a_secret_are_no_secret():
    public = (
        '# Auth\n\n```python\nAUTH0_DOMAIN = "pillarpointstewards.us.auth0.com"\n'
        'AUTH0_CLIENT_ID = "DLXBMPbtamC2STUyV7R6OFJFDsSTHqEA"\n```\n\n'
        "```text\nMountable secrets:   mykubevirtrunner-token-pd2mq\n```\n\n"
        "```yaml\npasswd: $6$JXbc3063IJir.e5h$ypMlYScNMlUtvQ8Il1ldZi/mat7wXTiRioGx6TQm\n"
        "password: $PASSWORD\n```\n\n"
        '```xml\n<component publicKeyToken="31bf3856ad364e35" language="neutral">\n```\n\n'
        "```js\nconst apiKey = 'notion_api_key'\n```\n"
    )
    assert not {"rule:assigned-secret", "rule:hardcoded-credential"} & (sources("privacy", public) | sources("code_quality", public))
    leaked = '# Auth\n\n```python\nAUTH0_CLIENT_SECRET = "aZ9xQ2mK7pL4vB8nR1tY6uW3eH5jD0gF"\n```\n'
    assert "rule:assigned-secret" in sources("privacy", leaked)


def test_an_empty_quote_line_with_trailing_space_is_no_markdown_fault():
    text = "# T\n\nText.\n\n> First line of the quote.\n> \n> Second paragraph.\n\n>    Four spaces.\n\n>Simple.\n  Lightweight.\n"
    (found,) = linted(text)
    assert ("pymarkdownlnt:MD027", 6) not in found and ("pymarkdownlnt:MD027", 9) in found
    assert ("pymarkdownlnt:MD027", 12) not in found  # a lazy continuation line has no > at all


def test_shouted_tripled_and_mathematical_repetitions_are_not_doubled_words():
    for deliberate in ("That was after HEAVY HEAVY testing.", 'An expert says "ah ah ah!" at once.',
                       "The bound is O(log n / log log n) for the tour."):
        assert "rule:doubled-word" not in sources("language_quality", f"# Notes\n\n{deliberate}\n"), deliberate
    assert "rule:doubled-word" in sources("language_quality", "# Notes\n\nThe fix is is in.\n")


def test_no_headings_only_when_lines_of_text_title_the_sections():
    essay = "# \n\n" + "".join(f"Paragraph {n} of an essay that runs on without any section.\n\n" for n in range(24))
    assert "rule:no-headings" not in sources("structure", essay.replace("# \n\n", ""))
    titled = "".join(
        f"**Part {n}**\n\n" + "".join(f"Sentence {m} of part {n}, a paragraph line.\n" for m in range(8)) + "\n"
        for n in range(3)
    )
    issues = [i for i in run("structure", titled) if i.source == "rule:no-headings"]
    assert len(issues) == 1 and "lines 1, 12, 23" in issues[0].problem
    lead_ins = titled.replace("**Part 1**", "**Finally:**").replace("**Part 2**", "**Why does it matter?**")
    assert "rule:no-headings" not in sources("structure", lead_ins)
    # A title glued under the last sentence of a paragraph runs into it: still a title.
    glued = titled.replace("**Part 1**\n\n", "Part one results\n\n").replace("\n\nPart one", "\nPart one")
    issues = [i for i in run("structure", glued) if i.source == "rule:no-headings"]
    assert len(issues) == 1 and "lines 1, 11, 22" in issues[0].problem


def test_an_aside_before_a_link_and_math_are_no_reversed_links():
    aside = "# T\n\nText.\n\nなぜかというと、(直接言及している文章はないので想像すると)[BVH](https://example.com/bvh)のためです。\n"
    math = "# T\n\nText.\n\n$T\\in E(K)[m]$ と書きます。\n"
    reversed_link = "# T\n\nText.\n\nSee (the docs)[https://example.com/docs] for more.\n"
    found = linted(aside, math, reversed_link)
    assert ("pymarkdownlnt:MD011", 5) not in found[0] and ("pymarkdownlnt:MD011", 5) not in found[1]
    assert ("pymarkdownlnt:MD011", 5) in found[2]


def test_wo_role_noun_ni_and_yo_wa_are_fixed_phrases():
    for fixed in ("取得したトラックを引数にプロセッサのインスタンスを生成します。", "コミットをトリガーにワークフローを実行します。",
                  "これは要は設定の問題です。"):
        assert "rule:doubled-particle" not in sources("language_quality", JA_HEAD + fixed + "\n"), fixed
    assert "rule:doubled-particle" in sources("language_quality", JA_HEAD + "数式をJavaScriptを用いて描画します。\n")


def test_a_caption_right_above_or_below_its_image_keeps_its_own_style():
    captions = (
        "ビューポート幅590pxのとき、文字色は青となる。\n![幅590pxの画面](/a.png)\n\n"
        "![幅610pxの画面](/b.png)\nビューポート幅610pxのとき、文字色は緑となる。\n\n"
    )
    assert "rule:mixed-style" not in sources("language_quality", MIXED + captions)
    apart = "ビューポート幅590pxのとき、文字色は青となる。\n\n![幅590pxの画面](/a.png)\n"
    assert "rule:mixed-style" in sources("language_quality", MIXED + apart)


def test_a_shell_heredoc_under_a_yaml_tag_is_no_yaml_syntax_error():
    heredoc = "# Apply\n\n```yaml\ncat <<EOF | vela up -f -\n# YAML begins\napiVersion: v1\nkind: Application\nEOF\n```\n"
    assert "rule:syntax-yaml" not in sources("code_quality", heredoc)
    broken = "# Apply\n\n```yaml\napiVersion: v1\nkind: [Application\n```\n"
    assert "rule:syntax-yaml" in sources("code_quality", broken)


def test_accessors_are_a_word_of_programming_prose():
    assert "rule:spelling" not in sources("language_quality", "# Notes\n\nThe module provides accessors for the memory.\n")


def test_concessive_yo_ga_is_not_a_conjunctive_ga():
    concessive = JA_HEAD + "STDIO でつなごうが、HTTP でつなごうが、上のロジックは同じように動きます。\n"
    assert "rule:doubled-conjunctive-ga" not in sources("language_quality", concessive)
    contrast = JA_HEAD + "設定はできますが、画像は一つですが、スプライトを作成しました。\n"
    assert "rule:doubled-conjunctive-ga" in sources("language_quality", contrast)


def test_json_excerpts_jsonc_and_yaml_aliases_from_elsewhere_are_no_syntax_errors():
    members = '# Style\n\n```json\n"symbol-placement": "line"\n"symbol-spacing": 256\n```\n'
    jsonc = '# MCP\n\n```json\n{\n  "timeouts": { "requestMs": 60000 } // default 30000\n}\n```\n'
    alias = "# Pipeline\n\n```yaml\njobs:\n- name: unit\n  config:\n    << : *task-config\n```\n"
    for text in (members, jsonc, alias):
        assert not {"rule:syntax-json", "rule:syntax-yaml"} & sources("code_quality", text), text
    assert "rule:syntax-json" in sources("code_quality", '# MCP\n\n```json\n{\n  "url": "http://x.example",\n}\n```\n')


def test_link_syntax_inside_a_code_span_is_no_reversed_link():
    (found,) = linted("# T\n\nText.\n\nまず `open(0).read().strip()[::-2]` というものを使った。\n")
    assert ("pymarkdownlnt:MD011", 5) not in found


def test_bulleted_lines_and_etc_at_a_line_end_split_sentences():
    bullets = JA_HEAD + "".join(
        f"■ {n}つめのPR: お気に入りを保存するテーブルを追加するマイグレーションと、それを操作する層の実装とテスト\n" for n in (1, 2, 3)
    )
    assert "rule:sentence-length" not in sources("language_quality", bullets)
    etc = (
        "# Groups\n\nThe GroupBy API implements the split-apply-combine pattern which applies to a very large "
        "number of problems: histogramming, compositing, climatological averaging, resampling, etc.\n"
        "The first step in doing so is converting group labels of arbitrary type to integer codes for later.\n"
    )
    assert "rule:sentence-length" not in sources("language_quality", etc)


def test_a_heading_inside_a_quote_opens_no_section():
    text = JA_HEAD + "本文です。\n\n### なぜ動くようになったのか？\n\n>### import statements\n> 引用した説明の文章です。\n\n## 次\n\n本文です。\n"
    assert "rule:empty-section" not in sources("structure", text)
    assert "rule:empty-section" in sources("structure", JA_HEAD + "本文です。\n\n### 空の節\n\n## 次\n\n本文です。\n")


def test_templated_and_compositing_are_words():
    text = "# Notes\n\nThe templated file is used for histogramming and compositing the data.\n"
    assert "rule:spelling" not in sources("language_quality", text)


def test_checking_python_syntax_raises_no_warning():
    text = '# Code\n\n```python\nvalue = 0x1for x in []\npattern = "\\d+"\n```\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run("code_quality", text)
    assert not [w for w in caught if issubclass(w.category, SyntaxWarning)]


def test_array_indexing_and_changelog_tags_are_no_reference_links():
    text = (
        "# Notes\n\nbashには2次元配列がないので、board[v][h]はevalで実現しました。\n\n"
        "- **ADDED** [pubsub][rabbitmq]add support for routing keys\n\nRead [part two][part 2] next.\n"
    )
    assert [i.line_start for i in run("link", text) if i.source == "rule:undefined-reference"] == [7]


def test_a_diff_of_a_file_and_json_under_a_wrong_tag_are_not_flagged():
    diff = "# Change\n\n```diff:config/packages/Post.yaml\n-  old: 1\n+  new: 2\n```\n"
    assert "rule:code-filename" not in sources("code_quality", diff)
    other = "# Config\n\n```json\nlogging {\n  level = \"info\"\n}\n```\n"
    changed = "# CI\n\n```yaml\njobs:\n  test:\n-    timeout-minutes: 10\n+    timeout-minutes: 11\n```\n"
    assert not {"rule:syntax-json", "rule:syntax-yaml"} & (sources("code_quality", other) | sources("code_quality", changed))


def test_the_elixir_pipe_operator_is_no_table_and_math_subscripts_are_no_emphasis():
    pipes = "# Elixir\n\n|> [002 型](https://example.com/2)\n|> [003 関数](https://example.com/3)\n"
    assert "rule:table-delimiter" not in sources("markdown_format", pipes)
    assert "rule:table-delimiter" in sources("markdown_format", "# T\n\n| a | b |\n| 1 | 2 |\n")
    (found,) = linted("# T\n\nText.\n\n任意のベクトル $x _ 1 b _ 1 + x _ 2 b _ 2$ について考える。\n")
    assert ("pymarkdownlnt:MD037", 5) not in found


def test_programme_is_a_british_spelling():
    assert "rule:spelling" not in sources("language_quality", "# Notes\n\nI joined the mentorship programme last year.\n")
    assert "rule:spelling" in sources("language_quality", "# Notes\n\nI joined the mentorship programe last year.\n")


def test_a_closing_aside_does_not_decide_the_style_and_mataha_is_no_topic():
    aside = JA_HEAD + MIXED.replace(JA_HEAD, "") + (
        "仕組みを作ることも考えました（既存ツールが見つかりました：[アイコンを変換して使用する](https://example.com)）。\n"
    )
    assert "rule:mixed-style" not in sources("language_quality", aside)
    assert "rule:mixed-style" in sources("language_quality", MIXED + "仕組みを作ることも考えた（既存ツールが見つかりました）。\n")
    conjunction = JA_HEAD + "または私は今回の実装をするに当たり、以下のサービスを使いました。\n"
    assert "rule:doubled-particle" not in sources("language_quality", conjunction)


def test_a_command_that_runs_python_under_a_python_tag_is_no_syntax_error():
    command = "# Run\n\n```python\nPUBSUB_EMULATOR_HOST=localhost:8681 python stream.py\n```\n"
    assert "rule:syntax-python" not in sources("code_quality", command)
    assert "rule:syntax-python" in sources("code_quality", "# Run\n\n```python\ndef f(:\n    pass\n```\n")
    assert "rule:spelling" not in sources("language_quality", "# Index\n\nA private index such as devpi works too.\n")


def test_code_assigned_to_a_secret_name_and_self_named_stand_ins_are_no_secrets():
    code = (
        "# Auth\n\n```ts\nconst token = authService.createToken(account, req.url)\n"
        "channelSecret: config.channelSecret.value(),\ntoken: vscode.CancellationToken\n"
        "self.tokenizer = T5Tokenizer.from_pretrained(name, is_fast=True)\n"
        "passwordHash: \"password123\",\ntoken: 'token1234',\n```\n"
    )
    assert not {"rule:assigned-secret", "rule:hardcoded-credential"} & (sources("privacy", code) | sources("code_quality", code))
    leaked = '# Auth\n\n```ts\nconst token = "ghx9Q2mK7pL4vB8nR1tY6uW3eH5jD0gFz"\n```\n'
    assert "rule:assigned-secret" in sources("privacy", leaked)


def test_a_shortcode_under_a_table_and_a_row_closed_before_an_empty_last_cell_are_fine():
    text = (
        "# T\n\nText.\n\n{{< table >}}\n|Do|Don't|\n|--- |--- |\n|Starts a proxy.|Will start a proxy.|\n{{< /table >}}\n\n"
        " Name | Type | Default \n-----|-----|-----\n size | int |  \n mode | string | fast \n\n"
        "| A | B | C |\n|---|---|---|\n| 1 | 2 |\n"
    )
    (found,) = linted(text)
    md056 = sorted(line for rule, line in found if rule == "pymarkdownlnt:MD056")
    assert md056 == [18]


def test_sample_settings_and_object_names_are_no_secrets():
    text = (
        '# Env\n\n```sh\nSAMPLE_TOKEN="qwertyuiopasdfghjklzxcvbnm"\n```\n\n'
        "```yaml\nauth:\n  secret: my-googlecloud-service-account\n```\n"
    )
    assert not {"rule:assigned-secret", "rule:hardcoded-credential"} & (sources("privacy", text) | sources("code_quality", text))
    assert "rule:hardcoded-credential" in sources("code_quality", "# Env\n\n```yaml\nauth:\n  secretKey: correcthorsebattery\n```\n")


def test_capitalised_names_and_aligned_columns_are_no_doubled_words():
    for text in ("Thanks to Zhu Zhu and Michael Michael for the review.", "create robot       robot account here."):
        assert "rule:doubled-word" not in sources("language_quality", f"# Notes\n\n{text}\n"), text
    assert "rule:doubled-word" in sources("language_quality", "# Notes\n\nWe can can apply it.\n")


def test_words_of_systems_prose_are_words():
    text = "# Notes\n\nThe querier uses a stat call, modulo the queueing, for lexing nullish rootful conmon writev output.\n"
    assert "rule:spelling" not in sources("language_quality", text)


def test_a_service_account_address_is_no_secret():
    text = "# Sub\n\n```sh\ngcloud pubsub subscriptions create s \\\n--push-auth-service-account=9999999999-compute@developer.gserviceaccount.com\n```\n"
    assert "rule:assigned-secret" not in sources("privacy", text)


def test_a_title_in_a_leading_comment_header_counts():
    body = "".join(f"本文の{n}行目です。\n\n" for n in range(12))
    header = "<!--\ntitle:   TypeScript の Union 型から Tuple 型へ変換\ntags:    TypeScript\nprivate: false\n-->\n\n"
    assert "rule:no-title" not in sources("structure", header + body)
    assert "rule:no-title" in sources("structure", body)


def test_an_omitted_marker_in_a_config_excerpt_is_no_syntax_error():
    text = '# Cargo\n\n```toml\n{{ 省略 }}\n\n[dependencies]\nserde = "1"\n```\n'
    assert "rule:syntax-toml" not in sources("code_quality", text)


def test_a_polite_introduction_to_a_plain_article_is_its_own_register():
    intro = "".join(f"この記事は{n}番目の話題を紹介するためのものです。\n\n" for n in range(3))
    body = "".join(f"## 本文{m}\n\n" + "".join(f"この設定は{n}番目の項目を変更する。\n\n" for n in range(3)) for m in (1, 2))
    assert "rule:mixed-style" not in sources("language_quality", intro + body)  # the introduction opens the article
    slipped = body + "これは便利な機能です。\n"
    assert "rule:mixed-style" in sources("language_quality", intro + slipped)


def test_a_name_opening_with_ha_is_no_particle_and_rerank_is_a_word():
    name = JA_HEAD + "はたらこマガジンは、以下の技術スタックで開発を行っています。\n"
    assert "rule:doubled-particle" not in sources("language_quality", name)
    assert "rule:spelling" not in sources("language_quality", "# Search\n\nWe rerank the top candidates.\n")
    assert "rule:spelling" in sources("language_quality", "# Search\n\nThe desing is done.\n")


def test_the_full_width_full_stop_ends_a_japanese_sentence():
    paragraph = JA_HEAD + "".join(f"図から，様々な企業から{n}番目のモデルが短い間隔でリリースされていることがわかります．" for n in range(4)) + "\n"
    assert "rule:sentence-length" not in sources("language_quality", paragraph)
    one = JA_HEAD + "，".join(f"図から様々な企業から{n}番目のモデルが短い間隔でリリースされていること" for n in range(4)) + "がわかります．\n"
    assert "rule:sentence-length" in sources("language_quality", one)


def test_a_url_as_link_text_and_a_paragraph_in_brackets_split_sentences():
    link = (
        "# Bench\n\nThe [https://speed.pypy.org](https://speed.pypy.org) site has been running the suite since 2010.\n"
        "Our first benchmarking machine was called tannit, and it faithfully ran the suite from May 2010 on.\n"
        "For a brief period in the middle we had a machine called speed-python, but tannit was the standard.\n"
    )
    aside = (
        "# JIT\n\n(This is really a side point for the rest of the blog post, but since the question came up "
        "I wanted to clarify it: operations on integers are not all the same. The trace operations always "
        "operate on machine words. The Python int type supports arbitrarily large integers, and PyPy lowers them.)\n"
    )
    for text in (link, aside):
        assert "rule:sentence-length" not in sources("language_quality", text), text[:30]


def test_a_nikola_metadata_comment_gives_the_title():
    body = "".join(f"Paragraph {n} of the post, which explains one more detail of the runner.\n\n" for n in range(12))
    header = "<!--\n.. title: A new benchmark runner for PyPy\n.. slug: benchmarker2-for-pypy\n.. date: 2024-01-03\n-->\n\n"
    assert "rule:no-title" not in sources("structure", header + body)


def test_bracketed_tags_in_an_article_without_definitions_are_no_references():
    tags = "# Laravel\n\n## [変更][インパクト低] The Application Contract\n\n本文です。\n"
    assert "rule:undefined-reference" not in sources("link", tags)
    for linked in ("See [the guide][1] for more.", "See [guide][1] for more.", "Read [part two][part 2] next."):
        assert "rule:undefined-reference" in sources("link", f"# Links\n\n{linked}\n"), linked
    defined = "# Links\n\nSee [the guide][guide] and [the spec][spec].\n\n[guide]: https://example.com/guide\n"
    assert lines("link", defined, "rule:undefined-reference") == [3]


def test_a_time_noun_doubled_for_emphasis_is_no_doubled_word():
    assert "rule:doubled-word" not in sources("language_quality", JA_HEAD + "でも毎回毎回こんな型を作るのは大変です。\n")
    assert "rule:doubled-word" in sources("language_quality", JA_HEAD + "ネットワークははデフォルトのモードです。\n")


def test_an_emoji_newer_than_pythons_unicode_tables_is_one_emoji():
    front = '---\ntitle: "Go を試す"\nemoji: "{}"\ntype: "tech"\ntopics: ["go"]\npublished: true\n---\n\n本文です。\n'
    assert "rule:zenn-emoji" not in sources("structure", front.format("\U0001fae8"))
    assert "rule:zenn-emoji" in sources("structure", front.format(":Kubernetes:"))


def test_a_value_that_spells_its_own_name_is_no_secret():
    parameters = '# SSM\n\n```ts\nconst p = {\n  slackBotToken: "/singi-bot/slackBotToken",\n};\n```\n'
    kotlin = "# Auth0\n\n```kotlin\nclass Gateway(\n    private val auth0Configuration: Auth0Configuration\n)\n```\n"
    for text in (parameters, kotlin):
        assert "rule:assigned-secret" not in sources("privacy", text), text
    leaked = '# SSM\n\n```ts\nconst p = {\n  slackBotToken: "xq7Rk2LmP9sVt4Wz8YbN3cJd",\n};\n```\n'
    assert "rule:assigned-secret" in sources("privacy", leaked)


def test_bold_markers_inside_a_code_span_that_wraps_are_not_bold():
    wrapped = "# Ints\n\nthe most negative one, and `9223372036854775807 == 2 ** 63 -\n1` is the most positive one.\n"
    assert "rule:strong-flanking" not in sources("markdown_format", wrapped)
    glued = "# Day\n\nUber hosted our Community Day**,** an opportunity to meet.\n"
    assert "rule:strong-flanking" in sources("markdown_format", glued)


def test_tool_and_type_names_of_systems_prose_are_words():
    for text in ("CPython ints are bigger.", "Add invalidation for the umount API.", "We run uvicorn behind the proxy."):
        assert "rule:spelling" not in sources("language_quality", f"# Notes\n\n{text}\n"), text


def test_lines_of_names_are_items_not_one_sentence():
    authors = "# Paper\n\n## Authors\n\n" + "".join(
        f"Author Number{n}, Dalian University of Technology\n" for n in range(9)
    )
    assert "rule:sentence-length" not in sources("language_quality", authors)
    wrapped = "# Notes\n\n" + "".join(f"and then clause number {n} of the sentence goes on\n" for n in range(9)) + "to its end.\n"
    assert "rule:sentence-length" in sources("language_quality", wrapped)


def test_a_rust_attribute_line_and_a_product_are_no_markdown_slips():
    attribute, slip, product, emphasis = linted(
        JA_HEAD + "## 属性\n\n#[error(\"…\")]\n\nこの属性はメッセージを実装します。\n",
        JA_HEAD + "#見出しのつもり\n\n本文です。\n",
        "# Speed\n\nRunning it is slow, since\nit performs 7866 * 1024 * 1024 float operations.\n",
        "# Speed\n\nThis is * important * to know.\n",
    )
    assert ("pymarkdownlnt:MD018", 5) not in attribute and ("pymarkdownlnt:MD018", 3) in slip
    assert ("pymarkdownlnt:MD037", 4) not in product and ("pymarkdownlnt:MD037", 3) in emphasis


def test_output_under_a_label_in_words_needs_no_language():
    output = JA_HEAD + "実行すると次のように表示されます。\n\n```:出力画面\n半沢直樹\n```\n"
    assert "rule:code-language" not in sources("code_quality", output)
    for named in ("```:Racket\n(define x 1)\n```", "```: ./ssh/config\nHost example\n```", "```:設定.yml\na: 1\n```"):
        assert "rule:code-language" in sources("code_quality", f"{JA_HEAD}設定です。\n\n{named}\n"), named


def test_an_expired_jwt_is_no_leak():
    import base64
    import json

    def token(claims: dict) -> str:
        part = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
        return f"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.{part}.6GTLE66v6L6uagU7vt9UsS_gs3f6G5z47maAkRF9cok"

    def article(jwt: str) -> str:
        return f'# Auth\n\n```console\ncurl http://localhost:3000/profile -H "Authorization: Bearer {jwt}"\n```\n'

    expired = token({"username": "testuser", "iat": 1667745585, "exp": 1667746785})
    assert "rule:jwt" not in sources("privacy", article(expired))
    for live in (token({"username": "testuser", "exp": 4102444800}), token({"sub": "1234567890", "name": "John"})):
        assert "rule:jwt" in sources("privacy", article(live))


def test_a_placeholder_in_base64_is_no_secret():
    placeholder = "# Jira\n\n```bash\n$ export ATLASSIAN_TOKEN=a251dEBleGFtcGxlLmNvbToxMjM0NTZhYmNkZWY=\n```\n"
    assert "rule:assigned-secret" not in sources("privacy", placeholder)  # knut@example.com:123456abcdef
    real = "# Jira\n\n```bash\n$ export ATLASSIAN_TOKEN=ATATT3xFfGF0q9Zr7LmQ2vK8sWbN4pYd1Hc6\n```\n"
    assert "rule:assigned-secret" in sources("privacy", real)


def test_a_hard_line_break_ends_a_japanese_sentence():
    first = "鍵ペアを作成し、ingressにtlsの設定を追加してhttps通信ができるようにし、無事にArgoCDのログインに成功できた"
    second = "後から知ったことだが、NGINX Ingress Controllerはデフォルトで80と443でLISTENしているそうなので、tlsの設定追加は必須ではなかった"
    assert "rule:sentence-length" not in sources("language_quality", f"{JA_HEAD}{first}  \n{second}\n")
    assert "rule:sentence-length" in sources("language_quality", f"{JA_HEAD}{first}、{second}。\n")
    rest = "短期的な圧力が最前線の開発者に直撃して品質を下げ" * 5  # one sentence broken after its comma
    assert "rule:sentence-length" in sources("language_quality", f"{JA_HEAD}問題の本質を一言で言うと、  \n{rest}るという構造です。\n")


def test_a_one_line_polite_note_before_the_first_heading_is_its_own_register():
    body = "".join(f"## 本文{m}\n\n" + "".join(f"この設定は{n}番目の項目を変更する。\n\n" for n in range(3)) for m in (1, 2))
    note = "フルコードはリポジトリにあります。\n\n"
    assert "rule:mixed-style" not in sources("language_quality", note + body)
    mixed = "フルコードはリポジトリにあります。今回は拡散マテリアルを実装する。\n\n"
    assert "rule:mixed-style" in sources("language_quality", mixed + body)  # a switch inside the introduction


def test_a_short_section_wholly_in_the_other_style_is_its_own_register():
    """Terse definitions under their own heading (「…取り込んでいく。」) in a です/ます article are a
    register the writer chose; the same sentence beside polite ones in one section is a slip."""
    polite = "".join(f"## 手順{m}\n\n" + "".join(f"この設定で{n}番目の項目を変更します。\n\n" for n in range(3)) for m in (1, 2))
    terms = "## 用語\n\nリベースは履歴を一本につなぎ直す操作。\n\nマージは二つの履歴を合体する。\n\n"
    assert "rule:mixed-style" not in sources("language_quality", "# たいとる\n\n" + polite + terms)
    slipped = "## 用語\n\nリベースは履歴を一本につなぎ直す操作です。\n\nマージは二つの履歴を合体する。\n\n"
    assert lines("language_quality", "# たいとる\n\n" + polite + slipped, "rule:mixed-style") == [23]


def test_excerpts_and_toml_under_a_yaml_tag_are_no_syntax_errors():
    toml = '# Catalog\n\n```yaml\n[versions]\n# analytics\ngoogle-analytics = "16.0.8"\n[libraries]\nanalytics = { module = "com.google:analytics", version.ref = "google-analytics" }\n```\n'
    indented = "# Strategy\n\n```python\n        self.I(\n\t\ttalib.CDS3BLACKCROWS,\n                self.data.Open,\n        )\n```\n"
    dots = "# Loop\n\n```python\nfor x in xs:\n    print(x)\n・・・\n```\n"
    for text in (toml, indented, dots):
        assert not {"rule:syntax-yaml", "rule:syntax-python"} & sources("code_quality", text), text[:20]
    assert "rule:syntax-yaml" in sources("code_quality", "# Bad\n\n```yaml\nkey: [unclosed\n```\n")
    assert "rule:syntax-python" in sources("code_quality", "# Bad\n\n```python\ndef f(:\n    pass\n```\n")


def test_a_placeholder_host_is_no_link_and_notsecure_no_credential():
    host = "# Superset\n\n- https://{supersetサーバーのIPアドレス}:8088\n"
    assert not {"rule:malformed-url", "rule:bare-url-swallow"} & (sources("link", host) | sources("markdown_format", host))
    sample = '# Certs\n\n```csharp\nvar certPassword = "notsecure";\n```\n'
    assert "rule:hardcoded-credential" not in sources("code_quality", sample)
    for text in ("Images accumulate metadata and other cruft.", "The modular synth artist streams live."):
        assert "rule:spelling" not in sources("language_quality", f"# Notes\n\n{text}\n"), text


def test_aruaru_is_one_colloquial_word():
    assert "rule:doubled-word" not in sources("language_quality", JA_HEAD + "タブが多すぎるのはchromeあるあるだと思います。\n")
    assert "rule:doubled-word" in sources("language_quality", JA_HEAD + "設定をを変更すると動きます。\n")


def test_an_image_captioned_right_below_needs_no_alt_text():
    captioned = (
        "# Setup\n\nPython を入れます。\n\n![](/images/python12.png)\n*私のPCにインストールされたPython3のバージョン*\n\n"
        "![](https://cdn.example.com/a.png)\n<figcaption style=\"font-size:14px\">新しいソースコード構造</figcaption>\n"
    )
    assert "rule:image-alt" not in sources("markdown_format", captioned)
    for uncaptioned in (
        "![](/images/a.png)\n\n*a paragraph of emphasis, a blank line away*\n",  # not right below
        "![](/images/a.png)\n_従来の推論、https://example.org/intro からの引用_\n",  # names only its source
        "![](/images/a.png)\nこちらのスクショは設定済みです。\n",  # a sentence, not a caption
        "See ![](/images/a.png) inline\n*caption*\n",  # the image is not alone on its line
    ):
        assert "rule:image-alt" in sources("markdown_format", "# Setup\n\n" + uncaptioned), uncaptioned


def test_an_elided_value_or_a_lone_jwt_header_is_no_secret():
    def block(value: str) -> str:
        return f'# Response\n\n```json\n{{\n  "token": "{value}",\n  "token_type": "jwt"\n}}\n```\n'

    for shown in ("eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9...", "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9", "q9Zr7LmQ2vK8sWbN4pYd1Hc6…"):
        assert "rule:assigned-secret" not in sources("privacy", block(shown)), shown
    assert "rule:assigned-secret" in sources("privacy", block("q9Zr7LmQ2vK8sWbN4pYd1Hc6xT3e"))


def test_an_ellipsis_with_a_word_for_what_was_left_out_marks_an_excerpt():
    snippet = '# Snippets\n\n```json:tsx.code-snippets\n{\n  ....省略\n  "console.log": {\n    "prefix": "log"\n  }\n}\n```\n'
    assert "rule:syntax-json" not in sources("code_quality", snippet)
    broken = '# Snippets\n\n```json\n{\n  "console.log": {\n    "prefix": "log",\n  }\n}\n```\n'
    assert "rule:syntax-json" in sources("code_quality", broken)


def test_a_block_whose_body_is_a_comment_is_a_template_not_a_syntax_error():
    template = (
        "# Handler\n\n```python\ndef handler(event, context):\n    try:\n        # Lambda で実行したい処理を実装\n"
        "    except TimeoutError:\n        logger.exception('timed out')\n```\n"
    )
    assert "rule:syntax-python" not in sources("code_quality", template)
    missing = "# Handler\n\n```python\ndef handler(event, context):\n    try:\n    except TimeoutError:\n        pass\n```\n"
    assert "rule:syntax-python" in sources("code_quality", missing)


def test_wo_katate_ni_is_a_fixed_phrase_and_tool_names_are_words():
    assert "rule:doubled-particle" not in sources("language_quality", JA_HEAD + "私はチートシートを片手に操作を覚えていきました。\n")
    english = "# Stack\n\nWe use wandb tracking, metrics in librato, and the skkeleton input method.\n"
    assert "rule:spelling" not in sources("language_quality", english)


def test_a_block_listing_several_files_is_checked_file_by_file():
    listing = (
        "# Review apps\n\n```yaml\n# in kustomization.yaml\nconfigMapGenerator:\n- envs:\n  - .env\n  name: rules\n\n"
        "# in .env : the variables the ConfigMap is made of\nARGOCD_ENV_NAMESPACE\nARGOCD_ENV_FQDN\n\n"
        "# in .replacement_ns.yaml : replace the namespace\nsource:\n  kind: ConfigMap\n```\n"
    )
    assert "rule:syntax-yaml" not in sources("code_quality", listing)
    broken = listing.replace("  kind: ConfigMap", "  kind: [ConfigMap")
    assert lines("code_quality", broken, "rule:syntax-yaml") == [16]  # the error in the YAML file is still found


def test_sections_start_at_the_first_headings_level_when_later_headings_are_higher():
    polite = "".join(f"## 手順{n}\n\nこの設定では{n}番目の値を変更します。\n\n" for n in range(3))
    plain = "## 補足\n\nこの方法は設定を一つにまとめる。\n\nデフォルトの値を使う場合も引数は不要だ。\n\n呼び出しは以下のようになる。\n\n"
    closing = "# まとめ\n\n以上の方法を紹介しました。\n\n# 参考文献\n\n公式の文書を参照しました。\n"
    assert "rule:mixed-style" not in sources("language_quality", polite + plain + closing)  # a part in its own register
    slip = polite.replace("2番目の値を変更します。", "2番目の値を変更する。") + "## 手順3\n\nこの設定で完了します。\n\n"
    assert "rule:mixed-style" in sources("language_quality", slip + plain + closing)  # 5 polite against 4 plain


def test_jekyll_highlight_blocks_are_code():
    article = (
        "---\nlayout: post\ntitle: Shell\n---\n\nThe shell:\n\n{% highlight python %}\n"
        "# the following lines are adapted from debugsqlshell\nfrom django.db.backends import utils\n"
        "{% endhighlight %}\n\nDone.\n"
    )
    parsed = parse_article(article)
    assert [(b.language, b.start_line) for b in parsed.code_blocks] == [("python", 8)]
    assert not parsed.headings  # the comment inside is code, not a heading
    assert "rule:empty-section" not in sources("structure", article)
    from agents.proofread.checkers.markdown_format import linter_view

    assert linter_view(parsed).split("\n")[7:11] == ["~~~~~python", parsed.lines[8], parsed.lines[9], "~~~~~"]


def test_a_one_label_host_with_a_port_is_a_machine_name():
    assert "rule:malformed-url" not in sources("link", "# Access\n\nPoint it to https://k3s-master:6443 instead.\n")
    assert "rule:malformed-url" in sources("link", "# Access\n\nSee https://examplecom/docs for more.\n")


def test_a_dressed_up_default_password_is_a_stand_in():
    code = '# Users\n\n```py\ncreate_user(User(username="nikawamikan", password="P@SSW0RD"))\n```\n'
    assert "rule:hardcoded-credential" not in sources("code_quality", code)
    assert "rule:hardcoded-credential" in sources("code_quality", code.replace("P@SSW0RD", "correcthorse"))
    analyzer = '# Index\n\n```json\n{\n  "tokenizer" : "standard",\n  "token_chars": "letter"\n}\n```\n'
    assert "rule:hardcoded-credential" not in sources("code_quality", analyzer)  # a tokenizer is no token


def test_python_312_type_parameters_are_not_judged_by_an_older_interpreter():
    generic = "# Generics\n\n```py\ndef hoge[T](obj: T) -> T:\n    return obj\n```\n"
    assert "rule:syntax-python" not in sources("code_quality", generic)
    assert "rule:syntax-python" in sources("code_quality", "# Broken\n\n```py\ndef json(self)\n    return 1\n```\n")


def test_skillset_is_a_word():
    assert "rule:spelling" not in sources("language_quality", "# Career\n\nWhether you want to grow your skillset or lead a team.\n")


def test_one_word_in_straight_quotes_is_a_string_mentioned():
    ngrams = '# Search\n\nThe filter turns "guidebook" into "gui", "guid", "guide", "guideb" and so on.\n'
    assert "rule:spelling" not in sources("language_quality", ngrams)
    assert "rule:spelling" in sources("language_quality", "# Search\n\nThe filter turns it into a guideb and so on.\n")


def test_a_gitconfig_under_a_yaml_tag_is_ini_not_broken_yaml():
    for snippet in ("[user]\n  name = John Doe\n  email = john@example.com", "[alias]\n\tst = status"):
        assert "rule:syntax-yaml" not in sources("code_quality", f"# Git\n\n```yaml\n{snippet}\n```\n"), snippet
    assert "rule:syntax-yaml" in sources("code_quality", "# Git\n\n```yaml\nuser:\n  name: [John\n```\n")


def test_pelican_metadata_gives_the_title():
    body = "".join(f"Paragraph {n} of the post about production bugs.\n\n" for n in range(12))
    pelican = "Title: How I hunt down errors in production\nSlug: prod-bug-hunt\nDate: 2022-05-03 12:00\n\n" + body
    assert "rule:no-title" not in sources("structure", pelican)
    assert "rule:no-title" in sources("structure", body)


def test_an_external_secrets_secret_key_is_a_name():
    manifest = (
        "# Secrets\n\n```yaml\nkind: ExternalSecret\nspec:\n  data:\n    - secretKey: retrievedpw # lookup name\n"
        "      remoteRef:\n        key: generated-grafana-db-secret\n```\n"
    )
    assert "rule:hardcoded-credential" not in sources("code_quality", manifest)
    minio = '# MinIO\n\n```yaml\nminio:\n  accessKey: admin\n  secretKey: "miniostorage"\n```\n'
    assert "rule:hardcoded-credential" in sources("code_quality", minio)


def test_escaped_asterisks_and_powers_are_no_bold_markers():
    for prose in ("辞書でx*10**9 + y とかをkeyにする。", "We're done here, right?\n\n*\\*Shrug\\**", "It takes 2**32 steps."):
        assert "rule:strong-flanking" not in sources("markdown_format", f"# Notes\n\n{prose}\n"), prose
    assert "rule:strong-flanking" in sources("markdown_format", "# Notes\n\n**履歴の足元が抜ける。**手で直す。\n")


def test_vs_code_json_allows_trailing_commas():
    tasks = '# Build\n\n```json\n{\n  "args": [\n    "${file}",\n    "-Wall",\n  ],\n}\n```\n'
    assert "rule:syntax-json" not in sources("code_quality", tasks)
    named = '# Build\n\n```json:.vscode/settings.json\n{\n  "editor.tabSize": 2,\n}\n```\n'
    assert "rule:syntax-json" not in sources("code_quality", named)
    assert "rule:syntax-json" in sources("code_quality", '# Data\n\n```json\n{\n  "args": ["-Wall",],\n}\n```\n')


def test_a_url_whose_port_is_a_word_is_a_template():
    text = "# Access\n\nVisit **http://floatingIP:port**, where floating IP is the address you allocated.\n"
    assert "rule:malformed-url" not in sources("link", text)
    assert "rule:malformed-url" in sources("link", "# Access\n\nVisit http://floatingIP:80800 now.\n")


def test_protoc_uints_and_raison_are_words():
    text = "# Kafka\n\nRun protoc on the schema; it converts uints and strings, which is its raison d'être.\n"
    assert "rule:spelling" not in sources("language_quality", text)


def test_double_underscores_inside_an_identifier_are_no_markdown():
    dialogue = '僕: 「main branch の最新 row を 5 件出して」\n\nClaude Code:\n  mcp__neon__run_sql({\n    sql: "SELECT 1"\n  })'
    assert "rule:code-language" not in sources("code_quality", f"# Use\n\n```\n{dialogue}\n```\n")
    (issue,) = [i for i in run("code_quality", "# Use\n\n```\nThis is __bold__ text.\n```\n") if i.source == "rule:code-language"]
    assert "```markdown" in issue.suggestion


def test_json_lines_are_checked_line_by_line():
    jsonl = '# Data\n\n```json:test.jsonl\n{"id":1,"nums":[1,2,null]}\n{"id":2,"nums":[]}\n```\n'
    assert "rule:syntax-json" not in sources("code_quality", jsonl)
    assert lines("code_quality", jsonl.replace('{"id":2,', '{"id":2'), "rule:syntax-json") == [5]


def test_a_pandoc_title_block_gives_the_title():
    body = "".join(f"Paragraph {n} of the yearly roundup of network simulators.\n\n" for n in range(12))
    assert "rule:no-title" not in sources("structure", "% Open-source network simulation roundup 2025\n\n" + body)
    assert "rule:no-title" in sources("structure", body)


def test_round_27_sweep_causes():
    # 要所要所 is one word, not a doubled one; a doubled particle still is
    assert "rule:doubled-word" not in sources("language_quality", JA_HEAD + "要所要所で解説していきます。\n")
    assert "rule:doubled-word" in sources("language_quality", JA_HEAD + "性能比較についてはは下記の記事で解説されています。\n")
    # Unity's YAML without its %TAG line, Drone's from_secret, a JSON shape with <placeholders>
    unity = "# Scene\n\n```yaml\n  m_IsActive: 1\n--- !u!4 &5247112485843355343\nTransform:\n  m_ObjectHideFlags: 0\n```\n"
    assert "rule:syntax-yaml" not in sources("code_quality", unity)
    drone = "# CI\n\n```yaml\nsettings:\n  password:\n    from_secret: docker_password\n```\n"
    assert "rule:hardcoded-credential" not in sources("code_quality", drone)
    shape = '# Protocol\n\n```json\n{\n  "type": "<action>",\n  "data": <any payload based on the action>\n}\n```\n'
    assert "rule:syntax-json" not in sources("code_quality", shape)
    # a Python REPL result without its prompt, and a lone `if __name__ == "__main__":`
    for snippet in ("type(a)\n<class 'int'>", "if __name__ == '__main__':"):
        assert "rule:syntax-python" not in sources("code_quality", f"# Python\n\n```python\n{snippet}\n```\n"), snippet
    assert "rule:syntax-python" in sources("code_quality", "# Python\n\n```python\nfor x in d:\n    print(x))\n```\n")


def test_other_latin_languages_and_long_thanks_lists_are_no_english_typos():
    vietnamese = "# Notes\n\nThể dục, thể thao sẽ tiết ra chất Endorphin, một trong 4 hormones hạnh phúc.\n"
    assert "rule:spelling" not in sources("language_quality", vietnamese)
    thanks = (
        "# Release\n\n> We'd like to thank everyone who reported these:\n> kevgu, oldman, christmas, brucec, scottw, "
        "fuzzyman, haibo, Seo\n> Sanghyeon, grizlupo, J. Merrill, perhaps, antont, Jason\n> Ferrara, Matt Beckius, "
        "and Davy Mitchell.\n"
    )
    assert "rule:spelling" not in sources("language_quality", thanks)
    assert "rule:spelling" not in sources("language_quality", "# Haskell\n\nThe cofree comonad pairs a value with a shape.\n")
    assert "rule:spelling" in sources("language_quality", "# Notes\n\nThe applicatio starts when the server is ready.\n")


def test_hashnode_image_alignment_is_no_space_in_the_target():
    image = '# Post\n\n![An old computer](https://cdn.hashnode.com/res/hashnode/image/upload/v1/0348.png align="center")\n'
    assert "rule:malformed-url" not in sources("link", image)
    assert [link.url for link in parse_article(image).links if link.kind == "image"] == [
        "https://cdn.hashnode.com/res/hashnode/image/upload/v1/0348.png"
    ]
    assert "rule:malformed-url" in sources("link", "# Post\n\n[docs](https://example.com/a b)\n")
    assert "rule:spelling" not in sources("language_quality", "# Apache\n\nAdd a vhost for each site; finance and pharma teams use it.\n")


def test_parallel_topics_and_a_quoted_ga_are_no_doubled_particles():
    parallel = JA_HEAD + "C#では「structは値型でclassは参照型である」と言われます。\n"
    assert "rule:doubled-particle" not in sources("language_quality", parallel)
    assert "rule:doubled-particle" in sources("language_quality", JA_HEAD + "私は彼は好きだと思います。\n")
    quoted = JA_HEAD + "ECの注文で「注文は作れたが在庫は減っていない」が許されないのと同じですが、ゲームは複雑です。\n"
    assert "rule:doubled-conjunctive-ga" not in sources("language_quality", quoted)
    contrast = JA_HEAD + "設定はできますが、画像は一つですが、スプライトを作成しました。\n"
    assert "rule:doubled-conjunctive-ga" in sources("language_quality", contrast)


def test_round_28_sweep_causes():
    # a paragraph translated into German or Spanish holds no English typos, even with few accents
    german = "# Typklassen\n\nRow-Typen werden schon lange verwendet, um Informationen darzustellen, nicht nur mit Records.\n"
    spanish = "# FFI\n\nSin embargo, muchas veces las personas no aprenden la forma de trabajar con ella.\n"
    for text in (german, spanish):
        assert "rule:spelling" not in sources("language_quality", text), text
    assert "rule:spelling" in sources("language_quality", "# Notes\n\nI fibbed slightly becuase the game is mostly 2D.\n")
    assert "rule:spelling" not in sources("language_quality", "# Perl\n\nNo parens are needed after the loop.\n")
    # struck-out text is retracted: its style and particles are no longer the writer's
    struck = JA_HEAD + "~~そんな問題をPHPとAjaxの力を借りて解決しようという話です。~~\n\n~~何より再利用性がある。~~\n"
    assert not {"rule:doubled-particle", "rule:mixed-style"} & set(sources("language_quality", struck))
    assert "rule:doubled-particle" in sources("language_quality", struck.replace("~~", ""))
    # an escaped asterisk right before the closing `**` leaves a closing run: bold renders
    assert "rule:strong-flanking" not in sources("markdown_format", "# Ideas\n\n5. **Review Publishing\\#\\***\n")
    assert "rule:strong-flanking" in sources("markdown_format", "# Ideas\n\n**Images **- easy to use options\n")
    # a link around an alt-less image: one finding, the image's (its alt text names the link)
    image_link = "# Photos\n\n[![](/images/thumb.jpg)][0]\n\n[0]: https://example.com/photo.jpg\n"
    assert "rule:empty-link-text" not in sources("link", image_link)
    assert "rule:image-alt" in sources("markdown_format", image_link)
    assert "rule:empty-link-text" in sources("link", "# Photos\n\n[](https://example.com/photo.jpg) Sepia\n")
    assert "rule:empty-link-text" in sources("link", "# Photos\n\n[ ](https://example.com/photo.jpg) Sepia\n")
    # an empty heading is reported once, not again as an empty section named 「」
    empty = "# Title\n\nIntro text here.\n\n###\n\n## Next\n\nMore text here.\n"
    found = set(sources("structure", empty)) | set(sources("markdown_format", empty))
    assert "rule:empty-heading" in found and "rule:empty-section" not in found


def test_round_29_sweep_causes():
    # 1 polite sentence against 1 plain one is no majority: the message's 「記事の大半」 would be untrue
    tied = JA_HEAD + "Google の機械学習でテキストから情報を引き出す。\n\n鍵をオンデマンドで取得します。\n"
    assert "rule:mixed-style" not in sources("language_quality", tied)
    assert "rule:mixed-style" in sources("language_quality", MIXED + "Google の機械学習でテキストから情報を引き出す。\n")
    # a Markdown skill file (front matter, then prose) under a yaml tag: only its front matter is YAML
    skill = "---\nname: publish-article\ncontext: fork  # note\n---\n\n記事を公開する手順：\n1. Lint\n3. published: true に変更\n"
    assert "rule:syntax-yaml" not in sources("code_quality", f"# Skill\n\n```yaml\n{skill}```\n")
    broken = skill.replace("context: fork", "context: [fork")
    assert "rule:syntax-yaml" in sources("code_quality", f"# Skill\n\n```yaml\n{broken}```\n")
    two_documents = "---\na: 1\n---\nb: [2\n"
    assert "rule:syntax-yaml" in sources("code_quality", f"# Docs\n\n```yaml\n{two_documents}```\n")
    # a password for a host only the cluster resolves is a tutorial's, like one for localhost
    local = "# DB\n\n```text\npostgresql://readonly:readonlypass@app-postgres-ro.app-db.svc.cluster.local:5432/app\n```\n"
    assert "rule:url-credentials" not in sources("privacy", local)
    public = local.replace("app-postgres-ro.app-db.svc.cluster.local", "db.mycompany.io")
    assert "rule:url-credentials" in sources("privacy", public)
    # ... and a link left pointing at TODO is reported like an empty one
    todo = "# Setup\n\nThe [CloudNativePG Helm Chart](TODO) is one of the cleanest approaches.\n"
    assert "rule:empty-link" in sources("link", todo)
    assert "rule:empty-link" not in sources("link", todo.replace("(TODO)", "(todo.md)"))


def test_round_30_causes():
    # a writer who types ASCII , and . for 、 and 。: each . after Japanese text ends a sentence
    first = "ここで ATE は平均処置効果の略で,介入効果を個人ごとではなく母集団全体で平均した量を指しており,しばしば使われます."
    second = "個々のサンプルでは両方を同時に観測できませんが,全体で期待値を取ることで平均的な差を近似的に捉えよう,というのが基本の考え方です."
    assert "rule:sentence-length" not in sources("language_quality", JA_HEAD + first + second + "\n")
    assert "rule:sentence-length" in sources("language_quality", JA_HEAD + first.rstrip(".") + "," + second + "\n")
    # a dot before ASCII (設定ファイル.yml) ends nothing: this long sentence stays one
    dotted = JA_HEAD + "設定ファイル.ymlに書いた値を読み込んで" * 6 + "最後に結果を表示します。\n"
    assert "rule:sentence-length" in sources("language_quality", dotted)
    # a laugh doubled on purpose
    assert "rule:doubled-word" not in sources("language_quality", "# Wasm\n\nSo feel free (har har) to call this function.\n")
    assert "rule:doubled-word" in sources("language_quality", "# Wasm\n\nSo feel free to call the the function.\n")
    # a post with no title in the file is the rule no-title, off unless a project turns it on
    untitled = run("structure", "".join(f"Paragraph {n} of a post whose title its blog keeps.\n\n" for n in range(12)))
    assert [i.source for i in untitled] == ["rule:no-title"]
    assert apply_rule_control(untitled, {}) == []
    assert [i.source for i in apply_rule_control(untitled, {"no-title": "on"})] == ["rule:no-title"]


def test_round_30_sweep_causes():
    # a URL broken onto the next line inside an HTML attribute: browsers drop the newline
    img = '# Demo\n\n<img width="370" src="https://qiita-image-store.s3.amazonaws.com/0/569056/0c6d.png\n"/>\n'
    assert "rule:malformed-url" not in sources("link", img)
    assert "rule:malformed-url" in sources("link", '# Demo\n\n<img src="https://example.com/a b.png"/>\n')
    # link reference definitions after a poem are no sentence
    poem = "# Camping\n\nA sleepy fox asked,<br>\n\"Can we camp again soon?\"\n\n" + "".join(
        f"[{n:02}]: images/baby-fox/{n:02}.png\n" for n in range(30)
    )
    assert "rule:sentence-length" not in sources("language_quality", poem)
    # a writer who ends lines, not sentences with 。: each line is a sentence
    lines = [
        "「電力会社のプラン」は「スマホの通信プラン」と非常に似ており、プランによって月額料金に差が出ます",
        "電気の質は変わらないので、なるべく「安い電力会社のプラン」を使用したいです",
        "各社にもシミュレーション機能を持つページはありますが、一括で最適なプランを出すものはないです",
        "そこで自分で作ることにしました",
        "こちらはプロンプトで指摘内容を日本語にできますが、料金が発生します",
        "軽量モデルであれば数円で済みますが、無料であればそれに越したことはないです",
    ]
    paragraphs = [f"{lines[n]}\n{lines[n + 1]}" for n in (0, 2, 4)] + ["続きは次の記事で書きます", "ここまで読んでいただきありがとうございます"]
    unstopped = JA_HEAD + "\n\n".join(paragraphs) + "\n"
    found = sources("language_quality", unstopped)
    assert not {"rule:sentence-length", "rule:doubled-conjunctive-ga"} & set(found)
    stopped = JA_HEAD + "".join(line + "、" for line in lines[:3]) + "そのまま続けます。\n"
    assert "rule:sentence-length" in sources("language_quality", stopped)


def test_round_31_sweep_causes():
    # `[//]: # (…)` is Markdown's comment idiom: repeated, it is no duplicate definition
    comments = "# Notes\n\n[//]: # ( Comments must be in parentheses. )\n[//]: # ( Another note )\n\nText.\n"
    assert not {"rule:duplicate-definition", "rule:unused-definition"} & set(sources("link", comments))
    twice = "# Notes\n\nSee [the docs][d].\n\n[d]: https://example.com/a\n[d]: https://example.com/b\n"
    assert "rule:duplicate-definition" in sources("link", twice)
    # the title line of a Hashnode backup (`## Title`, sections at `#`) is no empty section
    hashnode = "## Local File System And Directories With Python\n\n# Introduction\n\nFiles hold data.\n\n# Paths\n\nA path names a file.\n"
    assert "rule:empty-section" not in sources("structure", hashnode)
    assert "rule:empty-section" in sources("structure", "Intro text.\n\n## Empty\n\n# Paths\n\nA path names a file.\n")
    # a paragraph opened by a bold label and a colon is a labelled note in its own register
    lesson = MIXED + "**教訓 1:** `dfx new` を実行する前に、Node.js のインストールを確認する。\n"
    assert "rule:mixed-style" not in sources("language_quality", lesson)
    assert "rule:mixed-style" in sources("language_quality", lesson.replace("**教訓 1:** ", ""))
    # a request to the reader stays polite in a plain article
    plain = JA_HEAD + "".join(f"この設定は{n}番目の項目を変更する。\n\n" for n in range(4))
    assert "rule:mixed-style" not in sources("language_quality", plain + "間違いがあればご指摘お願いします。\n")
    assert "rule:mixed-style" in sources("language_quality", plain + "この設定は項目を変更します。\n")


def test_round_32_causes():
    # TouchDesigner's Textport prompt (`python >>> `): a REPL session, output after the prompts
    textport = "python >>> error1 = op(\"/project1/error1\")\npython >>> type(error1)\n<class 'td.errorDAT'>"
    assert "rule:syntax-python" not in sources("code_quality", f"# TD\n\n```python\n{textport}\n```\n")
    broken = textport.replace('op("/project1/error1")', 'op("/project1/error1"')
    assert "rule:syntax-python" in sources("code_quality", f"# TD\n\n```python\n{broken}\n```\n")


def test_round_32_sweep_causes():
    # a setext heading underlined to its own length is drawn on purpose, question or not
    drawn = "# Degree\n\nIntro.\n\nIs Statistics a Hard Degree?\n----------------------------\n\nIt depends.\n"
    assert "rule:setext-heading" not in sources("markdown_format", drawn)
    accident = "# Degree\n\nIntro.\n\nThis paragraph was meant to end before a rule.\n---\n\nIt depends.\n"
    assert "rule:setext-heading" in sources("markdown_format", accident)
    # "a A record": an article and a record type; "Ok ok": said twice on purpose
    for text in ("For this to work, we need to add a A record to the DNS entries.", "Ok ok, you are right."):
        assert "rule:doubled-word" not in sources("language_quality", f"# DNS\n\n{text}\n"), text
    assert "rule:doubled-word" in sources("language_quality", "# DNS\n\nWe need to add a a record to the DNS entries.\n")
    assert "rule:spelling" not in sources("language_quality", "# Web\n\nThis reveals lorem ipsum text and an sdist archive.\n")


def test_round_33_causes():
    idiom = "# Boost\n\nA little bit of toing and froing around the web, and I found the docs.\n"
    assert "rule:spelling" not in sources("language_quality", idiom)
    assert "rule:spelling" in sources("language_quality", idiom.replace("found", "foudn"))


def test_round_33_sweep_causes():
    # a post in Indonesian (with English words mixed in) gets no English language rules
    indonesian = (
        "Title: Ngabuburit dengan PHP\n\nhari minggu, lagi nunggu buka di kantor, sambil nunggu burning suse, bosan mau "
        "ngapain, jadi ngisi blog deh, mau cerita tentang PHP.\n\nSelain itu, aku juga make php buat generate report dengan "
        "format excel dan pdf, bikin chart juga dengan library jpgraph.\n\nMasalah lain ada pada waktu generate pdf, file yg "
        "terbentuk kan berasal dari php, jadi nggak murni file grafik.\n\nbener bener macem macem, eh dah dulu yak.\n"
    )
    assert not {"rule:spelling", "rule:doubled-word"} & set(sources("language_quality", indonesian))
    english = "# PHP\n\nI used PHP to generate reports in the the Excel format, and it worked well for the team.\n"
    assert "rule:doubled-word" in sources("language_quality", english)


def test_program_output_causes():
    # what a program printed reads as YAML; the sentence above says it is output: no tag needed
    printed = "# dbt\n\n以下のように表示されていれば成功です。\n```\nCore:\n  - installed: 1.7.13\n  - latest:    1.7.13 - Up to date!\n\nPlugins:\n  - bigquery: 1.7.7 - Up to date!\n```\n"
    assert "rule:code-language" not in sources("code_quality", printed)
    configured = printed.replace("以下のように表示されていれば成功です。", "docker-compose.ymlに以下の内容を入れます。")
    assert "rule:code-language" in sources("code_quality", configured)
    # a dunder in a traceback's path (`__init__.py`) is no Markdown bold
    trace = (
        "# pyenv\n\nAnd you might run into an error like the following!:\n\n```\nDownloading Python-3.11.4.tar.xz...\n"
        "Installing Python-3.11.4...\nTraceback (most recent call last):\n"
        '  File "/home/demo/.pyenv/versions/3.11.4/lib/python3.11/curses/__init__.py", line 13, in <module>\n'
        "    from _curses import *\nModuleNotFoundError: No module named '_curses'\n"
        "WARNING: The Python curses extension was not compiled. Missing the ncurses lib?\n```\n"
    )
    assert "rule:code-language" not in sources("code_quality", trace)
    shown = "# Bold\n\nWrite it so:\n\n```\nThis is __bold text__ in Markdown.\n```\n"
    assert "rule:code-language" in sources("code_quality", shown)


def test_round_34_causes():
    # the run-as user is a term of the field, not a misspelling of "runs"
    term = "# Docker\n\nI learned an easy way to find the runas user of an image during this process.\n"
    assert "rule:spelling" not in sources("language_quality", term)
    assert "rule:spelling" in sources("language_quality", term.replace("process", "proccess"))
    # a compound particle typed twice is a doubled word too (recall: it was missed)
    doubled = "# 拡張機能\n\nこの拡張機能は検索の参考にするというという記事を見たことがあります。\n"
    (issue,) = [i for i in run("language_quality", doubled) if i.source == "rule:doubled-word"]
    assert "というという" in issue.problem and issue.line_start == 3
    once = doubled.replace("というという", "という")
    assert "rule:doubled-word" not in sources("language_quality", once)
    quoted = "# 言葉\n\n「という」という言葉は引用を示します。\n"
    assert "rule:doubled-word" not in sources("language_quality", quoted)


def test_round_34_sweep_causes():
    # IPython captures a shell command's output with `x = !cmd`: no syntax error in a notebook cell
    cell = '# GCS\n\n```python\nPROJECT_ID = ! gcloud config get project\nPROJECT_ID = PROJECT_ID[0]\nLOCATION = "us-central1"\n```\n'
    assert "rule:syntax-python" not in sources("code_quality", cell)
    assert "rule:syntax-python" in sources("code_quality", cell.replace('"us-central1"', '"us-central1'))
    # a URL glued to a preceding letter is no autolink (GFM and linkify start one after a space or
    # punctuation), so it swallows nothing
    glued = "# Tauri\n\nポート(デフォルトはhttp://localhost:1420)にアクセスすると、画面が表示されます。\n"
    assert "rule:bare-url-swallow" not in sources("markdown_format", glued)
    spaced = glued.replace("デフォルトはhttp", "デフォルトは http")
    assert "rule:bare-url-swallow" in sources("markdown_format", spaced)
    # a title heading at the top of a file without front matter, over sections of its own level
    titled = "## 初めてのJulia体験記\n\n## 1.はじめに\n\nJuliaをインストールして基本文法を試します。\n"
    assert "rule:empty-section" not in sources("structure", titled)
    middle = "## はじめに\n\nJuliaを試します。\n\n## 空の節\n\n## まとめ\n\n試しました。\n"
    assert "rule:empty-section" in sources("structure", middle)
    # ordinary words the dictionary lacks
    for word in ("bulleted", "snark", "flyout", "launchd"):
        text = f"# Notes\n\nThe review below mentions the {word} once, and then it describes the whole setup in plain words.\n"
        assert "rule:spelling" not in sources("language_quality", text), word


def test_round_35_causes():
    # the key id in an S3 pre-signed URL a tool printed is no leaked secret (it rejected an article)
    url = "https://objects.githubusercontent.com/asset?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIWNJYAX4CSVEH53A%2F20230729%2Fus-east-1"
    printed = f"# brew\n\n```\n==> Downloading from {url}\n```\n"
    assert "rule:aws-access-key" not in sources("privacy", printed)
    assigned = "# keys\n\n```\naws_access_key_id = AKIAIWNJYAX4CSVEH53A\n```\n"
    assert "rule:aws-access-key" in sources("privacy", assigned)


def test_round_35_open_causes():
    # the spoken quoting て (for って) after a noun is no lost し; a lost し still is
    spoken = JA_HEAD + "ところで、マッチングてどういう機能なのでしょうか。\n"
    assert "rule:ja-conjugation" not in sources("language_quality", spoken)
    lost = JA_HEAD + "ここで値を指定てください。\n"
    assert "rule:ja-conjugation" in sources("language_quality", lost)
    # a 。 closing a thought quoted by て / って does not end the sentence, whose end sets its style
    quoted = MIXED + "遅れる**かもしれない**。て時点から相談します。\n"
    assert "rule:mixed-style" not in sources("language_quality", quoted)
    assert "rule:mixed-style" in sources("language_quality", MIXED + "遅れるかもしれない。時点から相談します。\n")
    # a JSON array cut after a member's comma is an excerpt; a comma before the closer is still an error
    cut = '# Data\n\n```json\n[\n  {"a": 1},\n  {"a": 2},\n```\n'
    assert "rule:syntax-json" not in sources("code_quality", cut)
    closed = '# Data\n\n```json\n[\n  {"a": 1},\n  {"a": 2},\n]\n```\n'
    assert "rule:syntax-json" in sources("code_quality", closed)


def test_round_35_sweep_causes():
    # a block "closed" by ```text: the finding points at that line and says why it does not close
    tagged = "# Example\n\nIncomplete:\n\n```text\nf (Just x) = x\n```text\n\nThe compiler says more.\n"
    found = [i for i in run("markdown_format", tagged) if i.source == "rule:unclosed-fence"]
    assert [(i.line_start, i.severity) for i in found] == [(7, "critical")]
    assert "without the language" in found[0].suggestion
    plain = "# Example\n\n```text\nf (Just x) = x\n\nThe compiler says more.\n"
    assert [i.line_start for i in run("markdown_format", plain) if i.source == "rule:unclosed-fence"] == [3]
    # lines of figures or numbered steps without bullets, and ・ bullets, are items: no one long sentence
    figures = JA_HEAD + "2023年の調査に参加した元ユーザーのうち、\n" + "".join(
        f"{n}％が自分ではコントロールできない要因を理由として挙げた（2022年から{n}ポイントの減少）\n" for n in (46, 31, 24)
    )
    assert "rule:sentence-length" not in sources("language_quality", figures)
    steps = JA_HEAD + "".join(
        f"({n}) 「入力がない場合」の「続ける」の箇所をタップし、「停止して応答」を選び、追加で表示された入力欄に文を入れます\n"
        for n in (8, 9, 10)
    )
    assert "rule:sentence-length" not in sources("language_quality", steps)
    bullets = JA_HEAD + "".join(f"・電源プラグが**欧州製**だったため並行輸入品であったことを購入後に知った（{n}）\n" for n in range(5))
    assert "rule:sentence-length" not in sources("language_quality", bullets)
    joined = JA_HEAD + "".join(
        f"回答者の{n}割が自分ではコントロールできない要因を理由として挙げていて、2022年から{n}ポイントの減少\n" for n in (4, 3, 2)
    ) + "となりました。\n"
    assert "rule:sentence-length" in sources("language_quality", joined)


def test_round_36_causes():
    # an app's system-information report under 「私の環境です」 reads as a Markdown list but is printed text
    report = "--- SYSTEM INFORMATION ---\n**System Information**\n\n* Pythonista 3.3 (330025)\n* iOS 16.0.2, model iPhone12,1\n"
    announced = JA_HEAD + f"以下、私の 2022 年 12 月時点の環境です。\n\n```\n{report}```\n"
    assert "rule:code-language" not in sources("code_quality", announced)
    shown = JA_HEAD + f"Markdown ではこう書きます。\n\n```\n{report}```\n"
    assert "rule:code-language" in sources("code_quality", shown)


def test_round_36_sweep_causes():
    # Japanese: idiomatic doubles, an idiom's を, words across a line break, 外出し + して
    for sentence in ("ただただ、私が使いやすい構成です。", "ではでは早速作っていきましょう。", "ほぼ、変数を外出ししているので確認できます。"):
        assert "rule:doubled-word" not in sources("language_quality", JA_HEAD + sentence + "\n"), sentence
    listing = JA_HEAD + "それぞれ、次のように対応しています。\nルートのディレクトリ:バケット\nバケットより下のディレクトリ:プレフィックス\n"
    assert "rule:doubled-word" not in sources("language_quality", listing)
    for slip in ("名乗らせてもらってもらっている者です。", "３辺の長さがそれそれ等しいとします。"):
        assert "rule:doubled-word" in sources("language_quality", JA_HEAD + slip + "\n"), slip
    for sentence in ("一連の仕組みを順を追って解説します。", "このエディタは Pythonista3 をメインに実装をしています。"):
        assert "rule:doubled-particle" not in sources("language_quality", JA_HEAD + sentence + "\n"), sentence
    assert "rule:doubled-particle" in sources("language_quality", JA_HEAD + "被る日を最小公倍数をつかって解きます。\n")
    # English: British -isation- inside a word, a title quoted in German, a Bosnian line, a profile link's text
    british = "# Notes\n\nThe organisational chart is new, and the organizational one is old.\n"
    assert "rule:spelling" not in sources("language_quality", british)
    german = "# Talks\n\nA talk on IoT projects.\n(original German title: Ein IoT-Projekt auf dem Weg vom Schreibtisch in die weite Welt)\n"
    assert "rule:spelling" not in sources("language_quality", german)
    bosnian = "# Ifs\n\nWe check numbers here.\n\nNpr. ako želimo povjeriti je li broj pozitivan i manji od 50.\n"
    assert "rule:spelling" not in sources("language_quality", bosnian)
    credit = "# Credits\n\nThe example comes from [karam](https://twitter.com/0xkarmacoma), with a few changes.\n"
    assert "rule:spelling" not in sources("language_quality", credit)
    assert "rule:spelling" in sources("language_quality", "# Credits\n\nThe example comes from karam, with changes.\n")
    # `***` closes bold and italics at once; a heading that is a link needs no body
    nested = "# Regex\n\nThey are **not powerful enough to handle *recursion***, but they help.\n"
    assert "rule:strong-flanking" not in sources("markdown_format", nested)
    assert "rule:strong-flanking" in sources("markdown_format", "# Regex\n\nThey are **not enough, but they help.\n")
    video = "---\ntitle: AWS 101\n---\n\n## VIDEO — https://youtu.be/VsFjFdCTgXk\n\n## Introduction\n\nThis room is about clouds.\n"
    assert "rule:empty-section" not in sources("structure", video)


def test_a_full_stop_used_as_a_pause_or_a_trailing_run_is_no_plain_sentence():
    # 「〜する。というイメージです」「動かなくなる。など」: a 。 quoting the thought before it, inside a polite sentence
    for pause in (
        "`scene` の`run()` が呼ばれている。というイメージで問題ないと思います。",
        "何をどうしたら動かなくなる。など、判断がつかないものは自己責任でお願いします。",
        "普段はAPI で何かする。とか全くしておらず、今回は雰囲気でなんとかしています。",
        "気軽に試したい or 数回の確認でいい。のであれば、CDN 経由で実装が可能です。",
        "結果の全てをドカっと描画する。みたいなイメージで、理解をしています。",
        "あかん、もう、12月が来てしまう。。。",
    ):
        assert "rule:mixed-style" not in sources("language_quality", MIXED + pause + "\n"), pause
    assert "rule:mixed-style" in sources("language_quality", MIXED + "このコードを次のように書き換える。\n")


def test_a_flow_drawn_line_by_line_with_arrows_is_no_one_sentence():
    steps = ("プログラミング言語の高レベル命令（C や Python などで書かれたもの）を用意して",
             "アセンブリ言語の命令列として、レジスタ同士の足し算を表すところまで落として",
             "機械語としてメモリに置かれたバイナリの列を、CPU の制御回路が読み取って")
    flow = JA_HEAD + "**フローチャート**\n" + "".join(f"[{step}]\n　　↓ (変換)\n" for step in steps) + "[CPU の実行]\n"
    assert "rule:sentence-length" not in sources("language_quality", flow)
    joined = JA_HEAD + "**フローチャート**\n" + "".join(f"[{step}]\n" for step in steps) + "[CPU の実行]。\n"
    assert "rule:sentence-length" in sources("language_quality", joined)


def test_a_quotation_holding_sentences_of_its_own_is_measured_sentence_by_sentence():
    tweet = ("GitHub CopilotのBYOK機能を使ってこのモデルをAIクレジットを消費しないで使うことが出来ました。"
             "注意点 Googleアカウントの有料枠で使用するとGoogleの方のAIクレジットの課金がひつよう。"
             "無料のGoogleアカウントを作ってAI StudioでAPI KEYを作ってそれを登録すると無料")
    pasted = JA_HEAD + f"Xユーザーのtestさん: 「{tweet}」 / X\n"
    assert "rule:sentence-length" not in sources("language_quality", pasted)
    one = JA_HEAD + "「" + tweet.replace("。", "、") + "」という投稿を見て、すぐに自分の環境でも同じ設定を試してみることにしました。\n"
    assert "rule:sentence-length" in sources("language_quality", one)


def test_a_commonly_misspelt_loanword_is_named_with_its_right_form():
    found = [i for i in run("language_quality", JA_HEAD + "【1ヶ月のシュミレート請求書比較】を作りました。\n") if i.source == "rule:ja-misspelling"]
    assert [(i.severity, i.problem) for i in found] == [("suggestion", "よくある表記の誤りです: 「シュミレート」（「シミュレート」）")]
    heading = JA_HEAD + "本文です。\n\n### 【1ヶ月のシュミレート請求書比較】\n\n本文です。\n"
    assert lines("language_quality", heading, "rule:ja-misspelling") == [5]
    for right in ("シミュレーターでシミュレーションします。", "`シュミレーション` はコードの中の文字列です。", "バッグを買いました。"):
        assert "rule:ja-misspelling" not in sources("language_quality", JA_HEAD + right + "\n"), right


def test_zurai_for_zurai_is_named_with_its_right_form():
    def problems(sentence: str) -> list[str]:
        return [i.problem for i in run("language_quality", JA_HEAD + sentence + "\n") if i.source == "rule:ja-misspelling"]

    assert problems("パスの色が紫で見ずらいので変えました。") == ["よくある表記の誤りです: 「見ずらい」（「見づらい」）"]
    assert problems("動きがわかりずらく、初見では迷います。") == ["よくある表記の誤りです: 「わかりずらく」（「わかりづらく」）"]
    assert problems("コンピューターが巨大で扱いずらかった時代です。") == ["よくある表記の誤りです: 「扱いずらかっ」（「扱いづらかっ」）"]
    assert problems("これだけだと理解ずらいと思います。") == ["よくある表記の誤りです: 「理解ずらい」（「理解しづらい」）"]
    for right in ("予定をずらさずに開始しました。", "座標をずらしています。", "開発はめずらしくもありません。",
                  "過去の値に引きずられる性質です。", "わずらわしい作業です。", "いたずら心です。", "見づらいので変えました。"):
        assert problems(right) == [], right


def test_round_37_sweep_causes():
    # Hugo's highlight shortcode holds code, as Jekyll's {% highlight %} does: no prose rules inside
    hcl = 'resource "aws_glue_catalog_table" "events" {\n  database_name = aws_glue_catalog_database.db.name\n  name = "events"\n}\n'
    hugo = f'# Tables\n\nThe tables:\n\n{{{{< highlight tf "noClasses=false, tabWidth=2" >}}}}\n{hcl}{{{{< / highlight >}}}}\n\nDone.\n'
    assert "rule:doubled-word" not in sources("language_quality", hugo)
    assert parse_article(hugo).code_blocks[0].language == "tf"
    # Cython under a python tag is no Python syntax error; Python still is checked
    cython = "# Wrapper\n\n```python\nfrom libcpp.vector cimport vector\ncimport numpy as np\n\ncdef vector[double] to_vector(np.ndarray[np.double_t, ndim=1] array):\n    pass\n```\n"
    assert "rule:syntax-python" not in sources("code_quality", cython)
    assert "rule:syntax-python" in sources("code_quality", "# Wrapper\n\n```python\ndef f(x)\n    return x\n```\n")
    # a British spelling, a daemon's name, a plural spelt with z
    for text in ("I was sceptical at first.", "Open the port in firewalld first.", "Some git skillz for the road."):
        assert "rule:spelling" not in sources("language_quality", f"# Notes\n\n{text}\n"), text


def test_a_bracketed_snip_marker_makes_a_block_an_excerpt():
    block = 'conn.execute("CREATE TABLE flag (flag TEXT NOT NULL);")\nconn.execute("INSERT INTO flag VALUES (?)", (FLAG,))\n'
    for marker in ("[snip...]", "(snip)", "【中略】"):
        cut = f"# Setup\n\n```python\n{block}{marker}\n```\n"
        assert "rule:syntax-python" not in sources("code_quality", cut), marker
    assert "rule:syntax-python" in sources("code_quality", f"# Setup\n\n```python\n{block}x = [snip\n```\n")


def test_an_ellipsis_before_a_capital_ends_an_english_sentence():
    first = "Unfortunately i have not found another way than to convert the image file to JPEG format through PDF and then load it as a bitmap which i could put into the icon reference"
    second = "Also i would like to admit that after loading the bitmap i had to resize it to the proper size of the picture box i had."
    for ellipsis in ("&#8230;", "…", "&hellip;"):
        assert "rule:sentence-length" not in sources("language_quality", f"# Notes\n\n{first}{ellipsis}{second}\n"), ellipsis
    assert "rule:sentence-length" in sources("language_quality", f"# Notes\n\n{first}, and {second[0].lower()}{second[1:]}\n")


def test_round_38_sweep_causes():
    # a post in Romanian written without its diacritics is no English text to spell-check
    romanian = "# Configurare\n\n" + "".join(
        f"Copiaza fisierul generat, apoi deschide o noua fereastra si lasa serverul sa ruleze pe portul {n}.\n\n" for n in range(4)
    )
    assert "rule:spelling" not in sources("language_quality", romanian)
    assert "rule:spelling" in sources("language_quality", "# Notes\n\nThe begining of the text, and the rest of it.\n")
    # citation marks copied from an encyclopedia are not references left undefined
    wiki = "# Chrome\n\nGoogle released beta versions of Chrome for OS X and Linux.[37][38] Version 5 followed.[39]\n"
    assert "rule:undefined-reference" not in sources("link", wiki)
    assert "rule:undefined-reference" in sources("link", "# Chrome\n\nSee [the release notes][1] for more.\n")
    for word in ("goto", "requirejs", "capex"):
        assert "rule:spelling" not in sources("language_quality", f"# Notes\n\nThe old {word} idea came back.\n"), word


def test_round_39_sweep_causes():
    # a <pre> inside a run of HTML lines holds code up to </pre>, blank lines and all (kramdown,
    # exported Tumblr posts); the same words in a paragraph are still prose
    pre = "# Script\n\n<p>Then we wrote this script:</p>\n<pre>\nrequire 'json'\n\nbegin\n  run\n  end\nend\n</pre>\n<p>Done.</p>\n"
    assert parse_article(pre).kind(10) == "html" and "rule:doubled-word" not in sources("language_quality", pre)
    assert "rule:doubled-word" in sources("language_quality", "# Script\n\nIt runs to the end\nend of the file.\n")
    # a word censored with asterisks is no bold that failed to render
    censored = "# Sites\n\nI found a site called [Motherf**king Website](http://example.com). It is simple.\n"
    assert "rule:strong-flanking" not in sources("markdown_format", censored)
    assert "rule:strong-flanking" in sources("markdown_format", "# 強調\n\nこれは**「強調」**です。\n")
    for text in ("Reshape the table with tidyr first.", "As a rejectee, I could register earlier."):
        assert "rule:spelling" not in sources("language_quality", f"# R\n\n{text}\n"), text


def test_the_linter_is_not_asked_about_raw_html():
    """pymarkdownlnt reads a <pre> block that follows a paragraph line as Markdown and reports
    `(r.Host, ":")[0]` in it as a reversed link; the proofreader does not pass that on."""
    text = (
        "# Go\n\nRewrite ServeHTTP to check the host\n<pre class=\"brush: go\">func f() {\n\n"
        "    host := strings.Split(r.Host, \":\")[0]\n}\n</pre>\n\nAnd a (reversed)[https://example.com] link.\n"
    )
    (found,) = linted(text)
    assert ("pymarkdownlnt:MD011", 6) not in found and ("pymarkdownlnt:MD011", 10) in found


def test_round_40_causes():
    # an npm error log is program output: `npm error …` / `npm ERR! …` lines are no commands
    log = "# Install\n\n```\nnpm error code ERESOLVE\nnpm error ERESOLVE could not resolve\nnpm error\nnpm ERR! While resolving: vite@5.4.0\n```\n"
    assert "rule:code-language" not in sources("code_quality", log)
    assert "rule:code-language" in sources("code_quality", "# Install\n\n```\nnpm install vite\nnpm info vite\n```\n")


def test_round_40_sweep_causes():
    # a change shown as -/+ lines under a python tag is a diff, not Python with a syntax error
    diff = "# Fix\n\n```python\n- HOOK_URL = \"https://\" + decrypt(url)\n+ HOOK_URL = decrypt(url)\n```\n"
    assert "rule:syntax-python" not in sources("code_quality", diff)
    assert "rule:syntax-python" in sources("code_quality", "# Bad\n\n```python\nHOOK_URL = = decrypt(url)\n```\n")
    # a line of one ~ above the lines shown says the rest is left out
    tilde = "# CI\n\n```yaml\n~\njobs:\n  deploy:\n    runs-on: ubuntu-latest\n```\n"
    assert "rule:syntax-yaml" not in sources("code_quality", tilde)
    assert "rule:syntax-yaml" in sources("code_quality", "# CI\n\n```yaml\nname\njobs:\n  deploy: x\n```\n")
    for text in ("The modded server ran faster.", "A battle royale game.", "Behind two doors were zonks."):
        assert "rule:spelling" not in sources("language_quality", f"# Games\n\n{text}\n"), text


def test_round_41_causes():
    # a line that ends in 〜ます / 〜です ends its sentence even without 。
    unstopped = (
        "# ViewModel\n\nこの記事ではViewModelの生成について説明します。\n\n"
        "自前のFactoryを作ることもできますが、フレームワークはデフォルトの実装を最初から提供しています\n"
        "具体的な処理はAndroidの場合、JvmViewModelProvidersのcreateViewModelに委譲され、引数なしのコンストラクタが実行されます\n"
    )
    assert "rule:sentence-length" not in sources("language_quality", unstopped)
    joined = unstopped.replace("提供しています\n具体的", "提供していて、具体的")
    assert "rule:sentence-length" in sources("language_quality", joined)
    # a caption that describes the image and names its source in brackets still describes it
    captioned = "# Plans\n\nThe plans differ.\n\n![](/images/plans.png)\n*契約プランの比較（公式引用）*\n"
    assert "rule:image-alt" not in sources("markdown_format", captioned)
    source_only = "# Plans\n\nThe plans differ.\n\n![](/images/plans.png)\n*（公式より引用）*\n"
    assert "rule:image-alt" in sources("markdown_format", source_only)


def test_a_definition_glued_under_a_line_of_text_is_named_in_the_finding():
    glued = "# Borders\n\nA client project used dotted borders.\n\n![Call to action][1]\n[1]: /images/cta.png\n"
    (finding,) = [i for i in run("link", glued) if i.source == "rule:undefined-reference"]
    assert "line 6" in finding.problem and "blank line" in finding.suggestion
    apart = glued.replace("][1]\n[1]:", "][1]\n\n[1]:")
    assert "rule:undefined-reference" not in sources("link", apart)
    lost = "# Borders\n\nA client project used dotted borders.\n\n![Call to action][1]\n\n[2]: /images/cta.png\n"
    (finding,) = [i for i in run("link", lost) if i.source == "rule:undefined-reference"]
    assert finding.problem == "The link reference [1] is never defined."


def test_a_first_heading_at_the_outlines_own_level_is_not_too_deep():
    """`##` sections with a stray `#` or two: the stray ones are off, not the first heading; a `##`
    section added above `#` sections still starts the outline a level too deep."""
    stray = "## Intro\n\nText.\n\n## Setup\n\nText.\n\n# Movement\n\nText.\n\n## Cleanup\n\nText.\n\n# Summary\n\nText.\n"
    assert "rule:first-heading-level" not in sources("structure", stray)
    added = "## Intro\n\nText.\n\n# Setup\n\nText.\n\n# Movement\n\nText.\n\n# Summary\n\nText.\n"
    assert "rule:first-heading-level" in sources("structure", added)


def test_round_42_sweep_causes():
    # display math written on one line inside a paragraph is no emphasis gone wrong
    maths = "# Vectors\n\nSo:\n$$a \\cdot b = ||a|| * ||b|| * \\cos(x)$$\n"
    (found,) = linted(maths)
    assert "pymarkdownlnt:MD037" not in {rule for rule, _ in found}
    # a tuple indexed in prose is no reversed link; a reversed link still is
    index = "# Tuples\n\n- Use indices: (\"Daniel\",\"Grace\")[0:1] gets the first\n\nSee (the docs)[https://example.com].\n"
    (found,) = linted(index)
    assert ("pymarkdownlnt:MD011", 3) not in found and ("pymarkdownlnt:MD011", 5) in found
    # 「https://」 named in text is no URL
    scheme = "# TLS\n\n- URL が「https://」で始まるサイトは暗号化されている\n"
    assert not {"rule:malformed-url", "rule:bare-url-swallow"} & (sources("link", scheme) | sources("markdown_format", scheme))
    # a Python traceback under a python tag is what the run printed
    trace = "# Error\n\n```python\nTraceback (most recent call last):\n  File \"d.py\", line 11, in <module>\n    print(f(p))\n          ^^^^\nAttributeError: 'NoneType' object has no attribute 'x'\n```\n"
    assert "rule:syntax-python" not in sources("code_quality", trace)
    assert "rule:spelling" not in sources("language_quality", "# PHP\n\nThe friggin array again.\n")


def test_round_43_causes():
    # Hashnode's backup of a published post: its broken YAML blocks nothing
    backup = (
        '---\ntitle: "Fixing "Catastrophic failure" in WSL"\ndatePublished: Thu Feb 15 2024\n'
        "cuid: clsn276rk000209lj5cke48yx\nslug: fixing-wsl\n---\n\nOne day I turned on my computer.\n"
    )
    (issue,) = [i for i in run("structure", backup) if i.source == "rule:front-matter-yaml"]
    assert issue.severity == "suggestion" and "Hashnode" in issue.problem
    written = '---\ntitle: Command-Line Interfaces: Structure & Syntax\npublished: true\n---\n\nText.\n'
    (issue,) = [i for i in run("structure", written) if i.source == "rule:front-matter-yaml"]
    assert issue.severity == "critical"
    # YouTube's redirect links carry its own click token
    link = "# Links\n\n* [Docs](https://www.youtube.com/redirect?event=video_description&redir_token=QUFFLUhqbnEwZ1BvMjhuNjRlTkp3c0Vj&q=https%3A%2F%2Fexample.com)\n"
    assert "rule:link-secret" not in sources("privacy", link)
    assert "rule:link-secret" in sources("privacy", "# Links\n\n* [API](https://api.example.com/v1?access_token=f83kd9Qz2LmX7pR4tY8wV1nB6cJ0hG5e)\n")
    # a listing of sockets (`*:5900  *:*`) is no Markdown emphasis
    log = "# Log\n\n```\n=== check ===\nOS:           Debian GNU/Linux 13\nLISTEN 0      16      *:5900      *:*\n```\n"
    assert "rule:code-language" not in sources("code_quality", log)


def test_round_44_an_aside_in_brackets_holds_sentences_of_its_own():
    # 「（…利点がありますが、…残ってしまいます。候補となるのは…ですが、…にしました。）」: the 。 inside an
    # aside that opens its paragraph ends a sentence, so the two が are in two sentences
    aside = (
        "# 設計\n\nコンストラクタは空っぽです。\n"
        "(インスタンス変数はメソッド内でアクセスしやすい利点がありますが、生成後にメモリに残ってしまいます。"
        "候補となるのはpointデータとPolygonデータですが、今回は引数として受け渡していく事にしました。)\n"
    )
    assert "rule:doubled-conjunctive-ga" not in sources("language_quality", aside)
    # one sentence with two が, in brackets or not, is still reported
    one = "# 設計\n\n(メモリに残ってしまいますが、候補となるのはpointデータですが、引数で渡します。)\n"
    assert "rule:doubled-conjunctive-ga" in sources("language_quality", one)


def test_round_44_sweep_causes():
    # the request token an API returns with each reply is no secret; an access token still is
    reply = '# Create\n\n```json\n{\n  "RequestToken": "8c98858b-a70b-4381-850e-606005f8c5ee",\n  "Operation": "CREATE"\n}\n```\n'
    assert "rule:assigned-secret" not in sources("privacy", reply)
    leaked = '# Create\n\n```json\n{\n  "AccessToken": "8c98858b-a70b-4381-850e-606005f8c5ee"\n}\n```\n'
    assert "rule:assigned-secret" in sources("privacy", leaked)
    # PowerShell calls a cmdlet whose Verb-Noun name is no password
    cmdlet = "# Login\n\n```txt\n$SecuredPassword = ConvertTo-SecureString <sp_secret> -AsPlainText -Force\n```\n"
    assert "rule:assigned-secret" not in sources("privacy", cmdlet)
    # `===== 省略 =====` and a line of tildes mark lines left out
    elided = "# Init\n\n```python\n===== 省略 =====\n```\n"
    tildes = "# CI\n\n```yml\nversion: 2\njobs:\n  test1:\n    docker:\n~~~~~~~~~~~~\n  test2:\n```\n"
    assert not {"rule:syntax-python", "rule:syntax-yaml"} & (sources("code_quality", elided) | sources("code_quality", tildes))
    # a terminal session under a yaml tag, and Netlify's `_headers` under a toml tag: other formats
    session = "# Run\n\n```yaml\n$ ansible-playbook site.yml\n[WARNING]: provided hosts list is empty\n\nPLAY [Build] ***\n```\n"
    headers = "# Headers\n\n```toml\n/game.html\n  Cross-Origin-Opener-Policy: same-origin\n```\n"
    assert not {"rule:syntax-yaml", "rule:syntax-toml"} & (sources("code_quality", session) | sources("code_quality", headers))
    assert "rule:syntax-toml" in sources("code_quality", '# Conf\n\n```toml\n[server]\nport = 80 80\n```\n')
    assert "rule:syntax-yaml" in sources("code_quality", "# Conf\n\n```yaml\nkey: [a, b\nother: c\n```\n")
    # words: API Gateway's authorizers, the Xception network, an orienteering dibber, lochs
    for text in ("Use custom authorizers.", "- xception", "I forgot my dibber.", "We passed sea lochs."):
        assert "rule:spelling" not in sources("language_quality", "# Notes\n\n" + text + "\n")


def test_text_right_under_a_table_is_one_finding_that_says_what_happened():
    run_in = "# Steps\n\n| step | does |\n| --- | --- |\n| verify | runs the tests |\n※引用 SoftwareDesign\nhttps://gihyo.jp/x\n上記のとおりです。\n"
    short_row = "# Steps\n\n| step | does | when |\n| --- | --- | --- |\n| verify | runs |\n"
    (run_in_issues, short_issues) = linter_issues(run_in, short_row)
    (issue,) = [i for i in run_in_issues if i.source == "rule:table-run-in"]
    assert (issue.line_start, issue.line_end) == (6, 8)
    assert "pymarkdownlnt:MD056" not in {i.source for i in run_in_issues}
    assert "(lines 6–8) renders as rows of the table" in issue.problem and "blank line" in issue.suggestion
    assert to_japanese("table-run-in", issue.problem) == "表のすぐ下の文（6〜8行目）が表の行として表示されます。表の後に空行がありません。"
    # a row with a missing cell is still the row's own finding
    (issue,) = [i for i in short_issues if i.source == "pymarkdownlnt:MD056"]
    assert issue.line_start == 5 and "different number of cells" in issue.problem


def test_round_45_links_one_per_line_are_lines_of_their_own():
    # a series' navigation: each part's link on a line of its own is no part of one long sentence
    series = (
        "# 概要\n\n"
        "[18-①Kaggle実践3 Biohub細胞トラッキング：環境構築から初回提出までの手順](https://zenn.dev/a/articles/one)\n"
        "[18-②Kaggle実践3 Biohub細胞トラッキング：初回提出コードを解説してみた](https://zenn.dev/a/articles/two)\n"
        "**18-③Kaggle実践3 Biohub細胞トラッキング：ローカル環境を構築してみた(交差検証(CV)込み)**(この記事)\n"
    )
    assert "rule:sentence-length" not in sources("language_quality", series)
    # one link alone on a line inside a wrapped sentence still belongs to it
    wrapped = (
        "# 概要\n\nこのコンペは入力データが大きく提出のたびに実行と保存と提出に長い時間がかかるので、手順については\n"
        "[こちらの記事](https://zenn.dev/a/articles/one)\n"
        "を参考にしながらローカルの評価環境を構築して全データセットに対する交差検証を手元で何度でも気軽に回せるようにしておくと後の作業がずっと楽になるのでおすすめです。\n"
    )
    assert "rule:sentence-length" in sources("language_quality", wrapped)


def test_round_45_sweep_causes():
    # a thank-you aside in brackets does not set the article's style
    plain = "".join(f"設定{n}はここで確認する。" for n in range(12))
    aside = f"# 準備\n\n{plain}\n\nこちらの記事を参考にした。（大変助かりました。ありがとうございます！）\n"
    assert "rule:mixed-style" not in sources("language_quality", aside)
    # a script's proxy URL built from shell variables holds no password
    proxy = '# Proxy\n\n```bash\nhttps_proxy="http://$encoded_name:$encoded_pw@proxy.corp-net.com:8080/"\n```\n'
    assert "rule:url-credentials" not in sources("privacy", proxy)
    leaked = "# Proxy\n\n```bash\nhttps_proxy=http://alice:Xq7rT2pLm9Zk@proxy.corp-net.com:8080/\n```\n"
    assert "rule:url-credentials" in sources("privacy", leaked)
    # a connection string's authentication method is no secret
    conn = "# DB\n\n```python\nconn = 'Driver=ODBC;Authentication=ActiveDirectoryIntegrated'\n```\n"
    assert "rule:assigned-secret" not in sources("privacy", conn)
    # GitHub's heading anchor, an icon in the link, is no empty link
    anchor = '# Notes\n\n## [<span class="octicon octicon-link"></span>](#spring-security)Spring Security\n\nText.\n'
    assert "rule:empty-link-text" not in sources("link", anchor)
    assert "rule:empty-link-text" in sources("link", "# Notes\n\nSee [](https://example.com/a) here.\n")
    # a closing heading that links to the next part is no empty section
    series = "# Part 1\n\nText.\n\n## Setup\n\nMore text.\n\n#### Continued in Part 2: [adding RDS](/2017/08/11/part-2/)\n"
    assert "rule:empty-section" not in sources("structure", series)
    # 「`xor rdi, rcx`で、…」 item after item: で after code is a particle, not a connective
    items = "# 解析\n\n" + "".join(f"- `mov r{n}, r{n + 1}`で、`r{n}`に値が入る\n" for n in range(4))
    assert "rule:doubled-conjunction" not in sources("language_quality", items)
    # notes drawn into code, a REPL string pasted without `... `, and metadata under a python tag
    drawn = "# RF\n\n```python\nrfr = RandomForestRegressor(random_state=0)\n                         ↑ 1→0に変えるだけ\n```\n"
    repl = '# Julia\n\n```python\n>>> code = """\nusing StatsBase\nend\n"""\n>>> run(code)\n```\n'
    meta = "# Pelican\n\n```python\nBokehCSS: https://cdn.pydata.org/bokeh.min.css\nBokehJS: https://cdn.pydata.org/bokeh.min.js\n```\n"
    for text in (drawn, repl, meta):
        assert "rule:syntax-python" not in sources("code_quality", text)
    assert "rule:syntax-python" in sources("code_quality", '# Julia\n\n```python\n>>> code = """\nusing StatsBase\n>>> run(code\n```\n')


def test_round_46_causes():
    # settings inside one <code> element that spans the paragraph are no sentence
    ini = "".join(f"setting_{n} = {n}<br>\n" for n in range(20))
    settings = f"# PHP\n\nEdit php.ini to match the items below:\n\n<code>extension_dir = \"C:\\PHP5\\ext\"<br>\n{ini}</code>\n"
    assert "rule:sentence-length" not in sources("language_quality", settings)
    # an inline <code> closed on its own line leaves the sentence after it counted
    prose = " ".join(["the words of a long sentence go on"] * 8)
    inline = f"# Hash\n\nI got curious about the hash (<code>49de37</code>) at the bottom of\n{prose} and on.\n"
    assert "rule:sentence-length" in sources("language_quality", inline)
    # an HTML image inside a link is the link's content
    figure = '# Ranking\n\n[<img src="/assets/images/dilbert1.jpg" width="400">](/assets/images/dilbert1.jpg)\n'
    assert "rule:empty-link-text" not in sources("link", figure)
    for word in ("clade", "borked"):
        assert "rule:spelling" not in sources("language_quality", f"# Notes\n\nThe {word} one.\n")


def test_round_47_as_many_sentences_in_each_style_leave_no_majority_to_slip_from():
    # 2 against 2, one of the plain ones in a closing section of its own: the body's count alone
    # (2 against 1) used to name a majority the article does not have
    tie = (
        "# API\n\n## 取得\n\nこの関数はSQLを実行して取り出したデータを返します。実行結果は指定した親エントリの子要素として"
        "追加されます。スキーマにない項目を指定するとエラーになる。\n\n## 削除\n\n削除したデータは同じキーで追記された行として残る。\n"
    )
    assert "rule:mixed-style" not in sources("language_quality", tie)
    slip = tie.replace("として追加されます。", "として追加されます。引数は省略できます。")
    assert "rule:mixed-style" in sources("language_quality", slip)


def test_round_47_sweep_short_rows_of_one_table_are_one_finding():
    rows = "".join(f"| ELB{n} | Lab {n} | 1h | | Intermediate |\n" for n in range(5))
    table = f"# Labs\n\n| type | title | time | price | level | note |\n|---|---|---|---|---|---|\n{rows}"
    (issues,) = linter_issues(table)
    found = [i for i in apply_rule_control(issues, {}) if i.source == "pymarkdownlnt:MD056"]
    assert [(i.problem, i.line_start) for i in found] == [
        ("5 table rows have a different number of cells from the header (lines 5, 6, 7, 8, 9).", 5)
    ]
    assert to_japanese("md056", found[0].problem) == "見出し行とセルの数が違う表の行が5行あります（5, 6, 7, 8, 9行目）。"
    assert "empty cells at its end" in found[0].reason
    # markdownlint's own comment for MD056 also quiets the text-under-a-table finding
    run_in = "# T\n\n<!-- markdownlint-disable MD056 -->\n| a | b |\n| --- | --- |\n| 1 | 2 |\ntext right under it\n"
    (issues,) = linter_issues(run_in)
    assert "rule:table-run-in" in {i.source for i in issues}
    kept = apply_rule_control(issues, {}, parse_article(run_in).suppressions)
    assert "rule:table-run-in" not in {i.source for i in kept}


def test_round_48_causes():
    # a feature list of ✅ lines is items, one per line, not one long sentence
    items = "".join(f"✅ **機能{n}の検知** - CloudTrailとFalcoのイベントで駆動して通知先に送る\n" for n in range(6))
    assert "rule:sentence-length" not in sources("language_quality", "# 特徴\n\n" + items)
    # workerd (Cloudflare's runtime), a menuing system, an archaic chapter title
    for text in ("sharp does not run in workerd.", "An arrow-key-driven menuing system.", "The shovelware cometh."):
        assert "rule:spelling" not in sources("language_quality", "# Notes\n\n" + text + "\n")
    assert "rule:spelling" in sources("language_quality", "# Notes\n\nThe menuing systme.\n")


def test_round_48_sweep_causes():
    # a French post that quotes Apple's English documentation is a French post
    french = (
        "# Claviers\n\nComme j'ai cherché une page qui ressemblerait à celle-ci et que je ne l'ai pas trouvée, "
        "voici ma compilation des types de clavier.\n\nBien sûr, ce travail est très limité : je montre seulement "
        "la version iPhone en orientation portrait.\n\nMais quand même, ça peut être utile pour faire une idée.\n\n"
        "(s'il existe une page similaire faisant davantage référence, n'hésitez pas à en faire part dans les commentaires)\n\n"
        + "".join(f"## Type{n}\n\n> Use a keyboard optimized for entry number {n}. This type features the digits prominently.\n\n" for n in range(6))
    )
    assert "rule:spelling" not in sources("language_quality", french)
    # the product of indexed terms is no emphasis
    (found,) = linted("# Product\n\n> The product of triplet (P, Q, R) equates to A[P] * A[Q] * A[R] (0 ≤ P < Q < R < N).\n")
    assert "pymarkdownlnt:MD037" not in {rule for rule, _ in found}
    for text in ("barriers and phasers", "the droid on day 15"):
        assert "rule:spelling" not in sources("language_quality", f"# Notes\n\nWe met {text} there.\n")


def test_round_49_a_vs_code_file_named_above_the_block_is_json_with_comments():
    block = '```json\n[\n    {\n        "key": "ctrl+t",\n        "command": "workbench.action.tasks.runTask"\n    },\n]\n```\n'
    named = "# 設定\n\nショートカットキーを割り当てる場合はkeybindings.jsonに以下のように追加してください。\n\n" + block
    assert "rule:syntax-json" not in sources("code_quality", named)
    other = "# 設定\n\nAPIの応答は以下のようになります。\n\n" + block
    assert "rule:syntax-json" in sources("code_quality", other)


def test_round_49_sweep_causes():
    # an underscore below the top level is a host browsers reach; in the top level it is not
    assert "rule:malformed-url" not in sources("link", "# App\n\nhttps://web_games_app-blue-moon.reflex.run/tictactoe\n")
    assert "rule:malformed-url" in sources("link", "# App\n\nhttps://example.reflex_run/tictactoe\n")
    # several JSON documents one after another are each valid; a broken one is still reported
    stream = '# ARD\n\n```json\n{\n  "name": "PostgreSQL",\n  "score": 100\n}\n{\n  "name": "DBHub",\n  "score": 90\n}\n```\n'
    assert "rule:syntax-json" not in sources("code_quality", stream)
    assert "rule:syntax-json" in sources("code_quality", stream.replace('"score": 90', '"score": 90,'))


def test_round_50_a_type_annotation_is_no_secret():
    # `NAME: SomeType` in TypeScript names a type, not a value: it was a critical that rejected the article
    typed = (
        "# 環境変数\n\n```ts\ninterface EnvironmentConfig {\n  MAIL_SENDER_API_KEY: MailSenderApiKeyType,\n"
        "  STAGING_BASIC_AUTH: StagingBasicAuthType,\n}\n\n"
        "export const MAIL_SENDER_API_KEY: MailSenderApiKeyType = (function () {\n  return process.env.KEY\n})()\n```\n"
    )
    assert "rule:assigned-secret" not in sources("privacy", typed)
    # a generated value after the same name is still reported
    leaked = "# 環境変数\n\n```ts\nconst MAIL_SENDER_API_KEY = 'Qm7XvT2pLk9RwZc4NbHs'\n```\n"
    assert "rule:assigned-secret" in sources("privacy", leaked)


def test_round_50_labelled_entries_one_per_line_are_lines_of_their_own():
    # an advent calendar's neighbours, one per line with no list marker, are three entries, not one sentence
    title = "Claudeと伴にFlutterアプリを開発してAIがどこまでできるか試してみた"
    entries = (
        f"5日目： [{title}](https://qiita.com/a/items/1) by [yniji](https://x.com/a)さん\n"
        f"6日目： [{title}の続きとその移行の理由と工夫](https://qiita.com/b/items/2) by [村松](https://x.com/b) ← 今ここ\n"
        f"7日目： 「{title}」 by [朝日さん](https://x.com/c)さん\n"
    )
    assert "rule:sentence-length" not in sources("language_quality", "# はじめに\n\n" + entries)
    # the same words wrapped in one sentence are still one long sentence
    wrapped = entries.replace("5日目： ", "五日目の").replace("6日目： ", "と六日目の").replace("7日目： ", "と七日目の")
    assert "rule:sentence-length" in sources("language_quality", "# はじめに\n\n" + wrapped.rstrip() + "です。\n")


def test_round_50_sweep_causes():
    # Japanese after `#` is the anchor of a heading on the linked page, part of the address
    anchor = "# 参考\n\n被害者の記事の「対策案」にもあります。\nhttps://zenn.dev/mameta29/articles/7aa221046a87ff#対策案\n次に進みます。\n"
    assert "rule:bare-url-swallow" not in sources("markdown_format", anchor)
    glued = "# 参考\n\nhttps://zenn.dev/mameta29/articles/7aa221046a87ff#対策案を読みます。\n"
    assert "rule:bare-url-swallow" in sources("markdown_format", glued)
    # a keycap (0️⃣) is one emoji; a bare digit is not
    front = '---\ntitle: "Interview"\nemoji: "{}"\ntype: "tech"\ntopics: ["vite"]\npublished: true\n---\n\n# A\n\nText.\n'
    assert "rule:zenn-emoji" not in sources("structure", front.format("0\ufe0f\u20e3"))
    assert "rule:zenn-emoji" in sources("structure", front.format("0"))
    # a verb doubled into an adverb (探り探り) is no slip; a particle typed twice is
    feeling = "# 開発\n\nまだ探り探りかつ学びながらの実装ではありますが、確かなメリットを感じています。\n"
    assert "rule:doubled-word" not in sources("language_quality", feeling)
    assert "rule:doubled-word" in sources("language_quality", feeling.replace("実装では", "実装にには"))


def test_round_51_a_classical_set_phrase_has_no_style():
    # 「めでたしめでたし。」 closes a story in classical form: neither です/ます nor だ/である
    story = (
        "# 移行\n\n" + "設定を見直しました。" * 3 + "\n\n無事リダイレクトさせることに成功したのでした。めでたしめでたし。\n\n"
        + "次はBloggerの話です。画像が消えていました。\n"
    )
    assert "rule:mixed-style" not in sources("language_quality", story)
    assert "rule:mixed-style" in sources("language_quality", story.replace("めでたしめでたし。", "これで完了した。"))


def test_round_51_sweep_causes():
    # the socket an agent listens on is a path, no secret
    sock = "# 設定\n\n```bash:~/.zshrc\nexport SSH_AUTH_SOCK=~/.1password/agent.sock_Xq7Lm2Vz9Rk4\n```\n"
    assert "rule:assigned-secret" not in sources("privacy", sock)
    assert "rule:assigned-secret" in sources("privacy", sock.replace("SSH_AUTH_SOCK", "SSH_AUTH_TOKEN"))
    # CloudFormation's dynamic reference reads the password from Secrets Manager: nothing is written in
    ref = (
        "# RDS\n\n```yaml\nResources:\n  DB:\n    Properties:\n"
        '      MasterUsername: !Sub "{{resolve:secretsmanager:${Secret}:SecretString:username}}"\n```\n'
    )
    assert "rule:hardcoded-credential" not in sources("code_quality", ref)
    literal = '# RDS\n\n```yaml\nResources:\n  DB:\n    Properties:\n      SecretString: "hunter2hunter"\n```\n'
    assert "rule:hardcoded-credential" in sources("code_quality", literal)
    # Python logging's record attribute is a word of the field
    logger = "# Logging\n\nPython's logger prints the lineno and the funcName of each call, which helps a lot.\n"
    assert "rule:spelling" not in sources("language_quality", logger)


ZENN_FRONT = '---\ntitle: "OpenRouter"\nemoji: "🤖"\ntype: "tech"\ntopics: ["ai"]\npublished: true\n---\n\n'


def test_round_52_zenn_links_bare_urls_as_its_linkify_does():
    # Zenn's markdown-it ends a host at 。 and links nothing glued to a letter; GitHub's autolink runs on to the space
    table = "# 準備\n\n| サービス | 備考 |\n| --- | --- |\n| OpenRouter | https://openrouter.ai。無料アカウントで API キー取得可 |\n"
    glued = "# 起動\n\nローカルでは http://localhost:7071を使用します。\n"
    assert "rule:bare-url-swallow" not in sources("markdown_format", ZENN_FRONT + table)
    assert "rule:bare-url-swallow" not in sources("markdown_format", ZENN_FRONT + glued)
    assert "rule:bare-url-swallow" in sources("markdown_format", table)  # no platform: GFM's autolink
    # a path runs on through Japanese on Zenn too: the bracket and the particle are swallowed
    path = "# 参考\n\nAPI (https://covid19api.com/）を使います。\n"
    assert "rule:bare-url-swallow" in sources("markdown_format", ZENN_FRONT + path)


def test_round_52_sweep_empty_links_past_three_are_one_finding():
    # a page copied from Zenn's rendered HTML keeps each heading's anchor as an empty link: one fix, one finding
    body = "".join(f"[](#%E3%81%AF{n}) 見出し{n}\n\n本文です。\n\n" for n in range(5))
    found = [i for i in apply_rule_control(run("link", ZENN_FRONT + body), {}) if i.source == "rule:empty-link-text"]
    assert [i.line_start for i in found] == [9]
    assert to_japanese("empty-link-text", found[0].problem) == "テキストのないリンクが5個あります（9, 13, 17, 21, 25行目）。"
    few = "".join(f"[](#%E3%81%AF{n}) 見出し{n}\n\n本文です。\n\n" for n in range(2))
    assert len([i for i in apply_rule_control(run("link", ZENN_FRONT + few), {}) if i.source == "rule:empty-link-text"]) == 2


def test_round_52_sweep_words():
    # freee (a Japanese accounting service) and deref (dereference) are words of the field
    text = "# Notes\n\nWe export the books from freee, and the code must deref the pointer before it writes.\n"
    assert "rule:spelling" not in sources("language_quality", text)
    assert "rule:spelling" in sources("language_quality", text.replace("pointer", "pointr"))


def test_round_53_causes():
    # a line that trails off ends its sentence: the bracketed aside below has its own が
    trailing = "# はじめに\n\nネットで検索すればすぐに出て来ると思いますが…\n(Qiitaにも同じ記事がありますがバックアップも兼ねて持ってきました)\n"
    assert "rule:doubled-conjunctive-ga" not in sources("language_quality", trailing)
    one = "# はじめに\n\nネットで検索すればすぐに出て来ると思いますが、Qiitaにも同じ記事がありますがバックアップです。\n"
    assert "rule:doubled-conjunctive-ga" in sources("language_quality", one)
    # a button named with an action (「データセットを作成」) is clicked: its を is the label's
    button = "# 手順\n\nデータセットを作成をクリックするとエクスプローラーに表示されます。\n"
    assert "rule:doubled-particle" not in sources("language_quality", button)
    assert "rule:doubled-particle" in sources("language_quality", "# 手順\n\nコピーしたものをエディタに貼り付けをします。\n")
    # 「1.と関連しますが」 refers to point 1; 「1.手順」 is an item that lost its space
    refer = "# 3. 要約は要らない\n\n1.と関連しますが、欲しいのは規程の文章そのものです。\n"
    assert "rule:list-marker-space" not in sources("markdown_format", refer)
    item = "# 手順\n\n1.手順を確認します\n2.設定を変えます\n"
    assert "rule:list-marker-space" in sources("markdown_format", item)


def test_round_53_sweep_causes():
    # a kana noun written twice is colloquial reduplication; a formal noun typed twice is a slip
    edge = "# 操作\n\n履歴が隠れた際にはきわきわまでカーソルを当てないといけません。\n"
    assert "rule:doubled-word" not in sources("language_quality", edge)
    assert "rule:doubled-word" in sources("language_quality", "# 操作\n\n設定を変更することことができます。\n")
    # chdir is Vim's and the shell's command
    vim = "# Vim\n\nVim has a chdir command that moves the current directory while you edit.\n"
    assert "rule:spelling" not in sources("language_quality", vim)


def test_round_54_a_prefixed_tool_name_is_a_word():
    # “ungzip”: un- on gzip, a word of the field, is the writer's verb, not a slip of unzip
    text = "# Writeup\n\nI had to ungzip the archive before the strings showed the flag we wanted.\n"
    assert "rule:spelling" not in sources("language_quality", text)
    assert "rule:spelling" in sources("language_quality", text.replace("archive", "archvie"))


def test_round_54_sweep_definitions_under_a_shortcode_target_are_defined():
    # Hugo expands {{< relref >}} before Markdown: the definitions glued under it are definitions
    body = (
        "# Deploy\n\nSee [continuous integration][ci] and the [repository][repo].\n\n"
        '[ci]: {{< relref "mastering-ci.md" >}}\n[repo]: https://github.com/example/deploy\n'
    )
    assert "rule:undefined-reference" not in sources("link", body)
    glued = "# Deploy\n\nSee [the repository][repo] for the code\n[repo]: https://github.com/example/deploy\n"
    assert "rule:undefined-reference" in sources("link", glued)


def test_round_54_sweep_words():
    # British -iser (organisers), a linted file, Spring Initializr
    text = ("# Notes\n\nThe organisers thanked everyone; each file is linted before the build, and the "
            "project came from Spring Initializr with the web starter.\n")
    assert "rule:spelling" not in sources("language_quality", text)
    assert "rule:spelling" in sources("language_quality", text.replace("thanked", "thankd"))


def test_round_55_sweep_a_habit_repeated_is_one_finding():
    # steps numbered without a space after the marker, headings used as the items of a list: one fix each
    steps = "# 手順\n\n" + "".join(f"{n}.手順{n}を実行する  \n" for n in range(1, 6)) + "\n本文です。\n"
    found = [i for i in apply_rule_control(run("markdown_format", steps), {}) if i.source == "rule:list-marker-space"]
    assert len(found) == 1
    assert to_japanese("list-marker-space", found[0].problem) == "後ろに空白のないリスト記号が5個あります（3, 4, 5, 6, 7行目）。"
    apps = "# アプリ\n\nよく使うものです。\n\n" + "".join(f"## App{n}\n\n" for n in range(5)) + "## まとめ\n\n以上です。\n"
    found = [i for i in apply_rule_control(run("structure", apps), {}) if i.source == "rule:empty-section"]
    assert len(found) == 1 and found[0].problem.startswith("5 sections are empty")


def test_round_56_asterisks_that_hold_nothing_are_no_failed_bold():
    # Hatena's heading marks (`** 見出し`) and a note mark in brackets (`(**)`) were never bold
    hatena = "# テックリード\n\n** テックリードの悩み\n\n本文です。\n\n*** システムに関するプレッシャ\n\n本文です。\n"
    mark = "# メモ\n\n- 問い合わせの先に何があるのかを意識すること(**)\n- 教育制度の構築が重要そう(**)\n"
    assert "rule:strong-flanking" not in sources("markdown_format", hatena)
    assert "rule:strong-flanking" not in sources("markdown_format", mark)
    # bold closed against a bracket and a letter still fails to render
    failed = "# メモ\n\nここから**承認パイプライン（draft→承認）**を導入しました。\n"
    assert "rule:strong-flanking" in sources("markdown_format", failed)


def test_round_56_sweep_hatena_code_blocks_are_code():
    # Hatena Blog's own markup: `>|` … `|<` and `>|lisp|` … `||<` hold code, not prose
    pre = "# Emacs\n\n仕方ないので,\n\n>|\nemacsclient -e '(progn (defun yes-or-no-p (p) t) (kill-emacs))'\n|<\n\nとすることにした.\n"
    sup = "# Lisp\n\n>|lisp|\n(list nil nil nil)\n||<\n\n以上.\n"
    assert "rule:spelling" not in sources("language_quality", pre)
    assert "rule:doubled-word" not in sources("language_quality", sup)
    # without the closing mark it stays a quote of prose
    assert "rule:spelling" in sources("language_quality", pre.replace("|<\n", "").replace("progn", "progn teh"))


def test_round_59_an_article_with_as_many_plain_as_polite_sentences_has_no_majority_to_slip_from():
    # Plain notes with polite remarks to the reader, 14 sentences of each: no style holds 大半, even
    # where a plain section of its own leaves the rest mostly polite.
    intro = "## はじめに\n\n" + "".join(f"この設定は{n}番目の項目を変更します。\n" for n in range(6))
    intro += "ただ、実際の案件ではポリシーが存在することもある。\nロックアウト機構は標準のままでは調節できない。\n\n"
    notes = "## 実装\n\n" + "".join(f"この手順は{n}回目の作業である。\n" for n in range(4))
    assert "rule:mixed-style" not in sources("language_quality", intro + notes)
    one_more = intro.replace("## はじめに\n\n", "## はじめに\n\nこの記事は設定の手順を紹介します。\n")
    assert "rule:mixed-style" in sources("language_quality", one_more + notes)  # 7 polite against 6 plain


def test_round_59_sweep_a_handle_before_an_honorific_is_a_name():
    text = JA_HEAD + "上の記事をまとめている tricken さんの意見に完全に同意しています。\n"
    assert "rule:spelling" not in sources("language_quality", text)
    assert "rule:spelling" in sources("language_quality", JA_HEAD + "上の意見は tricken だと思います。\n")


def test_round_59_sweep_velero_is_a_tool():
    text = JA_HEAD + "今では Argo や Istio, velero 等の CRD もエコシステムに含まれます。\n"
    assert "rule:spelling" not in sources("language_quality", text)


def test_round_59_sweep_a_jsonc_file_and_an_elided_dict_are_no_syntax_errors():
    jsonc = '# Deno\n\n```json:deno.jsonc\n{\n  "tasks": {\n    "cache": "deno cache deps.ts",\n  }\n}\n```\n'
    assert "rule:syntax-json" not in sources("code_quality", jsonc)
    assert "rule:syntax-json" in sources("code_quality", jsonc.replace("deno.jsonc", "deno.json"))
    elided = '# Score\n\n```python\n{\n    "scoring": {"method": "cosine"},\n    "results": [{"similarity": 0.78, ...}]\n}\n```\n'
    assert "rule:syntax-python" not in sources("code_quality", elided)
    assert "rule:syntax-python" in sources("code_quality", elided.replace(", ...}", ", }}"))


def test_round_60_logit_and_evals_are_terms_of_the_field():
    for line in ("2-token Value Basisの設計も秀逸だ。logit差を取ることで共通シフトに対して不変になる。",
                 "出力の品質を採点するevalsでもなく、事後に測るという層です。"):
        assert "rule:spelling" not in sources("language_quality", JA_HEAD + line + "\n"), line


def test_round_56_a_name_alone_in_japanese_quotation_brackets_is_no_misspelling():
    line = "レンタルサーバー「ロリポップ」、ハンドメイドマーケット「minne」等のサービスがある。"
    assert "rule:spelling" not in sources("language_quality", JA_HEAD + line + "\n")
    assert "rule:spelling" in sources("language_quality", JA_HEAD + "ハンドメイドマーケットの minne 等がある。\n")


def test_round_60_sweep_a_heading_anchor_that_opens_in_latin_letters_is_part_of_the_address():
    line = "https://mcommit.hatenadiary.com/entry/2019/12/05/235100#bitbakeがレイヤとレシピを認識する流れ\n"
    zenn = "---\ntitle: \"x\"\nemoji: \"🔧\"\ntype: \"tech\"\ntopics: []\npublished: true\n---\n\n"
    for head in (JA_HEAD, zenn):
        assert "rule:bare-url-swallow" not in sources("markdown_format", head + line)
    assert "rule:bare-url-swallow" in sources("markdown_format", JA_HEAD + "https://example.com/entry/5がレイヤとレシピを認識する流れ\n")


def test_round_60_sweep_set_phrases_with_wo_are_no_second_object():
    for line in ("レビューの基本原則を身をもって学びました。", "この経験を糧にさらなる成長を目指します。"):
        assert "rule:doubled-particle" not in sources("language_quality", JA_HEAD + line + "\n"), line
    assert "rule:doubled-particle" in sources("language_quality", JA_HEAD + "ユーザー名をパスワードを指定して入力します。\n")


def test_round_60_sweep_a_name_then_a_longer_name_opening_with_it_is_no_doubled_word():
    assert "rule:doubled-word" not in sources("language_quality", JA_HEAD + "- **腾讯 腾讯元器**：まだ使用したことがありません。\n")
    assert "rule:doubled-word" in sources("language_quality", JA_HEAD + "基本的なオプションオプションとして設定します。\n")


def test_round_61_ls_output_pasted_as_text_is_no_prose():
    # `ls -al` output written outside a code block: "root root" is the owner and the group.
    listing = "/kaggle/working\ntotal 4\n-rw-r--r-- 1 root root 2839 Apr 18 07:54 **submission.csv**\n"
    assert "rule:doubled-word" not in sources("language_quality", JA_HEAD + "下記コードを実行すると、ファイルが出来ます。\n\n" + listing)
    assert "rule:doubled-word" in sources("language_quality", JA_HEAD + "この設定は root root で実行されるユーザーを決めます。\n")


def test_round_61_a_spacing_entity_is_no_character_of_the_sentence():
    # Sixteen &emsp; before a bold arrow, a layout spacer between two screenshots.
    spacer = "&emsp;" * 16 + "**↓**\n"
    text = JA_HEAD + "提出が成功して、処理が動き出します。\n\n" + spacer + "Competitionsのページに飛ぶ → 結果が表示されます。\n"
    assert "rule:sentence-length" not in sources("language_quality", text)
    long = ("このコースでは、課題としてディスクイメージが配られ、様々なツールを駆使してポートスキャンやパスワード解析、"
            "権限奪取を行うので、前提知識が少ない場合は時間がかかりますが、地道に取り組めば必ず解けるように作られていて、"
            "最後まで楽しく取り組めました。\n")
    assert "rule:sentence-length" in sources("language_quality", JA_HEAD + "&emsp;" + long)


def test_round_61_a_thought_quoted_without_brackets_keeps_its_own_style():
    # 「…よく分からん。という人向けの記事ですね。」: the plain sentence is the reader's thought, closed by という.
    polite = "".join(f"この記事では{n}番目の使い方を説明します。\n" for n in range(6))
    quoted = "使ってみたいけど日本語記事がないからよく分からん。という人向けの記事ですね。\n"
    assert "rule:mixed-style" not in sources("language_quality", JA_HEAD + polite + quoted)
    thought = "`...` は何も返さない可能性がある。と認識したうえで今後使っていきたいです。\n"  # と + サ変 noun + する
    assert "rule:mixed-style" not in sources("language_quality", JA_HEAD + polite + thought)
    for slip in ("使ってみたいけど日本語記事がないからよく分からん。なので人向けの記事を書きました。\n",
                 # 「ということで」 goes on from the writer's own sentence: no quotation
                 "単独では間違えてもらわないといけない。ということで、間違えてもらうことにしました。\n"):
        assert "rule:mixed-style" in sources("language_quality", JA_HEAD + polite + slip), slip


def test_sweep_61_a_query_value_ends_at_the_next_ampersand():
    # Google's `authuser=0` picks the signed-in account; the rest of the query is other parameters.
    line = "https://firebase.google.com/docs/crashlytics/test-implementation?authuser=0&platform=ios&hl=ja#swiftui\n"
    assert "rule:link-secret" not in sources("privacy", JA_HEAD + line)
    leaked = "https://example.com/callback?auth_token=9fK2xQ7vLm3ZpR8tYw4N&platform=ios\n"
    assert "rule:link-secret" in sources("privacy", JA_HEAD + leaked)


def test_sweep_61_a_service_named_after_secrets_is_no_credential():
    # LocalStack's health check lists its services: `secretsmanager` is AWS Secrets Manager.
    health = '# Health\n\n```json\n{"services": {"s3": "running", "secretsmanager": "available", "ssm": "available"}}\n```\n'
    assert "rule:hardcoded-credential" not in sources("code_quality", health)
    config = '# Config\n\n```json\n{"secret": "catchThatBird"}\n```\n'
    assert "rule:hardcoded-credential" in sources("code_quality", config)


def test_sweep_61_sore_wa_sore_de_is_an_idiom_not_a_doubled_particle():
    line = "スクロール領域をうまく検出するのはそれはそれで時間がかかりそうなので仕方ないような気もします。\n"
    assert "rule:doubled-word" not in sources("language_quality", JA_HEAD + line)
    for slip in ("これはこの設定についてについて説明する記事です。\n", "gRPC では通信では通信を行うインターフェースを定義します。\n"):
        assert "rule:doubled-word" in sources("language_quality", JA_HEAD + slip), slip


def test_round_48_the_term_a_list_item_defines_is_a_name():
    # CS:APP's labs, each defined in a list item: shlab is the shell lab, no misspelt slab.
    labs = "Highlights:\n\n* malloclab -- a segregated-list malloc.\n* shlab -- processes, signal handling.\n"
    text = "# Course notes\n\nThis course is about systems programming and the labs that come with it.\n\n" + labs
    assert "rule:spelling" not in sources("language_quality", text)
    assert "rule:spelling" in sources("language_quality", text.replace("* shlab --", "* the shlab is about"))


def test_round_62_a_wa_that_opens_the_first_of_two_contrasted_clauses_is_no_doubled_topic():
    # 「私は[700ms以上のコマンドは…表示]、[45秒以上かかったコマンドは…送る]」: the writer's topic, then
    # two clauses set against each other, each with its own は.
    line = "閾値を設定できて、私は700ms以上のコマンドは実行時間を表示、45秒以上かかったコマンドは通知を送るように設定しています。\n"
    assert "rule:doubled-particle" not in sources("language_quality", JA_HEAD + line)
    # No second contrasted clause: the two は still compete for one predicate.
    for slip in ("経験年数が短い人は自分は希望年収を書いた方が良いです。\n",
                 "私は700ms以上のコマンドは実行時間を表示するように、設定しています。\n"):
        assert "rule:doubled-particle" in sources("language_quality", JA_HEAD + slip), slip


def test_round_63_a_chain_of_names_joined_by_arrows_is_read_item_by_item():
    chain = "synchronized→Thread→ExecutorService→AsyncTask→Coroutines→Virtual Threads"
    line = (f"- Android側の非同期処理の変遷({chain})は「排他制御」と「順序保証」の違い、"
            "そして抽象化レベルの引き上げの歴史として整理できる\n")
    assert "rule:sentence-length" not in sources("language_quality", JA_HEAD + line)
    # The same steps told as clauses are a long sentence.
    clauses = line.replace(chain, "synchronizedで始まってThreadを経てExecutorServiceに移りAsyncTaskとCoroutinesを通ってVirtual Threadsに至る")
    assert "rule:sentence-length" in sources("language_quality", JA_HEAD + clauses)


def test_round_64_a_terminal_session_pasted_without_a_fence_opens_no_section():
    # `rbenv init` prints two `#` comment lines; pasted unfenced, Markdown renders them as h1.
    session = ("ns-nt078:~ too$ rbenv init\n# Load rbenv automatically by adding\n"
               "# the following to ~/.bash_profile:\n\neval \"$(rbenv init -)\"\n\nns-nt078:~ too$ which ruby\n")
    text = "# rbenv\n\nrbenv を入れた時のログです。\n\n" + session
    assert "rule:empty-section" not in sources("structure", text)
    headings = [h.text for h in parse_article(text).headings]
    assert headings == ["rbenv"]
    # A heading of the writer's own, after a blank line, still opens its section.
    written = text + "\n# Load rbenv automatically by adding\n# Next\n\nSome text.\n"
    assert "rule:empty-section" in sources("structure", written)


def test_round_64_a_package_with_its_version_in_parentheses_is_a_name():
    output = "Installing celluloid (0.13.0)\nInstalling minitar (0.5.4)\nInstalling systemu (2.5.2)\n"
    text = "# Gems\n\nThe bundle installs these gems and their dependencies.\n\n" + output
    assert "rule:spelling" not in sources("language_quality", text)
    # A bare version is not enough: a typo before it stays a typo.
    assert "rule:spelling" in sources("language_quality", text + "\nThe scripts run on pyhton 3.12 only.\n")


def test_round_65_the_wa_before_a_negated_aru_marks_what_is_denied():
    for line in ("今まで見てきたメタプログラミングという側面とこの側面は直接には関係はないのですが、DSLでは便利に使います。\n",
                 "これは大した理由はないのですが、慣れているのでこちらを使います。\n",
                 "この方式は特に制限はありませんが、速度が落ちます。\n"):
        assert "rule:doubled-particle" not in sources("language_quality", JA_HEAD + line), line
    # A verb between (「エラーは出なくなった」) keeps the stacked は a finding.
    assert "rule:doubled-particle" in sources("language_quality", JA_HEAD + "しかしこれはエラーは出なくなったものの遅くなりました。\n")


def test_round_3_a_field_label_written_as_an_action_holds_its_own_wo():
    # Proxmox's two-factor dialog has a field labelled 「コードを検証」 (Verify Code).
    line = "QRコードが正しく読み込めると、アプリ上に数桁のコードが表示されるので、その数値をコードを検証の部分に入力します。\n"
    assert "rule:doubled-particle" not in sources("language_quality", JA_HEAD + line)
    assert "rule:doubled-particle" not in sources("language_quality", JA_HEAD + "画像をファイルを選択ボタンから選びます。\n")
    # Not a part of the screen: two を still compete for one verb.
    assert "rule:doubled-particle" in sources("language_quality", JA_HEAD + "その数値をコードを検証して入力します。\n")


def test_round_54_a_french_phrase_wrapped_across_lines_is_no_misspelling():
    text = ("# dotGo\n\nWe argued over a decision tree for ranking pastries (almond croissant vs. pain au\n"
            "chocolat), then boarded the train to the conference.\n")
    assert "rule:spelling" not in sources("language_quality", text)
    assert "rule:spelling" in sources("language_quality", text.replace("pain au\nchocolat", "pain and\nchocolat"))


def test_round_67_two_multiplication_signs_in_one_paragraph_are_no_emphasis():
    # A derivation written as text: each `*` has a space on both sides, so neither opens emphasis.
    derivation, emphasis = linted(
        JA_HEAD + "そして、M1を求める手順によるとP’’z = 2/(F-N) * P’zなので、P’zについて解くと\n"
        "P’z = (F-N)/2 * P’’zより\n",
        # Emphasis the writer meant, its spaces inside the markers, is still reported.
        JA_HEAD + "ここは * 重要 * です。\n",
    )
    assert "pymarkdownlnt:MD037" not in {rule for rule, _ in derivation}
    assert ("pymarkdownlnt:MD037", 3) in emphasis


def test_round_67_an_error_message_under_a_python_tag_is_output():
    text = "# Colab\n\nColab でこんなエラーが出ました。\n\n```python\nURLError: <urlopen error [Errno 99] Cannot assign requested address>\n```\n"
    assert "rule:syntax-python" not in sources("code_quality", text)
    # Code that merely starts with an annotated name is still Python to check.
    broken = text.replace("URLError: <urlopen error [Errno 99] Cannot assign requested address>",
                          "from urllib.error import URLError\nprint(URLError(\"x\")")
    assert "rule:syntax-python" in sources("code_quality", broken)


def test_round_67_a_by_the_way_opener_sets_nothing_against_anything():
    line = ("ちなみにですが、OpenGLでは左手座標に合わせることが多いらしく、逆転させた行列が標準であるようなのですが"
            "混乱の元なので記事ではそのままにします。\n")
    assert "rule:doubled-conjunctive-ga" not in sources("language_quality", JA_HEAD + line)
    assert "rule:doubled-conjunctive-ga" not in sources("language_quality", JA_HEAD + line.replace("ちなみにですが", "余談ですが"))
    # An opener that itself concedes something (「しつこいですが」) is a contrast like any other.
    assert "rule:doubled-conjunctive-ga" in sources("language_quality", JA_HEAD + line.replace("ちなみにですが", "しつこいですが"))


def test_round_68_a_word_of_a_hyphenated_option_is_not_typed_twice():
    # `copilot --help` pasted as a list: each option, then its placeholder argument.
    options = ("- --disable-mcp-server server-name  特定のMCPサーバーを無効にする\n"
               "- --log-level level              ログレベルを設定する\n")
    assert "rule:doubled-word" not in sources("language_quality", JA_HEAD + options)
    # A word typed twice in Japanese prose next to it is still a slip.
    assert "rule:doubled-word" in sources("language_quality", JA_HEAD + options + "\n今回の記事では設定ファイルのの書き方について詳しく説明していきます。\n")


def test_round_69_a_typo_in_the_front_matter_title_is_reported():
    head = "---\ntitle: The state pattern pracitices for a diagraming app\ndate: 2023-11-25\n---\n\n"
    body = "Let's begin from the most primordial feature: panning a shape in the canvas.\n"
    assert lines("language_quality", head + body, "rule:spelling") == [2]
    # A title of names and terms is left alone, as in the body.
    named = head.replace("The state pattern pracitices for a diagraming app", "Zola, Hugo and Jekyll compared")
    assert "rule:spelling" not in sources("language_quality", named + body)


def test_round_70_a_title_case_typo_in_the_title_is_reported():
    head = "---\ntitle: \"【初心者向け】AWS IAM Identiry Center 入門！\"\n---\n\n"
    body = "IAM Identity Center は AWS アカウントへのシングルサインオンを提供します。Identity Center の設定を見ていきます。\n"
    assert lines("language_quality", head + body, "rule:spelling") == [2]
    # A capitalised name the body repeats is a name, not a slip.
    named = "---\ntitle: \"Nydus と Dragonfly で画像を配る\"\n---\n\n"
    assert "rule:spelling" not in sources("language_quality", named + "Nydus は Dragonfly と組み合わせて使います。Nydus の設定を見ます。\n")


def test_round_71_a_が_that_announces_the_topic_sets_nothing_against_anything():
    line = ("ではどうすれば良いのか？ということですが、チーム構成としては関心ごとは別で独立していますが、"
            "越境して関心ごとを考える必要があると考えています。\n")
    assert "rule:doubled-conjunctive-ga" not in sources("language_quality", JA_HEAD + line)
    topic = line.replace("ではどうすれば良いのか？ということですが", "チーム構成についてですが")
    assert "rule:doubled-conjunctive-ga" not in sources("language_quality", JA_HEAD + topic)
    # What was said, then set against what is so (「公式にはサポート外ということですが」), is a contrast.
    hearsay = line.replace("ではどうすれば良いのか？ということですが", "公式にはサポート外ということですが")
    assert "rule:doubled-conjunctive-ga" in sources("language_quality", JA_HEAD + hearsay)


def test_round_74_a_clause_ending_in_と_quoted_by_と_is_no_doubled_word():
    line = "全体的にまだまだ知識や改善の引き出しを増やさないとと感じますが、前回より貢献できたことが増えたのがよかったです。\n"
    assert "rule:doubled-word" not in sources("language_quality", JA_HEAD + line)
    # An extra と after a clause, before a noun, is still a slip.
    assert "rule:doubled-word" in sources("language_quality", JA_HEAD + "このボタンを押すととページが開くので、設定を確認します。\n")
    # 「したいと」 is no clause of its own: 「したいとという要件」 has a と too many (round 27's true label).
    assert "rule:doubled-word" in sources("language_quality", JA_HEAD + "テーブルを横スクロールにしたいとという要件があったとします。\n")


def test_round_74_a_figure_caption_a_blank_line_below_its_image_describes_it():
    # Hashnode's export: the image, a blank line, then the caption in italics.
    figure = "# Postfix\n\n![](https://cdn.hashnode.com/res/a.png align=\"center\")\n\n*Figure 2: The memory usage after the fix*\n"
    assert "rule:image-alt" not in sources("markdown_format", figure)
    assert "rule:image-alt" not in sources("markdown_format", figure.replace("Figure 2:", "図2").replace("The memory usage after the fix", "修正後のメモリ使用量"))
    # Emphasis a blank line away that does not call itself a figure is a paragraph of its own.
    assert "rule:image-alt" in sources("markdown_format", figure.replace("Figure 2: ", ""))
    # A figure label that only names the source still describes nothing.
    assert "rule:image-alt" in sources("markdown_format", figure.replace("The memory usage after the fix", "source: https://example.org"))


def test_round_75_a_french_line_with_few_accents_holds_no_english_typos():
    # A CTF write-up quotes the challenge in French, then in English (🇫🇷/🇬🇧): four accented words in 33.
    french = (">🇫🇷 – Il semble également qu'APT-509 utilise un autre canal de communication, en plus de cette "
              "application, pour échanger entre ses membres. Pourriez-vous nous préciser la date de création de cet autre canal ?\n")
    assert "rule:spelling" not in sources("language_quality", JA_HEAD + "問題文は次の通りです。\n\n" + french)
    # French function words are what tell it: an English line with the same typo is still read.
    english = "> It also appears that the group talks to its membres over another channel, as the app's logs show.\n"
    assert lines("language_quality", JA_HEAD + "問題文は次の通りです。\n\n" + english, "rule:spelling") != []


def test_round_78_a_package_named_here_is_named_by_its_own_address():
    named = "# Paths\n\nRの[here](https://here.r-lib.org) というパッケージはプロジェクトのルートを取得します。\n"
    project = "# Tools\n\nThe [link](https://github.com/example/link) tool checks every URL in a page.\n"
    # “here” that only points somewhere is still reported, also when the word is inside a longer name.
    plain = "# Paths\n\nThe package is described [here](https://cran.r-project.org/web/packages/here-docs/).\n"
    bare = "# Paths\n\nSee [here](https://example.org/docs).\n"
    found = [{rule for rule, _line in issues} for issues in linted(named, project, plain, bare)]
    assert ["pymarkdownlnt:MD059" in rules for rules in found] == [False, False, True, True]


def test_round_79_python_3_12_f_strings_and_a_quotation_closed_by_a_single_quote():
    # PEP 701 (Python 3.12): the f-string's own quotes inside a replacement field are valid code.
    block = (
        "# MCP\n\n```python\ndef formatted(shops):\n"
        "    return \"\\n\".join([f\"Shop: {shop['name']}, URL: {shop['urls']['pc'].replace(\"map\", \"food\")}\" for shop in shops])\n```\n"
    )
    assert "rule:syntax-python" not in sources("code_quality", block)
    # An f-string left open is still an error on every Python.
    broken = "# MCP\n\n```python\ndef formatted(shop):\n    return f\"Shop: {shop['name']\"\n```\n"
    assert "rule:syntax-python" in sources("code_quality", broken)
    # `…your app.' Redux offers`: the full stop inside straight single quotes ends the sentence.
    quoted = ("# Redux\n\nHis argument is that state management in single-page applications 'is hard', and that with "
              "MVC patterns 'It’s still very easy to make a mess of your app.' Redux offers an opinionated, "
              "functional solution to this state problem by using a single store for your tree of observable objects, "
              "as opposed to patterns that use multiple stores, like Flux.\n")
    assert "rule:sentence-length" not in sources("language_quality", quoted)
    assert "rule:sentence-length" in sources("language_quality", quoted.replace("app.' Redux", "app' and Redux"))


def test_round_80_an_emoji_at_the_end_of_a_japanese_line_ends_its_sentence():
    text = JA_HEAD + (
        "Slack APIのトークンの持ち方は元々ちょっとクセがあるので、そこさえクリアになれば複製は全然問題なさそうですね👀\n"
        "ただ、アイテムの属性を見にいくことが現状できないので、属性を見ようと思ったらリストの全情報を取得して、ローカル内で検索する処理が必要そうです。\n"
    )
    assert "rule:sentence-length" not in sources("language_quality", text)
    # Without the emoji the line break alone does not end the sentence: one sentence of two lines, too long.
    assert lines("language_quality", text.replace("👀\n", "\n"), "rule:sentence-length") == [3]


def test_round_82_python_2_blocks_are_one_finding_that_says_so():
    block = "```python\nprint weights[:5], model.intercept\n```\n"
    text = "# Spark\n\nThe weights:\n\n" + block + "\nThe predictions:\n\n" + block.replace("weights[:5], model.intercept", "predictions.take(5)")
    found = [i for i in run("code_quality", text) if i.source == "rule:syntax-python"]
    assert [(i.line_start, i.problem) for i in found] == [
        (6, "Python 2 code: the print statement (lines 6, 12) is a syntax error in Python 3.")
    ]
    assert to_japanese("syntax-python", found[0].problem) == (
        "Python 2 のコードです: print 文（6, 12行目）は Python 3 では構文エラーになります。"
    )
    # Other syntax errors in the same article stay findings of their own.
    broken = text + "\nAnd:\n\n```python\ndef f(:\n    pass\n```\n"
    assert len([i for i in run("code_quality", broken) if i.source == "rule:syntax-python"]) == 2


def test_round_84_an_opener_that_leaves_the_subject_sets_nothing_against_anything():
    line = ("関係ないですが Go で書くと Public な GitHub に置いておくとほぼ自動でドキュメントを生成してくれるの"
            "初めて知りましたがとても便利でした。\n")
    assert "rule:doubled-conjunctive-ga" not in sources("language_quality", JA_HEAD + line)
    assert "rule:doubled-conjunctive-ga" not in sources("language_quality", JA_HEAD + line.replace("関係ないですが", "話は逸れますが、"))
    # A topic set against what follows is a contrast like any other.
    assert "rule:doubled-conjunctive-ga" in sources("language_quality", JA_HEAD + line.replace("関係ないですが", "細かいですが"))


def test_round_85_a_section_number_after_its_letter_is_no_doubled_word():
    line = "Cとの互換性に関して記載された[\"Annex C C.6 C++ and ISO C\"](https://example.com/diff.iso)を参照しても見当たらない。\n"
    assert "rule:doubled-word" not in sources("language_quality", JA_HEAD + line)
    assert "rule:doubled-word" in sources("language_quality", JA_HEAD + line.replace("C C.6", "C C 6"))
    english = "# Notes\n\nThe rules are in Annex C C.6 of the standard, which covers compatibility with ISO C.\n"
    assert "rule:doubled-word" not in sources("language_quality", english)
    assert "rule:doubled-word" in sources("language_quality", english.replace("C C.6", "the the"))


def test_round_85_a_demonstrative_said_twice_is_emphasis():
    text = JA_HEAD + "これこれ！この情報が欲しかったんだよー。\n"
    assert "rule:doubled-word" not in sources("language_quality", text)
    assert "rule:doubled-word" in sources("language_quality", text.replace("これこれ！この", "このこの"))


def test_round_85_a_clipped_deshou_is_casual_not_polite():
    plain = "".join(f"これは{n}番目の説明である。\n" for n in range(6))
    text = JA_HEAD + plain + "さすがにUBならC++の互換性の記載で書くでしょ。\n"
    assert "rule:mixed-style" not in sources("language_quality", text)
    assert "rule:mixed-style" in sources("language_quality", text.replace("書くでしょ。", "書くでしょう。"))


def test_round_85_words_reported_after_ga_iu_niwa_keep_their_own_style():
    text = MIXED + "公式が言うには、小さな処理を書く時に`match`式だと不自然な書き方になってしまう。\n"
    assert "rule:mixed-style" not in sources("language_quality", text)
    assert "rule:mixed-style" in sources("language_quality", text.replace("公式が言うには、", "公式を読むと、"))


def test_round_85_wo_bane_ni_is_a_set_phrase():
    text = JA_HEAD + "この感動をバネにこの記事を書いたわけですが、本当に便利な機能だと思います。\n"
    assert "rule:doubled-particle" not in sources("language_quality", text)
    assert "rule:doubled-particle" in sources("language_quality", text.replace("をバネに", "を胸に"))


def test_round_85_a_chain_of_steps_with_de_no_is_read_item_by_item():
    text = JA_HEAD + (
        "私は割と PR ありきでの開発（別ブランチでの開発 → PR の作成 → セルフレビュー → マージ）をしているので、"
        "生成 AI エージェントが作成したソースコードに対してのレビューで、Approve / Request changes を付けられないのが"
        "嫌だったというのもある。\n"
    )
    assert "rule:sentence-length" not in sources("language_quality", text)
    longer = text.replace("付けられないのが", "付けられず、自分の名前でマージすることになってしまうのが")
    assert "rule:sentence-length" in sources("language_quality", longer)


def test_round_87_javascript_under_a_typescript_tag_renders_the_same():
    text = "# Jest\n\nThe code:\n\n```ts:index.js\nexport const f = async (a) => await a();\n```\n"
    assert "rule:code-filename" not in sources("code_quality", text)
    # The other way round the types lose their highlighting.
    assert "rule:code-filename" in sources("code_quality", text.replace("```ts:index.js", "```js:index.ts"))


def test_round_92_sentences_under_different_headings_are_not_in_a_row():
    text = JA_HEAD + (
        "## 問題A\n\nページが見つかり、正式名称がわかりました。\n\n"
        "が、入力途中に勝手に送信されて制限に引っかかりました。\n\n"
        "## 問題B\n\n> 引き継ぐ感じで取り組みました\n\n"
        "が、ほぼ自己解決されていました。\n"
    )
    assert "rule:doubled-conjunction" not in sources("language_quality", text)
    # Within one section the same two openers are in a row.
    assert "rule:doubled-conjunction" in sources("language_quality", text.replace("## 問題B\n\n", ""))


def test_round_95_a_ci_variable_as_a_git_url_password_is_no_secret():
    script = (
        "# CI\n\n```yaml:.gitlab-ci.yml\nscript:\n"
        "  - git push -f https://oauth2:$COMMIT_ACCESS_TOKEN@$CI_SERVER_HOST/$CI_PROJECT_PATH.git HEAD:main\n```\n"
    )
    assert not sources("privacy", script) & {"rule:assigned-secret", "rule:url-credentials"}
    # A literal password in the same place is still a leak, reported once as the URL's password.
    leaked = script.replace("$COMMIT_ACCESS_TOKEN@$CI_SERVER_HOST", "Xq7rT2pLm9ZkW4vN@gitlab.com")
    assert sources("privacy", leaked) & {"rule:assigned-secret", "rule:url-credentials"} == {"rule:url-credentials"}


def test_round_95_a_power_with_a_letter_exponent_is_no_bold_marker():
    table = "# 結果\n\n| 要素数(10**n) | 1 | 2 |\n|---|---|---|\n| for | 0.06 | 0.07 |\n"
    assert "rule:strong-flanking" not in sources("markdown_format", table)
    assert "rule:strong-flanking" in sources("markdown_format", table.replace("(10**n)", "の**「n」**乗"))


def test_round_96_an_ipython_magic_stored_in_an_item_is_valid_notebook_code():
    block = "# 計測\n\n```python\nsim_result = {}\nsim_result[\"filter\"] = %timeit -o result[:] = list(xs)\n```\n"
    assert "rule:syntax-python" not in sources("code_quality", block)
    # The same line without the magic's % is a Python syntax error, and is reported.
    assert "rule:syntax-python" in sources("code_quality", block.replace("%timeit -o ", "timeit -o "))


def test_round_96_operators_listed_in_prose_are_no_bold_markers():
    quote = "# 演算子\n\n> 二項算術演算 (+, -, *, @, /, //, %, divmod(), pow(), **, <<, >>, &, ^, |) を実装します。\n"
    assert "rule:strong-flanking" not in sources("markdown_format", quote)
    assert "rule:strong-flanking" not in sources("markdown_format", "# 演算子\n\n冪乗は (**, pow) で書けます。\n")
    # Bold that opens before a bracket and cannot close is still reported.
    assert "rule:strong-flanking" in sources("markdown_format", "# 演算子\n\nこれは **「強調」**です。\n")


def test_round_48_a_page_sent_to_the_printer_is_output_not_markdown():
    page = (
        "---\ntitle: Homework manager\n---\n\n# Homework manager\n\n"
        "In fact, all it does is send the following to the printer:\n\n"
        "```\n------------------------------\n**THE HOMEWORK MANAGER VERSION 1.0**\n------------------------------\n"
        "Subject: <...>\nDue Date: <...>\n------------------------------\nCopyright 1994.\n```\n"
    )
    assert "rule:code-language" not in sources("code_quality", page)
    # The same block introduced as a file to write is Markdown source, and still wants its tag.
    assert "rule:code-language" in sources("code_quality", page.replace("send the following to the printer", "save this as NOTES.md"))


def test_round_85_a_file_shown_from_its_one_member_to_change_is_an_excerpt():
    excerpt = (
        "# Lint\n\n`package.json` を更新します。\n\n"
        "```json:package.json\n{\n  \"scripts\": {\n    \"lint\": \"textlint . && markdownlint **/*.md\"\n  },\n}\n```\n"
    )
    assert "rule:syntax-json" not in sources("code_quality", excerpt)
    # A comma after the last of several members, or after a lone value, is a slip a reader would
    # copy: still reported.
    slip = excerpt.replace('  },\n}', '  },\n  "private": true,\n}')
    assert "rule:syntax-json" in sources("code_quality", slip)
    assert "rule:syntax-json" in sources("code_quality", '# Lint\n\n```json\n{\n  "private": true,\n}\n```\n')


def test_round_105_an_aside_in_brackets_on_a_line_of_its_own_ends_its_sentence():
    aside = (
        "# 試して無駄だったこと\n\n"
        "インターネットで調べると、以下のような記事が大量に出てきます。  \n"
        "（中身のない記事が多すぎて、必要な情報にたどり着けない。英語ページも探したが似たような状況）\n"
        "すべて試しましたが無駄でした。  \n"
    )
    assert "rule:doubled-conjunctive-ga" not in sources("language_quality", aside)
    # An aside that goes on in the next line's words is still part of that sentence.
    inside = (
        "# 試して無駄だったこと\n\n"
        "英語ページも探しましたが（似たような状況で）\n"
        "すべて試しましたが無駄でした。\n"
    )
    assert "rule:doubled-conjunctive-ga" in sources("language_quality", inside)
    # So is a sentence that opens with a bracket closed before the line ends (「（補足）…が」).
    opened = "# 試して無駄だったこと\n\n（補足）英語ページも探しましたが\nすべて試しましたが無駄でした。\n"
    assert "rule:doubled-conjunctive-ga" in sources("language_quality", opened)


def test_sweep_colloquial_doublings_are_no_slips():
    for line in (
        "フロントエンドよわよわなのでめっちゃ時間かかった。",  # 弱々, read as the particles よ + わ twice
        "`ssh` を叩いて `fingerprint` がなんとかかんとかとか言われたことがあるはずです。",  # かんとか, then とか
        "配列とかおれおれ Advent Calendar の記事を読みました。",  # おれおれ: home-made
        "ちょっと間に合わなかったので、ここは宿題とします笑笑",  # a laugh
    ):
        assert "rule:doubled-word" not in sources("language_quality", JA_HEAD + line + "\n"), line
    # A particle, a word or a compound particle typed twice is still reported.
    for slip in ("このシーンではは特に何も動作しません。", "外部からアクセスアクセスできません。", "設定というという項目があります。"):
        assert "rule:doubled-word" in sources("language_quality", JA_HEAD + slip + "\n"), slip


def test_sweep_a_preprocessor_directive_opening_a_prose_line_is_no_heading():
    notes, about, slip = linted(
        "# メモ\n\n## 「#if !defined(LEAP_H)」 is 何\n#ifで特定のシンボルが定義されているかどうかを調べる。  \n#endifで括る必要がある。\n",
        "# メモ\n\n#if文の使い方\n\n本文です。\n",
        "# メモ\n\n#はじめに\n\n本文です。\n",
    )
    assert not {("pymarkdownlnt:MD018", 4), ("pymarkdownlnt:MD018", 5)} & notes
    # A heading typed without its space is still reported, also one about the directive (`#if文`).
    assert ("pymarkdownlnt:MD018", 3) in about and ("pymarkdownlnt:MD018", 3) in slip


def test_sweep_field_terms_are_no_misspellings():
    for line in (
        "たたみこみのわくぐみを抽出した関数foldrについて学ぶ。",  # Haskell's right fold
        "後者ではhygenテンプレートなどを使いコンポーネントを作ります。",  # a code generator
    ):
        assert "rule:spelling" not in sources("language_quality", JA_HEAD + line + "\n"), line
    assert "rule:spelling" not in sources("language_quality", "# Laziness\n\nEach argument becomes a thunk until it is used.\n")
    # A misspelt word beside them is still reported.
    assert "rule:spelling" in sources("language_quality", "# Laziness\n\nEach argument becomes a thunk untill it is used.\n")


def test_sweep_a_button_named_with_an_action_then_the_word_button_is_clicked():
    button = "# 手順\n\n右上の秘密キーを生成　ボタンをクリックします。\n"
    assert "rule:doubled-particle" not in sources("language_quality", button)
    # Two を in one clause around an ordinary noun are still reported.
    assert "rule:doubled-particle" in sources("language_quality", "# 手順\n\nファイルを設定をボタンで保存します。\n")


def test_sweep_a_printed_list_announced_as_output_needs_no_tag():
    printed = "# 結果\n\n出力結果は\n\n```\n[20990, 23543, 23735, 24085, 24159]\n```\n\nとなります。\n"
    assert "rule:code-language" not in sources("code_quality", printed)
    # The same array announced as a file to write is JSON a reader copies, and wants its tag.
    written = printed.replace("出力結果は", "`ids.json` に次の内容を書きます。")
    assert "rule:code-language" in sources("code_quality", written)


def test_a_bare_url_and_a_sentence_ending_in_a_full_width_stop_title_no_section():
    # heldout107: a walkthrough whose writer ends sentences with 「．」 and puts link cards on lines
    # of their own was told its sections were titled by those lines.
    paragraph = "".join(f"手順{m}の説明をここに書きます．続けて読んでください．\n" for m in range(8))
    walkthrough = "".join(
        f"{line}\n\n{paragraph}\n"
        for line in ("https://livebook.dev/#install", "まず，このページのボタンを押します．", "次に，アイコンをクリックします．")
    )
    assert "rule:no-headings" not in sources("structure", walkthrough)
    titled = walkthrough.replace("まず，このページのボタンを押します．", "インストール").replace(
        "次に，アイコンをクリックします．", "起動"
    )
    issues = [i for i in run("structure", titled) if i.source == "rule:no-headings"]
    assert len(issues) == 1 and "lines 12, 23" in issues[0].problem
    assert to_japanese("no-headings", issues[0].problem) == "記事に見出しがなく、セクションの題が地の文の行で書かれています（12, 23行目）。"
    assert to_japanese("no-headings", issues[0].reason).startswith("ふつうの行や太字で書いた題は見出しではありません。")


def test_a_link_whose_text_is_a_formula_has_text():
    # Sweep: a Hugo post links [$\KaTeX$](https://katex.org/); the formula renders as the link's text.
    text = "# Notes\n\nFormulas are typeset by [$\\KaTeX$](https://katex.org/) on this site.\n"
    assert "rule:empty-link-text" not in sources("link", text)
    assert "rule:empty-link-text" in sources("link", "# Notes\n\nFormulas are typeset by [](https://katex.org/).\n")


def test_the_cancel_token_an_upload_api_returns_is_no_secret():
    # Sweep: a niconico upload walkthrough shows the API's reply, whose cancelToken calls the
    # upload off; the article was rejected by a critical for it. The upload token beside it is
    # still reported: a reply's token may well grant access.
    reply = '# Upload\n\n```json\n{\n  "data": {\n    "cancelToken": "DpMOxAhI7KKNx6ViJOLBLnrby73b7WILr08z"\n  }\n}\n```\n'
    assert "rule:assigned-secret" not in sources("privacy", reply)
    assert "rule:assigned-secret" in sources("privacy", reply.replace("cancelToken", "uploadToken"))


def test_a_json_template_and_a_snip_line_are_no_json_syntax_errors():
    # Sweep: runn's response.json.template fills a value with a Go template and leaves members out
    # with `.. snip ..`; neither is a fault of the JSON the reader's file will hold.
    template = '# runn\n\n```json\n{\n  "id": {{.steps.createUser.res.body.id}},\n  "username": "alice"\n}\n```\n'
    snipped = '# runn\n\n```json\n{\n  "id": 1,\n  "username": "alice",\n  .. snip ..\n}\n```\n'
    assert "rule:syntax-json" not in sources("code_quality", template) | sources("code_quality", snipped)
    # and an Alertmanager config that marks its cut with `: 途中省略`
    cut = "# alert\n\n```yaml\nglobal:\n  resolve_timeout: 5m\n\n: 途中省略\n\n  slack_configs:\n  - channel: '#alert'\n```\n"
    assert "rule:syntax-yaml" not in sources("code_quality", cut)
    broken = '# runn\n\n```json\n{\n  "id": 1\n  "username": "alice"\n}\n```\n'
    assert "rule:syntax-json" in sources("code_quality", broken)


def test_a_python_block_showing_its_own_syntax_error_is_no_fault():
    # Sweep: a Ruby-to-Python post writes `print "Hello"` and, in comments under it, the
    # SyntaxError Python 3 raises; the block shows the error on purpose.
    shown = (
        '# print\n\n```python\nprint("Hello World!!")\nprint "Hello World!!"\n'
        "#     ^^^^^^^^^^^^^^^^^^^^^\n# SyntaxError: Missing parentheses in call to 'print'.\n```\n"
    )
    assert "rule:syntax-python" not in sources("code_quality", shown)
    assert "rule:syntax-python" in sources("code_quality", '# print\n\n```python\nprint("Hello")\nprint "Hello"\n```\n')


def test_mata_before_a_verb_is_again_not_a_second_connective():
    # Sweep: 「また、曲間のトークで…楽しかったです。また行きたい。」 — the second また is "again".
    again = JA_HEAD + "また、曲間のトークで人柄も垣間見えて楽しかったです。また行きたい。\n"
    assert "rule:doubled-conjunction" not in sources("language_quality", again)
    twice = JA_HEAD + "また、曲間のトークで人柄も垣間見えて楽しかったです。また、会場も近くて便利でした。\n"
    assert "rule:doubled-conjunction" in sources("language_quality", twice)


def test_sweep_fixed_phrases_are_no_doubled_particles():
    # 「以下を入力後にスペースを押す」: 入力後 closes a clause of its own; 「それはそれは」 intensifies;
    # 「これを期に」 is 「これを機に」 as often written.
    for fine in ("以下を入力後にスペースを押すと補完されます。", "設定を変更前にバックアップを取ります。",
                 "それはそれはゴリゴリにカスタマイズした設定でした。", "これを期に少しメモをしておきます。"):
        assert "rule:doubled-particle" not in sources("language_quality", JA_HEAD + fine + "\n"), fine
    for slip in ("以下を入力をしてスペースを押すと補完されます。", "私は今回のライブは楽しみでした。"):
        assert "rule:doubled-particle" in sources("language_quality", JA_HEAD + slip + "\n"), slip


def test_a_docker_compose_log_is_no_shell_command():
    # Sweep: the log docker compose printed under 「# エラー」 (`mysql    | 2024-06-24T07:13:15Z …`)
    # was asked for a language tag as if its lines were `mysql` piped into something.
    log = (
        "# エラー\n\n```\nmysql    | 2024-06-24T07:13:15.786137Z 0 [System] [MY-010116] [Server] starting as process 1\n"
        "mysql    | 2024-06-24T07:13:15.795103Z 1 [ERROR] [MY-012224] [InnoDB] Tablespace flags are invalid.\n```\n"
    )
    assert "rule:code-language" not in sources("code_quality", log)
    piped = "# 確認\n\n```\nmysql -u root -p < dump.sql\ncat access.log | grep 500\n```\n"
    assert "rule:code-language" in sources("code_quality", piped)


def test_a_verb_stem_running_into_tokoro_is_a_conjugation_slip():
    # heldout106 (a miss): 「package.jsonがありところ」 for あるところ. 見どころ and 読みもの are words.
    found = [i for i in run("language_quality", JA_HEAD + "まずプロジェクトディレクトリ（package.jsonがありところ）で実行します。\n")
             if i.source == "rule:ja-conjugation"]
    assert len(found) == 1 and "「あるところ」" in found[0].problem
    for fine in ("この記事の見どころは三つあります。", "読みものとしても楽しめます。", "今が買い時です。", "書くことが多い。"):
        assert "rule:ja-conjugation" not in sources("language_quality", JA_HEAD + fine + "\n"), fine


def test_a_set_phrase_after_wo_is_no_doubled_particle():
    # heldout112: 「…シリーズの登場を契機に分析タスク全般をAIに委ねる」: 〜を契機に is a set phrase, as
    # 〜を元に and 〜を皮切りに are; the two を belong to two clauses.
    for fine in ("新モデルの登場を契機に分析タスク全般をAIに委ねました。", "この発表を皮切りに各社が製品を出しました。",
                 "この日を境に設定を変えました。", "これを機会に設定を見直しました。"):
        assert "rule:doubled-particle" not in sources("language_quality", JA_HEAD + fine + "\n"), fine
    slip = JA_HEAD + "新モデルの登場を分析タスク全般をAIに委ねました。\n"
    assert "rule:doubled-particle" in sources("language_quality", slip)


def test_an_address_closed_by_its_bracket_leaves_the_sentences_apart():
    # heldout113: in 「Zendesk (https://www.zendesk.co.jp/)の Guide 機能」 the address was blanked with
    # its `)` and the の glued to it, so the bracket seemed open to the paragraph's end and three
    # sentences were counted as one of 256 characters.
    line = ("弊社ではヘルプサイトの構築に Zendesk (https://www.zendesk.co.jp/)の Guide 機能を使用しています。"
            "Guide にはテーマのカスタマイズ機能があり、たとえば全体的な色味を自社のブランドカラーと合わせたり、"
            "テンプレートをカスタマイズすることでデザインだけでなく機能を拡張したりできます。\n"
            "弊社でもこれまで Guide のテーマには何度か軽微なカスタマイズを加えてきましたが、すべて管理画面から直接行っていました。\n")
    assert "rule:sentence-length" not in sources("language_quality", JA_HEAD + line)
    assert mask_for_prose("(https://x.example/)の設定") == "(" + " " * len("https://x.example/") + ")の設定"
    assert mask_for_prose("https://x.example/実行手順") == " " * len("https://x.example/実行手順")


def test_an_inline_footnote_is_no_part_of_the_sentence():
    # heldout114: Zenn prints 「^[…]」 as a note at the article's end; counted in the sentence, it made
    # a 96-character sentence 127.
    note = "^[[connect-web](https://example.com/a), [protobuf-ts](https://example.com/b)の各ブランチで確認しました]"
    body = ("上記2つは少なくとも公式と同じWarningは出ないことを確認している{}のと、ESMとして使えるので"
            "パッケージ化などの回りくどいワークアラウンドを必要としないので少なくとも公式よりは良いと思う。\n")
    assert "rule:sentence-length" not in sources("language_quality", JA_HEAD + body.format(note))
    longer = "こちらは別の長い補足説明をここに付け加えて文をさらに長くしていくための文言で、"
    assert "rule:sentence-length" in sources("language_quality", JA_HEAD + body.format(longer))


def test_a_verbal_noun_ending_the_sentence_after_no_is_a_particle_slip():
    # heldout111 (a miss): 「ロードマップの作成しました」 for を作成しました. Before a noun the の marks
    # a relative clause's subject (「私の作成した資料」) and is right.
    found = [i for i in run("language_quality", JA_HEAD + "日本の資格を含めたロードマップの作成しました。\n")
             if i.source == "rule:ja-conjugation"]
    assert len(found) == 1 and "「の作成しました」" in found[0].problem and "「の作成をしました」" in found[0].suggestion
    assert "rule:ja-conjugation" in sources("language_quality", JA_HEAD + "手順の確認してください。\n")
    for fine in ("私の作成した資料です。", "ツールの作成するファイルを見ます。", "環境の構築をしました。",
                 "データの更新中です。", "彼の到着してから出発します。", "個人的に私の爆推し。"):
        assert "rule:ja-conjugation" not in sources("language_quality", JA_HEAD + fine + "\n"), fine
