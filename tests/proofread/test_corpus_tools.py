"""The evaluation corpus's tools on a real git repository laid out as a snapshot folder:
candidates.py lists and sweeps posts, rebuild_shared.py reads a blob back, check_corpus.py tells an
article's language from its letters."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

EVAL = Path(__file__).resolve().parents[2] / "eval" / "proofread"
sys.path.insert(0, str(EVAL))

import candidates  # noqa: E402
import check_corpus  # noqa: E402
import rebuild_shared  # noqa: E402

JA = "---\ntitle: \"テスト\"\npublished: true\n---\n\n" + "これは日本語の記事です。設定を変更します。\n" * 200
DRAFT = "---\ntitle: \"下書き\"\npublished: false\n---\n\n" + "まだ書きかけの記事です。\n" * 300
# Zenn's keys with no `published: true`: Zenn does not publish it, whatever else its front matter says.
UNSAID = "---\ntitle: \"メモ\"\nemoji: \"📝\"\ntopics: []\ndraft: false\n---\n\n" + "公開前のメモです。\n" * 300
ZH = "---\ntitle: test\n---\n\n" + "這是一篇關於開發環境的文章，我們使用指令來建置。\n" * 200
EN = "# Notes\n\n" + "This post explains how the build works and why it is fast.\n" * 80


@pytest.fixture()
def mirrors(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "articles").mkdir(parents=True)
    (work / "_drafts").mkdir()
    files = {"ja.md": JA, "draft.md": DRAFT, "unsaid.md": UNSAID, "zh.md": ZH, "en.md": EN, "README.md": EN}
    for name, text in files.items():
        (work / "articles" / name if name != "README.md" else work / name).write_text(text, encoding="utf-8")
    (work / "_drafts" / "unfinished.md").write_text(EN, encoding="utf-8")  # Jekyll keeps unpublished posts here
    (work / "draft").mkdir()
    (work / "draft" / "later.md").write_text(EN, encoding="utf-8")  # and others beside a published/ folder
    run = lambda *args: subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "posts")
    root = tmp_path / "mirror" / "someone+blog" / "repo"
    root.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(root)], check=True, capture_output=True)
    return tmp_path / "mirror"


def test_the_letters_tell_japanese_chinese_and_english_apart():
    assert [check_corpus.script_of(text) for text in (JA, ZH, EN)] == ["ja", "zh", "en"]


def test_list_shows_metadata_and_language_never_the_text(mirrors, capsys):
    assert candidates.main(["--mirrors", str(mirrors), "list", "someone/blog"]) == 0
    out = capsys.readouterr().out
    assert "articles/ja.md published=true" in out and " ja articles/ja.md" in out
    assert " zh articles/zh.md" in out and "articles/draft.md published=false" in out
    assert "articles/unsaid.md draft=false unpublished (Zenn front matter without published: true)" in out
    assert "README" not in out and "_drafts" not in out and "draft/later" not in out and "設定を変更します" not in out
    assert candidates.main(["--mirrors", str(mirrors), "list", "nobody/none"]) == 0
    assert "no snapshot" in capsys.readouterr().out


def test_sweep_copies_published_posts_only(mirrors, tmp_path, capsys):
    out = tmp_path / "sweep"
    assert candidates.main(["--mirrors", str(mirrors), "sweep", str(out), "someone/blog"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "someone+blog__articles_en.md", "someone+blog__articles_ja.md", "someone+blog__articles_zh.md",
    ]
    assert (out / "someone+blog__articles_ja.md").read_text(encoding="utf-8") == JA


def test_rebuild_reads_a_blob_back_and_checks_it(mirrors):
    git = rebuild_shared.git_dir(mirrors, "someone/blog")
    assert git is not None and rebuild_shared.git_dir(mirrors, "nobody/none") is None
    data = rebuild_shared.blob(git, "HEAD", "articles/ja.md")
    assert data == JA.encode()
    record = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert rebuild_shared.matches(data, record)
    assert not rebuild_shared.matches(data + b"\n", record)
    assert rebuild_shared.blob(git, "HEAD", "articles/missing.md") is None


def test_the_newest_block_comes_from_the_records_and_a_gap_is_a_problem(tmp_path: Path):
    """A new held-out set is data only: the blocks run to the newest number the records name, and a
    number left out (heldout3 missing between heldout2 and heldout4) is reported."""
    def record(aid: str, split: str, repo: str) -> dict:
        data = EN.encode()
        (tmp_path / "articles" / f"{aid}.md").write_bytes(data)
        return {"id": aid, "platform": "hugo", "language": "en", "repo": repo, "path": f"{aid}.md", "commit": "0" * 40,
                "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "split": split, "stored": "shared",
                "url": "https://example.invalid", "licence": "none found"}

    (tmp_path / "articles").mkdir()
    articles = [record("a", "heldout2", "one/blog"), record("b", "heldout4", "two/blog")]
    assert check_corpus.block_splits(articles) == ("heldout2", "heldout3", "heldout4")
    assert check_corpus.block_splits([]) == ()
    manifest = tmp_path / "corpus.json"
    manifest.write_text(json.dumps({"articles": articles}), encoding="utf-8")
    problems = check_corpus.check(manifest, tmp_path)
    assert any(p.startswith("heldout3: no article") for p in problems)
    assert not any(p.startswith(("a:", "b:")) for p in problems)  # both records are otherwise sound


def test_add_records_an_article_from_its_snapshot_and_refuses_it_twice(mirrors, tmp_path, capsys):
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps({"articles": []}), encoding="utf-8")
    shared = tmp_path / "shared"
    argv = ["--mirrors", str(mirrors), "add", "heldout2", "ja-post", "someone/blog", "articles/ja.md",
            "--platform", "zenn", "--corpus", str(corpus), "--shared", str(shared)]
    assert candidates.main(argv) == 0
    assert "設定" not in capsys.readouterr().out  # the id and size, never the text
    (record,) = json.loads(corpus.read_text(encoding="utf-8"))["articles"]
    stored = (shared / "articles" / "ja-post.md").read_bytes()
    assert stored == JA.encode()
    assert record["sha256"] == hashlib.sha256(stored).hexdigest() and record["bytes"] == len(stored)
    assert (record["language"], record["split"], record["stored"], record["licence"]) == ("ja", "heldout2", "shared", "none found")
    assert record["url"] == f"https://github.com/someone/blog/blob/{record['commit']}/articles/ja.md"
    assert len(record["last_changed_commit"]) == 40 and record["last_changed_date"][:2] == "20"
    assert candidates.main(argv) == 1  # the same file again
    assert candidates.main([*argv[:4], "other-id", *argv[5:]]) == 1  # under another id too
    assert len(json.loads(corpus.read_text(encoding="utf-8"))["articles"]) == 1
