package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The commands of this file let scripts run `queuectl serve` on TCP and
// talk to it: pick a port, wait until the server answers, and write files
// that name the port.

// cmdFreePort sets an environment variable to a TCP port on 127.0.0.1
// that was free a moment ago, for serve --listen: freeport NAME.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport NAME")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := l.Addr().(*net.TCPAddr).Port
	ts.Check(l.Close())
	ts.Setenv(args[0], strconv.Itoa(port))
}

// cmdWaitHTTP waits until a GET of URL answers 200 and, with -match, its
// body matches the regular expression RE; then it prints the body, so that
// stdout can check it. With -cacert, https trusts the certificate in FILE.
// It fails after TIMEOUT (default 30s). A server starting in the
// background, or counting what it did, gives no other sign, so this polls,
// every 10ms: waithttp [-cacert FILE] [-token FILE] [-match RE] URL [TIMEOUT].
// With -token, the request carries the bearer token in FILE.
func cmdWaitHTTP(ts *testscript.TestScript, neg bool, args []string) {
	usage := func() { ts.Fatalf("usage: waithttp [-cacert FILE] [-token FILE] [-match RE] URL [TIMEOUT]") }
	if neg {
		usage()
	}
	tr := &http.Transport{DisableKeepAlives: true}
	var match *regexp.Regexp
	token := ""
	for len(args) > 1 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-token":
			token = strings.TrimSpace(ts.ReadFile(args[1]))
		case "-cacert":
			roots := x509.NewCertPool()
			if !roots.AppendCertsFromPEM([]byte(ts.ReadFile(args[1]))) {
				ts.Fatalf("waithttp: %s holds no PEM certificate", args[1])
			}
			tr.TLSClientConfig = &tls.Config{RootCAs: roots}
		case "-match":
			var err error
			if match, err = regexp.Compile("(?m)" + args[1]); err != nil {
				ts.Fatalf("waithttp: -match: %v", err)
			}
		default:
			usage()
		}
		args = args[2:]
	}
	if len(args) < 1 || len(args) > 2 {
		usage()
	}
	timeout := 30 * time.Second
	if len(args) == 2 {
		var err error
		if timeout, err = time.ParseDuration(args[1]); err != nil {
			ts.Fatalf("waithttp: TIMEOUT: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client := &http.Client{Transport: tr}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		body, err := get(ctx, client, args[0], token)
		if err == nil && match != nil && !match.Match(body) {
			err = fmt.Errorf("the body does not match %s:\n%s", match, body)
		}
		if err == nil {
			_, err = ts.Stdout().Write(body)
			ts.Check(err)
			return
		}
		last = err
		select {
		case <-tick.C:
		case <-ctx.Done():
			ts.Fatalf("waithttp: %s did not answer as asked within %s: %v", args[0], timeout, last)
		}
	}
}

func get(ctx context.Context, client *http.Client, url, token string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(resp.Status + ": " + strings.TrimSpace(string(body)))
	}
	return body, nil
}

// cmdEnvSubst writes IN to OUT with $NAME and ${NAME} replaced by the
// script's environment, for config files that name a port or a path of
// the script: envsubst IN OUT.
func cmdEnvSubst(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envsubst IN OUT")
	}
	in := ts.ReadFile(args[0])
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(os.Expand(in, ts.Getenv)), 0o600))
}

// cmdReplace writes IN to OUT with every OLD replaced by NEW, and fails
// when IN holds no OLD: replace IN OLD NEW OUT. A script derives what a
// served store answers from what the same store answered embedded.
func cmdReplace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: replace IN OLD NEW OUT")
	}
	in := ts.ReadFile(args[0])
	if !strings.Contains(in, args[1]) {
		ts.Fatalf("replace: %s holds no %q", args[0], args[1])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[3]), []byte(strings.ReplaceAll(in, args[1], args[2])), 0o600))
}

// cmdStderrToEnv sets an environment variable to what the last command
// wrote to stderr, without the final newline: stderr2env NAME.
func cmdStderrToEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: stderr2env NAME")
	}
	ts.Setenv(args[0], strings.TrimSuffix(ts.ReadFile("stderr"), "\n"))
}
