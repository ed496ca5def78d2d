-- Accounts: owned by the gateway. Guests have no Google subject; signed-in
-- players have one. Nicknames are unique without regard to case.
CREATE TABLE accounts (
    user_id      TEXT PRIMARY KEY,
    google_sub   TEXT UNIQUE,
    nickname     TEXT NOT NULL,
    nickname_key TEXT NOT NULL UNIQUE,
    created_at   BIGINT NOT NULL
);
