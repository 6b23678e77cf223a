"""Per-rule control: every issue's stable rule id, the project's rule settings (on/off and
severity per rule, from PROOFREAD_RULES or a PROOFREAD_CONFIG file) and inline
`<!-- proofread-disable … -->` comments (textlint's and markdownlint's honoured too)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from agents.proofread.schemas import SEVERITIES, Issue, Suppression

SETTINGS = ("off", "on", *SEVERITIES)
# The defaults, calibrated on the dev part of eval/proofread (24 published articles, every finding
# judged by reading it): a rule raises a warning only where it was right at least 9 times in 10;
# rules whose findings were mostly wrong or a matter of taste are off; rules that raised false
# warnings and no true ones are suggestions. A project turns any of them back on with `rule=on`
# (the rule's own severity) or sets a severity.
DEFAULT_SETTINGS: dict[str, str] = {
    # off: mostly false or debatable on published articles
    "duplicate-link": "off",  # reference lists repeat links on purpose
    "bare-url": "off",  # platforms autolink them; link text is a preference
    "http-url": "off",  # http:// links: whether the site serves HTTPS cannot be told offline
    "unused-definition": "off",
    "introduction": "off",
    "conclusion": "off",
    "section-balance": "off",
    "hedge": "off",  # 〜と思う / かもしれない / I think: mostly the writer's voice
    "redundant-okonau": "off",  # 〜を行う → 〜する: a preference
    "max-ten": "off",
    "md004": "off", "md005": "off", "md012": "off", "md030": "off", "md038": "off",
    "md055": "off",  # repeats md056 on the same rows
    # suggestions: false warnings on published articles and no true ones
    "syntax-python": "suggestion",  # notebook output, REPL sessions
    "syntax-shell": "suggestion",  # terminal logs under a shell tag
    "local-path": "suggestion",
    "setext-heading": "suggestion",
    "table-delimiter": "suggestion",
}
# markdownlint rule ids and names, and the rules of ours that check the same thing. pymarkdownlnt
# uses markdownlint's numbers, so md001… also stand for themselves.
MARKDOWNLINT_EQUIVALENTS: dict[str, tuple[str, ...]] = {
    "md003": ("setext-heading",), "heading-style": ("setext-heading",),
    "md011": ("md011",), "no-reversed-links": ("md011",),
    "md024": ("duplicate-heading",), "no-duplicate-heading": ("duplicate-heading",),
    "md025": ("duplicate-title",), "single-title": ("duplicate-title",), "single-h1": ("duplicate-title",),
    "md034": ("bare-url", "bare-url-swallow"), "no-bare-urls": ("bare-url", "bare-url-swallow"),
    "md040": ("code-language",), "fenced-code-language": ("code-language",),
    "md042": ("empty-link", "empty-link-text"), "no-empty-links": ("empty-link", "empty-link-text"),
    "md043": ("introduction", "conclusion"), "required-headings": ("introduction", "conclusion"),
    "md045": ("image-alt",), "no-alt-text": ("image-alt",),
    "md052": ("undefined-reference",), "reference-links-images": ("undefined-reference",),
    "md053": ("unused-definition", "duplicate-definition"),
    "link-image-reference-definitions": ("unused-definition", "duplicate-definition"),
    "md054": ("bare-url",), "md056": ("md056", "table-delimiter"), "table-column-count": ("md056",),
    "md001": ("md001", "first-heading-level"), "heading-increment": ("md001", "first-heading-level"),
    "md018": ("md018",), "no-missing-space-atx": ("md018",),
    "md032": ("list-marker-space",), "blanks-around-lists": ("list-marker-space",),
    "md037": ("md037", "strong-flanking"), "no-space-in-emphasis": ("md037", "strong-flanking"),
}


class RuleConfigError(ValueError):
    pass


def rule_id(issue: Issue) -> str:
    """The stable id of the rule behind an issue: `duplicate-link` for source "rule:duplicate-link",
    `md001` for "pymarkdownlnt:MD001", the source itself otherwise ("llm", …)."""
    source = issue.source or issue.category
    tool, _, name = source.partition(":")
    if tool == "rule":
        return name
    if tool == "pymarkdownlnt":
        return name.lower()
    return source.lower()


def parse_settings(items: Iterable[tuple[str, object]], where: str) -> dict[str, str]:
    """{rule id: off|on|critical|warning|suggestion} from (rule, value) pairs; true/false mean on/off."""
    settings: dict[str, str] = {}
    for rule, value in items:
        name = str(rule).strip().lower().removeprefix("rule:")
        if isinstance(value, bool):
            setting = "on" if value else "off"
        else:
            setting = str(value).strip().lower()
            setting = {"true": "on", "false": "off", "error": "critical", "info": "suggestion"}.get(setting, setting)
        if not name or setting not in SETTINGS:
            raise RuleConfigError(
                f"{where}: “{name}={value}” is not a rule setting; use rule-id=off|on|critical|warning|suggestion"
            )
        settings[name] = setting
    return settings


def settings_from_text(text: str, where: str = "PROOFREAD_RULES") -> dict[str, str]:
    """PROOFREAD_RULES="duplicate-link=on,sentence-length=off" (also `rule:severity`)."""
    pairs = []
    for part in text.replace(";", ",").split(","):
        if not part.strip():
            continue
        rule, separator, value = part.partition("=") if "=" in part else part.partition(":")
        if not separator:
            raise RuleConfigError(f"{where}: “{part.strip()}” needs a setting, e.g. {part.strip()}=off")
        pairs.append((rule, value))
    return parse_settings(pairs, where)


def settings_from_file(path: str) -> dict[str, str]:
    """A YAML or JSON file: `rules: {duplicate-link: on, sentence-length: off}` (a top-level
    mapping of rules works too)."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise RuleConfigError(f"PROOFREAD_CONFIG: cannot read {file} ({exc.strerror or type(exc).__name__})") from None
    try:
        data = json.loads(text) if file.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise RuleConfigError(f"PROOFREAD_CONFIG: {file} is not valid {file.suffix.lstrip('.') or 'YAML'}: "
                              f"{str(exc).splitlines()[0]}") from None
    if data is None:
        return {}
    rules = data.get("rules", data) if isinstance(data, dict) else None
    if not isinstance(rules, dict):
        raise RuleConfigError(f"PROOFREAD_CONFIG: {file} must hold a mapping `rules:` of rule ids to settings")
    return parse_settings(rules.items(), f"PROOFREAD_CONFIG ({file.name})")


def _suppressed_rules(suppression: Suppression) -> tuple[str, ...] | None:
    """The rule ids a comment turns off; None: all of them."""
    if not suppression.rules:
        return None
    if suppression.tool != "markdownlint":
        return suppression.rules
    return tuple(ours for name in suppression.rules for ours in MARKDOWNLINT_EQUIVALENTS.get(name, ()))


def is_suppressed(issue: Issue, rule: str, suppressions: list[Suppression]) -> bool:
    line = issue.line_start
    if line is None:
        return False
    for suppression in suppressions:
        if suppression.start_line <= line <= suppression.end_line:
            rules = _suppressed_rules(suppression)
            if rules is None or rule in rules:
                return True
    return False


def apply_rule_control(
    issues: Iterable[Issue], settings: Mapping[str, str], suppressions: list[Suppression] | None = None,
) -> list[Issue]:
    """The issues the project wants: rules turned off (by default, by the settings, or by an
    inline comment around the line) dropped, severities changed where the settings say."""
    kept = []
    for issue in issues:
        rule = rule_id(issue)
        setting = settings.get(rule, DEFAULT_SETTINGS.get(rule, "on"))
        if setting == "off" or (suppressions and is_suppressed(issue, rule, suppressions)):
            continue
        if setting in SEVERITIES and setting != issue.severity:
            issue = issue.model_copy(update={"severity": setting})
        kept.append(issue)
    return kept
