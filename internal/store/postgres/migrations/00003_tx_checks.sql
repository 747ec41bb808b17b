-- +goose Up

-- The check-back of transactional sends (§9). The engine asks the producer
-- of a PEND message what became of its transaction: checks counts the
-- checks, last_check_at is when the latest began (a claim sets it, so that
-- no node checks the message again within tx.check_interval), last_answer
-- is what the producer answered or why there was no answer, and stuck marks
-- a message the engine gave up on: it waits for an operator.
ALTER TABLE messages
    ADD COLUMN checks        integer NOT NULL DEFAULT 0,
    ADD COLUMN last_check_at timestamptz,
    ADD COLUMN last_answer   text,
    ADD COLUMN stuck         boolean NOT NULL DEFAULT false;

-- What a claim of check-backs reads: the PEND messages that wait for their
-- first check by when they were prepared, and the others by their last
-- check, so that a claim reads only those that are due.
CREATE INDEX messages_check_first ON messages (created_at)
    WHERE status = 'PEND' AND NOT stuck AND last_check_at IS NULL;
CREATE INDEX messages_check_next ON messages (last_check_at)
    WHERE status = 'PEND' AND NOT stuck AND last_check_at IS NOT NULL;

-- The stuck PEND messages of a queue, kept like the other counters
-- (domain.CountsStuck); part of n_pend.
ALTER TABLE queues ADD COLUMN n_stuck bigint NOT NULL DEFAULT 0;
