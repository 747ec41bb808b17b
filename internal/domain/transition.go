package domain

// Transition is one allowed status change, and who may make it.
type Transition struct {
	From, To Status
	By       Actor
	Why      string
}

// Transitions is the complete transition table of §4. Anything not listed is
// refused. PEND→deleted (rollback) is a deletion, not a status change, and is
// handled by the store's delete operation.
var Transitions = []Transition{
	{StatusPEND, StatusTBDL, ByEngine, "transactional commit"},
	{StatusTBDL, StatusDLNG, ByEngine, "delivery starts"},
	{StatusDLNG, StatusDLVD, ByEngine, "delivered"},
	{StatusDLNG, StatusWAIT, ByEngine, "transient error, attempts left"},
	{StatusWAIT, StatusDLNG, ByEngine, "retry due"},
	{StatusDLNG, StatusNDLV, ByEngine, "permanent error, attempts exhausted, or blacklisted"},
	{StatusDLNG, StatusTBDL, ByEngine, "crash recovery below the blacklisting threshold"},
	{StatusHOLD, StatusTBDL, ByEngine, "the blocking head was delivered, failed or resent"},
	{StatusTBDL, StatusHOLD, ByEngine, "the EOIO queue's head is blocked"},
	{StatusNDLV, StatusTBDL, ByOperator, "resend or release"},
	{StatusNDLV, StatusFAIL, ByOperator, "fail"},
	{StatusWAIT, StatusTBDL, ByOperator, "retry now"},
	{StatusWAIT, StatusFAIL, ByOperator, "fail"},
	{StatusHOLD, StatusFAIL, ByOperator, "fail"},
	{StatusPEND, StatusTBDL, ByOperator, "transactional commit"},
}

// Allowed reports whether by may move a message from one status to another.
func Allowed(from, to Status, by Actor) bool {
	for _, t := range Transitions {
		if t.From == from && t.To == to && t.By == by {
			return true
		}
	}
	return false
}

// Sources returns the statuses from which by may move a message to `to`, in
// the order of Statuses. An action's error message names them.
func Sources(to Status, by Actor) []Status {
	var out []Status
	for _, s := range Statuses {
		if Allowed(s, to, by) {
			out = append(out, s)
		}
	}
	return out
}
