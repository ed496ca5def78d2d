#!/usr/bin/env python3
"""Fits Elo ratings to the results of `ttakji match` runs.

Reads the summary.txt of each match folder given, fits a Bradley-Terry
model by maximum likelihood (draws count as half a win each way), and prints
each player's rating with one player pinned as the anchor:

    python3 tools/elo_fit.py --anchor gnugo10=1800 match-a match-b ...

GNU Go 3.8 at level 10 at 1800 follows the convention of the 9x9 computer
Go server CGOS, which anchored GNU Go level 10 at 1800.
"""

import argparse
import math
import re
import sys
from pathlib import Path

LINE = re.compile(r"^(?P<name>[^:]+): (?P<w>\d+) wins, (?P<l>\d+) losses, (?P<d>\d+) draws;")


def read_summary(folder: Path):
    """(player a, player b, points of a, games) from one match folder."""
    lines = (folder / "summary.txt").read_text().splitlines()
    rows = [m for m in (LINE.match(line) for line in lines[1:3]) if m]
    if len(rows) != 2:
        sys.exit(f"{folder}/summary.txt: cannot read the two result lines")
    a, b = rows
    games = int(a["w"]) + int(a["l"]) + int(a["d"])
    return a["name"], b["name"], int(a["w"]) + int(a["d"]) / 2, games


def fit(results, anchor, anchor_rating, rounds=2000):
    players = sorted({p for a, b, _, _ in results for p in (a, b)})
    rating = {p: 0.0 for p in players}
    for _ in range(rounds):
        for p in players:
            if p == anchor:
                continue
            # Newton step on p's rating for the log-likelihood.
            grad, hess = 0.0, 0.0
            for a, b, points, games in results:
                if p not in (a, b):
                    continue
                other = b if p == a else a
                score = points if p == a else games - points
                expected = 1 / (1 + 10 ** ((rating[other] - rating[p]) / 400))
                k = math.log(10) / 400
                grad += k * (score - games * expected)
                hess += k * k * games * expected * (1 - expected)
            if hess > 0:
                rating[p] += max(-100.0, min(100.0, grad / hess))
    shift = anchor_rating - rating[anchor]
    return {p: r + shift for p, r in rating.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--anchor", default="gnugo10=1800", help="NAME=RATING pinned in the fit")
    parser.add_argument(
        "--prior-draws",
        type=float,
        default=1.0,
        help="virtual draws of every player against the anchor, so that a clean sweep gives a finite rating",
    )
    parser.add_argument("matches", nargs="+", type=Path, help="folders written by ttakji match")
    args = parser.parse_args()
    name, _, value = args.anchor.partition("=")
    results = [read_summary(folder) for folder in args.matches]
    for a, b, points, games in results:
        print(f"{a} vs {b}: {points:g} of {games} to {a}")
    players = {p for a, b, _, _ in results for p in (a, b)} - {name}
    if args.prior_draws > 0:
        results += [(p, name, args.prior_draws / 2, args.prior_draws) for p in sorted(players)]
    ratings = fit(results, name, float(value))
    for player, rating in sorted(ratings.items(), key=lambda x: -x[1]):
        print(f"{player:>12} {rating:7.0f}")


if __name__ == "__main__":
    main()
