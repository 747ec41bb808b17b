-- +goose Up

-- The crashes a recovery counted (§4: a node that comes back did not die):
-- one row per message and dead incarnation, written in the recovery's
-- transaction. When the dead incarnation's process joins again — it was
-- paused, not dead — its recovery of that incarnation takes them back and
-- deletes the rows; when another incarnation of the node's id joins, the
-- process died and its crashes stand: the join deletes them.
CREATE TABLE counted_crashes (
    incarnation bigint NOT NULL,
    message     uuid NOT NULL,
    -- the message's crashes after the recovery counted this one
    crash       integer NOT NULL,
    -- the recovery's time, that of its history entry
    counted_at  timestamptz NOT NULL,
    PRIMARY KEY (incarnation, message)
);
