"""Rebuild the articles kept outside the repository (``stored: "shared"``) from git snapshots.

Each shared record names its source ``repo``, ``commit`` and ``path``; given a folder of bare git
snapshots (one per repository, ``<owner>+<name>/repo`` or ``<owner>+<name>/repo/.git``, as the
research mirror lays them out), the blob at ``commit:path`` is written to ``<shared>/articles/<id>.md``
when its size and SHA-256 match the record. Nothing is read from the network and no article text is
printed, so it is safe to run on held-aside parts.

    python eval/proofread/rebuild_shared.py [--mirrors /work/.mirror] [--shared /work/shared/proofread_corpus]
    python eval/proofread/rebuild_shared.py --missing    # only list the repositories still needed

Exit status 0 when every shared article is present afterwards, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SHARED = Path("/work/shared/proofread_corpus")
DEFAULT_MIRRORS = Path("/work/.mirror")


def git_dir(mirrors: Path, repo: str) -> Path | None:
    root = mirrors / repo.replace("/", "+") / "repo"
    for candidate in (root / ".git", root):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def blob(git: Path, commit: str, path: str) -> bytes | None:
    done = subprocess.run(
        ["git", f"--git-dir={git}", "cat-file", "blob", f"{commit}:{path}"], capture_output=True, check=False
    )
    return done.stdout if done.returncode == 0 else None


def matches(data: bytes, record: dict) -> bool:
    return len(data) == record["bytes"] and hashlib.sha256(data).hexdigest() == record["sha256"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument(
        "--missing", action="store_true", help="list the repositories whose articles are absent"
    )
    args = parser.parse_args(argv)

    records = [
        r for r in json.loads((HERE / "corpus.json").read_text())["articles"] if r["stored"] == "shared"
    ]
    out = args.shared / "articles"
    absent = [
        r
        for r in records
        if not ((out / f"{r['id']}.md").is_file() and matches((out / f"{r['id']}.md").read_bytes(), r))
    ]
    if args.missing:
        for repo in sorted({r["repo"] for r in absent}):
            print(repo)
        return 0 if not absent else 1
    out.mkdir(parents=True, exist_ok=True)
    written, problems = 0, []
    for record in absent:
        git = git_dir(args.mirrors, record["repo"])
        data = blob(git, record["commit"], record["path"]) if git is not None else None
        if data is None:
            problems.append(
                f"{record['id']}: {'no snapshot of ' + record['repo'] if git is None else 'commit or path not in the snapshot'}"
            )
        elif not matches(data, record):
            problems.append(f"{record['id']}: size or SHA-256 differs from the record")
        else:
            (out / f"{record['id']}.md").write_bytes(data)
            written += 1
    print(
        f"{len(records)} shared articles: {len(records) - len(absent)} already present, {written} written, {len(problems)} missing"
    )
    for line in problems:
        print("  " + line)
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
