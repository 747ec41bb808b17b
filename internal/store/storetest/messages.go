package storetest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// filterFixture is ten messages, inserted in this order, that between them
// differ in every field a MessageFilter selects by. m[i] is created at At(i).
//
//	0 EO   inbound  ERP  ->WMS          TBDL
//	1 EO   outbound ERP  ->WMS          NDLV "HTTP 503 Service Unavailable"
//	2 EOIO inbound  SHOP ->WMS,ARCHIVE  DLVD  ORDERS
//	3 EOIO outbound SHOP ->ARCHIVE      NDLV  ORDERS   blacklisted "node crashed while delivering"
//	4 EOIO outbound SHOP ->WMS          WAIT  INVOICES "connection refused"
//	5 EO   inbound  CRM                 PEND
//	6 EO   outbound CRM  ->ARCHIVE      TBDL
//	7 EOIO outbound SHOP ->WMS          HOLD  INVOICES
//	8 EO   outbound ERP  ->WMS          FAIL  "http 400 bad request"
//	9 EO   inbound  ERP  ->WMS          DLNG
func filterFixture() []*domain.Message {
	eo := NewMessage()
	orders := NewEOIOMessage("ORDERS")
	orders.Receivers = []string{ReceiverWMS, ReceiverARCHIVE}
	invoices := NewEOIOMessage("INVOICES")
	crm := NewMessage()
	crm.Sender = "CRM"
	crm.Receivers = nil
	crm.Queue = domain.EOInboundQueue(domain.RoleCentral, 1)

	m := []*domain.Message{
		eo,
		NotDelivered(NewOutboundMessage(eo, ReceiverWMS), domain.ErrorTransient),
		WithStatus(orders, domain.StatusDLVD),
		NotDelivered(NewOutboundMessage(orders, ReceiverARCHIVE), domain.ErrorCrash),
		WithStatus(NewOutboundMessage(invoices, ReceiverWMS), domain.StatusWAIT),
		WithStatus(crm, domain.StatusPEND),
		NewOutboundMessage(crm, ReceiverARCHIVE),
		WithStatus(NewOutboundMessage(invoices, ReceiverWMS), domain.StatusHOLD),
		NotDelivered(NewOutboundMessage(eo, ReceiverWMS), domain.ErrorPermanent),
		WithStatus(NewMessage(), domain.StatusDLNG),
	}
	m[1].Error = "HTTP 503 Service Unavailable"
	m[3].Blacklisted, m[3].Crashes, m[3].Error = true, 2, "node crashed while delivering"
	m[4].Error = "connection refused"
	m[8].Status, m[8].Error = domain.StatusFAIL, "http 400 bad request"
	// Ids in index order, so that id order is the order of m.
	renamed := map[string]string{}
	for i, msg := range m {
		id := domain.NewID()
		renamed[msg.ID], msg.ID = id, id
		msg.CreatedAt, msg.UpdatedAt = At(i), At(i)
	}
	for _, msg := range m {
		if msg.ParentID != "" {
			msg.ParentID = renamed[msg.ParentID]
		}
	}
	return m
}

func testMessages(t *testing.T, open Opener) {
	t.Run("SelectsByEveryFilterField", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := filterFixture()
		b.insert(t, m...)
		yes, no := true, false
		statuses := func(s ...domain.Status) []domain.Status { return s }
		for _, tc := range []struct {
			name string
			f    store.MessageFilter
			want []int
		}{
			{"no filter", store.MessageFilter{}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
			{"one status", store.MessageFilter{Statuses: statuses(domain.StatusTBDL)}, []int{0, 6}},
			{"two statuses merged in id order", store.MessageFilter{Statuses: statuses(domain.StatusTBDL, domain.StatusNDLV)}, []int{0, 1, 3, 6}},
			{"statuses in any order", store.MessageFilter{Statuses: statuses(domain.StatusHOLD, domain.StatusWAIT, domain.StatusNDLV)}, []int{1, 3, 4, 7}},
			{"a status named twice", store.MessageFilter{Statuses: statuses(domain.StatusTBDL, domain.StatusTBDL)}, []int{0, 6}},
			{"every status", store.MessageFilter{Statuses: domain.Statuses}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
			{"first and last status", store.MessageFilter{Statuses: statuses(domain.StatusDLNG, domain.StatusPEND)}, []int{5, 9}},
			{"queue", store.MessageFilter{Queues: []string{m[0].Queue}}, []int{0, 9}},
			{"queues", store.MessageFilter{Queues: []string{m[0].Queue, m[2].Queue}}, []int{0, 2, 9}},
			{"receiver of outbound and named at send time", store.MessageFilter{Receivers: []string{ReceiverARCHIVE}}, []int{2, 3, 6}},
			{"receivers", store.MessageFilter{Receivers: []string{ReceiverWMS}}, []int{0, 1, 2, 4, 7, 8, 9}},
			{"sender", store.MessageFilter{Senders: []string{"CRM"}}, []int{5, 6}},
			{"senders", store.MessageFilter{Senders: []string{"CRM", SenderSHOP}}, []int{2, 3, 4, 5, 6, 7}},
			{"app queue", store.MessageFilter{AppQueues: []string{"INVOICES"}}, []int{4, 7}},
			{"app queues", store.MessageFilter{AppQueues: []string{"INVOICES", "ORDERS"}}, []int{2, 3, 4, 7}},
			{"error text ignores case", store.MessageFilter{ErrorText: "Http"}, []int{1, 8}},
			{"error text inside", store.MessageFilter{ErrorText: "REFUSED"}, []int{4}},
			{"created before is exclusive", store.MessageFilter{CreatedBefore: At(3)}, []int{0, 1, 2}},
			{"created after is exclusive", store.MessageFilter{CreatedAfter: At(7)}, []int{8, 9}},
			{"created between", store.MessageFilter{CreatedAfter: At(2), CreatedBefore: At(5)}, []int{3, 4}},
			{"blacklisted", store.MessageFilter{Blacklisted: &yes}, []int{3}},
			{"not blacklisted", store.MessageFilter{Blacklisted: &no}, []int{0, 1, 2, 4, 5, 6, 7, 8, 9}},
			{"blacklist list", store.MessageFilter{Statuses: statuses(domain.StatusNDLV), Blacklisted: &yes}, []int{3}},
			{"status and receiver", store.MessageFilter{Statuses: statuses(domain.StatusNDLV), Receivers: []string{ReceiverWMS}}, []int{1}},
			{"statuses and app queue", store.MessageFilter{Statuses: statuses(domain.StatusNDLV, domain.StatusWAIT), AppQueues: []string{"INVOICES"}}, []int{4}},
			{"statuses and time", store.MessageFilter{Statuses: statuses(domain.StatusTBDL, domain.StatusNDLV), CreatedAfter: At(0)}, []int{1, 3, 6}},
			{"after", store.MessageFilter{After: m[3].ID}, []int{4, 5, 6, 7, 8, 9}},
			{"after with statuses", store.MessageFilter{After: m[1].ID, Statuses: statuses(domain.StatusTBDL, domain.StatusNDLV)}, []int{3, 6}},
			{"after the last", store.MessageFilter{After: m[9].ID}, nil},
			{"limit", store.MessageFilter{Limit: 3}, []int{0, 1, 2}},
			{"limit counts matches only", store.MessageFilter{Senders: []string{SenderSHOP}, Limit: 2}, []int{2, 3}},
			{"limit with statuses", store.MessageFilter{Statuses: statuses(domain.StatusTBDL, domain.StatusNDLV), Limit: 2}, []int{0, 1}},
			{"after and limit", store.MessageFilter{After: m[0].ID, Limit: 2}, []int{1, 2}},
			{"nothing matches", store.MessageFilter{Senders: []string{"NOBODY"}}, nil},
			{"reverse", store.MessageFilter{Reverse: true}, []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
			{"reverse with a status", store.MessageFilter{Reverse: true, Statuses: statuses(domain.StatusTBDL)}, []int{6, 0}},
			{"reverse merges statuses", store.MessageFilter{Reverse: true, Statuses: statuses(domain.StatusTBDL, domain.StatusNDLV)}, []int{6, 3, 1, 0}},
			{"reverse, first and last status", store.MessageFilter{Reverse: true, Statuses: statuses(domain.StatusDLNG, domain.StatusPEND)}, []int{9, 5}},
			{"reverse after", store.MessageFilter{Reverse: true, After: m[4].ID}, []int{3, 2, 1, 0}},
			{"reverse after with statuses", store.MessageFilter{Reverse: true, After: m[6].ID, Statuses: statuses(domain.StatusTBDL, domain.StatusNDLV)}, []int{3, 1, 0}},
			{"reverse after the first", store.MessageFilter{Reverse: true, After: m[0].ID}, nil},
			{"reverse limit", store.MessageFilter{Reverse: true, Limit: 2}, []int{9, 8}},
			{"reverse with a filter and limit", store.MessageFilter{Reverse: true, Senders: []string{SenderSHOP}, Limit: 2}, []int{7, 4}},
			{"reverse with statuses and limit", store.MessageFilter{Reverse: true, Statuses: statuses(domain.StatusHOLD, domain.StatusWAIT, domain.StatusNDLV), Limit: 3}, []int{7, 4, 3}},
		} {
			want := []string{}
			for _, i := range tc.want {
				want = append(want, m[i].ID)
			}
			require.Equal(t, want, b.ids(t, tc.f), tc.name)
		}
	})

	t.Run("PagesWithAfterCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		var all, waiting []string
		var msgs []*domain.Message
		for i := range 25 {
			m := NewMessage()
			switch i % 3 {
			case 0:
				m.Status = domain.StatusWAIT
			case 1:
				m.Status = domain.StatusDLVD
			}
			if m.Status != domain.StatusDLVD {
				waiting = append(waiting, m.ID)
			}
			all = append(all, m.ID)
			msgs = append(msgs, m)
		}
		b.insert(t, msgs...)
		for name, f := range map[string]store.MessageFilter{
			"scan":     {},
			"statuses": {Statuses: []domain.Status{domain.StatusWAIT, domain.StatusTBDL}},
		} {
			want := all
			if f.Statuses != nil {
				want = waiting
			}
			var got []string
			for {
				f.Limit = 4
				page := b.ids(t, f)
				require.LessOrEqual(t, len(page), 4)
				if len(page) == 0 {
					break
				}
				got = append(got, page...)
				f.After = page[len(page)-1]
			}
			require.Equal(t, want, got, name)
		}
	})

	t.Run("CursorMayBeADeletedMessage", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := filterFixture()
		b.insert(t, m...)
		b.update(t, func(w store.Writer) error { return w.Delete(m[4].ID) })
		require.Equal(t, idsOf(m[5:]...), b.ids(t, store.MessageFilter{After: m[4].ID}))
		require.Equal(t, idsOf(m[6]), b.ids(t, store.MessageFilter{After: m[4].ID, Statuses: []domain.Status{domain.StatusTBDL, domain.StatusWAIT}}))
		require.Empty(t, b.ids(t, store.MessageFilter{Statuses: []domain.Status{domain.StatusWAIT}}), "a status with no messages left")
	})

	t.Run("ErrStopEndsTheWalk", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		b.insert(t, filterFixture()...)
		for name, f := range map[string]store.MessageFilter{
			"scan":     {},
			"statuses": {Statuses: []domain.Status{domain.StatusTBDL, domain.StatusNDLV}},
		} {
			calls := 0
			err := b.store.View(b.ctx, func(r store.Reader) error {
				return r.Messages(f, func(*domain.Message) error {
					calls++
					if calls == 2 {
						return store.ErrStop
					}
					return nil
				})
			})
			require.NoError(t, err, name)
			require.Equal(t, 2, calls, name)
		}
	})

	t.Run("WalkErrorIsReturned", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		b.insert(t, filterFixture()...)
		for name, f := range map[string]store.MessageFilter{
			"scan":     {},
			"statuses": {Statuses: []domain.Status{domain.StatusTBDL}},
		} {
			calls := 0
			err := b.store.View(b.ctx, func(r store.Reader) error {
				return r.Messages(f, func(*domain.Message) error {
					calls++
					return errRollback
				})
			})
			require.True(t, errors.Is(err, errRollback), "%s: %v", name, err)
			require.Equal(t, 1, calls, name)
		}
	})
}
