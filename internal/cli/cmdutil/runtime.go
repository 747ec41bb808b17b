package cmdutil

import (
	"os"
	"runtime/debug"
)

// engineGCPercent is the garbage collector's target for a process that runs
// the engine.
const engineGCPercent = 400

// TuneForEngine sets up the Go runtime of a process that runs the engine
// (serve, bench): its heap stays small while it allocates fast, so a
// garbage collection every time the heap grows by 400% instead of 100%
// costs little memory and saves a fifth of the CPU per message. An
// operator's own GOGC wins.
func TuneForEngine() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(engineGCPercent)
	}
}
