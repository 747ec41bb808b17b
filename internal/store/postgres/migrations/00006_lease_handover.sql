-- +goose Up

-- Balancing by work (§11): a node over its share of the queues with work
-- hands its surplus over in two phases. First it marks the lease
-- releasing: its claims take nothing new from the queue, while what it has
-- DLNG there is recorded under the lease's epoch as before. Then, at a
-- later heartbeat, once it has nothing of the queue DLNG, it frees the
-- lease, and another node takes it with a new epoch.
ALTER TABLE leases ADD COLUMN releasing boolean NOT NULL DEFAULT false;
