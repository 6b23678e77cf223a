"""code_quality: parse the code blocks (Python, JSON, YAML, TOML, shell), missing language tags,
hardcoded credentials, filename/language mismatches and a few dangerous shell habits."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
import warnings
from collections.abc import Callable

import yaml

from agents.proofread.checkers.base import BaseChecker
from agents.proofread.checkers.languages import is_ini, recognised_language
from agents.proofread.checkers.privacy import PLACEHOLDER, assigned_secrets, find_secrets, looks_random
from agents.proofread.schemas import CodeBlock, Issue, ParsedArticle
from agents.proofread.text import PROMPT, finditer_by_runs

PYTHON = {"python", "py", "python3", "py3", "ipython"}
JSON = {"json"}
YAML = {"yaml", "yml"}
TOML = {"toml"}
SHELL = {"sh", "bash", "shell", "console", "shell-session", "terminal"}
# A line (or a value) that is only an ellipsis, or `# ...` / `// ...`: the block is an excerpt.
# Written to read a run of spaces or blank lines once: a match starts only at the first space of
# a run (`(?<!\s)\s`) or takes at a line's start only that line's spaces (`[^\S\n]`), runs are
# taken whole (possessive `*+`), and what follows a mark reaches only to the end of its line. For
# `search`, the same as `(?:^|[\s:,\[{])(?:#|//)?\s*(?:\.{3,}|…|・・・|･･･)\s*[,\]}]*\s*$` and its
# siblings starting `^\s*`, which tried a run from each of its characters and split it two ways (a
# block of 2,000 blank lines took 73 s); tests/proofread/test_linear_rules.py compares the two.
ELISION = re.compile(
    r"(?:\A|(?<!\s)\s|[:,\[{])\s*+(?:#|//)?\s*+(?:\.{3,}+|…|・・・|･･･)[^\S\n]*+[,\]}]*+[^\S\n]*+$"  # `[{"a": 1, ...}]`
    r"|^[^\S\n]*+(?:\{\{\s*+|[:：]\s*+)?(?:省略|略|中略|以下略|途中省略|以下省略|omitted|snip)(?:[^\S\n]*+\}\})?[^\S\n]*+$"  # `{{ 省略 }}`
    r"|^[^\S\n]*+(?:(?:#|//)\s*+)?(?:\.{2,}+|…++|・{3,}+|･{3,}+)\s*+[(（]?(?:省略|略|中略|以下略|omitted|snip)[)）]?"
    r"[^\S\n]*+(?:\.{2,}+|…++)?[^\S\n]*+,?[^\S\n]*+$"  # `....省略`, `.. snip ..`
    r"|^[^\S\n]*+(?:(?:#|//)\s*+)?[\[(<（【]\s*+(?:省略|略|中略|以下略|omitted|snip|snipped)\s*+(?:\.{2,}+|…)?\s*+[\])>）】][^\S\n]*+$"  # `[snip...]`
    r"|^[^\S\n]*+(?:(?:#|//)\s*+)?([=*~〜-])\1++\s*+(?:省略|略|中略|以下略|omitted|snip)\s*+\1++[^\S\n]*+$"  # `===== 省略 =====`
    r"|^[~〜～]++$",  # a line of tildes (wave dashes) before or after the lines shown: the rest left out
    re.M,
)
# A comment quoting the SyntaxError Python raises: the block shows the error on purpose.
SHOWN_SYNTAX_ERROR = re.compile(r"(?m)^[^\S\n]*+#.*\bSyntaxError\b")
# A line that points at the code above it (`    ↑ ここを変えるだけ`): a note, not code.
ANNOTATION = re.compile(r"^[^\S\n]*+[↑↓←⇑⇐]", re.M)
# A comment that marks one of the variants a block sets side by side (`# ✅ …` then `# ❌ …`, `// NG`,
# `# 良い例`): the block shows alternatives of one document, not one document.
VARIANT_MARK = re.compile(
    r"^[^\S\n]*+(?:#|//|--)\s*(?:✅|❌|⭕|✔️?|✖️?|×|〇|○|OK\b|NG\b|good\b|bad\b|before\b|after\b|良い例|悪い例|正しい|誤り)",
    re.M | re.I,
)
_METADATA_LINE = re.compile(r"[A-Za-z][\w-]*:\s+[^=\s][^=]*")
_PYTHON_CLAUSES = {"else", "try", "finally", "lambda", "except"}


def _metadata_only(source: str) -> bool:
    """Two or more lines, each `Key: value` with no `=` and no Python clause as the key."""
    written = [line.strip() for line in source.splitlines() if line.strip()]
    return len(written) >= 2 and all(
        _METADATA_LINE.fullmatch(line) and line.split(":", 1)[0] not in _PYTHON_CLAUSES for line in written
    )


# What every TOML document has: a `key = value` line or a `[table]` header. A dotted key is taken
# whole; only a key ending in `.` may go on past a space (`a. b = 1`). For `search`, the same as
# `^\s*(?:\[|[\w"'.-]+(?:\s*\.\s*[\w"'-]+)*\s*=)`, which split `a.a.a…` every way it could.
TOML_STATEMENT = re.compile(
    r"^[^\S\n]*+(?:\[|[\w\"'.-]++(?:(?<=[\w\"'.-]\.)\s++[\w\"'-]++)?+(?:\s*+\.\s*+[\w\"'-]++)*+\s*+=)", re.M
)
# The files TOML is written in: a block under a toml tag named for any other file (`master.cnf`,
# `.gitconfig`, `setup.cfg`) holds that file's own format, INI-like but not TOML.
TOML_FILE = re.compile(r"(?i)(?:\.toml|(?:^|/)(?:Cargo|poetry|uv|pdm)\.lock|(?:^|/)Pipfile)$")
# A comment on a line of its own, after a comma or a bracket, or after a value (`} // default 30000`).
JSON_COMMENT = re.compile(r"^[^\S\n]*+(?://|/\*)|[,{\[]\s*//|[}\]\"\d]\s+//", re.M)
# VS Code's own files (tasks.json, settings.json, tsconfig.json, devcontainer.json) are JSON with
# comments and trailing commas; its `${workspaceFolder}` variables, or the file's name, say so.
VSCODE_VARIABLE = re.compile(r"\$\{(?:workspaceFolder|workspaceRoot|file|fileBasename\w*|fileDirname|env:\w+|config:[\w.]+)\}")
# A value written as `<what goes here>` instead of JSON: the block describes a shape.
JSON_PLACEHOLDER = re.compile(r":\s*<[^<>\n\"]+>\s*[,}\n]")
JSON_LINES_FILE = re.compile(r"(?i)\.(?:jsonl|ndjson)$")
# The same files named in the line above the block (「keybindings.jsonに以下のように追加してください」).
JSONC_NAMED = re.compile(
    r"(?i)(?<![A-Za-z0-9_.-])(?:settings|tasks|launch|extensions|keybindings|c_cpp_properties|devcontainer|tsconfig|jsconfig)\.json(?![A-Za-z0-9_])"
)
JSONC_FILE = re.compile(
    r"(?i)(?:^|/)(?:\.vscode/|\.devcontainer/)|(?:^|/)(?:settings|tasks|launch|extensions|keybindings|"
    r"c_cpp_properties|devcontainer|tsconfig|jsconfig)(?:\.[\w-]+)?\.json$|\.json[c5]$"  # deno.jsonc, config.json5
    r"|(?:^|/)CMake(?:User)?Presets\.json$"  # CMake reads its presets with jsoncpp, which takes trailing commas
)
# A VS Code snippets file: each snippet an object with `prefix` and `body`; VS Code reads it as JSONC.
VSCODE_SNIPPETS = re.compile(r'"prefix"\s*:[^\n]*\n(?:[^\n]*\n){0,3}?\s*"body"\s*:')
# A JSON document starts with an object or an array; members without their object
# (`"symbol-placement": "line"`) are an excerpt, and `logging {` is another language under the tag.
JSON_DOCUMENT = re.compile(r"\A\s*[\[{]")
# A command line that runs Python rather than Python code: `$ python x.py`, `ENV=1 python -m x`, `pip install x`.
SHELL_COMMAND = re.compile(r"^\s*(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:python3?|pip3?|uv|poetry|pipenv)\s")
# A line added in a diff shown inside the document.
DIFF_LINE = re.compile(r"^\+(?!\+)\s", re.M)
# Languages that need no tag check: diagrams, plain text, math, diffs.
NO_SYNTAX = {"text", "txt", "plaintext", "mermaid", "math", "diff", "md", "markdown", "csv", "log", "output"}

# A JavaScript file under a TypeScript tag renders the same (TypeScript's grammar is JavaScript's and
# more: round 87's ```ts:index.js); a TypeScript file under a JavaScript tag loses its types.
EXTENSIONS = {
    ".py": PYTHON, ".js": {"js", "javascript", "jsx", "ts", "typescript"}, ".ts": {"ts", "typescript"},
    ".tsx": {"tsx", "typescript", "ts"}, ".jsx": {"jsx", "js", "javascript", "tsx"}, ".rb": {"rb", "ruby"},
    ".go": {"go", "golang"}, ".rs": {"rs", "rust"}, ".java": {"java"}, ".json": JSON | {"jsonc"},
    ".yaml": YAML, ".yml": YAML, ".toml": TOML, ".sh": SHELL | {"zsh"},
}
COMMON_DEFAULT_PASSWORDS = {"postgres", "root", "admin", "password", "secret", "mysql", "example", "pass", "guest"}
_LEET = str.maketrans("@4301!$5", "aaeoiiss")


def default_password(value: str) -> bool:
    """A tutorial default, however it is dressed up: `P@SSW0RD`, `Passw0rd!`, `admin123`."""
    return value.lower().rstrip("0123456789!?.").translate(_LEET) in COMMON_DEFAULT_PASSWORDS
# A shell command feeding the block's document through a here-document (`cat <<EOF | vela up -f -`).
HEREDOC = re.compile(r"^[^\n]*<<-?\s*['\"]?[A-Za-z_]\w*['\"]?[^\n]*$", re.MULTILINE)
CONFIG_LANGUAGES = {"yaml", "yml", "env", "dotenv", "ini", "toml", "properties"}
# Every `curl` before the same `|` shares what follows it: each is tried once (see finditer_by_runs).
# The prompt of another language's interactive session: Clojure's `user=>` / `dev:cljs.user=>`,
# `irb(main):001:0>`, `iex(1)>`, `scala>`, `ghci>`, `mysql>`, `sqlite>`, `postgres=#`. Such a
# session under a `console` tag is not shell; PowerShell's `PS>` is.
REPL_PROMPT = re.compile(r"^\s*(?!PS>)[\w.:()\[\]-]+(?:=>|=#|>)\s")
CURL_PIPE_SHELL = re.compile(r"\bcurl\b[^|]*\|\s*(sudo\s+)?(ba|z)?sh\b")
CURL = re.compile(r"\bcurl\b")
NOT_PIPE = re.compile(r"[^|]*")


# The frames of an exception's stack trace: Java/Kotlin/Scala `at pkg.Class.method(File.java:12)`,
# Python `File "x.py", line 3, in f`, Node `at f (file.js:1:2)`, .NET `at Ns.C.M() in F.cs:line 9`,
# Go `main.f(...)` + `/path/x.go:12 +0x1d`, and the headers around them.
TRACE_LINE = re.compile(
    r"^\s*(?:at \S.*(?:\(.*\)|:\d+)|File \".*\", line \d+.*|\.\.\. \d+ more|Caused by: \S+"
    r"|Traceback \(most recent call last\):|\S+\.go:\d+(?: \+0x[0-9a-f]+)?|[\w.]*(?:Error|Exception)(?::.*)?"
    r"|goroutine \d+ \[.*\]:|(?:E|\w*E)xception in thread .*)\s*$"
)


# How a Python run reports an error: the traceback's header, or the exception's own line.
PYTHON_ERROR_OUTPUT = re.compile(r"Traceback \(most recent call last\):|[A-Za-z_][\w.]*(?:Error|Exception|Warning): \S")


def is_stack_trace(content: str) -> bool:
    """Most lines of the block are frames of a stack trace (at least three of them)."""
    lines = [line for line in content.split("\n") if line.strip()]
    frames = sum(1 for line in lines if TRACE_LINE.match(line))
    return frames >= 3 and frames >= 0.6 * len(lines)


# An ExternalSecret manifest, whose `secretKey` fields name keys of the Secret it writes.
_EXTERNAL_SECRET = re.compile(r"^[^\S\n]*+(?:kind:\s*(?:Cluster)?ExternalSecret\b|(?:-\s*+)?remoteRef:)", re.M)
# A key ending in one of these names where a secret is kept or what kind it is (Kubernetes'
# `secretName`, `secretKeyRef`; `password_file`, `token_type`), not the secret itself.
_WHERE_KEPT = re.compile(
    r"(?i)(?:name|ref|namespace|path|file|dir|env|var|arn|url|uri|provider|type|kind|store|mount|"
    r"length|ttl|header|field|selector|version|source|location|"
    r"manager|service)s?$"  # `secretsmanager`: AWS Secrets Manager, a service's name (LocalStack's health list)
)

# The sentence before a block saying that what follows is what a program printed or answered (also
# what it sent to the printer: a 1994 program's page, round 48).
_OUTPUT_CUE = re.compile(
    r"表示され|出力され|出力結果|実行結果|(?:エラー|警告)が(?:発生|出)|返って|返され"
    r"|(?i:\boutput\b|\bprint(?:s|ed|er|-?outs?)\b|\berror\b|\bwarning\b|\breturn(?:s|ed)\b|you(?:'ll| will| should)? see\b)"
)


# A line announcing the writer's environment: what follows is a tool's report of it (Pythonista's
# `--- SYSTEM INFORMATION ---`, `flutter doctor`), which reads as Markdown lists but is printed text.
_ENVIRONMENT_CUE = re.compile(r"(?:動作|実行|検証|開発|私の|自分の)?\s*環境(?:です|は|：|:)|(?i:\b(?:my|the) environment\b|system information)")


def _announces_output(article: ParsedArticle, block: CodeBlock, *cues: re.Pattern[str]) -> bool:
    """The prose line just above the block announces program output (「以下のように表示されていれば
    成功です」, "you might run into an error like the following")."""
    number = block.start_line - 1
    while number > 0 and not article.lines[number - 1].strip():
        number -= 1
    return number > 0 and any(cue.search(article.lines[number - 1]) for cue in cues or (_OUTPUT_CUE,))


PYTHON2_PRINT = "Missing parentheses in call to 'print'"


class SyntaxProblem(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line  # 1-based within the block
        self.message = message


class CodeQualityChecker(BaseChecker):
    category = "code_quality"
    status_text = "Checking code blocks…"
    status_text_ja = "コードブロックを確認しています…"

    def rules(self, article: ParsedArticle) -> list[Issue]:
        issues: list[Issue] = []
        for block in article.code_blocks:
            tag_issues = self._language_tag(article, block)
            issues += tag_issues
            if not tag_issues:  # code tagged with the wrong language would fail to parse anyway
                issues += self._syntax(article, block)
            issues += self._credentials(article, block)
            issues += self._shell_habits(article, block)
        return self._python2_as_one(article, issues)

    def _python2_as_one(self, article: ParsedArticle, issues: list[Issue]) -> list[Issue]:
        """Blocks that fail only on Python 2's print statement (a 2015 PySpark post) are one finding
        naming their lines: the code was right for its time, and one note says what changed."""
        python2 = [i for i in issues if i.source == "rule:syntax-python" and PYTHON2_PRINT in i.problem]
        if not python2:
            return issues
        lines = [i.line_start for i in python2 if i.line_start is not None]
        where = f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(map(str, lines))
        grouped = self.issue(
            article, "warning", lines[0] if lines else None,
            f"Python 2 code: the print statement ({where}) is a syntax error in Python 3.",
            "Write print(...) so the code runs on Python 3, or say which Python the article is for.",
            "Python 3 rejects the print statement; a reader who copies the code today gets a SyntaxError.",
            "rule:syntax-python",
        )
        first = issues.index(python2[0])
        kept = [i for i in issues if i not in python2]
        return [*kept[:first], grouped, *kept[first:]]

    def _language_tag(self, article: ParsedArticle, block: CodeBlock) -> list[Issue]:
        if block.language is None and is_stack_trace(block.content):
            return []  # an exception's stack trace is program output: no language would fit
        if block.language is None:
            # A file name with no language (```:Racket, ```: ./ssh/config) was meant to carry one;
            # otherwise only content that is recognisably code of a language needs a tag:
            # program output, quoted answers, diagrams and notation would only get `text`. A label
            # in words (```:出力画面, the output screen; ```:Start file, a caption) names no file.
            label = block.info.strip()
            name = label[1:].strip()
            named = label.startswith(":") and ("." in name or "/" in name or (name.isascii() and " " not in name))
            language = None if named else recognised_language(block)
            if language in ("yaml", "json") and _announces_output(article, block):
                # `Core:` / `  - installed: 1.7.13`, `[20990, 23543, …]` under 「出力結果は」: what a
                # program printed reads as YAML or JSON
                language = None
            if language == "markdown" and _announces_output(article, block, _OUTPUT_CUE, _ENVIRONMENT_CUE):
                language = None  # 「以下、私の環境です」 over `* iOS 16.0.2, …`: a printed report, not Markdown source
            if not named and language is None:
                return []
            suggestion = (
                f"Name the language after the fence: it reads as {language}, so ```{language}."
                if language else
                "Name the language after the fence, e.g. ```python (Zenn/Qiita also accept ```python:main.py)."
            )
            return [self.issue(
                article, "suggestion", block.start_line, "Code block without a language tag.", suggestion,
                "Without a language the code is not syntax-highlighted and readers must guess what it is.",
                "rule:code-language", line_end=block.end_line,
            )]
        if block.filename and block.language != "diff":  # ```diff:config.yaml shows a change to that file
            suffix = "." + block.filename.rsplit(".", 1)[-1].lower() if "." in block.filename else ""
            expected = EXTENSIONS.get(suffix)
            if expected and block.language not in expected:
                return [self.issue(
                    article, "suggestion", block.start_line,
                    f"The block is tagged `{block.language}` but its file name is `{block.filename}`.",
                    "Make the language tag match the file.",
                    "A mismatched tag gives the wrong highlighting and confuses readers.",
                    "rule:code-filename",
                )]
        return []

    def _syntax(self, article: ParsedArticle, block: CodeBlock) -> list[Issue]:
        language = block.language or ""
        if block.diff:
            return []
        checks: dict[frozenset[str], tuple[str, Callable[[str], None]]] = {
            frozenset(PYTHON): ("Python", check_python),
            frozenset(JSON): ("JSON", check_json),
            frozenset(YAML): ("YAML", check_yaml),
            frozenset(TOML): ("TOML", check_toml),
            frozenset(SHELL): ("shell", check_shell),
        }
        if language not in SHELL and ELISION.search(block.content):
            return []  # an excerpt: `...` marks what the author left out, so it cannot parse as a whole
        if language in JSON | YAML | TOML and HEREDOC.search(block.content):
            return []  # `cat <<EOF | kubectl apply -f -` around the document: a shell command, not the data
        if language in JSON and JSON_LINES_FILE.search(block.filename or ""):
            return self._json_lines(article, block)  # one document per line (test.jsonl)
        if language in JSON and (
            VSCODE_VARIABLE.search(block.content) or VSCODE_SNIPPETS.search(block.content)
            or JSONC_FILE.search(block.filename or "")
            or _announces_output(article, block, JSONC_NAMED)
        ):
            return []  # VS Code's JSON with comments and trailing commas (tasks.json, tsconfig.json)
        if language in JSON and JSON_COMMENT.search(block.content):
            return []  # JSON with comments (jsonc: VS Code's settings and the like)
        if language in PYTHON and all(SHELL_COMMAND.match(line) for line in block.content.splitlines() if line.strip()):
            return []  # `PUBSUB_EMULATOR_HOST=… python stream.py`: the command that runs it, under a python tag
        if language in PYTHON and PYTHON_ERROR_OUTPUT.match(block.content.lstrip()):
            return []  # the error a run printed (`Traceback …`, `URLError: <urlopen error …>`): output, not code
        if language in PYTHON and SHOWN_SYNTAX_ERROR.search(block.content):
            return []  # `add 1, 2` then `# SyntaxError: invalid syntax`: the writer shows the error on purpose
        if language in PYTHON | YAML and block.content.lstrip("\n")[:1] in (" ", "\t"):
            return []  # the first line is indented: lines from inside a function, a class or a mapping, an excerpt
        if language in JSON and JSON_PLACEHOLDER.search(block.content):
            return []  # `"data": <any payload>`: a message's shape written as a template
        if language in JSON and _json_values(block.content) > 1:
            return []  # `{…}` then `{…}`: several documents one after another (a stream of results), each valid
        if language in JSON and not JSON_DOCUMENT.match(block.content):
            return []  # members shown without their object (an excerpt), or no JSON at all under a json tag
        if language in PYTHON | JSON | YAML | TOML and (
            DIFF_LINE.search(block.content)  # `+    timeout-minutes: 11`, `- HOOK_URL = …`: a change shown as a diff
            or PROMPT.match(block.content.lstrip("\n"))  # `$ ansible-playbook site.yml` and its output: a session
            or ANNOTATION.search(block.content)  # `↑ random_stateを1→0に変えるだけ`: the writer's note drawn in
            or len(VARIANT_MARK.findall(block.content)) > 1  # `# ✅ …` / `# ❌ …`: variants side by side
        ):
            return []  # other text under a data or code tag: no document to parse
        if language in PYTHON and _metadata_only(block.content):
            return []  # `BokehCSS: https://…` lines: a post's metadata header under a python tag
        if language in TOML and not TOML_STATEMENT.search(block.content):
            return []  # no `key = value` and no `[table]`: another format under the tag (Netlify's `_headers`)
        if language in TOML and block.filename and not TOML_FILE.search(block.filename) and is_ini(block.content):
            return []  # ```toml:master.cnf: a MySQL option file (INI, `log_bin=mysql-bin`) under the tag
        if language in SHELL and is_other_repl(block.content):
            return []  # a Clojure, Ruby, Elixir, SQL… session: its commands are not shell
        for languages, (name, check) in checks.items():
            if language in languages and block.content.strip():
                try:
                    check(block.content)
                except (RecursionError, MemoryError):
                    # Nested deeper than the parser follows (`a*a*…` or `- - -…` thousands of times):
                    # CPython's own compile() gives up the same way, so there is no line to point at.
                    return []
                except SyntaxProblem as problem:
                    if name == "shell" and _looks_like_output(block.content, problem.line):
                        return []  # `build: 3947 (…)`: a program's output pasted under a shell tag
                    if name == "YAML" and "undefined tag handle" in problem.message:
                        return []  # Unity's `--- !u!4 &…` without the %TAG line the file opens with: an excerpt
                    if name == "YAML" and "undefined alias" in problem.message:
                        return []  # `<<: *defaults` from an anchor in another block: an excerpt
                    if name == "YAML" and (_parses_as_toml(block.content) or is_ini(block.content)):
                        return []  # `[versions]` / `key = "1.0"`: TOML or INI (a .gitconfig) under a yaml tag
                    if _fill_in_blank(block.content, problem.line):
                        return []  # `[connections.{コネクション名}]`: a template whose blanks the reader fills in
                    line = block.content_start_line + max(0, problem.line - 1)
                    if block.end_line is not None:
                        line = min(line, block.end_line - 1)
                    return [self._syntax_issue(article, line, name, problem.message)]
        return []

    def _json_lines(self, article: ParsedArticle, block: CodeBlock) -> list[Issue]:
        """A JSON Lines file: each non-blank line is a JSON document of its own."""
        for offset, line in enumerate(block.content.split("\n")):
            try:
                if line.strip():
                    check_json(line)
            except SyntaxProblem as problem:
                return [self._syntax_issue(article, block.content_start_line + offset, "JSON", problem.message)]
        return []

    def _syntax_issue(self, article: ParsedArticle, line: int, name: str, message: str) -> Issue:
        return self.issue(
            article, "warning", line,
            f"{name} syntax error: {message}",
            f"Fix the {name} so it parses; readers copy code blocks as they are.",
            f"The {name} code in this block does not parse.",
            f"rule:syntax-{name.lower()}",
        )

    def _credentials(self, article: ParsedArticle, block: CodeBlock) -> list[Issue]:
        issues = []
        for offset, line in enumerate(block.content.split("\n")):
            number = block.content_start_line + offset
            if find_secrets(line, number):
                continue  # the privacy checker reports it as critical
            for match in assigned_secrets(line):
                key, value = match.group(1), match.group(2).rstrip(".,;")
                if not re.search(r"(?i)secret|token(?!i[sz])|passw|api[_-]?key|apikey|private", key) or _WHERE_KEPT.search(key):
                    continue  # `secretName: my-pub-key` names where a secret is kept, not the secret
                if key.lower() == "from_secret":
                    continue  # Drone CI's `from_secret: docker_password` names the stored secret
                if key == "secretKey" and _EXTERNAL_SECRET.search(block.content):
                    continue  # an ExternalSecret's `secretKey` names the key in the Secret it writes
                quoted = re.search(r"[\"']" + re.escape(value), line) is not None
                config_like = block.language in CONFIG_LANGUAGES or bool(
                    re.search(r"(?i)\.(ya?ml|env|ini|toml|cfg)$", block.filename or "")
                )
                if PLACEHOLDER.search(value) or default_password(value) or looks_random(value):
                    continue  # placeholders and tutorial defaults are fine; random values are privacy's
                if not (quoted or config_like):
                    continue  # `password = read_password()` is code, not a literal
                issues.append(self.issue(
                    article, "warning", number, f"Hardcoded credential: `{key}` is set to a literal value.",
                    f"Read it from the environment, e.g. os.environ[\"{key.upper()}\"], and show a placeholder.",
                    "Readers copy examples verbatim, and a real value here is a leaked credential.",
                    "rule:hardcoded-credential",
                ))
        return issues

    def _shell_habits(self, article: ParsedArticle, block: CodeBlock) -> list[Issue]:
        if (block.language or "") not in SHELL | {"zsh"}:
            return []
        issues = []
        for offset, line in enumerate(block.content.split("\n")):
            number = block.content_start_line + offset
            if re.search(r"\bchmod\s+(-R\s+)?777\b", line):
                issues.append(self.issue(
                    article, "warning", number, "chmod 777 makes the file writable by every user.",
                    "Grant only what is needed, e.g. chmod 755 (directories) or 644 (files).",
                    "World-writable files are a common security hole, and readers copy the command.",
                    "rule:chmod-777",
                ))
            if next(finditer_by_runs(CURL_PIPE_SHELL, line, CURL, NOT_PIPE), None):
                issues.append(self.issue(
                    article, "suggestion", number, "The script is piped from curl straight into a shell.",
                    "Show how to download and inspect the script first, or link the official installer docs.",
                    "Piping remote scripts into a shell runs whatever the server returns.",
                    "rule:curl-pipe-shell",
                ))
        return issues


def is_other_repl(source: str) -> bool:
    """More lines open with another language's REPL prompt than with a shell prompt."""
    lines = source.split("\n")
    repl = sum(1 for line in lines if REPL_PROMPT.match(line))
    return repl > 0 and repl > sum(1 for line in lines if PROMPT.match(line))


def _looks_like_output(source: str, line: int) -> bool:
    """Whether the block's line (1-based) reads as a log line (`name: message`) rather than a
    command: no command is spelt with a colon after its first word."""
    lines = source.split("\n")
    return 1 <= line <= len(lines) and bool(re.match(r"^\s*[\w.\-\[\]]+:\s", lines[line - 1]))


_REPL_PROMPT = re.compile(r"^(?:[A-Za-z]\w* )?(?:>>>|\.\.\.) ")


def check_python(source: str) -> None:
    lines = source.split("\n")
    marker = next((i for i, line in enumerate(lines) if line.strip() == ">>>"), None)
    if marker is not None:
        # A notebook-style block: the code, then a lone >>> and the output it printed.
        lines = lines[:marker] + [""] * (len(lines) - marker)
    if any((match := _REPL_PROMPT.match(line)) and ">>>" in match.group() for line in lines):
        # REPL transcript: keep the statements, blank the output, keep the line count. An embedding
        # application may name its interpreter before the prompt (TouchDesigner's `python >>> `).
        lines = _repl_statements(lines)
    # IPython magics (%matplotlib, !pip), their output captured (`ids = !gcloud …`, also into an item:
    # `results["filter"] = %timeit -o …`) and help (obj? / obj??)
    lines = ["pass" if IPYTHON_LINE.match(line) else line for line in lines]
    lines = _comment_bodies_filled(lines)
    # What the interpreter printed, pasted without its >>> (`type(a)` / `<class 'int'>`): output.
    lines = ["" if PYTHON_REPR.match(line) else line for line in lines]
    written = [line for line in lines if line.strip()]
    if not written or re.search(r":\s*(?:#.*)?$", written[-1]):
        return  # nothing but output, or it ends on `if __name__ == "__main__":`: a line shown, not a program
    if CYTHON.search("\n".join(lines)):
        return  # `cimport`, `cdef`: Cython under a python tag, a language compile() cannot judge
    text = textwrap.dedent("\n".join(lines))
    try:
        with warnings.catch_warnings():  # `0x1for` and `"\d"` warn on stderr; the article's code is not ours to warn about
            warnings.simplefilter("ignore", SyntaxWarning)
            compile(text, "<block>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError as exc:
        if sys.version_info < (3, 12) and (PEP_695.search(text) or PEP_701.search(text)):
            return  # `def f[T](…)`, `type X = …`, `f"{s.replace("a", "b")}"`: Python 3.12 grammar this interpreter cannot judge
        raise SyntaxProblem(exc.lineno or 1, exc.msg) from None


def _repl_statements(lines: list[str]) -> list[str]:
    """A REPL transcript's statements, line for line: prompted lines without their prompt, and
    the lines of a triple-quoted string a prompted line opened (`>>> code = \"\"\"` then the
    string's lines, often pasted without their `... `); every other line, output, blanked."""
    kept: list[str] = []
    quote: str | None = None  # the triple quote a statement opened and has not closed
    for line in lines:
        match = _REPL_PROMPT.match(line)
        text = line[match.end():] if match else line if quote else ""
        kept.append(text)
        for found in re.finditer(r'"""|\'\'\'', text):
            if quote is None:
                quote = found.group()
            elif found.group() == quote:
                quote = None
    return kept


IPYTHON_LINE = re.compile(r"^\s*(?:[\w.]+(?:\[[^\]\n]*\])*\s*=\s*)?[!%]|^\s*[\w.]+\?\??\s*$")
CYTHON = re.compile(r"^[^\S\n]*+(?:cimport\s|from\s+\S+\s+cimport\s|cp?def\s+(?:(?:public|inline|extern|class|struct)\s+)?[\w.\[\], ]+\s+\w+\s*[(=:\n])", re.M)
# Type parameter lists and `type` aliases (PEP 695, Python 3.12).
PEP_695 = re.compile(r"^[^\S\n]*+(?:(?:async\s+)?def|class)\s+\w+\s*\[|^[^\S\n]*+type\s+\w+\s*(?:\[[^\]]*\])?\s*=", re.M)
# An f-string whose replacement field holds a string in the f-string's own quotes (PEP 701, Python
# 3.12): `f"URL: {url.replace("map", "food")}"`. The field closes after the inner string.
PEP_701 = re.compile(r"""[fF][rRbB]?(?:"[^"\n]*\{[^}"\n]*"[^"\n]*"[^}\n]*\}|'[^'\n]*\{[^}'\n]*'[^'\n]*'[^}\n]*\})""")
PYTHON_REPR = re.compile(r"^\s*<(?:class|function|module|built-in function|bound method|generator object|\w+(?:\.\w+)* object) [^<>]*>\s*$")
_BLOCK_OPENER = re.compile(r"^(\s*)[^#\s].*:\s*(?:#.*)?$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _comment_bodies_filled(lines: list[str]) -> list[str]:
    """A block whose body is only a comment (`try:` / `# ここに処理を書く` / `except …:`) is a
    template the reader fills in: the comment stands for the body, so it becomes `pass` (the line
    count unchanged)."""
    filled = list(lines)
    for index, line in enumerate(lines):
        opener = _BLOCK_OPENER.match(line)
        if opener is None:
            continue
        body = index + 1
        comments = []
        while body < len(lines) and (not lines[body].strip() or lines[body].lstrip().startswith("#")):
            if lines[body].strip() and _indent(lines[body]) > _indent(line):
                comments.append(body)
            body += 1
        if comments and (body == len(lines) or _indent(lines[body]) <= _indent(line)):
            last = comments[-1]
            filled[last] = " " * _indent(lines[last]) + "pass"
    return filled


def _json_values(source: str) -> int:
    """How many JSON values `source` holds one after another (0 when any of them does not parse)."""
    decoder = json.JSONDecoder()
    position, count, text = 0, 0, source.strip()
    while position < len(text):
        try:
            _value, end = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):  # RecursionError: `[[[[…` deeper than the decoder goes
            return 0
        count += 1
        position = end
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
    return count


def _one_member_shown(source: str) -> bool:
    """An object whose only member, a section (an object or a list), is followed by a comma before
    the closing brace: a file shown from the section the text asks to change (package.json's
    `scripts`), the comma standing for the members left out. A comma after a lone value
    (`{"url": "…",}`) or after the last of several members is a slip, and stays an error."""
    text = source.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return False
    inner = text[1:-1].rstrip()
    if not inner.endswith(","):
        return False
    try:
        value = json.loads("{" + inner[:-1] + "}")
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and len(value) == 1 and isinstance(next(iter(value.values())), (dict, list))


def _is_template(source: str) -> bool:
    """A Helm, Go, Handlebars or Jinja template of a data file (`{{ … }}`, `{% … %}`): not the
    format it renders to until it is rendered, so no syntax of that format to check."""
    return "{{" in source or "{%" in source


def check_json(source: str) -> None:
    if _is_template(source):
        return
    try:
        json.loads(source)
    except json.JSONDecodeError as exc:
        before = source[: exc.pos].rstrip()
        if before.endswith(",") and not source[exc.pos :].strip():
            return  # the block stops after a member's comma (`},` of a long array): an excerpt, cut there
        if _one_member_shown(source):
            return  # `{"scripts": {…},}`: a file shown from the one member to change, the comma marking the rest
        if before.endswith(",") and exc.msg.startswith(("Expecting property name", "Expecting value")):
            # The parser notices a trailing comma at the next token; point at the comma.
            raise SyntaxProblem(before.count("\n") + 1, "trailing comma") from None
        if exc.msg.startswith("Expecting ',' delimiter") and "\n" in source[len(before) : exc.pos]:
            # The missing comma belongs at the end of the previous value's line.
            raise SyntaxProblem(before.count("\n") + 1, "missing comma at the end of the line") from None
        raise SyntaxProblem(exc.lineno, exc.msg) from None


# `# in kustomization.yaml`, `# file: .env`, `# config/app.yml`: a comment naming the file the lines
# below it belong to.
FILE_MARKER = re.compile(r"^#\s*(?:in\s+|file(?:name)?\s*:\s*)?(?P<name>[\w./-]*\.[A-Za-z0-9]+)\s*(?::.*)?$")
YAML_FILE = re.compile(r"(?i)\.ya?ml$")


def yaml_files_only(source: str) -> str:
    """A block that lists several files, each under a comment naming it, as the YAML documents of its
    YAML files: each marker opens a document (`---`), a file of another kind (`.env`) is blanked;
    the line count is unchanged. A block with fewer than two markers is returned as it is."""
    lines = source.split("\n")
    markers = [(index, match.group("name")) for index, line in enumerate(lines) if (match := FILE_MARKER.match(line))]
    if len(markers) < 2:
        return source
    kept = lines[: markers[0][0]]
    for (index, name), (end, _next) in zip(markers, [*markers[1:], (len(lines), "")], strict=True):
        body = lines[index + 1 : end]
        kept += ["---", *(body if YAML_FILE.search(name) else [""] * len(body))]
    return "\n".join(kept)


# A line a YAML document's body would hold at its left margin: a mapping key or a list item.
_YAML_TOP_LINE = re.compile(r"^(?:[A-Za-z_\"'][^:\s]*:(?:\s|$)|- |-$)")


def front_matter_only(source: str) -> str:
    """A Markdown file shown under a yaml tag (a skill or prompt file: front matter between `---`
    lines, then instructions in prose) as its front matter alone: the body is blanked, the line
    count unchanged. A second YAML document after the `---` (a key or a list item at the margin)
    keeps the block as it is."""
    lines = source.split("\n")
    if not lines or lines[0].strip() != "---":
        return source
    closing = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if closing is None:
        return source
    body = lines[closing + 1 :]
    if not any(line.strip() for line in body) or any(_YAML_TOP_LINE.match(line) for line in body):
        return source
    return "\n".join(lines[: closing + 1] + [""] * len(body))


def check_yaml(source: str) -> None:
    if _is_template(source):
        return
    source = front_matter_only(yaml_files_only(source))
    try:
        # compose, not load: CloudFormation's !Ref and other custom tags are valid syntax.
        for _ in yaml.compose_all(source, Loader=yaml.SafeLoader):
            pass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise SyntaxProblem((mark.line + 1) if mark else 1, str(exc.problem or exc.context)) from None
    except yaml.YAMLError as exc:
        raise SyntaxProblem(1, str(exc)) from None


def check_toml(source: str) -> None:
    try:
        tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"line (\d+)", str(exc))
        line = int(where.group(1)) if where else source.rstrip().count("\n") + 1  # "at end of document"
        raise SyntaxProblem(line, str(exc).split(" (at")[0]) from None


def shell_commands(source: str) -> str:
    """The commands of a block: a terminal transcript keeps only prompt lines (and their
    continuations), output lines become blank so line numbers stay aligned."""
    lines = source.split("\n")
    prompted = [line for line in lines if PROMPT.match(line)]
    written = [line for line in lines if line.strip()]
    starts_with_prompt = bool(written) and written[0] in prompted
    if not prompted or (len(prompted) < len(written) / 3 and not starts_with_prompt):
        return source
    kept = []
    continuing = False
    for line in lines:
        if PROMPT.match(line):
            command = PROMPT.sub("", line, count=1)
            kept.append(command)
            continuing = command.rstrip().endswith("\\")
        elif continuing:
            kept.append(line)
            continuing = line.rstrip().endswith("\\")
        else:
            kept.append("")
    return "\n".join(kept)


def check_shell(source: str) -> None:
    bash = shutil.which("bash")
    if bash is None:
        return
    script = shell_commands(source)
    try:
        # -n parses without executing anything.
        result = subprocess.run([bash, "-n"], input=script, capture_output=True, text=True, timeout=5, check=False)
    except (subprocess.TimeoutExpired, OSError):
        return
    if result.returncode != 0:
        message = result.stderr.strip().splitlines()[0] if result.stderr.strip() else "syntax error"
        where = re.search(r"line (\d+)", message)
        message = re.sub(r"^.*?(line \d+:\s*|bash:\s*)", "", message)
        line = int(where.group(1)) if where else 1
        if "end of file" in message:
            opener = unclosed_opener(script)
            if opener is not None:
                keyword, line = opener
                message = f"`{keyword}` is never closed ({SHELL_CLOSERS[keyword]} is missing)"
        raise SyntaxProblem(line, message)


SHELL_CLOSERS = {"if": "fi", "case": "esac", "do": "done", "{": "}"}
_SHELL_WORD = re.compile(r"(?:^|[;&|]\s*|\s)(if|then|fi|case|esac|do|done|\{|\})(?=\s|;|$)")


def unclosed_opener(script: str) -> tuple[str, int] | None:
    """The innermost if/case/do/{ left open, with its line: where the author must look."""
    stack: list[tuple[str, int]] = []
    closers = {v: k for k, v in SHELL_CLOSERS.items()}
    for number, line in enumerate(script.split("\n"), start=1):
        code = re.sub(r"#.*$|'[^']*'|\"[^\"]*\"", "", line)
        for match in _SHELL_WORD.finditer(code):
            word = match.group(1)
            if word in SHELL_CLOSERS:
                stack.append((word, number))
            elif word in closers and stack and stack[-1][0] == closers[word]:
                stack.pop()
    return stack[-1] if stack else None


# A blank for the reader to fill in, named in Japanese: `{コネクション名}`, `<アカウント名>`.
FILL_IN_BLANK = re.compile(r"\{[^{}\n]*[^\x00-\x7f][^{}\n]*\}|<[^<>\n]*[^\x00-\x7f][^<>\n]*>")


def _fill_in_blank(source: str, line: int) -> bool:
    """Whether the line a parser stopped at (1-based in `source`) holds a blank named in words:
    a template the writer means the reader to complete, not code with an error."""
    lines = source.split("\n")
    return 1 <= line <= len(lines) and FILL_IN_BLANK.search(lines[line - 1]) is not None


def _parses_as_toml(text: str) -> bool:
    try:
        check_toml(text)
    except SyntaxProblem:
        return False
    return True
