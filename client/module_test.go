package client_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/client/internal/require"
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

// TestUsableFromAnotherModule adds the client to a program of another
// module as a producer would (go get, go mod tidy), offline, with this directory standing
// in for the module, then builds and vets the program, and checks what a
// producer gets: the go line of the oldest Go the client builds with left as
// it was, no other module in go.mod or go.sum, and nothing but the client
// and the standard library in the build.
func TestUsableFromAnotherModule(t *testing.T) {
	t.Parallel()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	here, err := filepath.Abs(".")
	require.NoError(t, err)
	clientMod, err := os.ReadFile(filepath.Join(here, "go.mod"))
	require.NoError(t, err)
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(clientMod)
	require.NotNil(t, goLine, "the client's go.mod has a go line")

	dir := t.TempDir()
	goMod := "module example.com/producer\n\n" + string(goLine) + "\n\n" +
		"replace github.com/queuectl/queuectl/client => " + here + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(producerProgram), 0o644))

	run := func(args ...string) string {
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	run("get", "github.com/queuectl/queuectl/client@v0.0.0")
	run("mod", "tidy")
	run("build", "-o", filepath.Join(dir, "producer"), ".")
	run("vet", ".")

	got, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	require.Equal(t, "module example.com/producer\n\n"+string(goLine)+"\n\n"+
		"replace github.com/queuectl/queuectl/client => "+here+"\n\n"+
		"require github.com/queuectl/queuectl/client v0.0.0\n", string(got),
		"go get adds the client and nothing else, and leaves the go line")
	sums, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if !os.IsNotExist(err) {
		require.NoError(t, err)
		require.Empty(t, strings.TrimSpace(string(sums)), "go.sum names no module")
	}
	deps := strings.Fields(run("list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "."))
	require.ElementsMatch(t, []string{"github.com/queuectl/queuectl/client", "example.com/producer"}, deps,
		"the client needs nothing but the standard library")
}
