package postgres

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Messages calls fn for the messages matching f in id order, a page at a
// time. With statuses each page merges one index scan per status (a Merge
// Append of messages_status runs), so the cost is that of the rows read;
// without, it reads the messages in id order from f.After on.
//
// In a writable transaction the walk takes no locks: a change made from fn
// is a compare-and-set of its own (Transition), which locks the queue and
// finds the message as it is by then.
func (t *txn) Messages(f store.MessageFilter, fn func(*domain.Message) error) error {
	var after pgtype.UUID
	if f.After != "" {
		var ok bool
		if after, ok = parseID(f.After); !ok {
			return domain.Invalidf("cursor %q is not a message id", f.After)
		}
	}
	q := newMessageQuery(f)
	q.reverse = f.Reverse
	lim := limiter{limit: f.Limit}
	for {
		n := lim.page()
		sql, args := q.page(after, n)
		page, err := t.messages(sql, args...)
		if err != nil {
			return fmt.Errorf("list messages: %w", err)
		}
		for _, m := range page {
			if err := fn(m); err != nil {
				return stopped(err)
			}
			after, _ = parseID(m.ID)
			if lim.done() {
				return nil
			}
		}
		if len(page) < n {
			return nil
		}
	}
}

// messageQuery builds the page queries of one Messages walk.
type messageQuery struct {
	statuses []domain.Status
	// conds are the filter's conditions on other fields, with their
	// arguments numbered from $3 ($1 is the cursor, $2 the page size).
	conds []string
	args  []any
	// reverse walks in descending id order.
	reverse bool
}

func newMessageQuery(f store.MessageFilter) *messageQuery {
	q := &messageQuery{}
	for _, s := range f.Statuses {
		if !slices.Contains(q.statuses, s) {
			q.statuses = append(q.statuses, s)
		}
	}
	add := func(cond string, arg any) {
		q.args = append(q.args, arg)
		q.conds = append(q.conds, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(q.args)+2)))
	}
	if len(f.Queues) > 0 {
		add(`queue = ANY($?)`, f.Queues)
	}
	if f.Key != "" {
		add(`key = $?`, clean(f.Key))
	}
	if len(f.Receivers) > 0 {
		// An outbound message by its receiver, an inbound one by any of
		// the receivers named at send time (store.MessageFilter.Match).
		add(`CASE WHEN receiver IS NOT NULL THEN receiver = ANY($?) ELSE receivers && $?::text[] END`, f.Receivers)
	}
	if len(f.Senders) > 0 {
		add(`sender = ANY($?)`, f.Senders)
	}
	if len(f.AppQueues) > 0 {
		add(`app_queue = ANY($?)`, f.AppQueues)
	}
	if f.ErrorText != "" {
		add(`strpos(lower(error), lower($?)) > 0`, clean(f.ErrorText))
	}
	if !f.CreatedBefore.IsZero() {
		add(`created_at < $?`, f.CreatedBefore)
	}
	if !f.CreatedAfter.IsZero() {
		add(`created_at > $?`, f.CreatedAfter)
	}
	switch {
	case f.Blacklisted == nil:
	case *f.Blacklisted:
		// Stated as the messages_blacklisted index's predicate.
		q.conds = append(q.conds, `blacklisted`)
	default:
		q.conds = append(q.conds, `NOT blacklisted`)
	}
	switch {
	case f.Stuck == nil:
	case *f.Stuck:
		q.conds = append(q.conds, `(status = 'PEND' AND stuck)`)
	default:
		q.conds = append(q.conds, `NOT (status = 'PEND' AND stuck)`)
	}
	return q
}

// page returns the query of the page of n messages after the id after
// (from the first when it is not valid).
func (q *messageQuery) page(after pgtype.UUID, n int) (string, []any) {
	args := append([]any{after, n}, q.args...)
	conds := q.conds
	cursor, order := `id > $1`, ` ORDER BY id LIMIT $2`
	if q.reverse {
		cursor, order = `id < $1`, ` ORDER BY id DESC LIMIT $2`
	}
	if after.Valid {
		conds = append([]string{cursor}, conds...)
	} else {
		// $1 is unused; a statement must still state its type.
		conds = append([]string{`$1::uuid IS NULL`}, conds...)
	}
	query := func(extra ...string) string {
		return `SELECT ` + messageColumns + ` FROM messages WHERE ` + strings.Join(append(slices.Clone(conds), extra...), ` AND `) + order
	}
	switch len(q.statuses) {
	case 0:
		return query(), args
	case 1:
		return query(`status = $` + strconv.Itoa(len(args)+1)), append(args, string(q.statuses[0]))
	}
	branches := make([]string, len(q.statuses))
	for i, s := range q.statuses {
		args = append(args, string(s))
		branches[i] = `(` + query(`status = $`+strconv.Itoa(len(args))) + `)`
	}
	return strings.Join(branches, ` UNION ALL `) + order, args
}
