#!/usr/bin/env python3
"""Play GNU Go against itself and record GNU Go's verdict on dead stones.

Why this exists: our own dead-stone analysis needs a reference to be measured
against. This script produces finished games (both players passed) together
with what a strong GNU Go thinks is dead or in seki at the end, so tests and
measurements can compare our verdict with GNU Go's on the same positions.

How a game is made, for each game seed in turn:

* Two GNU Go processes, one per colour, are started as
  ``gnugo --mode gtp --chinese-rules --positional-superko --level L --seed S``.
  The two levels (1..10) and the two engine seeds are drawn from the game seed,
  so every game is reproducible. Half of the games pair a weak level with a
  strong one on purpose: lopsided games end with more dead stones on the board.
* Each side may first play 0-3 random legal moves (away from the first line),
  also drawn from the game seed, so that openings vary.
* Then the side to move is asked for ``genmove`` and the answer is ``play``ed
  on the other process, until two consecutive passes. A game in which someone
  resigns, or which reaches the move limit, or in which the engines disagree on
  legality, is discarded and the next seed is tried. So is a game in which an
  engine fails or does not answer within ``--timeout``; three such failures in
  a row stop the run.
* With ``--stop-after MIN-MAX`` a game is stopped early: once it has
  reached a number of moves drawn from the game seed between MIN and MAX,
  both sides pass, so the game ends with fights still open and areas still
  unclaimed, as when players stop too soon. A game whose players pass twice
  on their own before that is discarded (it is a finished game).
* With ``--player ttakji`` the players are this project's own engine
  (``--ttakji``, the search player on GTP, at level easy or normal for each
  side, drawn from the game seed) instead of GNU Go; GNU Go is still the
  judge.
* A third process at level 10 (the judge) replays the game and answers
  ``final_status_list dead``, ``final_status_list seki``, ``final_score`` and
  ``printsgf``.

Output in ``--out``:

* ``NNN.sgf``: the game as a plain FF[4] SGF with the moves, SZ, KM, RU[Chinese],
  PB/PW naming the levels and RE taken from the judge's final_score. GNU Go's own
  ``printsgf`` only describes the final position as setup stones (AB/AW), not
  the sequence of moves, so the SGF is written here from the move list; the
  judge's ``printsgf`` is only used to check that every stone it calls dead or
  seki is on the board.
* ``status.tsv``: one line per kept game, see ``STATUS_HEADER``.

Examples::

    python3 tools/gnugo_selfplay.py --games 100 --start-seed 1 \\
        --out crates/baduk/tests/data/gnugo-finished
    python3 tools/gnugo_selfplay.py --games 150 --start-seed 6001 \\
        --stop-after 20-60 --out crates/baduk/tests/data/gnugo-early-6001
    cargo build --release -p baduk-ai --example gtp
    python3 tools/gnugo_selfplay.py --games 150 --start-seed 7001 \\
        --stop-after 20-60 --player ttakji \\
        --ttakji target/release/examples/gtp \\
        --out crates/baduk/tests/data/ttakji-early-7001
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # GTP skips the letter I.
SGF_COORDS = "abcdefghijklmnopqrstuvwxyz"
RULE_FLAGS = ["--chinese-rules", "--positional-superko"]
JUDGE_LEVEL = 10
DEFAULT_GNUGO = "/usr/games/gnugo"
DEFAULT_TIMEOUT = 120.0
DEFAULT_TTAKJI = "target/release/examples/gtp"
TTAKJI_LEVELS = ["easy", "normal"]

STATUS_HEADER = (
    "# file<TAB>dead<TAB>seki<TAB>info. dead and seki: the stones GNU Go "
    f"(level {JUDGE_LEVEL}, Chinese rules, positional superko) reports with "
    "final_status_list dead / seki once both players passed, as uppercase GTP "
    "vertices separated by spaces, or - if none. info: game seed, the level and "
    "engine seed of each colour, the number of random opening moves per colour, "
    "the number of moves (passes included), the move after which both sides "
    "were made to pass (stop=, only in games stopped early) and the judge's "
    "final_score.\n"
)


class GtpError(RuntimeError):
    """A GTP engine failed, answered with an error, or took too long."""


class GtpEngine:
    """One GTP engine subprocess, spoken to one command at a time."""

    def __init__(self, argv: list[str], name: str, timeout: float):
        self.name = name
        self.timeout = timeout
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                bufsize=1,
            )
        except OSError as err:
            raise GtpError(f"cannot start {name}: {' '.join(argv)}: {err}") from err
        # A reader thread lets every read have a timeout without select() on a
        # buffered text stream.
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                self._lines.put(line)
        except (OSError, ValueError):
            pass
        finally:
            self._lines.put(None)  # End of stream.
            self.proc.stdout.close()

    def _next_line(self, command: str, deadline: float) -> str:
        remaining = deadline - time.monotonic()
        try:
            line = self._lines.get(timeout=max(remaining, 0.0))
        except queue.Empty:
            raise GtpError(
                f"{self.name}: no answer to {command!r} within {self.timeout:.0f} s"
            ) from None
        if line is None:
            raise GtpError(f"{self.name}: engine exited while answering {command!r}")
        return line.rstrip("\r\n")

    def send(self, command: str) -> str:
        """Send one command and return the answer text after ``=``.

        Raises ``GtpError`` on a ``?`` answer, on timeout, or if the engine dies.
        """
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as err:
            raise GtpError(f"{self.name}: cannot send {command!r}: {err}") from err
        deadline = time.monotonic() + self.timeout
        # Skip anything before the answer (GTP allows no such output, but be lenient).
        line = self._next_line(command, deadline)
        while not line.startswith(("=", "?")):
            line = self._next_line(command, deadline)
        lines = [line]
        while True:
            line = self._next_line(command, deadline)
            if line == "":
                break
            lines.append(line)
        text = "\n".join(lines)
        status, body = text[0], text[1:]
        body = re.sub(r"^\d+", "", body).strip()  # Drop an optional command id.
        if status == "?":
            raise GtpError(f"{self.name}: {command!r} failed: {body}")
        return body

    def close(self) -> None:
        """Ask the engine to quit, and kill it if it does not."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        # The reader thread sees end of stream once the process is gone, and
        # closes stdout itself.
        self._reader.join(timeout=5)


@dataclass
class GamePlan:
    """Everything about a game that is drawn from its seed."""

    seed: int
    black_level: int | str
    white_level: int | str
    black_seed: int
    white_seed: int
    black_openings: int
    white_openings: int
    opening_rng: random.Random = field(repr=False)
    stop: int | None = None


def plan_game(seed: int, player: str = "gnugo",
              stop_after: tuple[int, int] | None = None) -> GamePlan:
    """Draw levels, engine seeds and opening lengths from the game seed.

    Every other game on average is lopsided: one side plays at level 1-4 and
    the other at level 7-10, which leaves more dead stones at the end than
    games between equals. The rest pick both levels freely from 1..10.
    """
    rng = random.Random(f"gnugo-selfplay-{seed}")
    if rng.random() < 0.5:
        weak, strong = rng.randint(1, 4), rng.randint(7, 10)
        black_level, white_level = (weak, strong) if rng.random() < 0.5 else (strong, weak)
    else:
        black_level, white_level = rng.randint(1, 10), rng.randint(1, 10)
    black_seed = rng.randrange(1, 2**31)
    white_seed = rng.randrange(1, 2**31)
    while white_seed == black_seed:
        white_seed = rng.randrange(1, 2**31)
    plan = GamePlan(
        seed=seed,
        black_level=black_level,
        white_level=white_level,
        black_seed=black_seed,
        white_seed=white_seed,
        black_openings=rng.randint(0, 3),
        white_openings=rng.randint(0, 3),
        opening_rng=random.Random(rng.randrange(2**63)),
    )
    # Drawn from generators of their own, so that the games of the plain
    # GNU Go runs stay what they were.
    if player == "ttakji":
        levels = random.Random(f"ttakji-selfplay-{seed}")
        plan.black_level = levels.choice(TTAKJI_LEVELS)
        plan.white_level = levels.choice(TTAKJI_LEVELS)
    if stop_after is not None:
        plan.stop = random.Random(f"gnugo-selfplay-stop-{seed}").randint(*stop_after)
    return plan


def level_tag(level: int | str) -> str:
    """The level as status.tsv's info column writes it: level7, or easy."""
    return f"level{level}" if isinstance(level, int) else level


def player_name(level: int | str) -> str:
    """How a player of this level is named in PB/PW and the log."""
    return f"GNU Go 3.8 level {level}" if isinstance(level, int) else f"ttakji {level}"


class GameDiscarded(Exception):
    """The game did not end with two passes and is not kept."""


@dataclass
class FinishedGame:
    plan: GamePlan
    moves: list[tuple[str, str]]  # (colour "B"/"W", GTP vertex or "PASS")
    dead: list[str]
    seki: list[str]
    score: str


def gtp_vertex(col: int, row: int) -> str:
    """GTP vertex of 0-based column (from the left) and row (from the bottom)."""
    return f"{GTP_COLUMNS[col]}{row + 1}"


def sgf_point(vertex: str, size: int) -> str:
    """SGF point of a GTP vertex: SGF rows count from the top, GTP rows from the bottom."""
    col = GTP_COLUMNS.index(vertex[0].upper())
    row = int(vertex[1:])
    return SGF_COORDS[col] + SGF_COORDS[size - row]


def vertices(answer: str) -> list[str]:
    """Vertices in a GTP list answer (any whitespace, any case), sorted for stable output."""
    found = {v.upper() for v in answer.split()}
    return sorted(found, key=lambda v: (GTP_COLUMNS.index(v[0]), int(v[1:])))


def start_engine(args: argparse.Namespace, name: str, level: int | str, seed: int) -> GtpEngine:
    if isinstance(level, int):
        argv = [args.gnugo, "--mode", "gtp", *RULE_FLAGS, "--level", str(level),
                "--seed", str(seed)]
    else:
        argv = [*shlex.split(args.ttakji), "--level", level, "--seed", str(seed)]
    engine = GtpEngine(argv, name, args.timeout)
    try:
        engine.send(f"boardsize {args.board_size}")
        engine.send("clear_board")
        engine.send(f"komi {args.komi:g}")
    except GtpError:
        engine.close()
        raise
    return engine


def play_everywhere(engines: list[GtpEngine], colour: str, vertex: str) -> None:
    """Play a move on every engine; a refusal means the engines disagree."""
    for engine in engines:
        try:
            engine.send(f"play {colour} {vertex}")
        except GtpError as err:
            raise GameDiscarded(f"{colour} {vertex} refused: {err}") from err


def play_openings(plan: GamePlan, engines: list[GtpEngine], size: int,
                  moves: list[tuple[str, str]]) -> None:
    """Play each side's random opening moves, alternating, black first."""
    # Points off the first line, so the random moves look like real openings.
    inner = [gtp_vertex(c, r) for c in range(1, size - 1) for r in range(1, size - 1)]
    counts = {"B": plan.black_openings, "W": plan.white_openings}
    # Moves still alternate: while the other side has random moves left, a side
    # whose own random moves are used up asks its engine for a move instead.
    for turn in range(2 * max(counts.values())):
        colour = "BW"[turn % 2]
        engine = engines[turn % 2]
        if counts[colour] > 0:
            counts[colour] -= 1
            candidates = inner[:]
            plan.opening_rng.shuffle(candidates)
            for vertex in candidates:
                if engine.send(f"is_legal {colour} {vertex}") == "1":
                    break
            else:
                vertex = "PASS"
            play_everywhere(engines, colour, vertex)
        else:
            vertex = engine.send(f"genmove {colour}").upper()
            if vertex == "RESIGN":
                raise GameDiscarded(f"{colour} resigned in the opening")
            others = [e for e in engines if e is not engine]
            play_everywhere(others, colour, vertex)
        moves.append((colour, vertex))


def play_game(args: argparse.Namespace, plan: GamePlan) -> FinishedGame:
    """Play one game between two engines; raise GameDiscarded unless both pass."""
    black = start_engine(args, "black", plan.black_level, plan.black_seed)
    try:
        white = start_engine(args, "white", plan.white_level, plan.white_seed)
    except GtpError:
        black.close()
        raise
    players = [black, white]
    moves: list[tuple[str, str]] = []
    try:
        play_openings(plan, players, args.board_size, moves)
        passes = 0
        while passes < 2:
            if plan.stop is not None and len(moves) >= plan.stop:
                # Stopped early: both sides pass, the one to move first
                # (only one more pass if the last move was a pass).
                for _ in range(2 - passes):
                    moves.append(("BW"[len(moves) % 2], "PASS"))
                break
            if len(moves) >= args.max_moves:
                raise GameDiscarded(f"no two passes within {args.max_moves} moves")
            turn = len(moves) % 2
            colour = "BW"[turn]
            vertex = players[turn].send(f"genmove {colour}").upper()
            if vertex == "RESIGN":
                raise GameDiscarded(f"{colour} resigned after {len(moves)} moves")
            play_everywhere([players[1 - turn]], colour, vertex)
            moves.append((colour, vertex))
            passes = passes + 1 if vertex == "PASS" else 0
        if plan.stop is not None and len(moves) < plan.stop:
            raise GameDiscarded(f"finished by two passes before the stop at {plan.stop}")
    finally:
        black.close()
        white.close()
    return judge_game(args, plan, moves)


def judge_game(args: argparse.Namespace, plan: GamePlan,
               moves: list[tuple[str, str]]) -> FinishedGame:
    """Replay the game into a strong engine and ask it what is dead and in seki."""
    judge = start_engine(args, "judge", JUDGE_LEVEL, plan.seed)
    try:
        for colour, vertex in moves:
            play_everywhere([judge], colour, vertex)
        dead = vertices(judge.send("final_status_list dead"))
        seki = vertices(judge.send("final_status_list seki"))
        score = judge.send("final_score")
        position = judge.send("printsgf")
    finally:
        judge.close()
    # printsgf wraps long AB/AW lists onto new lines that start with "[".
    on_board = {
        point
        for prop in re.findall(r"A[BW]((?:\s*\[[a-z]{2}\])+)", position)
        for point in re.findall(r"\[([a-z]{2})\]", prop)
    }
    for vertex in dead + seki:
        if sgf_point(vertex, args.board_size) not in on_board:
            raise GtpError(f"judge calls {vertex} dead or seki but its printsgf has no stone there")
    return FinishedGame(plan, moves, dead, seki, score)


def sgf_text(args: argparse.Namespace, game: FinishedGame) -> str:
    """The game as a plain FF[4] SGF record with its moves."""
    plan = game.plan
    header = (
        f"(;GM[1]FF[4]CA[UTF-8]AP[gnugo_selfplay.py]SZ[{args.board_size}]"
        f"KM[{args.komi:g}]RU[Chinese]"
        f"PB[{player_name(plan.black_level)}]PW[{player_name(plan.white_level)}]"
        f"RE[{game.score}]GC[game seed {plan.seed}]\n"
    )
    nodes = []
    for colour, vertex in game.moves:
        point = "" if vertex == "PASS" else sgf_point(vertex, args.board_size)
        nodes.append(f";{colour}[{point}]")
    body = "\n".join("".join(nodes[i:i + 10]) for i in range(0, len(nodes), 10))
    return header + body + ")\n"


def status_line(file_name: str, game: FinishedGame) -> str:
    plan = game.plan
    info = (
        f"seed={plan.seed} B={level_tag(plan.black_level)}/seed{plan.black_seed} "
        f"W={level_tag(plan.white_level)}/seed{plan.white_seed} "
        f"random_openings={plan.black_openings}+{plan.white_openings} "
        f"moves={len(game.moves)} "
        + (f"stop={plan.stop} " if plan.stop is not None else "")
        + f"score={game.score}"
    )
    dead = " ".join(game.dead) or "-"
    seki = " ".join(game.seki) or "-"
    return f"{file_name}\t{dead}\t{seki}\t{info}\n"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Play GNU Go against itself and record GNU Go's dead/seki verdict "
                    "on games finished by two passes.")
    parser.add_argument("--games", type=int, required=True,
                        help="number of finished games to keep")
    parser.add_argument("--out", type=Path, required=True,
                        help="directory for NNN.sgf and status.tsv")
    parser.add_argument("--start-seed", type=int, default=1,
                        help="seed of the first game; later games use the next seeds (default 1)")
    parser.add_argument("--gnugo", default=DEFAULT_GNUGO,
                        help=f"path to the gnugo binary (default {DEFAULT_GNUGO})")
    parser.add_argument("--board-size", type=int, default=9, help="board size (default 9)")
    parser.add_argument("--komi", type=float, default=7.0, help="komi (default 7)")
    parser.add_argument("--max-moves", type=int, default=300,
                        help="discard a game with no two passes after this many moves (default 300)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds to wait for any one GTP answer (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--stop-after", metavar="MIN-MAX",
                        help="stop each game early: once it has a number of moves drawn "
                             "between MIN and MAX, both sides pass")
    parser.add_argument("--player", choices=["gnugo", "ttakji"], default="gnugo",
                        help="who plays the games: GNU Go (default) or this project's "
                             "engine (--ttakji); GNU Go judges either way")
    parser.add_argument("--ttakji", default=DEFAULT_TTAKJI,
                        help="command line of this project's GTP engine, to which "
                             f"--level and --seed are added (default {DEFAULT_TTAKJI}; "
                             "'ttakji gtp' works too)")
    parser.add_argument("--append", action="store_true",
                        help="add to an existing status.tsv, numbering on from its last game")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    if not 2 <= args.board_size <= 19:
        parser.error(f"--board-size must be between 2 and 19, not {args.board_size}")
    resolved = shutil.which(args.gnugo)
    if resolved is None or not os.access(resolved, os.X_OK):
        parser.error(f"gnugo not found or not executable: {args.gnugo} "
                     "(install the Debian package 'gnugo' or pass --gnugo PATH)")
    args.gnugo = resolved
    if args.stop_after is not None:
        match = re.fullmatch(r"(\d+)-(\d+)", args.stop_after)
        if match is None or int(match[1]) > int(match[2]):
            parser.error(f"--stop-after must be MIN-MAX with MIN <= MAX, not {args.stop_after}")
        args.stop_after = (int(match[1]), int(match[2]))
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    # On SIGTERM, unwind normally so that every engine is told to quit or killed.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    args.out.mkdir(parents=True, exist_ok=True)
    status_path = args.out / "status.tsv"
    index = 0
    if status_path.exists() and status_path.stat().st_size > 0:
        if not args.append:
            print(f"error: {status_path} exists; use --append or another --out", file=sys.stderr)
            return 2
        with status_path.open() as existing:
            index = sum(1 for line in existing if line.strip() and not line.startswith("#"))
    else:
        status_path.write_text(STATUS_HEADER)

    seed = args.start_seed
    kept = discarded = engine_failures = 0
    while kept < args.games:
        plan = plan_game(seed, args.player, args.stop_after)
        started = time.monotonic()
        label = (f"seed {seed}: B {player_name(plan.black_level)} "
                 f"vs W {player_name(plan.white_level)}")
        try:
            game = play_game(args, plan)
            engine_failures = 0
        except (GameDiscarded, GtpError) as why:
            discarded += 1
            if isinstance(why, GtpError):
                engine_failures += 1
                if engine_failures >= 3:
                    raise
            print(f"{label}: discarded ({why}) [{time.monotonic() - started:.1f} s]", flush=True)
            seed += 1
            continue
        file_name = f"{index:03d}.sgf"
        (args.out / file_name).write_text(sgf_text(args, game))
        with status_path.open("a") as status:
            status.write(status_line(file_name, game))
        print(f"{label}: kept as {file_name}, {len(game.moves)} moves, "
              f"{len(game.dead)} dead, {len(game.seki)} seki, {game.score} "
              f"[{time.monotonic() - started:.1f} s]", flush=True)
        index += 1
        kept += 1
        seed += 1
    print(f"kept {kept} games, discarded {discarded}; next seed {seed}", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except GtpError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
