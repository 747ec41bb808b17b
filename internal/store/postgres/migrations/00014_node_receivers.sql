-- +goose Up

-- The receivers a node has configured (§8), published when it joins: a
-- node holds only the outbound queues of its receivers, and a queue whose
-- receiver no live node has shows UNCONFIGURED. NULL: the node published
-- none (it runs a version before this column) and claims for every
-- receiver.
ALTER TABLE nodes ADD COLUMN receivers text[];
