package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdHTTPPost posts the JSON body in FILE to URL and prints the answer's
// status line, "HTTP 201", then its body, so that a script can check a
// request the CLI does not make as it is (a header of its own): httppost
// [-token FILE] [-header 'NAME: VALUE']... URL FILE.
func cmdHTTPPost(ts *testscript.TestScript, neg bool, args []string) {
	usage := func() { ts.Fatalf("usage: httppost [-token FILE] [-header 'NAME: VALUE']... URL FILE") }
	if neg {
		usage()
	}
	header := http.Header{"Content-Type": {"application/json"}}
	for len(args) > 2 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-token":
			header.Set("Authorization", "Bearer "+strings.TrimSpace(ts.ReadFile(args[1])))
		case "-header":
			name, value, ok := strings.Cut(args[1], ":")
			if !ok {
				usage()
			}
			header.Add(name, strings.TrimSpace(value))
		default:
			usage()
		}
		args = args[2:]
	}
	if len(args) != 2 {
		usage()
	}
	req, err := http.NewRequest(http.MethodPost, args[0], bytes.NewReader([]byte(ts.ReadFile(args[1]))))
	ts.Check(err)
	req.Header = header
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ts.Check(err)
	_, err = fmt.Fprintf(ts.Stdout(), "HTTP %d\n%s", resp.StatusCode, body)
	ts.Check(err)
}
