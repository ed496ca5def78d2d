-- How many players are on a board size's ladder, counted from this index
-- alone: every leaderboard page read from Redis checks the set's length
-- against it, and a count through ratings_ladder looked up every row.
CREATE INDEX ratings_rated ON ratings (board_size) WHERE games > 0;
