"""How good the deterministic proofreading checkers are: on the labelled fixtures, or on the corpus
of real published articles in eval/proofread.

    python -m bench proofread-quality [--verbose]
    python -m bench proofread-quality --corpus [--split dev,heldout,heldout2,…] [--show-unlabelled]
        [--show-unused] [--write-template] [--by-rule] [--labels PATH] [--manifest PATH] [--shared DIR]
    python -m bench proofread-quality --sweep DIR [--rules spelling,no-headings] [--show]

Fixture mode: a finding matches a label of the same category when the label's line lies within the
finding's lines (and the rule matches, when the label names one); matching is one-to-one, so a
problem reported twice counts one true and one false positive. Every finding counts, suggestions
included.

Corpus mode: every finding of every article of the split is looked up in eval/proofread/labels.json,
where a person judged it by reading it in context: "true" (a real problem a careful writer would
fix), "false" (wrong or harmful advice) or "debatable" (a style preference). A label is keyed by
article, rule id (the category when the finding names no rule), line and the start of the message
with numbers masked; when only the message changed, the one label left on the same rule and line
still applies, and the file's optional "renamed" table ({"rule:new": "rule:old"}) carries labels
across a renamed rule. Strict precision is true / labelled, lenient precision (true + debatable) /
labelled; findings no label matches are counted as unlabelled, labels no finding matches as unused
(an unused "true" label is a real problem no longer reported). `--split` takes one split or several
joined by commas (scored as one set). The held-aside split, the newest `heldoutN` in corpus.json (`heldout`
and every earlier block were held aside once each and are development data since), runs only with
PROOFREAD_RULES_FROZEN=1, once the rules under test are final."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import sys
import unicodedata
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
    order = sorted(
        range(len(labels)), key=lambda i: (labels[i].get("line") is None, not labels[i].get("rule"))
    )
    for index in order:
        for candidate, finding in enumerate(findings):
            if candidate not in used and _matches(labels[index], finding):
                used.add(candidate)
                found.append(index)
                break
    return found, sorted(used)


async def review_fixture(name: str, folder: Path = FIXTURES) -> list[dict[str, Any]]:
    """The deterministic checkers' findings for one fixture, through the real review graph."""
    review = await review_text((folder / name).read_text(encoding="utf-8"))
    issues: list[dict[str, Any]] = review["issues"]
    return issues


async def review_text(text: str, filename: str | None = None) -> dict[str, Any]:
    """The review (issues, counts, approval, failed checks) of one article by the deterministic
    checkers, through the real review graph with the offline model."""
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
    values = await run_review(graph, {"target_article": text, "filename": filename})
    review: dict[str, Any] = values["review"]
    return review


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
    rows.append(
        f"| **all** | {total.labels} | {total.findings} | {total.precision:.2f} | {total.recall:.2f} |"
    )
    return "\n".join(rows)


# --- corpus mode -------------------------------------------------------------------------------

EVAL = Path(__file__).resolve().parent.parent / "eval" / "proofread"
MANIFEST = EVAL / "corpus.json"
LABELS = EVAL / "labels.json"
ROUNDS = EVAL / "rounds.json"  # each held-out set's counts as measured once, with the rules frozen
SHARED = EVAL.parents[2] / "shared" / "proofread_corpus"  # beside the repository: articles not redistributable
FROZEN_ENV = "PROOFREAD_RULES_FROZEN"
VERDICTS = ("true", "false", "debatable")


def round_number(split: str) -> int | None:
    """`heldout` is round 1, `heldoutN` round N; `dev` is no round."""
    if split == "heldout":
        return 1
    match = re.fullmatch(r"heldout([1-9]\d*)", split)
    return int(match.group(1)) if match else None


def corpus_splits(manifest: Path = MANIFEST) -> tuple[str, ...]:
    """The splits corpus.json holds, in the order they were collected: dev, heldout, then the blocks
    heldout2 … heldoutN. A new held-out set is a new N in the data; no code names it."""
    names = {article["split"] for article in json.loads(manifest.read_text(encoding="utf-8"))["articles"]}
    blocks = sorted(n for n in map(round_number, names) if n is not None and n > 1)
    return ("dev", "heldout", *(f"heldout{n}" for n in blocks))


SPLITS = corpus_splits()
# Read only once the rules are frozen. Every earlier split was read once to measure a finished
# change and is development data since.
HELD_ASIDE = (SPLITS[-1],)  # the newest set
LABEL_KEYS = ("article", "rule", "line", "stem")
STEM_CHARS = 80


class CorpusError(Exception):
    """The manifest or the labels file cannot be used; the message says what to fix."""


def message_stem(message: str) -> str:
    """The part of a finding's message a label is keyed on: Unicode-normalised, lower case, numbers
    as #, spaces collapsed, cut to 80 characters — so a changed count ("134 characters") or a
    reworded tail keeps its label."""
    text = unicodedata.normalize("NFKC", message).lower()
    text = re.sub(r"\d+", "#", text)
    return " ".join(text.split())[:STEM_CHARS]


@dataclass(frozen=True)
class Finding:
    article: str
    language: str
    line: int | None
    category: str
    severity: str
    rule: str  # the issue's source, or its category when it names none
    message: str
    members: tuple[int, ...] = ()  # a grouped finding (rules.GROUPED_RULES): every line it names

    @property
    def key(self) -> tuple[str, str, int | None, str]:
        return (self.article, self.rule, self.line, message_stem(self.message))


@dataclass
class Label:
    article: str
    rule: str
    line: int | None
    stem: str
    verdict: str | None
    reason: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, int | None, str]:
        return (self.article, self.rule, self.line, self.stem)

    def as_json(self) -> dict[str, Any]:
        return {
            "article": self.article,
            "rule": self.rule,
            "line": self.line,
            "stem": self.stem,
            "verdict": self.verdict,
            "reason": self.reason,
            **self.extra,
        }


@dataclass
class Verdicts:
    findings: int = 0
    true: int = 0
    false: int = 0
    debatable: int = 0
    unlabelled: int = 0

    def add(self, verdict: str | None) -> None:
        self.findings += 1
        if verdict in VERDICTS:
            setattr(self, verdict, getattr(self, verdict) + 1)
        else:
            self.unlabelled += 1

    @property
    def labelled(self) -> int:
        return self.true + self.false + self.debatable

    @property
    def strict(self) -> float | None:
        return self.true / self.labelled if self.labelled else None

    @property
    def lenient(self) -> float | None:
        return (self.true + self.debatable) / self.labelled if self.labelled else None


@dataclass
class ScoredArticle:
    id: str
    language: str
    approved: bool
    findings: list[tuple[Finding, Label | None]]
    errors: list[dict[str, Any]]
    lines: list[str]


@dataclass
class CorpusRun:
    split: str
    articles: list[ScoredArticle] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (article id, why)
    unused: list[Label] = field(default_factory=list)  # labels of scored articles nothing matched
    loose_matches: int = 0  # labels matched on (rule, line) alone because the message changed
    in_groups: list[Label] = field(default_factory=list)  # single findings' labels a grouped finding names

    @property
    def true_problems(self) -> int:
        """True findings, a grouped finding counting the lines it names that were judged true as
        single findings (itself, where none of its lines was)."""
        judged = {(label.article, label.line): label.verdict for label in self.in_groups}
        count = 0
        for article in self.articles:
            for finding, label in article.findings:
                lines = [judged.get((finding.article, line)) for line in finding.members]
                if any(lines):
                    count += lines.count("true")
                else:
                    count += label is not None and label.verdict == "true"
        return count

    def tally(self, group: str) -> dict[str, Verdicts]:
        tallies: dict[str, Verdicts] = defaultdict(Verdicts)
        for article in self.articles:
            for finding, label in article.findings:
                name = {
                    "category": finding.category,
                    "severity": finding.severity,
                    "language": finding.language,
                    "rule": finding.rule,
                }[group]
                tallies[name].add(label.verdict if label else None)
        return tallies

    @property
    def total(self) -> Verdicts:
        total = Verdicts()
        for article in self.articles:
            for _, label in article.findings:
                total.add(label.verdict if label else None)
        return total


def load_manifest(path: Path = MANIFEST) -> list[dict[str, Any]]:
    try:
        articles = json.loads(path.read_text(encoding="utf-8"))["articles"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorpusError(f"cannot read the corpus manifest {path}: {exc}") from None
    for index, article in enumerate(articles):
        missing = [k for k in ("id", "language", "stored", "split") if k not in article]
        if missing:
            raise CorpusError(f"{path}: article #{index + 1} lacks {', '.join(missing)}")
    return list(articles)


def load_corpus_labels(path: Path = LABELS) -> list[Label]:
    """The labels file, validated; an absent file is no labels."""
    if not path.exists():
        return []
    try:
        records = json.loads(path.read_text(encoding="utf-8"))["labels"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorpusError(f"cannot read the labels file {path}: {exc}") from None
    labels: list[Label] = []
    seen: set[tuple[str, str, int | None, str]] = set()
    for index, record in enumerate(records, start=1):
        where = f"{path}: label #{index}"
        if not isinstance(record, dict):
            raise CorpusError(f"{where} is not an object")
        missing = [k for k in (*LABEL_KEYS, "verdict") if k not in record]
        if missing:
            raise CorpusError(f"{where} lacks {', '.join(missing)}")
        if record["verdict"] is not None and record["verdict"] not in VERDICTS:
            raise CorpusError(
                f"{where}: verdict {record['verdict']!r} is not one of {', '.join(VERDICTS)} or null"
            )
        if record["line"] is not None and not isinstance(record["line"], int):
            raise CorpusError(f"{where}: line must be a number or null")
        extra = {k: v for k, v in record.items() if k not in (*LABEL_KEYS, "verdict", "reason")}
        label = Label(
            str(record["article"]),
            str(record["rule"]),
            record["line"],
            str(record["stem"]),
            record["verdict"],
            str(record.get("reason") or ""),
            extra,
        )
        if label.key in seen:
            raise CorpusError(f"{where} repeats the key of an earlier label: {label.key}")
        seen.add(label.key)
        labels.append(label)
    return labels


def load_renamed(path: Path = LABELS) -> dict[str, str]:
    """The labels file's optional `renamed` table: a rule's new id → the id its labels use."""
    if not path.exists():
        return {}
    try:
        renamed = json.loads(path.read_text(encoding="utf-8")).get("renamed") or {}
    except (OSError, ValueError, AttributeError) as exc:
        raise CorpusError(f"cannot read the labels file {path}: {exc}") from None
    if not isinstance(renamed, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in renamed.items()
    ):
        raise CorpusError(
            f'{path}: "renamed" must map new rule ids to old ones, e.g. {{"rule:new": "rule:old"}}'
        )
    return renamed


def write_corpus_labels(
    labels: list[Label], path: Path = LABELS, renamed: dict[str, str] | None = None
) -> None:
    """One label a line, so a change to one verdict is a one-line diff."""
    head = "{"
    if renamed:
        head += '"renamed": ' + json.dumps(renamed, ensure_ascii=False, sort_keys=True) + ",\n"
    body = ",\n".join("  " + json.dumps(label.as_json(), ensure_ascii=False) for label in labels)
    path.write_text(head + '"labels": [\n' + body + "\n]}\n", encoding="utf-8")


def findings_of(article: dict[str, Any], review: dict[str, Any]) -> list[Finding]:
    from agents.proofread.rules import grouped_lines

    return [
        Finding(
            article=article["id"],
            language=article["language"],
            line=issue.get("line_start"),
            category=issue["category"],
            severity=issue["severity"],
            rule=issue.get("source") or issue["category"],
            message=issue.get("problem") or "",
            members=tuple(grouped_lines(issue)),
        )
        for issue in review["issues"]
    ]


def named_in_groups(findings: list[Finding], unused: list[Label]) -> tuple[list[Label], list[Label]]:
    """The unused labels of single findings on lines a grouped finding of the same rule names (the
    problem is still reported, in the group), and the rest."""
    named = {(f.rule, line) for f in findings for line in f.members}
    covered = [label for label in unused if (label.rule, label.line) in named]
    return covered, [label for label in unused if (label.rule, label.line) not in named]


def match_labels(
    findings: list[Finding], labels: list[Label], renamed: dict[str, str] | None = None
) -> tuple[list[Label | None], list[Label], int]:
    """Each finding's label: the one with its exact key, else — when the message changed — the only
    unused label with the same rule and line if that finding is the only one there. A rule listed in
    `renamed` (new id → the id its labels were written under) is looked up under its old id. Returns
    the labels per finding, the labels nothing matched, and how many matched on rule and line alone."""
    renamed = renamed or {}
    by_key = {label.key: label for label in labels}

    def labelled_as(finding: Finding) -> tuple[str, str, int | None, str]:
        article, rule, line, stem = finding.key
        return (article, renamed.get(rule, rule), line, stem)

    matched: list[Label | None] = [
        by_key.get(finding.key) or by_key.get(labelled_as(finding)) for finding in findings
    ]
    used = {id(label) for label in matched if label is not None}
    open_findings: dict[tuple[str, int | None], list[int]] = defaultdict(list)
    for index, finding in enumerate(findings):
        if matched[index] is None:
            open_findings[(renamed.get(finding.rule, finding.rule), finding.line)].append(index)
    open_labels: dict[tuple[str, int | None], list[Label]] = defaultdict(list)
    for label in labels:
        if id(label) not in used:
            open_labels[(label.rule, label.line)].append(label)
    loose = 0
    for place, indices in open_findings.items():
        candidates = open_labels.get(place, [])
        if len(indices) == 1 and len(candidates) == 1 and not findings[indices[0]].members:  # a group: a new finding
            matched[indices[0]] = candidates[0]
            used.add(id(candidates[0]))
            loose += 1
    unused = [label for label in labels if id(label) not in used]
    return matched, unused, loose


def article_path(article: dict[str, Any], manifest: Path, shared: Path) -> Path:
    base = manifest.parent if article["stored"] == "repo" else shared
    return base / "articles" / f"{article['id']}.md"


def parse_splits(text: str) -> tuple[str, ...]:
    """`dev,heldout` → ("dev", "heldout"); an unknown split is a CorpusError naming the known ones."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in names if name not in SPLITS]
    if not names or unknown:
        raise CorpusError(
            f"unknown split {', '.join(unknown) or repr(text)}: use one of {', '.join(SPLITS)}, "
            f"or several joined by commas (dev,heldout)"
        )
    return names


def refuse_heldout(split: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    """Why the split (or comma-joined splits) may not be run now, or None."""
    held = [name for name in split.split(",") if name.strip() in HELD_ASIDE]
    if held and environ.get(FROZEN_ENV) != "1":
        return (
            f"refusing to run the held-aside split {', '.join(held)}: its articles are read only once "
            f"the rules are frozen. Measure on --split {','.join(s for s in SPLITS if s not in HELD_ASIDE)} "
            f"while rules change; set {FROZEN_ENV}=1 to measure a finished rule set on {', '.join(held)}."
        )
    return None


async def run_corpus(
    split: str, *, manifest: Path = MANIFEST, labels_path: Path = LABELS, shared: Path = SHARED
) -> CorpusRun:
    splits = parse_splits(split)
    reason = refuse_heldout(",".join(splits))
    if reason:
        raise CorpusError(reason)
    labels = load_corpus_labels(labels_path)
    renamed = load_renamed(labels_path)
    by_article: dict[str, list[Label]] = defaultdict(list)
    for label in labels:
        by_article[label.article].append(label)
    run = CorpusRun(",".join(splits))
    for article in load_manifest(manifest):
        if article["split"] not in splits:
            continue
        path = article_path(article, manifest, shared)
        if not path.is_file():
            run.skipped.append((article["id"], f"absent: {path}"))
            continue
        data = path.read_bytes()
        if article.get("sha256") and hashlib.sha256(data).hexdigest() != article["sha256"]:
            run.skipped.append((article["id"], f"differs from its recorded SHA-256: {path}"))
            continue
        text = data.decode("utf-8")
        review = await review_text(text, Path(str(article.get("path") or path.name)).name)
        findings = findings_of(article, review)
        matched, unused, loose = match_labels(findings, by_article.get(article["id"], []), renamed)
        covered, unused = named_in_groups(findings, unused)
        run.unused += unused
        run.in_groups += covered
        run.loose_matches += loose
        run.articles.append(
            ScoredArticle(
                article["id"],
                article["language"],
                bool(review["approved"]),
                list(zip(findings, matched, strict=True)),
                list(review.get("errors") or []),
                text.split("\n"),
            )
        )
    return run


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def verdict_table(title: str, tallies: dict[str, Verdicts], order: list[str], total: Verdicts) -> str:
    rows = [
        f"| {title} | findings | true | false | debatable | unlabelled | strict | lenient |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    names = [n for n in order if n in tallies] + sorted(n for n in tallies if n not in order)
    for name, tally in [*((n, tallies[n]) for n in names), ("**all**", total)]:
        rows.append(
            f"| {name} | {tally.findings} | {tally.true} | {tally.false} | {tally.debatable} | "
            f"{tally.unlabelled} | {_ratio(tally.strict)} | {_ratio(tally.lenient)} |"
        )
    return "\n".join(rows)


def corpus_report(
    run: CorpusRun, *, by_rule: bool = False, show_unlabelled: bool = False, show_unused: bool = False
) -> str:
    from agents.proofread.schemas import CATEGORIES, SEVERITIES

    total = run.total
    lost = sum(1 for label in run.unused if label.verdict == "true")
    out = [
        f"Corpus split {run.split!r}: {len(run.articles)} articles scored, {len(run.skipped)} skipped; "
        f"{total.findings} findings, {total.true} true, {total.unlabelled} unlabelled; "
        f"{len(run.unused)} labels unused ({lost} of them true: real problems no longer reported); "
        f"{run.loose_matches} matched on rule and line alone (message changed).",
    ]
    if run.in_groups:
        named = sum(1 for label in run.in_groups if label.verdict == "true")
        out.append(
            f"{len(run.in_groups)} earlier single findings are lines named by a grouped finding ({named} of them "
            f"true); true problems reported, a group counting its lines: {run.true_problems}."
        )
    out.append("")
    for article_id, why in run.skipped:
        out.append(f"skipped {article_id}: {why}")
    if run.skipped:
        out.append("")
    out += [verdict_table("category", run.tally("category"), list(CATEGORIES), total), ""]
    out += [verdict_table("severity", run.tally("severity"), list(SEVERITIES), total), ""]
    out += [verdict_table("language", run.tally("language"), ["ja", "en"], total), ""]
    if by_rule:
        out += [verdict_table("rule", run.tally("rule"), [], total), ""]
    rejected = [a for a in run.articles if any(f.severity == "critical" for f, _ in a.findings)]
    out.append(
        f"Rejected by a critical: {len(rejected)} of {len(run.articles)} articles"
        + (":" if rejected else ".")
    )
    for article in rejected:
        for finding, label in article.findings:
            if finding.severity == "critical":
                verdict = label.verdict if label and label.verdict else "unlabelled"
                out.append(
                    f"  {article.id}:{finding.line} {finding.rule} — labelled {verdict}: {finding.message}"
                )
    failed = [a for a in run.articles if a.errors]
    for article in failed:
        steps = ", ".join(f"{e.get('step')} ({e.get('error_type')})" for e in article.errors)
        out.append(f"Checks failed on {article.id}: {steps}")
    if show_unlabelled:
        out += ["", "Unlabelled findings:"]
        for article in run.articles:
            for finding, label in article.findings:
                if label is None or label.verdict is None:
                    out.append(_describe(finding, article.lines))
    if show_unused:
        out += ["", "Unused labels:"]
        out += [
            f"  {label.article}:{label.line} {label.rule} [{label.verdict}] {label.stem}"
            for label in run.unused
        ]
    return "\n".join(out)


def _describe(finding: Finding, lines: list[str]) -> str:
    text = ""
    if finding.line is not None and 0 < finding.line <= len(lines):
        text = lines[finding.line - 1].strip()
        text = text if len(text) <= 100 else text[:99] + "…"
    return (
        f"  {finding.article}:{finding.line} [{finding.category}/{finding.severity}] {finding.rule}: "
        f"{finding.message}\n      | {text}"
    )


def append_template(run: CorpusRun, labels_path: Path = LABELS) -> int:
    """Add every finding no label matches to the labels file, verdict null; returns how many."""
    labels = load_corpus_labels(labels_path)
    keys = {label.key for label in labels}
    added = 0
    for article in run.articles:
        for finding, label in article.findings:
            if label is None and finding.key not in keys:
                labels.append(
                    Label(
                        finding.article,
                        finding.rule,
                        finding.line,
                        finding.key[3],
                        None,
                        "",
                        {"category": finding.category, "severity": finding.severity},
                    )
                )
                keys.add(finding.key)
                added += 1
    write_corpus_labels(labels, labels_path, load_renamed(labels_path))
    return added


async def corpus_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench proofread-quality --corpus")
    parser.add_argument("--corpus", action="store_true")
    parser.add_argument(
        "--split", default="dev", help=f"one of {', '.join(SPLITS)}, or several joined by commas"
    )
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument(
        "--shared", type=Path, default=SHARED, help="where articles stored outside the repository are"
    )
    parser.add_argument("--show-unlabelled", action="store_true")
    parser.add_argument("--show-unused", action="store_true")
    parser.add_argument("--by-rule", action="store_true")
    parser.add_argument(
        "--write-template",
        action="store_true",
        help="append unlabelled findings to the labels file with verdict null",
    )
    parser.add_argument(
        "--record-round",
        action="store_true",
        help="append this held-out set's counts to rounds.json (frozen rules, every finding labelled)",
    )
    parser.add_argument("--rounds-file", type=Path, default=ROUNDS)
    args = parser.parse_args(argv)
    try:
        run = await run_corpus(
            args.split, manifest=args.manifest, labels_path=args.labels, shared=args.shared
        )
    except CorpusError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(
        corpus_report(
            run, by_rule=args.by_rule, show_unlabelled=args.show_unlabelled, show_unused=args.show_unused
        )
    )
    if args.write_template:
        added = append_template(run, args.labels)
        print(f"\n{added} unlabelled findings appended to {args.labels} with verdict null.")
    if args.record_round:
        try:
            recorded = record_round(run, args.rounds_file)
        except CorpusError as exc:
            print(exc, file=sys.stderr)
            return 2
        print(f"\nRound {recorded.number} ({recorded.split}): {recorded.true} true of {recorded.findings} recorded.")
    return 0


# --- rounds: each held-out set as measured once, at its freeze ------------------------------------


@dataclass(frozen=True)
class Round:
    """A held-out set's findings and true findings with the rules it was frozen on: the figure that
    set gave when it was read, which no later rule change may rewrite."""

    number: int
    split: str
    findings: int
    true: int


def load_rounds(path: Path = ROUNDS) -> list[Round]:
    if not path.exists():
        return []
    try:
        records = json.loads(path.read_text(encoding="utf-8"))["rounds"]
        rounds = [Round(int(r["round"]), str(r["split"]), int(r["findings"]), int(r["true"])) for r in records]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorpusError(f"{path} is no rounds record ({type(exc).__name__}: {exc}); restore it from git") from None
    return sorted(rounds, key=lambda r: r.number)


def record_round(run: CorpusRun, path: Path = ROUNDS) -> Round:
    """Append the run's counts as its set's round. Only one whole, fully labelled held-out set read
    with frozen rules, and not recorded before, gives a round's figure (a block of sets read at once
    is recorded set by set); anything else is a CorpusError saying why."""
    number = round_number(run.split)
    if number is None:
        raise CorpusError(f"a round is one held-out set (heldout, heldout2, …), not {run.split!r}")
    if os.environ.get(FROZEN_ENV) != "1":
        raise CorpusError(f"a round is recorded with the rules frozen: set {FROZEN_ENV}=1")
    if run.skipped:
        raise CorpusError(f"{len(run.skipped)} articles of {run.split} were skipped; a round counts the whole set")
    total = run.total
    if total.unlabelled:
        raise CorpusError(f"{total.unlabelled} findings of {run.split} are unlabelled; label them, then record the round")
    rounds = load_rounds(path)
    if any(r.number == number for r in rounds):
        raise CorpusError(f"round {number} ({run.split}) is recorded already; a round is measured once")
    recorded = Round(number, run.split, total.findings, total.true)
    data = {"about": ROUNDS_ABOUT, "rounds": [
        {"round": r.number, "split": r.split, "findings": r.findings, "true": r.true}
        for r in sorted([*rounds, recorded], key=lambda r: r.number)
    ]}
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return recorded


ROUNDS_ABOUT = (
    "Each held-out set's findings and true findings as measured once, when the set was read with the rules "
    "frozen (strict precision = true / findings). Appended by `--corpus --split heldoutN --record-round`; "
    "rounds 1-177 are the per-round figures README.md and docs/proofread.md publish."
)


def windows(rounds: list[Round], size: int) -> list[tuple[int, int, int, int]]:
    """(first round, last round, true, findings) of every run of `size` consecutive recorded rounds."""
    found = []
    for end in range(size, len(rounds) + 1):
        part = rounds[end - size : end]
        found.append((part[0].number, part[-1].number, sum(r.true for r in part), sum(r.findings for r in part)))
    return found


def _strict(true: int, findings: int) -> str:
    return f"{true / findings:.3f}" if findings else "—"


def rounds_report(rounds: list[Round], splits: tuple[str, ...], size: int) -> str:
    """The last `size` rounds, the windows of `size` rounds ending at each of them, and the total."""
    recorded = {r.split for r in rounds}
    missing = [s for s in splits if round_number(s) is not None and s not in recorded]
    out = []
    if missing:
        out.append(
            f"Not recorded: {', '.join(missing)}. Read a new set with {FROZEN_ENV}=1, label every finding, "
            f"then add --record-round to the same command.\n"
        )
    out += ["| round | split | findings | true | strict |", "|---:|---|---:|---:|---:|"]
    out += [f"| {r.number} | {r.split} | {r.findings} | {r.true} | {_strict(r.true, r.findings)} |" for r in rounds[-size:]]
    out += ["", f"| rounds ({size} in a row) | true | findings | strict |", "|---|---:|---:|---:|"]
    out += [f"| {first}–{last} | {true} | {found} | {_strict(true, found)} |"
            for first, last, true, found in windows(rounds, size)[-size:]]
    true, found = sum(r.true for r in rounds), sum(r.findings for r in rounds)
    out += ["", f"All {len(rounds)} recorded rounds: {true} true of {found} findings, strict {_strict(true, found)}."]
    return "\n".join(out)


def rounds_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench proofread-quality --rounds")
    parser.add_argument("--rounds", action="store_true")
    parser.add_argument("--window", type=int, default=10, help="rounds in a row (default 10)")
    parser.add_argument("--rounds-file", type=Path, default=ROUNDS)
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    args = parser.parse_args(argv)
    if args.window < 1:
        print("--window takes a number of rounds, 1 or more", file=sys.stderr)
        return 2
    try:
        rounds = load_rounds(args.rounds_file)
    except CorpusError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(rounds_report(rounds, corpus_splits(args.manifest), args.window))
    return 0


async def sweep(folder: Path, rules: set[str] | None = None) -> tuple[int, list[tuple[str, int | None, str, str]]]:
    """Every finding on every Markdown file under `folder` (no labels): how many files were read,
    and (file, line, rule, message) for each finding of `rules` (all when None)."""
    files = _markdown_files(folder)
    found: list[tuple[str, int | None, str, str]] = []
    for name, text in files:
        review = await review_text(text, Path(name).name)
        for issue in review["issues"]:
            rule = issue.get("source") or issue["category"]
            if rules is None or rule in rules or rule.split(":", 1)[-1] in rules:
                found.append((name, issue.get("line_start"), rule, issue.get("problem") or ""))
    return len(files), found


def _markdown_files(folder: Path) -> list[tuple[str, str]]:
    """(path under `folder`, text) of every readable UTF-8 Markdown file, in path order."""
    files = []
    for path in sorted(p for p in folder.rglob("*") if p.suffix in (".md", ".markdown") and p.is_file()):
        try:
            files.append((str(path.relative_to(folder)), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return files


async def sweep_main(argv: list[str]) -> int:
    """Findings per rule on unlabelled articles (`--sweep DIR`): where a rule is noisy on text no
    label covers yet. Read them, then label or fix; the figures are no precision."""
    parser = argparse.ArgumentParser(prog="python -m bench proofread-quality --sweep DIR")
    parser.add_argument("--sweep", type=Path, required=True)
    parser.add_argument("--rules", default="", help="comma-separated rule ids to list (all by default)")
    parser.add_argument("--show", action="store_true", help="print every finding with its line")
    args = parser.parse_args(argv)
    if not args.sweep.is_dir():
        print(f"not a folder: {args.sweep}", file=sys.stderr)
        return 2
    rules = {r.strip() for r in args.rules.split(",") if r.strip()} or None
    files, found = await sweep(args.sweep, rules)
    counts: dict[str, int] = defaultdict(int)
    for _path, _line, rule, _message in found:
        counts[rule] += 1
    print(f"{files} files, {len(found)} findings\n\n| rule | findings |\n|---|---:|")
    for rule, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        print(f"| {rule} | {count} |")
    if args.show:
        print()
        for path, line, rule, message in found:
            print(f"{path}:{line} {rule} {message}")
    return 0


async def main(argv: list[str]) -> int:
    from agents.proofread.linter import WORKER

    try:
        return await _main(argv)
    finally:
        # The checkers share one pymarkdownlnt child process: stop and reap it before exiting, so
        # no process outlives the command (the agent does the same when the bot shuts down).
        await asyncio.to_thread(WORKER.close)


async def _main(argv: list[str]) -> int:
    if "--corpus" in argv:
        return await corpus_main(argv)
    if "--sweep" in argv:
        return await sweep_main(argv)
    if "--rounds" in argv:
        return rounds_main(argv)
    verbose = "--verbose" in argv or "-v" in argv
    for title, folder in (("Development set", FIXTURES), ("Held-out set", HOLDOUT)):
        evaluation = await evaluate(folder)
        print(
            f"{title}: deterministic checkers over {len(evaluation.findings)} labelled articles "
            f"({folder.relative_to(FIXTURES.parent.parent.parent)}):\n"
        )
        print(table(evaluation) + "\n")
        if verbose:
            for name, finding in evaluation.false_positives:
                print(
                    f"FP  {name}:{finding.get('line_start')} [{finding['category']}] {finding.get('source')}: "
                    f"{finding['problem']}"
                )
            for name, label in evaluation.missed:
                print(
                    f"FN  {name}:{label.get('line')} [{label['category']}] "
                    f"{label.get('rule') or label.get('note', '')}"
                )
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(sys.argv[1:])))
