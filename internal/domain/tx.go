package domain

// The answers a producer gives when the engine checks back on a prepared
// message (§9): the body {"state": "commit" | "rollback" | "unknown"}.
const (
	AnswerCommit   = "commit"
	AnswerRollback = "rollback"
	AnswerUnknown  = "unknown"
)

// CountsStuck reports whether m counts as a stuck transaction: a prepared
// (PEND) message whose producer the check-back gave up on (§9). Queue
// counters, lists and filters all ask it, so that they agree.
func CountsStuck(m *Message) bool {
	return m.Status == StatusPEND && m.Stuck
}
