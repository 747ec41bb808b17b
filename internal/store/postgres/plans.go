package postgres

// Plans that never depend on luck (§14). The engine's claims and outcomes
// run on connections of their own (Store.hot), whose sessions pin how the
// planner may run them:
//
//   - plan_cache_mode=force_generic_plan: a prepared statement is planned
//     once per connection, at its first execution, and never again — the
//     statements take arrays of ids, for which PostgreSQL would otherwise
//     plan anew at every execution;
//   - enable_seqscan, enable_bitmapscan, enable_hashjoin and
//     enable_mergejoin off: the plan made once must hold whatever the
//     tables held when it was made. A node plans its statements at its
//     first claim — typically on an empty table, or after an ANALYZE
//     taken while the backlog was small — and a planner that believes a
//     table tiny prefers to scan it whole, or to hash it, over the index
//     lookups that cost O(messages claimed) at any size. With those off,
//     the only plans left are the index runs and lookups the statements
//     are written for;
//   - jit off: the costs of the paths disabled above push every estimate
//     past the JIT thresholds, which would compile each execution.
//
// The statements are written so that one index serves each step: the
// queue's TBDL run of messages_ready in seq order, its due WAIT run of
// messages_due, each message locked by its primary key (the status checked
// on the row locked, not in the lookup, so that no partial index of the
// status looks like a way to find it). TestPlansDoNotDependOnTheStatistics
// plans them on an empty store, loads a backlog, and counts the buffers a
// claim, a batch of outcomes and an EOIO step touch.

// hotConns bounds the connections of the engine's claims and outcomes: the
// claim loop's, the completer's, and a few for stores shared by tests.
const hotConns = 4

// pinnedPlans are the session settings of the engine's connections.
var pinnedPlans = map[string]string{
	"plan_cache_mode":   "force_generic_plan",
	"enable_seqscan":    "off",
	"enable_bitmapscan": "off",
	"enable_hashjoin":   "off",
	"enable_mergejoin":  "off",
	"jit":               "off",
}

// pinPlans adds pinnedPlans to the run-time parameters of a connection,
// which it sends when it connects: no statement of its own.
func pinPlans(params map[string]string) {
	for k, v := range pinnedPlans {
		params[k] = v
	}
	params["application_name"] += " engine"
}
