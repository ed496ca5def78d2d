-- Every nickname an account has had, by its confusable skeleton (UTS #39,
-- of the lower-cased name): the account's name now and the names it
-- changed away from, which stay its own while the account exists, so that
-- no other player appears under a name from its games. One skeleton names
-- one account.
CREATE TABLE nicknames (
    skeleton TEXT PRIMARY KEY,
    user_id  TEXT NOT NULL,
    nickname TEXT NOT NULL,
    since    BIGINT NOT NULL
);
CREATE INDEX nicknames_by_user ON nicknames (user_id);

-- When the newest token issued for the account expires. A guest has no
-- way back in once it has: the account is removed.
ALTER TABLE accounts ADD COLUMN tokens_expire_at BIGINT NOT NULL DEFAULT 0;
UPDATE accounts SET tokens_expire_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + 2592000000;
CREATE INDEX accounts_guests_by_expiry ON accounts (tokens_expire_at) WHERE google_sub IS NULL;
