package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/domain"
)

// table lists every route of the API.
func (s *Server) table() []route {
	return []route{
		{Method: "GET", Pattern: "/healthz", handle: s.healthz},
		{Method: "GET", Pattern: "/readyz", handle: s.readyz},
		// Deny by default (§6): only the health checks and the metrics a
		// Prometheus scrapes answer without a token.
		{Method: "GET", Pattern: "/metrics", cmd: "GET /metrics", perm: permRead, handle: s.metrics},
		{Method: "GET", Pattern: "/v1/openapi.json", cmd: "GET /v1/openapi.json", perm: permDoc, handle: s.openapi},
		{Method: "GET", Pattern: "/v1/whoami", cmd: "GET /v1/whoami", perm: permSelf, handle: s.whoami},
		{Method: "GET", Pattern: "/v1/queues", cmd: "queue list", handle: s.listQueues},
		{Method: "GET", Pattern: "/v1/queues/{name}", cmd: "queue show", handle: s.getQueue},
		{Method: "GET", Pattern: "/v1/queues/{name}/messages", cmd: "queue show", handle: s.queueMessages},
		{Method: "GET", Pattern: "/v1/messages", cmd: "message list", handle: s.listMessages},
		{Method: "POST", Pattern: "/v1/messages", cmd: "send", mutating: true, handle: s.send},
		{Method: "GET", Pattern: "/v1/messages/{id}", cmd: "message show", handle: s.getMessage},
		{Method: "GET", Pattern: "/v1/messages/{id}/payload", cmd: "message payload", handle: s.getPayload},
		{Method: "PUT", Pattern: "/v1/messages/{id}/payload", cmd: "message edit", mutating: true, handle: s.putPayload},
		{Method: "POST", Pattern: "/v1/actions/{action...}", permFor: actionPerm, mutating: true, handle: s.act},
		{Method: "GET", Pattern: "/v1/tuning", cmd: "tune list", handle: s.tuning},
		{Method: "PUT", Pattern: "/v1/tuning/{param...}", cmd: "tune set", mutating: true, handle: s.tune},
		{Method: "DELETE", Pattern: "/v1/tuning/{param...}", cmd: "tune unset", mutating: true, handle: s.untune},
		{Method: "GET", Pattern: "/v1/audit", cmd: "audit list", handle: s.audit},
		{Method: "GET", Pattern: "/v1/nodes", cmd: "node list", handle: s.nodes},
		// A client's own refusals: any token may report its holder's.
		{Method: "POST", Pattern: "/v1/audit/refusals", cmd: "POST /v1/audit/refusals", perm: permRefusal, handle: s.recordRefusal},
		{Method: "GET", Pattern: "/v1/names", cmd: "completion", handle: s.names},
		{Method: "POST", Pattern: "/v1/purge", cmd: "purge", mutating: true, handle: s.purge},
		{Method: "GET", Pattern: "/v1/eoio", cmd: "eoio status", handle: s.eoioStatus},
		{Method: "POST", Pattern: "/v1/eoio/switch", cmd: "eoio switch", mutating: true, handle: s.eoioSwitch},
	}
}

// actionPerm is what the action's command needs (tx commit and rollback
// are also the producer's); an action that does not exist needs what the
// others do, so that only an operator learns that it does not.
func actionPerm(r *http.Request) perm {
	if p, ok := admin.CommandPermission(admin.Action(r.PathValue("action")).Command()); ok {
		return p
	}
	return admin.PermOperate
}

// whoami says who the caller is: its token's name and role and the
// commands it may run (admin on the socket).
func (s *Server) whoami(w http.ResponseWriter, r *http.Request) error {
	id, err := s.opts.Service.WhoAmI(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, id)
	return nil
}

// healthz answers while the process is up. It names engine.max_payload,
// so that a client sending many batches can check every payload first.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, wire.Health{Status: "ok", MaxPayload: s.opts.MaxPayload})
	return nil
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if s.opts.Ready != nil {
		if err := s.opts.Ready(r.Context()); err != nil {
			return domain.Errorf(domain.ErrUnavailable, "not ready: %v", err)
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) error {
	if s.opts.Metrics == nil {
		return domain.NotFoundf("metrics are not enabled")
	}
	s.opts.Metrics.ServeHTTP(w, r)
	return nil
}

func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(OpenAPI)
	return err
}

func (s *Server) listQueues(w http.ResponseWriter, r *http.Request) error {
	f, err := wire.ParseQueueQuery(r.URL.Query())
	if err != nil {
		return err
	}
	if f.Limit, err = wire.ParseLimit(r.URL.Query()); err != nil {
		return err
	}
	return writePage(w, f.Limit, func(fn func(*domain.Queue) error) error {
		return s.opts.Service.Queues(r.Context(), f, fn)
	}, func(q *domain.Queue) string { return q.Name })
}

func (s *Server) getQueue(w http.ResponseWriter, r *http.Request) error {
	q, err := s.opts.Service.Queue(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

func (s *Server) queueMessages(w http.ResponseWriter, r *http.Request) error {
	qv := r.URL.Query()
	limit, err := wire.ParseLimit(qv)
	if err != nil {
		return err
	}
	p := admin.QueueMessagesParams{All: qv.Get("all") == "true", Limit: limit}
	if v := qv.Get("after"); v != "" {
		if p.AfterSeq, err = strconv.ParseUint(v, 10, 64); err != nil {
			return domain.Invalidf("after %q must be a seq number", v)
		}
	}
	return writePage(w, limit, func(fn func(*domain.Message) error) error {
		return s.opts.Service.QueueMessages(r.Context(), r.PathValue("name"), p, fn)
	}, func(m *domain.Message) string { return strconv.FormatUint(m.Seq, 10) })
}

func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) error {
	f, err := wire.ParseMessageQuery(r.URL.Query())
	if err != nil {
		return err
	}
	if f.Limit, err = wire.ParseLimit(r.URL.Query()); err != nil {
		return err
	}
	return writePage(w, f.Limit, func(fn func(*domain.Message) error) error {
		return s.opts.Service.Messages(r.Context(), f, fn)
	}, func(m *domain.Message) string { return m.ID })
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) error {
	m, err := s.opts.Service.Message(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

func (s *Server) getPayload(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	n := 0
	if v := r.URL.Query().Get("version"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			return domain.Invalidf("version %q must be a payload version, 1 or more", v)
		}
	}
	// The version read and the payload come from two reads: the ETag is
	// the version asked for, or the current one read first, so that an
	// edit in between makes a PUT with it fail rather than overwrite.
	version := n
	if n == 0 {
		m, err := s.opts.Service.Message(r.Context(), id)
		if err != nil {
			return err
		}
		version = m.PayloadVersion
	}
	p, err := s.opts.Service.PayloadVersion(r.Context(), id, n)
	if err != nil {
		return err
	}
	if version > 0 {
		w.Header().Set("ETag", wire.VersionTag(version))
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(p)))
	_, err = w.Write(p)
	return err
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) error {
	var body wire.SendBody
	// base64 grows a payload by a third; 32 MiB leaves room for a batch of small ones.
	if err := s.decode(w, r, &body, s.opts.MaxPayload/3*4+32<<20); err != nil {
		return refusal{error: err}
	}
	prepare := r.URL.Query().Get("prepare") == "true"
	reqs := make([]domain.SendRequest, len(body.Messages))
	for i, m := range body.Messages {
		req, err := m.Request()
		if err != nil {
			if len(body.Messages) == 1 {
				// As the service does: a single message is refused without its position.
				return refusal{error: err}
			}
			return refusal{error: &admin.RequestError{Index: i, Err: err}}
		}
		req.Prepare = req.Prepare || prepare
		reqs[i] = req
	}
	if len(reqs) == 0 {
		return refusal{error: domain.Invalidf("no messages in the request")}
	}
	if err := headerKey(r.Header, reqs); err != nil {
		return refusal{error: err}
	}
	sent, err := s.opts.Service.Send(r.Context(), reqs)
	if err != nil {
		return err
	}
	// 201 when the request stored a message; 200 when every message was
	// a repeat of its key, found, not stored (§2).
	status := http.StatusOK
	for _, m := range sent {
		if !m.Duplicate {
			status = http.StatusCreated
			break
		}
	}
	writeJSON(w, status, wire.Page[admin.Sent]{Items: sent})
	return nil
}

// headerKey gives the one message of a send the key of the
// Idempotency-Key header. A header given twice, empty, on a request of
// several messages, or naming another key than the message's "key" is
// refused: nothing may be guessed about which key a producer meant.
func headerKey(h http.Header, reqs []domain.SendRequest) error {
	vals := h.Values(wire.IdempotencyKeyHeader)
	switch {
	case len(vals) == 0:
		return nil
	case len(vals) > 1:
		return domain.Invalidf("the %s header is given %d times; give it once", wire.IdempotencyKeyHeader, len(vals))
	case vals[0] == "":
		return domain.Invalidf("the %s header is empty; a key is 1-%d printable characters", wire.IdempotencyKeyHeader, domain.MaxKey)
	case len(reqs) > 1:
		return domain.Invalidf(`the %s header is the key of one message; this request sends %d, so give each its "key"`,
			wire.IdempotencyKeyHeader, len(reqs))
	case reqs[0].Key != "" && reqs[0].Key != vals[0]:
		return domain.Invalidf(`the %s header %q and the message's "key" %q differ; give one of them, or the same in both`,
			wire.IdempotencyKeyHeader, vals[0], reqs[0].Key)
	}
	reqs[0].Key = vals[0]
	return nil
}

func (s *Server) act(w http.ResponseWriter, r *http.Request) error {
	var body wire.ActBody
	if err := s.decode(w, r, &body, 16<<20); err != nil {
		return refusal{error: err}
	}
	sel, err := body.Select.Selection()
	if err != nil {
		named, _ := json.Marshal(wire.ActBody{Targets: body.Targets})
		return refusal{error: err, body: named}
	}
	res, err := s.opts.Service.Act(r.Context(), admin.ActParams{
		Action: admin.Action(r.PathValue("action")), Targets: body.Targets, Select: sel, Reason: body.Reason,
		DryRun: body.DryRun, CountOnly: body.CountOnly, IncludeBlacklisted: body.IncludeBlacklisted,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) tuning(w http.ResponseWriter, r *http.Request) error {
	entries, err := s.opts.Service.Tuning(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, entries)
	return nil
}

func (s *Server) nodes(w http.ResponseWriter, r *http.Request) error {
	nodes, err := s.opts.Service.Nodes(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nodes)
	return nil
}

func (s *Server) tune(w http.ResponseWriter, r *http.Request) error {
	var body wire.TuneBody
	if err := s.decode(w, r, &body, 1<<16); err != nil {
		return refusal{error: err}
	}
	// The service checks the value, 0 and text included, and audits a refusal.
	e, err := s.opts.Service.Tune(r.Context(), admin.TuneParams{Param: r.PathValue("param"), Sub: body.Sub, Value: string(body.Value)})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

func (s *Server) untune(w http.ResponseWriter, r *http.Request) error {
	e, err := s.opts.Service.Tune(r.Context(), admin.TuneParams{Param: r.PathValue("param"), Sub: r.URL.Query().Get("sub"), Unset: true})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := wire.ParseLimit(q)
	if err != nil {
		return err
	}
	f := admin.AuditFilter{Actor: q.Get("actor"), Action: q.Get("action"), Result: q.Get("result"), Limit: limit}
	switch q.Get("order") {
	case "", "newest":
	case "oldest":
		f.OldestFirst = true
	default:
		return domain.Invalidf("order %q must be newest (the default) or oldest", q.Get("order"))
	}
	if v := q.Get("since"); v != "" {
		if f.Since, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return domain.Invalidf("since %q is not an RFC 3339 time", v)
		}
	}
	if v := q.Get("after"); v != "" {
		if f.After, err = strconv.ParseUint(v, 10, 64); err != nil {
			return domain.Invalidf("after %q must be an audit seq number", v)
		}
	}
	return writePage(w, limit, func(fn func(*domain.AuditEntry) error) error {
		return s.opts.Service.Audit(r.Context(), f, fn)
	}, func(e *domain.AuditEntry) string { return strconv.FormatUint(e.Seq, 10) })
}

func (s *Server) recordRefusal(w http.ResponseWriter, r *http.Request) error {
	var body admin.Refusal
	if err := s.decode(w, r, &body, 64<<10); err != nil {
		return err
	}
	if err := body.Check(); err != nil {
		return err
	}
	// Folded per actor and action, as the server's own refusals are: a
	// token that may only read cannot grow the audit log by posting.
	c, _ := admin.CallerFrom(r.Context())
	e := &domain.AuditEntry{At: s.opts.Now(), Actor: c.Actor, Source: c.Source, Action: body.Action,
		Targets: []string{}, Result: domain.AuditError, Detail: body.Reason}
	e.Bound()
	first, summaries := s.refusals.noteReport(e)
	s.write(context.WithoutCancel(r.Context()), summaries)
	if first {
		body.Reason += fmt.Sprintf("; further refusals of %s reported by %s until %s are counted, not recorded one by one",
			body.Action, c.Actor, e.At.Add(refusalWindow).UTC().Format(time.RFC3339))
		if err := s.opts.Service.RecordRefusal(r.Context(), body); err != nil {
			return err
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) names(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p := admin.NamesParams{Kind: admin.NameKind(q.Get("kind")), Prefix: q.Get("prefix"), Param: q.Get("param"),
		After: q.Get("after"), Limit: admin.DefaultNames}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > wire.MaxPage {
			return domain.Invalidf("limit %q must be a number from 1 to %d", v, wire.MaxPage)
		}
		p.Limit = n
	}
	// One name more than the page holds says whether another page follows.
	limit := p.Limit
	p.Limit++
	names, err := s.opts.Service.Names(r.Context(), p)
	if err != nil {
		return err
	}
	page := wire.Page[string]{Items: names}
	if len(names) > limit {
		page.Items = names[:limit]
		page.Next = names[limit-1]
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) purge(w http.ResponseWriter, r *http.Request) error {
	var body wire.PurgeBody
	if err := s.decode(w, r, &body, 1<<16); err != nil {
		return refusal{error: err}
	}
	res, err := s.opts.Service.Purge(r.Context(), admin.PurgeParams{
		DeliveredBefore: body.DeliveredBefore, FailedBefore: body.FailedBefore, DryRun: body.DryRun,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// decode reads a JSON body of at most limit bytes, cut off at the limit
// while it is read; unknown fields, and text the decoder would silently
// change (wire.CheckText), are refused.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return domain.Errorf(domain.ErrTooLarge, "request body is over %s", domain.FormatBytes(limit))
		}
		return s.bodyError(err)
	}
	if err := wire.CheckText(body); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return domain.Invalidf("the request has no JSON body")
		}
		return domain.Invalidf("request body: %v", err)
	}
	if dec.More() {
		return domain.Invalidf("request body: more than one JSON value")
	}
	return nil
}

// writePage answers a list request with one page: the items walk hands out
// (at most limit, as the service was asked for), and — when the page is
// full — the cursor of its last item, from which the next page starts.
func writePage[T any](w http.ResponseWriter, limit int, walk func(fn func(T) error) error, cursor func(T) string) error {
	page := wire.Page[T]{Items: []T{}}
	err := walk(func(it T) error {
		page.Items = append(page.Items, it)
		return nil
	})
	if err != nil {
		return err
	}
	if len(page.Items) == limit {
		page.Next = cursor(page.Items[len(page.Items)-1])
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// putPayload stores a corrected payload (message edit): the body is the
// payload, byte for byte, read up to engine.max_payload; If-Match names the
// version it replaces (412 when the message has another now); ?resend=true
// resends the message in the same step, ?reason= is recorded.
func (s *Server) putPayload(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	q := r.URL.Query()
	p := admin.EditParams{ID: id, Reason: q.Get("reason")}
	switch q.Get("resend") {
	case "", "false":
	case "true":
		p.Resend = true
	default:
		return s.refuseEdit(r, id, domain.Invalidf("resend %q must be true or false", q.Get("resend")))
	}
	if tags := r.Header.Values("If-Match"); len(tags) > 0 {
		if len(tags) > 1 {
			return s.refuseEdit(r, id, domain.Invalidf("the If-Match header is given %d times; give the one version the edit replaces", len(tags)))
		}
		n, err := wire.ParseVersionTag(tags[0])
		if err != nil {
			return s.refuseEdit(r, id, err)
		}
		p.Version = n
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxPayload))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			err = domain.Errorf(domain.ErrTooLarge, "message %s: the new payload is over the limit (engine.max_payload) of %s; nothing was changed",
				id, domain.FormatBytes(s.opts.MaxPayload))
		} else {
			err = s.bodyError(err)
		}
		return s.refuseEdit(r, id, err)
	}
	p.Payload = body
	res, err := s.opts.Service.EditPayload(r.Context(), p)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", wire.VersionTag(res.Current.Version))
	writeJSON(w, http.StatusOK, res)
	return nil
}

// refuseEdit audits an edit the server refused before the service saw it,
// under the action and target the edit would have had, and returns why.
func (s *Server) refuseEdit(r *http.Request, id string, err error) error {
	rerr := s.opts.Service.RecordRefusal(context.WithoutCancel(r.Context()),
		admin.Refusal{Action: string(admin.ActEdit), Targets: []string{id}, Reason: err.Error()})
	if rerr != nil {
		s.opts.Logger.Error("recording a refused edit failed", "err", rerr)
	}
	return err
}
