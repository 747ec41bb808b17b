package postgres

import (
	"fmt"
	"sync"
)

// eoSeqBlock is how many sequence numbers one call of messages_eo_seq
// reserves: its increment (migration 00011).
const eoSeqBlock = 1024

// seqBlock hands out the sequence numbers of EO messages (§14): blocks of
// eoSeqBlock reserved from the database's sequence messages_eo_seq, so
// that a message joins an EO queue without the queue's row lock and
// without a round trip of its own. EO promises no order: the numbers only
// need to be unique and to grow within a queue as a node adds to it.
type seqBlock struct {
	mu        sync.Mutex
	from, end uint64
}

// next returns the next number, reserving a block through t when the one at
// hand is used up.
func (b *seqBlock) next(t *txn) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.from == b.end {
		var start int64
		// The sequence reads nothing the transaction holds back: the
		// writes wait for its next statement that does.
		if err := t.direct().QueryRow(t.ctx, `SELECT nextval('messages_eo_seq')`).Scan(&start); err != nil {
			return 0, fmt.Errorf("reserve EO sequence numbers: %w", err)
		}
		b.from, b.end = uint64(start), uint64(start)+eoSeqBlock
	}
	n := b.from
	b.from++
	return n, nil
}
