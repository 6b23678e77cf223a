"""Precision and recall of the deterministic proofreading checkers over the labelled fixtures.

    python -m bench proofread-quality [--verbose]

A finding matches a label of the same category when the label's line lies within the finding's
lines (and the rule matches, when the label names one); matching is one-to-one, so a problem
reported twice counts one true and one false positive. Every finding counts, suggestions included."""

from __future__ import annotations

import asyncio
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "proofread" / "fixtures"
HOLDOUT = FIXTURES / "holdout"


@dataclass
class Tally:
    findings: int = 0
    true_findings: int = 0
    labels: int = 0
    found_labels: int = 0

    @property
    def precision(self) -> float:
        return self.true_findings / self.findings if self.findings else 1.0

    @property
    def recall(self) -> float:
        return self.found_labels / self.labels if self.labels else 1.0


@dataclass
class Evaluation:
    by_category: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    false_positives: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    missed: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    findings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def total(self) -> Tally:
        total = Tally()
        for tally in self.by_category.values():
            total.findings += tally.findings
            total.true_findings += tally.true_findings
            total.labels += tally.labels
            total.found_labels += tally.found_labels
        return total


def load_labels(folder: Path = FIXTURES) -> dict[str, list[dict[str, Any]]]:
    return yaml.safe_load((folder / "labels.yaml").read_text(encoding="utf-8"))


def _matches(label: dict[str, Any], finding: dict[str, Any]) -> bool:
    if label["category"] != finding["category"]:
        return False
    if label.get("rule") and label["rule"] != finding.get("source"):
        return False
    line = label.get("line")
    if line is None:
        return True
    start = finding.get("line_start")
    end = finding.get("line_end") or start
    return start is not None and start <= line <= end


def match(labels: list[dict[str, Any]], findings: list[dict[str, Any]]) -> tuple[list[int], list[int]]:
    """(indices of labels found, indices of findings that matched a label), one-to-one; labels
    with a line are matched before whole-article ones."""
    used: set[int] = set()
    found: list[int] = []
    order = sorted(range(len(labels)), key=lambda i: (labels[i].get("line") is None, not labels[i].get("rule")))
    for index in order:
        for candidate, finding in enumerate(findings):
            if candidate not in used and _matches(labels[index], finding):
                used.add(candidate)
                found.append(index)
                break
    return found, sorted(used)


async def review_fixture(name: str, folder: Path = FIXTURES) -> list[dict[str, Any]]:
    """The deterministic checkers' findings for one fixture, through the real review graph."""
    from agents.proofread.checkers import CHECKER_CLASSES, DETERMINISTIC, CheckContext
    from agents.proofread.config import GraphConfig
    from agents.proofread.llm import ProofreadLLM
    from agents.proofread.review import build_review_graph, run_review
    from bot.llm import ModelProvider
    from bot.offline import OfflineChatModel

    context = CheckContext(
        config=GraphConfig(checkers=DETERMINISTIC),
        llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)),
    )
    graph = build_review_graph([CHECKER_CLASSES[c](context) for c in DETERMINISTIC])
    values = await run_review(graph, {"target_article": (folder / name).read_text(encoding="utf-8")})
    return values["review"]["issues"]


async def evaluate(folder: Path = FIXTURES) -> Evaluation:
    labels = load_labels(folder)
    names = sorted(labels)
    results = await asyncio.gather(*(review_fixture(name, folder) for name in names))
    evaluation = Evaluation()
    for name, findings in zip(names, results, strict=True):
        expected = labels[name] or []
        evaluation.findings[name] = findings
        found, true = match(expected, findings)
        for label in expected:
            evaluation.by_category[label["category"]].labels += 1
        for index in found:
            evaluation.by_category[expected[index]["category"]].found_labels += 1
        for index, finding in enumerate(findings):
            tally = evaluation.by_category[finding["category"]]
            tally.findings += 1
            if index in true:
                tally.true_findings += 1
            else:
                evaluation.false_positives.append((name, finding))
        evaluation.missed += [(name, expected[i]) for i in range(len(expected)) if i not in found]
    return evaluation


def table(evaluation: Evaluation) -> str:
    from agents.proofread.checkers import DETERMINISTIC

    rows = [
        "| Category | Labels | Findings | Precision | Recall |",
        "|---|---:|---:|---:|---:|",
    ]
    for category in DETERMINISTIC:
        tally = evaluation.by_category.get(category, Tally())
        rows.append(
            f"| {category} | {tally.labels} | {tally.findings} | {tally.precision:.2f} | {tally.recall:.2f} |"
        )
    total = evaluation.total
    rows.append(f"| **all** | {total.labels} | {total.findings} | {total.precision:.2f} | {total.recall:.2f} |")
    return "\n".join(rows)


async def main(argv: list[str]) -> int:
    verbose = "--verbose" in argv or "-v" in argv
    for title, folder in (("Development set", FIXTURES), ("Held-out set", HOLDOUT)):
        evaluation = await evaluate(folder)
        print(f"{title}: deterministic checkers over {len(evaluation.findings)} labelled articles "
              f"({folder.relative_to(FIXTURES.parent.parent.parent)}):\n")
        print(table(evaluation) + "\n")
        if verbose:
            for name, finding in evaluation.false_positives:
                print(f"FP  {name}:{finding.get('line_start')} [{finding['category']}] {finding.get('source')}: "
                      f"{finding['problem']}")
            for name, label in evaluation.missed:
                print(f"FN  {name}:{label.get('line')} [{label['category']}] "
                      f"{label.get('rule') or label.get('note', '')}")
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(sys.argv[1:])))
