-- Games, their moves and their events: owned by the game authority.

CREATE TABLE games (
    id               TEXT PRIMARY KEY,
    board_size       BIGINT NOT NULL,
    ruleset          TEXT NOT NULL,
    komi_half        BIGINT NOT NULL,
    black_user_id    TEXT,
    black_name       TEXT NOT NULL,
    black_ai_level   TEXT,
    white_user_id    TEXT,
    white_name       TEXT NOT NULL,
    white_ai_level   TEXT,
    seconds_per_move BIGINT NOT NULL DEFAULT 0,
    status           TEXT NOT NULL CHECK (status IN ('playing', 'finished')),
    end_reason       TEXT,
    result           TEXT,
    black_points     BIGINT,
    white_points     BIGINT,
    dead_stones      TEXT,
    sgf              TEXT,
    created_at       BIGINT NOT NULL,
    finished_at      BIGINT
);

CREATE INDEX games_playing ON games (status) WHERE status = 'playing';

-- One row per move on the board now; an undo deletes the moves it takes
-- back. (game_id, number) is the key a retried request is checked against.
CREATE TABLE moves (
    game_id   TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    number    BIGINT NOT NULL CHECK (number > 0),
    color     TEXT NOT NULL CHECK (color IN ('B', 'W')),
    point     TEXT,
    played_at BIGINT NOT NULL,
    PRIMARY KEY (game_id, number)
);

-- Every event of a game, numbered 1, 2, 3, … without gaps: a client that
-- reconnects gets the ones after the last it saw.
CREATE TABLE game_events (
    game_id    TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seq        BIGINT NOT NULL CHECK (seq > 0),
    payload    BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (game_id, seq)
);
