"""Find articles in git snapshots of blog repositories, for a new held-out set or a sweep.

    python eval/proofread/candidates.py list OWNER/NAME ...           # candidate posts, newest first
    python eval/proofread/candidates.py sweep DIR OWNER/NAME ... [--per-repo 12]
    python eval/proofread/candidates.py add heldoutN ID OWNER/NAME PATH --platform zenn [--licence MIT --stored repo]

`list` prints, per repository, its Markdown files of 4–20 KB (the size the held-out sets are drawn
from) with the date and commit that last changed each, its size, the front-matter flags that say
whether it is published (published, private, draft, type, lang; a Zenn front matter with no
`published:` is marked unpublished, as Zenn does not publish it), and the language its letters point
to (`check_corpus.script_of`): metadata only, no article text, so a held-out set can be picked
without reading it. `sweep` copies the published 2–40 KB posts that no corpus record holds into DIR
(`<owner>+<name>__<path>.md`, at most `--per-repo` per repository, in path order) for
`python -m bench proofread-quality --sweep DIR`. `add` appends one chosen article's record to
corpus.json (the snapshot's HEAD commit, the file's last change, size, SHA-256 and language) and
stores its file, in `articles/` or the shared folder. Snapshots are looked up as in rebuild_shared.py
(`--mirrors`, default /work/.mirror).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from check_corpus import DEFAULT_SHARED, HERE, script_of
from rebuild_shared import DEFAULT_MIRRORS, blob, git_dir

SKIPPED = ("readme", "license", "changelog", "node_modules", "code_of_conduct", "contributing", "claude.md",
           "agents.md", ".claude/", ".github/", "themes/", "template", "_drafts/", "/draft/", "/drafts/")  # unpublished posts
FLAGS = ("published", "private", "draft", "type", "lang", "language")
UNPUBLISHED = re.compile(r"^(?:published:\s*false|private:\s*true|draft\s*[:=]\s*true)", re.M | re.I)
# Zenn's own keys: Zenn publishes an article only when its front matter says `published: true`.
ZENN_KEYS = re.compile(r"^(?:emoji|topics):", re.M)
PUBLISHED = re.compile(r"^published:\s*true\b", re.M | re.I)


def _git(git: Path, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={git}", *args], capture_output=True, check=False).stdout


def markdown_files(git: Path, low: int, high: int) -> Iterator[tuple[str, int]]:
    """(path, size) of the Markdown files at HEAD within the size bounds, other than boilerplate."""
    for line in _git(git, "ls-tree", "-r", "-l", "HEAD").decode(errors="replace").splitlines():
        meta, path = line.split("\t", 1)
        size = meta.split()[3]
        if size == "-" or not path.lower().endswith((".md", ".markdown")) or not low <= int(size) <= high:
            continue
        if not any(part in "/" + path.lower() for part in SKIPPED):
            yield path, int(size)


def front_matter(text: str) -> str:
    for marker in ("---", "+++"):
        if text.startswith(marker):
            return text.split("\n" + marker, 1)[0]
    return text[:1500] if text.startswith("<!--") else ""


def flags(text: str) -> str:
    head = front_matter(text)
    found = [f"{key}={m.group(1).strip()[:12]}" for key in FLAGS if (m := re.search(rf"^{key}\s*[:=]\s*(.+)$", head, re.M))]
    if ZENN_KEYS.search(head) and not re.search(r"^published\s*:", head, re.M):
        found.append("unpublished (Zenn front matter without published: true)")
    return " ".join(found)


def unpublished(text: str) -> bool:
    """A draft by its front matter: `published: false`, `private: true`, `draft: true`, or Zenn's
    keys (`emoji`, `topics`) without `published: true`, which Zenn does not publish."""
    head = front_matter(text)
    return bool(UNPUBLISHED.search(head) or (ZENN_KEYS.search(head) and not PUBLISHED.search(head)))


def list_candidates(mirrors: Path, repos: list[str], shown: int) -> int:
    for repo in repos:
        git = git_dir(mirrors, repo)
        if git is None:
            print(f"== {repo}: no snapshot under {mirrors}")
            continue
        rows = []
        for path, size in markdown_files(git, 4000, 20000):
            text = _git(git, "show", f"HEAD:{path}").decode("utf-8", errors="replace")
            date, commit = [*_git(git, "log", "-1", "--format=%cs %h", "HEAD", "--", path).decode().split(), "", ""][:2]
            rows.append((date, commit, size, path, flags(text), script_of(text)))
        rows.sort(reverse=True)
        head = _git(git, "rev-parse", "HEAD").decode().strip()[:10]
        print(f"== {repo} head={head} candidates={len(rows)}")
        for date, commit, size, path, found, language in rows[:shown]:
            print(f"   {date} {commit} {size:>6} {language} {path} {found}")
    return 0


def sweep(mirrors: Path, out: Path, repos: list[str], per_repo: int) -> int:
    used = {(r["repo"], r["path"]) for r in json.loads((HERE / "corpus.json").read_text())["articles"]}
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for repo in repos:
        git = git_dir(mirrors, repo)
        if git is None:
            print(f"{repo}: no snapshot under {mirrors}")
            continue
        taken = 0
        for path, _size in sorted(markdown_files(git, 2000, 40000)):
            if taken >= per_repo or (repo, path) in used:
                continue
            data = _git(git, "show", f"HEAD:{path}")
            if unpublished(data.decode("utf-8", errors="replace")):
                continue
            name = repo.replace("/", "+") + "__" + re.sub(r"[^A-Za-z0-9._-]", "_", path)
            (out / (name if name.endswith(".md") else name + ".md")).write_bytes(data)
            taken += 1
        print(f"{repo}: {taken}")
        total += taken
    print(f"total {total}")
    return 0


def add(mirrors: Path, corpus: Path, shared: Path, split: str, article_id: str, repo: str, path: str, *,
        platform: str, licence: str, stored: str) -> int:
    """Append the record of `repo`'s `path` at the snapshot's HEAD to corpus.json (commit, last change,
    size, SHA-256, language from its letters) and write the file beside the others: `articles/`
    for `stored: repo`, the shared folder for `stored: shared`. Prints the id, never the text."""
    git = git_dir(mirrors, repo)
    if git is None:
        print(f"{repo}: no snapshot under {mirrors}", file=sys.stderr)
        return 1
    manifest = json.loads(corpus.read_text(encoding="utf-8"))
    if any(a["id"] == article_id or (a["repo"], a["path"]) == (repo, path) for a in manifest["articles"]):
        print(f"{article_id}: the corpus already holds this id or {repo}:{path}", file=sys.stderr)
        return 1
    head = _git(git, "rev-parse", "HEAD").decode().strip()
    data = blob(git, head, path)
    if data is None:
        print(f"{repo}: no file {path} at {head[:10]}", file=sys.stderr)
        return 1
    changed, date = _git(git, "log", "-1", "--format=%H %cs", head, "--", path).decode().split()
    manifest["articles"].append({
        "bytes": len(data), "commit": head, "id": article_id, "language": script_of(data.decode("utf-8", errors="replace")),
        "last_changed_commit": changed, "last_changed_date": date, "licence": licence, "path": path,
        "platform": platform, "repo": repo, "sha256": hashlib.sha256(data).hexdigest(), "split": split,
        "stored": stored, "url": f"https://github.com/{repo}/blob/{head}/{path}",
    })
    folder = (HERE if stored == "repo" else shared) / "articles"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{article_id}.md").write_bytes(data)
    corpus.write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"{article_id}: {split}, {len(data)} bytes, stored {stored}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    verbs = parser.add_subparsers(dest="verb", required=True)
    listing = verbs.add_parser("list", help="candidate posts per repository, newest first (no text)")
    listing.add_argument("repos", nargs="+")
    listing.add_argument("--shown", type=int, default=8)
    sweeping = verbs.add_parser("sweep", help="copy unlabelled published posts into DIR")
    sweeping.add_argument("dir", type=Path)
    sweeping.add_argument("repos", nargs="+")
    sweeping.add_argument("--per-repo", type=int, default=12)
    adding = verbs.add_parser("add", help="append one article to corpus.json and store its file")
    adding.add_argument("split")
    adding.add_argument("id")
    adding.add_argument("repo")
    adding.add_argument("path")
    adding.add_argument("--platform", required=True)
    adding.add_argument("--licence", default="none found")
    adding.add_argument("--stored", choices=("repo", "shared"), default="shared")
    adding.add_argument("--corpus", type=Path, default=HERE / "corpus.json")
    adding.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    args = parser.parse_args(argv)
    if args.verb == "list":
        return list_candidates(args.mirrors, args.repos, args.shown)
    if args.verb == "add":
        return add(args.mirrors, args.corpus, args.shared, args.split, args.id, args.repo, args.path,
                   platform=args.platform, licence=args.licence, stored=args.stored)
    return sweep(args.mirrors, args.dir, args.repos, args.per_repo)


if __name__ == "__main__":
    sys.exit(main())
