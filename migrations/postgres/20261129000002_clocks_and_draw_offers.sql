-- Online games: the move clock's deadline and a standing draw offer, kept
-- with the game so that an authority that takes it over enforces them.

-- When the side to move runs out of time, in milliseconds since the Unix
-- epoch; NULL for games without a clock and for finished games.
ALTER TABLE games ADD COLUMN deadline_at BIGINT;

-- 'B' or 'W' while that side's draw offer stands.
ALTER TABLE games ADD COLUMN draw_offered_by TEXT;

-- Ranked games change ratings; casual games and games against the computer
-- do not.
ALTER TABLE games ADD COLUMN ranked BOOLEAN NOT NULL DEFAULT FALSE;
