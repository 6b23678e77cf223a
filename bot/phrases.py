"""What the core says to users on its own (agents word their answers themselves): one table, each
line in English and Japanese. `say(key, language, **values)`; a Japanese user is one whose message
is in Japanese, else whose locale is (`bot.locale.language_for`)."""

from __future__ import annotations

from typing import Any

from bot.locale import Language

TEXTS: dict[str, dict[Language, str]] = {
    # refused input (ConversationRuntime._check_input)
    "empty_message": {"en": "Your message is empty. Type a request, e.g. `/hotel Paris next weekend`, or `/help`.",
                      "ja": "メッセージが空です。`/hotel 京都 来週末` のように依頼を書くか、`/help` と送ってください。"},
    "message_too_long": {"en": "Your message is too long ({size} KB); the limit is {limit} KB. Attach it as a file instead.",
                         "ja": "メッセージが長すぎます（{size} KB）。上限は {limit} KB です。ファイルとして添付してください。"},
    "agent_message_too_long": {
        "en": "`{command}` takes messages of up to {limit:,} characters; yours has {size:,}. Please send a shorter request.",
        "ja": "`{command}` へのメッセージは {limit:,} 文字までです（このメッセージは {size:,} 文字）。依頼を短くして送ってください。",
    },
    "binary_message": {"en": "Your message contains binary data; please send plain text.",
                       "ja": "メッセージにバイナリデータが含まれています。テキストで送ってください。"},
    "file_too_large": {"en": "`{name}` is too large ({size} KB); the limit is {limit} KB.",
                       "ja": "`{name}` が大きすぎます（{size} KB）。上限は {limit} KB です。"},
    # the runtime's own answers and notes
    "unknown_command": {"en": "I don't know the command `/{command}`. Try `/help`.",
                        "ja": "`/{command}` というコマンドはありません。`/help` をお試しください。"},
    "conversation_reset": {"en": "Conversation reset. What would you like to do next?",
                           "ja": "会話をリセットしました。次は何をしましょうか？"},
    "interrupted": {"en": "Your previous request was interrupted by a restart; picking up from where it stopped.",
                    "ja": "前回の依頼は再起動で中断されました。止まったところから続けます。"},
    "resumed_footer": {"en": "\n\n_(Resumed after a restart: this request was interrupted and picked up where it stopped.)_",
                       "ja": "\n\n_（再起動で中断された依頼を、止まったところから再開しました。）_"},
    "went_round": {"en": "I went round in circles on that one and stopped. Please rephrase.",
                   "ja": "堂々めぐりになったため止めました。言い換えてください。"},
    "internal_error": {"en": "Something went wrong on our side. Your conversation is intact; please try again.",
                       "ja": "こちら側で問題が起きました。会話はそのまま残っています。もう一度お試しください。"},
    "planner_footer": {
        "en": ("\n\n_(The language model did not make the tool calls this request needs: it answered without "
               "them, or its call was cut off at the output limit. Concierge's built-in planner chose them "
               "instead. Answers are better with a model that supports tool calling.)_"),
        "ja": ("\n\n_（言語モデルがこの依頼に必要なツール呼び出しをしなかった（または出力の上限で途切れた）ため、"
               "Concierge の組み込みプランナーが代わりに選びました。ツール呼び出しに対応したモデルの方が良い回答になります。）_"),
    },
    # what every platform's front end says (bot/platform.py, bot/render.py)
    "working": {"en": "Working on it…", "ja": "対応しています…"},
    "reset_done": {"en": "Starting a fresh conversation.", "ja": "新しい会話を始めます。"},
    "how_to_continue": {
        "en": ("Every command starts a thread; reply there to continue (no mention needed). "
               "You can also mention me anywhere, or write to me directly."),
        "ja": ("コマンドごとにスレッドが始まります。続きはそのスレッドに返信してください（メンション不要）。"
               "どこでもメンションするか、ダイレクトメッセージでも話しかけられます。"),
    },
    "greeting": {"en": "Hi! {help}\nAsk away, here in this thread.",
                 "ja": "こんにちは！{help}\nこのスレッドで何でも聞いてください。"},
    "try_these": {"en": "Try one of these:", "ja": "こちらを試してみてください:"},
    "reset_elsewhere": {
        "en": ("Each command starts its own thread, so there is nothing to reset here. "
               "In a direct message with me, `/reset` starts a fresh conversation."),
        "ja": ("コマンドごとにスレッドが始まるので、ここでリセットするものはありません。"
               "ダイレクトメッセージでは `/reset` で新しい会話を始められます。"),
    },
    "files_lost": {
        "en": ("A restart stopped your message with an attached file before I could read the file. "
               "Please send it again."),
        "ja": "添付ファイルのあるメッセージを、ファイルを読む前に再起動で中断してしまいました。もう一度送ってください。",
    },
}


def say(key: str, language: Language = "en", **values: Any) -> str:
    return TEXTS[key][language].format(**values)
