-- House rules a table's host chose (seed 001): whether a rematch keeps the
-- colours instead of swapping who plays Black. Board size, komi, scoring
-- (by the ruleset) and the move time already have columns.
ALTER TABLE games ADD COLUMN keep_colors BOOLEAN NOT NULL DEFAULT FALSE;
