"""Reading a shopper's message without a model: the intent, the product it points at, the slots.

The rules are a table of patterns per intent (English and Japanese). `classify` says how sure it
is: a clear winner takes the deterministic path with no model call; a tie or no match is left to
the model (`Intent` is the structured output it fills). The offline model's shop skill uses the
same table, so both modes agree on what the rules understand."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from agents.shopping.phrasebook import say, spec_label, spec_parts, spec_units, usual_spelling
from agents.shopping.render import display_name, product_name
from bot.locale import LATIN_WORD, Language, is_japanese, rule
from bot.offline.extract import ORDINAL_WORDS, extract_min_rating, extract_price_range, parse_number

if TYPE_CHECKING:
    from agents.shopping.models import Product

IntentName = Literal[
    "search", "compare", "specs", "reviews", "coupons", "inventory", "purchase", "cart", "apply_coupon", "other"
]
DETERMINISTIC: frozenset[str] = frozenset({"search", "compare", "specs", "reviews", "coupons", "cart"})
AGENTIC: frozenset[str] = frozenset({"inventory", "purchase", "apply_coupon", "other"})

_JA_COUNTERS = "個|つ|点|台|本|枚|足|着|冊|箱|袋|セット|ペア"  # counters a quantity is said with (2個, 2足, 2着…)
_CART = r"(?:カート|cart|basket)"  # 「cartに入れて」: the English word in a Japanese sentence too

# What a question about one product names it by: "does it have…", "is the first one…", "the cheaper one".
_SUBJECT = (rf"(?:it|they|this|that|the\s+(?:{'|'.join(sorted(ORDINAL_WORDS, key=len, reverse=True))}|cheaper|cheapest"
            r"|better[- ]rated)|#\d)(?:\s+one)?")

# intent → patterns (case-insensitive); each match adds its weight.
PATTERNS: dict[str, tuple[tuple[str, float], ...]] = {
    "search": (
        (r"\b(find|show|search|looking for|look for|recommend|suggest|need|want|any)\b", 1.0),
        (r"\b(under|below|less than|cheaper than|budget)\b", 0.5),
        (r"探して|探す|おすすめ|ほしい|欲しい|ありますか|見せて|以下|以内", 1.0),
    ),
    "compare": (
        (r"\bcompare\b|\bcomparison\b|\bvs\.?\b|\bversus\b|\bdifference between\b|\bwhich is better\b", 2.5),
        (r"比較|比べ|違い|どっちがいい|どちらがいい", 2.5),
    ),
    "specs": (
        (r"\bspecs?\b|\bspecifications?\b|\bdimensions?\b|\bweigh(?:t|s)?\b|\bhow (?:big|heavy|much ram|much storage)\b", 2.0),
        (r"\b(ram|storage|screen size|resolution|battery (?:life|capacity)|material|wattage|capacity|cpu|processor|ports?)\b", 1.0),
        (rf"\b(?:does|do)\s+{_SUBJECT}\s+(?:have|support|come with)\b|\bis\s+{_SUBJECT}\s+(?:waterproof|compatible)\b", 2.5),
        (r"仕様|スペック|重さ|サイズは|容量|対応して|防水", 2.0),
        (r"(?<!在庫)(?:は|って)(?:ある|あります|付いてる|付いています|ついてる|ついています)(?:か)?[？?]?$", 2.0),  # 「ノイキャンはある？」
        (r"\b(?:what|which)\s+(?:colou?rs?|sizes?|variants?|options)\b|\b(?:does|do)\s+(?:it|they|this|that)\s+come\s+in\b"
         r"|何色|色は|カラーは|サイズ展開|(?:色|サイズ)(?:は)?(?:何|どれ)が", 2.0),
    ),
    "reviews": (
        (r"\breviews?\b|\bpeople say\b|\bcustomers? say\b|\bbuyers? say\b|\bcomplain\w*\b|\bfeedback\b", 2.5),
        (r"\b(do|did) (?:people|users|owners|buyers|customers)\b|\bowners?\b|\bworth it\b|\bany (?:issues|problems)\b", 2.0),
        (r"\bwhat do (?:people|users|others)\b|\bopinions?\b|\bexperiences?\b", 2.0),
        (r"評判|口コミ|クチコミ|レビュー|感想|評価は|どう思われ|不満", 2.5),
        (r"(?:は|って)どう(?:です|でした)?か?[？?]?$|(?:使い心地|着け心地|付け心地|装着感|電池持ち)", 2.0),  # 「電池持ちはどう？」
    ),
    "coupons": (
        (r"\bcoupons?\b|\bdiscounts?\b|\bpromo(?:tion)?s?\b|\bdeals?\b|\bvouchers?\b|\bsales?\b", 2.0),
        (r"クーポン|割引|セール|値引き", 2.0),
    ),
    "inventory": (
        (r"\bin stock\b|\bavailable (?:near|in|at|today)\b|\bnear me\b|\bnearby\b|\bpick(?: it)? up\b|\bstores?\b", 2.0),
        (r"\bget (?:it|this|one) today\b|\bwhere can i (?:get|buy)\b|\bavailability\b", 2.0),
        (r"在庫|近く|近所|店舗|お店|今日中|受け取り|取り置き", 2.0),
    ),
    "purchase": (
        (r"\badd\b.*\b(cart|basket|bag)\b|\b(buy|purchase|order)\b|\bi'?ll take\b", 3.0),
        (rf"^(?:please\s+)?add\b|^(?:{_CART}に)?追加", 2.0),
        (r"^add\s+(?:[A-Za-z][A-Za-z-]{0,30}-\d{3,6}|[A-Z]{1,4}\d{3,6})\s*$", 3.0),  # an Add to cart button
        (r"\bremove\b.*\b(cart|basket|bag)\b|\btake .* out of (?:my )?cart\b|\b(?:change|set|update) (?:the )?(?:quantity|qty)\b", 3.0),
        (r"^(?:please\s+)?(?:remove|delete|take out)\b|^.{0,25}(?:番目|つ目|最初|最後|それ|これ)の?(?:商品)?を?(?:削除|外して|取り除)", 3.0),
        (r"\bset (?:it|them|that|this|the \w+(?: one)?) to \d{1,2}\b|\bmake it \d{1,2}\b", 3.0),
        (r"数量を?.*(?:変更|変え|にして|にする)|個に(?:して|変更|変えて)", 3.0),
        (rf"{_CART}に(?:[0-9０-９一二三四五六七八九十]+(?:{_JA_COUNTERS})\s*)?(?:入れ|追加)|購入|買いたい|買います|注文"
         rf"|{_CART}から.{{0,20}}(?:削除|外)", 3.0),
    ),
    "cart": (
        (r"\b(my|the) (cart|basket|bag)\b|\bcheckout\b|\bcart total\b|\bwhat'?s in my cart\b", 2.0),
        (rf"{_CART}の中|{_CART}を見|{_CART}(?:の)?合計|{_CART}$", 2.0),
    ),
    "apply_coupon": (
        (r"\b(apply|use|redeem)\b.*\b(coupon|code|voucher)\b|\b(apply|use|redeem) [A-Z0-9]{4,}\b", 4.0),
        (r"クーポン.*(?:使|適用)|(?-i:[A-Z][A-Z0-9]{2,18}\d)\s*(?:を|で)?\s*(?:使|適用)", 4.0),  # 「AUDIO15を適用」
    ),
}
_COMPILED = {intent: tuple((rule(p), w) for p, w in rows) for intent, rows in PATTERNS.items()}
CLEAR_MARGIN = 1.0  # the winner's lead over the runner-up for the rules to decide alone


class Intent(BaseModel):
    """What the model fills when the rules are unsure."""

    intent: IntentName = Field(description="what the shopper wants to do")
    product_reference: str | None = Field(
        None, description="the words naming or pointing at a product ('the second one', 'Sony earbuds'), if any"
    )


@dataclass(frozen=True)
class Classification:
    intent: str
    confident: bool
    scores: dict[str, float] = field(default_factory=dict)


# Asking about a product pointed at ("tell me more about the second one", "what's the cheapest?",
# 「2番目の詳細」「一番安いのは？」): its details, when the message points at one and names no category.
_ABOUT = rule(
    r"\btell me (?:more )?about\b|\bmore (?:about|on|info)\b|\bdetails?\b|\bwhat(?:'s| is) (?:the )?|\bwhich(?: one)? is\b"
    r"|\bhow(?:'s| is| are| good is| long is| big is| heavy is| much is| much are| much does)\b"
    r"|詳細|詳しく|(?:は|って)(?:どれ|何)?[？?]?$|^どれが|^一番\S{1,8}(?:の|もの|やつ)?[？?]?$",
)


def _points_at_product(text: str) -> bool:
    ref = product_reference(text)
    return bool(ref.product_id or ref.ordinal or ref.pick or ref.rank)


def classify(text: str) -> Classification:
    """The intent the rules see in `text`, and whether they are sure."""
    scores: dict[str, float] = {}
    for intent, rows in _COMPILED.items():
        score = sum(weight for pattern, weight in rows if pattern.search(text))
        if score:
            scores[intent] = score
    if extract_price_range(text) is not None or category_of(text) is not None:
        scores["search"] = scores.get("search", 0.0) + 1.0
    elif (_ABOUT.search(text) or _HAS_IT.search(text)) and _points_at_product(text):  # "tell me more about the second one"
        scores["specs"] = scores.get("specs", 0.0) + 2.0
    if "apply_coupon" in scores:
        scores.pop("coupons", None)
    if "purchase" in scores:
        scores.pop("cart", None)
    if not scores:
        return Classification("other", False, scores)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    best, top = ranked[0]
    runner = ranked[1][1] if len(ranked) > 1 else 0.0
    return Classification(best, top - runner >= CLEAR_MARGIN, scores)


# --- slots ------------------------------------------------------------------------------------

CATEGORY_WORDS: dict[str, tuple[str, ...]] = {
    "audio": ("earbuds", "earphones", "headphones", "headset", "speaker", "soundbar", "イヤホン", "ヘッドホン", "スピーカー"),
    "computers": ("laptop", "notebook", "computer", "monitor", "keyboard", "mouse", "tablet", "ノートパソコン", "パソコン", "モニター", "キーボード", "マウス"),
    "phones": ("phone", "smartphone", "charger", "power bank", "スマホ", "スマートフォン", "充電器", "モバイルバッテリー"),
    "wearables": ("smartwatch", "watch", "fitness tracker", "band", "スマートウォッチ", "腕時計"),
    "kitchen": ("kettle", "coffee", "blender", "rice cooker", "knife", "pan", "toaster", "ケトル", "コーヒー", "炊飯器", "包丁", "フライパン"),
    "home": ("vacuum", "lamp", "air purifier", "fan", "humidifier", "掃除機", "ライト", "空気清浄機", "扇風機", "加湿器"),
    "shoes": ("shoes", "sneakers", "boots", "sandals", "running shoes", "靴", "シューズ", "スニーカー", "ブーツ", "サンダル"),
    "apparel": ("jacket", "shirt", "t-shirt", "hoodie", "jeans", "coat", "socks", "ジャケット", "シャツ", "パーカー", "ジーンズ", "コート"),
    "outdoor": ("tent", "backpack", "sleeping bag", "hiking", "camping", "bottle", "テント", "リュック", "寝袋", "キャンプ", "登山"),
    "beauty": ("shampoo", "moisturizer", "sunscreen", "serum", "hair dryer", "shaver", "シャンプー", "保湿", "日焼け止め", "美容液", "ドライヤー"),
}


def category_of(text: str) -> str | None:
    lowered = usual_spelling(text.lower())
    for category, words in CATEGORY_WORDS.items():
        if any(re.search(rf"(?<![a-z]){re.escape(w)}", lowered) for w in words):
            return category
    return None


_NUMBER_WORDS = r"one|two|three|four|five|six|seven|eight|nine|ten|a couple of"
_JA_NUMBER = r"[一二三四五六七八九十]{1,2}|ひと|ふた|みっ|よっ|いつ"
_UNIT = rf"(?:{_JA_COUNTERS})(?!目)"  # 「2つ目」「2個目」 are ordinals, not quantities
_QUANTITY = rule(
    rf"\b(?:quantity|qty)\b(?:\s+\w+){{0,6}}?\s+to\s+(?P<s>-?\d{{1,4}}|{_NUMBER_WORDS})\b"  # "quantity of the first to 5"
    rf"|\bset\b(?:\s+\w+){{0,6}}?\s+to\s+(?P<t>-?\d{{1,4}}|{_NUMBER_WORDS})\b"
    rf"|(?P<n>-?\d{{1,4}})\s*(?:x\b|pcs\b|pieces?\b|units?\b|pairs?\b|sets?\b|packs?\b|of\b|{_UNIT})"
    rf"|\b(?:add|buy|order|take|get|want|make it|quantity(?: to)?)\s+(?P<m>-?\d{{1,4}}|{_NUMBER_WORDS})\b"
    rf"|(?:数量を?|を)\s*(?P<j>-?\d{{1,4}})\s*{_UNIT}?"
    rf"|(?P<k>{_JA_NUMBER})\s*{_UNIT}",
)
_JA_COUNTS = {"ひと": 1, "ふた": 2, "みっ": 3, "よっ": 4, "いつ": 5}


def extract_quantity(text: str) -> int | None:
    """'add 2 of them' → 2, 'buy three' → 3, '2個' or '二つ' → 2, 'change the quantity of the first
    one to 5' → 5, 'add -1' → -1 (refused later, clearly); '2つ目' is an ordinal, not a quantity."""
    match = _QUANTITY.search(text)
    if not match:
        return None
    raw = next(g for g in match.group("s", "t", "n", "m", "j", "k") if g)
    if raw in _JA_COUNTS:
        return _JA_COUNTS[raw]
    try:
        return int(raw)
    except ValueError:
        return parse_number(raw.replace("a couple of", "couple"))


_SET_QUANTITY = rule(
    r"\b(?:change|set|update)\b.*\b(?:quantity|qty)\b|\bquantity\b.*\bto\s+\d|\bmake it\s+\d|\bset\b.*\bto\s+\d"
    r"|数量を?.*(?:変更|変え|にして|にする)|個に(?:して|変更|変え)",
)


def cart_action(text: str) -> Literal["add", "set", "remove"]:
    """What a purchase message does to the cart: remove a product, set its quantity, or add to it."""
    if is_removal(text):
        return "remove"
    return "set" if _SET_QUANTITY.search(text) else "add"


_YES = rule(r"^\s*(?:y|yes|yeah|yep|sure|ok(?:ay)?|confirm(?:ed)?|do it|go ahead|please do|はい|うん|お願いします|確定|オッケー)\b[\s!.。！]*")
_NO = rule(r"^\s*(?:n|no|nope|cancel|stop|don'?t|never ?mind|いいえ|いや|キャンセル|やめ(?:る|て|ます)?|取り消し)\b[\s!.。！]*")


def yes_or_no(text: str) -> Literal["yes", "no"] | None:
    """A reply to a confirmation: "yes"/"confirm"/「はい」 or "no"/"cancel"/「いいえ」; None otherwise."""
    if _NO.match(text):
        return "no"
    if _YES.match(text):
        return "yes"
    return None


_COUPON_CODE = re.compile(rf"(?<!{LATIN_WORD})([A-Z][A-Z0-9]{{3,19}})(?!{LATIN_WORD})")  # 「クーポンAUDIO15を」 too


def extract_coupon_code(text: str) -> str | None:
    for match in _COUPON_CODE.finditer(text):
        word = match.group(1)
        if any(c.isdigit() for c in word) or (word.isupper() and len(word) >= 5):
            return word
    return None


_FULFILLMENT = (
    ("same_day", rule(r"same[- ]day|today|今日|当日")),
    ("pickup", rule(r"pick ?up|pick (?:it|them|those|these|that|this) up|collect|in store|店舗受け取り|受け取り|取り置き")),
    ("ship", rule(r"\bship|deliver|delivery|配送|発送|届け")),
)


def extract_fulfillment(text: str) -> str | None:
    for kind, pattern in _FULFILLMENT:
        if pattern.search(text):
            return kind
    return None


CITIES: dict[str, tuple[str, ...]] = {
    "Tokyo": ("tokyo", "東京", "shibuya", "渋谷", "shinjuku", "新宿"),
    "Osaka": ("osaka", "大阪", "umeda", "梅田"),
    "New York": ("new york", "nyc", "manhattan", "brooklyn", "ニューヨーク"),
    "San Francisco": ("san francisco", "sf", "bay area", "サンフランシスコ"),
    "London": ("london", "ロンドン"),
}


def city_name(city: str, lang: Language) -> str:
    """The city as the shopper writes it: '東京' for Tokyo in Japanese."""
    if lang == "ja":
        return next((w for w in CITIES.get(city, ()) if is_japanese(w)), city)
    return city


def extract_city(text: str) -> str | None:
    lowered = text.lower()
    for city, words in CITIES.items():
        if any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", lowered) for w in words):
            return city
    return None


_PLACE = rule(r"\b(?:in|near|around)\s+(?P<place>[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){0,2})", 0)


def place_named(text: str) -> str | None:
    """A city the shop knows (extract_city), else a place written with capitals after "in", "near" or
    "around" ("in stock in Austin" → "Austin"), so the shopper hears the shop has no store there."""
    known = extract_city(text)
    if known:
        return known
    match = _PLACE.search(text)
    return match.group("place").rstrip(".") if match else None


_REMOVAL = rule(r"\b(remove|delete|take .* out)\b|削除|外して|取り消")


def is_removal(text: str) -> bool:
    return bool(_REMOVAL.search(text))


# --- product references -------------------------------------------------------------------------

_THIS = rule(r"\b(it|this|that|this one|that one|them)\b|これ|それ|この商品|その商品|あれ")
_CHEAPER = rule(r"\bcheap(?:er|est)\b|\bless expensive\b|\blower price\b|安い方|安いほう|一番安い")
_PRICIER = rule(r"\b(?:more expensive|priciest|most expensive|premium one)\b|高い方|高いほう")
_BETTER = rule(r"\b(?:better|best|higher|highest)[- ]rated\b|\bthe better one\b|評価が高い")
PRODUCT_ID = r"[A-Za-z][A-Za-z-]{0,30}-\d{3,6}|[A-Z]{1,4}\d{3,6}"  # "earbuds-001", "ZZ-9999", "SKU1234"
_PRODUCT_ID = re.compile(rf"(?<!{LATIN_WORD})(?<!-)({PRODUCT_ID})(?!{LATIN_WORD}|-)")  # 「earbuds-001の」 too


@dataclass(frozen=True)
class Reference:
    """How the text points at a product: an id, a position in the last list, a comparison over the
    last list, or the current product."""

    product_id: str | None = None
    ordinal: int | None = None
    pick: Literal["cheapest", "priciest", "best_rated"] | None = None
    this: bool = False
    rank: SpecRank | None = None  # the product first on a spec ("the lightest", "the most RAM")

    @property
    def given(self) -> bool:
        """Whether the text points at a product at all."""
        return bool(self.product_id or self.ordinal or self.pick or self.this or self.rank)


@dataclass(frozen=True)
class SpecRank:
    """A superlative over a spec of the products shown: the spec keys it reads, each with its factor
    to one unit (grams and kilograms weigh alike), and whether the largest value wins."""

    keys: tuple[tuple[str, float], ...]
    most: bool


_WEIGHT = (("weight_g", 1.0), ("weight_kg", 1000.0), ("weight_g_per_bud", 1.0))
_BATTERY = (("battery_hours", 1.0), ("battery_days", 24.0), ("battery_min", 1 / 60), ("runtime_min", 1 / 60),
            ("battery_mah", 1.0))
_SCREEN = (("screen_in", 1.0), ("size_in", 1.0))
_BEST = r"(?:一番|いちばん|最も)"
# "which has the most RAM?", "the lightest one", 「一番軽いのは？」: the words, the spec, whether most wins.
_SPEC_RANKS: tuple[tuple[re.Pattern[str], SpecRank], ...] = tuple(
    (rule(pattern), SpecRank(keys, most)) for pattern, keys, most in (
        (r"\b(?:most|biggest|largest)\s+(?:ram|memory)\b|(?:メモリ|RAM)(?:が|の)?" + _BEST + "(?:多い|大きい)",
         (("ram_gb", 1.0),), True),
        (r"\b(?:most|biggest|largest)\s+(?:storage|ssd|disk)\b|(?:ストレージ|SSD)(?:が|の)?" + _BEST + "(?:多い|大きい)",
         (("storage_gb", 1.0),), True),
        (r"\b(?:longest|best|biggest|most)\s+battery\b|\bbattery\s+lasts?\s+(?:the\s+)?longest\b"
         r"|バッテリー(?:が|の)?" + _BEST + "(?:長い|長く|持つ|もつ|大きい)", _BATTERY, True),
        (r"\blightest\b|" + _BEST + "軽い", _WEIGHT, False),
        (r"\bheaviest\b|" + _BEST + "重い", _WEIGHT, True),
        (r"\b(?:biggest|largest)\s+(?:screen|display)\b|(?:画面|ディスプレイ)(?:が|の)?" + _BEST + "大きい", _SCREEN, True),
        (r"\bsmallest\s+(?:screen|display)\b|(?:画面|ディスプレイ)(?:が|の)?" + _BEST + "小さい", _SCREEN, False),
        (r"\bquietest\b|" + _BEST + "静か", (("noise_db_min", 1.0),), False),
        (r"\bbrightest\b|" + _BEST + "明るい", (("lumens", 1.0),), True),
        (r"\bmost\s+powerful\b|" + _BEST + "(?:パワフル|強力)",
         (("watts", 1.0), ("output_w", 1.0), ("output_kw", 1000.0), ("suction_pa", 1.0)), True),
        (r"\b(?:best|highest|most)\s+(?:camera|megapixels?)\b|カメラ(?:が|の)?" + _BEST + "(?:良い|いい|高い)",
         (("camera_mp", 1.0),), True),
        (r"\b(?:biggest|largest|most)\s+capacity\b|容量(?:が|の)?" + _BEST + "(?:大きい|多い)",
         (("capacity_l", 1000.0), ("capacity_ml", 1.0), ("volume_ml", 1.0), ("capacity_mah", 1.0),
          ("capacity_cups", 1.0), ("capacity_people", 1.0)), True),
    )
)


@dataclass(frozen=True)
class Feature:
    """A yes-or-no quality of a product, read from its specs: which keys say it, and how."""

    name: str  # the shopper's word for it, in the answer
    name_ja: str
    checks: tuple[tuple[str, str], ...]  # (spec key, a pattern its value matches when the product has it)


_WATERPROOF = r"^(?:IP[X\d][78]|\d+\s*ATM|yes)$"
_NOISE_CANCELLING = r"\bnoise[- ]cancel+(?:ing|ation)?\b|\bANC\b|ノイズキャンセリング|ノイキャン"  # a Feature, and a spec asked about
# "which one is waterproof?", "do any of them have GPS?", 「防水なのはどれ？」: over the products shown.
_FEATURES: tuple[tuple[re.Pattern[str], Feature], ...] = tuple(
    (rule(pattern), feature) for pattern, feature in (
        (r"\bwater[- ]?proof\b|防水", Feature("waterproof", "防水", (("water_resistance", _WATERPROOF), ("waterproof", "^yes$")))),
        (r"\bwater[- ]?resistant\b|\bsplash[- ]?proof\b|生活防水|防滴",
         Feature("water resistant", "防滴", (("water_resistance", r"^(?!none$|no$)."), ("water_resistant", "^yes$"),
                                             ("waterproof", "^yes$")))),
        (r"\b(?:built[- ]in\s+)?gps\b|GPS", Feature("built-in GPS", "GPS内蔵", (("gps", "^built-in"),))),
        (r"\bheart[- ]rate\b|心拍", Feature("heart rate", "心拍計測", (("heart_rate", "^yes$"),))),
        (_NOISE_CANCELLING,
         Feature("active noise cancelling", "ノイズキャンセリング", (("noise_cancelling", "^active$"),))),
        (r"\bmultipoint\b|マルチポイント", Feature("multipoint", "マルチポイント", (("multipoint", "^yes$"),))),
        (r"\bfold(?:able|s)\b|折りたため|折りたたみ", Feature("foldable", "折りたたみ", (("foldable", "^yes$"),))),
        (r"\bsleep[- ]tracking\b|睡眠", Feature("sleep tracking", "睡眠計測", (("sleep_tracking", "^yes$"),))),
        (r"\b(?:contactless\s+)?payments?\b|\bNFC\b|決済", Feature("payments", "決済機能", (("payments", "^yes$"),))),
    )
)
_WHICH_OF_THEM = rule(
    r"\bwhich\b|\b(?:do|does|are|is)\s+any\b|\bany\s+of\s+(?:them|these|those)\b|どれ|どの商品|どちら"
)


def asked_feature(text: str) -> Feature | None:
    """The yes-or-no quality the text asks the products shown about ("which one is waterproof?")."""
    return named_feature(text) if _WHICH_OF_THEM.search(text) else None


def named_feature(text: str) -> Feature | None:
    """The yes-or-no quality the text names ("waterproof", 「防水」), asked of anything."""
    return next((feature for pattern, feature in _FEATURES if pattern.search(text)), None)


def has_feature(feature: Feature, specs: Mapping[str, str]) -> bool | None:
    """Whether a product with these specs has it; None when they do not say."""
    said = [re.search(pattern, str(specs[key]), re.IGNORECASE) is not None for key, pattern in feature.checks if key in specs]
    return any(said) if said else None


# Words shoppers ask a spec by that its label does not hold ("how heavy", 「何キロ」), as a word of
# the label they mean.
_SPEC_SYNONYMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (rule(pattern), word) for pattern, word in (
        (r"\bheavy\b|\bweigh(?:s|t)?\b|\blight(?:weight)?\b(?!\s*bulb)|重さ|重い|軽い|何キロ|何グラム", "weight"),
        (r"\bmemory\b|メモリ", "ram"),
        (r"\bprocessor\b|\bchip\b|プロセッサ|CPU", "cpu"),
        (r"\bbacklit\b|バックライト", "backlight"),
        (r"\bwater[- ]?(?:proof|resistant|resistance)\b|\bsplash\b|防水|防滴", "water"),
        (r"\bbattery\b|\bcharge\b|電池|バッテリー", "battery"),
        (_NOISE_CANCELLING, "noise"),
        (r"\bscreen\b|画面", "screen"),
    )
)
# "does it have a backlit keyboard?", "is the first one waterproof?": the quality asked about, yes or no.
_HAS_IT = rule(
    rf"\b(?:does|do)\s+{_SUBJECT}\s+(?:have|support|come\s+with|include|work\s+with)\s+(?P<x>[^?.!,;]{{2,60}}?)\s*[?.!]*$"
    rf"|\b(?:is|are)\s+{_SUBJECT}\s+(?P<y>[^?.!,;]{{2,60}}?)\s*[?.!]*$"
    r"|(?:は|って)\s*(?P<y2>[^は？?。、]{1,20}?)(?:機能)?(?:ですか|でしょうか|ある|あります|付き|対応|なの)?か?[？?]$"  # 「1番目は防水？」
    r"|^(?:[^は？?。、]*の)?(?P<x2>[^は？?。、の]{1,20}?)(?:は|って)(?:ある|あります|付いてる|付いています|ついてる|ついています)か?[？?]?$"  # 「マイクは付いてる？」
)


def asked_specs(text: str, keys: Sequence[str], lang: Language = "en") -> list[str]:
    """The spec keys of `keys` the question names: every word of a key's English label ("Battery
    (hours)" → battery) or its Japanese label, said or meant ("how heavy is it?" → weight_kg,
    「重さは？」 → weight_g)."""
    lowered = usual_spelling(text.lower())
    said = {word for pattern, word in _SPEC_SYNONYMS if pattern.search(text)}
    words = set(re.findall(r"[a-z]+", lowered)) | said
    found = []
    for key in keys:
        label = spec_label(key).lower().split(" (")[0]
        named = [w for w in re.findall(r"[a-z]+", label) if len(w) >= 3]
        ja = spec_parts(key, "", "ja")[0].split("（")[0]
        meant = named and named[0] in said  # "how heavy" → every weight; "waterproof" → water resistance
        if meant or (named and all(w in words or w.rstrip("s") in words for w in named)) or (len(ja) >= 2 and ja in text):
            found.append(key)
    return found


def asked_quality(text: str) -> tuple[Literal["has", "is"], str] | None:
    """What a yes-or-no question asks the product to have or be, as written: ("has", "a backlit
    keyboard"), ("is", "dishwasher safe")."""
    match = _HAS_IT.search(text.strip())
    if match is None:
        return None
    if match.group("x") or match.group("x2"):
        return "has", (match.group("x") or match.group("x2")).strip()
    return "is", (match.group("y") or match.group("y2")).strip()


def spec_rank(text: str) -> SpecRank | None:
    """The spec superlative the text asks for ("which is the lightest?"), if any."""
    return next((rank for pattern, rank in _SPEC_RANKS if pattern.search(text)), None)


def ranked(rank: SpecRank, products: Sequence[Product]) -> list[tuple[Product, str, float]]:
    """The products that list one of the rank's specs as a number, first first: (product, the spec's
    key, its value in the rank's unit)."""
    out: list[tuple[Product, str, float]] = []
    for product in products:
        for key, factor in rank.keys:
            number = re.match(r"\d+(?:\.\d+)?", product.specs.get(key, "").replace(",", ""))
            if number:
                out.append((product, key, float(number.group(0)) * factor))
                break
    # Only values of one measure are compared (hours with days, not with a phone's mAh): the one most
    # of the products list.
    measures = Counter(_MEASURE.get(key, "") for _product, key, _value in out)
    measure = measures.most_common(1)[0][0] if measures else ""
    out = [found for found in out if _MEASURE.get(found[1], "") == measure]
    return sorted(out, key=lambda found: -found[2] if rank.most else found[2])


# Spec keys a rank reads that measure something else than the rank's other keys.
_MEASURE = {"battery_mah": "charge", "capacity_mah": "charge", "capacity_cups": "cups", "capacity_people": "people",
            "weight_g_per_bud": "per bud"}


_ORDINAL_WORD = "|".join(sorted(ORDINAL_WORDS, key=len, reverse=True))
_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5}
_ORDINALS = rule(
    rf"\b(?:the\s+)?(?:first|top)\s+(?P<count>[2-5]|two|three|four|five)\b(?!\s*(?:[%$¥€£]|stars?|hours?|days?|nights?))"  # "the first two"
    r"|(?:最初の|上位)\s*(?P<count_ja>[2-5２-５二三四五])\s*(?:つ|件|個)?"  # 「最初の2つ」「上位3件」
    rf"|\b(?:the\s+)?(?P<w>{_ORDINAL_WORD})\b(?!\s+(?:night|time|of\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))"
    r"|(?:#|\bnumber\s+|\bno\.\s*|\boption\s+)(?P<n>\d{1,2})\b"
    r"|(?P<ja>\d{1,2}|[一二三四五六七八九十])\s*(?:番目|つ目|件目|個目)"
    r"|(?P<kana>ひと|ふた|みっ|よっ|いつ)つ目"
    r"|(?P<firstja>最初)|(?P<lastja>最後)",
)


def ordinals(text: str) -> list[int]:
    """The positions in the last list the text points at, in its order: "compare the first and the
    second" → [1, 2], "#2 vs the last" → [2, -1], 「1つ目と最後」 → [1, -1], "the first three" →
    [1, 2, 3]; 1 is the first, -1 the last."""
    out: list[int] = []
    for match in _ORDINALS.finditer(text):
        g = match.groupdict()
        count = g["count"] or g["count_ja"]
        if count:
            n = _COUNT_WORDS.get(count.lower()) or parse_number(count) or 0
            out += range(1, n + 1)
        elif g["w"]:
            out.append(ORDINAL_WORDS[g["w"].lower()])
        elif g["n"] or g["ja"]:
            out.append(parse_number(g["n"] or g["ja"]) or 0)
        elif g["kana"]:
            out.append(_JA_COUNTS[g["kana"]])
        else:
            out.append(1 if g["firstja"] else -1)
    return [n for n in out if n]


def product_reference(text: str) -> Reference:
    match = _PRODUCT_ID.search(text)
    if match:
        return Reference(product_id=match.group(1))
    positions = ordinals(text)
    if positions:
        return Reference(ordinal=positions[0])
    rank = spec_rank(text)
    if rank is not None:
        return Reference(rank=rank)
    if _CHEAPER.search(text):
        return Reference(pick="cheapest")
    if _PRICIER.search(text):
        return Reference(pick="priciest")
    if _BETTER.search(text):
        return Reference(pick="best_rated")
    return Reference(this=bool(_THIS.search(text)))


def named_products(text: str, products: Sequence[Product]) -> list[Product]:
    """The products of `products` the text names: one by its full name (English or Japanese), else
    those by the start of their name with at least one word past the brand ("Soundforge Voyage
    Mini"), or without the brand by two words or more ("the Voyage Mini"). The name the text follows
    furthest wins, with the brand before without; more than one on a tie ("the Flow Plus": two brands
    make one)."""
    lowered = text.lower()
    for product in products:
        if product.name.lower() in lowered or (product.name_ja and product.name_ja in text):
            return [product]
    spaced = " ".join(lowered.split())
    reach: dict[str, tuple[int, bool]] = {}  # words followed past the brand; the brand said too
    for product in products:
        words = product.name.lower().split()
        brand = len(product.brand.split()) if product.brand and product.name.lower().startswith(
            product.brand.lower() + " ") else 0
        for start, least in ((0, brand + 1 if brand else 2), (brand, brand + 2)):  # with the brand, or without
            end = next((end for end in range(len(words), least - 1, -1) if _says(spaced, words[start:end])), 0)
            if end:
                reach[product.id] = max(reach.get(product.id, (0, False)), (end - brand, start < brand))
    best = max(reach.values(), default=None)
    return [product for product in products if best is not None and reach.get(product.id) == best]


def which_of(products: Sequence[Product], lang: Language) -> str:
    """Which of these products the shopper means, each by its name and id (what tells them apart)."""
    names = ("、" if lang == "ja" else ", ").join(f"{product_name(p, lang)} ({p.id})" for p in products[:5])
    return say("which_one", lang, names=names)


def _says(spaced: str, words: list[str]) -> bool:
    """Whether the words stand in the text (lower case, single-spaced) as a phrase of their own: not
    inside a longer word or number."""
    phrase = " ".join(words)
    at = spaced.find(phrase)
    while at != -1:
        before, after = spaced[at - 1 : at], spaced[at + len(phrase) : at + len(phrase) + 1]
        if not any(c.isascii() and c.isalnum() for c in before + after):
            return True
        at = spaced.find(phrase, at + 1)
    return False


def resolve(
    ref: Reference, shown: list[dict[str, Any]], current: str | None, lang: Language = "en"
) -> tuple[str | None, str | None]:
    """(product id, clarifying question in `lang`): which product `ref` means, given the products
    last shown (in order, each with id, name, price, rating) and the current product."""
    if ref.product_id:
        return ref.product_id, None
    if ref.ordinal is not None:
        return _at(ref.ordinal, shown, lang)
    if ref.pick:
        if len(shown) < 2:
            return (shown[0]["id"], None) if shown else (None, say("compared_to_what", lang))
        key = {"cheapest": lambda p: (p["price"], p["id"]), "priciest": lambda p: (-p["price"], p["id"]),
               "best_rated": lambda p: (-p["rating"], p["price"])}[ref.pick]
        ranked = sorted(shown, key=key)  # type: ignore[arg-type]
        first, second = ranked[0], ranked[1]
        if key(first)[0] == key(second)[0]:  # type: ignore[operator]
            return None, say("tie", lang, first=display_name(first, lang), second=display_name(second, lang))
        return first["id"], None
    if current:
        return current, None
    if len(shown) == 1:
        return shown[0]["id"], None
    if shown:
        names = ", ".join(f"{i + 1}. {display_name(p, lang)}" for i, p in enumerate(shown[:5]))
        return None, say("which_one", lang, names=names)
    return None, None


def _at(ordinal: int, shown: list[dict[str, Any]], lang: Language) -> tuple[str | None, str | None]:
    """The product at a position of the last list (-1: the last), or a question."""
    if not shown:
        return None, say("which_product", lang)
    index = ordinal - 1 if ordinal > 0 else len(shown) + ordinal
    if not 0 <= index < len(shown):
        return None, say("which_of_shown", lang, count=len(shown))
    return shown[index]["id"], None


# The separators alone, the spaces around them stripped from the parts: a pattern opening with `\s*`
# would read a run of spaces again from each of its spaces (4,000 of them took 1.8 s).
_COMPARED = rule(r",|\band\b|\bvs\.?|\bversus\b|\bwith\b|\bor\b|\bto\b|と|、|や")


def compared_parts(text: str, most: int = 5) -> list[str]:
    """The text cut where a comparison moves from one product to the next ("X and Y", "X vs Y",
    「XとY」): the first `most` parts (a comparison takes four products), each looked up in the catalog."""
    return [part.strip() for part in _COMPARED.split(text, maxsplit=most) if part.strip()][:most]


def compare_targets(
    text: str, shown: list[dict[str, Any]], current: str | None, lang: Language = "en",
    named: Sequence[Sequence[Product]] = (),
) -> tuple[list[str], str | None]:
    """(product ids, clarifying question) for a comparison: the products the text names by id, by
    position or by name (`named`: for each of `compared_parts`, the products it names), in its order
    ("compare the first and the second" → exactly those two); one of them is compared with the
    current product ("compare it with the third"). No reference: [] (the tool compares the first
    products shown)."""
    ids = [m.group(1) for m in _PRODUCT_ID.finditer(text)]
    for ordinal in ordinals(text):
        product_id, question = _at(ordinal, shown, lang)
        if question is not None:
            return [], question
        ids.append(str(product_id))
    for products in named:
        if len(products) > 1:
            return [], which_of(products, lang)
        ids += [p.id for p in products]
    if len(ids) == 1 and current and _THIS.search(text):
        ids.insert(0, current)
    ids = list(dict.fromkeys(ids))
    if len(ids) == 1:
        return [], say("compare_with_what", lang, count=len(shown)) if shown else say("compare_with_which", lang)
    return ids, None


def search_filters(text: str, user_currency: str) -> dict[str, Any]:
    """Search slots from the text: category, price bounds (with their currency), minimum rating."""
    out: dict[str, Any] = {}
    category = category_of(text)
    if category:
        out["category"] = category
    # 「評価4以上」「星4以上」 bound the rating, not the price
    price = extract_price_range(_JA_RATING.sub(" ", text), quantity_units=QUANTITY_UNITS, bare_ranges=True)
    if price is not None:
        out["currency"] = price.currency or user_currency
        if price.max is not None:
            out["max_price"] = price.max
        if price.min is not None:
            out["min_price"] = price.min
    rating = extract_min_rating(text)
    if rating is not None:
        out["min_rating"] = rating.on_scale(5)
    elif stars := _STARS.search(text) or _JA_RATING.search(text):  # a product's stars are its rating ("4.5 stars and up", 「星4以上」)
        out["min_rating"] = float(stars.group("v"))
    if _BY_PRICE.search(text):
        out["sort"] = "price"
    elif _BY_RATING.search(text):
        out["sort"] = "rating"
    return out


# After a number, words that make it a count or a measure, not a price: "2-4 items", "8-16 GB",
# "20-30 L", "4-6 cups" (the spec units, data/specs_en.json, and their words).
QUANTITY_UNITS = ("items", "pcs", "pack", "pairs", "個", "点", "inch", "in", *spec_units())

# Words that order a search: "the cheapest bluetooth speaker", "best rated tent", 「安い順」「評価が高い順」.
_BY_PRICE = rule(r"\bcheap(?:est)?\b|\b(?:lowest|low)[- ]price[ds]?\b|\bleast\s+expensive\b|安い|安価|低価格")
_BY_RATING = rule(r"\b(?:best|top|highest)[- ]rated\b|\bbest[- ]reviewed\b|評価が高い|高評価")


_JA_RATING = re.compile(r"(?:評価|星|★)\s*(?P<v>[1-5](?:\.\d+)?)\s*(?:つ)?(?:以上)?")
_STARS = rule(r"(?<![\d.])(?P<v>[1-5](?:\.\d)?)\s*\+?\s*(?:-\s*)?stars?\b(?!\s*(?:hotel|rated))")


_REVIEW_FRAME = rule(
    r"\b(?:what|how)\s+do\s+(?:people|customers|users|owners|buyers|reviewers|others)\s+(?:say|think|feel)(?:\s+about)?\b"
    r"|\b(?:do|did|does)\s+(?:people|customers|users|owners|buyers|reviewers)\s+(?:like|say|complain(?:\s+about)?)\b"
    r"|\b(?:any\s+)?(?:reviews?|opinions?|feedback|complaints?)\s*(?:of|for|on|about)?\b"
    rf"|\b(?:the\s+)?(?:{_ORDINAL_WORD}|cheaper|cheapest|better[- ]rated)(?:\s+one)?\b"
    r"|\b(?:of|for|on|about)\s+(?:it|this|that|them)\b|\b(?:this|that)\s+one\b|\bis\s+it\b|\bthe\b"
    r"|(?:この|その)商品の?|これの?|それの?|の?(?:口コミ|クチコミ|評判|レビュー|感想)(?:は|を|って)?|(?:は|って)?どう(?:ですか|かな)?|教えて(?:ください)?"
    r"|(?:(?:\d|[一二三四五六七八九十]|ひと|ふた|みっ)\s*(?:番目|つ目|個目)|最初|最後)の?(?:商品の?)?|\#\d\b",
)


def review_topic(text: str) -> str:
    """What a review question is about, without the question's frame and product reference:
    "what do people say about the battery of the second one?" → "battery"; the whole text when
    nothing is left (a general "any reviews?" asks about everything)."""
    topic = _REVIEW_FRAME.sub(" ", usual_spelling(text))
    topic = _PRODUCT_ID.sub(" ", topic)
    topic = re.sub(r"[?？!！。、,.]+", " ", topic)
    topic = re.sub(r"\s+(?:of|for|on|about)\s*$", "", " ".join(topic.split()), flags=re.IGNORECASE).strip()
    topic = re.sub(r"^の|(?<=[\u3040-\u30ff\u3400-\u9fff])(?:は|って|を)$", "", topic).strip()  # 「の音質は」 → 「音質」
    return topic or "overall quality, what customers liked and disliked"
