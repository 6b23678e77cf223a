"""/hotel in the traveller's language and currency: Japanese in, Japanese out (text, cards,
questions, progress lines), prices in the currency the traveller searched with beside the hotel's
own, the words of a request no rule used named back, and the platform's locale as the default
currency."""

from __future__ import annotations

import re
from datetime import date

import pytest

from agents.hotel import geo
from agents.hotel.extract import Stay, extract_guests, extract_price_range, extract_stay
from agents.hotel.map import map_for
from agents.hotel.offline import detect_amenities, detect_district
from agents.hotel.phrasebook import not_used
from bot.locale import currency_for_locale, language_of
from bot.offline.extract import PriceRange
from tests.hotel.test_agent import Session, offline_settings, session  # noqa: F401  (fixtures)

pytestmark = pytest.mark.usefixtures("offline_settings")


async def test_a_japanese_request_gets_a_japanese_answer_and_cards(session: Session) -> None:  # noqa: F811
    final = await session.say("京都 来週末 2名")
    assert language_of(final.text) == "ja" and "京都" in final.text and "軒見つかりました" in final.text
    assert final.cards and all("料金" in card.fields and "評価" in card.fields for card in final.cards)
    assert all(card.fields["料金"].endswith(")") or "/泊" in card.fields["料金"] for card in final.cards)


async def test_an_english_request_gets_english(session: Session) -> None:  # noqa: F811
    final = await session.say("Kyoto next weekend for 2")
    assert language_of(final.text) == "en" and "My top" in final.text
    assert all("Price" in card.fields for card in final.cards)


async def test_a_price_in_yen_shows_prices_in_yen_with_the_hotels_own_currency(session: Session) -> None:  # noqa: F811
    final = await session.say("London next weekend under 40000 yen", currency="USD")
    assert final.cards
    for card, hotel in zip(final.cards, final.data["hotels"], strict=True):
        assert hotel["currency"] == "JPY" and hotel["hotel_currency"] == "GBP" and hotel["price"] <= 40000
        assert card.fields["Price"].startswith("¥") and "(£" in card.fields["Price"]
    follow = await session.say("cheaper ones?")  # the follow-up keeps the traveller's currency
    assert all(h["currency"] == "JPY" for h in follow.data["hotels"])


async def test_a_japanese_request_is_shown_yen_when_the_platform_says_dollars_or_nothing(session: Session) -> None:  # noqa: F811
    final = await session.say("ロンドン 来週末 2名")  # no locale: the turn's currency is the default, USD
    assert final.cards and all(h["currency"] == "JPY" and h["hotel_currency"] == "GBP" for h in final.data["hotels"])
    assert all(card.fields["料金"].startswith("¥") and "(£" in card.fields["料金"] for card in final.cards)
    euros = await session.say("パリ 来週末 2名", currency="EUR")  # a currency the platform knows stays
    assert all(h["currency"] == "EUR" for h in euros.data["hotels"])


async def test_a_japanese_choice_is_asked_in_japanese(session: Session) -> None:  # noqa: F811
    final = await session.say("ロンドンかパリ、来週末")
    assert final.text == "ロンドンとパリ、どちらで探しますか？" and not session.tool_calls


async def test_nothing_found_is_said_in_japanese_with_the_cheapest(session: Session) -> None:  # noqa: F811
    final = await session.say("ロンドン 来週末 1泊10ドル以下")
    assert final.text.startswith("ロンドンには条件に合う空室がありませんでした。")
    assert "空室のある最安は" in final.text


async def test_words_no_rule_used_are_named_in_the_answer(session: Session) -> None:  # noqa: F811
    final = await session.say("quiet hotel in Paris next weekend with a rooftop view, under $300")
    assert "(Not used from your message: “quiet”, “rooftop”.)" in final.text
    assert session.tool_calls[0]["args"]["max_price"] == 300  # what was understood still ran


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("Paris with breakfast and a pool near the Louvre", "en", []),
        ("Paris with a sea view", "en", ["sea"]),  # "Sea Point" (Cape Town) does not make "sea" understood
        ("京都 来週末 朝食付き 2万円以下", "ja", []),
        ("京都 来週末 朝食付き 眺めのいい部屋", "ja", ["眺め", "部屋"]),
        ("東京 明日 1泊2万円以下 2人でお願いします", "ja", []),
        ("京都 来週末 駅近 2名", "ja", ["駅近"]),  # near the station: a wish no rule reads, not filler
        ("京都駅近のホテル", "ja", []),  # near a place the table knows
        ("清水寺近くのホテル", "ja", []),
        ("somewhere cheap in Barcelona for New Year's Eve", "en", []),  # was “year's”
        ("大阪 来週の金曜から2泊", "ja", []),  # was 「金曜」
        ("京都 大晦日から2泊", "ja", []),
    ],
)
def test_not_used_words(text: str, language: str, expected: list[str]) -> None:
    from agents.hotel.offline import _words_of, understood_words

    assert not_used(text, understood_words() | _words_of(text, [], ""), language) == expected  # type: ignore[arg-type]


async def test_the_progress_of_a_japanese_request_is_said_in_japanese(session: Session) -> None:  # noqa: F811
    await session.say("大阪 今週末 2名")
    assert session.statuses[-3:] == ["大阪のホテルを検索しています…", session.statuses[-2], "おすすめをまとめています…"]
    assert session.statuses[-2].endswith("軒見つかりました…")
    await session.say("Osaka this weekend for 2")
    assert session.statuses[-3:] == ["Searching hotels in Osaka…", session.statuses[-2], "Writing recommendations…"]


async def test_a_japanese_search_that_finds_nothing_says_so_in_japanese(session: Session) -> None:  # noqa: F811
    await session.say("ロンドン 来週末 1泊10ドル以下")
    assert session.statuses[:2] == ["ロンドンのホテルを検索しています…", "ロンドンには条件に合うホテルが見つかりませんでした…"]
    await session.say("London next weekend under $10")
    assert session.statuses[:2] == ["Searching hotels in London…", "No hotels found in London…"]


async def test_counting_hotels_by_area_is_said_in_japanese(session: Session) -> None:  # noqa: F811
    await session.say("京都 来週末 エリア別に何軒ありますか")
    assert session.statuses[:2] == ["京都のホテルを集計しています…", "京都のホテルをエリア別に数えました…"]
    await session.say("how many hotels in Kyoto by district next weekend")
    assert session.statuses[:2] == ["Counting hotels in Kyoto by district…", "Counted hotels in Kyoto by district…"]


async def test_ranking_by_distance_to_a_landmark_is_said_in_japanese(session: Session) -> None:  # noqa: F811
    await session.say("京都 来週末 2名")
    await session.say("清水寺に一番近いのは？")
    assert session.statuses[0] == "清水寺からの距離を測っています…"
    ranked = re.fullmatch(r"清水寺に近い順に(\d+)軒を並べました…", session.statuses[1])
    assert ranked is not None, session.statuses
    await session.say("Kyoto next weekend for 2")
    await session.say("which one is closest to Kiyomizu-dera?")
    assert session.statuses[:2] == ["Measuring distances to Kiyomizu-dera…",
                                    f"Ranked {ranked[1]} hotels by distance to Kiyomizu-dera…"]


async def test_amenities_asked_for_in_japanese_are_searched_for(session: Session) -> None:  # noqa: F811
    final = await session.say("大阪で今週末、朝食付きで駐車場のあるホテル")
    (search,) = [c for c in session.tool_calls if c["name"] == "search_hotels"]
    assert search["args"]["amenities"] == ["breakfast", "parking"]
    assert "使っていません" not in final.text  # every word of the request was read


@pytest.mark.parametrize(
    ("text", "amenities"),
    [
        ("京都 来週末 温泉と露天風呂", ["hot-spring"]),
        ("東京 明日 朝食なし 禁煙", ["non-smoking"]),  # declined right after its name
        ("札幌 来週末 朝食は不要、Wi-Fi必須", ["wifi"]),
        ("東京 明日 2名", []),
        ("Paris next weekend without breakfast", []),
        ("Paris with breakfast but no pool", ["breakfast"]),
        ("Paris, parking not needed, free wifi", ["wifi"]),
        ("Paris, don't need a gym; no pets", []),
        ("Paris with a swimming pool and breakfast", ["breakfast", "pool"]),
    ],
)
def test_amenities_asked_for_and_declined(text: str, amenities: list[str]) -> None:
    from agents.hotel.offline import detect_amenities

    assert detect_amenities(text) == amenities


@pytest.mark.parametrize(
    ("locale", "currency"),
    [("ja-JP", "JPY"), ("en-GB", "GBP"), ("en_US", "USD"), ("pt-BR", "BRL"), ("fr", "EUR"), ("ja", "JPY"),
     ("en", "USD"), ("", "USD"), ("xx-ZZ", "USD")],
)
def test_a_locale_gives_a_default_currency(locale: str, currency: str) -> None:
    assert currency_for_locale(locale) == currency


async def test_one_hotel_found_is_said_in_the_singular(session: Session) -> None:  # noqa: F811
    """"Found 1 hotel…", "1 hotel available …", one price (not "$69–$69") and "My pick" (not "My top 1")."""
    final = await session.say("Kyoto next weekend with onsen under $100")
    assert "Found 1 hotel…" in session.statuses
    assert final.text.startswith("1 hotel available in Kyoto for Jun 14–16, 2030 (2 nights, 2 guests), $69/night,")
    assert "My pick: " in final.text and "My top" not in final.text
    more = await session.say("Kyoto next weekend with pool")
    assert "Found 3 hotels…" in session.statuses and more.text.startswith("3 hotels available") and "My top 3: " in more.text


async def test_a_japanese_request_for_details_is_answered_in_japanese(session: Session) -> None:  # noqa: F811
    """The details of a hotel (hotel_details' report) retold in Japanese: stars, rating, the stay's
    price, address and amenities; only the hotel's own English description is marked as such."""
    await session.say("京都 来週末 2名")
    final = await session.say("2番目の詳細")
    lines = final.text.splitlines()
    assert re.match(r".+（京都・.+、\dつ星）— 評価\d\.\d/5（レビュー[\d,]+件）。6月14日〜16日：1泊[¥$][\d,]+、合計[¥$][\d,]+。", lines[0])
    assert lines[1].startswith("住所: ") and "。設備: " in lines[1] and "Amenities" not in final.text
    assert all(line.startswith("紹介文（英語）: ") for line in lines[2:])
    assert "英語のまま" not in final.text


# --- Latin words written against Japanese ------------------------------------------------------
# Python's \b sees no edge between Latin letters and kana or kanji, so 「150GBP以下」 had no price,
# 「tomorrowから」 no date, 「Londonで」 no city; the rules compile with bot.locale.rule now.


@pytest.mark.parametrize(
    ("text", "price"),
    [("150GBP以下", PriceRange(None, 150.0, "GBP")), ("100USD前後", PriceRange(80.0, 120.0, "USD")),
     ("1泊200EURまで", PriceRange(None, 200.0, "EUR")), ("150 USD以下", PriceRange(None, 150.0, "USD"))],
)
def test_a_currency_code_against_japanese_is_read(text: str, price: PriceRange) -> None:
    assert extract_price_range(text) == price


@pytest.mark.parametrize(
    ("text", "check_in", "check_out"),
    [("tomorrowから2泊", date(2026, 12, 2), date(2026, 12, 4)), ("next weekendに大阪", date(2026, 12, 11), date(2026, 12, 13)),
     ("来週の金曜からtwo nightsで", date(2026, 12, 11), date(2026, 12, 13))],
)
def test_english_dates_against_japanese_are_read(text: str, check_in: date, check_out: date) -> None:
    assert extract_stay(text, date(2026, 12, 1)) == Stay(check_in, check_out)


def test_guests_against_japanese_are_counted() -> None:
    assert extract_guests("2 adultsと1 child") == 3 and extract_guests("京都 family of 4で") == 4


async def test_a_city_and_a_price_written_against_japanese(session: Session) -> None:  # noqa: F811
    """It was 「どの都市に泊まりますか？」: neither London nor the price was read."""
    final = await session.say("Londonで来週末、150GBP以下")
    assert final.text.startswith("ロンドンで") and final.data["hotels"]
    assert [(c["name"], c["args"]["city"], c["args"]["max_price"], c["args"]["currency"]) for c in session.tool_calls] == [
        ("search_hotels", "London", 150.0, "GBP")]


def test_a_district_and_pets_written_against_japanese() -> None:
    """「Shoreditchで」 named no district, 「petsと」 no pets."""
    london = geo.find_city("London")
    assert london is not None and detect_district("Shoreditchで来週末", london) == "Shoreditch"
    assert detect_amenities("petsと一緒に泊まりたい") == ["pet-friendly"]


@pytest.mark.parametrize(("first", "then"), [("Tokyo next weekend for 2", "show me the map"), ("京都 来週末 2名", "地図を見せて")])
async def test_the_map_asked_for_is_the_last_search_again(session: Session, first: str, then: str) -> None:  # noqa: F811
    """It was "Anything else? …": the map goes with the hotels recommended, so they are found again."""
    shown = await session.say(first)
    searched = session.tool_calls[0]["args"]
    again = await session.say(then)
    assert [(c["name"], c["args"]) for c in session.tool_calls] == [("search_hotels", searched)]
    assert again.data["hotels"] == shown.data["hotels"] and again.text == shown.text
    drawn = map_for(await session.state())
    assert drawn is not None and len(drawn.hotels) == len(shown.data["hotels"])


async def test_thanks_in_japanese_are_acknowledged_in_japanese(session: Session) -> None:  # noqa: F811
    """It was 「ほかにご希望はありますか？ …」, as for any message the planner could not read."""
    await session.say("京都 来週末 2名")
    answer = await session.say("ありがとうございます")
    assert answer.text.startswith("どういたしまして！") and not session.tool_calls
