"""What /shop says to the shopper, in the language of their request (Japanese in, Japanese out;
English otherwise): notes, clarifying questions, confirmations, card labels, the offline model's
answers and the tools' refusals.

The language is picked once per turn (`ShopAgent.turn_input`, `bot.locale.language_of`) and kept
in the tool context; `language(context)` reads it back. A tool refusal carries its key and values
(`refusal`), so its English text is what the model reads and the offline answer can retell it in
Japanese."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bot.locale import Language

TEXTS: dict[str, dict[Language, str]] = {
    # --- notes before an answer ---------------------------------------------------------------
    "store_saved": {"en": "I'll use {store} as your store.", "ja": "{store}をご利用の店舗として登録しました。"},
    "city_saved": {"en": "I'll look for stores in {city} from now on.", "ja": "これからは{city}の店舗を探します。"},
    "earlier_change_dropped": {"en": "I did not make the earlier cart change.",
                               "ja": "先ほどのカートの変更は行っていません。"},
    # --- clarifying questions -------------------------------------------------------------------
    "which_product": {"en": "Which product do you mean? Search first, e.g. `/shop wireless earbuds under $100`.",
                      "ja": "どの商品のことですか？ まず商品を探してください。例: `/shop ワイヤレスイヤホン 1万円以下`"},
    "which_of_shown": {"en": "I showed {count} product(s); which one do you mean (1–{count})?",
                       "ja": "表示した商品は{count}件です。どれのことですか（1〜{count}）？"},
    "compared_to_what": {"en": "Cheaper than which? Search for products first.",
                         "ja": "どの商品と比べますか？ まず商品を探してください。"},
    "tie": {"en": "{first} and {second} tie on that; which one do you mean?",
            "ja": "{first}と{second}はその点で同じです。どちらのことですか？"},
    "which_one": {"en": "Which one do you mean? {names}", "ja": "どれのことですか？ {names}"},
    "ranks_first": {"en": "Of the {count} shown, {name} has the {word}: {spec} {value}.",
                    "ja": "表示した{count}件のうち、{spec}が{word}なのは{name}です（{value}）。"},
    "rank_unlisted": {"en": "None of the {count} products shown lists that.",
                      "ja": "表示した{count}件の商品には、その項目の記載がありません。"},
    "feature_some": {"en": "{feature}: {n} of the {count} shown — {products}.",
                     "ja": "{feature}: 表示した{count}件のうち{n}件 — {products}。"},
    "feature_none": {"en": "{feature}: none of the {count} shown.",
                     "ja": "{feature}: 表示した{count}件にはありません。"},
    "most": {"en": "most", "ja": "最大"},
    "least": {"en": "least", "ja": "最小"},
    "compare_with_which": {"en": "Which product should I compare it with? Name it, or search first.",
                           "ja": "どの商品と比較しますか？ 商品名を挙げるか、先に商品を探してください。"},
    "compare_with_what": {"en": "Which product should I compare it with (1–{count})?",
                          "ja": "どの商品と比較しますか（1〜{count}）？"},
    "unknown_product_id": {"en": "I can't find a product with the id {id}. Search for it by name, e.g. `/shop sony earbuds`.",
                           "ja": "ID {id} の商品は見つかりません。商品名で探してください。例: `/shop ワイヤレスイヤホン`"},
    "which_coupon": {"en": "Which coupon code should I apply? For example: `/shop apply SAVE10`.",
                     "ja": "どのクーポンコードを使いますか？ 例: `/shop クーポン SAVE10 を使って`"},
    "unknown_coupon": {"en": "I don't know the coupon `{code}`. Ask `/shop coupons for this` to see the ones that apply.",
                       "ja": "クーポン `{code}` は見つかりません。`/shop この商品のクーポンは？` で使えるクーポンを確認できます。"},
    "coupon_expired": {"en": "The coupon `{code}` expired on {date}.",
                       "ja": "クーポン `{code}` は{date}で期限が切れています。"},
    # --- confirmation -------------------------------------------------------------------------------
    "confirm_add": {"en": "Add {quantity} × {name}{amount} to your cart? Reply yes or no.",
                    "ja": "{name}を{quantity}個{amount}カートに追加しますか？「はい」か「いいえ」でお答えください。"},
    "confirm_set": {"en": "Change the quantity of {name} in your cart to {quantity}{amount}? Reply yes or no.",
                    "ja": "カートの{name}を{quantity}個{amount}にしますか？「はい」か「いいえ」でお答えください。"},
    "confirm_remove": {"en": "Remove {name} from your cart? Reply yes or no.",
                       "ja": "{name}をカートから削除しますか？「はい」か「いいえ」でお答えください。"},
    "confirm_coupon": {"en": "Apply coupon {code} to your cart? Reply yes or no.",
                       "ja": "クーポン{code}をカートに適用しますか？「はい」か「いいえ」でお答えください。"},
    "amount": {"en": " ({price})", "ja": "（{price}）"},
    "cart_unchanged": {"en": "OK, I left your cart unchanged.", "ja": "カートは変更していません。"},
    "added": {"en": "Added {quantity} × {name} to your cart.", "ja": "{name}を{quantity}個カートに追加しました。"},
    "quantity_set": {"en": "{name}: quantity set to {quantity}.", "ja": "{name}の数量を{quantity}個にしました。"},
    "removed": {"en": "Removed {name} from your cart.", "ja": "{name}をカートから削除しました。"},
    "coupon_applied": {"en": "Applied coupon {code}.", "ja": "クーポン{code}を適用しました。"},
    "cart_error": {"en": "I couldn't change your cart: {error}.", "ja": "カートを変更できませんでした（{error}）。"},
    "cart_total": {"en": "Cart total: {total}.", "ja": "カートの合計: {total}"},
    "no_answer": {"en": "Sorry, I have no answer for that.", "ja": "すみません、お答えできませんでした。"},
    # --- fulfillment notes (choose_fulfillment) ------------------------------------------------------
    "kind_unavailable": {"en": "{kind} is not available for this product.",
                         "ja": "この商品は{kind}に対応していません。"},
    "store_lacks_stock": {"en": "{store} does not have enough in stock; pick it up at a store that does.",
                          "ja": "{store}には十分な在庫がないため、在庫のある店舗で受け取ってください。"},
    # --- the offline model's answers ------------------------------------------------------------------
    "welcome": {"en": "You're welcome! Ask me any time about products, reviews, stock or your cart.",
                "ja": "どういたしまして！ 商品、レビュー、在庫、カートのことはいつでもどうぞ。"},
    "sorry": {"en": "Sorry — {error}", "ja": "すみません、{error}"},
    "no_products": {"en": "No products match that. Try fewer words or a higher budget.",
                    "ja": "条件に合う商品が見つかりませんでした。予算を上げるか、言葉を減らしてみてください。"},
    "no_products_rated": {"en": "No products rated {rating} or higher match that. Try a lower rating.",
                          "ja": "評価{rating}以上で条件に合う商品は見つかりませんでした。評価の条件を下げてみてください。"},
    "no_products_words": {"en": "No products match that. Try fewer or other words.",
                          "ja": "条件に合う商品が見つかりませんでした。別の言葉や、より少ない言葉で探してみてください。"},
    "no_products_cheapest": {"en": "Nothing that matches is within that budget; the cheapest that does is {name} at {price}.",
                             "ja": "予算内で条件に合う商品はありませんでした。条件に合う最安は{name}（{price}）です。"},
    "products_found": {"en": "Here are {count} products that match:", "ja": "{count}件見つかりました："},
    "one_product_found": {"en": "One product matches:", "ja": "1件見つかりました："},
    "products_by_price": {"en": "Here are {count} products that match, cheapest first:",
                          "ja": "{count}件見つかりました（安い順）："},
    "products_by_rating": {"en": "Here are {count} products that match, best rated first:",
                           "ja": "{count}件見つかりました（評価の高い順）："},
    "product_line": {"en": "{n}. {name} — {price}, {rating:.1f}/5 ({reviews} reviews)",
                     "ja": "{n}. {name} — {price}、{rating:.1f}/5（レビュー{reviews}件）"},
    "details_head": {"en": "{name} ({brand}) — {price}, rated {rating:.1f}/5.",
                     "ja": "{name}（{brand}）— {price}、評価 {rating:.1f}/5。"},
    "specs": {"en": "Specs: {items}.", "ja": "仕様: {items}。"},
    "yes": {"en": "Yes — ", "ja": "はい。"},
    "no": {"en": "No — ", "ja": "いいえ。"},
    "not_in_specs_has": {"en": "The specs listed for {name} do not say whether it has {quality}.",
                         "ja": "{name}の仕様には「{quality}」についての記載がありません。"},
    "not_in_specs_is": {"en": "The specs listed for {name} do not say whether it is {quality}.",
                        "ja": "{name}の仕様には「{quality}」についての記載がありません。"},
    "variants": {"en": "Variants: {items}.", "ja": "バリエーション: {items}。"},
    "delivery": {"en": "Delivery: {items}.", "ja": "受け取り方法: {items}。"},
    "way": {"en": "{kind} ({when}, {fee})", "ja": "{kind}（{when}、{fee}）"},
    "in_days": {"en": "{days} days", "ja": "{days}日"},
    "in_a_day": {"en": "1 day", "ja": "1日"},
    "today": {"en": "today", "ja": "当日"},
    "free": {"en": "free", "ja": "無料"},
    "compare_tail": {"en": "Cheapest: {cheapest}. Best rated: {best}.", "ja": "最安: {cheapest}、最高評価: {best}"},
    "no_reviews": {"en": "{product}: no reviews found on that.", "ja": "{product}：この点についてのレビューは見つかりませんでした。"},
    "reviews_head": {
        # Found by meaning (embeddings), not by topic: the closest reviews may not speak to the
        # question at all (among the top five hits the local model scores on-topic reviews at a
        # median 0.842 and off-topic ones at 0.829: `bench shop-reviews`), so the text says what
        # they are and no more.
        "en": ("{product} is rated {rating:.1f}/5 over {count} reviews. "
               "The {shown} reviews closest in meaning to your question (they may not address it): "
               "{good} positive, {bad} negative."),
        "ja": ("{product}（平均 {rating:.1f}/5、{count}件）で質問に意味の近いレビュー {shown}件"
               "（質問に触れていないこともあります）：好意的 {good}件、否定的 {bad}件。"),
    },
    "no_coupons": {"en": "No coupons apply to {product} today.", "ja": "本日{product}に使えるクーポンはありません。"},
    "coupons_head": {"en": "Coupons for {product}:", "ja": "{product}に使えるクーポン："},
    "coupon_line": {"en": "• {code}: {value}{min_spend}, until {expires}", "ja": "• {code}：{value}{min_spend}、{expires}まで"},
    "percent_off": {"en": "{value:g}%", "ja": "{value:g}%引き"},
    "amount_off": {"en": "{money} off", "ja": "{money}引き"},
    "min_spend": {"en": ", min spend {money}", "ja": "（{money}以上のご購入）"},
    "cart_empty": {"en": "Your cart is empty.", "ja": "カートは空です。"},
    "cart_head": {"en": "Your cart:", "ja": "カートの中身："},
    "cart_line": {"en": "• {quantity} × {name} — {price}", "ja": "• {name} × {quantity} — {price}"},
    "cart_discount": {"en": "• Coupon {code}: −{amount}", "ja": "• クーポン{code}: −{amount}"},
    "total": {"en": "Total: {total}", "ja": "合計: {total}"},
    "stock_head": {"en": "{product} near you:", "ja": "{product}の近くの店舗の在庫："},
    "stock_elsewhere": {"en": "Nearby stores that have it:", "ja": "在庫のある近くの店舗："},
    "stock_line": {"en": "• {store} ({km} km, open {hours}): {quantity} in stock",
                   "ja": "• {store}（{km} km、営業時間 {hours}）：在庫 {quantity}点"},
    "stock_none": {"en": "{product} is not in stock at the stores near you.",
                   "ja": "{product}は近くの店舗に在庫がありません。"},
    "stock_none_at": {"en": "{store} has no {product} in stock.", "ja": "{store}には{product}の在庫がありません。"},
    "stock_none_else": {"en": "Nor do the other stores near you.", "ja": "近くのほかの店舗にも在庫がありません。"},
    "ships": {"en": "It can also be shipped.", "ja": "配送もできます。"},
    # --- tool refusals (the English is what the model reads) ---------------------------------------------
    "no_product_selected": {"en": "No product is selected. Ask the user which product they mean.",
                            "ja": "商品が選ばれていません。どの商品のことか教えてください。"},
    "no_such_product": {"en": "There is no product with id {id} in the catalog.",
                        "ja": "ID {id} の商品はカタログにありません。"},
    "compare_needs_two": {"en": "Comparing needs at least two products; search first or name them.",
                          "ja": "比較には2つ以上の商品が必要です。先に商品を探すか、商品名を挙げてください。"},
    "reviews_unavailable": {"en": "Review search is not available.", "ja": "レビュー検索は現在利用できません。"},
    "unavailable": {"en": "Sorry — {what} is not answering right now. Please try again in a moment.",
                    "ja": "すみません、{what}が現在応答していません。少し時間をおいてもう一度お試しください。"},
    "location_unknown": {"en": "The shopper's location is unknown. Ask which city they are in.",
                         "ja": "現在地がわかりません。どの都市にいらっしゃいますか？"},
    "no_stores_in_city": {"en": "There are no stores in {city}. Stores are in: {cities}.",
                          "ja": "{city}には店舗がありません。店舗がある都市: {cities_ja}。"},
    "quantity_range": {"en": "The quantity must be between 1 and {max}; {quantity} is not possible.",
                       "ja": "数量は1〜{max}個で指定してください（{quantity}個は指定できません）。"},
    "not_in_cart": {"en": "{product} is not in the cart.", "ja": "{product_ja}はカートに入っていません。"},
    "out_of_stock_everywhere": {
        "en": "{product} is out of stock in every store and cannot be shipped right now.",
        "ja": "{product_ja}はどの店舗でも在庫切れで、現在は配送もできません。",
    },
    "line_full": {"en": "The cart already has {have} × {product}; at most {max} fit on one line, so {quantity} more cannot be added.",
                  "ja": "カートにはすでに{product_ja}が{have}個入っています。1商品あたり{max}個までのため、あと{quantity}個は追加できません。"},
    "quantity_already": {"en": "The cart already has {quantity} × {product}.",
                         "ja": "カートにはすでに{product_ja}が{quantity}個入っています。"},
    # --- cart changes refused (CartError; the English is also the exception's message) ---------------------
    "cart_no_product": {"en": "there is no product {id!r} in the catalog", "ja": "商品 {id} はカタログにありません"},
    "cart_no_variant": {"en": "{product} has no variant {variant!r}; its variants: {options}",
                        "ja": "{product_ja}にバリエーション {variant} はありません。バリエーション: {options}"},
    "cart_quantity": {"en": "the quantity must be between {min} and {max}, not {quantity}",
                      "ja": "数量は{min}〜{max}個で指定してください（{quantity}個は指定できません）"},
    "cart_line_full": {"en": "the cart already has {have} × {product}; at most {max} fit on one line",
                       "ja": "カートにはすでに{product_ja}が{have}個入っています。1商品あたり{max}個までです"},
    "cart_several_variants": {"en": "{id} is in the cart as several variants ({variants}); say which one",
                              "ja": "{id}はカートに複数のバリエーション（{variants}）で入っています。どれか指定してください"},
    "cart_not_in_cart": {"en": "{id} is not in the cart", "ja": "{id}はカートに入っていません"},
    "cart_no_coupon": {"en": "there is no coupon {code!r}", "ja": "クーポン {code} はありません"},
    "cart_coupon_expired": {"en": "coupon {code} expired on {date}", "ja": "クーポン{code}は{date}で期限が切れています"},
    "cart_empty_for_coupon": {"en": "the cart is empty; add something before applying a coupon",
                              "ja": "カートが空です。クーポンを使う前に商品を入れてください"},
    "coupon_refused": {"en": "I can't apply coupon {code}: {error}.", "ja": "クーポン{code}は使えません（{error}）。"},
    "coupon_replaces": {"en": "Your cart has coupon {old}; one coupon applies per order, so {old} would be replaced.",
                        "ja": "カートにはクーポン{old}が適用されています。クーポンは1回の注文につき1枚のため、{old}は置き換えられます。"},
    "coupon_already": {"en": "Coupon {code} is already applied to your cart.", "ja": "クーポン{code}はすでにカートに適用されています。"},
    "cart_coupon_categories": {"en": "coupon {code} is only for {categories}; nothing in the cart is in those categories",
                               "ja": "クーポン{code}は{categories_ja}の商品専用で、カートに対象の商品がありません"},
    "cart_min_spend": {"en": "coupon {code} needs a spend of at least {min_text}; the cart has {eligible_text}",
                       "ja": "クーポン{code}は{min_text}以上のご購入が必要です（現在 {eligible_text}）"},
    "cart_min_spend_on": {
        "en": "coupon {code} needs a spend of at least {min_text} on {categories}; the cart has {eligible_text}",
        "ja": "クーポン{code}は{categories_ja}の商品で{min_text}以上のご購入が必要です（現在 {eligible_text}）",
    },
    # --- progress (Status events) -------------------------------------------------------------------------
    "status_reading": {"en": "Reading your request…", "ja": "ご依頼を確認しています…"},
    "status_writing": {"en": "Writing the answer…", "ja": "回答を作成しています…"},
    "status_updating_cart": {"en": "Updating your cart…", "ja": "カートを更新しています…"},
    "status_searching": {"en": "Searching the catalog…", "ja": "商品を検索しています…"},
    "status_looking_up": {"en": "Looking up {product}…", "ja": "{product}を調べています…"},
    "status_comparing": {"en": "Comparing {products}…", "ja": "{products}を比較しています…"},
    "status_reviews_kept": {"en": "Reviews of {product} (retrieved earlier in this conversation)",
                            "ja": "{product}のレビュー（この会話で取得済み）"},
    "status_reading_reviews": {"en": "Reading reviews of {product}…", "ja": "{product}のレビューを読んでいます…"},
    "status_finding_stores": {"en": "Finding stores near {city}…", "ja": "{city}の近くの店舗を探しています…"},
    "status_checking_stock": {"en": "Checking stock of {product}…", "ja": "{product}の在庫を確認しています…"},
    # --- tool result summaries (the first line of a tool's content: the progress line shows it) ------------
    "sum_found": {"en": "{n} product(s) found", "ja": "商品{n}件"},
    "sum_details": {"en": "details of {product}", "ja": "{product}の詳細"},
    "sum_compared": {"en": "{n} products compared", "ja": "{n}商品を比較"},
    "sum_reviews": {"en": "{n} relevant review(s)", "ja": "関連レビュー{n}件"},
    "sum_coupons": {"en": "{n} coupon(s) valid", "ja": "使えるクーポン{n}件"},
    "sum_cart": {"en": "{n} item(s) in the cart", "ja": "カートに{n}商品"},
    "sum_located": {"en": "in {city}", "ja": "現在地: {city}"},
    "sum_stores": {"en": "{n} store(s) nearby", "ja": "近くの店舗{n}件"},
    "sum_stock": {"en": "{n} in stock nearby", "ja": "近くの在庫{n}点"},
    "sum_product_ok": {"en": "{product}: ok", "ja": "{product}: OK"},
    "sum_in_stores": {"en": "{n} in stores", "ja": "店舗在庫{n}点"},
    "sum_ships": {"en": "{n} in stores, ships", "ja": "店舗在庫{n}点、配送可"},
    "sum_waiting": {"en": "waiting for the shopper's confirmation", "ja": "ご確認待ち"},
}

# The catalog's categories (models.CATEGORIES), as a Japanese shopper reads them.
CATEGORY_JA: dict[str, str] = {
    "audio": "オーディオ", "computers": "パソコン", "phones": "スマートフォン", "wearables": "ウェアラブル",
    "kitchen": "キッチン", "home": "生活家電", "shoes": "靴", "apparel": "衣料品", "outdoor": "アウトドア",
    "beauty": "美容",
}

# The ways to get a product (FulfillmentOption.kind), as the shopper reads them.
FULFILLMENT: dict[str, dict[Language, str]] = {
    "ship": {"en": "ship", "ja": "配送"},
    "pickup": {"en": "pickup", "ja": "店舗受け取り"},
    "same_day": {"en": "same day", "ja": "当日配達"},
}

CARD_LABELS: dict[Language, dict[str, str]] = {
    "en": {"price": "Price", "rating": "Rating", "stock": "Stock", "reviews": "{n} reviews", "in_stores": "{n} in stores",
           "online_only": "Online only", "add_to_cart": "Add to cart", "add_command": "{command} add {id}",
           "cart": "Your cart", "items": "{n} item(s)", "coupon": "Coupon {code}", "total": "Total",
           "quantity": "Quantity", "fulfillment": "Fulfillment", "at_store": "{kind} at {store}",
           "waiting": "Waiting for your confirmation", "confirm": "Confirm", "cancel": "Cancel",
           "add": "Add {name}", "set": "Set quantity of {name}", "remove": "Remove {name}", "apply_coupon": "Apply coupon {name}"},
    # The Add to cart button's command is the request in the shopper's words, so the turn it starts
    # is read in their language like any other message.
    "ja": {"price": "価格", "rating": "評価", "stock": "在庫", "reviews": "レビュー{n}件", "in_stores": "店舗在庫 {n}点",
           "online_only": "オンラインのみ", "add_to_cart": "カートに入れる", "add_command": "{command} カートに追加 {id}",
           "cart": "カート", "items": "{n}点", "coupon": "クーポン {code}", "total": "合計",
           "quantity": "数量", "fulfillment": "受け取り方法", "at_store": "{store}で{kind}",
           "waiting": "ご確認をお待ちしています", "confirm": "確定", "cancel": "キャンセル",
           "add": "カートに追加: {name}", "set": "数量を変更: {name}", "remove": "カートから削除: {name}",
           "apply_coupon": "クーポンを適用: {name}"},
}


# Spellings shoppers type for a catalog word (data/spelling_variants.json): ヘッドフォン is ヘッドホン.
_VARIANTS: dict[str, str] = json.loads(
    (Path(__file__).parent / "data" / "spelling_variants.json").read_text("utf-8"))["variants"]
_VARIANT = re.compile("|".join(map(re.escape, sorted(_VARIANTS, key=len, reverse=True))))


def usual_spelling(text: str) -> str:
    """`text` with the catalog's spelling of words also spelt otherwise (イヤフォン → イヤホン)."""
    return _VARIANT.sub(lambda m: _VARIANTS[m.group(0)], text)


# Japanese labels of the catalog's spec keys and commonest values (data/specs_ja.json).
_SPECS_JA: dict[str, dict[str, str]] = json.loads((Path(__file__).parent / "data" / "specs_ja.json").read_text("utf-8"))
_SPECS_EN: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "specs_en.json").read_text("utf-8"))


def spec_text(key: str, value: Any, lang: Language) -> str:
    """'Battery (hours): 7', or 'バッテリー（時間）: 7' for a Japanese shopper."""
    label, shown = spec_parts(key, value, lang)
    return f"{label}: {shown}"


def spec_parts(key: str, value: Any, lang: Language) -> tuple[str, str]:
    """A spec's name and value in the shopper's language: ('Battery (hours)', '7')."""
    if lang == "ja":
        return str(_SPECS_JA["keys"].get(key, key)), str(_SPECS_JA["values"].get(str(value), value))
    return spec_label(key), str(value)


def spec_units() -> tuple[str, ...]:
    """The units the catalog's specs are measured in, as keys and as shown ('gb', 'GB', 'mah', 'mAh'…)."""
    units: dict[str, str] = _SPECS_EN["units"]
    return tuple(dict.fromkeys(u for pair in units.items() for u in pair))


def spec_label(key: str) -> str:
    """A spec key in English words, its unit last (data/specs_en.json): 'weight_g_per_bud' → 'Weight per bud (g)'."""
    if key in _SPECS_EN["keys"]:
        return str(_SPECS_EN["keys"][key])
    words = key.split("_")
    units = [_SPECS_EN["units"][w] for w in words[1:] if w in _SPECS_EN["units"]]
    named = [_SPECS_EN["capitals"].get(w, w) for i, w in enumerate(words) if i == 0 or w not in _SPECS_EN["units"]]
    text = " ".join(named) + (f" ({', '.join(units)})" if units else "")
    return text[0].upper() + text[1:]


def language(context: dict[str, Any] | None) -> Language:
    """The language of this turn's request, as `turn_input` recorded it in the tool context."""
    return "ja" if (context or {}).get("language") == "ja" else "en"


def say(key: str, lang: Language, **values: Any) -> str:
    return TEXTS[key][lang].format(**values)


def sentences(parts: list[str | None], lang: Language) -> str:
    """Sentences one after another: a space between English ones, none between Japanese ones."""
    return ("" if lang == "ja" else " ").join(p for p in parts if p)


TOOL_WORDS: dict[str, tuple[str, str]] = {  # a tool, as the shopper knows it: English, Japanese
    "search_products": ("product search", "商品検索"),
    "product_details": ("the product information", "商品情報"),
    "compare_products": ("the product comparison", "商品比較"),
    "review_search": ("review search", "レビュー検索"),
    "product_coupons": ("the coupon service", "クーポン"),
    "view_cart": ("the cart", "カート"),
    "locate_user": ("the location service", "位置情報"),
    "find_stores": ("the store finder", "店舗検索"),
    "check_stock": ("the stock check", "在庫確認"),
    "validate_product": ("the product check", "商品確認"),
    "validate_stock": ("the stock check", "在庫確認"),
    "choose_fulfillment": ("the delivery service", "配送サービス"),
    "propose_cart_change": ("the cart", "カート"),
}


def tool_word(tool: str, lang: Language) -> str:
    english, japanese = TOOL_WORDS.get(tool, ("this service", "このサービス"))
    return japanese if lang == "ja" else english


def category_word(category: str, lang: Language) -> str:
    return CATEGORY_JA.get(category, category) if lang == "ja" else category


def categories_text(categories: list[str], lang: Language) -> str:
    return ("、" if lang == "ja" else ", ").join(category_word(c, lang) for c in categories)


def fulfillment_word(kind: str, lang: Language) -> str:
    return FULFILLMENT.get(kind, {}).get(lang) or kind.replace("_", " ")


def label(key: str, lang: Language, **values: Any) -> str:
    return CARD_LABELS[lang][key].format(**values)


def refusal(key: str, **values: Any) -> dict[str, Any]:
    """A tool's refusal: the English text for the model, and its key and values to retell it."""
    return {"error": say(key, "en", **values), "code": key, "values": values}


# What the shopper reads where a refusal's English (TEXTS) tells the model what to do next.
SHOPPER_EN = {
    "no_product_selected": "Which product do you mean? Search first, or name it.",
    "location_unknown": "Which city are you in? Say it with your question, e.g. `is it in stock in Tokyo?`",
}


def retell(result: dict[str, Any], lang: Language) -> str:
    """A tool result's error in the shopper's language (its own text when it has no key)."""
    code = result.get("code")
    if lang == "en" and code in SHOPPER_EN:
        return SHOPPER_EN[str(code)]
    if lang != "en" and isinstance(code, str) and code in TEXTS:
        return say(code, lang, **(result.get("values") or {}))
    return str(result["error"])
