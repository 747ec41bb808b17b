//go:build !race

package main

// raceEnabled says the test binary, and so every queuectl process the tests
// start, runs under the race detector, which costs memory of its own.
const raceEnabled = false
