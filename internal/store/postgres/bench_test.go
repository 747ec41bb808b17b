package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// benchPayload is the payload of every benchmark message: a small order.
const benchPayload = `<order id="4711" customer="C-1002" currency="EUR">` +
	`<line sku="A-100" qty="2" price="19.90"/><line sku="B-200" qty="1" price="5.00"/>` +
	`<line sku="C-300" qty="7" price="1.25"/><ship to="DE-10115 Berlin" by="2025-06-03"/></order>`

// benchInsert stores n EO messages over four queues, batch per Update.
func benchInsert(b *testing.B, st store.Store, n, batch int) []string {
	b.Helper()
	var ids []string
	for done := 0; done < n; done += batch {
		msgs := make([]*domain.Message, min(batch, n-done))
		for i := range msgs {
			msgs[i] = storetest.InQueue(storetest.NewMessage(), domain.EOInboundQueue(domain.RoleCentral, (done+i)%4))
			ids = append(ids, msgs[i].ID)
		}
		require.NoError(b, st.Update(b.Context(), func(w store.Writer) error {
			for _, m := range msgs {
				if err := w.Insert(m.Clone(), []byte(benchPayload), storetest.Entry("received")); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	return ids
}

// BenchmarkInsert stores messages in Updates of 1 and of 100 (send and
// send --jsonl).
func BenchmarkInsert(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			st := pgtest.Open(b)
			n := 0
			for b.Loop() {
				benchInsert(b, st, 1000, batch)
				n += 1000
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkTransition moves messages TBDL→DLNG, one compare-and-set per
// Update, as an operator's explicit ids are.
func BenchmarkTransition(b *testing.B) {
	st := pgtest.Open(b)
	n := 0
	for b.Loop() {
		b.StopTimer()
		ids := benchInsert(b, st, 1000, 100)
		b.StartTimer()
		for _, id := range ids {
			require.NoError(b, st.Update(b.Context(), func(w store.Writer) error {
				_, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{domain.StatusTBDL},
					To: domain.StatusDLNG, History: storetest.Entry("claimed")})
				return err
			}))
		}
		n += len(ids)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkTransitionBatch moves messages TBDL→DLNG, 100 compare-and-sets
// per Update, as a bulk operator action does: the writes go out set-based
// at commit, a fixed number of statements per Update.
func BenchmarkTransitionBatch(b *testing.B) {
	st := pgtest.Open(b)
	n := 0
	for b.Loop() {
		b.StopTimer()
		ids := benchInsert(b, st, 1000, 1000)
		b.StartTimer()
		for done := 0; done < len(ids); done += 100 {
			require.NoError(b, st.Update(b.Context(), func(w store.Writer) error {
				for _, id := range ids[done:min(done+100, len(ids))] {
					if _, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{domain.StatusTBDL},
						To: domain.StatusDLNG, History: storetest.Entry("claimed")}); err != nil {
						return err
					}
				}
				return nil
			}))
		}
		n += len(ids)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkListAtScale reads the first 100 of a status and the queue
// records in a store of 100,000 messages, of which 100 are NDLV: a list
// costs the rows it returns, not the rows the store holds.
func BenchmarkListAtScale(b *testing.B) {
	u := pgtest.URL(b)
	st, err := postgres.Open(b.Context(), u, postgres.Options{Migrate: true})
	require.NoError(b, err)
	b.Cleanup(func() { st.Close() })
	ids := benchInsert(b, st, 100_000, 1000)
	require.NoError(b, st.Update(b.Context(), func(w store.Writer) error {
		for _, id := range ids[len(ids)-100:] {
			if _, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{domain.StatusTBDL}, To: domain.StatusNDLV,
				History: storetest.Entry("failed")}); err != nil {
				return err
			}
		}
		return nil
	}))
	exec(b, u, `ANALYZE`)
	for _, c := range []struct {
		name string
		f    store.MessageFilter
	}{
		{"status NDLV limit 100", store.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV}, Limit: 100}},
		{"statuses NDLV,WAIT limit 100", store.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV, domain.StatusWAIT}, Limit: 100}},
		{"status TBDL limit 100", store.MessageFilter{Statuses: []domain.Status{domain.StatusTBDL}, Limit: 100}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				require.NoError(b, st.View(b.Context(), func(r store.Reader) error {
					return r.Messages(c.f, func(*domain.Message) error { n++; return nil })
				}))
				require.Equal(b, 100, n)
			}
		})
	}
	b.Run("queues", func(b *testing.B) {
		for b.Loop() {
			require.NoError(b, st.View(b.Context(), func(r store.Reader) error {
				return r.Queues("", func(*store.QueueRecord) error { return nil })
			}))
		}
	})
}

// BenchmarkClaimWithRetryBacklog claims from an outbound queue that holds
// 20,000 messages waiting for a retry an hour from now, as a receiver that
// is down leaves them: a claim reads the first of them (when the next is
// due), not all of them.
func BenchmarkClaimWithRetryBacklog(b *testing.B) {
	st := pgtest.Open(b)
	later := storetest.Now().Add(time.Hour)
	parent := storetest.NewMessage()
	for done := 0; done < 20_000; done += 1000 {
		require.NoError(b, st.Update(b.Context(), func(w store.Writer) error {
			for range 1000 {
				m := storetest.NewOutboundMessage(parent, storetest.ReceiverWMS)
				m.Status, m.NextAttemptAt, m.Attempts = domain.StatusWAIT, &later, 1
				if err := w.Insert(m, []byte(benchPayload), storetest.Entry("retry")); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	j, err := st.Join(b.Context(), store.JoinParams{ID: "N1", TTL: time.Hour, Receivers: storetest.Receivers})
	require.NoError(b, err)
	for b.Loop() {
		res, err := st.Claim(b.Context(), store.ClaimParams{Node: j.Node, Limit: 24, Window: 32, Receivers: storetest.Receivers})
		require.NoError(b, err)
		require.Empty(b, res.Claimed)
		require.WithinDuration(b, later, res.NextDue, time.Second)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/claim")
}
