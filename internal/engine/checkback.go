package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// maxAnswer bounds the body of a check-back's answer that the engine reads:
// {"state":"commit"} needs a few bytes; more is not an answer.
const maxAnswer = 64 << 10

// What last_answer shows when the producer gave no answer (§9).
const (
	answerTimeout     = "timeout"
	answerUnreachable = "unreachable"
	answerInvalid     = "invalid answer"
	answerNoCheckURL  = "no check_url"
)

// checkRequest is the body of a check-back (§9).
type checkRequest struct {
	ID        string            `json:"id"`
	Sender    string            `json:"sender"`
	Interface string            `json:"interface"`
	Headers   map[string]string `json:"headers"`
}

// ask checks back with the producer of a claimed PEND message: it POSTs the
// message's id, sender, interface and headers to the sender's check_url
// and turns the answer into the outcome to record. {"state":"commit"} and
// {"state":"rollback"} decide; "unknown", an error, a timeout or anything
// that is not such an answer count as unanswered. A sender without a
// check_url cannot be asked at all: the message is given up on at once.
func (c *checker) ask(ctx context.Context, m *domain.Message) store.CheckOutcome {
	o := store.CheckOutcome{ID: m.ID, Kind: store.CheckUnanswered}
	if m.LastCheckAt != nil {
		o.CheckedAt = *m.LastCheckAt
	}
	target, ok := c.cfg.CheckURLs[m.Sender]
	if !ok || target == "" {
		o.Answer, o.GiveUp = answerNoCheckURL, true
		o.Detail = fmt.Sprintf("sender %s has no senders.%s.check_url, so nobody can be asked", m.Sender, m.Sender)
		return o
	}
	where := "POST " + config.RedactURL(target)
	body, err := json.Marshal(checkRequest{ID: m.ID, Sender: m.Sender, Interface: m.Interface, Headers: headersOf(m)})
	if err != nil {
		o.Answer, o.Detail = answerInvalid, fmt.Sprintf("%s: encode the request: %v", where, err)
		return o
	}
	timeout := min(c.cfg.Timeout, c.cfg.Interval)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		o.Answer, o.Detail = answerUnreachable, fmt.Sprintf("%s: %v", where, err)
		return o
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Queuectl-Message-Id", m.ID)
	// The check_url answers itself: following a redirect would ask
	// another URL, a 302 turning the POST into a GET; a redirect is an
	// answer that decides nothing (HTTP 3xx).
	client := *c.client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			o.Answer, o.Detail = answerTimeout, fmt.Sprintf("%s: no answer within %s", where, timeout)
		} else {
			o.Answer, o.Detail = answerUnreachable, fmt.Sprintf("%s: %v", where, unwrapURL(err))
		}
		return o
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		o.Answer, o.Detail = answerTimeout, fmt.Sprintf("%s: the answer did not arrive within %s", where, timeout)
		return o
	case err != nil:
		o.Answer, o.Detail = answerUnreachable, fmt.Sprintf("%s: reading the answer: %v", where, err)
		return o
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		o.Answer = fmt.Sprintf("HTTP %d", resp.StatusCode)
		o.Detail = fmt.Sprintf("%s: %s%s", where, resp.Status, snippet(raw))
		return o
	}
	state, err := parseAnswer(raw)
	if err != nil {
		o.Answer, o.Detail = answerInvalid, fmt.Sprintf("%s: %v", where, err)
		return o
	}
	o.Answer, o.Detail = state, where
	switch state {
	case domain.AnswerCommit:
		o.Kind = store.CheckCommit
	case domain.AnswerRollback:
		o.Kind = store.CheckRollback
	}
	return o
}

// parseAnswer reads {"state": "commit" | "rollback" | "unknown"}, strictly:
// one JSON object with the one field state, spelled so, its value a string,
// and nothing after it. An answer that says more than it should decides
// nothing: it is not what the producer was asked for.
func parseAnswer(raw []byte) (string, error) {
	want := `the answer is not {"state": "commit" | "rollback" | "unknown"}`
	if len(raw) > maxAnswer {
		return "", fmt.Errorf("%s but longer than %d KiB", want, maxAnswer>>10)
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return "", fmt.Errorf("%s%s", want, snippet(raw))
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", fmt.Errorf("%s: it goes on after the object%s", want, snippet(raw))
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if name != "state" {
			return "", fmt.Errorf("%s: unknown field %q%s", want, name, snippet(raw))
		}
	}
	var s string
	v, ok := fields["state"]
	if !ok || json.Unmarshal(v, &s) != nil {
		return "", fmt.Errorf("%s%s", want, snippet(raw))
	}
	switch s {
	case domain.AnswerCommit, domain.AnswerRollback, domain.AnswerUnknown:
		return s, nil
	default:
		return "", fmt.Errorf("%s: state %q", want, s)
	}
}

// headersOf gives a message's headers as the check-back sends them: an
// object, empty when it has none.
func headersOf(m *domain.Message) map[string]string {
	if m.Headers == nil {
		return map[string]string{}
	}
	return m.Headers
}

// snippet is the start of a body for a history entry: its first line, at
// most 200 bytes of valid text.
func snippet(b []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return ""
	}
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return ": " + s
}

// unwrapURL drops the "Post URL:" that net/http puts before a transport
// error: the detail names the URL already, redacted.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
