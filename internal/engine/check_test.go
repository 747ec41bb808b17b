package engine

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// runCheck runs a check-back test on every rig.
func runCheck(t *testing.T, test func(t *testing.T, b *checkBundle)) {
	t.Parallel()
	for _, rig := range checkRigs() {
		t.Run(rig.name, func(t *testing.T) {
			t.Parallel()
			test(t, setupCheck(t, rig.open))
		})
	}
}

// lastReason is the reason of a message's last history entry.
func lastReason(m *domain.Message) string { return m.History[len(m.History)-1].Reason }

func TestCheckBackCommitsInCommitOrder(t *testing.T) {
	runCheck(t, func(t *testing.T, b *checkBundle) {
		b.tx.MaxChecks = 10
		// A was prepared first, but its producer committed B first: the
		// check-back learns of A's commit after, and EOIO order is commit
		// order.
		msgs := b.prepare(t, "ERP", "ORDERS", "4711", "4712")
		a, bb := msgs[0], msgs[1]
		var bCommitted atomic.Bool
		b.producer.setAnswer(func(w http.ResponseWriter, r *http.Request, req checkRequest, nth int) {
			if req.ID == a.ID && bCommitted.Load() {
				io.WriteString(w, `{"state":"commit"}`)
				return
			}
			io.WriteString(w, `{"state":"unknown"}`)
		})
		b.start(t, b.node)
		res, err := b.admin.Act(b.ctx, admin.ActParams{Action: admin.ActCommit, Targets: []string{bb.ID}})
		require.NoError(t, err)
		require.Equal(t, 1, res.Changed)
		bCommitted.Store(true)
		// (On PostgreSQL, whose clock the test does not hold, A may be
		// asked before B's commit too; then a check an interval later
		// commits it.)
		b.advance(b.tx.After)
		b.waitEvent(t, EventCheckCommitted, a.ID, 1)

		got := b.message(t, a.ID)
		require.Equal(t, domain.StatusTBDL, got.Status)
		require.Equal(t, uint64(2), got.Seq, "seq assigned at the check-back's commit: after B's")
		require.Equal(t, "commit", got.LastAnswer)
		checks := b.producer.checks(a.ID)
		require.Equal(t, checkRequest{ID: a.ID, Sender: "ERP", Interface: "OrderCreate", Headers: map[string]string{"X-Order": "4711"}},
			checks[len(checks)-1], "the check carries the message's id, sender, interface and headers")
		require.Equal(t, len(checks), got.Checks)
		require.Regexp(t, `^committed by check-back \d+: sender ERP answered commit \(POST http://127\.0\.0\.1:\d+/tx-check\)$`, lastReason(got))
		require.Equal(t, "engine", got.History[len(got.History)-1].Actor)
		require.Equal(t, domain.StatusTBDL, got.History[len(got.History)-1].To)
	})
}

func TestCheckBackRollsBack(t *testing.T) {
	runCheck(t, func(t *testing.T, b *checkBundle) {
		b.producer.setAnswer(state("rollback"))
		p := b.prepare(t, "ERP", "", "4711")[0]
		b.start(t, b.node)
		b.advance(b.tx.After)
		ev := b.waitEvent(t, EventCheckRolledBack, p.ID, 1)
		require.Equal(t, "rollback", ev.Message.LastAnswer)
		require.Nil(t, b.message(t, p.ID), "a rollback deletes the message")
		var audit []*domain.AuditEntry
		require.NoError(t, b.admin.Audit(b.ctx, admin.AuditFilter{}, func(e *domain.AuditEntry) error {
			audit = append(audit, e)
			return nil
		}))
		require.Len(t, audit, 1, "the audit log keeps the rollback")
		require.Equal(t, "engine", audit[0].Actor)
		require.Equal(t, "tx.rollback", audit[0].Action)
		require.Equal(t, []string{p.ID}, audit[0].Targets)
		require.Contains(t, audit[0].Detail, "rolled back by check-back 1: sender ERP answered rollback")
	})
}

func TestCheckBackUnknownUntilStuck(t *testing.T) {
	runCheck(t, func(t *testing.T, b *checkBundle) {
		p := b.prepare(t, "ERP", "", "4711")[0]
		b.start(t, b.node)
		b.advance(b.tx.After)
		for n := 1; n < 3; n++ {
			ev := b.waitEvent(t, EventCheckUnanswered, p.ID, n)
			require.Equal(t, n, ev.Message.Checks)
			require.Equal(t, "unknown", ev.Message.LastAnswer)
			require.False(t, ev.Message.Stuck)
			b.advance(b.tx.Interval)
		}
		ev := b.waitEvent(t, EventStuck, p.ID, 1)
		require.True(t, ev.Message.Stuck)
		require.Equal(t, 3, ev.Message.Checks)

		got := b.message(t, p.ID)
		require.Equal(t, domain.StatusPEND, got.Status, "a stuck message stays PEND")
		require.True(t, got.Stuck)
		var reasons []string
		for _, h := range got.History[1:] {
			require.Equal(t, domain.StatusPEND, h.From)
			require.Equal(t, domain.StatusPEND, h.To)
			reasons = append(reasons, h.Reason)
		}
		require.Len(t, reasons, 3, "each check is in the history")
		require.Regexp(t, `^check-back 1 of 3 unanswered \(unknown\): POST http://\S+/tx-check$`, reasons[0])
		require.Regexp(t, `^check-back 3 of 3 unanswered \(unknown\): POST http://\S+/tx-check; stuck: it stays PEND until an operator commits or rolls it back$`, reasons[2])
		q, err := b.admin.Queue(b.ctx, p.Queue)
		require.NoError(t, err)
		require.Equal(t, int64(1), q.Stuck)

		// A stuck message is asked no more: a message prepared later is
		// checked, and in the same claims the stuck one would have been.
		b.advance(b.tx.Interval)
		later := b.prepare(t, "ERP", "", "4712")[0]
		b.advance(b.tx.After)
		b.waitEvent(t, EventCheckUnanswered, later.ID, 1)
		require.Len(t, b.producer.checks(p.ID), 3)

		// The operator decides: a stuck message commits as any other.
		res, err := b.admin.Act(b.ctx, admin.ActParams{Action: admin.ActCommit, Targets: []string{p.ID}})
		require.NoError(t, err)
		require.Equal(t, []string{p.ID}, res.ChangedIDs)
		got = b.message(t, p.ID)
		require.Equal(t, domain.StatusTBDL, got.Status)
		require.False(t, got.Stuck)
	})
}

func TestCheckBackTimesOut(t *testing.T) {
	runCheck(t, func(t *testing.T, b *checkBundle) {
		b.tx.MaxChecks, b.tx.Timeout = 10, 200*time.Millisecond
		b.producer.setAnswer(func(w http.ResponseWriter, r *http.Request, _ checkRequest, _ int) {
			<-r.Context().Done() // the producer hangs until the engine gives up
		})
		p := b.prepare(t, "ERP", "", "4711")[0]
		b.start(t, b.node)
		b.advance(b.tx.After)
		ev := b.waitEvent(t, EventCheckUnanswered, p.ID, 1)
		require.Equal(t, "timeout", ev.Message.LastAnswer)
		require.Regexp(t, `^check-back 1 of 10 unanswered \(timeout\): POST http://\S+/tx-check: no answer within 200ms$`,
			lastReason(b.message(t, p.ID)))
	})
}

func TestCheckBackServerErrors(t *testing.T) {
	runCheck(t, func(t *testing.T, b *checkBundle) {
		b.tx.MaxChecks = 10
		b.producer.setAnswer(func(w http.ResponseWriter, _ *http.Request, _ checkRequest, _ int) {
			http.Error(w, "database down\nsecond line", http.StatusInternalServerError)
		})
		p := b.prepare(t, "ERP", "", "4711")[0]
		b.start(t, b.node)
		b.advance(b.tx.After)
		ev := b.waitEvent(t, EventCheckUnanswered, p.ID, 1)
		require.Equal(t, "HTTP 500", ev.Message.LastAnswer)
		require.Regexp(t, `^check-back 1 of 10 unanswered \(HTTP 500\): POST http://\S+/tx-check: 500 Internal Server Error: database down$`,
			lastReason(b.message(t, p.ID)))
	})
}

func TestCheckBackRefusesWhatIsNotAnAnswer(t *testing.T) {
	runCheck(t, func(t *testing.T, b *checkBundle) {
		b.tx.MaxChecks = 10
		answers := map[string]string{
			"1": `{not json`,
			"2": `{"state":"maybe"}`,
			"3": `{"status":"commit"}`,
			"4": `{"state":"` + strings.Repeat("x", maxAnswer) + `"}`,
			"5": `{"state":"COMMIT"}`,
			"6": `{"state":"commit","extra":1}`,
			"7": `{"State":"commit"}`,
			"8": `{"state":"commit"} {"state":"rollback"}`,
			"9": `{"state":1}`,
		}
		b.producer.setAnswer(func(w http.ResponseWriter, _ *http.Request, req checkRequest, _ int) {
			io.WriteString(w, answers[req.Headers["X-Order"]])
		})
		msgs := b.prepare(t, "ERP", "", "1", "2", "3", "4", "5", "6", "7", "8", "9")
		b.start(t, b.node)
		b.advance(b.tx.After)
		want := []string{
			`the answer is not \{"state": "commit" \| "rollback" \| "unknown"\}: \{not json$`,
			`the answer is not \{"state": "commit" \| "rollback" \| "unknown"\}: state "maybe"$`,
			`the answer is not \{"state": "commit" \| "rollback" \| "unknown"\}: unknown field "status": \{"status":"commit"\}$`,
			`the answer is not \{"state": "commit" \| "rollback" \| "unknown"\} but longer than 64 KiB$`,
			`the answer is not \{"state": "commit" \| "rollback" \| "unknown"\}: state "COMMIT"$`,
			`the answer is not \{"state": "commit" \| "rollback" \| "unknown"\}: unknown field "extra": \{"state":"commit","extra":1\}$`,
			`the answer is not \{"state": "commit" \| "rollback" \| "unknown"\}: unknown field "State": \{"State":"commit"\}$`,
			`the answer is not \{"state": "commit" \| "rollback" \| "unknown"\}: it goes on after the object: \{"state":"commit"\} \{"state":"rollback"\}$`,
			`the answer is not \{"state": "commit" \| "rollback" \| "unknown"\}: \{"state":1\}$`,
		}
		for i, m := range msgs {
			ev := b.waitEvent(t, EventCheckUnanswered, m.ID, 1)
			require.Equal(t, "invalid answer", ev.Message.LastAnswer)
			got := b.message(t, m.ID)
			require.Equal(t, domain.StatusPEND, got.Status, "garbage decides nothing")
			require.Regexp(t, `^check-back 1 of 10 unanswered \(invalid answer\): POST http://\S+/tx-check: `+want[i], lastReason(got))
		}
	})
}

func TestCheckBackFollowsNoRedirect(t *testing.T) {
	runCheck(t, func(t *testing.T, b *checkBundle) {
		b.tx.MaxChecks = 10
		b.producer.setAnswer(func(w http.ResponseWriter, r *http.Request, req checkRequest, _ int) {
			if r.URL.Path == "/moved" {
				io.WriteString(w, `{"state":"commit"}`) // what a followed redirect would hear
				return
			}
			code := map[string]int{"1": http.StatusFound, "2": http.StatusTemporaryRedirect}[req.Headers["X-Order"]]
			http.Redirect(w, r, "/moved", code)
		})
		msgs := b.prepare(t, "ERP", "", "1", "2")
		b.start(t, b.node)
		b.advance(b.tx.After)
		for i, want := range []string{"HTTP 302", "HTTP 307"} {
			ev := b.waitEvent(t, EventCheckUnanswered, msgs[i].ID, 1)
			require.Equal(t, want, ev.Message.LastAnswer)
			got := b.message(t, msgs[i].ID)
			require.Equal(t, domain.StatusPEND, got.Status, "a redirect decides nothing")
		}
		require.Len(t, b.producer.checks(msgs[1].ID), 1, "the redirect was not followed")
	})
}

func TestCheckBackRacesTheProducersCommit(t *testing.T) {
	runCheck(t, func(t *testing.T, b *checkBundle) {
		b.tx.MaxChecks = 10
		// The producer of "raced" commits it while the check-back asks,
		// then answers commit: its commit wins, the check-back's gets a
		// conflict and is dropped. "first" is committed by the check-back
		// first: then the producer's commit gets the conflict.
		msgs := b.prepare(t, "ERP", "", "raced", "first")
		raced, first := msgs[0], msgs[1]
		b.producer.setAnswer(func(w http.ResponseWriter, _ *http.Request, req checkRequest, _ int) {
			if req.ID == raced.ID {
				res, err := b.admin.Act(b.ctx, admin.ActParams{Action: admin.ActCommit, Targets: []string{raced.ID}})
				if err != nil || res.Changed != 1 {
					http.Error(w, "the producer's commit failed", http.StatusInternalServerError)
					return
				}
			}
			io.WriteString(w, `{"state":"commit"}`)
		})
		b.start(t, b.node)
		b.advance(b.tx.After)
		b.waitEvent(t, EventCheckCommitted, first.ID, 1)
		b.waitFor(t, "the dropped check-back", func() bool { return b.logged("check-back dropped: the message changed meanwhile") })

		got := b.message(t, raced.ID)
		require.Equal(t, domain.StatusTBDL, got.Status)
		require.Zero(t, got.Checks, "the check-back's outcome was dropped")
		commits := 0
		for _, h := range got.History {
			if h.From == domain.StatusPEND && h.To == domain.StatusTBDL {
				commits++
				require.Equal(t, "producer", h.Actor, "the producer's commit won")
			}
		}
		require.Equal(t, 1, commits)
		require.Empty(t, b.eventsOf(EventCheckCommitted, raced.ID))

		res, err := b.admin.Act(b.ctx, admin.ActParams{Action: admin.ActCommit, Targets: []string{first.ID}})
		require.NoError(t, err)
		require.Zero(t, res.Changed, "the check-back's commit won")
		require.Equal(t, []admin.Skipped{{ID: first.ID, Status: domain.StatusTBDL, Reason: "status is TBDL; tx.commit needs PEND"}}, res.Skipped)
	})
}

func TestCheckBackWithoutCheckURL(t *testing.T) {
	runCheck(t, func(t *testing.T, b *checkBundle) {
		b.tx.MaxChecks = 10
		p := b.prepare(t, "SHOP", "", "4711")[0]
		b.start(t, b.node)
		b.advance(b.tx.After)
		ev := b.waitEvent(t, EventStuck, p.ID, 1)
		require.Equal(t, "no check_url", ev.Message.LastAnswer)
		require.Equal(t, 1, ev.Message.Checks)
		require.Equal(t, "check-back 1 of 10 unanswered (no check_url): sender SHOP has no senders.SHOP.check_url, "+
			"so nobody can be asked; stuck: it stays PEND until an operator commits or rolls it back", lastReason(b.message(t, p.ID)))
		require.Empty(t, b.producer.checks(p.ID))
	})
}

func TestCheckBackUnreachable(t *testing.T) {
	runCheck(t, func(t *testing.T, b *checkBundle) {
		b.tx.MaxChecks = 10
		gone := b.producer.srv.URL
		b.producer.srv.Close()
		b.tx.CheckURLs["ERP"] = gone + "/tx-check"
		p := b.prepare(t, "ERP", "", "4711")[0]
		b.start(t, b.node)
		b.advance(b.tx.After)
		ev := b.waitEvent(t, EventCheckUnanswered, p.ID, 1)
		require.Equal(t, "unreachable", ev.Message.LastAnswer)
		require.Regexp(t, `^check-back 1 of 10 unanswered \(unreachable\): POST http://127\.0\.0\.1:\d+/tx-check: dial tcp .*connection refused$`,
			lastReason(b.message(t, p.ID)))
	})
}

// TestCheckBackOncePerIntervalInACluster: when a queue's lease passes to
// another node, the new owner does not ask again what the old one asked
// within the interval; it asks what is due.
func TestCheckBackOncePerIntervalInACluster(t *testing.T) {
	runCheck(t, func(t *testing.T, b *checkBundle) {
		if b.join == nil {
			t.Skip("the embedded store has one node")
		}
		b.tx.Interval, b.tx.MaxChecks = time.Hour, 10
		msgs := b.prepare(t, "ERP", "", "1", "2", "3")
		b.start(t, b.node)
		for _, m := range msgs {
			b.waitEvent(t, EventCheckUnanswered, m.ID, 1)
		}
		other := b.join(t, "node-b")
		b.move(t, b.node, other)
		b.start(t, other)
		b.node = other // the queues of what is prepared next are node-b's
		later := b.prepare(t, "ERP", "", "4")[0]
		b.advance(0)
		ev := b.waitEvent(t, EventCheckUnanswered, later.ID, 1)
		require.Equal(t, "node-b", b.message(t, later.ID).History[1].Node, "the new owner checks")
		require.Equal(t, later.ID, ev.Message.ID)
		for _, m := range msgs {
			require.Len(t, b.producer.checks(m.ID), 1, "message %s is checked once in the interval", m.ID)
		}
	})
}
