"""technical_accuracy: the model extracts technical claims and judges each one from its own
knowledge (no web search). Skipped, and said so in the report, with the offline model."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agents.proofread.checkers.base import BaseChecker, CheckResult
from agents.proofread.llm import anchor_quote
from agents.proofread.prompts import render_prompt
from agents.proofread.schemas import Issue, ParsedArticle, Severity, SkippedCheck


class TechnicalClaim(BaseModel):
    line: int = Field(description="line number as given in the numbered text")
    quote: str = Field(description="the exact words of the claim as written on that line")
    claim: str = Field(description="the claim restated as one self-contained sentence")


class TechnicalClaims(BaseModel):
    claims: list[TechnicalClaim] = Field(default_factory=list)


class ClaimVerdict(BaseModel):
    claim_number: int = Field(description="the number of the claim in the list, from 1")
    verdict: Literal["correct", "incorrect", "outdated", "unverifiable"]
    explanation: str = ""
    correction: str = ""
    confidence: float = Field(0.5, ge=0.0, le=1.0)


class ClaimVerdicts(BaseModel):
    verdicts: list[ClaimVerdict] = Field(default_factory=list)


class TechnicalAccuracyChecker(BaseChecker):
    category = "technical_accuracy"
    status_text = "Checking technical claims…"
    status_text_ja = "技術的な主張を確認しています…"

    async def check(self, article: ParsedArticle) -> CheckResult:
        if not self.context.llm.available:
            return CheckResult(skipped=[SkippedCheck(
                step=self.step,
                reason="Technical accuracy was not checked: the offline model cannot judge technical claims.",
            )])
        llm = self.context.llm
        language = "Japanese" if article.language == "ja" else "English"
        body = article.get_numbered_body()[: self.config.llm_chunk_chars * 2]
        extracted = await llm.structured(
            TechnicalClaims,
            render_prompt("extract_technical_claims", language=language, max_claims=self.config.max_claims),
            render_prompt("article_data", article=body),
        )
        claims = []
        for claim in extracted.claims:
            line = anchor_quote(article, claim.line, claim.quote)
            if line is not None:
                claims.append((line, claim))
            if len(claims) >= self.config.max_claims:
                break
        result = CheckResult(skipped=[SkippedCheck(
            step=self.step, reason="Technical claims were judged by the model without web search.",
        )])
        if not claims:
            return result
        listing = "\n".join(
            f"{number}. (line {line}) {claim.claim}\n   context: {article.line(line).strip()[:300]}"
            for number, (line, claim) in enumerate(claims, start=1)
        )
        judged = await llm.structured(
            ClaimVerdicts, render_prompt("verify_technical_claims", language=language),
            render_prompt("claims_data", claims=listing),
        )
        for verdict in judged.verdicts:
            if not 1 <= verdict.claim_number <= len(claims):
                continue
            line, claim = claims[verdict.claim_number - 1]
            issue = self._issue(article, line, claim, verdict)
            if issue:
                result.issues.append(issue)
        return result

    def _issue(self, article: ParsedArticle, line: int, claim: TechnicalClaim, verdict: ClaimVerdict) -> Issue | None:
        # Without sources a model's "incorrect" is an opinion: never more than a warning.
        severity: Severity
        if verdict.verdict == "incorrect" and verdict.confidence >= 0.5:
            severity = "warning"
        elif verdict.verdict in ("incorrect", "outdated"):
            severity = "suggestion"
        else:
            return None
        return self.issue(
            article, severity, line,
            f"Possibly {verdict.verdict}: {claim.claim}",
            verdict.correction or "Check this against the official documentation.",
            (verdict.explanation or "The model doubts this claim.") + f" (model confidence {verdict.confidence:.0%})",
            "llm",
        )
