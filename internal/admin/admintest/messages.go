package admintest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// messageFixture holds messages in several statuses, senders and queues.
type messageFixture struct {
	tbdl, wait, ndlv, crashed, dlvd, hold, pend, other, out *domain.Message
}

func (b *bundle) messageFixture(t *testing.T) *messageFixture {
	t.Helper()
	f := &messageFixture{}
	msgs := b.send(t, eo("tbdl"), eo("wait"), eo("ndlv"), eo("crashed"), eo("dlvd"), eoio("BLOCKED", "head"))
	f.tbdl = msgs[0]
	f.wait = b.wait(t, msgs[1].ID)
	f.ndlv = b.ndlv(t, msgs[2].ID, domain.ErrorPermanent, "HTTP 400 Bad Request: unknown article")
	f.crashed = b.crash(t, msgs[3].ID)
	f.dlvd = b.deliver(t, msgs[4].ID)
	b.ndlv(t, msgs[5].ID, domain.ErrorTransient, "HTTP 503 retries exhausted")
	f.hold = b.sendOne(t, eoio("BLOCKED", "held"))
	pend := eo("pend")
	pend.Prepare = true
	f.pend = b.sendOne(t, pend)
	other := eo("other")
	other.Sender, other.Receivers = "CRM", []string{"ARCHIVE"}
	f.other = b.sendOne(t, other)
	f.out = b.outbound(t, f.dlvd, "ARCHIVE", "XBTOEAB9")
	return f
}

func testMessagesFilters(t *testing.T, b *bundle) {
	f := b.messageFixture(t)
	var all []*domain.Message
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		return r.Messages(store.MessageFilter{}, func(m *domain.Message) error {
			all = append(all, m)
			return nil
		})
	}))
	blocked := b.messages(t, admin.MessageFilter{Queues: []string{"XBQIBLOCKED"}})
	require.Len(t, blocked, 2)

	for name, c := range map[string]struct {
		f    admin.MessageFilter
		want []*domain.Message
	}{
		"status":          {admin.MessageFilter{Statuses: []domain.Status{domain.StatusWAIT}}, []*domain.Message{f.wait}},
		"statuses":        {admin.MessageFilter{Statuses: []domain.Status{domain.StatusTBDL, domain.StatusHOLD}}, []*domain.Message{f.tbdl, f.hold, f.other, f.out}},
		"PEND":            {admin.MessageFilter{Statuses: []domain.Status{domain.StatusPEND}}, []*domain.Message{f.pend}},
		"queue":           {admin.MessageFilter{Queues: []string{"XBTOEAB9"}}, []*domain.Message{f.out}},
		"receiver":        {admin.MessageFilter{Receivers: []string{"ARCHIVE"}}, []*domain.Message{f.other, f.out}},
		"sender":          {admin.MessageFilter{Senders: []string{"CRM"}}, []*domain.Message{f.other}},
		"senders":         {admin.MessageFilter{Senders: []string{"CRM", "SHOP"}}, append(blocked, f.other)},
		"app queue":       {admin.MessageFilter{AppQueues: []string{"BLOCKED"}}, blocked},
		"error text":      {admin.MessageFilter{ErrorText: "unknown ARTICLE"}, []*domain.Message{f.ndlv}},
		"error text http": {admin.MessageFilter{ErrorText: "HTTP 503", Statuses: []domain.Status{domain.StatusWAIT}}, []*domain.Message{f.wait}},
		"blacklisted":     {admin.MessageFilter{Blacklisted: ptr(true)}, []*domain.Message{f.crashed}},
		"blacklisted NDLV": {admin.MessageFilter{Blacklisted: ptr(true), Statuses: []domain.Status{domain.StatusNDLV}},
			[]*domain.Message{f.crashed}},
		"not blacklisted NDLV": {admin.MessageFilter{Blacklisted: ptr(false), Statuses: []domain.Status{domain.StatusNDLV}},
			[]*domain.Message{f.ndlv, blocked[0]}},
		"not blacklisted": {admin.MessageFilter{Blacklisted: ptr(false)}, without(all, f.crashed)},
		"after":           {admin.MessageFilter{After: f.dlvd.ID}, after(all, f.dlvd.ID)},
		"after upper":     {admin.MessageFilter{After: strings.ToUpper(f.dlvd.ID)}, after(all, f.dlvd.ID)},
		"limit":           {admin.MessageFilter{Limit: 2}, all[:2]},
		"limit 0 is all":  {admin.MessageFilter{Limit: 0}, all},
		"after and limit": {admin.MessageFilter{After: all[1].ID, Limit: 3}, all[2:5]},
		"none":            {admin.MessageFilter{Senders: []string{"NOBODY"}}, nil},
	} {
		require.Equal(t, ids(c.want), ids(b.messages(t, c.f)), name)
	}

	// The messages listed carry their metadata but not their history.
	got := b.messages(t, admin.MessageFilter{Blacklisted: ptr(true)})
	require.Len(t, got, 1)
	c := got[0]
	require.Equal(t, domain.StatusNDLV, c.Status)
	require.True(t, c.Blacklisted)
	require.Equal(t, 2, c.Crashes)
	require.Equal(t, domain.ErrorCrash, c.ErrorClass)
	require.Equal(t, "node-a", c.Node)
	require.Empty(t, c.History)

	w := b.messages(t, admin.MessageFilter{Statuses: []domain.Status{domain.StatusWAIT}})[0]
	require.NotNil(t, w.NextAttemptAt)
	require.True(t, w.NextAttemptAt.Equal(*f.wait.NextAttemptAt))

	o := b.messages(t, admin.MessageFilter{Queues: []string{"XBTOEAB9"}})[0]
	require.Equal(t, domain.Outbound, o.Stage)
	require.Equal(t, "ARCHIVE", o.Receiver)
	require.Equal(t, f.dlvd.ID, o.ParentID)

	err := b.svc.Messages(b.ctx, admin.MessageFilter{After: "nope"}, func(*domain.Message) error { return nil })
	require.ErrorIs(t, err, domain.ErrInvalid)
}

func testMessagesTimeFilters(t *testing.T, b *bundle) {
	var sent []*domain.Message
	for i := range 5 {
		sent = append(sent, b.sendOne(t, eo(fmt.Sprint(i))))
	}
	cut := sent[2].CreatedAt
	var before, afterCut []*domain.Message
	for _, m := range sent {
		if m.CreatedAt.Before(cut) {
			before = append(before, m)
		}
		if m.CreatedAt.After(cut) {
			afterCut = append(afterCut, m)
		}
	}
	require.NotEmpty(t, before)
	require.NotEmpty(t, afterCut)
	require.Equal(t, ids(before), ids(b.messages(t, admin.MessageFilter{OlderThan: cut})))
	require.Equal(t, ids(afterCut), ids(b.messages(t, admin.MessageFilter{NewerThan: cut})))
	// A time in another zone means the same instant.
	require.Equal(t, ids(before), ids(b.messages(t, admin.MessageFilter{OlderThan: cut.In(time.FixedZone("CET", 3600))})))
	require.Equal(t, ids(sent[1:4]), ids(b.messages(t, admin.MessageFilter{
		NewerThan: sent[0].CreatedAt, OlderThan: sent[4].CreatedAt,
	})))
}

func testMessagesPaging(t *testing.T, b *bundle) {
	// More messages than one page of the HTTP API holds.
	const n = 2345
	reqs := make([]domain.SendRequest, n)
	for i := range reqs {
		reqs[i] = eo(fmt.Sprint(i))
	}
	sent := b.send(t, reqs...)
	want := ids(sent)

	require.Equal(t, want, ids(b.messages(t, admin.MessageFilter{})))
	require.Equal(t, want, ids(b.messages(t, admin.MessageFilter{Statuses: []domain.Status{domain.StatusTBDL}})))
	require.Equal(t, want[:1500], ids(b.messages(t, admin.MessageFilter{Limit: 1500})))
	require.Equal(t, want[:1000], ids(b.messages(t, admin.MessageFilter{Limit: 1000})))
	require.Equal(t, want[:1001], ids(b.messages(t, admin.MessageFilter{Limit: 1001})))
	require.Equal(t, want[1001:], ids(b.messages(t, admin.MessageFilter{After: want[1000]})))
	require.Equal(t, want[3:2003], ids(b.messages(t, admin.MessageFilter{After: want[2], Limit: 2000})))
	require.Empty(t, b.messages(t, admin.MessageFilter{After: want[n-1]}))

	// Newest first, over the pages of the API too.
	back := slices.Clone(want)
	slices.Reverse(back)
	require.Equal(t, back, ids(b.messages(t, admin.MessageFilter{NewestFirst: true})))
	require.Equal(t, back, ids(b.messages(t, admin.MessageFilter{NewestFirst: true, Statuses: []domain.Status{domain.StatusTBDL}})))
	require.Equal(t, back[:1001], ids(b.messages(t, admin.MessageFilter{NewestFirst: true, Limit: 1001})))
	require.Equal(t, back[1001:], ids(b.messages(t, admin.MessageFilter{NewestFirst: true, After: back[1000]})))
	require.Empty(t, b.messages(t, admin.MessageFilter{NewestFirst: true, After: want[0]}))
}

func testMessagesStop(t *testing.T, b *bundle) {
	reqs := make([]domain.SendRequest, 1500)
	for i := range reqs {
		reqs[i] = eo("x")
	}
	sent := b.send(t, reqs...)

	// A walk function ends a walk early with admin.ErrStop, without an error.
	var got []string
	err := b.svc.Messages(b.ctx, admin.MessageFilter{}, func(m *domain.Message) error {
		if len(got) == 1200 {
			return admin.ErrStop
		}
		got = append(got, m.ID)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, ids(sent[:1200]), got)

	// Any other error ends it with that error.
	boom := fmt.Errorf("boom")
	n := 0
	err = b.svc.Queues(b.ctx, admin.QueueFilter{}, func(*domain.Queue) error {
		n++
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 1, n)
}

func testMessage(t *testing.T, b *bundle) {
	f := b.messageFixture(t)
	m, err := b.svc.Message(b.ctx, f.wait.ID)
	require.NoError(t, err)
	require.Equal(t, f.wait.ID, m.ID)
	require.Equal(t, domain.StatusWAIT, m.Status)
	require.Equal(t, "HTTP 503 Service Unavailable", m.Error)
	require.Equal(t, domain.ErrorTransient, m.ErrorClass)
	require.Equal(t, 1, m.Attempts)
	require.Equal(t, f.wait.Headers, m.Headers)

	// The history: sent, then each status change with its actor and node.
	require.Len(t, m.History, 3)
	require.Equal(t, domain.StatusTBDL, m.History[0].To)
	require.Empty(t, m.History[0].From)
	require.NotEmpty(t, m.History[0].Actor)
	require.Equal(t, domain.StatusTBDL, m.History[1].From)
	require.Equal(t, domain.StatusDLNG, m.History[1].To)
	require.Equal(t, domain.StatusDLNG, m.History[2].From)
	require.Equal(t, domain.StatusWAIT, m.History[2].To)
	require.Equal(t, "engine", m.History[2].Actor)
	require.Equal(t, "node-a", m.History[2].Node)
	require.Equal(t, "admintest", m.History[2].Reason)
	for i := 1; i < len(m.History); i++ {
		require.False(t, m.History[i].At.Before(m.History[i-1].At))
	}

	// Ids are found in any case.
	up, err := b.svc.Message(b.ctx, strings.ToUpper(f.wait.ID))
	require.NoError(t, err)
	require.Equal(t, f.wait.ID, up.ID)

	_, err = b.svc.Message(b.ctx, unknownID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	require.ErrorContains(t, err, unknownID)
	for _, bad := range []string{"", "nope", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1", "../../v1/queues", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f/payload"} {
		m, err := b.svc.Message(b.ctx, bad)
		require.ErrorIs(t, err, domain.ErrInvalid, "%q", bad)
		require.Nil(t, m)
	}
}

func testPayload(t *testing.T, b *bundle) {
	m := b.sendOne(t, eo("päyload\x00\xff"))
	got, err := b.svc.Payload(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, []byte("päyload\x00\xff"), got)

	got, err = b.svc.Payload(b.ctx, strings.ToUpper(m.ID))
	require.NoError(t, err)
	require.Equal(t, []byte("päyload\x00\xff"), got)

	_, err = b.svc.Payload(b.ctx, unknownID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	_, err = b.svc.Payload(b.ctx, "nope")
	require.ErrorIs(t, err, domain.ErrInvalid)
	_, err = b.svc.Payload(b.ctx, "")
	require.ErrorIs(t, err, domain.ErrInvalid)
}

func without(all []*domain.Message, drop *domain.Message) []*domain.Message {
	var out []*domain.Message
	for _, m := range all {
		if m.ID != drop.ID {
			out = append(out, m)
		}
	}
	return out
}

func after(all []*domain.Message, id string) []*domain.Message {
	var out []*domain.Message
	for _, m := range all {
		if m.ID > id {
			out = append(out, m)
		}
	}
	return out
}
