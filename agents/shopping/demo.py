"""A deterministic demo catalog: ~350 products in every category, 21 stores in 5 cities, stock, coupons.

Everything comes from `random.Random(seed)` drawn in a fixed order, so the same seed gives the same
catalog on every run and machine (tests compare two calls). The brands and models are made up on
purpose: the bot states specs and prices as facts, and invented products cannot misstate real ones.
Stores stand in real neighbourhoods (real coordinates, time zones) so "near me" and "in Osaka" work.

Prices are in the catalog currency (USD). Each subcategory spreads its products over a budget, a
mid and a premium tier, so price ceilings have hits in both currencies: "wireless earbuds under
$100" and "ワイヤレスイヤホン 1万円以下" (≈ $67 at 150 JPY/USD) each find several.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from agents.shopping.models import CATEGORIES, Coupon, FulfillmentOption, Product, StockRow, Store, Variant

if TYPE_CHECKING:
    from agents.shopping.catalog import CatalogStore

Tier = str  # "budget" | "mid" | "premium"
_TIERS: tuple[Tier, ...] = ("budget", "mid", "premium", "budget", "mid", "budget", "mid", "premium")
_GENERATIONS = {
    "budget": ("Lite", "SE", "Go", "Mini", ""),
    "mid": ("2", "3", "Plus", "", "4"),
    "premium": ("Pro", "Pro 2", "Max", "Ultra", "Elite"),
}

SpecFn = Callable[[random.Random, Tier], tuple[dict[str, str], list[str]]]
VariantFn = Callable[[random.Random, Tier, str, float], tuple[list[Variant], dict[str, str]]]


@dataclass(frozen=True)
class _Line:
    """One subcategory: how its products are named, priced, described and searched."""

    category: str
    sub: str
    noun: str
    noun_ja: str
    keywords: tuple[str, ...]
    brands: tuple[str, ...]
    models: tuple[str, ...]
    prices: dict[Tier, tuple[float, float]]
    specs: SpecFn
    count: int
    variants: VariantFn | None = None


@dataclass
class DemoCatalog:
    products: list[Product] = field(default_factory=list)
    stores: list[Store] = field(default_factory=list)
    stock: list[StockRow] = field(default_factory=list)
    coupons: list[Coupon] = field(default_factory=list)


# --- specs -----------------------------------------------------------------------------------

def _t(tier: Tier) -> int:
    return {"budget": 0, "mid": 1, "premium": 2}[tier]


def _pick(rng: random.Random, tier: Tier, *options: Any) -> Any:
    """One of three tier-ordered options, or a random choice from a flat tuple."""
    if len(options) == 3:
        return options[_t(tier)]
    return rng.choice(options)


_ANC = ["noise cancelling", "ノイズキャンセリング", "anc"]
_WATERPROOF = ["waterproof", "防水"]


def _earbuds(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    hours = rng.randint(5, 7) + _t(tier) * rng.randint(1, 2)
    anc = tier == "premium" or (tier == "mid" and rng.random() < 0.6) or (tier == "budget" and rng.random() < 0.2)
    specs = {
        "battery_hours": str(hours),
        "battery_hours_with_case": str(hours * rng.choice((3, 4, 5))),
        "noise_cancelling": "active" if anc else "none",
        "water_resistance": rng.choice(("IPX4", "IPX5", "IP54", "IPX7")),
        "bluetooth": rng.choice(("5.3", "5.4")),
        "codecs": _pick(rng, tier, "SBC, AAC", "SBC, AAC", "SBC, AAC, LDAC"),
        "weight_g_per_bud": f"{rng.uniform(3.8, 6.2):.1f}",
        "multipoint": "yes" if tier != "budget" else rng.choice(("yes", "no")),
    }
    return specs, (_ANC if anc else []) + (["sports"] if specs["water_resistance"] in ("IPX7", "IPX5") else [])


def _headphones(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    anc = tier != "budget" or rng.random() < 0.3
    return {
        "battery_hours": str(rng.choice((30, 40, 50, 60)) - 10 * _t(tier)),
        "noise_cancelling": "active" if anc else "none",
        "driver_mm": str(rng.choice((30, 40, 40, 50))),
        "weight_g": str(rng.randint(220, 320)),
        "foldable": rng.choice(("yes", "no")),
        "bluetooth": "5.3",
    }, (_ANC if anc else [])


def _earphones(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "connector": rng.choice(("3.5 mm", "USB-C")),
        "driver_mm": str(rng.choice((6, 8, 10))),
        "microphone": rng.choice(("yes", "no")),
        "cable_m": "1.2",
    }, []


def _speakers(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    water = rng.choice(("IPX4", "IP67", "IP67", "none"))
    return {
        "battery_hours": str(rng.randint(8, 14) + 5 * _t(tier)),
        "output_w": str(_pick(rng, tier, rng.randint(5, 12), rng.randint(16, 30), rng.randint(40, 60))),
        "water_resistance": water,
        "stereo_pairing": rng.choice(("yes", "no")),
    }, (_WATERPROOF if water == "IP67" else [])


def _laptops(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    screen = rng.choice(("13.3", "14", "14", "15.6", "16"))
    return {
        "cpu": _pick(rng, tier, rng.choice(("Intel Core i5", "AMD Ryzen 5")),
                     rng.choice(("Intel Core Ultra 5", "AMD Ryzen 7")),
                     rng.choice(("Intel Core Ultra 7", "AMD Ryzen 9"))),
        "screen_in": screen,
        "display": _pick(rng, tier, "1920x1080 IPS", "2560x1600 IPS", rng.choice(("2880x1800 OLED", "3200x2000 IPS"))),
        "weight_kg": f"{rng.uniform(1.0, 1.3) + (0.5 if float(screen) >= 15.6 else 0):.2f}",
        "battery_hours": str(rng.randint(8, 12) + 3 * _t(tier)),
        "os": rng.choice(("Windows 11", "Windows 11", "ChromeOS", "Ubuntu Linux")),
        "ports": "2x USB-C, 1x USB-A, HDMI",
    }, (["gaming", "ゲーミングpc"] if tier == "premium" and rng.random() < 0.4 else ["thin", "軽量"])


def _laptop_variants(rng: random.Random, tier: Tier, pid: str, price: float) -> tuple[list[Variant], dict[str, str]]:
    configs = _pick(rng, tier, [(8, 256, 0), (16, 512, 150)], [(16, 512, 0), (32, 1024, 300)],
                    [(32, 1024, 0), (64, 2048, 600)])
    variants = [
        Variant(id=f"{pid}-{ram}-{disk}", label=f"{ram} GB RAM / {_disk(disk)}", price=round(price + extra, 2))
        for ram, disk, extra in configs
    ]
    return variants, {"ram_gb": str(configs[0][0]), "storage_gb": str(configs[0][1])}


def _disk(gb: int) -> str:
    return f"{gb // 1024} TB" if gb >= 1024 else f"{gb} GB"


def _monitors(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "size_in": _pick(rng, tier, rng.choice(("24", "27")), "27", rng.choice(("32", "34"))),
        "resolution": _pick(rng, tier, "1920x1080", "2560x1440", "3840x2160"),
        "refresh_hz": str(rng.choice((60, 75, 144, 165))),
        "panel": _pick(rng, tier, rng.choice(("IPS", "VA")), "IPS", rng.choice(("IPS", "OLED"))),
        "ports": rng.choice(("HDMI, DisplayPort", "HDMI, DisplayPort, USB-C 65 W")),
    }, ["4k"] if tier == "premium" else []


def _keyboards(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    wireless = rng.random() < 0.6
    return {
        "layout": rng.choice(("US", "US", "JIS")),
        "switches": rng.choice(("tactile", "linear", "clicky", "low-profile")),
        "connection": "Bluetooth + 2.4 GHz" if wireless else "USB-C cable",
        "backlight": _pick(rng, tier, "none", "white", "RGB"),
    }, (["wireless", "ワイヤレスキーボード"] if wireless else ["wired"]) + ["mechanical", "メカニカル"]


def _mice(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    wireless = rng.random() < 0.75
    return {
        "dpi": str(_pick(rng, tier, 1600, 4000, rng.choice((8000, 26000)))),
        "buttons": str(rng.choice((3, 5, 6, 8))),
        "connection": "Bluetooth + 2.4 GHz" if wireless else "USB cable",
        "battery_days": str(rng.choice((30, 70, 120))) if wireless else "n/a",
    }, (["wireless", "ワイヤレスマウス"] if wireless else ["wired"])


def _tablets(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "screen_in": _pick(rng, tier, "8.7", "10.9", rng.choice(("11", "12.9"))),
        "battery_hours": str(rng.randint(10, 14)),
        "stylus_support": _pick(rng, tier, "no", "yes", "yes (included)"),
        "cellular": rng.choice(("no", "optional 5G")),
    }, []


def _storage_variants(rng: random.Random, tier: Tier, pid: str, price: float) -> tuple[list[Variant], dict[str, str]]:
    sizes = _pick(rng, tier, (64, 128), (128, 256, 512), (256, 512, 1024))
    variants = [
        Variant(id=f"{pid}-{gb}", label=_disk(gb), price=round(price + 100 * n, 2)) for n, gb in enumerate(sizes)
    ]
    return variants, {"storage_gb": str(sizes[0])}


def _smartphones(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "screen_in": rng.choice(("6.1", "6.3", "6.5", "6.7")),
        "ram_gb": str(_pick(rng, tier, 6, 8, 12)),
        "camera_mp": str(_pick(rng, tier, 50, 50, rng.choice((108, 200)))),
        "battery_mah": str(rng.randrange(4000, 5600, 100)),
        "network": "5G",
        "os": "Android 15",
        "water_resistance": _pick(rng, tier, "IP54", "IP67", "IP68"),
    }, ["5g", "android"]


def _chargers(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    watts = _pick(rng, tier, rng.choice((20, 30)), rng.choice((45, 65)), rng.choice((100, 140)))
    return {
        "watts": str(watts),
        "ports": _pick(rng, tier, "1x USB-C", "2x USB-C", "3x USB-C, 1x USB-A"),
        "gan": "yes" if tier != "budget" else "no",
    }, ["usb-c", "急速充電", "fast charging"] + (["laptop", "ノートパソコン対応"] if watts >= 65 else [])


def _cases(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "fits": rng.choice(("6.1-inch phones", "6.3-inch phones", "6.7-inch phones")),
        "material": _pick(rng, tier, "TPU", "silicone", rng.choice(("leather", "aramid fibre"))),
        "drop_protection_m": f"{rng.choice((1.2, 1.8, 2.4, 3.0))}",
        "magnetic": rng.choice(("yes", "no")),
    }, []


def _power_banks(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    capacity = _pick(rng, tier, rng.choice((5000, 10000)), rng.choice((10000, 20000)), rng.choice((20000, 26800)))
    return {
        "capacity_mah": str(capacity),
        "output_w": str(_pick(rng, tier, 20, 30, rng.choice((65, 100)))),
        "ports": rng.choice(("1x USB-C, 1x USB-A", "2x USB-C, 1x USB-A")),
        "weight_g": str(int(capacity / 55 + rng.randint(20, 60))),
    }, ["usb-c", "portable"]


def _watches(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "battery_days": str(_pick(rng, tier, rng.choice((7, 10, 14)), rng.choice((2, 5, 7)), rng.choice((2, 3, 14)))),
        "gps": _pick(rng, tier, "connected", "built-in", "built-in dual-band"),
        "water_resistance": rng.choice(("5 ATM", "5 ATM", "10 ATM")),
        "display": rng.choice(("AMOLED", "AMOLED", "LCD")),
        "heart_rate": "yes",
        "payments": _pick(rng, tier, "no", "yes", "yes"),
    }, ["fitness", "gps"] if tier != "budget" else ["fitness"]


def _watch_variants(rng: random.Random, tier: Tier, pid: str, price: float) -> tuple[list[Variant], dict[str, str]]:
    return [
        Variant(id=f"{pid}-41", label="41 mm", price=price),
        Variant(id=f"{pid}-45", label="45 mm", price=round(price + 30, 2)),
    ], {"case_mm": "41 / 45"}


def _trackers(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "battery_days": str(rng.choice((5, 7, 10, 14, 21))),
        "heart_rate": "yes",
        "gps": _pick(rng, tier, "connected", "connected", "built-in"),
        "water_resistance": "5 ATM",
        "sleep_tracking": "yes",
    }, ["fitness", "sleep", "睡眠"]


def _rings(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "battery_days": str(rng.choice((4, 5, 6, 7, 8))),
        "material": rng.choice(("titanium", "ceramic")),
        "sleep_tracking": "yes",
        "water_resistance": "10 ATM",
        "subscription": rng.choice(("none", "optional")),
    }, ["sleep", "睡眠"]


def _ring_variants(rng: random.Random, tier: Tier, pid: str, price: float) -> tuple[list[Variant], dict[str, str]]:
    return [Variant(id=f"{pid}-{s}", label=f"Size {s}", price=price) for s in range(6, 13)], {}


def _coffee(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    kind = _pick(rng, tier, rng.choice(("drip", "pour-over")), rng.choice(("drip", "capsule")), "espresso")
    return {
        "type": kind,
        "capacity_cups": str(rng.choice((1, 4, 5, 10, 12))) if kind != "espresso" else "2",
        "programmable": "yes" if tier != "budget" else "no",
        "grinder": "built-in" if tier == "premium" else "no",
    }, (["espresso", "エスプレッソ"] if kind == "espresso" else [])


def _rice(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    cups, litres = rng.choice(((3, "0.54"), (5.5, "1.0"), (5.5, "1.0"), (10, "1.8")))
    return {
        "capacity": f"{litres} L ({cups} cups)",
        "heating": _pick(rng, tier, "micom", "induction (IH)", "pressure induction (IH)"),
        "keep_warm_hours": str(rng.choice((12, 24, 40))),
        "settings": rng.choice(("white, brown, porridge", "white, brown, sushi, porridge, GABA")),
    }, (["ih"] if tier != "budget" else [])


def _blenders(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "watts": str(_pick(rng, tier, rng.choice((300, 500)), rng.choice((900, 1200)), rng.choice((1500, 1800)))),
        "capacity_l": rng.choice(("0.6", "1.5", "2.0")),
        "programs": str(_pick(rng, tier, 2, 5, 10)),
    }, ["smoothie", "スムージー"]


def _kettles(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "capacity_l": rng.choice(("0.8", "1.0", "1.2", "1.7")),
        "temperature_control": _pick(rng, tier, "no", "5 presets", "1 °C steps"),
        "gooseneck": rng.choice(("yes", "no")),
        "watts": str(rng.choice((1000, 1200, 1250))),
    }, []


def _knives(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "blade_cm": str(rng.choice((16.5, 18, 21, 24))),
        "steel": _pick(rng, tier, "German stainless", "AUS-8", rng.choice(("VG-10 Damascus", "SG2"))),
        "style": rng.choice(("gyuto", "santoku", "nakiri", "chef's")),
    }, ["santoku", "三徳包丁", "牛刀"]


def _air_fryers(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "capacity_l": str(_pick(rng, tier, rng.choice((2.5, 3.5)), rng.choice((4.5, 5.5)), rng.choice((7.6, 9.0)))),
        "watts": str(rng.choice((1200, 1500, 1700))),
        "baskets": _pick(rng, tier, "1", "1", "2"),
        "presets": str(rng.choice((4, 6, 8, 12))),
    }, []


def _vacuums(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    kind = rng.choice(("robot", "stick", "robot", "cordless stick"))
    return {
        "type": kind,
        "suction_pa": str(_pick(rng, tier, 2500, 5000, 8000)),
        "runtime_min": str(rng.choice((45, 60, 90, 120))),
        "mop": "yes" if kind == "robot" and tier != "budget" else "no",
        "dust_bin_ml": str(rng.choice((300, 450, 600))),
    }, (["robot vacuum", "ロボット掃除機"] if kind == "robot" else ["cordless", "コードレス掃除機"])


def _purifiers(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "room_m2": str(_pick(rng, tier, 20, 40, 70)),
        "filter": "HEPA H13",
        "noise_db_min": str(rng.randint(19, 28)),
        "humidifier": "yes" if tier == "premium" and rng.random() < 0.5 else "no",
    }, ["hepa", "花粉", "pollen"]


def _lamps(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "lumens": str(_pick(rng, tier, 400, 700, 1000)),
        "color_temperature_k": "2700-6500",
        "dimmable": "yes",
        "usb_charging": rng.choice(("yes", "no")),
    }, ["led"]


def _pillows(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "size_cm": rng.choice(("50 x 70", "43 x 63", "60 x 40")),
        "fill": _pick(rng, tier, "polyester", "memory foam", rng.choice(("down", "buckwheat hulls"))),
        "washable_cover": "yes",
    }, []


def _plugs(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {
        "max_w": str(rng.choice((1500, 1800))),
        "works_with": "Matter, Alexa, Google Home",
        "energy_monitoring": "yes" if tier != "budget" else "no",
        "pack": str(_pick(rng, tier, 1, 2, 4)),
    }, ["matter", "wifi", "スマートホーム"]


def _running(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    surface = rng.choice(("road", "road", "trail"))
    return {
        "surface": surface,
        "drop_mm": str(rng.choice((4, 6, 8, 10))),
        "weight_g": str(rng.randint(210, 300)),
        "cushioning": _pick(rng, tier, "moderate", "high", "max (carbon plate)"),
    }, (["trail running", "トレイルランニング"] if surface == "trail" else ["marathon", "マラソン"])


def _sneakers(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"upper": rng.choice(("canvas", "leather", "knit", "suede")), "sole": "rubber",
            "style": rng.choice(("low-top", "high-top"))}, []


def _boots(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    waterproof = tier != "budget" or rng.random() < 0.5
    return {
        "upper": rng.choice(("leather", "nubuck", "synthetic")),
        "waterproof": "yes" if waterproof else "no",
        "height": rng.choice(("ankle", "mid", "high")),
    }, ([*_WATERPROOF, "hiking", "登山靴"] if waterproof else [])


def _sandals(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"strap": rng.choice(("adjustable", "slide", "thong")), "footbed": rng.choice(("cork", "foam"))}, []


def _shoe_variants(rng: random.Random, tier: Tier, pid: str, price: float) -> tuple[list[Variant], dict[str, str]]:
    return [Variant(id=f"{pid}-us{s}", label=f"US {s} ({s + 18} cm)", price=price) for s in range(6, 13)], {
        "sizes": "US 6-12"
    }


def _tees(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"material": _pick(rng, tier, "100% cotton", "organic cotton", "merino wool"),
            "fit": rng.choice(("regular", "relaxed", "slim"))}, []


def _jackets(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    waterproof = rng.random() < 0.6
    return {
        "shell": rng.choice(("nylon", "polyester", "recycled polyester")),
        "insulation": _pick(rng, tier, "none", "synthetic", "800-fill down"),
        "waterproof": "yes" if waterproof else "no",
        "packable": rng.choice(("yes", "no")),
    }, ([*_WATERPROOF, "rain jacket", "レインジャケット"] if waterproof else []) + (
        ["down jacket", "ダウンジャケット"] if tier == "premium" else [])


def _jeans(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"fit": rng.choice(("slim", "straight", "relaxed", "tapered")),
            "denim_oz": str(rng.choice((11, 12.5, 14))), "stretch": rng.choice(("yes", "no"))}, []


def _hoodies(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"material": rng.choice(("cotton fleece", "french terry")), "zip": rng.choice(("full", "none"))}, []


def _socks(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"pack": str(rng.choice((3, 5, 6))), "material": rng.choice(("cotton blend", "merino blend")),
            "cushioned": rng.choice(("yes", "no"))}, []


def _size_variants(rng: random.Random, tier: Tier, pid: str, price: float) -> tuple[list[Variant], dict[str, str]]:
    return [Variant(id=f"{pid}-{s.lower()}", label=s, price=price) for s in ("S", "M", "L", "XL")], {}


def _waist_variants(rng: random.Random, tier: Tier, pid: str, price: float) -> tuple[list[Variant], dict[str, str]]:
    return [Variant(id=f"{pid}-w{w}", label=f"W{w} L32", price=price) for w in range(28, 38, 2)], {}


def _tents(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    people = rng.choice((1, 2, 2, 3, 4))
    return {"capacity_people": str(people), "weight_kg": f"{0.9 + people * rng.uniform(0.4, 0.9):.1f}",
            "season": _pick(rng, tier, "3-season", "3-season", rng.choice(("3-season", "4-season"))),
            "setup": rng.choice(("freestanding", "semi-freestanding"))}, ["camping"]


def _sleeping_bags(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"comfort_c": str(_pick(rng, tier, 10, 3, -5)),
            "fill": _pick(rng, tier, "synthetic", "synthetic", "750-fill down"),
            "weight_g": str(rng.randint(700, 1600))}, ["camping"]


def _backpacks(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    litres = rng.choice((20, 28, 35, 45, 60))
    return {"capacity_l": str(litres), "laptop_sleeve": "yes" if litres <= 35 else "no",
            "water_resistant": rng.choice(("yes", "no")), "weight_g": str(rng.randint(600, 1800))}, (
        ["hiking", "登山"] if litres >= 35 else ["commute", "通勤"])


def _bottles(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"capacity_ml": str(rng.choice((500, 750, 1000))),
            "insulated": _pick(rng, tier, "no", "yes", "yes"),
            "material": _pick(rng, tier, "Tritan plastic", "stainless steel", "titanium")}, []


def _headlamps(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"lumens": str(_pick(rng, tier, 250, 450, 900)), "battery": rng.choice(("AAA x3", "USB-C rechargeable")),
            "water_resistance": "IPX4"}, []


def _stoves(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"fuel": rng.choice(("isobutane canister", "alcohol", "wood")), "output_kw": f"{rng.uniform(1.5, 3.0):.1f}",
            "weight_g": str(rng.randint(80, 450))}, ["camping"]


def _moisturizers(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"volume_ml": str(rng.choice((30, 50, 100))),
            "skin_type": rng.choice(("dry", "sensitive", "combination", "all")),
            "fragrance_free": rng.choice(("yes", "no"))}, ["skincare", "スキンケア"]


def _sunscreen(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"spf": rng.choice(("30", "50", "50+")), "pa": rng.choice(("PA+++", "PA++++")),
            "volume_ml": str(rng.choice((40, 50, 90))), "water_resistant": rng.choice(("yes", "no"))}, ["spf", "uv"]


def _dryers(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"watts": str(rng.choice((1200, 1400, 1600))), "ionic": "yes" if tier != "budget" else "no",
            "weight_g": str(rng.randint(300, 650)),
            "voltage": rng.choice(("100-120 V", "100-240 V (travel)"))}, []


def _shavers(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"type": rng.choice(("foil", "rotary")), "wet_dry": "yes" if tier != "budget" else "no",
            "battery_min": str(_pick(rng, tier, 40, 60, 90))}, []


def _shampoo(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"volume_ml": str(rng.choice((250, 400, 500))),
            "hair_type": rng.choice(("all", "dry", "oily", "color-treated")),
            "silicone_free": rng.choice(("yes", "no"))}, ["haircare", "ヘアケア"]


def _toothbrushes(rng: random.Random, tier: Tier) -> tuple[dict[str, str], list[str]]:
    return {"type": rng.choice(("sonic", "oscillating")), "modes": str(_pick(rng, tier, 1, 3, 5)),
            "battery_days": str(rng.choice((14, 21, 30)))}, []


# --- the lines -------------------------------------------------------------------------------

_AUDIO = ("Kumo Audio", "Auralis", "Soundforge", "Brightwave", "Tessel", "Nordhorn")
_COMPUTING = ("Corvid", "Lumen", "Tachyon", "Halcyon", "Orbitek", "Northgate")
_MOBILE = ("Aster", "Kairo", "Nova Mobile", "Voltix", "Shellwise", "Pixelline")
_WEAR = ("Pulsewear", "Kinetic", "Aeon", "Stride Labs")
_KITCHEN = ("Hearth & Co.", "Kitsune Kitchen", "Brewcraft", "Copperleaf", "Tanuki Home")
_HOME = ("Nimbus", "Lattice Home", "Hikari", "Dwell & Co.")
_SHOES = ("Stridewell", "Pacer", "Ridgeline", "Tanaka Footwear", "Velo")
_APPAREL = ("Norththread", "Mori Apparel", "Tidewater", "Basics Lab")
_OUTDOOR = ("Summit Gear", "Trailhead", "Kogen Outdoor", "Ridgeline")
_BEAUTY = ("Hada Lab", "Lumiere Skin", "Aoi Beauty", "Groomline")


def _p(budget: tuple[float, float], mid: tuple[float, float], premium: tuple[float, float]) -> dict[Tier, tuple[float, float]]:
    return {"budget": budget, "mid": mid, "premium": premium}


_LINES: tuple[_Line, ...] = (
    # audio
    _Line("audio", "earbuds", "Wireless Earbuds", "ワイヤレスイヤホン",
          ("ワイヤレスイヤホン", "イヤホン", "完全ワイヤレスイヤホン", "earbuds", "wireless", "bluetooth", "true wireless"),
          _AUDIO, ("Aria", "Pulse", "Flow", "Nano"), _p((19, 59), (69, 149), (169, 299)), _earbuds, 16),
    _Line("audio", "headphones", "Wireless Headphones", "ワイヤレスヘッドホン",
          ("ヘッドホン", "ワイヤレスヘッドホン", "headphones", "over-ear", "wireless", "bluetooth"),
          _AUDIO, ("Studio", "Voyage"), _p((39, 79), (99, 199), (249, 449)), _headphones, 9),
    _Line("audio", "earphones", "Wired Earphones", "有線イヤホン",
          ("イヤホン", "有線イヤホン", "earphones", "wired", "in-ear"),
          _AUDIO, ("Cable", "Classic"), _p((9, 25), (29, 59), (79, 149)), _earphones, 5),
    _Line("audio", "speakers", "Bluetooth Speaker", "ブルートゥーススピーカー",
          ("スピーカー", "ブルートゥーススピーカー", "speaker", "bluetooth speaker", "portable speaker", "wireless"),
          _AUDIO, ("Boom", "Cube"), _p((25, 49), (59, 129), (149, 299)), _speakers, 8),
    # computers
    _Line("computers", "laptops", "Laptop", "ノートパソコン",
          ("ノートパソコン", "ノートpc", "パソコン", "laptop", "notebook", "computer"),
          _COMPUTING, ("Air", "Book", "Flex"), _p((399, 649), (749, 1199), (1399, 2199)), _laptops, 14,
          _laptop_variants),
    _Line("computers", "monitors", "Monitor", "モニター",
          ("モニター", "ディスプレイ", "monitor", "display", "screen"),
          _COMPUTING, ("View", "Vista"), _p((119, 179), (229, 399), (499, 999)), _monitors, 7),
    _Line("computers", "keyboards", "Keyboard", "キーボード",
          ("キーボード", "keyboard"), _COMPUTING, ("Keys", "Type"), _p((29, 59), (69, 129), (149, 229)), _keyboards, 7),
    _Line("computers", "mice", "Mouse", "マウス",
          ("マウス", "mouse"), _COMPUTING, ("Glide", "Point"), _p((12, 29), (39, 79), (89, 149)), _mice, 7),
    _Line("computers", "tablets", "Tablet", "タブレット",
          ("タブレット", "tablet"), _COMPUTING, ("Slate", "Tab"), _p((129, 229), (329, 599), (799, 1199)), _tablets, 5,
          _storage_variants),
    # phones
    _Line("phones", "smartphones", "Smartphone", "スマートフォン",
          ("スマートフォン", "スマホ", "携帯電話", "smartphone", "phone", "mobile"),
          (*_MOBILE[:3], "Pixelline"), ("One", "Edge", "Neo", "Fold"), _p((179, 349), (449, 699), (899, 1399)),
          _smartphones, 14, _storage_variants),
    _Line("phones", "chargers", "USB-C Charger", "充電器",
          ("充電器", "acアダプター", "charger", "usb-c charger", "adapter"),
          (*_MOBILE[3:], "Aster"), ("Volt", "Charge"), _p((12, 25), (29, 49), (59, 99)), _chargers, 7),
    _Line("phones", "phone cases", "Phone Case", "スマホケース",
          ("スマホケース", "ケース", "phone case", "case", "cover"),
          ("Shellwise", "Kairo", "Aster"), ("Guard", "Slim", "Armor"), _p((9, 19), (22, 39), (45, 79)), _cases, 7),
    _Line("phones", "power banks", "Power Bank", "モバイルバッテリー",
          ("モバイルバッテリー", "power bank", "portable charger", "battery pack"),
          ("Voltix", "Nova Mobile", "Kairo"), ("Cell", "Reserve"), _p((19, 35), (39, 69), (79, 149)), _power_banks, 6),
    # wearables
    _Line("wearables", "smartwatches", "Smartwatch", "スマートウォッチ",
          ("スマートウォッチ", "腕時計", "smartwatch", "watch"),
          _WEAR, ("Sense", "Orbit", "Trek", "Active"), _p((79, 149), (199, 349), (399, 799)), _watches, 14,
          _watch_variants),
    _Line("wearables", "fitness trackers", "Fitness Tracker", "活動量計",
          ("活動量計", "フィットネストラッカー", "fitness tracker", "activity tracker", "band"),
          _WEAR, ("Band", "Fit", "Move"), _p((25, 49), (59, 99), (119, 179)), _trackers, 10),
    _Line("wearables", "smart rings", "Smart Ring", "スマートリング",
          ("スマートリング", "指輪", "smart ring", "ring"),
          _WEAR, ("Loop", "Halo"), _p((149, 199), (229, 299), (329, 449)), _rings, 6, _ring_variants),
    # kitchen
    _Line("kitchen", "coffee makers", "Coffee Maker", "コーヒーメーカー",
          ("コーヒーメーカー", "コーヒー", "coffee maker", "coffee machine", "coffee"),
          _KITCHEN, ("Barista", "Morning"), _p((29, 69), (89, 199), (299, 799)), _coffee, 7),
    _Line("kitchen", "rice cookers", "Rice Cooker", "炊飯器",
          ("炊飯器", "rice cooker", "rice"), _KITCHEN, ("Gohan", "Kama"), _p((39, 79), (99, 199), (249, 499)), _rice, 7),
    _Line("kitchen", "blenders", "Blender", "ミキサー",
          ("ミキサー", "ブレンダー", "blender"), _KITCHEN, ("Whirl", "Vortex"), _p((25, 49), (69, 129), (179, 399)),
          _blenders, 6),
    _Line("kitchen", "kettles", "Electric Kettle", "電気ケトル",
          ("電気ケトル", "ケトル", "kettle", "electric kettle"), _KITCHEN, ("Boil", "Pour"),
          _p((19, 35), (45, 79), (99, 169)), _kettles, 6),
    _Line("kitchen", "knives", "Chef Knife", "包丁",
          ("包丁", "ナイフ", "knife", "chef knife", "kitchen knife"), _KITCHEN, ("Edge", "Hamono"),
          _p((19, 39), (59, 119), (149, 349)), _knives, 6),
    _Line("kitchen", "air fryers", "Air Fryer", "ノンフライヤー",
          ("ノンフライヤー", "エアフライヤー", "air fryer"), _KITCHEN, ("Crisp", "Airy"),
          _p((39, 69), (79, 149), (169, 299)), _air_fryers, 6),
    # home
    _Line("home", "vacuums", "Vacuum Cleaner", "掃除機",
          ("掃除機", "クリーナー", "vacuum", "vacuum cleaner"), _HOME, ("Sweep", "Dust"),
          _p((79, 179), (199, 449), (549, 1099)), _vacuums, 8),
    _Line("home", "air purifiers", "Air Purifier", "空気清浄機",
          ("空気清浄機", "air purifier", "purifier"), _HOME, ("Breeze", "Clear"),
          _p((59, 119), (149, 299), (349, 699)), _purifiers, 7),
    _Line("home", "desk lamps", "LED Desk Lamp", "デスクライト",
          ("デスクライト", "照明", "ライト", "desk lamp", "lamp", "light"), _HOME, ("Glow", "Beam"),
          _p((19, 39), (45, 89), (99, 199)), _lamps, 6),
    _Line("home", "pillows", "Pillow", "枕",
          ("枕", "まくら", "寝具", "pillow", "bedding"), _HOME, ("Rest", "Cloud"),
          _p((19, 39), (49, 89), (99, 179)), _pillows, 6),
    _Line("home", "smart plugs", "Smart Plug", "スマートプラグ",
          ("スマートプラグ", "smart plug", "smart home", "plug"), _HOME, ("Switch", "Link"),
          _p((9, 19), (22, 39), (45, 69)), _plugs, 5),
    # shoes
    _Line("shoes", "running shoes", "Running Shoes", "ランニングシューズ",
          ("ランニングシューズ", "シューズ", "スニーカー", "running shoes", "running", "shoes"),
          _SHOES, ("Tempo", "Glide", "Zoom"), _p((49, 89), (99, 149), (169, 259)), _running, 12, _shoe_variants),
    _Line("shoes", "sneakers", "Sneakers", "スニーカー",
          ("スニーカー", "靴", "sneakers", "shoes", "casual shoes"), _SHOES, ("Court", "Street"),
          _p((39, 69), (79, 129), (149, 229)), _sneakers, 9, _shoe_variants),
    _Line("shoes", "boots", "Boots", "ブーツ",
          ("ブーツ", "靴", "boots", "shoes"), _SHOES, ("Summit", "Urban"),
          _p((59, 99), (119, 189), (219, 349)), _boots, 7, _shoe_variants),
    _Line("shoes", "sandals", "Sandals", "サンダル",
          ("サンダル", "sandals", "slides"), _SHOES[:3], ("Beach", "Trail"),
          _p((19, 35), (39, 69), (79, 129)), _sandals, 5, _shoe_variants),
    # apparel
    _Line("apparel", "t-shirts", "T-Shirt", "Tシャツ",
          ("tシャツ", "シャツ", "t-shirt", "tee", "shirt"), _APPAREL, ("Everyday", "Essential"),
          _p((12, 19), (22, 35), (45, 79)), _tees, 8, _size_variants),
    _Line("apparel", "jackets", "Jacket", "ジャケット",
          ("ジャケット", "アウター", "jacket", "coat"), _APPAREL, ("Storm", "City"),
          _p((49, 89), (99, 179), (229, 449)), _jackets, 8, _size_variants),
    _Line("apparel", "jeans", "Jeans", "ジーンズ",
          ("ジーンズ", "デニム", "jeans", "denim", "pants"), _APPAREL, ("Indigo", "Selvedge"),
          _p((29, 49), (59, 99), (119, 229)), _jeans, 6, _waist_variants),
    _Line("apparel", "hoodies", "Hoodie", "パーカー",
          ("パーカー", "フーディー", "hoodie", "sweatshirt"), _APPAREL, ("Lounge", "Campus"),
          _p((25, 39), (45, 79), (89, 149)), _hoodies, 6, _size_variants),
    _Line("apparel", "socks", "Socks", "靴下",
          ("靴下", "ソックス", "socks"), _APPAREL, ("Comfort", "Trail"), _p((8, 14), (15, 24), (25, 39)), _socks, 5),
    # outdoor
    _Line("outdoor", "tents", "Tent", "テント",
          ("テント", "キャンプ", "tent", "camping"), _OUTDOOR, ("Dome", "Ridge"),
          _p((59, 129), (149, 299), (349, 699)), _tents, 6),
    _Line("outdoor", "sleeping bags", "Sleeping Bag", "寝袋",
          ("寝袋", "シュラフ", "sleeping bag"), _OUTDOOR, ("Nest", "Cocoon"),
          _p((35, 69), (89, 179), (229, 449)), _sleeping_bags, 6),
    _Line("outdoor", "backpacks", "Backpack", "バックパック",
          ("バックパック", "リュック", "backpack", "rucksack", "bag"), _OUTDOOR, ("Trek", "Daypack"),
          _p((29, 59), (69, 139), (159, 299)), _backpacks, 7),
    _Line("outdoor", "water bottles", "Water Bottle", "水筒",
          ("水筒", "ボトル", "water bottle", "bottle"), _OUTDOOR, ("Flask", "Hydro"),
          _p((9, 19), (22, 39), (45, 79)), _bottles, 6),
    _Line("outdoor", "headlamps", "Headlamp", "ヘッドランプ",
          ("ヘッドランプ", "ヘッドライト", "headlamp", "flashlight"), _OUTDOOR, ("Beam", "Night"),
          _p((12, 24), (29, 49), (59, 99)), _headlamps, 5),
    _Line("outdoor", "camping stoves", "Camping Stove", "キャンプ用バーナー",
          ("バーナー", "シングルバーナー", "camping stove", "stove", "camping"), _OUTDOOR, ("Flame", "Pocket"),
          _p((19, 39), (45, 89), (99, 179)), _stoves, 4),
    # beauty
    _Line("beauty", "moisturizers", "Moisturizer", "保湿クリーム",
          ("保湿クリーム", "化粧水", "クリーム", "moisturizer", "cream", "face cream"), _BEAUTY, ("Hydra", "Calm"),
          _p((9, 19), (22, 45), (55, 120)), _moisturizers, 6),
    _Line("beauty", "sunscreen", "Sunscreen", "日焼け止め",
          ("日焼け止め", "サンスクリーン", "sunscreen", "sunblock"), _BEAUTY, ("Shield", "Daylight"),
          _p((8, 15), (16, 29), (32, 55)), _sunscreen, 6),
    _Line("beauty", "hair dryers", "Hair Dryer", "ドライヤー",
          ("ドライヤー", "ヘアドライヤー", "hair dryer", "dryer"), _BEAUTY, ("Airflow", "Salon"),
          _p((19, 39), (49, 119), (149, 429)), _dryers, 6),
    _Line("beauty", "shavers", "Electric Shaver", "電気シェーバー",
          ("電気シェーバー", "シェーバー", "髭剃り", "shaver", "electric shaver", "razor"), _BEAUTY, ("Smooth", "Blade"),
          _p((29, 59), (69, 149), (179, 329)), _shavers, 6),
    _Line("beauty", "shampoo", "Shampoo", "シャンプー",
          ("シャンプー", "shampoo", "hair care"), _BEAUTY, ("Silk", "Pure"), _p((6, 12), (14, 24), (28, 48)), _shampoo, 5),
    _Line("beauty", "toothbrushes", "Electric Toothbrush", "電動歯ブラシ",
          ("電動歯ブラシ", "歯ブラシ", "electric toothbrush", "toothbrush"), _BEAUTY, ("Sonic", "Bright"),
          _p((19, 39), (49, 99), (119, 249)), _toothbrushes, 5),
)


def _price(rng: random.Random, low: float, high: float) -> float:
    """A shelf price: whole dollars minus a cent under $100, tens minus a cent above."""
    value = rng.uniform(low, high)
    if value < 100:
        return max(round(value) - 0.01, 0.99)
    return round(value / 10) * 10 - 0.01


def _slug(text: str) -> str:
    return "-".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split())


def _fulfillment(rng: random.Random, price: float, tier: Tier) -> list[FulfillmentOption]:
    options = [FulfillmentOption(kind="ship", days=rng.randint(1, 2) if tier == "premium" else rng.randint(2, 5),
                                 fee=0.0 if price >= 35 else 4.99)]
    if rng.random() < 0.65:
        options.append(FulfillmentOption(kind="pickup", days=0 if rng.random() < 0.8 else 1, fee=0.0))
    if rng.random() < 0.35 and price >= 15:
        options.append(FulfillmentOption(kind="same_day", days=0, fee=7.99))
    return options


def _products(rng: random.Random) -> list[Product]:
    products: list[Product] = []
    for line in _LINES:
        combos = [(b, m) for m in line.models for b in line.brands]
        if len(combos) < line.count:
            raise AssertionError(f"{line.sub}: {len(combos)} brand/model pairs for {line.count} products")
        for n in range(line.count):
            tier = _TIERS[n % len(_TIERS)]
            brand, model = combos[n]
            generation = rng.choice(_GENERATIONS[tier])
            title = f"{brand} {model}{' ' + generation if generation else ''}"
            pid = f"{_slug(line.sub)}-{n + 1:03d}"
            price = _price(rng, *line.prices[tier])
            specs, extra = line.specs(rng, tier)
            variants: list[Variant] = []
            if line.variants is not None:
                variants, more = line.variants(rng, tier, pid, price)
                specs = {**more, **specs}
            rating = round(rng.uniform(3.4, 4.5) + 0.2 * _t(tier), 1)
            keywords = list(dict.fromkeys([*line.keywords, *extra]))
            highlights = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in list(specs.items())[:4])
            products.append(Product(
                id=pid,
                name=f"{title} {line.noun}",
                name_ja=f"{title} {line.noun_ja}",
                brand=brand,
                category=line.category,
                subcategory=line.sub,
                keywords=keywords,
                price=price,
                rating=min(rating, 5.0),
                review_count=rng.randint(3, 2500),
                description=f"{_TIER_BLURB[tier]} {line.noun.lower()} from {brand}. {highlights}.",
                specs=specs,
                variants=variants,
                fulfillment=_fulfillment(rng, price, tier),
            ))
    return products


_TIER_BLURB = {"budget": "An affordable", "mid": "A well-rounded", "premium": "A premium"}

# Real neighbourhoods: (id, name, city, address, latitude, longitude, hours, time zone).
_STORES: tuple[tuple[str, str, str, str, float, float, str, str], ...] = (
    ("tokyo-shibuya", "Concierge Shop Shibuya", "Tokyo", "Dogenzaka, Shibuya-ku, Tokyo", 35.6595, 139.7005,
     "10:00-21:00", "Asia/Tokyo"),
    ("tokyo-shinjuku", "Concierge Shop Shinjuku", "Tokyo", "Shinjuku 3-chome, Shinjuku-ku, Tokyo", 35.6909, 139.7003,
     "10:00-21:00", "Asia/Tokyo"),
    ("tokyo-ginza", "Concierge Shop Ginza", "Tokyo", "Ginza 4-chome, Chuo-ku, Tokyo", 35.6717, 139.7650,
     "11:00-20:00", "Asia/Tokyo"),
    ("tokyo-akihabara", "Concierge Shop Akihabara", "Tokyo", "Sotokanda 1-chome, Chiyoda-ku, Tokyo", 35.6984,
     139.7731, "10:00-22:00", "Asia/Tokyo"),
    ("tokyo-ikebukuro", "Concierge Shop Ikebukuro", "Tokyo", "Higashi-Ikebukuro 1-chome, Toshima-ku, Tokyo", 35.7295,
     139.7109, "10:00-21:00", "Asia/Tokyo"),
    ("osaka-umeda", "Concierge Shop Umeda", "Osaka", "Kakuda-cho, Kita-ku, Osaka", 34.7025, 135.4959,
     "10:00-21:00", "Asia/Tokyo"),
    ("osaka-namba", "Concierge Shop Namba", "Osaka", "Namba 5-chome, Chuo-ku, Osaka", 34.6659, 135.5013,
     "10:00-21:00", "Asia/Tokyo"),
    ("osaka-shinsaibashi", "Concierge Shop Shinsaibashi", "Osaka", "Shinsaibashi-suji 1-chome, Chuo-ku, Osaka",
     34.6748, 135.5012, "11:00-20:00", "Asia/Tokyo"),
    ("osaka-tennoji", "Concierge Shop Tennoji", "Osaka", "Abenosuji 1-chome, Abeno-ku, Osaka", 34.6466, 135.5133,
     "10:00-20:00", "Asia/Tokyo"),
    ("nyc-herald-square", "Concierge Shop Herald Square", "New York", "W 34th St, Manhattan, NY", 40.7506, -73.9890,
     "09:00-21:00", "America/New_York"),
    ("nyc-soho", "Concierge Shop SoHo", "New York", "Broadway & Prince St, Manhattan, NY", 40.7243, -73.9975,
     "10:00-20:00", "America/New_York"),
    ("nyc-upper-west", "Concierge Shop Upper West Side", "New York", "Broadway & W 72nd St, Manhattan, NY", 40.7781,
     -73.9818, "10:00-20:00", "America/New_York"),
    ("nyc-brooklyn", "Concierge Shop Downtown Brooklyn", "New York", "Fulton St, Brooklyn, NY", 40.6903, -73.9860,
     "10:00-20:00", "America/New_York"),
    ("sf-union-square", "Concierge Shop Union Square", "San Francisco", "Stockton St, San Francisco, CA", 37.7880,
     -122.4075, "10:00-20:00", "America/Los_Angeles"),
    ("sf-mission", "Concierge Shop Mission", "San Francisco", "Valencia St, San Francisco, CA", 37.7599, -122.4214,
     "11:00-19:00", "America/Los_Angeles"),
    ("sf-marina", "Concierge Shop Marina", "San Francisco", "Chestnut St, San Francisco, CA", 37.8003, -122.4364,
     "10:00-19:00", "America/Los_Angeles"),
    ("sf-soma", "Concierge Shop SoMa", "San Francisco", "4th St, San Francisco, CA", 37.7785, -122.4056,
     "10:00-20:00", "America/Los_Angeles"),
    ("london-oxford-street", "Concierge Shop Oxford Street", "London", "Oxford St, London W1", 51.5152, -0.1419,
     "09:00-21:00", "Europe/London"),
    ("london-covent-garden", "Concierge Shop Covent Garden", "London", "Long Acre, London WC2", 51.5117, -0.1240,
     "10:00-20:00", "Europe/London"),
    ("london-shoreditch", "Concierge Shop Shoreditch", "London", "Shoreditch High St, London E1", 51.5265, -0.0786,
     "10:00-19:00", "Europe/London"),
    ("london-kensington", "Concierge Shop Kensington", "London", "Kensington High St, London W8", 51.5010, -0.1925,
     "10:00-20:00", "Europe/London"),
)

# Fixed dates: expiry is compared with the caller's `today`, so the demo never drifts with the clock.
_COUPONS = (
    Coupon(code="WELCOME10", description="10% off your first order", kind="percent", value=10, min_spend=0,
           expires=date(2030, 12, 31)),
    Coupon(code="SAVE20", description="$20 off orders of $100 or more", kind="amount", value=20, min_spend=100,
           expires=date(2027, 6, 30)),
    Coupon(code="AUDIO15", description="15% off audio when you spend $50 on audio", kind="percent", value=15,
           min_spend=50, categories=["audio"], expires=date(2027, 12, 31)),
    Coupon(code="HOME25", description="$25 off kitchen and home over $150", kind="amount", value=25, min_spend=150,
           categories=["kitchen", "home"], expires=date(2026, 12, 31)),
    Coupon(code="SHOES30", description="30% off shoes", kind="percent", value=30, min_spend=0, categories=["shoes"],
           expires=date(2026, 6, 30)),
    Coupon(code="TECH50", description="$50 off computers and phones over $500", kind="amount", value=50,
           min_spend=500, categories=["computers", "phones"], expires=date(2099, 12, 31)),
    Coupon(code="NEWYEAR2025", description="New Year 2025: 20% off everything", kind="percent", value=20, min_spend=0,
           expires=date(2025, 12, 31)),
)


def _stock(rng: random.Random, products: list[Product], stores: list[Store]) -> list[StockRow]:
    """Store stock for products that can be picked up or delivered same-day: most stores carry
    each, and about one carried line in five is sold out."""
    rows: list[StockRow] = []
    for product in products:
        if not any(f.kind in ("pickup", "same_day") for f in product.fulfillment):
            continue
        skus = [v.id for v in product.variants] or [""]
        for store in stores:
            if rng.random() >= 0.7:
                continue
            for sku in skus:
                quantity = 0 if rng.random() < 0.2 else rng.randint(1, 25)
                rows.append(StockRow(store_id=store.id, product_id=product.id, variant_id=sku, quantity=quantity))
    return rows


def demo_catalog(seed: int = 7) -> DemoCatalog:
    """The demo catalog for `seed`: the same products, stores, stock and coupons on every call."""
    rng = random.Random(seed)
    products = _products(rng)
    missing = set(CATEGORIES) - {p.category for p in products}
    if missing:
        raise AssertionError(f"demo catalog lacks categories: {sorted(missing)}")
    stores = [
        Store(id=sid, name=name, city=city, address=address, latitude=lat, longitude=lon, hours=hours, timezone=tz)
        for sid, name, city, address, lat, lon, hours, tz in _STORES
    ]
    return DemoCatalog(
        products=products, stores=stores, stock=_stock(rng, products, stores),
        coupons=[c.model_copy(deep=True) for c in _COUPONS],
    )


async def seed_catalog(store: CatalogStore, catalog: DemoCatalog | None = None) -> int:
    """Load the demo catalog (idempotent) and mark the store seeded; the number of rows changed."""
    catalog = catalog or demo_catalog()
    changed = await store.upsert_products(catalog.products)
    changed += await store.upsert_stores(catalog.stores)
    changed += await store.upsert_stock(catalog.stock)
    changed += await store.upsert_coupons(catalog.coupons)
    await store.mark_seeded()
    return changed
