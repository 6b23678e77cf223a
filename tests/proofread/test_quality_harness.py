"""The corpus mode of `python -m bench proofread-quality`: findings scored against a labels file,
unlabelled findings listed and written as a template, and the held-aside split kept closed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from bench import proofread_quality as quality

HELD = quality.HELD_ASIDE[0]  # the newest set, the one only frozen rules may read

# Two tiny synthetic articles with problems most rule sets report (an untagged code block, a
# doubled word, a very long sentence, an image without alt text, a misspelling, an http:// link).
DEV_ARTICLE = """# Notes on caching

This post explains how a cache works.

```
make build
```

The cache keeps the the results of earlier work so that later work that needs the same results can
read them back instead of computing them again from the start, which saves time whenever the same
inputs come back again and again over the course of a long build that touches many files and
directories and modules and packages in many different places.

![](http://example.com/cache.png)

A cache is recieved wisdom in order to save time, see [the guide](http://example.com/guide).

```
make clean
```

## Conclusion

Caches save time.
"""

HELDOUT_ARTICLE = """# Notes on queues

A queue keeps work in order.

```
run worker
```

## Conclusion

Queues keep order.
"""


def _record(article_id: str, text: str, *, split: str, stored: str) -> dict[str, object]:
    data = text.encode("utf-8")
    return {
        "id": article_id,
        "platform": "other",
        "language": "en",
        "stored": stored,
        "split": split,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


@pytest.fixture
def corpus(tmp_path: Path) -> dict[str, Path]:
    """A manifest with one dev article stored beside it and one held-aside article stored in a
    separate shared folder, and an empty labels path."""
    (tmp_path / "articles").mkdir()
    (tmp_path / "articles" / "dev-cache.md").write_text(DEV_ARTICLE, encoding="utf-8")
    shared = tmp_path / "shared"
    (shared / "articles").mkdir(parents=True)
    (shared / "articles" / "heldout-queue.md").write_text(HELDOUT_ARTICLE, encoding="utf-8")
    manifest = tmp_path / "corpus.json"
    manifest.write_text(
        json.dumps(
            {
                "articles": [
                    _record("dev-cache", DEV_ARTICLE, split="dev", stored="repo"),
                    _record("heldout-queue", HELDOUT_ARTICLE, split=HELD, stored="shared"),
                ]
            }
        ),
        encoding="utf-8",
    )
    return {"manifest": manifest, "labels": tmp_path / "labels.json", "shared": shared}


def _argv(corpus: dict[str, Path], *extra: str) -> list[str]:
    return [
        "--corpus",
        "--manifest",
        str(corpus["manifest"]),
        "--labels",
        str(corpus["labels"]),
        "--shared",
        str(corpus["shared"]),
        *extra,
    ]


def _labels(path: Path) -> list[dict[str, object]]:
    labels: list[dict[str, object]] = json.loads(path.read_text(encoding="utf-8"))["labels"]
    return labels


def _set_verdicts(path: Path, verdicts: list[str | None]) -> None:
    labels = _labels(path)
    for label, verdict in zip(labels, verdicts, strict=False):
        label["verdict"] = verdict
        label["reason"] = "judged in the test"
    path.write_text(json.dumps({"labels": labels}), encoding="utf-8")


async def _run(corpus: dict[str, Path], split: str = "dev") -> quality.CorpusRun:
    return await quality.run_corpus(
        split, manifest=corpus["manifest"], labels_path=corpus["labels"], shared=corpus["shared"]
    )


@pytest.fixture
def rules_not_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(quality.FROZEN_ENV, raising=False)


async def test_unlabelled_findings_are_listed_and_appended_once_as_a_template(
    corpus, capsys, rules_not_frozen
):
    assert await quality.main(_argv(corpus, "--show-unlabelled", "--write-template")) == 0
    out = capsys.readouterr().out
    run = await _run(corpus)
    findings = [finding for article in run.articles for finding, _ in article.findings]
    assert len(findings) >= 2
    assert "Unlabelled findings:" in out
    assert f"dev-cache:{findings[0].line} " in out
    labels = _labels(corpus["labels"])
    assert len(labels) == len(findings)
    assert {label["verdict"] for label in labels} == {None}
    assert {label["article"] for label in labels} == {"dev-cache"}

    # A label with verdict null is still unlabelled, and writing the template again adds nothing.
    assert run.total.unlabelled == len(findings)
    assert await quality.main(_argv(corpus, "--write-template")) == 0
    assert len(_labels(corpus["labels"])) == len(findings)


async def test_labelled_findings_are_counted_by_verdict_with_strict_and_lenient_precision(
    corpus, capsys, rules_not_frozen
):
    await quality.main(_argv(corpus, "--write-template"))
    count = len(_labels(corpus["labels"]))
    assert count >= 3, "the synthetic article should give at least three findings"
    _set_verdicts(corpus["labels"], ["true", "false", "debatable", *([None] * (count - 3))])
    capsys.readouterr()

    assert await quality.main(_argv(corpus)) == 0
    run = await _run(corpus)
    total = run.total
    assert (total.findings, total.true, total.false, total.debatable, total.unlabelled) == (
        count,
        1,
        1,
        1,
        count - 3,
    )
    assert total.strict == pytest.approx(1 / 3)
    assert total.lenient == pytest.approx(2 / 3)
    assert run.unused == []
    out = capsys.readouterr().out
    assert f"| **all** | {count} | 1 | 1 | 1 | {count - 3} | 0.33 | 0.67 |" in out
    assert "| severity |" in out and "| category |" in out
    assert "1 true" in out


async def test_a_label_outlives_a_reworded_message_and_a_vanished_finding_leaves_an_unused_label(
    corpus, capsys, rules_not_frozen
):
    await quality.main(_argv(corpus, "--write-template"))
    labels = _labels(corpus["labels"])
    labels[0]["stem"] = "an older wording of the same finding"
    labels[0]["verdict"] = "true"
    labels.append(
        {
            "article": "dev-cache",
            "rule": "rule:retired",
            "line": 3,
            "stem": "gone",
            "verdict": "false",
            "reason": "a rule that no longer exists",
        }
    )
    labels.append(
        {
            "article": "heldout-queue",
            "rule": "rule:any",
            "line": 1,
            "stem": "other split",
            "verdict": "true",
            "reason": "not counted on dev",
        }
    )
    corpus["labels"].write_text(json.dumps({"labels": labels}), encoding="utf-8")

    assert await quality.main(_argv(corpus, "--show-unused")) == 0
    out = capsys.readouterr().out
    assert "1 labels unused (0 of them true" in out
    assert "dev-cache:3 rule:retired [false] gone" in out
    run = await _run(corpus)
    assert run.loose_matches == 1
    assert run.total.true == 1
    assert [(label.rule, label.line) for label in run.unused] == [("rule:retired", 3)]


async def test_the_heldout_split_is_refused_until_the_rules_are_frozen(corpus, capsys, monkeypatch):
    monkeypatch.delenv(quality.FROZEN_ENV, raising=False)
    for split in (HELD, f"dev,{HELD}"):
        assert await quality.main(_argv(corpus, "--split", split, "--write-template")) == 2
        err = capsys.readouterr().err
        assert f"held-aside split {HELD}" in err and "PROOFREAD_RULES_FROZEN=1" in err
    assert not corpus["labels"].exists()

    monkeypatch.setenv(quality.FROZEN_ENV, "1")
    assert await quality.main(_argv(corpus, "--split", HELD)) == 0
    assert f"Corpus split '{HELD}': 1 articles scored, 0 skipped" in capsys.readouterr().out


async def test_several_development_splits_are_scored_as_one_set(corpus, capsys, rules_not_frozen):
    (corpus["manifest"].parent / "articles" / "seen-queue.md").write_text(HELDOUT_ARTICLE, encoding="utf-8")
    manifest = json.loads(corpus["manifest"].read_text(encoding="utf-8"))
    manifest["articles"].append(_record("seen-queue", HELDOUT_ARTICLE, split="heldout", stored="repo"))
    corpus["manifest"].write_text(json.dumps(manifest), encoding="utf-8")

    assert await quality.main(_argv(corpus, "--split", "dev,heldout")) == 0
    assert "Corpus split 'dev,heldout': 2 articles scored, 0 skipped" in capsys.readouterr().out
    run = await _run(corpus, "heldout")
    assert [article.id for article in run.articles] == ["seen-queue"]

    assert await quality.main(_argv(corpus, "--split", "dev,later")) == 2
    assert "unknown split later" in capsys.readouterr().err


async def test_articles_absent_from_the_shared_folder_are_skipped_and_counted(corpus, capsys, monkeypatch):
    monkeypatch.setenv(quality.FROZEN_ENV, "1")
    (corpus["shared"] / "articles" / "heldout-queue.md").unlink()
    assert await quality.main(_argv(corpus, "--split", HELD)) == 0
    out = capsys.readouterr().out
    assert "0 articles scored, 1 skipped" in out
    assert "skipped heldout-queue: absent" in out


async def test_a_changed_article_is_skipped_rather_than_scored_against_stale_labels(
    corpus, capsys, rules_not_frozen
):
    (corpus["manifest"].parent / "articles" / "dev-cache.md").write_text(
        DEV_ARTICLE + "\nMore.\n", encoding="utf-8"
    )
    assert await quality.main(_argv(corpus)) == 0
    assert "skipped dev-cache: differs from its recorded SHA-256" in capsys.readouterr().out


async def test_a_bad_verdict_in_the_labels_file_is_named_with_its_position(corpus, capsys, rules_not_frozen):
    corpus["labels"].write_text(
        json.dumps(
            {
                "labels": [
                    {
                        "article": "dev-cache",
                        "rule": "rule:x",
                        "line": 1,
                        "stem": "s",
                        "verdict": "maybe",
                        "reason": "",
                    },
                ]
            }
        ),
        encoding="utf-8",
    )
    assert await quality.main(_argv(corpus)) == 2
    err = capsys.readouterr().err
    assert "label #1" in err and "'maybe'" in err


def test_message_stems_ignore_numbers_case_and_spacing():
    assert quality.message_stem("Long sentence (121 characters).") == quality.message_stem(
        "long  sentence (98 characters)."
    )
    assert len(quality.message_stem("x" * 500)) == quality.STEM_CHARS


async def test_a_renamed_rule_keeps_its_labels_through_the_renamed_table(corpus, rules_not_frozen):
    await quality.main(_argv(corpus, "--write-template"))
    labels = _labels(corpus["labels"])
    new_rule = str(labels[0]["rule"])
    for label in labels:
        label["verdict"] = "true"
        if label["rule"] == new_rule:
            label["rule"] = "rule:before-the-rename"
    corpus["labels"].write_text(
        json.dumps({"renamed": {new_rule: "rule:before-the-rename"}, "labels": labels}), encoding="utf-8"
    )

    run = await _run(corpus)
    assert (run.total.unlabelled, run.unused, run.loose_matches) == (0, [], 0)
    assert run.total.true == len(labels)
    await quality.main(_argv(corpus, "--write-template"))
    assert json.loads(corpus["labels"].read_text(encoding="utf-8"))["renamed"] == {
        new_rule: "rule:before-the-rename"
    }


async def test_a_sweep_lists_findings_per_rule_on_unlabelled_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "posts").mkdir()
    (tmp_path / "posts" / "one.md").write_text("# Notes\n\nThe enviroment is set up with strace.\n", encoding="utf-8")
    (tmp_path / "posts" / "two.markdown").write_text("# More\n\nNothing wrong here at all.\n", encoding="utf-8")
    (tmp_path / "posts" / "skip.txt").write_text("not markdown", encoding="utf-8")
    assert await quality.main(["--sweep", str(tmp_path), "--rules", "spelling", "--show"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 files, 1 findings")
    assert "| rule:spelling | 1 |" in out and "posts/one.md:3 rule:spelling" in out and "strace" not in out
    assert await quality.main(["--sweep", str(tmp_path / "nowhere")]) == 2
    assert "not a folder" in capsys.readouterr().err


async def test_the_harness_stops_the_linter_child_before_it_returns(tmp_path: Path):
    from agents.proofread.linter import WORKER

    (tmp_path / "one.md").write_text("# Notes\n\n* a\n- b\n", encoding="utf-8")
    assert await quality.main(["--sweep", str(tmp_path)]) == 0
    assert WORKER._process is None  # killed and reaped, not left to outlive the command
    assert await quality.main(["--sweep", str(tmp_path / "nowhere")]) == 2  # an early exit too
    assert WORKER._process is None


def test_the_splits_and_the_held_aside_one_come_from_the_corpus_records(tmp_path: Path):
    manifest = tmp_path / "corpus.json"
    splits = ["heldout10", "dev", "heldout", "heldout2", "heldout10"]
    manifest.write_text(json.dumps({"articles": [{"split": split} for split in splits]}), encoding="utf-8")
    assert quality.corpus_splits(manifest) == ("dev", "heldout", "heldout2", "heldout10")  # by number, not text
    records = json.loads(quality.MANIFEST.read_text(encoding="utf-8"))["articles"]
    newest = max(int(r["split"][len("heldout"):]) for r in records if r["split"][len("heldout"):].isdigit())
    assert HELD == f"heldout{newest}"


# --- rounds: each held-out set's figure as measured once ---------------------------------------------


def test_every_held_out_set_has_its_round_recorded_once():
    rounds = quality.load_rounds()
    held_out = [split for split in quality.SPLITS if quality.round_number(split) is not None]
    assert [r.split for r in rounds] == held_out  # in order, none missing, none twice
    assert [r.number for r in rounds] == list(range(1, len(held_out) + 1))
    assert all(0 <= r.true <= r.findings for r in rounds)


def test_windows_sum_consecutive_rounds_and_the_report_names_a_set_not_recorded():
    rounds = [quality.Round(n, f"heldout{n}", findings, true)
              for n, findings, true in ((2, 10, 8), (3, 5, 5), (4, 0, 0), (5, 10, 2))]
    assert quality.windows(rounds, 3) == [(2, 4, 13, 15), (3, 5, 7, 15)]
    report = quality.rounds_report(rounds, ("dev", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6"), 3)
    assert report.startswith("Not recorded: heldout6.")
    assert "| 3–5 | 7 | 15 | 0.467 |" in report and "| 4 | heldout4 | 0 | 0 | — |" in report
    assert "All 4 recorded rounds: 15 true of 25 findings, strict 0.600." in report


async def test_a_damaged_rounds_record_is_named_not_a_traceback(tmp_path, capsys):
    record = tmp_path / "rounds.json"
    record.write_text('{"rounds": [{"round": 1, "split": "heldout"}]}', encoding="utf-8")
    assert await quality.main(["--rounds", "--rounds-file", str(record)]) == 2
    assert f"{record} is no rounds record (KeyError" in capsys.readouterr().err


async def test_a_round_is_recorded_once_from_a_whole_labelled_set_read_with_frozen_rules(
    corpus, tmp_path, capsys, monkeypatch
):
    record = tmp_path / "rounds.json"
    argv = [*_argv(corpus, "--split", HELD, "--rounds-file", str(record))]
    # The held-out set holds the article with findings.
    (corpus["shared"] / "articles" / "heldout-queue.md").write_text(DEV_ARTICLE, encoding="utf-8")
    manifest = json.loads(corpus["manifest"].read_text(encoding="utf-8"))
    manifest["articles"][1] = _record("heldout-queue", DEV_ARTICLE, split=HELD, stored="shared")
    corpus["manifest"].write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.delenv(quality.FROZEN_ENV, raising=False)
    run = await _run(corpus, "dev")
    with pytest.raises(quality.CorpusError, match="a round is one held-out set"):
        quality.record_round(run, record)

    monkeypatch.setenv(quality.FROZEN_ENV, "1")
    assert await quality.main([*argv, "--write-template"]) == 0
    count = len(_labels(corpus["labels"]))
    assert count >= 1
    _set_verdicts(corpus["labels"], [None] * count)
    capsys.readouterr()
    assert await quality.main([*argv, "--record-round"]) == 2  # a finding is unlabelled
    assert "unlabelled" in capsys.readouterr().err and not record.exists()

    _set_verdicts(corpus["labels"], ["true"] + ["false"] * (count - 1))
    assert await quality.main([*argv, "--record-round"]) == 0
    number = quality.round_number(HELD)
    assert quality.load_rounds(record) == [quality.Round(number, HELD, count, 1)]
    assert f"Round {number} ({HELD}): 1 true of {count} recorded." in capsys.readouterr().out
    # Measured once: a second record of the same round is refused and the first one stands.
    assert await quality.main([*argv, "--record-round"]) == 2
    assert "recorded already" in capsys.readouterr().err
    assert quality.load_rounds(record) == [quality.Round(number, HELD, count, 1)]
