-- Where the computer thinks in a game against it: `server` (the authority)
-- or `client` (the player's page or app, which submits the computer's
-- moves). Games from before the choice thought on the server.
ALTER TABLE games ADD COLUMN ai_engine TEXT NOT NULL DEFAULT 'server';
-- A player's live games whose computer thinks on the server, counted
-- against the per-player limit when another is started: one index per
-- colour the player can have, holding only such games.
CREATE INDEX games_server_ai_black ON games (black_user_id)
    WHERE status = 'playing' AND ai_engine = 'server' AND white_ai_level IS NOT NULL;
CREATE INDEX games_server_ai_white ON games (white_user_id)
    WHERE status = 'playing' AND ai_engine = 'server' AND black_ai_level IS NOT NULL;
