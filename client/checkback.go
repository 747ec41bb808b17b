package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"unicode/utf8"
)

// Check is the server's question about a prepared message that was neither
// committed nor rolled back in time: did the business transaction it
// belongs to commit? It carries no payload and no key: put what identifies
// your transaction (an order number) in the message's Headers.
type Check struct {
	// ID is the prepared message's id, as Prepare returned it.
	ID string
	// Sender is the prepared message's sender, as it was sent.
	Sender string
	// Interface is the prepared message's interface, as it was sent; empty
	// when it was sent without one.
	Interface string
	// Headers are the message's headers; empty, never nil, when it has
	// none.
	Headers map[string]string
}

// TxState is a producer's answer to a check.
type TxState string

const (
	// TxCommit: the business transaction committed; the server commits
	// the message and delivers it.
	TxCommit TxState = "commit"
	// TxRollback: it rolled back, and never will commit; the server
	// deletes the message.
	TxRollback TxState = "rollback"
	// TxUnknown: it cannot be told yet; the server asks again later, up to
	// its tx.max_checks, and then leaves the message to an operator.
	TxUnknown TxState = "unknown"
)

// CheckFunc decides a check from the producer's own records. An error means
// it could not look (its database is down, say): the server counts the check
// as unanswered, as for TxUnknown, and the error's text shows in the
// message's history.
type CheckFunc func(ctx context.Context, c Check) (TxState, error)

// maxCheck bounds the body of a check the handler reads: the engine's
// carries at most 64 headers of at most 1 KiB each.
const maxCheck = 1 << 20

// CheckHandler returns the handler of a sender's check_url, which answers
// the server's checks with decide. It takes the server's request only as
// the server makes it — a POST of application/json whose body is
// {"id", "sender", "interface", "headers"} and nothing else, with the id
// again in X-Queuectl-Message-Id — and refuses anything else (405, 415,
// 413 or 400), so a stray request can decide nothing. Its answer is
// {"state": "commit" | "rollback" | "unknown"}, or 503 when decide failed.
//
// The server sends no credentials of its own: serve the handler where only
// the server reaches it, or put a secret in the check_url (a path, or user
// and password that the handler's middleware checks).
func CheckHandler(decide CheckFunc) http.Handler {
	return checkHandler{decide: decide}
}

type checkHandler struct {
	decide CheckFunc
}

func (h checkHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "a check is a POST", http.StatusMethodNotAllowed)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "a check is application/json", http.StatusUnsupportedMediaType)
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCheck))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("a check is at most %d KiB", maxCheck>>10), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the check: "+err.Error(), http.StatusBadRequest)
		return
	}
	c, err := parseCheck(raw)
	if err == nil && r.Header.Get("X-Queuectl-Message-Id") != c.ID {
		err = fmt.Errorf("X-Queuectl-Message-Id %q is not the id %q of the body", r.Header.Get("X-Queuectl-Message-Id"), c.ID)
	}
	if err != nil {
		http.Error(w, "not a check: "+err.Error(), http.StatusBadRequest)
		return
	}
	state, err := h.decide(r.Context(), c)
	switch {
	case err != nil:
		http.Error(w, fmt.Sprintf("check of message %s: %v", c.ID, err), http.StatusServiceUnavailable)
		return
	case state != TxCommit && state != TxRollback && state != TxUnknown:
		http.Error(w, fmt.Sprintf("check of message %s: the producer decided %q, not commit, rollback or unknown", c.ID, state),
			http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, "{\"state\":%q}\n", state)
}

// checkFields are the fields of a check's body, all of them required.
var checkFields = []string{"headers", "id", "interface", "sender"}

// parseCheck reads a check's body strictly: one JSON object of UTF-8 text
// with exactly the fields the server sends, spelled so, of their types.
func parseCheck(raw []byte) (Check, error) {
	var c Check
	if !utf8.Valid(raw) {
		return c, errors.New("the body is not UTF-8")
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return c, errors.New(`the body is not a JSON object {"id", "sender", "interface", "headers"}`)
	}
	if _, err := dec.Token(); err != io.EOF {
		return c, errors.New("the body goes on after its object")
	}
	if got := slices.Sorted(maps.Keys(fields)); !slices.Equal(got, checkFields) {
		return c, fmt.Errorf("the body has the fields %q; a check has %q", got, checkFields)
	}
	for name, dst := range map[string]any{"id": &c.ID, "sender": &c.Sender, "interface": &c.Interface, "headers": &c.Headers} {
		if bytes.Equal(fields[name], []byte("null")) {
			return c, fmt.Errorf("%s is null", name)
		}
		if err := json.Unmarshal(fields[name], dst); err != nil {
			return c, fmt.Errorf("%s: %v", name, err)
		}
	}
	if !isUUID(c.ID) {
		return c, fmt.Errorf("id %q is not a message id", c.ID)
	}
	if c.Sender == "" {
		return c, errors.New("sender is empty")
	}
	return c, nil
}

// isUUID reports whether s has the form of a message id: a UUID in its
// 36-character text form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
				return false
			}
		}
	}
	return true
}
