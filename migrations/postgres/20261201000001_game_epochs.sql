-- The fence that keeps one writer per game: an authority that takes a game
-- over raises its epoch in a transaction, and every write of a move, an
-- event or a result names the epoch its writer holds, so a write from an
-- instance that lost the game changes nothing.
ALTER TABLE games ADD COLUMN epoch BIGINT NOT NULL DEFAULT 1;
