-- +goose Up

-- The cluster's liveness and lease handover (§11).

-- A node is alive until expires_at: each heartbeat sets it to the
-- database's time plus cluster.lease_ttl. An incarnation whose expires_at
-- passed, that neither left nor was recovered, is dead: its queues may be
-- taken over and its DLNG messages recovered. A restarted node's Join sets
-- its predecessors' expires_at to the time of the Join.
ALTER TABLE nodes ADD COLUMN expires_at timestamptz NOT NULL DEFAULT now() + interval '10 seconds';

-- Every queue has a lease row from its creation on. A lease is held while
-- its expires_at lies ahead and its incarnation is alive; a node that takes
-- a queue sets it to 'infinity', one that gives a queue up — over its fair
-- share, leaving, or a restart's predecessor — to '-infinity', so that any
-- node may take it at once, with the epoch incremented.
INSERT INTO leases (queue, node, incarnation, epoch, expires_at)
    SELECT name, '', 0, 0, '-infinity' FROM queues ON CONFLICT (queue) DO NOTHING;
-- Claims and outcomes hold the rows of their queues' leases FOR SHARE until
-- they commit, so that no lease changes hands under them; taking a lease or
-- giving it up locks its row FOR UPDATE SKIP LOCKED, never waiting for a
-- claim. A writer that holds queue rows takes lease rows only FOR SHARE.
--
-- The queues free to take.
CREATE INDEX leases_expires ON leases (expires_at);
