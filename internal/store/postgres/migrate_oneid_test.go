package postgres_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// oldHistory encodes history entries as the messages.history column holds
// them, for rows a test writes as an older version would have.
func oldHistory(entries ...domain.HistoryEntry) []byte {
	var b []byte
	for _, h := range entries {
		b = binary.BigEndian.AppendUint64(b, uint64(h.At.UnixMicro()))
		for _, f := range []string{string(h.From), string(h.To), h.Node, h.Actor, h.Reason} {
			b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
			b = append(b, f...)
		}
	}
	return b
}

// A database of the version before one message kept one id (§3) and before
// idempotency keys (§2), with an inbound message routed into a copy that
// waits for delivery, migrates and works on: the copy is delivered as it
// is, and what is sent now keeps its id and may carry a key.
func TestMigrationKeepsAStoreOfTheVersionBeforeOneID(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, os.DirFS("migrations"),
		goose.WithTableName("queuectl_migrations"), goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 10)
	require.NoError(t, err)

	const (
		in      = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
		copyOf  = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c"
		payload = "0190a1b2-0000-7000-8000-000000000001"
	)
	inbound, outbound := domain.EOInboundQueue(domain.RoleCentral, 0), domain.EOOutboundQueue(domain.Code4(storetest.ReceiverWMS), 1, 0)
	at := time.Date(2026, 11, 30, 9, 15, 1, 0, time.UTC)
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO queues (name, qos, stage, receiver, last_seq, n_dlvd, n_tbdl, created_at) VALUES
			($1, 'EO', 'inbound', NULL, 1, 1, 0, $3), ($2, 'EO', 'outbound', 'WMS', 1, 0, 1, $3)`, []any{inbound, outbound, at}},
		{`INSERT INTO leases (queue, node, incarnation, epoch, expires_at) VALUES
			($1, '', 0, 0, '-infinity'), ($2, '', 0, 0, '-infinity')`, []any{inbound, outbound}},
		{`INSERT INTO payloads (id, refs, data) VALUES ($1, 2, 'order 1')`, []any{payload}},
	} {
		_, err = db.ExecContext(ctx, stmt.sql, stmt.args...)
		require.NoError(t, err)
	}
	_, err = db.ExecContext(ctx, `
		INSERT INTO messages (id, seq, size, payload_id, parent_id, created_at, updated_at, queue, status, qos, stage,
			sender, receiver, receivers, history) VALUES
			($1, 1, 7, $3, NULL, $4, $4, $5, 'DLVD', 'EO', 'inbound', 'ERP', NULL, '{WMS}', $7),
			($2, 1, 7, $3, $1, $4, $4, $6, 'TBDL', 'EO', 'outbound', 'ERP', 'WMS', NULL, $8)`,
		in, copyOf, payload, at, inbound, outbound,
		oldHistory(domain.HistoryEntry{At: at, To: domain.StatusTBDL, Actor: "sender"},
			domain.HistoryEntry{At: at, From: domain.StatusTBDL, To: domain.StatusDLNG, Actor: "engine"},
			domain.HistoryEntry{At: at, From: domain.StatusDLNG, To: domain.StatusDLVD, Actor: "engine"}),
		oldHistory(domain.HistoryEntry{At: at, To: domain.StatusTBDL, Actor: "engine"}))
	require.NoError(t, err)

	_, err = postgres.Migrate(ctx, u)
	require.NoError(t, err)
	st, err := postgres.Open(ctx, u, postgres.Options{})
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.Check(ctx), "the migrated store is consistent")

	j, err := st.Join(ctx, store.JoinParams{ID: "N1", TTL: time.Hour, Receivers: storetest.Receivers})
	require.NoError(t, err)
	sent := storetest.NewMessage()
	sent.Key = "after-the-upgrade"
	require.NoError(t, st.Update(ctx, func(w store.Writer) error {
		return w.Insert(sent, storetest.PayloadOf(sent), storetest.Entry("received"))
	}))
	router := &placement.Router{Placer: placement.Placer{Role: domain.RoleCentral, Rand: func(int) int { return 0 }}}
	res, err := st.Claim(ctx, store.ClaimParams{Node: j.Node, Limit: 10, Window: 32, Router: router, RouteLimit: 10, Receivers: storetest.Receivers})
	require.NoError(t, err)
	var claimed []string
	var outcomes []store.Outcome
	for _, c := range res.Claimed {
		claimed = append(claimed, c.Message.ID)
		outcomes = append(outcomes, store.Outcome{ID: c.Message.ID, Epoch: c.Epoch, Kind: store.OutcomeDelivered})
	}
	require.ElementsMatch(t, []string{copyOf, sent.ID}, claimed,
		"the copy the older version routed, and the message sent now, under the id it was sent with")
	rec, err := st.Record(ctx, store.RecordParams{Node: j.Node, Outcomes: outcomes})
	require.NoError(t, err)
	require.Empty(t, rec.Conflicts)
	require.NoError(t, st.Check(ctx))
}
