-- Ratings: owned by the ratings service.

-- A player's rating on one board size.
CREATE TABLE ratings (
    user_id    TEXT NOT NULL,
    board_size BIGINT NOT NULL,
    nickname   TEXT NOT NULL,
    rating     BIGINT NOT NULL,
    games      BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, board_size)
);

CREATE INDEX ratings_ladder ON ratings (board_size, rating DESC);

-- One row per player per ranked game: the key (game_id, user_id) is what
-- makes an update apply once, however often the game is delivered.
CREATE TABLE rating_changes (
    game_id           TEXT NOT NULL,
    user_id           TEXT NOT NULL,
    board_size        BIGINT NOT NULL,
    opponent_id       TEXT NOT NULL,
    opponent_nickname TEXT NOT NULL,
    rating_before     BIGINT NOT NULL,
    rating_after      BIGINT NOT NULL,
    score_half        BIGINT NOT NULL CHECK (score_half IN (0, 1, 2)),
    finished_at       BIGINT NOT NULL,
    applied_at        BIGINT NOT NULL,
    PRIMARY KEY (game_id, user_id)
);

CREATE INDEX rating_changes_by_user ON rating_changes (user_id, applied_at DESC);
