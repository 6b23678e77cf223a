"""What the offline hotel skill says, in the traveller's language (Japanese in, Japanese out;
English otherwise), and the words of a request it did not use.

The tools report in English for the model; the skill retells their facts here. A result it cannot
retell (hotel details, an aggregate) keeps the tool's English text after a Japanese lead."""

from __future__ import annotations

import re
from collections.abc import Mapping, Set
from datetime import date
from typing import Any

from agents.hotel import geo
from bot.locale import Language, is_japanese


def city_name(name: str, language: Language) -> str:
    """The city as the traveller would write it: 'ロンドン' for London in Japanese."""
    if language == "ja":
        city = geo.find_city(name)
        if city is not None:
            for alias in city.aliases:
                if is_japanese(alias):
                    return alias
    return name


def landmark_name(name: str, language: Language) -> str:
    if language == "ja":
        found = geo.find_landmark(name)
        if found is not None:
            for alias in found[1].aliases:
                if is_japanese(alias):
                    return alias
    return name


def stay_ja(check_in: date, check_out: date) -> str:
    """'12月11日〜13日', '12月30日〜1月2日'."""
    end = f"{check_out.day}日" if check_out.month == check_in.month else f"{check_out.month}月{check_out.day}日"
    return f"{check_in.month}月{check_in.day}日〜{end}"


AMENITIES_JA = {  # the store's amenity names, as a Japanese card or answer says them
    "wifi": "Wi-Fi", "breakfast": "朝食", "air-conditioning": "エアコン", "parking": "駐車場", "pool": "プール",
    "gym": "ジム", "spa": "スパ", "restaurant": "レストラン", "bar": "バー", "pet-friendly": "ペット可",
    "airport-shuttle": "空港送迎", "kitchen": "キッチン", "24h-front-desk": "24時間フロント",
    "family-rooms": "ファミリールーム", "room-service": "ルームサービス", "laundry": "ランドリー",
    "non-smoking": "禁煙", "accessible": "バリアフリー", "ev-charging": "EV充電", "hot-spring": "温泉",
}


TEXTS: dict[str, dict[Language, str]] = {
    # progress, shown in the status message while the tools run
    "searching": {"en": "Searching hotels in {city}…", "ja": "{city}のホテルを検索しています…"},
    "counting": {"en": "Counting hotels in {city} by {by}…", "ja": "{city}のホテルを集計しています…"},
    "looking_up": {"en": "Looking up {names}…", "ja": "{names}を調べています…"},
    "measuring": {"en": "Measuring distances to {landmark}…", "ja": "{landmark}からの距離を測っています…"},
    "found_hotels": {"en": "Found {hotels}…", "ja": "{count}軒見つかりました…"},
    "found_no_hotels": {"en": "No hotels found in {city}…", "ja": "{city}には条件に合うホテルが見つかりませんでした…"},
    "found_details": {"en": "Found details for {names}…", "ja": "{names}の詳細が見つかりました…"},
    "counted": {"en": "Counted hotels in {city} by {by}…", "ja": "{city}のホテルを{by}に数えました…"},
    "by_district": {"en": "district", "ja": "エリア別"},
    "by_price_band": {"en": "price band", "ja": "価格帯別"},
    "by_amenity": {"en": "amenity", "ja": "設備別"},
    "ranked": {"en": "Ranked {hotels} by distance to {landmark}…", "ja": "{landmark}に近い順に{count}軒を並べました…"},
    "writing": {"en": "Writing recommendations…", "ja": "おすすめをまとめています…"},
    "which_city": {
        "en": "Which city would you like to stay in? For example: `/hotel Paris under $200 next weekend`.",
        "ja": "どの都市に泊まりますか？ 例: `/hotel 来週末 京都 1泊2万円以下`",
    },
    "which_one": {
        "en": "Which one shall I search: {first} or {second}?",
        "ja": "{first}と{second}、どちらで探しますか？",
    },
    "cannot_book": {
        "en": "I can't make bookings: I search hotels and compare them. Book the one you choose with the hotel or a booking site.",
        "ja": "予約はできません（ホテルの検索と比較のみ行います）。お選びのホテルは、ホテルまたは予約サイトでご予約ください。",
    },
    "no_terms": {
        "en": ("I don't have the hotels' booking terms (cancellation, payment, check-in times): the hotel or your "
               "booking site has them. I can tell you more about a hotel, find cheaper ones, or search elsewhere."),
        "ja": ("ホテルの予約条件（キャンセル、支払い、チェックイン時間など）の情報はありません。ホテルまたは予約サイトでご確認ください。"
               "ホテルの詳細、より安いホテル、別の場所の検索ならお手伝いできます。"),
    },
    "cannot_book_named": {
        "en": "I can't make bookings: I search hotels and compare them. To stay at {name}, book with the hotel or a booking site.",
        "ja": "予約はできません（ホテルの検索と比較のみ行います）。{name}に泊まるには、ホテルまたは予約サイトでご予約ください。",
    },
    "welcome": {
        "en": "You're welcome! Ask me any time for cheaper options, details of a hotel, the closest to a sight, or another city.",
        "ja": "どういたしまして！ もっと安いホテル、ホテルの詳細、名所に近い順、別の都市の検索もいつでもどうぞ。",
    },
    "anything_else": {
        "en": ("Anything else? I can look for cheaper options, tell you more about one of these hotels, "
               "find the closest to a landmark, or search another city."),
        "ja": "ほかにご希望はありますか？ もっと安いホテル、気になるホテルの詳細、名所に近い順、別の都市の検索ができます。",
    },
    "nothing": {"en": "I could not find anything for that.", "ja": "該当するものが見つかりませんでした。"},
    "found": {
        "en": "{head} {top}: {picks}.",
        "ja": "{city}で{stay}（{nights}泊・{guests}名）に空室のあるホテルが{available}軒見つかりました。おすすめ: {picks}。",
    },
    "searched": {
        "en": "{head}",
        "ja": "{city}で{stay}（{nights}泊・{guests}名）に空室のあるホテルが{available}軒見つかりました。",
    },
    "closest": {
        "en": "{head}: {name} is the closest ({distance}).",
        "ja": "{landmark}に一番近いのは{name}です（{distance}）。",
    },
    "next": {"en": " Next: {others}.", "ja": "次に近いのは{others}です。"},
    "english_follows": {"en": "{text}", "ja": "検索結果です（詳細は英語のままです）。\n{text}"},
    "details": {
        "en": "{text}",
        "ja": "{name}（{city}・{district}、{stars}つ星）— 評価{rating}/5（レビュー{reviews}件）。{price}\n"
              "住所: {address}。設備: {amenities}。",
    },
    "details_price": {"en": "", "ja": "{stay}：1泊{night}、合計{total}。"},
    "details_unavailable": {"en": "", "ja": "{stay}は空室がありません。"},
    "description_follows": {"en": "", "ja": "紹介文（英語）: {text}"},
    "not_used": {
        "en": "(Not used from your message: {words}.)",
        "ja": "（次の言葉は検索条件として使っていません: {words}）",
    },
    "per_night": {"en": "/night", "ja": "/泊"},
    "unavailable": {
        "en": "The hotel data is temporarily unavailable; please try again in a moment.",
        "ja": "ホテルのデータに一時的にアクセスできません。少し待ってからもう一度お試しください。",
    },
    "none_found": {"en": "No hotels available in {city} with these filters.", "ja": "{city}には条件に合う空室がありませんでした。"},
    "cheapest": {"en": "The cheapest available is {name} at {price}/night.", "ja": "空室のある最安は{name}（{price}/泊）です。"},
    "priciest": {"en": "The most expensive available is {price}/night.", "ja": "空室のある最高値は{price}/泊です。"},
    "rated": {"en": "rated {rating}/5", "ja": "評価{rating}"},
}


def say(key: str, language: Language, **values: object) -> str:
    return TEXTS[key][language].format(**values)


def joined(items: list[str], language: Language) -> str:
    return "、".join(items) if language == "ja" else "; ".join(items)


def names_joined(names: list[str], language: Language) -> str:
    """Hotel names in a sentence: 'A, B' or 「A、B」."""
    return ("、" if language == "ja" else ", ").join(names)


def language_in(tool_context: Mapping[str, Any] | None) -> Language:
    """The request's language as the agent recorded it in the state's `tool_context`."""
    return "ja" if (tool_context or {}).get("language") == "ja" else "en"


# --- words not used ------------------------------------------------------------------------------

# Words a request may hold that carry no search filter; anything else that no rule reads is named
# back to the traveller. The rules' own words are added from their patterns (see `understood`).
_FILLER_EN = set("""
a an the i i'd i'm we we're me my our us you your please pls hi hello hey thanks thank ok okay yes no
is are be was were am do does did can could would will shall should might may must
want wanted need needs needed like love looking look find show search get give book booking reserve
hotel hotels room rooms stay stays staying place places somewhere something anything option options
in at on for from to of by with and or but so then also too just only really very some any
this that these those there here it its it's one ones what which who where when how
night nights day days week weeks weekend tonight today tomorrow
per each around about under below over above between max min budget cheap cheaper cheapest
price prices euro euros dollar dollars yen pound pounds
near nearer nearest close closer closest next walking distance
actually wait make meant sorry switch change let's lets go do instead rather than not
adults adult people guests guest kids kid children child family couple us two
star stars rated rating reviews reviewed best top good nice great
""".split())
_FILLER_JA = ("ホテル", "宿", "探", "お願い", "ください", "下さい", "したい", "泊まり", "泊まる", "予約",
              "教えて", "見せて", "どこ", "ありますか", "ある", "いい", "良い", "方", "一番", "近", "安", "高", "予算",
              "以下", "以内", "未満", "まで", "以上", "前後", "くらい", "ぐらい", "程度", "合計", "総額",
              "今週末", "来週末", "週末", "来週", "来月", "明日", "明後日", "今日", "今夜", "今晩", "泊", "人", "名",
              "大人", "子供", "子ども", "つ星", "評価", "やっぱり", "じゃなくて", "ではなく", "にします", "にする",
              "円", "ドル", "ユーロ", "ポンド", "ウォン", "バーツ", "から", "月", "日", "年", "です", "ます", "で",
              "の", "に", "は", "が", "を", "と", "か", "も", "へ", "や", "ね", "よ", "な", "？", "?", "、", "。")


_NEAR_JA = re.compile(r"(?P<what>[\u4e00-\u9fff\u30a1-\u30fa]{1,3})(?:近|チカ)(?!く|い|場|所|郊)")


def not_used(text: str, understood: Set[str], language: Language) -> list[str]:
    """Words of the request that no rule read ('sea view', 「朝食付き」), at most five.

    English: alphabetic words of three letters or more that are neither filler nor a word of the
    rules or of the city tables. Japanese: what is left after removing the rules' words, the
    places and filler, in runs of two characters or more."""
    found: list[str] = []
    if language == "en":
        for word in re.findall(r"[A-Za-z][A-Za-z'-]{2,}", text):
            key = geo.normalize(word)
            if key in _FILLER_EN or key in understood or key.rstrip("s") in understood \
                    or key.removesuffix(" s") in understood:  # "New Year's Eve": normalised 'year s'
                continue
            if word not in found:
                found.append(word)
    else:
        rest = text
        for near in _NEAR_JA.finditer(text):  # 「駅近」: 近 is filler, but what is near is a wish
            if near.group("what") not in understood and near.group(0) not in found:
                found.append(near.group(0))
                rest = rest.replace(near.group(0), " ")
        for token in sorted({*(_FILLER_JA), *(w for w in understood if is_japanese(w))}, key=len, reverse=True):
            rest = rest.replace(token, " ")
        rest = re.sub(r"[\d０-９,.$¥€£%★/~〜\-\s]+", " ", rest)
        rest = re.sub(r"[A-Za-z]+", " ", rest)
        for run in rest.split():
            run = run.strip("ぁ-ゖ、。・")
            if len(run) >= 2 and run not in found:
                found.append(run)
    return found[:5]
