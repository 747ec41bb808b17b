-- +goose Up

-- A node survives a database outage (§11): an incarnation whose heartbeat
-- is overdue may revive with its next heartbeat, unless another node
-- declared it dead first. fenced_at says one did — took one of its
-- queues as a dead node's, or a later incarnation of its id superseded it
-- — after which it never revives and waits for its crash recovery.
ALTER TABLE nodes ADD COLUMN fenced_at timestamptz;
-- The last revival of an incarnation, and its last heartbeat before it:
-- the window in which it could not reach the database. A node whose
-- heartbeat lapsed in that window is not declared dead by this one until
-- it had a TTL to come back, and its recovery by this one counts no crash.
ALTER TABLE nodes ADD COLUMN revived_at timestamptz;
ALTER TABLE nodes ADD COLUMN gap_from timestamptz;
-- cluster.heartbeat of the incarnation: how long another process with the
-- same node id watches it for a heartbeat before it takes its place.
ALTER TABLE nodes ADD COLUMN heartbeat_every interval NOT NULL DEFAULT interval '1 second';
