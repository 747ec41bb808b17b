package client_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// serverBinary is the queuectl the tests run as their server: the
// repository's internal/clientserver, which TestMain builds. The client's
// module requires no other module, so its tests cannot link queuectl in.
var serverBinary string

// errNoRepository: the client's tests run outside the queuectl repository
// (from a module cache), where there is no server to build.
var errNoRepository = errors.New("the client is not in the queuectl repository (../go.mod is not github.com/queuectl/queuectl's)")

// TestMain builds the server, starts the one the examples send to, and
// names it to them as a producer's program would find it: QUEUECTL_SERVER
// and QUEUECTL_TOKEN, the variables the command line reads too.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "queuectl-client-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverBinary, err = buildServer(dir)
	if errors.Is(err, errNoRepository) {
		fmt.Fprintln(os.Stderr, "skipping the client's tests:", err)
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the tests' server:", err)
		return 1
	}
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

// buildServer builds internal/clientserver of the repository the client
// is in, into dir, with the race detector when the tests have it.
func buildServer(dir string) (string, error) {
	repo, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	mod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/queuectl/queuectl\n") {
		return "", errNoRepository
	}
	bin := filepath.Join(dir, "queuectl")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./internal/clientserver")...)
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s (in %s): %w\n%s", strings.Join(cmd.Args[1:], " "), repo, err, out)
	}
	return bin, nil
}

// pgURL returns the URL of a new, empty PostgreSQL schema for t in the
// database of QUEUECTL_TEST_PG_URL, dropped when t ends; without that
// variable, t is skipped.
func pgURL(t *testing.T) string {
	t.Helper()
	base := os.Getenv("QUEUECTL_TEST_PG_URL")
	if base == "" {
		t.Skip("QUEUECTL_TEST_PG_URL is not set: skipping the tests that need PostgreSQL " +
			"(set it to a database URL, e.g. postgres://postgres@127.0.0.1:5432/queuectl_test?sslmode=disable)")
	}
	out, err := exec.Command(serverBinary, "pg-schema", base).Output()
	if err != nil {
		t.Fatalf("creating a schema in %s: %v\n%s", base, err, stderrOf(err))
	}
	u := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command(serverBinary, "pg-drop", u).CombinedOutput(); err != nil {
			t.Errorf("dropping the schema of %s: %v\n%s", u, err, out)
		}
	})
	return u
}

func stderrOf(err error) []byte {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.Stderr
	}
	return nil
}
