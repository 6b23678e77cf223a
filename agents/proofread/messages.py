"""Japanese wording for the checkers that write their messages in English (structure, link,
markdown_format, code_quality, privacy, pymarkdownlnt), keyed by rule id.

Each entry maps an English message, with `{name}` where the checker puts a value, to its Japanese
form. A value is itself translated when it matches a FRAGMENTS entry (a URL problem, a kind of
secret); otherwise it is kept as written. A message no entry matches stays in English."""

from __future__ import annotations

import re
from functools import lru_cache

_SECRET = {
    "The article contains {what} ({shown}).": "記事に{what}（{shown}）が含まれています。",
    "The article contains {what}.": "記事に{what}が含まれています。",
    "Remove it and replace it with a placeholder such as YOUR_API_KEY, then revoke/rotate the credential: it may "
    "already have been copied.":
        "削除して YOUR_API_KEY のようなプレースホルダーに置き換え、その認証情報を無効化・再発行してください。"
        "すでにコピーされているおそれがあります。",
    "Anything published in an article is public and scraped by bots within minutes.":
        "記事に載せたものはすべて公開され、数分のうちにボットに収集されます。",
}
_SYNTAX = {
    "{language} syntax error: {message}": "{language} の構文エラー: {message}",
    "Mark the block as jsonc, or remove the comments/ellipses.":
        "コードブロックを jsonc にするか、コメントや省略記号を削除してください。",
    "Fix the {language} so it parses; readers copy code blocks as they are.":
        "{language} を構文として正しく直してください。読者はコードをそのままコピーします。",
    "The {language} code in this block does not parse.": "このブロックの {language} のコードは構文解析できません。",
    "Python 2 code: the print statement ({where}) is a syntax error in Python 3.":
        "Python 2 のコードです: print 文（{where}）は Python 3 では構文エラーになります。",
    "Write print(...) so the code runs on Python 3, or say which Python the article is for.":
        "Python 3 で動くように print(...) と書くか、記事がどの Python 向けかを書いてください。",
    "Python 3 rejects the print statement; a reader who copies the code today gets a SyntaxError.":
        "Python 3 は print 文を受け付けないため、今コードをコピーした読者には SyntaxError になります。",
}
_COUNT = {
    "The article has no {key}.": "記事に {key} がありません。",
    "Add 1–{n} {key}, e.g. {example}.": "{key} を1〜{n}個追加してください（例: {example}）。",
    "{platform} uses {key} for discovery and requires at least one.":
        "{platform} は {key} を記事の発見に使い、一つ以上が必要です。",
    "{platform} uses {key} for discovery.": "{platform} は {key} を記事の発見に使います。",
    "{n} {key}; {platform} allows at most {limit}.": "{key} が{n}個あります。{platform} では{limit}個までです。",
    "Keep the {limit} most relevant {key}.": "関連の深い {key} を{limit}個に絞ってください。",
    "{platform} refuses to publish an article with more than {limit} {key}.":
        "{platform} は {key} が{limit}個を超える記事を公開しません。",
}

# pymarkdownlnt's rules: (problem, suggestion, reason) in English and Japanese. The checker adds
# the linter's own detail ("[Expected: h2; Actual: h3]") after the problem.
_LINTER: dict[str, tuple[tuple[str, str, str], tuple[str, str, str]]] = {
    "md001": (("Heading level jumps by more than one.", "Use the next heading level (e.g. ## then ###), not a jump.",
               "Skipped levels break the outline and the table of contents Zenn and Qiita build from headings."),
              ("見出しのレベルが二段以上飛んでいます。", "一段ずつ下げてください（例: ## の次は ###）。",
               "レベルが飛ぶとアウトラインが崩れ、Zenn や Qiita が見出しから作る目次も崩れます。")),
    "md004": (("Unordered list markers are not consistent.", "Use one list marker (- is usual) throughout.",
               "Mixed markers look careless and can start a new list unexpectedly."),
              ("箇条書きの記号が統一されていません。", "記号を一つにそろえてください（ふつうは -）。",
               "記号が混ざると雑に見え、意図せず別のリストが始まることもあります。")),
    "md005": (("List items at the same level are indented differently.",
               "Indent items of the same level by the same amount.",
               "Uneven indentation can nest items under the wrong parent."),
              ("同じ階層のリスト項目のインデントがそろっていません。", "同じ階層の項目は同じだけインデントしてください。",
               "インデントがずれると、項目が意図しない親の下に入ることがあります。")),
    "md011": (("Reversed link syntax: (text)[url] instead of [text](url).", "Write links as [text](url).",
               "The reversed form renders as plain text, not a link."),
              ("リンクの記法が逆です: [text](url) ではなく (text)[url] になっています。", "リンクは [テキスト](URL) と書いてください。",
               "逆の形はリンクにならず、ただの文字として表示されます。")),
    "md012": (("Several blank lines in a row.", "Keep one blank line between blocks.",
               "Extra blank lines add nothing and make the source harder to edit."),
              ("空行が連続しています。", "ブロックの間の空行は一行にしてください。",
               "余分な空行は何の役にも立たず、原稿を編集しにくくします。")),
    "md018": (("No space after the # of a heading: it renders as plain text.", "Add a space after the #: `## 見出し`.",
               "Without the space, Zenn and Qiita show the # characters as text."),
              ("見出しの # の後ろに空白がないため、ただの文字として表示されます。", "# の後ろに空白を入れてください: `## 見出し`",
               "空白がないと、Zenn や Qiita は # をそのまま文字として表示します。")),
    "md019": (("Several spaces after the # of a heading.", "Use a single space after the #.",
               "Extra spaces are harmless but untidy in the source."),
              ("見出しの # の後ろに空白が複数あります。", "# の後ろの空白は一つにしてください。",
               "害はありませんが、原稿が雑に見えます。")),
    "md023": (("Heading is indented: it may not render as a heading.", "Start the heading at the beginning of the line.",
               "An indented # line may render as text or as part of a list."),
              ("見出しがインデントされているため、見出しとして表示されないことがあります。", "見出しは行頭から書いてください。",
               "インデントされた # の行は、文字やリストの一部として表示されることがあります。")),
    "md027": (("Several spaces after the > of a blockquote.", "Use a single space after >.",
               "Extra spaces after > are untidy and can turn the quote into code."),
              ("引用の > の後ろに空白が複数あります。", "> の後ろの空白は一つにしてください。",
               "> の後ろの余分な空白は雑に見え、引用がコードになってしまうこともあります。")),
    "md028": (("Blank line inside a blockquote splits it in two.", "Remove the blank line or start each quote with >.",
               "The blank line ends the quote; the next > starts a second one."),
              ("引用の中の空行で、引用が二つに分かれています。", "空行を削除するか、その行も > で始めてください。",
               "空行で引用が終わり、次の > から別の引用が始まります。")),
    "md029": (("Ordered list numbering is inconsistent.", "Number the items 1. 2. 3. (or all 1.).",
               "Readers see the numbers in the source; inconsistent numbering confuses them."),
              ("番号付きリストの番号がそろっていません。", "1. 2. 3. と振るか、すべて 1. にしてください。",
               "原稿を読む人には番号がそのまま見えるため、ばらばらだと混乱します。")),
    "md030": (("Unusual spacing after a list marker.", "Use one space after the list marker.",
               "Unusual spacing can change how the list nests."),
              ("リスト記号の後ろの空白の数が普通ではありません。", "リスト記号の後ろの空白は一つにしてください。",
               "空白の数によってリストの入れ子が変わることがあります。")),
    "md031": (("Code fence not surrounded by blank lines.", "Add a blank line before and after the code fence.",
               "Some renderers need the blank lines to recognise the fence."),
              ("コードブロックの前後に空行がありません。", "コードブロックの前後に空行を入れてください。",
               "空行がないとコードブロックとして認識しない表示環境があります。")),
    "md036": (("Emphasis used instead of a heading.", "Use a heading (##) instead of a bold line.",
               "A bold line is not part of the outline or the table of contents."),
              ("見出しの代わりに強調が使われています。", "太字の行ではなく見出し（##）を使ってください。",
               "太字の行はアウトラインにも目次にも入りません。")),
    "md037": (("Spaces inside emphasis markers: the emphasis will not render.",
               "Remove the spaces just inside the * or ** markers.",
               "CommonMark does not treat * with inner spaces as emphasis."),
              ("強調記号の内側に空白があるため、強調されません。", "* や ** のすぐ内側の空白を削除してください。",
               "CommonMark では、内側に空白のある * は強調として扱われません。")),
    "md038": (("Spaces inside a code span.", "Remove the spaces just inside the backticks.",
               "Spaces inside backticks become part of the code."),
              ("インラインコードの内側に空白があります。", "バッククォートのすぐ内側の空白を削除してください。",
               "バッククォートの内側の空白はコードの一部になります。")),
    "md039": (("Spaces inside link text.", "Remove the spaces just inside the brackets.",
               "Spaces inside the brackets become part of the underlined text."),
              ("リンクテキストの内側に空白があります。", "角括弧のすぐ内側の空白を削除してください。",
               "角括弧の内側の空白は、下線付きのリンクテキストの一部になります。")),
    "md046": (("Indented code block where the article uses fenced blocks.",
               "Use a fenced code block (```) with a language.",
               "Indented blocks cannot carry a language, so they get no highlighting."),
              ("記事ではフェンス（```）のコードブロックを使っているのに、インデントのコードブロックがあります。",
               "言語名を付けたフェンスのコードブロック（```）にしてください。",
               "インデントのコードブロックには言語名を付けられないため、ハイライトされません。")),
    "md055": (("Table rows use leading/trailing pipes inconsistently.", "Use leading and trailing pipes on every row.",
               "Consistent pipes make tables easier to edit and avoid mis-parsed rows."),
              ("表の行によって、先頭と末尾の | の有無が違います。", "すべての行の先頭と末尾に | を付けてください。",
               "| をそろえると表を編集しやすく、行の読み違いも防げます。")),
    "md056": (("Table row has a different number of cells from the header.", "Give every row as many cells as the header.",
               "A short row gets empty cells at its end and extra cells are dropped: a cell left out in the middle "
               "puts the ones after it in the wrong column."),
              ("表の行のセルの数が見出し行と違います。", "すべての行のセルの数を見出し行に合わせてください。",
               "足りない行は末尾に空のセルが補われ、多いセルは捨てられます。途中のセルが抜けていると、後ろのセルが別の列に入ります。")),
    "md058": (("Table not surrounded by blank lines.", "Add a blank line before and after the table.",
               "A table that touches a paragraph may not be recognised as a table."),
              ("表の前後に空行がありません。", "表の前後に空行を入れてください。",
               "段落と接した表は、表として認識されないことがあります。")),
    "md059": (("Link text does not describe the target (\"click here\", \"link\").",
               "Use link text that names the target page.",
               "Screen readers list links by their text; “here” says nothing."),
              ("リンクテキストがリンク先を説明していません（「こちら」「リンク」など）。",
               "リンク先のページがわかるテキストにしてください。",
               "スクリーンリーダーはリンクをテキストで読み上げるため、「こちら」では何も伝わりません。")),
}

MESSAGES: dict[str, dict[str, str]] = {
    # --- markdown_format ---
    "unclosed-fence": {
        "The code block opened with {fence} on line {line} is never closed.":
            "{line}行目の {fence} で始まるコードブロックが閉じられていません。",
        "Add a closing {fence} line where the code ends.": "コードの終わりに閉じの {fence} の行を追加してください。",
        "Everything after an unclosed fence renders as code, hiding the rest of the article.":
            "閉じられていないコードブロックより後ろはすべてコードとして表示され、記事の残りが隠れてしまいます。",
        "The code block opened on line {line} is never closed: {fence} followed by a language on line {tagged} opens nothing and closes nothing.":
            "{line}行目で始まるコードブロックが閉じられていません。{tagged}行目の言語名付きの {fence} は閉じにも開きにもなりません。",
        "Write the closing fence as a bare {fence}, without the language.": "閉じの {fence} は言語名を付けずに書いてください。",
        "A closing fence takes no info string, so the rest of the article renders as code.":
            "閉じのフェンスには言語名を書けないため、記事の残りがすべてコードとして表示されます。",
        "The code block opened with {fence} on line {line} is never closed; it ends with the :::{kind} block on line {end}.":
            "{line}行目の {fence} で始まるコードブロックが閉じられていません。{end}行目の :::{kind} ブロックの終わりで終わります。",
        "Remove the stray {fence}, or close the code block before the ::: line.":
            "余分な {fence} を消すか、::: の行の前でコードブロックを閉じてください。",
        "The lines after the fence up to the box's end show as code (an empty code block if none).":
            "フェンスから囲みの終わりまでの行がコードとして表示されます（行がなければ空のコードブロックになります）。",
    },
    "unclosed-container": {
        "The :::{kind} block is never closed.": ":::{kind} ブロックが閉じられていません。",
        "Add a line with ::: where the block ends.": "ブロックの終わりに ::: だけの行を追加してください。",
        "An unclosed block swallows the rest of the article into the box.":
            "閉じられていないブロックは、記事の残りをすべて囲みの中に取り込んでしまいます。",
    },
    "setext-heading": {
        "A line of --- directly under a paragraph turns that paragraph into a heading.":
            "段落のすぐ下にある --- の行が、その段落を見出しにしています。",
        "Put a blank line before ---, or write the heading as `## …`.":
            "--- の前に空行を入れるか、見出しにしたいなら `## …` と書いてください。",
        "Setext headings are easy to create by accident when --- is meant as a rule.":
            "区切り線のつもりの --- で、意図せず見出し（Setext 形式）になることがよくあります。",
    },
    "empty-heading": {
        "Empty heading.": "見出しが空です。",
        "Give the heading a title or remove it.": "見出しの文言を書くか、見出しを削除してください。",
        "An empty heading shows as a blank gap and an empty table-of-contents entry.":
            "空の見出しは空白として表示され、目次にも空の項目ができます。",
    },
    "list-marker-space": {
        "List marker `{marker}` has no space after it.": "リスト記号 `{marker}` の後ろに空白がありません。",
        "Write `{marker} ` followed by the item text.": "`{marker} ` の後ろに項目の本文を書いてください。",
        "Without the space the line is plain text, not a list item.":
            "空白がないと、リストではなくただの文章として表示されます。",
    },
    "strong-flanking": {
        "Bold text (**…**) next to punctuation such as 「」 or （） will not render.":
            "「」や（）などの記号に接した太字（**…**）は太字になりません。",
        "{count} bold spans next to punctuation will not render (lines {lines}).":
            "記号に接していて太字にならない箇所が{count}箇所あります（{lines}行目）。",
        "Move the ** inside the brackets (「**強調**」) or add a space around the ** markers.":
            "** を括弧の内側に移す（「**強調**」）か、** の外側に空白を入れてください。",
        "CommonMark only accepts ** before/after punctuation when the other side is a space or punctuation; Zenn "
        "and Qiita follow that rule.":
            "CommonMark では、記号に接する ** は反対側が空白か記号のときしか強調になりません。Zenn と Qiita もこの規則に従います。",
    },
    "bare-url-swallow": {
        "The bare URL {url} is followed directly by “{text}”, which becomes part of the link.":
            "URL {url} の直後に「{text}」が続いていて、リンクの一部になってしまいます。",
        "Write it as [text]({url}) or <{url}>, or add a space after it.":
            "[テキスト]({url}) か <{url}> と書くか、URL の後ろに空白を入れてください。",
        "Autolinking stops only at whitespace, so the following text ends up in the URL.":
            "自動リンクは空白までを URL とみなすため、続く文字が URL に含まれてしまいます。",
    },
    "bare-url": {
        "Bare URL {url}.": "URL がそのまま書かれています: {url}",
        "Give it link text: [page title]({url}).": "リンクテキストを付けてください: [ページのタイトル]({url})",
        "Descriptive link text reads better and tells readers where the link goes.":
            "内容がわかるリンクテキストのほうが読みやすく、リンク先も伝わります。",
    },
    "image-alt": {
        "Image {url} has no alt text.": "画像 {url} に代替テキストがありません。",
        "{count} images have no alt text (lines {lines}).": "代替テキストのない画像が{count}枚あります（{lines}行目）。",
        "Describe the image inside the brackets: ![構成図](…).": "角括弧の中に画像の説明を書いてください: ![構成図](…)",
        "Alt text is read by screen readers and shown when the image fails to load.":
            "代替テキストはスクリーンリーダーが読み上げ、画像を読み込めないときにも表示されます。",
    },
    "table-delimiter": {
        "This table has no delimiter row (|---|---|) under its header.":
            "この表には、見出し行の下の区切り行（|---|---|）がありません。",
        "Add a row like |---|---| as the second line of the table.": "表の二行目に |---|---| のような行を追加してください。",
        "Without the delimiter row the table renders as plain text with pipes.":
            "区切り行がないと、表ではなく | を含むただの文章として表示されます。",
    },
    # --- link ---
    "duplicate-link": {
        "The same link ({url}) already appears on line {line}.": "同じリンク（{url}）が{line}行目にもあります。",
        "Link a page once, or make the second link point somewhere more specific.":
            "同じページへのリンクは一度にするか、二つ目をより具体的なページへのリンクにしてください。",
        "Repeated identical links add noise without helping the reader.":
            "同じリンクの繰り返しは読者の役に立たず、煩雑になるだけです。",
    },
    "unused-definition": {
        "The link reference [{label}] is defined but never used.": "リンク参照 [{label}] は定義されていますが、使われていません。",
        "Link to it with [text][{label}], or remove the definition.":
            "[テキスト][{label}] で参照するか、定義を削除してください。",
        "Unused definitions are usually a link the author meant to add.": "使われていない定義は、たいてい書き忘れたリンクです。",
    },
    "duplicate-definition": {
        "The link reference [{label}] is defined again (first on line {line}).":
            "リンク参照 [{label}] がもう一度定義されています（最初の定義は{line}行目）。",
        "Remove one definition or give them different labels.": "定義を一つ削除するか、別々のラベルを付けてください。",
        "Only the first definition is used; the second one is silently ignored.":
            "使われるのは最初の定義だけで、二つ目は黙って無視されます。",
    },
    "undefined-reference": {
        "The link reference [{label}] is never defined.": "リンク参照 [{label}] が定義されていません。",
        "Add a definition line: [{label}]: https://…": "定義の行を追加してください: [{label}]: https://…",
        "An undefined reference renders as plain text in brackets.": "未定義の参照は、角括弧付きのただの文字として表示されます。",
    },
    "empty-link": {
        "The @[{kind}] embed has no target.": "@[{kind}] の埋め込みに URL（または ID）がありません。",
        "Put the URL or id inside the parentheses.": "丸括弧の中に URL か ID を書いてください。",
        "An empty embed renders nothing.": "空の埋め込みは何も表示されません。",
        "The image “{text}” has an empty target ().": "画像「{text}」のリンク先が空です（()）。",
        "The link “{text}” has an empty target ().": "リンク「{text}」のリンク先が空です（()）。",
        "Put the URL inside the parentheses, or remove the link markup.": "丸括弧の中に URL を書くか、リンクの記法を外してください。",
        "An empty link goes nowhere (it reloads the page).": "空のリンクはどこにも行きません（ページが再読み込みされるだけです）。",
        "The image “{text}” points to a placeholder ({url}).": "画像「{text}」のリンク先が仮の値（{url}）のままです。",
        "The link “{text}” points to a placeholder ({url}).": "リンク「{text}」のリンク先が仮の値（{url}）のままです。",
        "Put the real URL in place of the placeholder, or remove the link markup.":
            "仮の値を本当の URL に置き換えるか、リンクの記法を外してください。",
        "A note the writer left for later went out with the article: the link leads nowhere.":
            "後で埋めるつもりの印がそのまま公開されています。リンクはどこにもつながりません。",
    },
    "empty-link-text": {
        "The link to {url} has no text.": "{url} へのリンクにテキストがありません。",
        "Write the text inside the brackets: [page title]({url}).":
            "角括弧の中にテキストを書いてください: [ページのタイトル]({url})",
        "A link without text is invisible on the page.": "テキストのないリンクはページ上で見えません。",
    },
    "malformed-url": {
        "The link target “{target}” contains a space.": "リンク先「{target}」に空白が含まれています。",
        "Remove the space or encode it as %20.": "空白を削除するか、%20 に置き換えてください。",
        "Text after a space in (…) must be a quoted title; otherwise the link does not render.":
            "(…) の中で空白の後ろに書けるのは、引用符で囲んだタイトルだけです。それ以外だとリンクとして表示されません。",
        "Malformed URL {url}: {reason}.": "URL {url} の形式が正しくありません: {reason}。",
        "Correct the URL and open it once to make sure it works.": "URL を直し、一度開いて確かめてください。",
        "A malformed URL leads nowhere.": "形式の正しくない URL はどこにもつながりません。",
    },
    "local-path": {
        "The image points to a local path ({url}).": "画像がローカルのパス（{url}）を指しています。",
        "The link points to a local path ({url}).": "リンクがローカルのパス（{url}）を指しています。",
        "Upload the file (or use a public URL); on Zenn with GitHub integration, images go under /images/.":
            "ファイルをアップロードするか、公開 URL を使ってください。Zenn の GitHub 連携では、画像は /images/ に置きます。",
        "Paths on your machine do not exist for readers of the published article.":
            "手元のマシンのパスは、公開された記事の読者には存在しません。",
    },
    "http-url": {
        "Insecure http:// URL: {url}.": "暗号化されない http:// の URL です: {url}",
        "Use https:// if the site supports it.": "サイトが対応していれば https:// を使ってください。",
        "Browsers block or warn about http images on https pages (mixed content).":
            "https のページにある http の画像は、ブラウザがブロックするか警告を出します（混在コンテンツ）。",
        "https protects readers from tampering, and most sites redirect to it anyway.":
            "https は読者を改ざんから守ります。多くのサイトはどのみち https へ転送します。",
    },
    "http-image": {
        "Insecure http:// URL: {url}.": "暗号化されない http:// の URL です: {url}",
        "Use https:// if the site supports it.": "サイトが対応していれば https:// を使ってください。",
        "Browsers block or warn about http images on https pages (mixed content).":
            "https のページにある http の画像は、ブラウザがブロックするか警告を出します（混在コンテンツ）。",
    },
    "link-status": {
        "Broken link: {url} answers HTTP {status}.": "リンク切れ: {url} は HTTP {status} を返します。",
        "Update the URL (the page may have moved) or remove the link.":
            "URL を更新する（ページが移動したのかもしれません）か、リンクを削除してください。",
        "Readers who follow the link land on an error page.": "リンクをたどった読者はエラーページにたどり着きます。",
        "{url} answered HTTP {status} (server error).": "{url} が HTTP {status}（サーバーエラー）を返しました。",
        "Open it yourself; if it stays down, link an archived copy.":
            "ご自身で開いてみて、落ちたままならアーカイブへのリンクに替えてください。",
        "The server failed while we checked; it may be temporary.":
            "確認したときにサーバーがエラーを返しました。一時的なものかもしれません。",
        "The domain of {url} does not resolve.": "{url} のドメインを名前解決できません。",
        "Check the spelling of the domain.": "ドメインの綴りを確かめてください。",
        "No server answers for this name.": "この名前に応答するサーバーがありません。",
        "{url} could not be reached ({error}).": "{url} に接続できませんでした（{error}）。",
        "Open it yourself; it may be temporary.": "ご自身で開いてみてください。一時的なものかもしれません。",
        "The request failed after retrying.": "再試行しても接続できませんでした。",
    },
    # --- code_quality ---
    "code-language": {
        "Code block without a language tag.": "コードブロックに言語名がありません。",
        "Name the language after the fence, e.g. ```python (Zenn/Qiita also accept ```python:main.py).":
            "``` の後ろに言語名を書いてください（例: ```python。Zenn/Qiita では ```python:main.py も使えます）。",
        "Name the language after the fence: it reads as {language}, so ```{language}.":
            "``` の後ろに言語名を書いてください（内容は {language} なので ```{language}）。",
        "Without a language the code is not syntax-highlighted and readers must guess what it is.":
            "言語名がないとシンタックスハイライトされず、読者は何のコードかを推測するしかありません。",
    },
    "code-filename": {
        "The block is tagged `{language}` but its file name is `{filename}`.":
            "コードブロックの言語は `{language}` ですが、ファイル名は `{filename}` です。",
        "Make the language tag match the file.": "言語名をファイルに合わせてください。",
        "A mismatched tag gives the wrong highlighting and confuses readers.":
            "言語名が合っていないと誤ったハイライトになり、読者も混乱します。",
    },
    "syntax-python": _SYNTAX, "syntax-json": _SYNTAX, "syntax-yaml": _SYNTAX, "syntax-toml": _SYNTAX,
    "syntax-shell": _SYNTAX,
    "hardcoded-credential": {
        "Hardcoded credential: `{key}` is set to a literal value.":
            "認証情報がハードコードされています: `{key}` に値が直接書かれています。",
        "Read it from the environment, e.g. os.environ[\"{name}\"], and show a placeholder.":
            "環境変数から読み込み（例: os.environ[\"{name}\"]）、記事にはプレースホルダーを書いてください。",
        "Readers copy examples verbatim, and a real value here is a leaked credential.":
            "読者は例をそのままコピーします。ここに本物の値があれば、それは漏えいした認証情報です。",
    },
    "chmod-777": {
        "chmod 777 makes the file writable by every user.": "chmod 777 は、すべてのユーザーがファイルに書き込めるようにします。",
        "Grant only what is needed, e.g. chmod 755 (directories) or 644 (files).":
            "必要な権限だけを与えてください（例: ディレクトリは chmod 755、ファイルは 644）。",
        "World-writable files are a common security hole, and readers copy the command.":
            "誰でも書き込めるファイルはよくあるセキュリティホールで、読者はコマンドをそのままコピーします。",
    },
    "curl-pipe-shell": {
        "The script is piped from curl straight into a shell.": "curl で取得したスクリプトを、そのままシェルに渡しています。",
        "Show how to download and inspect the script first, or link the official installer docs.":
            "先にスクリプトをダウンロードして中身を確かめる手順を示すか、公式のインストール手順へリンクしてください。",
        "Piping remote scripts into a shell runs whatever the server returns.":
            "リモートのスクリプトをシェルに渡すと、サーバーが返したものが何でも実行されます。",
    },
    # --- privacy ---
    **{rule: _SECRET for rule in (
        "private-key", "aws-access-key", "aws-secret-key", "slack-token", "slack-webhook", "github-token",
        "openai-key", "anthropic-key", "google-api-key", "stripe-key", "discord-token", "jwt", "url-credentials",
        "assigned-secret",
    )},
    "link-secret": {
        "The article contains {what} ({shown}).": "記事に{what}（{shown}）が含まれています。",
        "If the link is not meant for every reader, remove the value and rotate it; a passcode published on purpose "
        "(a public meeting's) can stay.":
            "すべての読者に向けたリンクでなければ、値を削除して再発行してください。公開ミーティングのパスコードのように"
            "意図して載せたものならそのままで構いません。",
        "Anything published in an article is public; a link's query is often a deliberate invitation, sometimes a "
        "leaked key.":
            "記事に載せたものはすべて公開されます。リンクのクエリは意図した招待であることが多いものの、漏えいした鍵のこともあります。",
    },
    "email": {
        "The article contains an email address ({address}).": "記事にメールアドレス（{address}）が含まれています。",
        "Replace it with an address at example.com (reserved for documentation), e.g. user@example.com.":
            "文書用に予約されている example.com のアドレス（例: user@example.com）に置き換えてください。",
        "Published addresses are harvested for spam and phishing; a work address also reveals your employer's mail "
        "domain.":
            "公開されたアドレスはスパムやフィッシングのために収集されます。仕事のアドレスなら勤務先のメールドメインも知られます。",
    },
    "private-ip": {
        "The article contains a private IP address ({address}).": "記事にプライベート IP アドレス（{address}）が含まれています。",
        "Use an address from a documentation range such as 192.0.2.10 (RFC 5737), or a placeholder.":
            "192.0.2.10 のような文書用の範囲のアドレス（RFC 5737）か、プレースホルダーを使ってください。",
        "Private addresses reveal the layout of the network the article was written from.":
            "プライベートアドレスは、記事を書いた環境のネットワーク構成を明かしてしまいます。",
    },
    "internal-hostname": {
        "The article contains an internal hostname ({host}).": "記事に社内のホスト名（{host}）が含まれています。",
        "Replace it with a neutral name such as app.example.internal or server.example.com.":
            "app.example.internal や server.example.com のような中立的な名前に置き換えてください。",
        "Internal hostnames reveal your organisation's infrastructure and naming scheme.":
            "社内のホスト名は、組織のインフラや命名規則を明かしてしまいます。",
    },
    # --- structure ---
    "no-title": {
        "The article has no title.": "記事にタイトルがありません。",
        "Add front matter with a title, or start with a # heading.":
            "タイトルを含むフロントマターを追加するか、# の見出しで始めてください。",
        "Readers and search results need a title to know what the article is about.":
            "読者にも検索結果にも、記事の内容を示すタイトルが必要です。",
    },
    "title": {
        "The front matter has no title.": "フロントマターにタイトルがありません。",
        "Add title: \"…\" to the front matter.": "フロントマターに title: \"…\" を追加してください。",
        "The article cannot be published without a title.": "タイトルがないと記事を公開できません。",
    },
    "front-matter-yaml": {
        "The front matter is not valid {format}: {error}.": "フロントマターが {format} として正しくありません: {error}。",
        "Fix the TOML (strings in quotes: title = \"A\").": "TOML を直してください（文字列は引用符で囲みます: title = \"A\"）。",
        "Fix the YAML (quote titles that contain a colon, e.g. title: \"A: B\").":
            "YAML を直してください（コロンを含むタイトルは引用符で囲みます。例: title: \"A: B\"）。",
        "Zenn, Qiita and site generators (Hugo, Jekyll, Zola) all refuse an article whose front matter does not "
        "parse.":
            "Zenn、Qiita、静的サイトジェネレーター（Hugo、Jekyll、Zola）はいずれも、フロントマターを解析できない記事を受け付けません。",
    },
    "draft": {
        "The article is a draft ({draft}): it is not public yet.": "この記事は下書きです（{draft}）。まだ公開されていません。",
        "Change {key} when you want to publish it.": "公開するときは {key} を変更してください。",
        "A draft is easy to forget; the report says so in case it was meant to go live.":
            "下書きのままだと忘れがちなので、公開するつもりだった場合に備えてお知らせします。",
        "The article is shared by link only (private: true): Qiita neither lists it nor shows it in search.":
            "この記事は限定共有です（private: true）。URL を知っている人だけが読め、Qiita の一覧や検索には出ません。",
        "Set private: false when you want it public.": "公開するときは private: false にしてください。",
        "A limited-share article is easy to forget; the report says so in case it was meant to go live.":
            "限定共有のままだと忘れがちなので、公開するつもりだった場合に備えてお知らせします。",
    },
    "title-length": {
        "The title is {length} characters; Zenn allows at most {limit}.":
            "タイトルが{length}文字あります。Zenn では{limit}文字までです。",
        "Shorten the title.": "タイトルを短くしてください。",
        "Longer titles are rejected or cut off.": "長すぎるタイトルは拒否されるか、途中で切られます。",
    },
    "zenn-emoji": {
        "The Zenn front matter has no emoji.": "Zenn のフロントマターに emoji がありません。",
        "Add emoji: \"📝\" (one emoji).": "emoji: \"📝\" を追加してください（絵文字一つ）。",
        "Zenn shows the emoji as the article's icon.": "Zenn はこの絵文字を記事のアイコンとして表示します。",
        "emoji must be one emoji, not “{value}”.": "emoji は絵文字一つにしてください（今は「{value}」）。",
        "Use a single emoji character such as \"🐍\".": "\"🐍\" のような絵文字一つにしてください。",
        "Zenn rejects other values.": "Zenn はそれ以外の値を受け付けません。",
    },
    "zenn-type": {
        "type must be tech or idea, not {value}.": "type は tech か idea にしてください（今は {value}）。",
        "The front matter has no type.": "フロントマターに type がありません。",
        "Write type: \"tech\" for technical articles or type: \"idea\" for opinion pieces.":
            "技術記事なら type: \"tech\"、アイデア記事なら type: \"idea\" と書いてください。",
        "Zenn refuses to publish an article without a valid type.": "Zenn は正しい type のない記事を公開しません。",
    },
    "zenn-published": {
        "published must be true or false, not {value}.": "published は true か false にしてください（今は {value}）。",
        "Write published: true (or false for a draft).": "published: true（下書きなら false）と書いてください。",
        "Zenn expects a boolean.": "Zenn は真偽値（true/false）を期待します。",
        "The front matter does not say whether the article is published.":
            "フロントマターに、公開するかどうか（published）が書かれていません。",
        "Add published: false while drafting, true to publish.":
            "下書きの間は published: false を、公開するときは true を書いてください。",
        "Zenn treats a missing value as a draft, which surprises authors.":
            "Zenn は値がないと下書きとして扱うため、思わぬ結果になりがちです。",
    },
    "qiita-private": {
        "private must be true or false, not {value}.": "private は true か false にしてください（今は {value}）。",
        "Write private: false.": "private: false と書いてください。",
        "Qiita CLI expects a boolean.": "Qiita CLI は真偽値（true/false）を期待します。",
    },
    "topics-count": _COUNT,
    "tags-count": _COUNT,
    "topics-format": {
        "Zenn topics cannot contain spaces or symbols: {names}.": "Zenn の topics には空白や記号を使えません: {names}。",
        "Use lowercase letters and digits only, e.g. nextjs instead of Next.js.":
            "英小文字と数字だけにしてください（例: Next.js ではなく nextjs）。",
        "Zenn's own validator reports such topics (use nextjs, cpp, csharp).":
            "Zenn 自身の検証がこのような topics をエラーにします（nextjs、cpp、csharp のように書きます）。",
        "Zenn topics are one string, not a list: {value}.": "Zenn の topics が配列ではなく一つの文字列です: {value}。",
        "Write them as a list: topics: [{listed}].": "配列で書いてください: topics: [{listed}]",
        "Zenn's own validator asks for topics as a list.": "Zenn 自身の検証は topics を配列で書くよう求めます。",
    },
    "no-headings": {
        "The article has no headings.": "記事に見出しがありません。",
        "The article has no headings; its sections are titled by lines of text (lines {shown}).":
            "記事に見出しがなく、セクションの題が地の文の行で書かれています（{shown}行目）。",
        "Make those lines ## headings.": "それらの行を ## の見出しにしてください。",
        "A title written as a plain or bold line is not a heading: the outline, the table of contents and screen "
        "readers miss it (Zenn/Qiita build the contents from headings).":
            "ふつうの行や太字で書いた題は見出しではありません。アウトラインや目次、スクリーンリーダーに拾われません"
            "（Zenn/Qiita は目次を見出しから作ります）。",
        "Split it into sections with ## headings.": "## の見出しでセクションに分けてください。",
        "Long text without sections is hard to scan, and Zenn/Qiita build the table of contents from headings.":
            "セクションのない長い文章は拾い読みしにくく、Zenn/Qiita の目次も見出しから作られます。",
    },
    "first-heading-level": {
        "The first heading is level {first}, but later sections use level {top}.":
            "最初の見出しはレベル{first}ですが、以降のセクションはレベル{top}です。",
        "Start with a level-{top} heading ({marks}).": "レベル{top}の見出し（{marks}）から始めてください。",
        "The outline (and table of contents) starts one level too deep.": "アウトライン（と目次）が一段深いところから始まってしまいます。",
    },
    "duplicate-title": {
        "The heading repeats the title from the front matter.": "見出しがフロントマターのタイトルと同じです。",
        "Remove it: Zenn and Qiita already show the title above the article.":
            "削除してください。Zenn と Qiita はタイトルを記事の上に表示します。",
        "The title appears twice at the top of the page.": "ページの先頭にタイトルが二度表示されます。",
    },
    "introduction": {
        "The article has no introduction.": "記事に導入がありません。",
        "Open with a short paragraph (or a はじめに section) saying what the reader will learn and why.":
            "読者が何を学べるのか、なぜそれが大事なのかを述べる短い段落（または「はじめに」の節）で始めてください。",
        "Readers decide in the first lines whether the article is for them.":
            "読者は最初の数行で、自分に向けた記事かどうかを判断します。",
    },
    "conclusion": {
        "The article has no conclusion.": "記事にまとめがありません。",
        "End with a short paragraph (or a まとめ / Conclusion section) that restates the result and next steps.":
            "結果と次の一歩を述べる短い段落（または「まとめ」の節）で締めくくってください。",
        "A conclusion tells readers what to take away and where to go next.":
            "まとめがあると、読者は何を持ち帰り、次にどこへ進めばよいかがわかります。",
    },
    "empty-section": {
        "The section “{title}” is empty.": "セクション「{title}」が空です。",
        "Write its content or remove the heading.": "内容を書くか、見出しを削除してください。",
        "An empty section looks unfinished.": "空のセクションは書きかけに見えます。",
    },
    "section-balance": {
        "The section “{title}” holds {size} of the article's {total} lines.":
            "セクション「{title}」が、記事の{total}行のうち{size}行を占めています。",
        "Split it into subsections or move details into separate sections.":
            "小見出しで分けるか、詳細を別のセクションに移してください。",
        "One oversized section makes the outline unbalanced and hard to navigate.":
            "一つだけ大きなセクションがあると構成の釣り合いが悪く、読み進めにくくなります。",
    },
    # --- pymarkdownlnt ---
    **{rule: {en[0] + "{detail}": ja[0] + "{detail}", en[1]: ja[1], en[2]: ja[2]} for rule, (en, ja) in _LINTER.items()},
}
MESSAGES["md056"]["{count} table rows have a different number of cells from the header (lines {lines})."] = (
    "見出し行とセルの数が違う表の行が{count}行あります（{lines}行目）。"
)
MESSAGES["table-run-in"] = {
    "The text right under the table ({where}) renders as rows of the table: no blank line ends it.":
        "表のすぐ下の文（{where}）が表の行として表示されます。表の後に空行がありません。",
    "Leave a blank line between the table and the text below it.": "表とその下の文のあいだに空行を入れてください。",
    "A table goes on until a blank line, so each line of text after it becomes a one-cell row.":
        "表は空行まで続くため、すぐ後の文は一行ずつセル一つの行になります。",
}
MESSAGES["http-image"]["{count} images load over insecure http:// (lines {lines})."] = (
    "暗号化されない http:// で読み込む画像が{count}枚あります（{lines}行目）。"
)
MESSAGES["md039"]["{count} links have spaces inside their text (lines {lines})."] = (
    "内側に空白のあるリンクテキストが{count}個あります（{lines}行目）。"
)
MESSAGES["empty-link-text"]["{count} links have no text (lines {lines})."] = "テキストのないリンクが{count}個あります（{lines}行目）。"
MESSAGES["list-marker-space"]["{count} list markers have no space after them (lines {lines})."] = (
    "後ろに空白のないリスト記号が{count}個あります（{lines}行目）。"
)
MESSAGES["empty-section"]["{count} sections are empty (lines {lines})."] = "空のセクションが{count}個あります（{lines}行目）。"
MESSAGES["md001"]["{count} headings jump more than one level (lines {lines})."] = (
    "見出しのレベルが二段以上飛んでいる所が{count}か所あります（{lines}行目）。"
)
MESSAGES["md019"]["{count} headings have several spaces after the # (lines {lines})."] = (
    "# の後ろに空白が複数ある見出しが{count}個あります（{lines}行目）。"
)
MESSAGES["md027"]["{count} quoted lines have several spaces after the > (lines {lines})."] = (
    "引用の > の後ろに空白が複数ある行が{count}行あります（{lines}行目）。"
)
MESSAGES["code-language"]["{count} code blocks have no language tag (lines {lines})."] = (
    "言語名のないコードブロックが{count}個あります（{lines}行目）。"
)

# Any rule: the linter's fallbacks.
SHARED: dict[str, str] = {
    "Adjust the Markdown so it follows the usual convention.": "一般的な書き方に合わせて Markdown を直してください。",
    "Reported by pymarkdownlnt.": "pymarkdownlnt による指摘です。",
}

# Values inside messages: URL problems, kinds of secrets, parser messages.
FRAGMENTS: dict[str, str] = {
    "the scheme is missing its colon (https// instead of https://)":
        "スキームのコロンが抜けています（https:// ではなく https//）",
    "unknown scheme “{scheme}:” (a typo of https?)": "不明なスキーム「{scheme}:」です（https の打ち間違い？）",
    "the URL needs two slashes after the scheme": "スキームの後ろにはスラッシュが二つ必要です",
    "the URL contains a space": "URL に空白が含まれています",
    "the URL cannot be parsed ({error})": "URL を解釈できません（{error}）",
    "the URL has no host name": "ホスト名がありません",
    "the host contains full-width punctuation": "ホスト名に全角の記号が含まれています",
    "“{host}” is not a valid host name": "「{host}」はホスト名として正しくありません",
    "the host name “{host}” ends with a dot": "ホスト名「{host}」の末尾にドットがあります",
    "the port number is out of range": "ポート番号が範囲外です",
    "a private key": "秘密鍵",
    "an AWS access key ID": "AWS のアクセスキー ID",
    "an AWS secret access key": "AWS のシークレットアクセスキー",
    "a Slack token": "Slack のトークン",
    "a Slack incoming-webhook URL": "Slack の Incoming Webhook の URL",
    "a GitHub token": "GitHub のトークン",
    "an OpenAI API key": "OpenAI の API キー",
    "an Anthropic API key": "Anthropic の API キー",
    "a Google API key": "Google の API キー",
    "a Stripe live key": "Stripe の本番用キー",
    "a Discord bot token": "Discord のボットトークン",
    "a JSON Web Token": "JSON Web Token（JWT）形式のトークン",
    "a password inside a URL": "URL 内のパスワード",
    "a secret assigned to `{name}`": "`{name}` に代入された秘密の値",
    "a value passed as `{name}` in a link": "リンクで `{name}` として渡される値",
    "trailing comma": "末尾に余分なカンマがあります",
    "missing comma at the end of the line": "行末のカンマがありません",
    "`{keyword}` is never closed ({closer} is missing)": "`{keyword}` が閉じられていません（{closer} がありません）",
    "lines {first}–{last}": "{first}〜{last}行目",
    "line {line}": "{line}行目",
    "lines {lines}": "{lines}行目",
}

# Notes the checkers leave in the report (checks that did not run, lines the linter could not read).
NOTES: dict[str, str] = {
    "Only the deterministic language rules ran (no language model is configured).":
        "言語モデルが設定されていないため、文章は決まったルールでのみチェックしました。",
    "Links were not opened over the network (online link checks are off).":
        "リンク先にはアクセスしていません（オンラインのリンクチェックはオフです）。",
    "No link could be reached: the network seems unavailable.": "どのリンクにも接続できませんでした。ネットワークが使えないようです。",
    "Technical accuracy was not checked: the offline model cannot judge technical claims.":
        "技術的な正確さはチェックしていません。オフラインのモデルでは技術的な主張を判断できません。",
    "Technical claims were judged by the model without web search.": "技術的な主張は、ウェブ検索なしでモデルが判断しました。",
    "The Markdown linter (pymarkdownlnt) could not read lines {start}–{end}, so its rules were not applied there "
    "(the same text fails every time); the rest of the article was linted.":
        "Markdown リンター（pymarkdownlnt）が{start}〜{end}行目を読み取れなかったため、そこにはリンターのルールを適用していません"
        "（同じ文章では毎回失敗します）。記事の残りはチェックしました。",
    # Where an issue is (checkers/base.py: locate) and how the platform was recognised.
    "whole article": "記事全体",
    "front matter, line {line}": "フロントマター {line}行目",
    "line {line}, section “{section}”": "{line}行目（「{section}」の節）",
    "line {line}": "{line}行目",
    "named in the request": "依頼で指定",
    "TOML front matter (+++)": "TOML のフロントマター（+++）",
    "Qiita's :::note syntax": "Qiita の :::note 記法",
    "Zenn's :::message, :::details or @[embed] syntax": "Zenn の :::message、:::details、@[embed] 記法",
    "no front matter": "フロントマターなし",
    "front matter keys {keys}": "フロントマターのキー {keys}",
    "front matter of no known platform's shape": "どのプラットフォームの形でもないフロントマター",
}

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
Table = tuple[tuple[re.Pattern[str], str], ...]


def _pattern(template: str) -> re.Pattern[str]:
    """The English template as a regular expression: `{name}` matches any text (the same text
    where a name appears twice)."""
    parts: list[str] = []
    seen: set[str] = set()
    position = 0
    for match in _PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[position : match.start()]))
        name = match.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
        seen.add(name)
        position = match.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts), re.S)


@lru_cache(maxsize=256)
def _table(key: str) -> Table:
    source = {"*": SHARED, "fragments": FRAGMENTS, "notes": NOTES}.get(key) or MESSAGES.get(key, {})
    # Longer templates first: "The article contains {what} ({shown})." before "… {what}."
    return tuple((_pattern(en), ja) for en, ja in sorted(source.items(), key=lambda item: -len(item[0])))


def _render(template: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def _lookup(text: str, *keys: str) -> str | None:
    for key in keys:
        for pattern, japanese in _table(key):
            match = pattern.fullmatch(text)
            if match is not None:
                values = {name: fragment(value) for name, value in match.groupdict().items()}
                return _render(japanese, values)
    return None


def fragment(value: str) -> str:
    """A value inside a message (a URL problem, a kind of secret) in Japanese, when known."""
    if not value:
        return value
    found = _lookup(value, "fragments")
    return value if found is None else found


def to_japanese(rule: str, text: str) -> str:
    """One message (problem, suggestion or reason) of `rule` in Japanese; unchanged when the table
    has no entry for it."""
    if not text:
        return text
    found = _lookup(text, rule, "*")
    return text if found is None else found


def note_to_japanese(text: str) -> str:
    """A note of the report (a skipped check, where an issue is, what the platform was guessed
    from) in Japanese; unchanged when unknown."""
    found = _lookup(text, "notes")
    return text if found is None else found
