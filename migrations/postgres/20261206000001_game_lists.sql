-- Lists of games read from their rows alone (ListMyGames, ListLiveGames,
-- the ratings' reconciliation): how many moves a game has, and the ladder
-- rating it was paired at, kept on the row.
ALTER TABLE games ADD COLUMN move_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN ladder_rating BIGINT NOT NULL DEFAULT 0;
UPDATE games SET move_count = (SELECT COUNT(*) FROM moves WHERE moves.game_id = games.id);
-- A player's games, newest first, from either seat.
CREATE INDEX games_by_black ON games (black_user_id, created_at DESC, id DESC);
CREATE INDEX games_by_white ON games (white_user_id, created_at DESC, id DESC);
-- Live games between people, the strongest first, then the newest. The
-- status leads, so SQLite's planner takes this index, in its order, over
-- games_playing and a sort.
CREATE INDEX games_live ON games (status, ladder_rating DESC, created_at DESC, id DESC)
    WHERE status = 'playing' AND black_ai_level IS NULL AND white_ai_level IS NULL;
CREATE INDEX games_live_by_size ON games (board_size, ladder_rating DESC, created_at DESC, id DESC)
    WHERE status = 'playing' AND black_ai_level IS NULL AND white_ai_level IS NULL;
-- Finished games in the order they ended (the ratings' reconciliation).
CREATE INDEX games_finished ON games (finished_at, id) WHERE status = 'finished';
