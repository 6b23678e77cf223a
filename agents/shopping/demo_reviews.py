"""Deterministic demo reviews for the demo catalog: English and Japanese, each about one or two real aspects.

The point of these reviews is to exercise *semantic* review search, so they are written the way people
write reviews, not as "The battery is good." with the aspect name pasted in: every aspect has many
phrasings per sentiment and language, and most of them never name the aspect ("lasted a whole
transatlantic flight", 「一日中使っても充電が残っている」). A keyword search for "battery" misses them; a
question like "does it die quickly?" should still find them.

`Review.aspects` holds the true labels (what the generator chose to talk about), and `Review.rating` follows
the sentiment of what was said: only praise gives 4-5 stars, only complaints 1-2, a mix 2-4. The labelled
query set `data/review_queries.json` and `bench/shop_reviews.py` measure retrieval against those labels.

Same products and seed, same reviews: `random.Random(seed)` drives every choice, nothing reads the clock.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import date, timedelta

from agents.shopping.models import CATEGORIES, Product, Review

# What reviews of each category talk about. The labels are stable ids (they are stored in Review.aspects
# and used by the labelled query set); the words used in the review text vary.
ASPECTS: dict[str, tuple[str, ...]] = {
    "audio": ("battery", "sound", "noise_cancelling", "fit", "connectivity", "durability", "shipping"),
    "computers": ("battery", "performance", "screen", "keyboard", "heat_noise", "build", "shipping"),
    "phones": ("battery", "camera", "screen", "performance", "durability", "shipping"),
    "wearables": ("battery", "fit", "tracking", "screen", "water_resistance", "app", "shipping"),
    "kitchen": ("performance", "cleaning", "noise", "durability", "size", "shipping"),
    "home": ("assembly", "noise", "effectiveness", "build", "looks", "shipping"),
    "shoes": ("fit", "comfort", "durability", "grip", "looks", "shipping"),
    "apparel": ("fit", "fabric", "washing", "warmth", "looks", "shipping"),
    "outdoor": ("weight", "weatherproof", "durability", "setup", "comfort", "shipping"),
    "beauty": ("scent", "skin", "longevity", "texture", "packaging", "shipping"),
}
assert set(ASPECTS) == set(CATEGORIES)

# Subcategories whose products only have some of their category's aspects (a mouse has no screen, a knife
# makes no noise) or one of their own; a subcategory not listed here takes its category's list.
SUBCATEGORY_ASPECTS: dict[str, tuple[str, ...]] = {
    "earphones": ("sound", "fit", "durability", "shipping"),
    "speakers": ("battery", "sound", "connectivity", "durability", "shipping"),
    "monitors": ("screen", "build", "shipping"),
    "keyboards": ("keyboard", "build", "shipping"),
    "mice": ("battery", "build", "comfort", "shipping"),
    "tablets": ("battery", "performance", "screen", "build", "shipping"),
    "chargers": ("performance", "durability", "shipping"),
    "phone cases": ("durability", "looks", "shipping"),
    "power banks": ("battery", "durability", "shipping"),
    "fitness trackers": ("battery", "fit", "tracking", "water_resistance", "app", "shipping"),
    "smart rings": ("battery", "fit", "tracking", "app", "shipping"),
    "knives": ("performance", "durability", "looks", "shipping"),
    "kettles": ("performance", "noise", "durability", "size", "shipping"),
    "vacuums": ("battery", "effectiveness", "noise", "build", "assembly", "shipping"),
    "air purifiers": ("effectiveness", "noise", "looks", "assembly", "shipping"),
    "desk lamps": ("effectiveness", "looks", "build", "assembly", "shipping"),
    "pillows": ("effectiveness", "durability", "shipping"),
    "smart plugs": ("effectiveness", "build", "shipping"),
    "sandals": ("fit", "comfort", "durability", "looks", "shipping"),
    "t-shirts": ("fit", "fabric", "washing", "looks", "shipping"),
    "jeans": ("fit", "fabric", "washing", "looks", "shipping"),
    "socks": ("fit", "fabric", "washing", "warmth", "shipping"),
    "tents": ("weight", "weatherproof", "durability", "setup", "shipping"),
    "sleeping bags": ("weight", "warmth", "comfort", "durability", "shipping"),
    "backpacks": ("weight", "weatherproof", "durability", "comfort", "shipping"),
    "water bottles": ("performance", "durability", "cleaning", "shipping"),
    "headlamps": ("battery", "weight", "durability", "comfort", "shipping"),
    "camping stoves": ("performance", "setup", "weight", "durability", "shipping"),
    "moisturizers": ("scent", "skin", "longevity", "texture", "packaging", "shipping"),
    "hair dryers": ("performance", "noise", "weight", "durability", "shipping"),
    "shavers": ("performance", "skin", "battery", "noise", "shipping"),
    "shampoo": ("scent", "skin", "performance", "packaging", "shipping"),
    "toothbrushes": ("performance", "battery", "noise", "shipping"),
}


def aspects_of(product: Product) -> tuple[str, ...]:
    """The aspects reviews of `product` talk about: its subcategory's list, else its category's."""
    return SUBCATEGORY_ASPECTS.get(product.subcategory.strip().lower(), ASPECTS[product.category])


JA_SHARE = 0.3  # about this share of reviews is written in Japanese

# Phrase banks: (category, aspect) when the words differ by category, else aspect alone. Each bank has
# "en+", "en-", "ja+", "ja-" lists. Phrases are whole sentences; reviews join one or two of them with an
# optional opener and closer.
Bank = dict[str, tuple[str, ...]]

_GENERIC: dict[str, Bank] = {
    "battery": {
        "en+": (
            "Lasted a whole transatlantic flight and still had juice when we landed.",
            "I charge it maybe twice a week and it has never left me stranded.",
            "Goes from breakfast to bedtime with plenty to spare.",
            "Plugged it in on Sunday, it was still going on Thursday.",
            "Forgot the charger on a three-day trip and it didn't matter.",
            "Endurance is excellent: a full day of heavy use barely makes a dent.",
        ),
        "en-": (
            "Needs charging every afternoon, which gets old fast.",
            "Dies halfway through my commute home.",
            "Went from 100% to dead in about three hours of use.",
            "Runtime is nowhere near what the box claims.",
            "I am constantly hunting for an outlet with this thing.",
            "After two months it barely holds a charge overnight.",
        ),
        "ja+": (
            "一日中使っても充電が残っている。",
            "週に一回充電すれば十分です。",
            "充電の持ちが良くて、出張中も充電器いらずでした。",
            "朝から晩まで使っても余裕があります。",
            "フル充電で三日はもちます。",
        ),
        "ja-": (
            "夕方にはもう充電が切れてしまう。",
            "電池の減りが早すぎて毎日充電が必要です。",
            "公称の使用時間には全然届きません。",
            "数時間で残量がなくなるのが不満。",
            "半年使ったら充電の持ちが半分くらいになった。",
        ),
    },
    "shipping": {
        "en+": (
            "Arrived a day earlier than promised, well packed.",
            "Ordered Monday night, it was on my doorstep Wednesday morning.",
            "Delivery was quick and the box was in perfect shape.",
            "Came in sturdy packaging, nothing rattling around.",
            "Tracking was accurate and the courier left it right where I asked.",
        ),
        "en-": (
            "Took almost three weeks to show up.",
            "The box arrived crushed and the contents were scuffed.",
            "Delivery date slipped twice and nobody told me why.",
            "It was left out in the rain on the porch, packaging soaked.",
            "Arrived with a missing cable and I had to chase support for it.",
        ),
        "ja+": (
            "注文の翌日に届きました。",
            "梱包が丁寧で、箱もきれいな状態でした。",
            "予定より早く到着して助かりました。",
            "発送がとても迅速でした。",
        ),
        "ja-": (
            "届くまでに二週間以上かかりました。",
            "箱が潰れた状態で届き、本体にも傷がありました。",
            "配達予定日を過ぎても連絡がなかった。",
            "付属品が一つ入っていなかった。",
        ),
    },
    "durability": {
        "en+": (
            "Two years of daily abuse and it still works like new.",
            "I have dropped it more times than I can count, not a scratch that matters.",
            "Feels like it will outlive me.",
            "Still going strong after a year of heavy use.",
            "Survived a fall down the stairs without complaint.",
        ),
        "en-": (
            "Stopped working a week after the return window closed.",
            "Something snapped inside after a month.",
            "Fell apart within a few weeks of normal use.",
            "The second one died the same way the first one did.",
            "Started falling to pieces almost immediately.",
        ),
        "ja+": (
            "二年毎日使っていますが、まだまだ現役です。",
            "何度か落としましたが、壊れる気配がありません。",
            "とても頑丈で長持ちしそうです。",
            "一年たっても新品同様に使えています。",
        ),
        "ja-": (
            "一ヶ月で壊れました。",
            "保証期間が切れた直後に動かなくなった。",
            "作りが弱く、すぐにガタが来ました。",
            "交換品も同じ箇所が壊れた。",
        ),
    },
    "cleaning": {
        "en+": (
            "Everything that touches food goes straight in the dishwasher.",
            "Wipes clean in seconds, nothing sticks.",
            "Comes apart easily so there's no gunk hiding in corners.",
        ),
        "en-": (
            "Food gets trapped in the crevices and it's a nightmare to scrub.",
            "The coating started peeling after a few washes.",
            "Takes longer to clean than to cook with.",
            "Gunk builds up under the blade where you can't reach.",
        ),
        "ja+": (
            "パーツが外せて洗うのが楽です。",
            "汚れがさっと落ちてお手入れ簡単。",
            "食洗機に入れられるのが助かる。",
        ),
        "ja-": (
            "隙間に汚れが入り込んで洗いにくい。",
            "数回洗っただけでコーティングが剥げた。",
            "お手入れが面倒で使わなくなった。",
        ),
    },
    "screen": {
        "en+": (
            "The display is gorgeous: colors pop and text is razor sharp.",
            "Perfectly readable even in direct sunlight.",
            "Blacks are deep and it gets plenty bright.",
            "Crisp panel, no visible pixels at normal distance.",
        ),
        "en-": (
            "Washed out colors and I can barely see it outdoors.",
            "There is noticeable backlight bleed in the corners.",
            "The panel is dim even at maximum brightness.",
            "A dead pixel showed up in the middle after a week.",
        ),
        "ja+": (
            "画面がとても綺麗で、文字もくっきり見えます。",
            "屋外の日差しの下でもはっきり見える。",
            "発色が良くて動画を見るのが楽しい。",
            "ディスプレイが明るくて見やすいです。",
        ),
        "ja-": (
            "画面が暗く、外ではほとんど見えません。",
            "色が薄くて全体的に白っぽい。",
            "画面の端に光漏れがあります。",
            "ドット抜けが一つあってがっかり。",
        ),
    },
    "performance": {
        "en+": (
            "Snappy: apps open instantly and nothing stutters.",
            "Handles dozens of browser tabs and a video call without breaking a sweat.",
            "Exports my edits twice as fast as my old one.",
            "Never once felt sluggish, even with heavy multitasking.",
            "Games run smoothly at high settings.",
        ),
        "en-": (
            "Lags when switching between apps, sometimes freezes for seconds.",
            "Chokes on anything heavier than email.",
            "Boot takes forever and everything feels sluggish.",
            "Stutters during video calls, which is embarrassing at work.",
            "Slowed to a crawl after the first update.",
        ),
        "ja+": (
            "動作がサクサクで、アプリの切り替えもスムーズ。",
            "重い作業をしても全く引っかかりません。",
            "起動が速くてストレスがない。",
            "ゲームもカクつかずに快適に動きます。",
        ),
        "ja-": (
            "動作がもっさりしていて、よく固まる。",
            "複数のアプリを開くとすぐに重くなる。",
            "アップデート後に動きが遅くなった。",
            "起動に時間がかかりすぎる。",
        ),
    },
    "build": {
        "en+": (
            "Solid metal construction, no creaks or flex anywhere.",
            "Feels premium in the hand, every seam lines up.",
            "Sturdy and well put together, nothing wobbles.",
            "The materials feel far more expensive than the price.",
        ),
        "en-": (
            "Cheap plastic that creaks when you pick it up.",
            "The hinge wobbles and the panels don't line up.",
            "Feels flimsy, like a toy.",
            "A screw was loose out of the box and the frame flexes.",
        ),
        "ja+": (
            "作りがしっかりしていて高級感があります。",
            "剛性が高く、きしみもありません。",
            "素材の質感が良く、値段以上に見える。",
        ),
        "ja-": (
            "全体的に作りが安っぽい。",
            "持つとミシミシと音がする。",
            "ぐらつきがあり、組み付けも雑です。",
        ),
    },
    "noise": {
        "en+": (
            "Quiet enough to run while the baby sleeps.",
            "You can hold a conversation next to it while it runs.",
            "Barely a hum, I sometimes check whether it's on.",
            "Much quieter than the one it replaced.",
        ),
        "en-": (
            "Sounds like a jet taking off.",
            "So loud we have to leave the room while it runs.",
            "There is a high-pitched whine that drives me nuts.",
            "Rattles and roars, the neighbours must hear it.",
        ),
        "ja+": (
            "動作音がとても静かで、夜でも気になりません。",
            "運転中も会話ができるくらい静か。",
            "ほとんど音がしないので電源が入っているか確認してしまう。",
        ),
        "ja-": (
            "動かすとかなりうるさいです。",
            "キーンという高い音が耳障り。",
            "音が大きくて夜は使えません。",
        ),
    },
    "fit": {
        "en+": (
            "True to size, I ordered my usual and it's perfect.",
            "Fits like it was made for me.",
            "Sizing chart was spot on.",
            "Snug in the right places without being tight.",
        ),
        "en-": (
            "Runs at least a size small, had to send it back.",
            "Way too big, the size chart is useless.",
            "Tight in some places and baggy in others.",
            "Ordered my normal size and could barely get it on.",
        ),
        "ja+": (
            "いつものサイズでぴったりでした。",
            "サイズ表通りで、ちょうど良いです。",
            "体にフィットしてとても良い感じ。",
        ),
        "ja-": (
            "ワンサイズ小さめなので注意。",
            "普段のサイズだと大きすぎました。",
            "サイズ感が表記と全然違う。",
        ),
    },
    "looks": {
        "en+": (
            "Even better looking in person than in the photos.",
            "I get compliments every time.",
            "The color is exactly as pictured and really stylish.",
            "Looks far more expensive than it was.",
        ),
        "en-": (
            "The color is nothing like the pictures.",
            "Looks cheap up close.",
            "Much uglier in real life, honestly.",
            "The finish is dull and blotchy.",
        ),
        "ja+": (
            "写真より実物の方がおしゃれです。",
            "色味が上品で、よく褒められます。",
            "デザインがシンプルでかっこいい。",
        ),
        "ja-": (
            "写真と色が全然違いました。",
            "近くで見ると安っぽい。",
            "実物はデザインがいまいち。",
        ),
    },
    "comfort": {
        "en+": (
            "Comfortable enough to forget I'm wearing it.",
            "Wore it for a full day and never wanted to take it off.",
            "No pressure points at all, even after hours.",
        ),
        "en-": (
            "Uncomfortable after about an hour.",
            "Digs in and leaves marks.",
            "I could not wait to take it off.",
        ),
        "ja+": (
            "長時間使っても疲れません。",
            "着け心地が良くて一日中快適。",
        ),
        "ja-": (
            "一時間もすると痛くなる。",
            "当たる部分があって快適とは言えない。",
        ),
    },
}

_SPECIFIC: dict[tuple[str, str], Bank] = {
    ("audio", "sound"): {
        "en+": (
            "Rich, detailed audio with bass that thumps without getting muddy.",
            "I'm hearing details in old albums I never noticed before.",
            "Vocals are crystal clear and the highs never get harsh.",
            "Sounds far better than anything in this price range.",
            "Warm, balanced tuning that works for jazz and metal alike.",
        ),
        "en-": (
            "Everything sounds muffled, like listening through a pillow.",
            "The bass is boomy and drowns out the vocals.",
            "Tinny and harsh at anything above half volume.",
            "There's a faint hiss even when nothing is playing.",
            "Music sounds flat and lifeless.",
        ),
        "ja+": (
            "音がクリアで、低音もしっかり出ています。",
            "ボーカルが近くに聞こえて気持ちいい。",
            "今まで聴こえなかった細かい音まで聴こえる。",
            "この価格でこの音なら大満足。",
        ),
        "ja-": (
            "音がこもっていて、ボーカルが聴き取りにくい。",
            "高音がシャリシャリして耳が痛くなる。",
            "低音がボワボワしてバランスが悪い。",
            "無音でもサーッというノイズが聞こえる。",
        ),
    },
    ("audio", "noise_cancelling"): {
        "en+": (
            "Flip the switch and the airplane drone just vanishes.",
            "The office chatter disappears completely, I can finally focus.",
            "Blocks out the train rumble on my commute better than my old pair.",
            "Put them on in a noisy cafe and it went silent.",
        ),
        "en-": (
            "Hardly blocks anything, I can still hear the AC and every conversation.",
            "The quiet mode creates a weird pressure in my ears.",
            "Wind makes a horrible whooshing noise when the cancelling is on.",
            "Engine noise on a flight comes straight through.",
        ),
        "ja+": (
            "スイッチを入れると電車の騒音がすっと消えます。",
            "ノイキャンが強力で、カフェでも集中できる。",
            "飛行機のエンジン音がほとんど聞こえなくなった。",
        ),
        "ja-": (
            "ノイズキャンセリングがほとんど効かない。",
            "周りの話し声がそのまま聞こえてくる。",
            "ノイキャンをオンにすると耳に圧迫感がある。",
        ),
    },
    ("audio", "fit"): {
        "en+": (
            "They stay put even on sprints and burpees.",
            "Light enough that I forget they're in my ears.",
            "Wore them through a six-hour shift with no sore ears.",
            "The clamp is just right, snug but not squeezing.",
        ),
        "en-": (
            "They pop out every time I turn my head.",
            "My ears ache after forty minutes.",
            "Fall out as soon as I start jogging.",
            "Clamps so hard it gives me a headache.",
        ),
        "ja+": (
            "ランニング中もまったく外れません。",
            "耳にすっぽり収まって、長時間つけても痛くない。",
            "軽くて着けているのを忘れるほど。",
        ),
        "ja-": (
            "耳からすぐにポロッと落ちる。",
            "一時間もすると耳が痛くなります。",
            "締め付けが強くて頭が痛くなる。",
        ),
    },
    ("audio", "connectivity"): {
        "en+": (
            "Pairs instantly with my phone and laptop and switches between them on its own.",
            "Never once dropped out, even with the phone in my back pocket.",
            "I can walk to the other end of the house and the music keeps playing.",
            "Connection is rock solid, no stutters at the gym.",
        ),
        "en-": (
            "Keeps cutting out every few minutes.",
            "The left side randomly disconnects and won't rejoin.",
            "Audio stutters whenever my phone is in my pocket.",
            "Pairing is a nightmare, it forgets my laptop every day.",
        ),
        "ja+": (
            "スマホとのペアリングが一瞬で終わる。",
            "接続が安定していて、途切れたことがありません。",
            "別の部屋に行っても音が途切れない。",
        ),
        "ja-": (
            "Bluetoothがすぐに切れる。",
            "片耳だけ接続が途切れることがよくある。",
            "人混みでは音がブツブツ途切れます。",
        ),
    },
    ("computers", "keyboard"): {
        "en+": (
            "Typing on it is a joy: good travel and a satisfying click.",
            "I write all day and my fingers never get tired.",
            "Keys are well spaced and the backlight is even.",
            "The trackpad is huge and accurate, no mouse needed.",
        ),
        "en-": (
            "Keys feel mushy and shallow.",
            "The space bar sticks and some keys double-type.",
            "The layout is cramped, I keep hitting the wrong key.",
            "Trackpad is jumpy and registers my palm all the time.",
        ),
        "ja+": (
            "打鍵感が良く、長文を打っても疲れない。",
            "キーの配置が自然で、すぐに慣れました。",
            "タッチパッドが広くて操作しやすい。",
        ),
        "ja-": (
            "キーが浅くて打ちにくい。",
            "スペースキーが引っかかることがある。",
            "配列が独特でミスタイプが多い。",
        ),
    },
    ("computers", "heat_noise"): {
        "en+": (
            "Stays cool on my lap even during long renders.",
            "Fans are silent unless I really push it.",
            "Never gets more than lukewarm.",
        ),
        "en-": (
            "Gets hot enough to be uncomfortable on my legs.",
            "The fans scream the moment I open a browser.",
            "Throttles after ten minutes because it runs so hot.",
            "Sounds like a hairdryer during video calls.",
        ),
        "ja+": (
            "長時間使っても本体が熱くならない。",
            "ファンの音がほとんど聞こえず静か。",
        ),
        "ja-": (
            "少し負荷をかけると本体がかなり熱くなる。",
            "ファンがすぐに回り出してうるさい。",
            "膝の上で使うと熱くて無理。",
        ),
    },
    ("phones", "camera"): {
        "en+": (
            "Night shots come out bright and sharp, no tripod needed.",
            "Photos of my kids running around are finally not a blur.",
            "Portraits look like they came from a real camera.",
            "Zoomed pictures from the back of a concert were usable.",
            "Colors in daylight are natural, not oversaturated.",
        ),
        "en-": (
            "Anything indoors comes out grainy and smeared.",
            "Pictures look washed out and overprocessed.",
            "Focus hunts forever and I miss the moment.",
            "Low-light pictures are a noisy mess.",
        ),
        "ja+": (
            "夜景がびっくりするほど綺麗に撮れる。",
            "写真が明るく鮮明で、ポートレートもいい感じ。",
            "動く子どもを撮ってもブレにくい。",
        ),
        "ja-": (
            "暗い場所で撮るとノイズだらけ。",
            "ピントが合うのが遅くてシャッターチャンスを逃す。",
            "写真の色が不自然で加工っぽい。",
        ),
    },
    ("wearables", "fit"): {
        "en+": (
            "The band is soft and I sleep with it on without noticing.",
            "Light on the wrist, no sweaty rash after workouts.",
            "Clasp is secure and it never slides around.",
        ),
        "en-": (
            "The strap irritates my wrist and leaves a red mark.",
            "Too bulky to wear to bed.",
            "The band clasp popped open twice and it fell off.",
        ),
        "ja+": (
            "バンドが柔らかく、寝るときも気にならない。",
            "軽くて手首に負担がありません。",
        ),
        "ja-": (
            "ベルトで手首がかぶれてしまった。",
            "大きくて寝るときに邪魔。",
        ),
    },
    ("wearables", "tracking"): {
        "en+": (
            "Heart rate matches the chest strap at the gym almost exactly.",
            "Step counts line up with my phone within a few dozen.",
            "GPS traced my run perfectly, even under the trees.",
            "Sleep data actually matches how rested I feel.",
        ),
        "en-": (
            "Counted ten thousand steps on a day I drove everywhere.",
            "Heart readings jump around wildly during runs.",
            "The GPS route has me running through lakes.",
            "Says I slept well on nights I was awake for hours.",
        ),
        "ja+": (
            "心拍数の計測が正確で、ジムの機械とほぼ同じ。",
            "歩数がスマホとほとんどずれない。",
            "GPSのルートが正確に記録される。",
        ),
        "ja-": (
            "歩数がかなり多めにカウントされる。",
            "運動中の心拍数がめちゃくちゃ。",
            "睡眠の記録が実感と全然合わない。",
        ),
    },
    ("wearables", "water_resistance"): {
        "en+": (
            "Swims laps with me every morning, no problems.",
            "Wear it in the shower daily and it's fine.",
            "Survived a day of snorkeling without fogging up.",
        ),
        "en-": (
            "Fogged up inside after one swim.",
            "Died after I wore it in the shower.",
            "Water got under the glass on the first pool day.",
        ),
        "ja+": (
            "プールで泳いでも問題なく使えています。",
            "シャワーのときも外さずに使える。",
        ),
        "ja-": (
            "一度泳いだだけで内側が曇った。",
            "お風呂で使ったら動かなくなった。",
        ),
    },
    ("wearables", "app"): {
        "en+": (
            "The companion app syncs in seconds and the charts are clear.",
            "Data shows up on my phone before I've taken my shoes off.",
            "Setup through the phone took two minutes.",
        ),
        "en-": (
            "Syncing fails half the time and I lose workouts.",
            "The phone app is clunky and crashes constantly.",
            "Notifications from my phone arrive late or not at all.",
        ),
        "ja+": (
            "スマホとの同期が速く、グラフも見やすい。",
            "専用アプリが使いやすくて設定も簡単。",
        ),
        "ja-": (
            "アプリとの同期がよく失敗する。",
            "スマホの通知が届かないことが多い。",
            "アプリが頻繁に落ちる。",
        ),
    },
    ("kitchen", "performance"): {  # air fryers and any cooker without a bank of its own
        "en+": (
            "Everything comes out evenly cooked, crispy outside and tender inside.",
            "Heats up in a couple of minutes and holds the temperature.",
            "Fries come out golden with a spoonful of oil.",
            "Reheated pizza tastes better than the first time.",
        ),
        "en-": (
            "Cooks unevenly, burnt on one side and raw on the other.",
            "Takes forever to heat up.",
            "Can't keep a steady temperature, the results are a gamble.",
            "Everything comes out soggy instead of crisp.",
        ),
        "ja+": (
            "ムラなく焼けて、外はカリッと中はふんわり。",
            "すぐに温まって、料理の時間が短くなった。",
            "少ない油でもサクサクに仕上がる。",
        ),
        "ja-": (
            "焼きムラがひどく、片側だけ焦げる。",
            "温まるまでに時間がかかりすぎる。",
            "カリッとならずにべちゃっとする。",
        ),
    },
    ("kitchen", "durability"): {
        "en+": (
            "Used it nearly every day for two years and it's still going.",
            "The motor hasn't slowed down at all after heavy use.",
        ),
        "en-": (
            "The motor burned out after two months.",
            "The lid latch broke in the first week.",
            "The jar cracked the first time I put something hot in it.",
        ),
        "ja+": (
            "二年ほぼ毎日使っていますが、全く問題なし。",
            "モーターがパワフルなまま衰えない。",
        ),
        "ja-": (
            "二ヶ月でモーターが動かなくなった。",
            "フタの留め具がすぐに折れた。",
        ),
    },
    ("kitchen", "size"): {
        "en+": (
            "Compact enough to live on the counter without being in the way.",
            "Fits in my tiny apartment kitchen with room to spare.",
            "Big enough to make dinner for the whole family in one go.",
        ),
        "en-": (
            "Takes up half my counter.",
            "Too small to cook for more than one person.",
            "Doesn't fit under my cabinets.",
        ),
        "ja+": (
            "コンパクトで狭いキッチンでも置き場所に困らない。",
            "家族四人分が一度に作れる大きさ。",
        ),
        "ja-": (
            "思ったより大きくて置き場所に困る。",
            "容量が小さくて二人分も作れない。",
        ),
    },
    ("home", "assembly"): {
        "en+": (
            "Put it together in twenty minutes with the included tool.",
            "Instructions were clear and every hole lined up.",
            "Came mostly assembled, just screw on the legs.",
        ),
        "en-": (
            "Took me an entire afternoon to build and two holes didn't line up.",
            "The instructions are just confusing pictures.",
            "Parts were missing so I couldn't finish putting it together.",
            "You need a second person and a drill, nothing fits on its own.",
        ),
        "ja+": (
            "組み立ては二十分ほどで簡単でした。",
            "説明書が分かりやすく、一人でも組み立てられた。",
        ),
        "ja-": (
            "組み立てに半日かかり、ネジ穴も合わなかった。",
            "説明書が分かりにくくて苦労した。",
            "部品が足りず完成できなかった。",
        ),
    },
    ("home", "effectiveness"): {
        "en+": (
            "The room smells fresh within an hour and my allergies calmed down.",
            "Picks up every bit of pet hair, even from the rug.",
            "Does exactly what it promises, no fuss.",
            "Noticeable difference on day one.",
        ),
        "en-": (
            "Honestly I can't tell if it does anything.",
            "Leaves dust and crumbs behind no matter how many passes.",
            "Didn't make any difference to the room.",
            "Works for a few minutes and then gives up.",
        ),
        "ja+": (
            "部屋の空気が明らかにきれいになった。",
            "ペットの毛もしっかり取れる。",
            "効果がすぐに実感できました。",
        ),
        "ja-": (
            "効果があるのか正直分からない。",
            "何度往復してもゴミが残る。",
            "期待したほどの効果はなかった。",
        ),
    },
    ("shoes", "fit"): {
        "en+": (
            "Ordered my usual size and they fit perfectly out of the box.",
            "Roomy toe box, no pinching anywhere.",
            "Heel stays locked in, no slipping.",
        ),
        "en-": (
            "They run small, I'd go up half a size.",
            "Narrow through the middle, my feet went numb.",
            "My heel slips out with every step.",
            "Way too wide even with the laces pulled tight.",
        ),
        "ja+": (
            "いつものサイズでジャストでした。",
            "つま先にゆとりがあって窮屈さがない。",
        ),
        "ja-": (
            "小さめなのでハーフサイズ上げた方がいい。",
            "幅が狭くて足が痛くなる。",
            "かかとが浮いてパカパカする。",
        ),
    },
    ("shoes", "comfort"): {
        "en+": (
            "Walked all over the city for ten hours and my feet were fine.",
            "Like walking on clouds.",
            "No break-in period, comfortable from the first step.",
            "Plenty of cushioning for long runs.",
        ),
        "en-": (
            "Gave me blisters on the first day.",
            "Hard as a board under the ball of the foot.",
            "My arches ache after an hour of walking.",
        ),
        "ja+": (
            "一日中歩いても足が疲れません。",
            "クッションが効いていて雲の上を歩いているみたい。",
            "履き慣らし不要で最初から快適。",
        ),
        "ja-": (
            "初日から靴擦れができた。",
            "ソールが硬くて長く歩くと足裏が痛い。",
        ),
    },
    ("shoes", "durability"): {
        "en+": (
            "Five hundred miles in and the tread still looks fresh.",
            "Stitching and soles are holding up after a year of daily wear.",
        ),
        "en-": (
            "The sole started peeling off after a month.",
            "Worn a hole through the heel in three months.",
            "The stitching came apart at the toe.",
        ),
        "ja+": (
            "一年履いてもソールがほとんど減っていない。",
            "縫製がしっかりしていて長持ちしそう。",
        ),
        "ja-": (
            "一ヶ月でソールが剥がれてきた。",
            "三ヶ月でかかとに穴が開いた。",
        ),
    },
    ("shoes", "grip"): {
        "en+": (
            "Sticks to wet rocks and slick tiles like glue.",
            "Never slipped once on icy sidewalks.",
            "Confident footing on muddy trails.",
        ),
        "en-": (
            "Slippery as ice on a wet floor.",
            "I nearly fell on the first rainy day.",
            "Zero traction on anything smooth.",
        ),
        "ja+": (
            "雨の日でも滑らず安心して歩ける。",
            "濡れた路面でもしっかり踏ん張れる。",
        ),
        "ja-": (
            "濡れた床でツルツル滑る。",
            "雨の日に転びそうになった。",
        ),
    },
    ("apparel", "fabric"): {
        "en+": (
            "Buttery soft and breathes well on hot days.",
            "Thick, quality material that drapes nicely.",
            "Soft against the skin, not a hint of itch.",
        ),
        "en-": (
            "Scratchy and thin, almost see-through.",
            "Feels like cheap plastic and makes me sweat.",
            "Pills after a couple of wears.",
        ),
        "ja+": (
            "生地がとても柔らかく肌触りが良い。",
            "しっかりした厚みのある素材で高見えする。",
        ),
        "ja-": (
            "生地が薄くて透けそう。",
            "チクチクして着ていられない。",
            "数回着ただけで毛玉ができた。",
        ),
    },
    ("apparel", "washing"): {
        "en+": (
            "Been through the washer a dozen times and still looks brand new.",
            "No shrinking or fading after many washes.",
        ),
        "en-": (
            "Shrank a full size after the first wash.",
            "The color bled all over my other laundry.",
            "Came out of the dryer twisted and misshapen.",
        ),
        "ja+": (
            "何度洗濯しても縮まず、色落ちもしない。",
            "洗濯機で洗っても型崩れしない。",
        ),
        "ja-": (
            "一回洗っただけでワンサイズ縮んだ。",
            "洗濯したら色落ちして他の服に移った。",
        ),
    },
    ("apparel", "warmth"): {
        "en+": (
            "Kept me toasty waiting for the bus at minus ten.",
            "Surprisingly warm for how light it is.",
            "I barely need a sweater underneath in January.",
        ),
        "en-": (
            "The wind goes right through it.",
            "Not nearly warm enough for real winter.",
            "I was shivering on a mild autumn evening.",
        ),
        "ja+": (
            "真冬でもこれ一枚でぽかぽか。",
            "薄いのに驚くほど暖かい。",
        ),
        "ja-": (
            "風を通すので寒い日には向かない。",
            "思ったほど暖かくなかった。",
        ),
    },
    ("outdoor", "weight"): {
        "en+": (
            "So light I forget it's in my pack.",
            "Shaved almost a kilo off my base weight.",
            "Packs down to the size of a water bottle.",
        ),
        "en-": (
            "Way heavier than the listing suggests.",
            "A brick to carry on long hikes.",
            "Too bulky to fit in a daypack.",
        ),
        "ja+": (
            "とても軽くてザックに入れても気にならない。",
            "コンパクトに収納できて持ち運びが楽。",
        ),
        "ja-": (
            "思ったより重くて長い山行には向かない。",
            "かさばってザックに入らない。",
        ),
    },
    ("outdoor", "weatherproof"): {
        "en+": (
            "Stayed bone dry through an all-night downpour.",
            "Wind and sideways rain didn't get in at all.",
            "Water beads right off.",
        ),
        "en-": (
            "Leaked at the seams in the first shower.",
            "Woke up in a puddle after a light rain.",
            "Soaked through within twenty minutes of drizzle.",
        ),
        "ja+": (
            "一晩中の大雨でも中は全く濡れなかった。",
            "強風でもびくともしない。",
        ),
        "ja-": (
            "縫い目から雨漏りした。",
            "小雨でもすぐに中まで染みてきた。",
        ),
    },
    ("outdoor", "setup"): {
        "en+": (
            "Pitched it alone in the dark in five minutes.",
            "Color-coded poles make it foolproof.",
            "Up and ready before my friends finished unpacking.",
        ),
        "en-": (
            "Took two of us half an hour and lots of swearing.",
            "The poles don't match the instructions at all.",
            "Fiddly clips, impossible with cold hands.",
        ),
        "ja+": (
            "一人でも五分で設営できました。",
            "ポールが色分けされていて迷わない。",
        ),
        "ja-": (
            "設営が複雑で二人でも三十分かかった。",
            "説明書が分かりにくく、組み立てに苦労した。",
        ),
    },
    ("beauty", "scent"): {
        "en+": (
            "Smells like fresh citrus and it's gone in a few minutes.",
            "A light, clean fragrance that my partner loves.",
            "Lovely subtle floral note, nothing overpowering.",
        ),
        "en-": (
            "The perfume is so strong it gave me a headache.",
            "Has a weird chemical smell.",
            "Smells like old crayons.",
        ),
        "ja+": (
            "柑橘系の爽やかな香りで癒される。",
            "ほのかに香る程度で上品。",
        ),
        "ja-": (
            "香りがきつくて頭が痛くなった。",
            "薬品のような匂いが気になる。",
        ),
    },
    ("beauty", "skin"): {
        "en+": (
            "My sensitive skin had zero reaction, no redness at all.",
            "My face feels calm and hydrated the next morning.",
            "Cleared up my dry patches within a week.",
        ),
        "en-": (
            "Broke me out in red bumps within two days.",
            "Stung and burned the moment I put it on.",
            "Left my face itchy and tight.",
        ),
        "ja+": (
            "敏感肌でも赤みやかゆみが出なかった。",
            "翌朝の肌がもちもちになる。",
        ),
        "ja-": (
            "使ったら肌が荒れてしまった。",
            "塗った瞬間にピリピリしみた。",
        ),
    },
    ("beauty", "longevity"): {
        "en+": (
            "Still looks fresh at the end of a twelve-hour shift.",
            "Doesn't budge through lunch, coffee and a workout.",
            "One application lasts me the whole day.",
        ),
        "en-": (
            "Gone by lunchtime.",
            "Have to reapply every couple of hours.",
            "Slides off my face by mid-afternoon.",
        ),
        "ja+": (
            "朝塗ったら夜まで崩れない。",
            "一日中化粧直しいらず。",
        ),
        "ja-": (
            "昼にはもう落ちてしまう。",
            "数時間ごとに塗り直しが必要。",
        ),
    },
    ("beauty", "texture"): {
        "en+": (
            "Sinks in instantly and leaves no film.",
            "Silky, lightweight and never greasy.",
            "Blends out beautifully with my fingers.",
        ),
        "en-": (
            "Sits on top of the skin like a layer of oil.",
            "Thick and sticky, my hair gets stuck to my face.",
            "Goes on streaky and clumps.",
        ),
        "ja+": (
            "すっと馴染んでベタつかない。",
            "軽いテクスチャーで伸びが良い。",
        ),
        "ja-": (
            "ベタベタしていつまでも乾かない。",
            "ムラになりやすく伸びが悪い。",
        ),
    },
    ("beauty", "packaging"): {
        "en+": (
            "The pump dispenses just the right amount and nothing is wasted.",
            "Travel-friendly bottle that has never leaked in my bag.",
        ),
        "en-": (
            "The pump stopped working with half the bottle left.",
            "The cap cracked and it leaked all over my bag.",
            "Can't get the last third out of the tube.",
        ),
        "ja+": (
            "ポンプ式で使いやすく、最後まで出し切れる。",
            "容器がしっかりしていて持ち歩いても漏れない。",
        ),
        "ja-": (
            "ポンプが途中で壊れて出なくなった。",
            "キャップが割れて中身が漏れた。",
        ),
    },
}

# Subcategory phrase banks, checked first: (subcategory, aspect).
_SUBCATEGORY: dict[tuple[str, str], Bank] = {
    ("mice", "comfort"): {
        "en+": (
            "My wrist stopped aching after the first week with it.",
            "Fits my palm perfectly, I can work all day.",
            "The shape is so natural my hand just rests on it.",
        ),
        "en-": (
            "Too small for my hand, my fingers cramp.",
            "My wrist hurts after an afternoon with it.",
            "Awkward shape, the side buttons dig into my thumb.",
        ),
        "ja+": ("手にしっくり馴染み、一日使っても疲れない。", "手首の痛みがなくなりました。"),
        "ja-": ("小さすぎて手が疲れる。", "長時間使うと手首が痛くなる。"),
    },
    ("chargers", "performance"): {
        "en+": (
            "Takes my phone from nearly empty to full before I finish breakfast.",
            "Charges my laptop and phone at full speed at the same time.",
            "Noticeably quicker than the brick that came with my phone.",
        ),
        "en-": (
            "Charges painfully slowly, slower than my old one.",
            "My phone barely gains anything in an hour.",
            "Gets very hot and keeps stopping and restarting.",
        ),
        "ja+": ("あっという間に満充電になる。", "スマホとノートPCを同時に急速充電できる。"),
        "ja-": ("充電がとても遅い。", "本体が熱くなって充電が止まることがある。"),
    },
    ("phone cases", "durability"): {
        "en+": (
            "Dropped my phone on concrete twice, not a scratch on it.",
            "Still looks new after a year in my pocket with my keys.",
            "Saved my screen when it flew off the bike.",
        ),
        "en-": (
            "The corner cracked after one small drop.",
            "Turned yellow and started peeling within weeks.",
            "My phone screen shattered even with this on.",
        ),
        "ja+": ("何度落としてもスマホに傷一つない。", "一年使っても黄ばまず綺麗なまま。"),
        "ja-": ("一度落としただけで角が割れた。", "数週間で黄ばんできた。"),
    },
    ("coffee makers", "performance"): {
        "en+": (
            "Brews a rich, hot cup in under a minute.",
            "The espresso comes out with a thick crema every time.",
            "Coffee tastes like my favourite café's.",
        ),
        "en-": (
            "The coffee comes out lukewarm and watery.",
            "Takes ages to brew a single cup.",
            "Everything tastes burnt and bitter.",
        ),
        "ja+": ("香りの良いコーヒーがすぐに淹れられる。", "カフェのような味で毎朝の楽しみ。"),
        "ja-": ("コーヒーがぬるくて薄い。", "苦みが強く焦げたような味になる。"),
    },
    ("rice cookers", "performance"): {
        "en+": (
            "Every grain comes out fluffy and separate.",
            "Brown rice is finally tender instead of chewy.",
            "Keeps the rice warm and moist for hours.",
        ),
        "en-": (
            "The bottom layer always burns.",
            "Rice comes out mushy no matter how much water I use.",
            "Keep-warm dries everything out within an hour.",
        ),
        "ja+": ("ご飯がふっくらつやつやに炊き上がる。", "保温しても味が落ちない。"),
        "ja-": ("底がいつも焦げてしまう。", "水加減を変えてもべちゃっとなる。"),
    },
    ("blenders", "performance"): {
        "en+": (
            "Crushes ice and frozen fruit into a silky smoothie.",
            "Turns kale and nuts into something perfectly smooth.",
            "Makes soup from raw veg in a couple of minutes.",
        ),
        "en-": (
            "Leaves chunks no matter how long I run it.",
            "Stalls as soon as I add anything frozen.",
            "Can't handle ice at all.",
        ),
        "ja+": ("氷も冷凍フルーツもなめらかに砕けます。", "野菜スムージーがあっという間にできる。"),
        "ja-": ("いつまで回しても塊が残る。", "冷凍フルーツを入れると止まってしまう。"),
    },
    ("kettles", "performance"): {
        "en+": (
            "Boils a full pot in about three minutes.",
            "The temperature presets are spot on for green tea.",
            "Water is ready before I've found a mug.",
        ),
        "en-": (
            "Takes forever to come to a boil.",
            "Switches off before the water is actually boiling.",
            "Leaves a plasticky taste in the water.",
        ),
        "ja+": ("すぐにお湯が沸く。", "温度設定が正確でお茶がおいしく入る。"),
        "ja-": ("お湯が沸くまでに時間がかかる。", "お湯にプラスチックの臭いが移る。"),
    },
    ("knives", "performance"): {
        "en+": (
            "Glides through tomatoes like they're butter.",
            "Razor sharp out of the box, paper-thin onion slices.",
            "Holds its edge for months of daily prep.",
        ),
        "en-": (
            "Dull out of the box, it squashes tomatoes.",
            "Lost its edge within a couple of weeks.",
            "Tears herbs instead of slicing them.",
        ),
        "ja+": ("トマトがすっと切れる切れ味。", "玉ねぎも薄く綺麗に切れる。"),
        "ja-": ("最初から切れ味が悪い。", "数週間で切れなくなった。"),
    },
    ("knives", "durability"): {
        "en+": ("A year of daily use and not a single chip or spot of rust.", "The handle is still tight and solid."),
        "en-": (
            "Rust spots appeared after the first wash.",
            "The tip snapped off cutting squash.",
            "The blade chipped within a month.",
        ),
        "ja+": ("一年使っても錆も刃こぼれもない。",),
        "ja-": ("すぐに錆びてきた。", "一ヶ月で刃こぼれした。"),
    },
    ("vacuums", "effectiveness"): {
        "en+": (
            "Picks up every bit of pet hair, even from the rug.",
            "Gets the crumbs out of corners my old one never reached.",
            "The dust bin fills up embarrassingly fast on the first pass.",
        ),
        "en-": (
            "Leaves dust and crumbs behind no matter how many passes.",
            "Just pushes cat litter around.",
            "Suction drops off after a few minutes.",
        ),
        "ja+": ("ペットの毛もしっかり吸い取る。", "部屋の隅のゴミまでよく取れる。"),
        "ja-": ("何度往復してもゴミが残る。", "すぐに吸引力が落ちる。"),
    },
    ("air purifiers", "effectiveness"): {
        "en+": (
            "The room smells fresh within an hour and my allergies calmed down.",
            "Cooking smells are gone in minutes.",
            "I wake up without a stuffy nose for the first time in years.",
        ),
        "en-": (
            "Honestly I can't tell if it does anything.",
            "The air quality reading never changes.",
            "Still sneezing all night with it on high.",
        ),
        "ja+": ("部屋の空気が明らかにきれいになった。", "花粉の季節でもくしゃみが減った。"),
        "ja-": ("効果があるのか正直分からない。", "においが全然取れない。"),
    },
    ("desk lamps", "effectiveness"): {
        "en+": (
            "Even, flicker-free light across the whole desk.",
            "My eyes don't feel strained after late nights anymore.",
            "The warm setting is perfect for reading in bed.",
        ),
        "en-": (
            "Too dim to read by.",
            "Flickers on the lowest setting and gives me a headache.",
            "Only lights up a small circle, the rest of the desk is dark.",
        ),
        "ja+": ("ちらつきがなく、目が疲れにくい。", "手元全体を明るく照らしてくれる。"),
        "ja-": ("暗くて本が読みにくい。", "明るさを下げるとちらつく。"),
    },
    ("pillows", "effectiveness"): {
        "en+": (
            "My neck pain was gone after a week.",
            "I finally sleep through the night.",
            "Supportive without being hard, perfect for side sleeping.",
        ),
        "en-": (
            "Woke up with a stiff neck every morning.",
            "Way too firm, like sleeping on a brick.",
            "Too flat to support my head at all.",
        ),
        "ja+": ("首の痛みがなくなり、朝までぐっすり。", "横向きでも寝やすい高さ。"),
        "ja-": ("朝起きると首が痛い。", "硬すぎて眠れない。"),
    },
    ("pillows", "durability"): {
        "en+": ("Still fluffy after a year of nightly use.", "Keeps its shape after plenty of washes."),
        "en-": ("Went flat as a pancake within a month.", "The seams split after a few weeks."),
        "ja+": ("一年使ってもへたらない。",),
        "ja-": ("一ヶ月でぺちゃんこになった。", "数週間で縫い目がほつれた。"),
    },
    ("smart plugs", "effectiveness"): {
        "en+": (
            "The schedules just work, lights come on every evening on time.",
            "Set up in the app in two minutes and works with voice control.",
            "Responds instantly when I switch it from my phone.",
        ),
        "en-": (
            "Drops off the wifi every few days.",
            "Schedules randomly don't fire.",
            "The app takes ten seconds to switch anything.",
        ),
        "ja+": ("アプリからすぐに操作でき、タイマーも正確。", "音声操作との連携も簡単。"),
        "ja-": ("Wi-Fiからすぐに切断される。", "タイマーが動作しないことがある。"),
    },
    ("sleeping bags", "warmth"): {
        "en+": (
            "Slept warm on a frosty night below freezing.",
            "Toasty all night even when the tent iced over.",
            "Cozy down to the rated temperature, maybe lower.",
        ),
        "en-": (
            "I was shivering by two in the morning at ten degrees.",
            "Nowhere near its temperature rating.",
            "Cold spots along the zip kept waking me up.",
        ),
        "ja+": ("氷点下の夜でも朝まで暖かく眠れた。", "表示温度どおりの暖かさ。"),
        "ja-": ("夜中に寒くて目が覚めた。", "表示温度よりかなり寒く感じる。"),
    },
    ("sleeping bags", "comfort"): {
        "en+": ("Roomy enough to sleep on my side without feeling trapped.", "Soft lining, feels like my bed at home."),
        "en-": ("So narrow I couldn't turn over.", "The zip snags constantly and the fabric feels clammy."),
        "ja+": ("中が広く寝返りも楽。",),
        "ja-": ("窮屈で寝返りが打てない。",),
    },
    ("water bottles", "performance"): {
        "en+": (
            "Ice is still rattling around after a full day in a hot car.",
            "Coffee stays hot until mid-afternoon.",
            "Never leaked a drop in my bag.",
        ),
        "en-": (
            "Water is lukewarm within a couple of hours.",
            "The lid leaks all over my bag.",
            "Sweats through and soaks everything.",
        ),
        "ja+": ("夏の車内でも一日中氷が残っている。", "バッグに入れても全く漏れない。"),
        "ja-": ("数時間でぬるくなる。", "フタから水が漏れてバッグが濡れた。"),
    },
    ("camping stoves", "performance"): {
        "en+": (
            "Boils half a litre in about three minutes, even in the wind.",
            "Simmers gently enough to cook real meals, not just boil water.",
            "Lights first time, every time.",
        ),
        "en-": (
            "Any breeze blows the flame out.",
            "Takes ages to boil water at altitude.",
            "The igniter stopped working after a few trips.",
        ),
        "ja+": ("風があってもすぐにお湯が沸く。", "火力調整がしやすく料理もできる。"),
        "ja-": ("少しの風で火が消える。", "点火装置がすぐに壊れた。"),
    },
    ("hair dryers", "performance"): {
        "en+": (
            "Dries my thick hair in half the time.",
            "Leaves my hair smooth and shiny, not frizzy.",
            "Plenty of power on the low heat setting.",
        ),
        "en-": (
            "Takes forever to dry anything.",
            "Blows scorching air and my hair comes out frizzy.",
            "Barely any airflow.",
        ),
        "ja+": ("髪がすぐに乾いてドライヤー時間が半分に。", "乾かした後の髪がさらさら。"),
        "ja-": ("なかなか乾かない。", "熱すぎて髪がパサパサになる。"),
    },
    ("hair dryers", "weight"): {
        "en+": ("Light enough that my arm doesn't get tired.", "Compact and easy to pack for trips."),
        "en-": ("So heavy my arm aches before I'm done.", "Bulky, doesn't fit in my drawer."),
        "ja+": ("軽くて腕が疲れない。",),
        "ja-": ("重くて腕が疲れる。",),
    },
    ("shavers", "performance"): {
        "en+": (
            "Shaves as close as a blade without the nicks.",
            "One pass and my neck is smooth.",
            "Handles three days of stubble without tugging.",
        ),
        "en-": (
            "Pulls hairs instead of cutting them.",
            "Needs several passes and still misses spots.",
            "Leaves a patchy shave.",
        ),
        "ja+": ("深剃りできて剃り残しがない。", "一度で綺麗に剃れる。"),
        "ja-": ("ひげが引っかかって痛い。", "何度も往復しないと剃れない。"),
    },
    ("shampoo", "performance"): {
        "en+": (
            "My hair is soft and shiny, no conditioner needed.",
            "Finally no more itchy flakes.",
            "Lathers richly and rinses clean.",
        ),
        "en-": (
            "Leaves my hair greasy by lunchtime.",
            "My hair feels like straw after washing.",
            "Barely lathers, I need half the bottle.",
        ),
        "ja+": ("髪がしっとりまとまる。", "泡立ちが良くすっきり洗える。"),
        "ja-": ("洗った後に髪がきしむ。", "泡立ちが悪くすぐになくなる。"),
    },
    ("toothbrushes", "performance"): {
        "en+": (
            "My teeth feel dentist-clean every morning.",
            "My dentist noticed less plaque at my last checkup.",
            "The timer makes sure I brush properly.",
        ),
        "en-": (
            "Doesn't feel like it cleans any better than a manual one.",
            "The bristles splay out after a couple of weeks.",
            "Weak vibration that barely tickles.",
        ),
        "ja+": ("歯医者帰りのようなつるつる感。", "歯垢が減ったと歯医者に言われた。"),
        "ja-": ("手磨きと変わらない気がする。", "振動が弱い。"),
    },
}


_OPENERS = {
    "en": (
        "",
        "",
        "Bought this last month.",
        "Update after a few weeks:",
        "Got this as a gift.",
        "Second one I've owned.",
        "Honest review:",
        "Picked up the {name} on sale.",
        "I've had the {name} for a while now.",
        "Replaced my old one with the {name}.",
    ),
    "ja": (
        "",
        "",
        "先月購入しました。",
        "数週間使ってみての感想です。",
        "プレゼント用に買いました。",
        "{name}を購入。",
        "{name}を使い始めて一ヶ月。",
        "買い替えで購入しました。",
    ),
}
_CLOSERS = {
    "en+": ("", "", "Would buy again.", "Highly recommend.", "Happy with it.", "No regrets.", "Five stars from me."),
    "en-": ("", "", "Returning it.", "Wouldn't recommend.", "Disappointed.", "Look elsewhere.", "Not worth the money."),
    "en~": ("", "Mixed feelings overall.", "Good and bad.", "It's okay for the price.", "Decent, not great."),
    "ja+": ("", "", "リピートします。", "買ってよかったです。", "おすすめです。", "大満足。"),
    "ja-": ("", "", "返品しました。", "おすすめしません。", "残念です。", "二度と買わない。"),
    "ja~": ("", "一長一短です。", "値段相応かな。", "まあまあです。"),
}
_JOIN = {
    ("en", True): (" ", " Also, ", " On top of that, ", " And "),
    ("en", False): (" That said, ", " But ", " On the other hand, ", " However, "),
    ("ja", True): ("", "それに、", "また、"),
    ("ja", False): ("ただ、", "一方で、", "でも、", "しかし、"),
}


def bank(product: Product, aspect: str) -> Bank:
    """The phrases for `aspect` in reviews of `product`: its subcategory's, its category's, or generic."""
    subcategory = product.subcategory.strip().lower()
    found = (
        _SUBCATEGORY.get((subcategory, aspect))
        or _SPECIFIC.get((product.category, aspect))
        or _GENERIC.get(aspect)
    )
    if found is None:
        raise KeyError(f"no phrases for {product.category}/{subcategory}/{aspect}")
    return found


def _lower_first(text: str) -> str:
    """Lower-case a sentence's first letter to continue another sentence, except "I" and acronyms."""
    first_word = text.split(" ", 1)[0]
    if first_word in ("I", "I'm", "I've", "I'd") or first_word[1:2].isupper():
        return text
    return text[:1].lower() + text[1:]


def _review_text(
    rng: random.Random, product: Product, lang: str, said: list[tuple[str, bool]]
) -> str:
    name = (product.name_ja or product.name) if lang == "ja" else product.name
    parts: list[str] = []
    opener = rng.choice(_OPENERS[lang])
    for index, (aspect, positive) in enumerate(said):
        phrase = rng.choice(bank(product, aspect)[f"{lang}{'+' if positive else '-'}"])
        if index == 0:
            parts.append(phrase)
            continue
        joiner = rng.choice(_JOIN[(lang, positive == said[0][1])])
        if lang == "en" and joiner.strip():
            phrase = _lower_first(phrase)
        parts.append(joiner + phrase)
    sentiments = {positive for _, positive in said}
    mood = "~" if len(sentiments) > 1 else ("+" if True in sentiments else "-")
    closer = rng.choice(_CLOSERS[f"{lang}{mood}"])
    sep = "" if lang == "ja" else " "
    pieces = [opener.format(name=name), "".join(parts), closer]
    return sep.join(p for p in pieces if p).strip()


def _rating(rng: random.Random, said: list[tuple[str, bool]]) -> int:
    sentiments = [positive for _, positive in said]
    if all(sentiments):
        return rng.choice((4, 5, 5))
    if not any(sentiments):
        return rng.choice((1, 1, 2))
    return rng.choice((2, 3, 3, 4))


def generate_reviews(
    products: Sequence[Product], *, seed: int = 7, per_product: tuple[int, int] = (12, 22)
) -> list[Review]:
    """Reviews for every product: `per_product` (inclusive range) each, deterministic for a given seed.

    Each review talks about one aspect (60 %) or two (40 %) of its product's category, mostly positive
    (about two in three), in English or, about 30 % of the time, Japanese.
    """
    low, high = per_product
    if low < 1 or high < low:
        raise ValueError("per_product must be (low, high) with 1 <= low <= high")
    rng = random.Random(seed)
    start = date(2025, 1, 1)
    reviews: list[Review] = []
    for product in products:
        aspects = aspects_of(product)
        # Shipping is talked about less than the product itself.
        weights = [0.4 if a == "shipping" else 1.0 for a in aspects]
        # Each product leans one way, so averages differ between products.
        lean = rng.uniform(0.45, 0.85)
        for n in range(rng.randint(low, high)):
            lang = "ja" if rng.random() < JA_SHARE else "en"
            count = 2 if rng.random() < 0.4 else 1
            chosen: list[str] = []
            while len(chosen) < count:
                aspect = rng.choices(aspects, weights)[0]
                if aspect not in chosen:
                    chosen.append(aspect)
            said = [(aspect, rng.random() < lean) for aspect in chosen]
            reviews.append(
                Review(
                    id=f"{product.id[:56]}-r{n + 1:02d}",
                    product_id=product.id,
                    rating=_rating(rng, said),
                    text=_review_text(rng, product, lang, said),
                    lang=lang,
                    created=start + timedelta(days=rng.randint(0, 364)),
                    aspects=[aspect for aspect, _ in said],
                )
            )
    return reviews
