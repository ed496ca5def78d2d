-- Games, their moves and their events: owned by the game authority.

CREATE TABLE games (
    id               TEXT PRIMARY KEY,
    board_size       INTEGER NOT NULL,
    ruleset          TEXT NOT NULL,
    komi_half        INTEGER NOT NULL,
    black_user_id    TEXT,
    black_name       TEXT NOT NULL,
    black_ai_level   TEXT,
    white_user_id    TEXT,
    white_name       TEXT NOT NULL,
    white_ai_level   TEXT,
    seconds_per_move INTEGER NOT NULL DEFAULT 0,
    status           TEXT NOT NULL CHECK (status IN ('playing', 'finished')),
    end_reason       TEXT,
    result           TEXT,
    black_points     INTEGER,
    white_points     INTEGER,
    dead_stones      TEXT,
    sgf              TEXT,
    created_at       INTEGER NOT NULL,
    finished_at      INTEGER
);

CREATE INDEX games_playing ON games (status);

-- One row per move on the board now; an undo deletes the moves it takes
-- back. (game_id, number) is the key a retried request is checked against.
CREATE TABLE moves (
    game_id   TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    number    INTEGER NOT NULL CHECK (number > 0),
    color     TEXT NOT NULL CHECK (color IN ('B', 'W')),
    point     TEXT,
    played_at INTEGER NOT NULL,
    PRIMARY KEY (game_id, number)
);

-- Every event of a game, numbered 1, 2, 3, … without gaps: a client that
-- reconnects gets the ones after the last it saw.
CREATE TABLE game_events (
    game_id    TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq > 0),
    payload    BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (game_id, seq)
);
