package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/domain"
)

// sendBatch is how many messages one request carries.
const sendBatch = 500

// Send posts the requests in batches. As the local service does, it checks
// every request before it stores any: the rules of §2 here, and the
// server's payload limit, asked first, when there is more than one batch (the
// server checks each batch whole before it stores any of it). A refused
// request is reported with its index in reqs.
func (c *Client) Send(ctx context.Context, reqs []domain.SendRequest) ([]admin.Sent, error) {
	if err := c.checkSend(ctx, reqs); err != nil {
		return nil, err
	}
	out := make([]admin.Sent, 0, len(reqs))
	for start := 0; start < len(reqs); start += sendBatch {
		batch := reqs[start:min(start+sendBatch, len(reqs))]
		body := wire.SendBody{Messages: make([]wire.SendMessage, len(batch))}
		for i, r := range batch {
			body.Messages[i] = wire.FromRequest(r)
		}
		var page wire.Page[admin.Sent]
		if err := c.do(ctx, http.MethodPost, "/v1/messages", nil, body, &page); err != nil {
			return sendError(err, len(reqs), start, len(batch), out)
		}
		out = append(out, page.Items...)
	}
	return out, nil
}

// checkSend checks every request before the first batch goes out.
func (c *Client) checkSend(ctx context.Context, reqs []domain.SendRequest) error {
	limit := int64(math.MaxInt64)
	if len(reqs) > sendBatch {
		h, err := c.health(ctx)
		if err != nil {
			return err
		}
		if h.MaxPayload > 0 {
			limit = h.MaxPayload
		}
	}
	for i := range reqs {
		if err := reqs[i].Validate(limit); err != nil {
			if len(reqs) == 1 {
				return err
			}
			return &admin.RequestError{Index: i, Err: err}
		}
	}
	return nil
}

// sendError places a refused request of the batch starting at start in the
// whole list of n requests, and says what earlier batches stored, as the
// local service does.
func sendError(err error, n, start, size int, stored []admin.Sent) ([]admin.Sent, error) {
	var rerr *admin.RequestError
	switch {
	case errors.As(err, &rerr) && n == 1:
		err = rerr.Err
	case errors.As(err, &rerr):
		err = &admin.RequestError{Index: start + rerr.Index, Err: rerr.Err}
	case size == 1 && n > 1 && (errors.Is(err, domain.ErrInvalid) || errors.Is(err, domain.ErrTooLarge)):
		// The server refuses a batch of one without its position.
		err = &admin.RequestError{Index: start, Err: err}
	}
	if len(stored) > 0 {
		return stored, fmt.Errorf("stored %d of %d messages, then: %w", len(stored), n, err)
	}
	return nil, err
}

// pages walks a paged list: fn gets each item; limit 0 is all.
// A walk function may end the walk early with admin.ErrStop, as with the local service.
func pages[T any](ctx context.Context, c *Client, path string, q url.Values, limit int, fn func(T) error) error {
	n := 0
	for {
		size := wire.MaxPage
		if limit > 0 {
			size = min(size, limit-n)
		}
		q.Set("limit", strconv.Itoa(size))
		var page wire.Page[T]
		if err := c.do(ctx, http.MethodGet, path, q, nil, &page); err != nil {
			return err
		}
		for _, it := range page.Items {
			if err := fn(it); err != nil {
				if errors.Is(err, admin.ErrStop) {
					return nil
				}
				return err
			}
			n++
		}
		if page.Next == "" || len(page.Items) == 0 || (limit > 0 && n >= limit) {
			return nil
		}
		q.Set("after", page.Next)
	}
}

// Queues lists queues page by page.
func (c *Client) Queues(ctx context.Context, f admin.QueueFilter, fn func(*domain.Queue) error) error {
	return pages(ctx, c, "/v1/queues", wire.QueueQuery(f), f.Limit, fn)
}

// Queue returns one queue.
func (c *Client) Queue(ctx context.Context, name string) (*domain.Queue, error) {
	var q domain.Queue
	if err := c.do(ctx, http.MethodGet, "/v1/queues/"+segment(name), nil, nil, &q); err != nil {
		return nil, err
	}
	return &q, nil
}

// QueueMessages lists a queue's messages page by page.
func (c *Client) QueueMessages(ctx context.Context, name string, p admin.QueueMessagesParams, fn func(*domain.Message) error) error {
	q := url.Values{}
	if p.All {
		q.Set("all", "true")
	}
	if p.AfterSeq > 0 {
		q.Set("after", strconv.FormatUint(p.AfterSeq, 10))
	}
	return pages(ctx, c, "/v1/queues/"+segment(name)+"/messages", q, p.Limit, fn)
}

// Messages lists messages page by page.
func (c *Client) Messages(ctx context.Context, f admin.MessageFilter, fn func(*domain.Message) error) error {
	return pages(ctx, c, "/v1/messages", wire.MessageQuery(f), f.Limit, fn)
}

// Message returns one message with its history.
func (c *Client) Message(ctx context.Context, id string) (*domain.Message, error) {
	// Checked here as the local service checks it: an empty id would
	// otherwise name another route.
	if err := domain.ValidID(id); err != nil {
		return nil, err
	}
	var m domain.Message
	if err := c.do(ctx, http.MethodGet, "/v1/messages/"+segment(id), nil, nil, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// Payload returns a message's payload.
func (c *Client) Payload(ctx context.Context, id string) ([]byte, error) {
	if err := domain.ValidID(id); err != nil {
		return nil, err
	}
	resp, err := c.send(ctx, http.MethodGet, "/v1/messages/"+segment(id)+"/payload", nil, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// PayloadVersion returns one version of a message's payload; 0 is the current one.
func (c *Client) PayloadVersion(ctx context.Context, id string, n int) ([]byte, error) {
	if n == 0 {
		return c.Payload(ctx, id)
	}
	if err := domain.ValidID(id); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, domain.Invalidf("payload version %d must be 1 or more", n)
	}
	resp, err := c.send(ctx, http.MethodGet, "/v1/messages/"+segment(id)+"/payload", url.Values{"version": {strconv.Itoa(n)}}, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// EditPayload puts a corrected payload on the server, with If-Match when
// the edit names the version it replaces.
func (c *Client) EditPayload(ctx context.Context, p admin.EditParams) (*admin.EditResult, error) {
	// A malformed id is the server's to refuse, and audit; an empty one
	// would name another route.
	if p.ID == "" {
		return nil, domain.ValidID(p.ID)
	}
	q := url.Values{}
	if p.Resend {
		q.Set("resend", "true")
	}
	if p.Reason != "" {
		q.Set("reason", p.Reason)
	}
	body := rawBody{data: p.Payload, header: http.Header{}}
	if p.Version > 0 {
		body.header.Set("If-Match", wire.VersionTag(p.Version))
	}
	var res admin.EditResult
	if err := c.do(ctx, http.MethodPut, "/v1/messages/"+segment(p.ID)+"/payload", q, body, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Act applies an operator action on the server.
func (c *Client) Act(ctx context.Context, p admin.ActParams) (*admin.BulkResult, error) {
	var res admin.BulkResult
	body := wire.ActBody{Targets: p.Targets, Select: wire.FromSelection(p.Select), Reason: p.Reason, DryRun: p.DryRun,
		CountOnly: p.CountOnly, IncludeBlacklisted: p.IncludeBlacklisted}
	if body.Targets == nil {
		body.Targets = []string{}
	}
	err := c.do(ctx, http.MethodPost, "/v1/actions/"+segment(string(p.Action)), nil, body, &res)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// Tuning lists the tuning values.
func (c *Client) Tuning(ctx context.Context) ([]admin.TuningEntry, error) {
	var out []admin.TuningEntry
	err := c.do(ctx, http.MethodGet, "/v1/tuning", nil, nil, &out)
	return out, err
}

// Tune sets or unsets a tuning value on the server, which checks it.
func (c *Client) Tune(ctx context.Context, p admin.TuneParams) (*admin.TuningEntry, error) {
	var e admin.TuningEntry
	path := "/v1/tuning/" + segment(p.Param)
	var err error
	if p.Unset {
		err = c.do(ctx, http.MethodDelete, path, url.Values{"sub": {p.Sub}}, nil, &e)
	} else {
		err = c.do(ctx, http.MethodPut, path, nil, wire.TuneBody{Sub: p.Sub, Value: wire.TuneValue(p.Value)}, &e)
	}
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// Audit lists audit entries page by page.
func (c *Client) Audit(ctx context.Context, f admin.AuditFilter, fn func(*domain.AuditEntry) error) error {
	q := url.Values{}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	for k, v := range map[string]string{"actor": f.Actor, "action": f.Action, "result": f.Result} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.OldestFirst {
		q.Set("order", "oldest")
	}
	if f.After > 0 {
		q.Set("after", strconv.FormatUint(f.After, 10))
	}
	return pages(ctx, c, "/v1/audit", q, f.Limit, fn)
}

// Names lists names for shell completion from the server.
func (c *Client) Names(ctx context.Context, p admin.NamesParams) ([]string, error) {
	q := url.Values{"kind": {string(p.Kind)}}
	if p.Prefix != "" {
		q.Set("prefix", p.Prefix)
	}
	if p.Param != "" {
		q.Set("param", p.Param)
	}
	if p.After != "" {
		q.Set("after", p.After)
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	var page wire.Page[string]
	if err := c.do(ctx, http.MethodGet, "/v1/names", q, nil, &page); err != nil {
		return nil, err
	}
	return page.Items, nil
}

// Purge deletes old final messages on the server.
func (c *Client) Purge(ctx context.Context, p admin.PurgeParams) (*admin.PurgeResult, error) {
	var res admin.PurgeResult
	err := c.do(ctx, http.MethodPost, "/v1/purge", nil,
		wire.PurgeBody{DeliveredBefore: p.DeliveredBefore, FailedBefore: p.FailedBefore, DryRun: p.DryRun}, &res)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// segment escapes a name as one segment of a path. A name that is . or ..
// is escaped further, as %2E: as it is, the server would take it for a
// relative segment and answer with a redirect to another path.
func segment(name string) string {
	if name == "." || name == ".." {
		return strings.Repeat("%2E", len(name))
	}
	return url.PathEscape(name)
}

// RecordRefusal reports a request this client refused itself, for the
// server's audit log.
func (c *Client) RecordRefusal(ctx context.Context, r admin.Refusal) error {
	if r.Targets == nil {
		r.Targets = []string{}
	}
	return c.do(ctx, http.MethodPost, "/v1/audit/refusals", nil, r, nil)
}

// Nodes lists the nodes serving the server's store.
func (c *Client) Nodes(ctx context.Context) ([]admin.Node, error) {
	var out []admin.Node
	err := c.do(ctx, http.MethodGet, "/v1/nodes", nil, nil, &out)
	return out, err
}
