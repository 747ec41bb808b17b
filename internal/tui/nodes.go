package tui

// nodesLines is the Nodes view. There is no cluster yet: it shows the one
// node this TUI talks to and says where cluster nodes will come from.
func nodesLines(node string) []string {
	return []string{
		"NODE",
		"  " + node,
		"",
		"Cluster nodes (id, address, heartbeat, queues owned, in-flight) arrive with the PostgreSQL store (§11);",
		"a bbolt store has exactly one node: the process that holds it.",
	}
}
