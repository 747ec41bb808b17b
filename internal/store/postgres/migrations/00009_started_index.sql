-- +goose Up

-- messages_open indexed every open message of a queue in order, TBDL ones
-- too, which messages_ready indexes already: a message sent, routed and
-- delivered paid two index entries for nothing. The open messages are now
-- the TBDL run of messages_ready and the run of the others
-- (messages_started), merged by the queries that need both (queues.go,
-- openRuns).
DROP INDEX messages_open;
CREATE INDEX messages_started ON messages (queue, seq) WHERE status IN ('DLNG', 'WAIT', 'HOLD', 'NDLV');
