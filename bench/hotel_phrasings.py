"""How many traveller requests the offline planner's hotel skill reads right:
`python -m bench hotel-phrasings [--show]`.

The table (agents/hotel/eval/phrasings.json) gives, for each request, the tool call a correct
planner makes; a case is right when every listed argument matches. The held-out cases were not
looked at while the rules were written. Beside each score: how many calls at least named the right
city (partial credit), to show where the misses are."""

from __future__ import annotations

import argparse

from agents.hotel.eval.phrasings import Outcome, run


def _report(label: str, outcomes: list[Outcome], show: bool) -> None:
    right = sum(o.right for o in outcomes)
    ja = [o for o in outcomes if any("\u3040" <= ch <= "\u9fff" for ch in o.case["text"])]
    print(f"{label}: {right}/{len(outcomes)} fully right ({right / max(1, len(outcomes)):.0%}); "
          f"Japanese {sum(o.right for o in ja)}/{len(ja)}")
    if show:
        for o in outcomes:
            if not o.right:
                print(f"  ✗ {o.case['id']}: {o.case['text']}\n      made {o.made}\n      " + "; ".join(o.problems))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench hotel-phrasings")
    parser.add_argument("--show", action="store_true", help="list the requests read wrong")
    parser.add_argument("--split", choices=("dev", "heldout"), help="only this part of the table")
    args = parser.parse_args(argv)
    splits = [args.split] if args.split else ["dev", "heldout"]
    for split in splits:
        outcomes = run(split)
        _report(split, outcomes, args.show)
        city = sum(1 for o in outcomes if not any(p.startswith(("city=", "asked", "searched")) for p in o.problems))
        print(f"  the right city (or the right question): {city}/{len(outcomes)}")
    return 0
