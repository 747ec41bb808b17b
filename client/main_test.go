package client_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/queuectl/queuectl/internal/cli"
)

// TestMain starts the server the examples send to, and names it to them
// as a producer's program would find it: QUEUECTL_SERVER and
// QUEUECTL_TOKEN, the variables the command line reads too.
//
// With serveEnv set, the test binary is queuectl itself, for the servers
// the tests start.
func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		os.Exit(cli.Main())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	s, err := startServe(serveOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the examples' server:", err)
		return 1
	}
	os.Setenv("QUEUECTL_SERVER", s.url)
	os.Setenv("QUEUECTL_TOKEN", producerToken)
	code := m.Run()
	if err := s.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the examples' server:", err)
		return 1
	}
	return code
}
