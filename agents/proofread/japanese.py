"""Japanese tokenisation with SudachiPy and its bundled core dictionary (no network, no MeCab)."""

from __future__ import annotations

import itertools
import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

_dictionary: Any = None
_dictionary_lock = threading.Lock()
_local = threading.local()
# Sudachi refuses inputs over ~49 KB; sentences are far shorter, this is only a guard.
_MAX_CHARS = 10_000


@dataclass(frozen=True)
class Token:
    surface: str
    pos: tuple[str, ...]  # (品詞, 細分類1, 細分類2, 細分類3, 活用型, 活用形)
    base: str  # dictionary form
    begin: int  # character offset in the tokenised text
    end: int

    @property
    def pos1(self) -> str:
        return self.pos[0]

    @property
    def pos2(self) -> str:
        return self.pos[1]

    @property
    def conjugation_type(self) -> str:
        return self.pos[4]

    @property
    def conjugation_form(self) -> str:
        return self.pos[5]


# Stands for a token past the end of a sentence, so lookahead needs no bounds check.
NO_TOKEN = Token(surface="", pos=("*",) * 6, base="", begin=0, end=0)


def _tokenizer() -> Any:
    # Tokenizer objects are not shared between threads; the dictionary (the expensive part) is.
    tokenizer = getattr(_local, "tokenizer", None)
    if tokenizer is None:
        global _dictionary
        from sudachipy import Dictionary, SplitMode

        with _dictionary_lock:
            if _dictionary is None:
                _dictionary = Dictionary(dict="core")
        tokenizer = _dictionary.tokenizer(mode=SplitMode.C)
        _local.tokenizer = tokenizer
    return tokenizer


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    tokenizer = _tokenizer()
    for offset in range(0, len(text), _MAX_CHARS):
        chunk = text[offset : offset + _MAX_CHARS]
        for morpheme in tokenizer.tokenize(chunk):
            tokens.append(Token(
                surface=morpheme.surface(),
                pos=tuple(morpheme.part_of_speech()),
                base=morpheme.dictionary_form(),
                begin=offset + morpheme.begin(),
                end=offset + morpheme.end(),
            ))
    return tokens


# --- rules on tokens ------------------------------------------------------------------------------
# Each function takes one sentence's tokens and returns the tokens a finding is about; the
# checkers turn them into issues. They judge parts of speech, not characters: 「には」 is not 「は」,
# 「書いてて」 is two different て, 「〜てみようと思う」 is an intention, not a hedge.

# Particles whose repetition in one clause reads badly (textlint's no-doubled-joshi idea). Only
# は and を: a doubled が, に or で is usually grammatical (これが我々がやりたかったこと,
# 東京に3時に着く, 既定の設定でシングルスレッドで動かす), so reporting it is mostly noise.
TRACKED_PARTICLES = {("は", "係助詞"), ("を", "格助詞")}
# 「Xを元に」「Xを中心に」「Xを契機に」「Xを理由に」: を + one of these nouns + に (or + として, 「Xを起点として」)
# is a fixed phrase (XをYにして), not a second object.
_FIXED_NOUNS_AFTER_WO = {"元", "もと", "基", "中心", "前提", "機", "期", "例", "ベース", "参考", "対象", "軸", "先頭",
                         "引数", "トリガー", "ソース", "きっかけ", "キー", "入力", "条件", "目標", "目的", "題材",
                         "テーマ", "主題", "材料", "土台", "起点", "手がかり", "手掛かり", "根拠", "単位", "基準", "片手", "メイン",
                         "糧", "バネ", "ばね", "契機", "機会", "皮切り", "境", "理由"}
# Noun + を + verb idioms that work as one adverb or verb (順を追って説明する, 目を通す, 手を加える):
# their を is no second object of the clause.
_WO_IDIOMS = {("順", "追う"), ("目", "通す"), ("手", "加える"), ("手", "入れる"), ("手", "動かす"), ("気", "付ける"),
              ("気", "つける"), ("念", "押す"), ("足", "運ぶ"), ("目", "配る"), ("気", "配る"), ("腰", "据える"),
              ("身", "置く"), ("頭", "抱える"), ("肩", "並べる"), ("一線", "画す"), ("身", "もつ"), ("身", "持つ")}
# 「に関して」「について」「によって」「において」「にとって」「として」…: particle + verb work as one
# compound particle. 使う/用いる are left out: 「AをBを使って」 is a real doubled を.
_COMPOUND_PARTICLE_VERBS = {
    "に": {"関する", "対する", "つく", "よる", "おく", "於く", "基づく", "とる", "向ける", "沿う", "伴う", "従う",
           "応じる", "加える", "比べる", "際する", "わたる", "渡る", "限る", "当たる", "あたる", "おける", "関わる"},
    "を": {"通じる", "通ずる", "通す", "介する", "経る", "除く", "問う", "含める", "めぐる", "巡る", "はじめる", "始める"},
}
_PREDICATES = {"動詞", "形容詞", "助動詞"}
# Nouns that turn a clause into an adverbial or a nominal phrase (〜することで, 〜するために, 〜するように):
# a clause before one of them still belongs to the sentence's own predicate.
_FORMAL_NOUNS = {"こと", "事", "ため", "為", "よう", "様", "もの", "物", "まま", "ところ", "所", "とき", "時", "場合",
                 "ほう", "方", "わけ", "はず", "つもり", "際", "通り", "とおり", "ほど", "くらい", "ぐらい", "うち", "間"}
# Same-word repetitions that are idiomatic, not typing slips (めでたしめでたし, などなど).
_REDUPLICATION_POS = {"副詞", "感動詞", "接続詞", "形容詞", "形状詞", "補助記号", "空白", "記号", "接尾辞", "接頭辞"}
_REDUPLICATION_POS2 = {"数詞", "副助詞", "終助詞"}
_EXISTENCE_VERBS = frozenset({"ある", "いる"})
# Nouns written twice as one word, "at each …" (要所要所で, 場面場面に応じて, 節目節目に).
_REDUPLICATED_NOUNS = frozenset({"要所", "場面", "局面", "箇所", "節目", "折", "時", "所"})
# Demonstratives said twice as an exclamation: 「これこれ！」 (this is it!), 「どれどれ？」.
_REDUPLICATED_PRONOUNS = frozenset({"これ", "それ", "あれ", "どれ"})
_EXCLAMATIONS = frozenset({"！", "!", "？", "?"})
# おれおれ / 俺俺 (オレオレ証明書, おれおれ Advent Calendar): one slang word for "home-made", not a slip.
_SELF_MADE = frozenset({"おれ", "俺"})
_KATAKANA = re.compile(r"[\u30a0-\u30ffー]+")
_SYMBOLS = re.compile(r"[\d.,ー〜~\-_=*#/\\|+:;!?()\[\]{}<>'\"`@$%^&]+")
_OPEN_BRACKET, _CLOSE_BRACKET = "括弧開", "括弧閉"


def _is_separator(tokens: list[Token], index: int) -> bool:
    """What ends a clause for the doubled-particle rule: 、 , ・ brackets and symbols, and runs of
    blanks (code, math or a link target masked out of the sentence: words the rule cannot see).
    One space is only word spacing, as around an English word: 「処理を API を使う」."""
    token = tokens[index]
    if token.pos1 == "空白":
        return any(
            0 <= i < len(tokens) and tokens[i].pos1 == "空白" for i in (index - 1, index + 1)
        ) or not token.surface.isspace() or len(token.surface) > 1
    return token.pos1 in ("補助記号", "記号") and token.surface not in ("ー", "〜")


def _contrastive_wa(tokens: list[Token], index: int) -> bool:
    """A は after an adverbial word (直接は, 今は, 完全には) contrasts, it does not mark a topic."""
    previous = tokens[index - 1] if index else None
    if previous is None:
        return False
    return previous.pos1 in ("副詞", "形状詞", "助動詞", "接尾辞") or "副詞可能" in previous.pos[2] or (
        "形状詞可能" in previous.pos[2]
    )


def _words_after(tokens: list[Token], index: int, span: int) -> list[Token]:
    """The tokens of the next `span` after `index`, spaces left out."""
    return [t for t in tokens[index + 1 : index + 1 + span] if t.pos1 != "空白"]


def _negated(tokens: list[Token], index: int) -> bool:
    """「関係はない」「理由はありません」: the は right before a negated ある marks what is denied, not
    a topic (as 「作成はできました」 contrasts); 「これは大した理由はない」 has one topic."""
    following = _words_after(tokens, index, 3)
    if not following:
        return False
    if following[0].pos1 == "形容詞" and following[0].base in ("ない", "無い"):
        return True
    return following[0].base in ("ある", "有る") and [t.base for t in following[1:3]] in (["ます", "ぬ"], ["ない"])


def _compound_particle(tokens: list[Token], index: int) -> bool:
    token = tokens[index]
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    if following is None:
        return False
    previous = tokens[index - 1] if index else None
    if token.surface == "を" and previous is not None and (previous.base, following.base) in _WO_IDIOMS:
        return True
    if token.surface == "を" and following.base in _FIXED_NOUNS_AFTER_WO:
        if previous is not None and previous.pos[2] == "サ変可能" and index >= 2 and tokens[index - 2].surface == "を":
            return False  # 「タイトルを取得を例として」: 取得 took its own を, so this one is a second
        after = tokens[index + 2 : index + 4]  # 「を起点に」 or 「を起点として」 (と + する)
        return bool(after) and (after[0].surface == "に" or (
            after[0].surface == "と" and len(after) > 1 and after[1].base == "する"))
    if token.surface == "と" or (token.surface == "に" and following.surface == "し"):
        return following.base == "する"  # 「として」「にして」
    return following.pos1 == "動詞" and following.base in _COMPOUND_PARTICLE_VERBS.get(token.surface, ())


ADVERBIAL_WA = {"実", "要"}  # 実は, 要は: adverbs the dictionary splits into a noun and は


def doubled_particles(tokens: list[Token]) -> list[tuple[Token, Token]]:
    """Pairs of the same simple particle twice in one clause: 「私は彼は好きだ」, 「設定をファイルを
    変更する」. Not a pair: particles in compounds (には, では, とは, を元に, に関して), a 読点, a
    bracket or any other symbol between them, a predicate or conjunctive particle between them
    (two clauses, each with its own particle), or more than six words apart."""
    candidates: list[int] = []
    first_word = next((i for i, t in enumerate(tokens) if t.pos1 not in ("空白", "補助記号")), len(tokens))
    for index, token in enumerate(tokens):
        if token.pos1 != "助詞" or (token.surface, token.pos2) not in TRACKED_PARTICLES:
            continue
        if index <= first_word:
            continue  # no particle opens a sentence: 「はたらこマガジンは」 starts with a name
        previous = tokens[index - 1] if index else None
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if previous is not None and previous.pos1 in ("助詞", "助動詞") and previous.end == token.begin:
            continue  # では, には, とは, ではない
        if following is not None and following.pos1 == "助詞" and following.begin == token.end:
            continue  # には, をも, でも: a compound, not the simple particle
        if _compound_particle(tokens, index):
            continue
        if token.surface == "は" and (_contrastive_wa(tokens, index) or _negated(tokens, index)):
            continue  # 直接は, 今は: contrast; 関係はない: what is denied
        if token.surface == "は" and previous is not None and previous.surface in ADVERBIAL_WA:
            continue  # 実は, 要は: adverbs, which the dictionary splits into a noun + は
        if token.surface == "は" and previous is not None and previous.pos1 == "接続詞" and previous.end == token.begin:
            continue  # または, では: the は of a conjunction marks no topic
        candidates.append(index)
    pairs: list[tuple[Token, Token]] = []
    last_of_kind: dict[tuple[str, str], int] = {}
    for index in candidates:
        token = tokens[index]
        key = (token.surface, token.pos2)
        first = last_of_kind.get(key)
        last_of_kind[key] = index
        if first is None or index - first > 6:
            continue
        if any(
            _is_separator(tokens, i) or t.pos1 in _PREDICATES or t.pos2 == "接続助詞" or t.pos1 == "接続詞"
            or _te_form_link(t) or _alternative_action(tokens, i)
            for i, t in enumerate(tokens[first + 1 : index], start=first + 1)
        ):
            continue
        if token.surface == "を" and (
            _in_relative_clause(tokens, index) or _button_label(tokens, first, index) or _field_label(tokens, index)
            or _quoted_clause(tokens, index)
        ):
            continue
        if token.surface == "は" and _parallel_topics(tokens, first, index):
            continue
        if token.surface == "は" and index == first + 2 and tokens[first - 1].surface == tokens[index - 1].surface:
            continue  # 「それはそれは見事な」: the pronoun and は said twice, an intensifier
        if token.surface == "を" and _verbal_noun_clause(tokens, first):
            continue  # 「以下を入力後にスペースを押す」: the first を is 入力's, a clause of its own
        if token.surface == "は" and _contrasted_later(tokens, index, candidates):
            continue
        pairs.append((tokens[first], token))
    return pairs


def _alternative_action(tokens: list[Token], index: int) -> bool:
    """A verbal noun then か, its する left out: 「ディレクトリを開閉かファイルを開けます」 offers two
    actions, each with its own を."""
    following = tokens[index + 1] if index + 1 < len(tokens) else NO_TOKEN
    return (tokens[index].pos[:3] == ("名詞", "普通名詞", "サ変可能") and following.surface == "か"
            and following.pos1 == "助詞" and following.begin == tokens[index].end)


def _te_form_link(token: Token) -> bool:
    """A て ending a clause of its own even where the dictionary misreads the verb before it as a
    noun and the て as a 副助詞 (「AIをぶんまわして変換機能を…」: ぶんまわし read as the noun for a compass)."""
    return token.surface == "て" and token.pos1 == "助詞"


# Time words after a する-noun that close a clause of its own: 入力後に, 変更前に, 編集中に.
_CLAUSE_TIME_WORDS = frozenset({"後", "前", "中", "時", "直後", "直前", "以降", "以前", "途中"})


def _verbal_noun_clause(tokens: list[Token], first: int) -> bool:
    """「以下を入力後にスペースを押す」: the を at `first` is the object of the する-noun right after it,
    which a time word (後, 前, 中) turns into a clause of its own (入力した後に)."""
    return (
        first + 2 < len(tokens) and tokens[first + 1].pos[2] == "サ変可能"
        and tokens[first + 2].surface in _CLAUSE_TIME_WORDS and tokens[first + 2].begin == tokens[first + 1].end
    )


# What a reader does to a button or a menu item: 「…をクリック」「…を押す」「…を選択」.
_PRESSED = frozenset({"クリック", "タップ", "押下", "選択", "押す"})


def _button_label(tokens: list[Token], first: int, second: int) -> bool:
    """「データセットを作成をクリック」: the first を is part of a button's name (「データセットを作成」,
    an action written as the label: a する-noun right before the second を, or before the word
    naming the part of the screen: 「秘密キーを生成 ボタンをクリック」), and the second is the
    sentence's own, the object of the click."""
    between = [t for t in tokens[first + 1 : second] if t.pos1 != "空白"]
    following = next((t for t in tokens[second + 1 :] if t.pos1 != "空白"), None)
    return (
        len(between) in (1, 2) and between[0].pos[2] == "サ変可能"
        and (len(between) == 1 or between[1].surface in _SCREEN_PARTS)
        and following is not None and (following.surface in _PRESSED or following.base in _PRESSED)
    )


# The parts of a screen a label names: 「コードを検証の部分」「ファイルを選択ボタン」.
_SCREEN_PARTS = frozenset({"部分", "欄", "ボタン", "項目", "画面", "タブ", "メニュー", "フィールド", "リンク", "ダイアログ"})


def _field_label(tokens: list[Token], second: int) -> bool:
    """「その数値をコードを検証の部分に入力します」: the second を is inside a field's label (「コードを検証」,
    an action written as the label: a する-noun right after it), named as a part of the screen."""
    following = _words_after(tokens, second, 3)
    return (
        len(following) >= 2 and following[0].pos[2] == "サ変可能"
        and (following[1].base in _SCREEN_PARTS
             or (following[1].surface == "の" and len(following) > 2 and following[2].base in _SCREEN_PARTS))
    )


def _parallel_topics(tokens: list[Token], first: int, second: int) -> bool:
    """「AはBでCはD」: two parallel clauses, the で after B ending the first (the copula's
    連用形, which the dictionary may read as the case particle); each は has its own clause."""
    return any(
        t.surface == "で" and tokens[i - 1].pos1 in ("名詞", "接尾辞") and tokens[i + 1].pos1 in ("名詞", "代名詞")
        for i, t in enumerate(tokens[first + 2 : second - 1], start=first + 2)
    )


_COMMAS = frozenset({"、", "，", ","})


def _contrasted_later(tokens: list[Token], second: int, candidates: list[int]) -> bool:
    """「私は[700ms以上のコマンドは表示]、[45秒以上のコマンドは通知を送る]」: the second は opens the
    first of two clauses set against each other, each with its own は after a 読点; it contrasts,
    it does not repeat the writer's topic."""
    return any(
        tokens[later].surface == "は"
        and any(t.surface in _COMMAS for t in tokens[second + 1 : later])
        for later in candidates if later > second
    )


def _own_predicate_end(tokens: list[Token], index: int) -> int | None:
    """The index of the last word of the predicate that the particle at `index` attaches to, when
    only its own words stand between them (no separator, particle or conjunction)."""
    position = index + 1
    while position < len(tokens) and tokens[position].pos1 not in _PREDICATES:
        if _is_separator(tokens, position) or tokens[position].pos1 in ("助詞", "接続詞"):
            return None
        position += 1
    if position >= len(tokens):
        return None
    while position + 1 < len(tokens) and tokens[position + 1].pos1 in ("助動詞", "動詞", "接尾辞") and (
        tokens[position + 1].begin == tokens[position].end
    ):
        position += 1  # 持たせる, 保持される, 変換した: the predicate's last word decides
    return position


def _in_relative_clause(tokens: list[Token], index: int) -> bool:
    """Whether the particle at `index` belongs to a clause that modifies the noun after it:
    in 「コンポーネントを複数のチャンクを持つバンドルに分ける」 the second を is 持つ's own object, and
    the first waits for 分ける. A clause before a formal noun (〜を使うことで, 〜するために) is not one:
    its object competes with the sentence's own."""
    position = _own_predicate_end(tokens, index)
    if position is None or position + 1 >= len(tokens) or not tokens[position].conjugation_form.startswith("連体形"):
        return False
    following = tokens[position + 1]
    return following.pos1 in ("名詞", "代名詞", "形状詞", "接頭辞", "連体詞") and following.surface not in _FORMAL_NOUNS


# Words that take a clause quoted by と: 「これを〜では梯子を登ると表現している」「…を消すと呼ぶ」.
_QUOTING_WORDS = {"言う", "いう", "呼ぶ", "表現", "表す", "称する", "名付ける", "書く", "記す", "述べる", "説明", "記述",
                  "定義", "訳す", "例える", "たとえる"}


def _quoted_clause(tokens: list[Token], index: int) -> bool:
    """Whether the particle at `index` belongs to a clause quoted by と and a word of saying or naming
    after it: in 「これを公式サイトでは梯子を登る（climb the ladder）と表現している」 the second を is 登る's,
    inside the name the sentence quotes; the first waits for 表現する."""
    end = _own_predicate_end(tokens, index)
    if end is None:
        return False
    position = end + 1
    if position < len(tokens) and tokens[position].surface in "（(":
        closing = next((i for i in range(position, len(tokens)) if tokens[i].surface in "）)"), None)
        position = closing + 1 if closing is not None else len(tokens)  # an aside between: 「登る（climb the ladder）と」
    return (position + 1 < len(tokens) and tokens[position].surface == "と"
            and tokens[position + 1].base in _QUOTING_WORDS)


_HIRAGANA = re.compile(r"[\u3041-\u309fー]+")


def _reduplicated_kana_noun(token: Token) -> bool:
    """A noun of two or more kana written twice (きわきわ, うめうめ, もふもふ): colloquial reduplication,
    which the dictionary splits into two nouns. Not a formal noun (することことが is a slip)."""
    return (token.pos1 == "名詞" and len(token.surface) >= 2 and _HIRAGANA.fullmatch(token.surface) is not None
            and token.surface not in _FORMAL_NOUNS)


def _reduplicated_verb(token: Token) -> bool:
    """A verb's stem or plain form that doubled makes an adverb (探り探り, 休み休み, 恐る恐る, 代わる代わる):
    a word of its own, at least two letters and not する, whose slips are its endings, not itself."""
    return (token.pos1 == "動詞" and token.pos2 == "一般" and len(token.surface) >= 2
            and token.conjugation_form.split("-")[0] in ("連用形", "終止形"))


_HYPHENS = ("-", "‐", "－")


def doubled_words(tokens: list[Token], line_starts: frozenset[int] = frozenset()) -> list[tuple[Token, Token]]:
    """The same word typed twice in a row (設定をを, このこの, ですです). Idiomatic repetition is left
    alone: adverbs and onomatopoeia (まだまだ, ドキドキ), adjectives (めでたしめでたし), adverbial
    particles (などなど), numerals (ひとつひとつ, 一歩一歩), adverbial time nouns (毎回毎回), and pairs that only share their spelling
    (書いてて: the auxiliary てる, then the particle て), conjunctions (ただただ), a pair across a line
    break (`line_starts`: where the sentence's lines begin; Zenn and Qiita show each line on its
    own), a word joined to a hyphenated name (`--log-level level`: an option, then its placeholder),
    a clause ending in と quoted by と (「増やさないとと感じる」), and 「外出しして」, which the dictionary reads as 外出 + し + し."""
    words = [t for t in tokens if t.pos1 != "空白"]
    counts = Counter(t.surface for t in words)
    pairs = []
    for before, previous, current, after, later in zip(
        [None, *words], words, words[1:], [*words[2:], None], [*words[3:], None, None], strict=False
    ):
        if counts[current.surface] > 2 and counts[current.surface] * 4 >= len(words):
            continue  # a word making up the sentence is sample text (平文平文**強調**平文), not a slip
        if current.begin in line_starts:
            continue  # the last word of one line and the first of the next (「ディレクトリ:バケット」 / 「バケットより…」)
        if (current.begin > previous.end and previous.pos1 == "名詞" and after is not None and after.begin == current.end
                and after.pos1 in ("名詞", "接尾辞")):
            continue  # 「腾讯 腾讯元器」: a name, then after a space a longer name that opens with it
        if previous.base == "する" and before is not None and before.pos1 == "名詞" and before.end == previous.begin:
            continue  # 外出しして, 書き出しして: a noun ending in し (外出し) read as noun + し, then する
        if (before is not None and before.surface in _HYPHENS and before.end == previous.begin) or (
            after is not None and after.surface in _HYPHENS and after.begin == current.end
        ):
            continue  # `--log-level level`, `--disable-mcp-server server-name`: a word of a hyphenated name
        if (after is not None and later is not None and after.surface in (".", "．") and after.begin == current.end
                and later.begin == after.end and later.surface[:1].isdigit()):
            continue  # 「Annex C C.6」: a section's letter, then the number of a section in it
        if (previous.surface == "と" and before is not None and before.pos1 == "助動詞" and before.base == "ない"
                and after is not None and after.pos1 == "動詞"):
            continue  # 「増やさないとと感じる」: 〜ないと (must…) said on its own, quoted by と and a verb
        if (
            previous.surface == current.surface
            and previous.pos[:2] == current.pos[:2]
            and previous.base == current.base
            and previous.pos1 not in _REDUPLICATION_POS
            and previous.pos2 not in _REDUPLICATION_POS2
            and previous.pos[2] != "副詞可能"  # 毎回毎回, 都度都度, 毎日毎日: a time noun doubled for emphasis
            and not (previous.pos1 == "動詞" and previous.surface in _EXISTENCE_VERBS)  # 「あるある」「いるいる」: one colloquial word
            and not _reduplicated_verb(previous)  # 探り探り, 恐る恐る: a verb doubled into an adverb
            and not _reduplicated_kana_noun(previous)  # きわきわ, うめうめ: a word doubled the colloquial way
            and not (previous.pos1 == "名詞" and previous.surface in _REDUPLICATED_NOUNS)  # 要所要所: "at each key point"
            and not (previous.pos1 == "名詞" and len(previous.surface) == 2 and previous.surface[0] == "一")
            # 一歩一歩, 一行一行, 一個一個 (round 162): one and a counter said twice, "one by one"
            and not (previous.pos1 == "代名詞" and previous.surface in _REDUPLICATED_PRONOUNS
                     and (after is None or after.surface in _EXCLAMATIONS))  # 「これこれ！」; 「それそれ等しい」 is それぞれ
            and not (previous.pos1 == "代名詞" and previous.surface in _SELF_MADE)  # おれおれ証明書: "home-made"
            and current.surface != "笑"  # 「…宿題とします笑笑」: a laugh, as www
            and not _SYMBOLS.fullmatch(current.surface)
            and not (_KATAKANA.fullmatch(current.surface) and len(current.surface) <= 2)
            and current.begin - previous.end <= 1
        ):
            pairs.append((previous, current))
    return pairs


# Nouns of place that a writer repeats to go a level further (「の中の中」「の奥の奥」「の先の先」): over the
# mirror, every such repetition was meant.
_PLACE_NOUNS = frozenset({"中", "上", "下", "奥", "先", "外", "裏", "後ろ", "前", "内", "横", "隣"})


def doubled_phrases(tokens: list[Token]) -> list[tuple[str, Token]]:
    """A compound particle typed twice (というという, についてについて, としてとして): the same run of
    two or three words, the first a particle, right after itself. Returns the phrase and the first
    word of its second copy."""
    words = [t for t in tokens if t.pos1 != "空白"]
    found: list[tuple[str, Token]] = []
    for size in (3, 2):
        for start in range(len(words) - 2 * size + 1):
            first, second = words[start : start + size], words[start + size : start + 2 * size]
            if first[0].pos1 != "助詞" or [t.surface for t in first] != [t.surface for t in second]:
                continue
            if start == 0 or words[start - 1].pos1 == "補助記号":
                continue  # 「ではでは、」 opening a sentence: a greeting, not a particle typed twice
            if any(t.pos1 == "代名詞" for t in first):
                continue  # 「AはそれはそれでB」「これはこれで」: a pronoun repeated with は is an idiom
            if all(t.pos2 == "終助詞" for t in first):
                continue  # 「フロントエンドよわよわなので」: a word doubled the colloquial way (弱々), read as よ + わ
            if start > 0 and words[start - 1].surface in ("なん", "かん") and first[0].surface == "と":
                continue  # 「なんとかかんとかとか言う」: the first とか closes なんとか/かんとか
            if [t.surface for t in first][:1] == ["の"] and first[-1].surface in _PLACE_NOUNS:
                continue  # 「ディレクトリの中の中で」: one level further in, said on purpose
            if any(b.begin - a.end > 0 for a, b in itertools.pairwise(first + second)):
                continue  # typed apart: not one slip
            if any(second[0] is copy for _phrase, copy in found):
                continue
            found.append(("".join(t.surface for t in first), second[0]))
    return found


def hedges(tokens: list[Token]) -> list[Token]:
    """The 「と」 of a hedging 〜と思う / 〜と思います / 〜と思われます that ends a sentence (or a
    clause, before が or けど). Not hedges: intentions (〜しようと思います, 〜てみようと思う,
    〜したいと思います), quoted thoughts (「なるほど」と思う), past narration (〜と思いました),
    questions (〜と思いますか), conditions and reasons (〜だと思うと, 〜と思うので)."""
    found = []
    for index, token in enumerate(tokens):
        if token.base != "思う" or token.pos1 != "動詞" or index < 2:
            continue
        particle, before = tokens[index - 1], tokens[index - 2]
        if particle.surface != "と" or particle.pos1 != "助詞":
            continue
        if before.pos2 == _CLOSE_BRACKET or before.surface in ("」", "』", "”", "\"", ")", "）"):
            continue  # a quoted thought
        if before.conjugation_form.startswith("意志推量形") or (
            before.pos1 == "助動詞" and before.base in ("う", "よう", "まい", "たい")
        ):
            continue  # an intention or wish
        rest = _words_after(tokens, index, 7)  # a window: linear time
        while rest and rest[0].pos1 == "助動詞" and rest[0].base in ("ます", "れる", "られる", "です"):
            rest.pop(0)  # 思います, 思われます
        after = rest[0] if rest else None
        if after is None or after.pos1 == "補助記号" or (
            after.pos2 == "接続助詞" and after.surface in ("が", "けど", "けれど", "けれども")
        ) or (after.pos2 == "終助詞" and after.surface in ("よ", "ね")):
            found.append(particle)
    return found


# A sentence that opens 「ちなみにですが、」 or 「余談ですが、」, or names its topic first (「〜についてですが、」,
# 「(1) の部分に関してですが、」, round 157;
# 「ということですが、」 after a question, 「ではどうすれば良いのか？」, which ends a sentence of its own):
# the が only announces what follows (前置き), it sets nothing against anything. Hearsay
# (「サポート外ということですが、」) is set against what follows. So does a sentence that opens by
# saying it leaves the subject (「関係ないですが、」, 「話は逸れますが、」, round 84).
_PREFATORY = re.compile(
    r"(?:ちなみに|余談|蛇足|.*(?:について|に関して)|という(?:こと|話)|(?:本題とは)?関係ない|私事)(?:なん|なの)?(?:です|だ)"
    r"|(?:本題とは)?関係ありません|話(?:は|が)(?:それ|逸れ|脱線し)ます"
)


def conjunctive_ga(tokens: list[Token]) -> list[Token]:
    """The conjunctive 「が」 (〜ですが、) from the second one in a sentence on
    (textlint's no-doubled-conjunctive-particle-ga)."""
    # 「…が…」 or （なぜだかは忘れたが…）: their own が. Not an aside within an aside, whose が is
    # one more turn of a sentence already hard to follow (round 4: 「…しませんが(…(…になりますが)…)」).
    aside = _inside_quotes(tokens, _ASIDES, only_depth=1)
    if all(i in aside or t.pos1 in ("補助記号", "空白") for i, t in enumerate(tokens)):
        aside = set()  # 「(…ますが、…ですが、…。)」: the whole sentence in brackets is the sentence itself
    quoted = _inside_quotes(tokens) | aside
    ga = [
        t for i, t in enumerate(tokens)
        if t.surface == "が" and t.pos1 == "助詞" and t.pos2 == "接続助詞" and i not in quoted
        and not (i and tokens[i - 1].conjugation_form.startswith("意志推量形"))
        and not _PREFATORY.fullmatch("".join(token.surface for token in tokens[:i]).strip())
    ]
    return ga[1:]  # 〜しようが〜しようが (whether… or…) is concessive, not a contrast: left out


_QUOTES = (("「", "」"), ("『", "』"))
_ASIDES = (("（", "）"), ("(", ")"))


def _inside_quotes(
    tokens: list[Token], pairs: tuple[tuple[str, str], ...] = _QUOTES, only_depth: int | None = None
) -> set[int]:
    """The indexes of the tokens between 「 and 」 (a quoted sentence has its own が), or between
    the other opening and closing marks of `pairs`; with `only_depth`, those nested that deep only."""
    opening = {open_ for open_, _close in pairs}
    closing = {close for _open, close in pairs}
    inside: set[int] = set()
    depth = 0
    for index, token in enumerate(tokens):
        if token.surface in opening:
            depth += 1
        elif token.surface in closing:
            depth = max(0, depth - 1)
        elif depth and (only_depth is None or depth == only_depth):
            inside.add(index)
    return inside


# Auxiliaries that attach to a verb's stem, never straight to a noun: 「実装ます」, 「配布る」,
# 「設定れる」 lack the する that would carry them. Value: what the writer most likely meant.
_VERB_ENDINGS = {"ます": "し", "れる": "さ", "せる": "さ", "り": "", "た": "し"}


def conjugation_errors(tokens: list[Token]) -> list[tuple[Token, Token, str]]:
    """(noun, ending, likely intended) where a サ変 noun (配布, 指定) is followed directly by a verb
    ending it cannot carry: 「配布ることができます」 (配布することが), 「実装ます」 (実装します),
    「指定しまう」 (指定してしまう / 指定します). Sudachi reads these as a noun plus a classical or
    stray auxiliary, a sequence modern prose does not contain."""
    found = []
    for index, (previous, token) in enumerate(itertools.pairwise(tokens), start=1):
        if previous.pos[:3] != ("名詞", "普通名詞", "サ変可能") or previous.end != token.begin:
            continue
        if token.pos1 == "助動詞" and token.base in _VERB_ENDINGS:
            ending = "する" if token.base == "り" else _VERB_ENDINGS[token.base] + token.surface
            found.append((previous, token, previous.surface + ending))
        elif token.pos1 == "助詞" and token.surface == "て" and token.pos2 in ("接続助詞", "副助詞"):
            if _quoting_te(tokens, index):
                continue  # 「マッチングてどういう機能」: the spoken quoting て (って), not a lost し
            found.append((previous, token, previous.surface + "して"))
        elif token.pos1 == "動詞" and token.base == "しまう":
            found.append((previous, token, previous.surface + "して" + token.surface))
    return found


# Formal nouns a verb's stem never runs straight into: 「ありところ」 is 「あるところ」 mistyped. (とき and
# もの are left out: 買い時, 読みもの are words of their own; どころ/ごと compounds read as one noun.)
_NOUNS_AFTER_ATTRIBUTIVE = frozenset({"ところ", "こと"})


def stem_before_noun_errors(tokens: list[Token]) -> list[tuple[Token, Token, str]]:
    """(verb, noun, likely intended) where a verb in its 連用形 runs straight into ところ or こと,
    which only its 連体形 can modify: 「package.jsonがありところ」 (あるところ)."""
    return [
        (verb, noun, verb.base + noun.surface)
        for verb, noun in itertools.pairwise(tokens)
        if verb.pos1 == "動詞" and verb.conjugation_form.startswith("連用形") and verb.end == noun.begin
        and noun.pos1 == "名詞" and noun.surface in _NOUNS_AFTER_ATTRIBUTIVE
    ]


# Stems that take a plain る: 一段 verbs (でき, 食べ) and the auxiliaries conjugated like them (さ-れ,
# さ-せ, られ). After a 五段 stem (書き) an IME's 流 is not a slip of る.
_RU_STEM_TYPES = ("上一段", "下一段", "助動詞-レル", "助動詞-ラレル", "助動詞-セル", "助動詞-サセル")


def ru_converted_to_kanji(tokens: list[Token]) -> list[tuple[Token, Token, str]]:
    """(first token of the verb, 流, likely intended) where the る of a verb was converted to the
    kanji 流 (both read る): 「相談され流ことが増え」 (される), 「防止でき流という想定」 (できる). Sudachi
    reads the 流 as the suffix of 「わたし流」, which follows a noun or pronoun, never a verb's 連用形."""
    found = []
    for index, (stem, suffix) in enumerate(itertools.pairwise(tokens)):
        if (suffix.surface == "流" and suffix.pos1 == "接尾辞" and stem.end == suffix.begin
                and stem.pos1 in ("動詞", "助動詞") and stem.conjugation_form.startswith("連用形")
                and stem.conjugation_type.startswith(_RU_STEM_TYPES)):
            first = index
            while (first > 0 and tokens[first].pos1 == "助動詞" and tokens[first - 1].pos1 in ("動詞", "助動詞")
                   and tokens[first - 1].end == tokens[first].begin):
                first -= 1  # さ-れ, でき-させ: back to the verb the auxiliary hangs on
            found.append((tokens[first], suffix, "".join(token.surface for token in tokens[first : index + 1]) + "る"))
    return found


# これ/それ/あれ/どれ before ように: the pronoun typed for the 連体詞 (この, その, あの, どの).
DEMONSTRATIVE_ADNOMINALS = {"これ": "この", "それ": "その", "あれ": "あの", "どれ": "どの"}


def pronoun_before_you(tokens: list[Token]) -> list[tuple[Token, Token, str]]:
    """(pronoun, last token, likely intended) where a demonstrative pronoun runs into よう, which
    only the 連体詞 form modifies: 「これように実装をすることで」 (このように)."""
    found = []
    for pronoun, you, after in zip(tokens, tokens[1:], [*tokens[2:], NO_TOKEN], strict=False):
        if (pronoun.pos1 == "代名詞" and pronoun.surface in DEMONSTRATIVE_ADNOMINALS and pronoun.end == you.begin
                and you.surface == "よう" and you.pos1 == "形状詞"):
            joined = after.surface in ("に", "な") and after.begin == you.end  # ように, ような
            found.append((pronoun, after if joined else you,
                          DEMONSTRATIVE_ADNOMINALS[pronoun.surface] + "よう" + (after.surface if joined else "")))
    return found


def stuttered_masu(tokens: list[Token]) -> list[tuple[Token, Token, str]]:
    """(first token, last token, likely intended) where a syllable of 〜ました was typed twice: ます
    twice in a row (「詰まってしましました」, for しまいました after て), ま before ます
    (「用意しまました」「予想されまます」「見ていきまます」), まま after a verb's 連用形 (「表示されまました」),
    which only a 連体形 or の can modify (「そのまま」「されたまま」), or the last syllable twice
    (「しますす」「触れましたた」)."""

    def joined(start: int, end: int) -> str:
        return "".join(token.surface for token in tokens[start:end])

    def verb_start(index: int) -> int:
        while (index > 0 and tokens[index].pos1 == "助動詞" and tokens[index - 1].pos1 in ("動詞", "助動詞")
               and tokens[index - 1].end == tokens[index].begin):
            index -= 1  # さ-れ: back to the verb the auxiliary hangs on
        return index

    found = []
    for index in range(1, len(tokens) - 1):
        before, first, second = tokens[index - 1], tokens[index], tokens[index + 1]
        past = index + 2 if index + 2 < len(tokens) and tokens[index + 2].surface == "た" else index + 1
        if not (before.end == first.begin and first.end == second.begin and second.base == "ます" and second.pos1 == "助動詞"):
            continue
        if first.base == "ます" and first.pos1 == "助動詞" and first.surface == second.surface == "まし":
            verb = before.pos1 in ("動詞", "助動詞")
            helper = before.base == "する" and index > 1 and tokens[index - 2].surface in ("て", "で")
            head = "しまい" if helper else before.surface if verb else ""
            found.append((before if verb else first, tokens[past], head + joined(index + 1, past + 1)))
        elif first.surface == "ま" and first.pos1 in ("助動詞", "感動詞") and before.pos1 in ("動詞", "助動詞"):
            start = verb_start(index - 1)  # the ま read as the classical む or as an interjection
            found.append((tokens[start], tokens[past], joined(start, index) + joined(index + 1, past + 1)))
        elif first.pos1 == "動詞" and first.conjugation_form.startswith("未然形") and first.surface.endswith("ま"):
            # 「見ていきまます」: ます takes a 連用形, so the dictionary made いきま a 未然形 of いきむ
            found.append((first, tokens[past], first.surface[:-1] + joined(index + 1, past + 1)))
    for index in range(1, len(tokens)):
        # 「クリックしますす」「触れましたたが」: the ending's last syllable typed twice (ます then す, た then た)
        previous, token = tokens[index - 1], tokens[index]
        if previous.end == token.begin and previous.pos1 == token.pos1 == "助動詞" and (
            (previous.surface == "ます" and token.surface == "す") or previous.surface == token.surface == "た"
        ):
            start = verb_start(index - 1)
            found.append((tokens[start], token, joined(start, index)))
    for index in range(len(tokens) - 3):
        stem, mama, suru, past_token = tokens[index : index + 4]
        if (stem.pos1 in ("動詞", "助動詞") and stem.conjugation_form.startswith("連用形") and mama.surface == "まま"
                and suru.surface == "し" and suru.base == "する" and past_token.surface == "た"
                and stem.end == mama.begin and mama.end == suru.begin and suru.end == past_token.begin):
            start = verb_start(index)
            found.append((tokens[start], past_token, joined(start, index + 1) + "ました"))
    return sorted(found, key=lambda slip: slip[0].begin)


def zurai_misspellings(tokens: list[Token]) -> list[tuple[Token, Token, str]]:
    """(first token, last token, likely intended) where 〜づらい (辛い, hard to do) is written with ず:
    「見ずらい」「わかりずらく」「予測しずらく」 (the dictionary keeps ずらい as a suffix of its own), and
    「扱いずらかった」, read as the slang verb ずらかる after a verb's noun form. The verb ずらす
    (「予定をずらさず」「ずらされない」) and いたずら are other words. After a サ変 noun the する is missing
    too (「理解ずらい」 → 理解しづらい)."""
    found = []
    for before, word in itertools.pairwise(tokens):
        if before.end != word.begin or not word.surface.startswith("ずら"):
            continue
        suffix = word.pos1 == "接尾辞" and word.base == "ずらい"
        slang = word.base == "ずらかる" and (before.pos1 == "名詞" and before.surface[-1:] in "いきしちにひびみり")
        if not (suffix or slang):
            continue
        missing_suru = before.pos1 == "名詞" and before.pos[2] == "サ変可能"
        found.append((before, word, before.surface + ("し" if missing_suru else "") + "づ" + word.surface[1:]))
    return found


_SENTENCE_ENDS = _EXCLAMATIONS | {"。"}


def _sentence_end(tokens: list[Token], verb: Token) -> Token | None:
    """The last token of the verb's finite form when nothing but its auxiliaries (ます, た, です),
    the て of a request or a progressive, and the helper verbs after that て (ください, いる, おく,
    しまう) follow it to the end of the sentence (`tokens` are those after the verb); else None."""
    last = verb if verb.conjugation_form.startswith("終止形") else None
    for token in tokens:
        if token.surface in _SENTENCE_ENDS:
            break
        if not (token.pos1 == "助動詞" or token.surface in ("て", "で")
                or (token.pos1 == "動詞" and token.pos[1] == "非自立可能")):
            return None
        last = token
    return last


def object_marked_by_no(tokens: list[Token]) -> list[tuple[Token, Token, Token]]:
    """(の, サ変 noun, last token of the verb) where a サ変 noun after the の of a noun phrase is the
    verb that ends the sentence: 「ロードマップの作成しました」 (を作成しました), 「関数の作成できます」 (の作成が
    できます; over the mirror 3 such lines, each a slip). Before a noun the の marks the subject of a
    relative clause (「私の作成した資料」), which is right."""
    found = []
    for index, (no, noun, suru) in enumerate(zip(tokens, tokens[1:], tokens[2:], strict=False)):
        if (no.surface == "の" and no.pos[:2] == ("助詞", "格助詞") and noun.pos[2] == "サ変可能"
                and suru.base in ("する", "できる", "出来る") and no.end == noun.begin and noun.end == suru.begin
                and (last := _sentence_end(tokens[index + 3 :], suru)) is not None):
            found.append((no, noun, last))
    return found


# What a サ変 noun is said to be, or be done, after が: 「インストールが必要」「判別が可能」「検出ができる」.
_ABILITY = frozenset({"可能", "不可能", "必要", "できる", "出来る"})


def object_before_subject(tokens: list[Token]) -> list[tuple[Token, Token, Token]]:
    """(を, サ変 noun, predicate) where the object's を runs into a サ変 noun made the subject of
    可能/必要/できる: 「LaTeXをインストールが必要です」「RSSを収集が可能」「異常値を自動検出ができる」 (を with
    が, for 「をインストールする必要」 or 「のインストールが必要」). 「AWSを顧客が必要とする場所」: the
    noun after を is no サ変 noun, and 必要とする is a verb of its own."""
    found = []
    for index, wo in enumerate(tokens):
        if wo.surface != "を" or wo.pos[:2] != ("助詞", "格助詞"):
            continue
        end = index + 1
        while (end < len(tokens) and end - index <= 3 and tokens[end].pos1 in ("名詞", "接頭辞")
               and tokens[end].begin == tokens[end - 1].end):
            end += 1  # the noun, compounds of up to three words included (自動検出)
        if end == index + 1 or end + 1 >= len(tokens) or tokens[end - 1].pos[2] != "サ変可能":
            continue
        ga, predicate = tokens[end], tokens[end + 1]
        after = tokens[end + 2] if end + 2 < len(tokens) else None
        if (ga.surface == "が" and ga.pos[:2] == ("助詞", "格助詞") and ga.begin == tokens[end - 1].end
                and predicate.base in _ABILITY and predicate.begin == ga.end
                and not (predicate.base == "必要" and after is not None and after.surface == "と")):
            found.append((wo, tokens[end - 1], predicate))
    return found


# What follows a spoken quoting て (for って) after a noun: 「マッチングてどういう機能」「実装てなに」
# 「キャッシュてのは」「設定ていう項目」. A lost し (「指定てください」) is followed by none of these.
_QUOTED_BY = {"どういう", "どんな", "何", "なに", "なん", "いう", "言う", "呼ぶ"}


def _quoting_te(tokens: list[Token], index: int) -> bool:
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    if following is None:
        return False
    if following.base in _QUOTED_BY and following.pos1 in ("連体詞", "代名詞", "動詞"):
        return True
    after = tokens[index + 2] if index + 2 < len(tokens) else None
    return following.surface == "の" and after is not None and after.surface == "は"


# Marks between the items of an enumeration: 「A、B、C」「A・B・C」「A，B」.
_ITEM_SEPARATORS = {"、", "・", "，", ",", "→"}  # → chains steps or versions: 「Thread→ExecutorService→Coroutines」
_ITEM_MAX_CHARS = 30  # an item longer than this reads as a clause of its own
_MIN_ENUMERATED = 2  # items in a row, before the last one that ends the list inside the next clause


def _chain_brackets(tokens: list[Token]) -> set[int]:
    """The indexes of the brackets around a chain of steps (「開発（別ブランチでの開発 → PR の作成 →
    マージ）」, round 85): the chain begins and ends inside them, so they bound its first and last item."""
    bounds: set[int] = set()
    opened: list[int] = []
    for index, token in enumerate(tokens):
        if token.surface in ("（", "("):
            opened.append(index)
        elif token.surface in ("）", ")") and opened:
            start = opened.pop()
            if any(t.surface == "→" for t in tokens[start + 1 : index]):
                bounds.update((start, index))
    return bounds


def enumerations(tokens: list[Token]) -> list[int]:
    """The length in characters of each enumeration in a sentence: a run of at least
    _MIN_ENUMERATED noun phrases between 、/・ (「Fragment（…）、Portal（…）、…」, a list of names
    or glossed terms). An item holds no predicate; a clause before 、 (〜して、〜ので、) ends a run."""
    items: list[list[Token]] = [[]]
    bounds = _chain_brackets(tokens)
    for index, token in enumerate(tokens):
        if token.surface in _ITEM_SEPARATORS or index in bounds:
            items.append([])
        else:
            items[-1].append(token)
    runs: list[int] = []
    run: list[int] = []
    for item in items:
        words = [t for t in item if t.pos1 not in ("空白", "補助記号")]
        size = sum(len(t.surface) for t in item if t.pos1 != "空白")
        if not size:
            continue  # between a chain's closing bracket and the 、 after it
        if (
            words and size <= _ITEM_MAX_CHARS and words[-1].pos1 in ("名詞", "接尾辞")
            and not any(
                t.pos1 in _PREDICATES or (t.pos1 == "助詞" and t.surface != "の" and following.surface != "の")
                for t, following in zip(words, [*words[1:], NO_TOKEN], strict=True)
            )  # 「別ブランチでの開発」: a particle made attributive by の still leaves a noun phrase
        ):
            run.append(size)
            continue
        if len(run) >= _MIN_ENUMERATED:
            runs.append(sum(run) + len(run) - 1)  # the separators between the items too
        run = []
    if len(run) >= _MIN_ENUMERATED:
        runs.append(sum(run) + len(run) - 1)
    return runs
