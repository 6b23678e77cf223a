"""What language an untagged code block recognisably is, from its content alone.

A missing language tag is worth a note only when a tag would name a language: a reader's highlighter
needs it for code, a shell session or a configuration file. Program output, a model's quoted answer,
an ASCII diagram or ad-hoc notation have no language (only `text` would fit), so an untagged block
whose content none of these tests recognises is left alone."""

from __future__ import annotations

import ast
import json
import re
from functools import lru_cache
from pathlib import Path

import yaml

from agents.proofread.schemas import CodeBlock
from agents.proofread.text import PROMPT

COMMANDS_FILE = Path(__file__).resolve().parent.parent / "data" / "commands.txt"

# `$ cmd`, `% cmd`, `❯ cmd`, `PS C:\> cmd`, and `user@host:~/dir$ cmd` / `[user@host dir]$ cmd`.
USER_PROMPT = re.compile(r"^\s*\[?[\w.-]+@[\w.-]+[^$#\n]*\]?[$#]\s")
COMMAND_WORD = re.compile(r"^(?:sudo\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*([a-z][\w.+-]*|\.{0,2}/[\w./-]+)(?=\s|$)")
COMMENT = re.compile(r"^\s*(?:#|//)")
# `npm error code ERESOLVE`, `npm WARN deprecated …`, `npm notice …`: a program's log line, its
# name then a level. No program readers run has a sub-command so named.
LOG_LEVEL = re.compile(r"(?i)^(?:err!?|error|warn(?:ing)?|notice|fatal|verb|sill|timing)\b")
# What docker compose prints after a service's name: `| ` and a time stamp, no pipeline.
LOG_PREFIX = re.compile(r"^\s+\|\s+\d")
ELLIPSIS = re.compile(r"^\s*(?:#\s*)?(?:\.\.\.|…)")
SQL_STATEMENT = re.compile(
    r"(?im)^[^\S\n]*+(?:select\s.+\sfrom\s|insert\s+into\s|update\s+\S+\s+set\s|delete\s+from\s"
    r"|create\s+(?:or\s+replace\s+)?(?:unique\s+)?(?:table|index|view|database|schema|extension|function|user|role|trigger)\s"
    r"|drop\s+(?:table|index|view|database|schema)\s|alter\s+table\s|grant\s.+\son\s|revoke\s.+\son\s)"
)
# A program's error line opening the block (`ERROR: (gcloud.…) There was a problem…`, `fatal: not a
# git repository`, `error[E0382]: borrow of moved value`): what follows is the message it printed.
ERROR_LINE = re.compile(r"^(?:ERROR|Error|error|FATAL|Fatal|fatal)(?:\[[\w-]+\])?:\s+\S+(?:\s+\S+){2,}")
# ML's `let x = … in` (OCaml, F#, an ML-style intermediate form): `let` here opens no JavaScript binding.
ML_LET_IN = re.compile(r"(?m)^[^\S\n]*+let\b[^\n]*=[^\n]*\bin\s*$")
# A logger's tag opening a printed line (`flutter: uri: …`, `I/flutter: …`, `app_1: …`).
LOG_TAG = re.compile(r"^([\w./-]+):(?:\s|$)")
INI_SECTION = re.compile(r"^\s*\[[\w .:\"-]+\]\s*$")
INI_PAIR = re.compile(r"^\s*[\w.-]+\s*=\s*\S?")
INI_COMMENT = re.compile(r"^\s*[;#]")
# Strong signs of a programming language, each a (pattern, tag) pair; the first that matches wins.
SIGNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?m)^[^\S\n]*+#include\s*[<\"]"), "c"),
    (re.compile(r"(?ms)^[^\S\n]*+package\s+\w+\s*$.*^[^\S\n]*+func\s"), "go"),
    (re.compile(r"(?m)^[^\S\n]*+(?:pub\s+)?fn\s+\w+.*[{(]|^[^\S\n]*+use\s+\w+(?:::\w+)+;"), "rust"),
    (re.compile(r"(?m)^[^\S\n]*+(?:public|private|protected)\s+(?:static\s+)?(?:final\s+)?(?:class|interface|void|enum)\s"), "java"),
    (re.compile(r"(?m)^[^\S\n]*+(?:import\s.+\sfrom\s+['\"]|import\s+['\"][^'\"\n]+['\"];?\s*$|export\s+(?:default|const|function|class)\s"
                r"|['\"]use strict['\"];|require\(['\"][^'\"\n]+['\"]\);?\s*$|module\.exports\s*="
                r"|(?:const|let|var)\s+[\w{}\[\], ]+=\s*(?:require\(|async\b|\(|function\b|new\b|\{|\[|['\"`\d])"
                r"|function\s+\w+\s*\(|console\.log\()"), "javascript"),
    (re.compile(r"(?m)^FROM\s+\S+.*(?:\n.*)*\n(?:RUN|COPY|ADD|CMD|ENTRYPOINT|WORKDIR|ENV|EXPOSE|ARG)\s"), "dockerfile"),
    (re.compile(r"(?m)^[^\S\n]*+<\?xml\s"), "xml"),
    (re.compile(r"(?is)^\s*<(?:!doctype\s+html|html|head|body|div|span|p|a|ul|ol|table|form|section|template|script|style)[\s>].*</\w+>"), "html"),
    (re.compile(r"(?m)^[^\S\n]*+[.#]?[\w-]+(?:[\s,>:.#][\w-]+)*\s*\{\s*$\n\s*[\w-]+\s*:\s*[^;]+;"), "css"),
)
# Markdown written to be shown, not rendered: inline markup in pairs, or a link. A Python dunder
# in a path (`…/__init__.py`, `__main__.py`) is a name, not bold.
MARKDOWN_MARKUP = re.compile(
    r"\*\*[^*\s](?:[^\n]*?[^*\s])?\*\*|(?<![\w/.])__[^_\s](?:[^_\n]*[^_\s])?__(?![\w.(])|~~[^~\s](?:[^~]*[^~\s])?~~"
    r"|(?<![\w*])\*[^*\s](?:[^*\n]*[^*\s])?\*(?![\w*])|(?<![\w_])_[^_\s](?:[^_\n]*[^_\s])?_(?![\w_])"
    r"|\[[^\]\n]+\]\([^)\s]+\)"
)


@lru_cache(maxsize=1)
def commands() -> frozenset[str]:
    lines = COMMANDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def recognised_language(block: CodeBlock) -> str | None:
    """The tag an untagged block's content calls for (`console`, `sh`, `python`, `json`, `yaml`,
    `sql`, `ini`, `markdown`, …), or None when nothing in it names a language."""
    content = block.content.strip("\n")
    if not content.strip() or _drawn(content) or ERROR_LINE.match(content.lstrip()) or _tagged_log(content):
        return None
    for recognise in (_json, _transcript, _commands, _python, _sql, _ini, _signs, _yaml, _markdown):
        language = recognise(content)
        if language:
            return language
    return None


def _tagged_log(content: str) -> bool:
    """Every line opens with the same tag and a colon (`flutter: **_ Request _**`, `flutter: uri: …`):
    lines a logger printed under one tag. No source repeats its first word on every line so, and
    YAML would have one key many times over."""
    lines = [line for line in content.splitlines() if line.strip()]
    tags = {match.group(1) if (match := LOG_TAG.match(line)) else None for line in lines}
    return len(lines) >= 3 and len(tags) == 1 and None not in tags


def _drawn(content: str) -> bool:
    """ASCII art (a frame of `,:;%*?` a program drew): mostly signs, hardly a letter or digit. Code
    and markup are mostly words, whatever their punctuation."""
    marks = [ch for ch in content if not ch.isspace()]
    return len(marks) >= 40 and sum(ch.isalnum() for ch in marks) < 0.25 * len(marks)


def _json(content: str) -> str | None:
    text = content.strip()
    if not text.startswith(("{", "[")):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: `[[[[…` deeper than the decoder goes
        return None
    return "json" if isinstance(data, dict | list) and data else None


def is_command(line: str) -> bool:
    """`git clone …`, `sudo iptables-restore < rules`, `./build.sh 300`, `FOO=1 make`: a line that
    starts with a program readers run."""
    match = COMMAND_WORD.match(line.strip())
    if match is None:
        return False
    word, rest = match.group(1), line.strip()[match.end():]
    if LOG_LEVEL.match(rest.lstrip()):
        return False
    if LOG_PREFIX.match(rest):
        return False  # `mysql    | 2024-06-24T07:13:15Z …`: a service's log line as docker compose prints it
    return word in commands() or word.startswith(("./", "../", "~/"))


def _transcript(content: str) -> str | None:
    """A terminal session: a prompt (`$ `, `% `, `user@host:~$ `, a root `# ` before a known
    program) followed by a command, whatever output comes after it."""
    for line in content.split("\n"):
        if PROMPT.match(line) and not re.match(r"^\s*>", line):
            rest = PROMPT.sub("", line, count=1)
        elif USER_PROMPT.match(line):
            rest = USER_PROMPT.sub("", line, count=1)
        elif re.match(r"^\s*#\s", line) and is_command(line.strip()[1:]):
            rest = line.strip()[1:]
        else:
            continue
        if is_command(rest):
            return "console"
    return None


def _commands(content: str) -> str | None:
    """Every line is a command, a comment, an elision or the continuation of a command."""
    commands_seen = 0
    continued = False
    for line in content.split("\n"):
        stripped = line.strip()
        if continued or not stripped or ELLIPSIS.match(stripped) or COMMENT.match(stripped):
            continued = continued and stripped.endswith("\\")
            continue
        if not is_command(stripped):
            return None
        commands_seen += 1
        continued = stripped.endswith("\\")
    return "sh" if commands_seen else None


def _python(content: str) -> str | None:
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # the last two: nested deeper than the parser goes
        return None
    statements = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    has_print = any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
        for node in ast.walk(tree)
    )
    return "python" if has_print or any(isinstance(node, statements) for node in tree.body) else None


def _sql(content: str) -> str | None:
    if not SQL_STATEMENT.search(content):
        return None
    return "sql" if re.search(r";\s*$", content, re.M) else None


def _ini(content: str) -> str | None:
    lines = [line for line in content.split("\n") if line.strip() and not INI_COMMENT.match(line)]
    if not lines or not INI_SECTION.match(lines[0]):
        return None
    pairs = sum(1 for line in lines if INI_PAIR.match(line))
    sections = sum(1 for line in lines if INI_SECTION.match(line))
    return "ini" if pairs and pairs + sections == len(lines) else None


def is_ini(content: str) -> bool:
    """Sections and `key = value` pairs only (a .gitconfig, a systemd unit): INI."""
    return _ini(content.strip("\n")) is not None


def _signs(content: str) -> str | None:
    return next(
        (tag for pattern, tag in SIGNS if pattern.search(content) and not (tag == "javascript" and ML_LET_IN.search(content))),
        None,
    )


def _yaml(content: str) -> str | None:
    """A mapping of identifier keys with at least one nested mapping or list: configuration, not
    a program's `Name: value` lines."""
    if "{{" in content or "{%" in content:
        return None
    try:
        data = yaml.safe_load(content)
    except (yaml.YAMLError, RecursionError):  # PyYAML composes nested collections recursively
        return None
    if not isinstance(data, dict) or len(data) < 2:
        return None
    identifier = re.compile(r"^[A-Za-z_][\w.-]*$")
    if not all(isinstance(key, str) and identifier.match(key) for key in data):
        return None
    return "yaml" if any(isinstance(value, dict | list) and value for value in data.values()) else None


def _markdown(content: str) -> str | None:
    """Markup in pairs around words: `*:*` in a listing of sockets (`*:5900  *:*`) holds none."""
    return "markdown" if any(re.search(r"\w", m.group(0).strip("*_~")) for m in MARKDOWN_MARKUP.finditer(content)) else None
