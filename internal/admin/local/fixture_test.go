package local_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// act applies an action and requires it to succeed.
func (b *testBundle) act(t *testing.T, p admin.ActParams) *admin.BulkResult {
	t.Helper()
	res, err := b.svc.Act(b.ctx, p)
	require.NoError(t, err)
	return res
}

// message reads one message with its history, or nil when it does not exist.
func (b *testBundle) message(t *testing.T, id string) *domain.Message {
	t.Helper()
	var m *domain.Message
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		var err error
		if m, err = r.Message(id); err != nil {
			m = nil
			return nil
		}
		m.History, err = r.History(id)
		return err
	}))
	return m
}

// status returns a message's status, or "" when it does not exist.
func (b *testBundle) status(t *testing.T, id string) domain.Status {
	t.Helper()
	if m := b.message(t, id); m != nil {
		return m.Status
	}
	return ""
}

// auditLog returns every audit entry, oldest first.
func (b *testBundle) auditLog(t *testing.T) []*domain.AuditEntry {
	t.Helper()
	var out []*domain.AuditEntry
	require.NoError(t, b.svc.Audit(b.ctx, admin.AuditFilter{OldestFirst: true}, func(e *domain.AuditEntry) error {
		out = append(out, e)
		return nil
	}))
	return out
}

// storeSnapshot is everything an action could change, apart from the audit
// log, in a form require.Equal compares.
type storeSnapshot struct {
	Messages []*domain.Message
	Queues   []*store.QueueRecord
	Params   []domain.Param
}

func (b *testBundle) snapshot(t *testing.T) storeSnapshot {
	t.Helper()
	var s storeSnapshot
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		if err := r.Messages(store.MessageFilter{}, func(m *domain.Message) error {
			var err error
			m.History, err = r.History(m.ID)
			s.Messages = append(s.Messages, m)
			return err
		}); err != nil {
			return err
		}
		if err := r.Queues("", func(q *store.QueueRecord) error {
			s.Queues = append(s.Queues, q)
			return nil
		}); err != nil {
			return err
		}
		return r.Params(func(p domain.Param) error {
			s.Params = append(s.Params, p)
			return nil
		})
	}))
	return s
}

// statusFixture holds one message in every status, plus a blacklisted NDLV
// message. EO messages share the inbound EO queue; the HOLD message waits in
// an EOIO queue behind a NDLV head of its own.
type statusFixture struct {
	*testBundle
	byStatus    map[domain.Status]*domain.Message
	blacklisted *domain.Message
	holdHead    *domain.Message
}

func setupStatuses(t *testing.T) *statusFixture {
	t.Helper()
	f := &statusFixture{testBundle: setup(t), byStatus: map[domain.Status]*domain.Message{}}
	pend := eo("pend")
	pend.Prepare = true
	f.byStatus[domain.StatusPEND] = f.sendOne(t, pend)

	msgs := f.send(t, eo("tbdl"), eo("dlng"), eo("dlvd"), eo("wait"), eo("ndlv"), eo("fail"), eo("crashed"))
	f.byStatus[domain.StatusTBDL] = msgs[0]
	f.byStatus[domain.StatusDLNG] = f.move(t, msgs[1].ID, domain.StatusTBDL, domain.StatusDLNG, nil)
	f.byStatus[domain.StatusDLVD] = f.deliver(t, msgs[2].ID)
	f.byStatus[domain.StatusWAIT] = f.wait(t, msgs[3].ID)
	f.byStatus[domain.StatusNDLV] = f.ndlv(t, msgs[4].ID, domain.ErrorPermanent, "HTTP 400")
	f.ndlv(t, msgs[5].ID, domain.ErrorPermanent, "HTTP 400")
	f.byStatus[domain.StatusFAIL] = f.move(t, msgs[5].ID, domain.StatusNDLV, domain.StatusFAIL, nil)
	f.blacklisted = f.crash(t, msgs[6].ID)

	f.holdHead = f.ndlv(t, f.sendOne(t, eoio("HELD", "1")).ID, domain.ErrorTransient, "HTTP 503")
	f.byStatus[domain.StatusHOLD] = f.sendOne(t, eoio("HELD", "2"))
	for _, s := range domain.Statuses {
		require.Equal(t, s, f.status(t, f.byStatus[s].ID), "fixture message in %s", s)
	}
	return f
}

// wait takes a TBDL message through DLNG to WAIT after a transient error.
func (b *testBundle) wait(t *testing.T, id string) *domain.Message {
	t.Helper()
	b.move(t, id, domain.StatusTBDL, domain.StatusDLNG, nil)
	return b.move(t, id, domain.StatusDLNG, domain.StatusWAIT, func(m *domain.Message) {
		m.Attempts, m.Error, m.ErrorClass = 1, "HTTP 503", domain.ErrorTransient
		next := b.now.Add(5 * time.Minute)
		m.NextAttemptAt = &next
	})
}

// crash takes a TBDL message to NDLV as crash blacklisting does: DLNG twice,
// then blacklisted with crashes 2.
func (b *testBundle) crash(t *testing.T, id string) *domain.Message {
	t.Helper()
	b.move(t, id, domain.StatusTBDL, domain.StatusDLNG, nil)
	return b.move(t, id, domain.StatusDLNG, domain.StatusNDLV, func(m *domain.Message) {
		m.Attempts, m.Crashes, m.Blacklisted, m.Node = 2, 2, true, "node-a"
		m.Error, m.ErrorClass = "blacklisted: the engine process died 2 times while delivering it", domain.ErrorCrash
	})
}

// bulkNDLV stores n EO messages and takes them to NDLV (blacklisted by
// crashes when blacklisted is set) in a few commits, and returns their ids.
func (b *testBundle) bulkNDLV(t *testing.T, n int, blacklisted bool) []string {
	t.Helper()
	reqs := make([]domain.SendRequest, n)
	for i := range reqs {
		reqs[i] = eo("x")
	}
	out := ids(b.send(t, reqs...))
	for start := 0; start < n; start += 1000 {
		batch := out[start:min(start+1000, n)]
		require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error {
			h := domain.HistoryEntry{At: b.now, Actor: "engine", Reason: "test"}
			for _, id := range batch {
				if _, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{domain.StatusTBDL}, To: domain.StatusDLNG, History: h}); err != nil {
					return err
				}
				if _, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{domain.StatusDLNG}, To: domain.StatusNDLV, History: h,
					Update: func(m *domain.Message) {
						m.Attempts, m.Error, m.ErrorClass = 1, "HTTP 400", domain.ErrorPermanent
						if blacklisted {
							m.Crashes, m.Blacklisted, m.ErrorClass = 2, true, domain.ErrorCrash
						}
					}}); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	return out
}

// recount counts the messages of every queue per status by walking them.
func (b *testBundle) recount(t *testing.T) map[string]map[domain.Status]int64 {
	t.Helper()
	return countsByWalk(t, b.st)
}

// counters returns the per-queue counters the store keeps.
func (b *testBundle) counters(t *testing.T) map[string]map[domain.Status]int64 {
	t.Helper()
	return countsKept(t, b.st)
}

// countsByWalk counts the messages of every queue per status by walking them.
func countsByWalk(t *testing.T, st store.Store) map[string]map[domain.Status]int64 {
	t.Helper()
	out := map[string]map[domain.Status]int64{}
	require.NoError(t, st.View(context.Background(), func(r store.Reader) error {
		return r.Messages(store.MessageFilter{}, func(m *domain.Message) error {
			if out[m.Queue] == nil {
				out[m.Queue] = map[domain.Status]int64{}
			}
			out[m.Queue][m.Status]++
			if m.InboundQueue != "" { // moved on by routing: it passed through (§3)
				if out[m.InboundQueue] == nil {
					out[m.InboundQueue] = map[domain.Status]int64{}
				}
				out[m.InboundQueue][domain.StatusDLVD]++
			}
			return nil
		})
	}))
	return out
}

// countsKept returns the per-queue counters the store keeps, without queues
// that are empty.
func countsKept(t *testing.T, st store.Store) map[string]map[domain.Status]int64 {
	t.Helper()
	out := map[string]map[domain.Status]int64{}
	require.NoError(t, st.View(context.Background(), func(r store.Reader) error {
		return r.Queues("", func(q *store.QueueRecord) error {
			if len(q.Counts) > 0 {
				out[q.Name] = q.Counts
			}
			return nil
		})
	}))
	return out
}

// newServiceOn returns a second service over the bundle's store, with the
// bundle's clock and actor. The bundle's own service closes the store.
func newServiceOn(b *testBundle) *local.Service {
	return local.New(b.st, local.Options{Actor: "local:test", Now: func() time.Time { return b.now }})
}

// woken reports whether the store woke an engine since the last call:
// changes that can make messages ready do.
func (b *testBundle) woken() bool {
	select {
	case <-b.st.(store.EngineStore).Wakeups():
		return true
	default:
		return false
	}
}
