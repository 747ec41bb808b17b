// Package wire holds the JSON shapes of the HTTP API (§6) that the server
// and the remote client share, and the query encoding of list filters, so
// that both sides agree by construction.
package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// ActorHeader names the operator of a request on a server's unix socket,
// which trusts it: the socket's file mode admits only its owner.
const ActorHeader = "X-Queuectl-Actor"

// IdempotencyKeyHeader names the idempotency key (§2) of the one message a
// send request (POST /v1/messages) carries, as its "key" field does.
const IdempotencyKeyHeader = "Idempotency-Key"

// Page is one page of a list: its items and the cursor of the next page
// ("" when there is none).
type Page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next"`
}

// MaxPage is the largest page a list endpoint returns.
const MaxPage = 1000

// SendBody is the body of POST /v1/messages.
type SendBody struct {
	Messages []SendMessage `json:"messages"`
}

// SendMessage is one message to send; the payload travels as base64.
type SendMessage struct {
	QoS        domain.QoS        `json:"qos"`
	Sender     string            `json:"sender"`
	Receivers  []string          `json:"receivers,omitempty"`
	AppQueue   string            `json:"app_queue,omitempty"`
	Interface  string            `json:"interface,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	PayloadB64 string            `json:"payload_b64"`
	// Key is the producer's idempotency key (§2); absent is none, and
	// an empty one is refused.
	Key     *string `json:"key,omitempty"`
	Prepare bool    `json:"prepare,omitempty"`
}

// FromRequest encodes a send request.
func FromRequest(r domain.SendRequest) SendMessage {
	m := SendMessage{QoS: r.QoS, Sender: r.Sender, Receivers: r.Receivers, AppQueue: r.AppQueue,
		Interface: r.Interface, Headers: r.Headers, Prepare: r.Prepare,
		PayloadB64: base64.StdEncoding.EncodeToString(r.Payload)}
	if r.Key != "" {
		m.Key = &r.Key
	}
	return m
}

// Request decodes a send request.
func (m SendMessage) Request() (domain.SendRequest, error) {
	p, err := base64.StdEncoding.DecodeString(m.PayloadB64)
	if err != nil {
		return domain.SendRequest{}, domain.Invalidf("payload_b64 is not valid base64: %v", err)
	}
	r := domain.SendRequest{QoS: m.QoS, Sender: m.Sender, Receivers: m.Receivers, AppQueue: m.AppQueue,
		Interface: m.Interface, Headers: m.Headers, Prepare: m.Prepare, Payload: p}
	if m.Key != nil {
		if *m.Key == "" {
			return domain.SendRequest{}, domain.Invalidf(`"key" is empty; a key is 1-%d printable characters (leave it out for none)`, domain.MaxKey)
		}
		r.Key = *m.Key
	}
	return r, nil
}

// ActBody is the body of POST /v1/actions/{action}: the targets, or a
// selection instead of them.
type ActBody struct {
	Targets   []string    `json:"targets"`
	Select    *SelectBody `json:"select,omitempty"`
	Reason    string      `json:"reason,omitempty"`
	DryRun    bool        `json:"dry_run,omitempty"`
	CountOnly bool        `json:"count_only,omitempty"`
	// IncludeBlacklisted lets message.resend resend blacklisted messages.
	IncludeBlacklisted bool `json:"include_blacklisted,omitempty"`
}

// SelectBody names an action's targets by a filter, written as the query
// string its list endpoint takes: messages as GET /v1/messages, queues as
// GET /v1/queues ("" selects all). Last bounds the selection.
type SelectBody struct {
	Messages *string `json:"messages,omitempty"`
	Queues   *string `json:"queues,omitempty"`
	Last     string  `json:"last,omitempty"`
}

// FromSelection encodes a selection.
func FromSelection(sel *admin.Selection) *SelectBody {
	if sel == nil {
		return nil
	}
	b := &SelectBody{Last: sel.Last}
	if sel.Messages != nil {
		q := MessageQuery(*sel.Messages).Encode()
		b.Messages = &q
	}
	if sel.Queues != nil {
		q := QueueQuery(*sel.Queues).Encode()
		b.Queues = &q
	}
	return b
}

// Selection decodes a selection.
func (b *SelectBody) Selection() (*admin.Selection, error) {
	if b == nil {
		return nil, nil
	}
	sel := &admin.Selection{Last: b.Last}
	if b.Messages != nil {
		q, err := url.ParseQuery(*b.Messages)
		if err != nil {
			return nil, domain.Invalidf("select.messages is not a query string: %v", err)
		}
		f, err := ParseMessageQuery(q)
		if err != nil {
			return nil, err
		}
		sel.Messages = &f
	}
	if b.Queues != nil {
		q, err := url.ParseQuery(*b.Queues)
		if err != nil {
			return nil, domain.Invalidf("select.queues is not a query string: %v", err)
		}
		f, err := ParseQueueQuery(q)
		if err != nil {
			return nil, err
		}
		sel.Queues = &f
	}
	return sel, nil
}

// TuneBody is the body of PUT /v1/tuning/{param}.
type TuneBody struct {
	Sub   string    `json:"sub"`
	Value TuneValue `json:"value"`
}

// TuneValue is a tuning value as a request carries it: a JSON number, or
// the text an operator typed as a JSON string, which the service checks —
// so that a value refused is refused, and audited, by the service alone.
type TuneValue string

// MarshalJSON writes a whole number as a number, anything else — "+3",
// "03", which are no JSON numbers, and " 2" — as a string, for the service
// to refuse as the operator wrote it.
func (v TuneValue) MarshalJSON() ([]byte, error) {
	if _, ok := domain.ParseWholeNumber(string(v)); ok {
		return []byte(v), nil
	}
	return json.Marshal(string(v))
}

// UnmarshalJSON reads a number or a string.
func (v *TuneValue) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = TuneValue(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("value must be a number: %s", b)
	}
	*v = TuneValue(n.String())
	return nil
}

// PurgeBody is the body of POST /v1/purge.
type PurgeBody struct {
	DeliveredBefore time.Time `json:"delivered_before,omitzero"`
	FailedBefore    time.Time `json:"failed_before,omitzero"`
	DryRun          bool      `json:"dry_run,omitempty"`
}

// Health is the answer of GET /healthz.
type Health struct {
	Status string `json:"status"`
	// MaxPayload is the server's engine.max_payload in bytes.
	MaxPayload int64 `json:"max_payload"`
}

// ErrorBody is the error envelope of §6.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// Field is the request's field (a body field or query parameter) the
	// error is about, when it names one; the message names it so.
	Field string `json:"field,omitempty"`
	// Index is the 0-based position, in the request's list of messages, of
	// the message a refused send is about.
	Index *int `json:"index,omitempty"`
}

// MessageQuery encodes a message filter as query parameters.
func MessageQuery(f admin.MessageFilter) url.Values {
	q := url.Values{}
	setList(q, "status", statusStrings(f.Statuses))
	setList(q, "queue", f.Queues)
	setList(q, "receiver", f.Receivers)
	setList(q, "sender", f.Senders)
	setList(q, "app_queue", f.AppQueues)
	setStr(q, "error", f.ErrorText)
	setStr(q, "key", f.Key)
	setTime(q, "older_than", f.OlderThan)
	setTime(q, "newer_than", f.NewerThan)
	if f.Blacklisted != nil {
		q.Set("blacklisted", strconv.FormatBool(*f.Blacklisted))
	}
	if f.Stuck != nil {
		q.Set("stuck", strconv.FormatBool(*f.Stuck))
	}
	if f.NewestFirst {
		q.Set("order", "newest")
	}
	setStr(q, "after", f.After)
	return q
}

// ParseMessageQuery decodes a message filter; Limit is the caller's.
func ParseMessageQuery(q url.Values) (admin.MessageFilter, error) {
	var f admin.MessageFilter
	var err error
	if v := q.Get("status"); v != "" {
		if f.Statuses, err = domain.ParseStatuses(v); err != nil {
			return f, err
		}
	}
	f.Queues, f.Receivers, f.Senders, f.AppQueues = list(q, "queue"), list(q, "receiver"), list(q, "sender"), list(q, "app_queue")
	f.ErrorText, f.Key, f.After = q.Get("error"), q.Get("key"), q.Get("after")
	switch q.Get("order") {
	case "", "oldest":
	case "newest":
		f.NewestFirst = true
	default:
		return f, domain.Invalidf("order %q must be oldest (the default) or newest", q.Get("order"))
	}
	if f.OlderThan, err = parseTime(q, "older_than"); err != nil {
		return f, err
	}
	if f.NewerThan, err = parseTime(q, "newer_than"); err != nil {
		return f, err
	}
	if v := q.Get("blacklisted"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return f, domain.Invalidf("blacklisted %q must be true or false", v)
		}
		f.Blacklisted = &b
	}
	if v := q.Get("stuck"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return f, domain.Invalidf("stuck %q must be true or false", v)
		}
		f.Stuck = &b
	}
	return f, nil
}

// QueueQuery encodes a queue filter as query parameters.
func QueueQuery(f admin.QueueFilter) url.Values {
	q := url.Values{}
	qos := make([]string, len(f.QoS))
	for i, v := range f.QoS {
		qos[i] = string(v)
	}
	stages := make([]string, len(f.Stages))
	for i, v := range f.Stages {
		stages[i] = string(v)
	}
	states := make([]string, len(f.States))
	for i, v := range f.States {
		states[i] = string(v)
	}
	setList(q, "qos", qos)
	setList(q, "stage", stages)
	setList(q, "state", states)
	setList(q, "receiver", f.Receivers)
	setStr(q, "name", f.Name)
	setStr(q, "after", f.After)
	return q
}

// ParseQueueQuery decodes a queue filter; Limit is the caller's.
func ParseQueueQuery(q url.Values) (admin.QueueFilter, error) {
	f := admin.QueueFilter{Receivers: list(q, "receiver"), Name: q.Get("name"), After: q.Get("after")}
	for _, s := range list(q, "qos") {
		v, err := domain.ParseQoS(s)
		if err != nil {
			return f, err
		}
		f.QoS = append(f.QoS, v)
	}
	for _, s := range list(q, "stage") {
		v, err := domain.ParseStage(s)
		if err != nil {
			return f, err
		}
		f.Stages = append(f.Stages, v)
	}
	if v := q.Get("state"); v != "" {
		st, err := domain.ParseQueueStates(v)
		if err != nil {
			return f, err
		}
		f.States = st
	}
	return f, nil
}

// ParseLimit reads a page size: default 100, at most MaxPage.
func ParseLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxPage {
		return 0, domain.Invalidf("limit %q must be a number from 1 to %d", v, MaxPage)
	}
	return n, nil
}

func statusStrings(ss []domain.Status) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

func setList(q url.Values, k string, v []string) {
	if len(v) > 0 {
		q.Set(k, strings.Join(v, ","))
	}
}

func setStr(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

func setTime(q url.Values, k string, t time.Time) {
	if !t.IsZero() {
		q.Set(k, t.UTC().Format(time.RFC3339Nano))
	}
}

func list(q url.Values, k string) []string {
	var out []string
	for _, p := range strings.Split(q.Get(k), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseTime(q url.Values, k string) (time.Time, error) {
	v := q.Get(k)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, domain.Invalidf("%s %q is not an RFC 3339 time", k, v)
	}
	return t, nil
}

// VersionTag is the ETag of a payload version: the version number, quoted
// (RFC 9110 §8.8.3), as If-Match gives it back to PUT /v1/messages/{id}/payload.
func VersionTag(n int) string { return `"` + strconv.Itoa(n) + `"` }

// ParseVersionTag reads the If-Match header of a payload edit: one version
// tag, quoted or not. A weak tag, a list or "*" is refused: an edit names
// the one version it replaces.
func ParseVersionTag(v string) (int, error) {
	s := strings.TrimSpace(v)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strings.HasPrefix(s, "+") {
		return 0, domain.Invalidf(`If-Match %q must name one payload version, as the ETag of GET /v1/messages/{id}/payload gives it (like "2")`, v)
	}
	return n, nil
}
