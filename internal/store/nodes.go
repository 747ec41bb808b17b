package store

import (
	"context"
	"slices"
	"time"
)

// NodeLister lists the nodes that serve a store (`node list`, §11). Both
// stores implement it: PostgreSQL from its nodes and leases rows, on the
// database clock; the embedded store from the one process that holds its
// file, when an engine in that process joined.
type NodeLister interface {
	// Nodes returns one entry per incarnation that is alive, or dead and
	// not yet recovered, or that left or died within p.Keep; ordered by
	// node id, then incarnation.
	Nodes(ctx context.Context, p NodesParams) ([]NodeInfo, error)
}

// NodesParams select the incarnations Nodes lists.
type NodesParams struct {
	// TTL is cluster.lease_ttl: a node whose heartbeat is older is dead.
	TTL time.Duration
	// Keep is how long a dead or stopped incarnation stays listed after
	// its last heartbeat, once nothing is left to recover from it.
	Keep time.Duration
}

// The states of a node's incarnation (NodeInfo.State).
const (
	NodeAlive     = "alive"
	NodeStopped   = "stopped"
	NodeDead      = "dead"
	NodeRecovered = "recovered"
)

// NodeInfo is one incarnation of a node as the store knows it.
type NodeInfo struct {
	ID          string
	Incarnation uint64
	// Address is where the node serves its API (JoinParams.Address).
	Address     string
	StartedAt   time.Time
	HeartbeatAt time.Time
	// Alive is true while the incarnation neither left nor was declared
	// dead and its heartbeat is within the TTL.
	Alive bool
	// State says more than Alive: NodeAlive, NodeStopped (it left
	// cleanly), NodeDead (its heartbeat expired; crash recovery is still to
	// run) or NodeRecovered (dead, and its in-flight messages recovered).
	State string
	// Queues counts the unexpired leases the incarnation holds.
	Queues int
	// InFlight is the DLNG count of its last heartbeat.
	InFlight int
	// Receivers are the receivers the incarnation has configured
	// (JoinParams.Receivers), in name order; nil when it published none —
	// a node of a version before receivers were published, which claims
	// for every receiver.
	Receivers []string
}

// ReceiverList is a node's receivers as its node record keeps them: sorted,
// once each, and an empty list — never nil, which says "not published" —
// for a node with none.
func ReceiverList(receivers []string) []string {
	out := append([]string{}, receivers...)
	slices.Sort(out)
	return slices.Compact(out)
}
