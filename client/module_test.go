package client_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// producerProgram is a producer of another module that uses the client.
const producerProgram = `package main

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"

	"github.com/queuectl/queuectl/client"
)

func main() {
	c, err := client.New(os.Getenv("QUEUECTL_SERVER"), client.WithToken(os.Getenv("QUEUECTL_TOKEN")),
		client.WithRetry(client.RetryPolicy{MaxAttempts: 2}))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	sent, err := c.Send(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}, Key: client.NewKey()})
	var apiErr *client.APIError
	switch {
	case errors.Is(err, client.ErrConflict), errors.As(err, &apiErr):
		log.Fatal(err)
	case err != nil:
		log.Fatal(err)
	}
	log.Println(sent.ID, sent.Duplicate)
	http.Handle("/tx-check", client.CheckHandler(func(context.Context, client.Check) (client.TxState, error) {
		return client.TxUnknown, nil
	}))
}
`

// TestUsableFromAnotherModule builds and vets a program of another module
// that imports the client, as a producer's would after go get — offline,
// from the module cache, with this repository standing in for the module —
// and checks that the client brings no package of this module's but itself,
// and nothing outside the standard library, into a producer's build.
func TestUsableFromAnotherModule(t *testing.T) {
	t.Parallel()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	dir := t.TempDir()
	goMod := "module example.com/producer\n\ngo 1.26\n\nrequire github.com/queuectl/queuectl v0.0.0\n\n" +
		"replace github.com/queuectl/queuectl => " + repo + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(producerProgram), 0o644))
	// The checksums of the modules the client's module requires.
	sums, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644))

	run := func(args ...string) string {
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	run("build", "-o", filepath.Join(dir, "producer"), ".")
	run("vet", ".")
	deps := strings.Fields(run("list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "."))
	require.ElementsMatch(t, []string{"github.com/queuectl/queuectl/client", "example.com/producer"}, deps,
		"the client needs nothing but the standard library")
}
