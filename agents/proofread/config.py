"""GraphConfig: the proofreader's settings, frozen and validated when built."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

from agents.proofread.rules import parse_settings, settings_from_file, settings_from_text
from agents.proofread.schemas import CATEGORIES

# Articles larger than this are refused before any work starts (Zenn and Qiita articles are
# rarely over 60 KB; 200 KB leaves room for long ones while bounding the work per turn).
MAX_ARTICLE_BYTES = 200_000

_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class GraphConfig:
    max_article_bytes: int = MAX_ARTICLE_BYTES
    # Run the checkers as parallel branches of one super-step; False chains them one after another.
    parallel: bool = True
    checkers: tuple[str, ...] = CATEGORIES
    # Network link checks (HEAD, then GET when HEAD is refused); off unless asked for.
    check_links_online: bool = False
    link_timeout: float = 5.0
    link_retries: int = 1
    link_concurrency: int = 8
    max_links_checked: int = 100
    # pymarkdownlnt runs in a child process that is killed after this many seconds.
    linter_timeout: float = 30.0
    # Language rules.
    # A sentence this long or longer is reported (calibrated on published articles: of the Japanese
    # sentences of 110–119 characters, 5 in 30 were worth splitting; from 120 on, most were).
    max_sentence_chars_ja: int = 120
    max_sentence_words_en: int = 50
    # …and from this many words when a dash sets an aside into it (the reader must hold two threads).
    max_sentence_words_en_aside: int = 45
    max_commas_ja: int = 4
    # LLM work per article.
    llm_chunk_chars: int = 12_000
    max_claims: int = 12
    # Per-rule settings, (rule id, off|on|critical|warning|suggestion): PROOFREAD_CONFIG (a YAML
    # or JSON file), then PROOFREAD_RULES="rule-id=off,other-id=warning" over it.
    rules: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not 1_000 <= self.max_article_bytes <= 5_000_000:
            raise ValueError("max_article_bytes must be between 1,000 and 5,000,000")
        unknown = set(self.checkers) - set(CATEGORIES)
        if unknown:
            raise ValueError(f"unknown checkers: {', '.join(sorted(unknown))}")
        if not self.checkers:
            raise ValueError("at least one checker must be enabled")
        if not 0 < self.link_timeout <= 60:
            raise ValueError("link_timeout must be in (0, 60] seconds")
        if not 0 <= self.link_retries <= 5:
            raise ValueError("link_retries must be 0-5")
        if not 1 <= self.link_concurrency <= 64:
            raise ValueError("link_concurrency must be 1-64")
        if not 0 < self.linter_timeout <= 300:
            raise ValueError("linter_timeout must be in (0, 300] seconds")
        if self.max_links_checked < 0:
            raise ValueError("max_links_checked must be >= 0")
        if self.max_sentence_chars_ja < 20 or min(self.max_sentence_words_en, self.max_sentence_words_en_aside) < 5:
            raise ValueError("sentence limits are too small to be useful")
        if self.max_commas_ja < 1:
            raise ValueError("max_commas_ja must be >= 1")
        if self.llm_chunk_chars < 1_000:
            raise ValueError("llm_chunk_chars must be >= 1,000")
        if not 0 <= self.max_claims <= 50:
            raise ValueError("max_claims must be 0-50")
        # Normalised (lower-case ids, true/false as on/off); RuleConfigError, a ValueError, when bad.
        object.__setattr__(self, "rules", tuple(parse_settings(self.rules, "rules").items()))

    @property
    def rule_settings(self) -> dict[str, str]:
        return dict(self.rules)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> GraphConfig:
        """Overrides from `PROOFREAD_<FIELD>` variables, e.g. PROOFREAD_CHECK_LINKS_ONLINE=1."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for spec in fields(cls):
            if spec.name == "rules":
                continue
            raw = env.get(f"PROOFREAD_{spec.name.upper()}")
            if raw is None:
                continue
            name = f"PROOFREAD_{spec.name.upper()}"
            if spec.type in ("bool", bool):
                values[spec.name] = raw.strip().lower() in _TRUE
            elif spec.type in ("int", int, "float", float):
                try:
                    values[spec.name] = int(raw) if spec.type in ("int", int) else float(raw)
                except ValueError:
                    raise ValueError(f"{name} must be a number") from None  # never echo the value
            else:
                values[spec.name] = tuple(part.strip() for part in raw.split(",") if part.strip())
        settings = settings_from_file(env["PROOFREAD_CONFIG"]) if env.get("PROOFREAD_CONFIG") else {}
        settings.update(settings_from_text(env.get("PROOFREAD_RULES", "")))
        values["rules"] = tuple(settings.items())
        return cls(**values)  # type: ignore[arg-type]
