//go:build race

package client_test

// raceEnabled: the tests run with the race detector, and so does their
// server.
const raceEnabled = true
