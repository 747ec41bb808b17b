-- +goose Up

-- A producer's idempotency key (§2), unique per sender: a send that repeats
-- it stores nothing new. The index is the uniqueness, and message list
-- --key reads its run of one key.
ALTER TABLE messages ADD COLUMN key text;
CREATE UNIQUE INDEX messages_key ON messages (key, sender) WHERE key IS NOT NULL;
