package engine

// SetBeforeCall has each worker of e call f between its wait for a fresh
// lease and the last check before the receiver call; set before Run.
func SetBeforeCall(e *Engine, f func()) { e.beforeCall = f }
