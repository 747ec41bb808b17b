package postgres

import (
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
)

// eoSeqBlock is how many sequence numbers one call of messages_eo_seq
// reserves: its increment (migration 00011); a reservation takes
// eoSeqBlocks of them in one statement, as many as a send batch of 1,000
// messages routed at once uses.
const (
	eoSeqBlock  = 1024
	eoSeqBlocks = 2
)

// seqBlock hands out the sequence numbers of EO messages (§14): blocks of
// eoSeqBlock reserved from the database's sequence messages_eo_seq, so
// that a message joins an EO queue without the queue's row lock and
// without a round trip of its own. EO promises no order: the numbers only
// need to be unique and to grow within a queue as a node adds to it.
type seqBlock struct {
	mu        sync.Mutex
	from, end uint64
	// ahead are the starts of the blocks reserved and not used yet, in
	// ascending order.
	ahead []uint64
}

// next returns the next number, reserving blocks through t when those at
// hand are used up.
func (b *seqBlock) next(t *txn) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.from == b.end && len(b.ahead) == 0 {
		// The sequence reads nothing the transaction holds back: the
		// writes wait for its next statement that does.
		rows, err := t.direct().Query(t.ctx, `SELECT nextval('messages_eo_seq') FROM generate_series(1, $1) ORDER BY 1`,
			eoSeqBlocks)
		if err != nil {
			return 0, fmt.Errorf("reserve EO sequence numbers: %w", err)
		}
		starts, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return 0, fmt.Errorf("reserve EO sequence numbers: %w", err)
		}
		for _, s := range starts {
			b.ahead = append(b.ahead, uint64(s))
		}
	}
	if b.from == b.end {
		b.from, b.ahead = b.ahead[0], b.ahead[1:]
		b.end = b.from + eoSeqBlock
	}
	n := b.from
	b.from++
	return n, nil
}
