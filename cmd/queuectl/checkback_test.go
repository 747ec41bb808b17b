package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdCheckBack starts a producer's check-back endpoint (§9) in the test
// process for the rest of the script and sets NAME to its URL. It answers a
// check of a message by the message's X-Order header, as FILE says — lines
// of "ORDER STATE" — and {"state":"unknown"} for orders FILE does not name:
// checkback NAME FILE.
func cmdCheckBack(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: checkback NAME FILE")
	}
	answers := map[string]string{}
	for _, line := range strings.Split(ts.ReadFile(args[1]), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			answers[f[0]] = f[1]
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID      string            `json:"id"`
			Headers map[string]string `json:"headers"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.ID == "" {
			http.Error(w, "not a check-back", http.StatusBadRequest)
			return
		}
		state, ok := answers[req.Headers["X-Order"]]
		if !ok {
			state = "unknown"
		}
		fmt.Fprintf(w, `{"state":%q}`, state)
	}))
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL+"/tx-check")
}
