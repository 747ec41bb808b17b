package admin

import (
	"context"
	"time"
)

// Cluster is what an operator sees of the nodes that serve a store (§11).
type Cluster interface {
	// Nodes lists the incarnations of the nodes serving the store, by node
	// id then incarnation: the live ones, the dead ones whose crash
	// recovery has not run, and those that stopped or were recovered
	// within the last hour. An embedded store lists at most one: the
	// engine of the process that holds its file.
	Nodes(ctx context.Context) ([]Node, error)
}

// Node is one incarnation of a node (§5: {id, address, started_at,
// heartbeat_at, alive, queues, in_flight}).
type Node struct {
	ID string `json:"id" yaml:"id"`
	// Incarnation numbers the starts of the cluster's nodes: a restarted
	// node keeps its id and gets a new incarnation.
	Incarnation uint64    `json:"incarnation" yaml:"incarnation"`
	Address     string    `json:"address" yaml:"address"`
	StartedAt   time.Time `json:"started_at" yaml:"started_at"`
	HeartbeatAt time.Time `json:"heartbeat_at" yaml:"heartbeat_at"`
	// Alive: the node's heartbeat is within cluster.lease_ttl, on the
	// store's clock, and it has neither stopped nor been declared dead.
	Alive bool `json:"alive" yaml:"alive"`
	// State is alive, stopped (it left cleanly), dead (its heartbeat
	// expired and its crash recovery has not run yet) or recovered (dead,
	// and the messages it had in flight recovered by another node).
	State string `json:"state" yaml:"state"`
	// Queues counts the queues whose unexpired lease the node holds.
	Queues int `json:"queues" yaml:"queues"`
	// InFlight counts the messages DLNG on the node at its last heartbeat.
	InFlight int `json:"in_flight" yaml:"in_flight"`
}
