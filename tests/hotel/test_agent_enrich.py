"""Post-processing: matching the model's hotel names to real hotels, prices in the user's currency."""

from __future__ import annotations

import pytest

from agents.hotel.enrich import card, convert, enrich, format_money, match_hotel, name_similarity
from agents.hotel.seed import generate_hotels
from agents.hotel.state import HotelFacts, HotelPick


def facts(name: str, hotel_id: str, **extra: object) -> HotelFacts:
    base = HotelFacts(id=hotel_id, name=name, city="Paris", district="Le Marais", stars=4, rating=4.3,
                      review_count=1200, latitude=48.857, longitude=2.362, thumbnail_url=f"https://img/{hotel_id}.jpg",
                      currency="EUR", price=150.0, total=300.0, available=True, check_in="2030-06-14",
                      check_out="2030-06-16")
    return HotelFacts(**{**base, **extra})  # type: ignore[typeddict-item]


PARIS = [
    facts("Hôtel Vista Bastille", "p1"),
    facts("Hôtel Nova Montmartre", "p2"),
    facts("The Golden Opéra", "p3"),
    facts("Atlas Hostel Latin Quarter", "p4"),
]


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("Hôtel Vista Bastille", "p1"),
        ("hotel vista bastille", "p1"),
        ("HOTEL VISTA BASTILLE", "p1"),
        ("Hotle Vista Bastille", "p1"),
        ("Hôtel Vista Bastile", "p1"),
        ("Vista Bastille", "p1"),
        ("Hotel Nova Montmarte", "p2"),
        ("Golden Opera", "p3"),
        ("the golden opéra hotel", "p3"),
        ("Atlas Hostel, Latin Quarter", "p4"),
        ("Latin Quarter Atlas Hostel", "p4"),
    ],
)
def test_small_spelling_case_and_accent_differences_match(said: str, expected: str) -> None:
    hotel = match_hotel(said, PARIS)
    assert hotel is not None and hotel["id"] == expected


@pytest.mark.parametrize(
    "said",
    ["Le Grand Fantôme Palace", "Hotel Paris", "Ritz Paris", "Nova Hotel", "Bastille", "", "Hôtel"],
)
def test_names_not_close_to_a_real_hotel_are_not_matched(said: str) -> None:
    assert match_hotel(said, PARIS) is None


def test_no_false_match_between_the_seeded_hotels_of_a_city() -> None:
    """Every demo hotel matches itself and only itself, even with its accents and case removed."""
    for city in ("Paris", "Rome"):
        hotels = [facts(h.name, h.id) for h in generate_hotels() if h.city == city]
        for hotel in hotels:
            found = match_hotel(hotel["name"].lower(), hotels)
            assert found is not None and found["id"] == hotel["id"]


def test_similarity_is_symmetric_and_bounded() -> None:
    assert name_similarity("Hôtel Lumière", "hotel lumiere") == 1.0
    assert name_similarity("abc", "") == 0.0
    assert name_similarity("Golden Opéra", "Vista Bastille") == name_similarity("Vista Bastille", "Golden Opéra")


def test_enrich_keeps_the_models_order_drops_unknowns_and_duplicates() -> None:
    picks = [HotelPick(name="Golden Opera"), HotelPick(name="Phantom Inn"), {"name": "golden opéra"},
             HotelPick(name="Hotel Vista Bastille"), HotelPick(name="Atlas Hostel Latin Quarter"),
             HotelPick(name="Hôtel Nova Montmartre")]

    enriched = enrich(picks, PARIS, "USD", limit=3)

    assert [h["id"] for h in enriched] == ["p3", "p1", "p4"]
    first = enriched[0]
    assert first["thumbnail_url"] == "https://img/p3.jpg"
    assert (first["latitude"], first["longitude"]) == (48.857, 2.362)
    assert first["map_url"] == "https://www.openstreetmap.org/?mlat=48.85700&mlon=2.36200#map=17/48.85700/2.36200"
    assert first["currency"] == "USD" and first["hotel_currency"] == "EUR"
    assert first["price"] == round(convert(150.0, "EUR", "USD"), 2)
    assert first["total_price"] == round(convert(300.0, "EUR", "USD"), 2)


def test_enrich_with_an_unknown_user_currency_keeps_the_hotels() -> None:
    enriched = enrich([HotelPick(name="Golden Opera")], PARIS, "XYZ")
    assert enriched[0]["currency"] == "EUR" and enriched[0]["price"] == 150.0


def test_card_shows_price_rating_image_and_map() -> None:
    shown = card(enrich([HotelPick(name="Golden Opera")], PARIS, "USD")[0])

    assert shown.title == "The Golden Opéra"
    assert shown.subtitle == "Le Marais · ★★★★"
    assert shown.fields == {"Price": "$163/night (€150)", "Rating": "4.3/5 (1,200 reviews)"}
    assert shown.image_url == "https://img/p3.jpg"
    assert shown.url is not None and (shown.lat, shown.lon) == (48.857, 2.362)


def test_card_for_an_unavailable_hotel() -> None:
    hotel = facts("Sold Out Suites", "x", price=None, total=None, available=False)
    shown = card(enrich([HotelPick(name="Sold Out Suites")], [hotel], "EUR")[0])
    assert shown.fields["Price"] == "not available on these dates"


@pytest.mark.parametrize(
    ("amount", "currency", "text"),
    [(182.4, "USD", "$182"), (95, "EUR", "€95"), (21000, "JPY", "¥21,000"), (200, "CHF", "CHF 200"),
     (1234.5, "GBP", "£1,234")],
)
def test_format_money(amount: float, currency: str, text: str) -> None:
    assert format_money(amount, currency) == text


def test_convert_round_trips() -> None:
    assert convert(100, "USD", "USD") == 100
    assert convert(convert(100, "USD", "JPY"), "JPY", "USD") == pytest.approx(100)
    with pytest.raises(ValueError):
        convert(1, "USD", "XYZ")
