-- A territory game's count while its players agree on the dead stones
-- (seed 001): `<version>|<colours that confirmed>|<points marked dead>`,
-- NULL when no count is open. And the move counts after which play went
-- back on past two passes, so a game is replayed as it was played.
ALTER TABLE games ADD COLUMN counting TEXT;
ALTER TABLE games ADD COLUMN resumed_after TEXT NOT NULL DEFAULT '';
