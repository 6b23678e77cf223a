"""The Japanese rules judged on Sudachi tokens: what each must report, and the idiomatic Japanese
it must leave alone (compound particles, reduplication, intentions, quoted thoughts)."""

from __future__ import annotations

import pytest

from agents.proofread import japanese
from agents.proofread.checkers import CHECKER_CLASSES, CheckContext
from agents.proofread.config import GraphConfig
from agents.proofread.japanese import (
    conjugation_errors,
    conjunctive_ga,
    doubled_particles,
    doubled_words,
    hedges,
    pronoun_before_you,
    ru_converted_to_kanji,
    stuttered_masu,
)
from agents.proofread.llm import ProofreadLLM
from agents.proofread.parser import parse_article
from agents.proofread.schemas import Issue
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel

# The heading makes even a one-sentence body read as Japanese (the parser counts kana).
HEAD = (
    '---\ntitle: "テスト"\nemoji: "🧪"\ntype: "tech"\ntopics: ["python"]\npublished: true\n---\n\n'
    "## ひらがなだけでかいたみだし\n\n"
)
BODY_LINE = HEAD.count("\n") + 1  # the first line after the front matter


def rules(body: str) -> list[Issue]:
    context = CheckContext(config=GraphConfig(), llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)))
    return CHECKER_CLASSES["language_quality"](context).rules(parse_article(HEAD + body))


def sources(body: str) -> list[str]:
    return [issue.source or "" for issue in rules(body)]


def tokens(sentence: str) -> list[japanese.Token]:
    return japanese.tokenize(sentence)


# --- doubled particles ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "私は彼は好きです。",
        "設定をファイルを変更する。",
        "演算処理を API を使って記述する。",  # a て clause still shares the sentence's object
        "必要な機能を自分で取捨選択をすることが可能です。",  # before a formal noun: no relative clause
        "値の組をスクリーンを明るくするために必要な値に変換する。",
    ],
)
def test_a_particle_twice_in_one_clause_is_reported(sentence):
    assert len(doubled_particles(tokens(sentence))) == 1
    assert "rule:doubled-particle" in sources(sentence + "\n")


@pytest.mark.parametrize(
    "sentence",
    [
        "ここでは設定は不要です。",  # では is not は
        "ここには設定は不要です。",  # には is not は
        "AとはBは別のものである。",  # とは is not は
        "データを元にグラフを作る。",  # を元に is a fixed phrase
        "データをもとにグラフを作る。",
        "「VPC と BigQuery」をテーマに記事を書いていました。",  # をテーマに, as を題材に (round 131)
        "それを理由に使用をやめるほどではない。",  # を理由に: because of it (round 137)
        "仕様に関して資料に書きます。",  # に関して is a compound particle
        "AについてBに書きます。",
        "bzip3は直接はサポートされていません。",  # contrastive 直接は
        "AはX、BはYです。",  # parallel clauses
        "ファイルを開いてコードを書く。",  # a predicate between: two clauses
        "これが我々がやりたかったことです。",  # が is grammatical twice
        "既定の設定でシングルスレッドで動かします。",  # so is で
        "「A」は「B」は違います。",  # brackets separate
        "コンポーネントを複数のチャンクを持つバンドルに分割する。",  # 持つ's own object, in a relative clause
        "コンポーネントを DOM の更新を行う非常に効率的なコードに変換する。",
        "データを画像を変換したファイルに書く。",
    ],
)
def test_compounds_clauses_and_grammatical_repeats_are_not_doubled_particles(sentence):
    assert doubled_particles(tokens(sentence)) == []
    assert "rule:doubled-particle" not in sources(sentence + "\n")


def test_a_doubled_conjunctive_ga_is_a_suggestion():
    sentence = "AはBですが、CはDですが、Eです。"
    assert len(conjunctive_ga(tokens(sentence))) == 1
    (issue,) = [i for i in rules(sentence + "\n") if i.source == "rule:doubled-conjunctive-ga"]
    assert issue.severity == "suggestion"
    assert conjunctive_ga(tokens("AはBですが、Cです。")) == []


# --- doubled words --------------------------------------------------------------------------------


@pytest.mark.parametrize("sentence", ["設定をを変えます。", "このこの機能を使います。", "これで完了ですです。"])
def test_a_word_typed_twice_is_reported(sentence):
    assert len(doubled_words(tokens(sentence))) == 1
    assert "rule:doubled-word" in sources(sentence + "\n")


@pytest.mark.parametrize(
    "sentence",
    [
        "めでたしめでたし。",
        "りんごやみかんなどなど。",
        "記事を書いてて気づいた。",  # the auxiliary てる, then the particle て
        "まだまだです。",
        "胸がドキドキする。",
        "ひとつひとつ確認する。",
        "少しずつ少しずつ進める。",
        "一歩一歩読んでいった時のリアクションが見たい。",  # round 162: one and a counter, "one by one"
        "ログを一行一行読む。",
    ],
)
def test_idiomatic_repetition_is_not_a_doubled_word(sentence):
    assert doubled_words(tokens(sentence)) == []
    assert "rule:doubled-word" not in sources(sentence + "\n")


# --- the と思う hedge ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence", ["この方法が正しいと思います。", "この設定で十分だと思われます。", "速いと思うが、測っていない。"]
)
def test_a_hedged_claim_is_reported(sentence):
    assert len(hedges(tokens(sentence))) == 1
    assert "rule:hedge" in sources(sentence + "\n")


@pytest.mark.parametrize(
    "sentence",
    [
        "実際に試してみようと思います。",  # an intention
        "今回はこの方法を紹介しようと思います。",
        "次はテストを書きたいと思います。",  # a wish
        "「なるほど」と思う。",  # a quoted thought
        "そのときは便利だと思いました。",  # narration
        "これが正しいと思いますか？",  # a question
        "数だと思うと不思議です。",  # a condition
        "便利だと思うので使っています。",  # a reason
    ],
)
def test_intentions_quotes_and_narration_are_not_hedges(sentence):
    assert hedges(tokens(sentence)) == []
    assert "rule:hedge" not in sources(sentence + "\n")


def test_kamoshirenai_only_hedges_at_the_end_of_a_sentence():
    assert "rule:hedge" in sources("この書き方は少し難しいかもしれません。\n")
    assert "rule:hedge" not in sources("難しいかもしれないが、慣れれば簡単です。\n")


# --- styles, conjugation, messages --------------------------------------------------------------


def test_mixed_styles_are_judged_on_the_sentence_end():
    body = "これは本です。\n\nあれも本です。\n\nそれは本である。\n\nどれも本でした。\n"
    issues = [i for i in rules(body) if i.source == "rule:mixed-style"]
    assert [(i.line_start, i.severity) for i in issues] == [(BODY_LINE + 4, "warning")]


@pytest.mark.parametrize(
    ("sentence", "intended"),
    [("このファイルは自由に配布ることができます。", "配布する"), ("値を指定しまうと動きません。", "指定してしまう"),
     ("新しい関数を実装ます。", "実装します")],
)
def test_a_noun_with_a_verb_ending_it_cannot_carry_is_a_conjugation_slip(sentence, intended):
    assert [found[2] for found in conjugation_errors(tokens(sentence))] == [intended]
    (issue,) = [i for i in rules(sentence + "\n") if i.source == "rule:ja-conjugation"]
    assert issue.severity == "suggestion"
    assert intended in issue.problem


@pytest.mark.parametrize(
    "sentence",
    ["このファイルは自由に配布することができます。", "値を指定してしまうと動きません。", "関数を実装します。",
     "ここで実行できます。", "設定は公開されてる。", "それは関係ない。", "内容を記載している。"],
)
def test_correct_conjugations_are_left_alone(sentence):
    assert conjugation_errors(tokens(sentence)) == []


@pytest.mark.parametrize(
    ("sentence", "intended"),
    [("資格について相談され流ことが増えました。", "される"), ("修正を防止でき流という想定です。", "できる"),
     ("画面が表示され流ので許可します。", "される"), ("これように実装をすることで速くなります。", "このように")],
)
def test_a_verb_ending_typed_as_kanji_and_a_pronoun_before_you_are_slips(sentence, intended):
    (issue,) = [i for i in rules(sentence + "\n") if i.source == "rule:ja-conjugation"]
    assert issue.severity == "suggestion"
    assert f"「{intended}」では" in issue.problem


@pytest.mark.parametrize(
    "sentence",
    ["わたし流の書き方です。", "自己流のやり方です。", "話を聞き流すことにしました。", "このように実装します。",
     "それよりも速いです。", "ロボット流の動きです。"],
)
def test_the_suffix_ryu_and_kono_you_are_left_alone(sentence):
    assert ru_converted_to_kanji(tokens(sentence)) == []
    assert pronoun_before_you(tokens(sentence)) == []
    assert not [i for i in rules(sentence + "\n") if i.source == "rule:ja-conjugation"]


@pytest.mark.parametrize(
    ("sentence", "intended"),
    [("無事表示されまました！", "されました"), ("動画するサンプルを用意しまました。", "しました"),
     ("とすると少し詰まってしましました。", "しまいました"), ("先日私も購入してしましました。", "しまいました"),
     ("オーバーヘッドは予想されまますが、無視します。", "されます"), ("それでは、1つずつ見ていきまます！", "いきます"),
     ("ボタンをクリックしますす。", "します"), ("前回の記事でも触れましたたが、今回も同じです。", "触れました"),
     ("インターフェースを追加したため、接続します。".replace("した", "したた"), "した")],
)
def test_a_syllable_of_mashita_typed_twice_is_a_slip(sentence, intended):
    (issue,) = [i for i in rules(sentence + "\n") if i.source == "rule:ja-conjugation"]
    assert f"「{intended}」では" in issue.problem


@pytest.mark.parametrize(
    "sentence",
    ["鋼を焼きなましました。", "目を覚ましました。", "家に三体鎮座ましましております。", "このまましばらく放置しました。",
     "そのまましてしまうと壊れます。", "設定をそのまました。", "されたままでした。", "読みました。",
     "このまますすめてみましょう。", "そのまますすんでみたら？", "すぐに終わりますすごい速さです。"],
)
def test_words_that_only_look_like_a_stuttered_mashita_are_left_alone(sentence):
    assert stuttered_masu(tokens(sentence)) == []
    assert not [i for i in rules(sentence + "\n") if i.source == "rule:ja-conjugation"]


def test_japanese_articles_get_japanese_messages():
    body = "私は彼は好きです。\n\n設定をを変えます。\n\nこの方法が正しいと思います。\n\n値を指定しまう。\n"
    issues = rules(body)
    assert {i.source for i in issues} >= {
        "rule:doubled-particle", "rule:doubled-word", "rule:hedge", "rule:ja-conjugation",
    }
    for issue in issues:
        assert japanese_text(issue.problem) and japanese_text(issue.suggestion), issue


def japanese_text(text: str) -> bool:
    return any("\u3040" <= char <= "\u30ff" for char in text)


def test_the_dictionary_is_loaded_once_and_shared():
    japanese.tokenize("一度目。")
    first = japanese._dictionary
    japanese.tokenize("二度目。")
    assert first is not None and japanese._dictionary is first
