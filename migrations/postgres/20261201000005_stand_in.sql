-- The computer stands in for a player who is away (seed 001, "If someone
-- drops mid-game"): whether the table allows it, since when each player
-- has been away (`B:<unix ms>,W:<unix ms>`, empty when both are here), the
-- seats the computer plays now (`B`, `W`, `BW` or empty), and which moves
-- it played for an absent player.
ALTER TABLE games ADD COLUMN stand_in BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE games ADD COLUMN away TEXT NOT NULL DEFAULT '';
ALTER TABLE games ADD COLUMN stand_ins TEXT NOT NULL DEFAULT '';
ALTER TABLE moves ADD COLUMN by_stand_in BOOLEAN NOT NULL DEFAULT FALSE;
