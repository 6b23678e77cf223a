"""The checkers, one per issue category, each compiled into its own subgraph."""

from __future__ import annotations

from agents.proofread.checkers.base import BaseChecker, CheckContext, CheckResult
from agents.proofread.checkers.code_quality import CodeQualityChecker
from agents.proofread.checkers.language_quality import LanguageQualityChecker
from agents.proofread.checkers.link import LinkChecker
from agents.proofread.checkers.markdown_format import MarkdownFormatChecker
from agents.proofread.checkers.privacy import PrivacyChecker
from agents.proofread.checkers.structure import StructureChecker
from agents.proofread.checkers.technical_accuracy import TechnicalAccuracyChecker
from agents.proofread.schemas import Category

CHECKER_CLASSES: dict[Category, type[BaseChecker]] = {
    "markdown_format": MarkdownFormatChecker,
    "link": LinkChecker,
    "code_quality": CodeQualityChecker,
    "privacy": PrivacyChecker,
    "structure": StructureChecker,
    "language_quality": LanguageQualityChecker,
    "technical_accuracy": TechnicalAccuracyChecker,
}

# The checkers that need no model: the ones measured for precision and recall.
DETERMINISTIC: tuple[Category, ...] = (
    "markdown_format", "link", "code_quality", "privacy", "structure", "language_quality",
)

__all__ = ["CHECKER_CLASSES", "DETERMINISTIC", "BaseChecker", "CheckContext", "CheckResult"]
