package demo

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// report prints what the demo built and how to explore it. It reads the
// store through the admin service, so that what it calls blocked or stuck
// is what queue blocked and tx list --stuck say.
func (b *builder) report(ctx context.Context, took time.Duration) error {
	st, err := bolt.Open(b.opts.DB, bolt.Options{})
	if err != nil {
		return err
	}
	svc := local.New(st, local.Options{})
	defer svc.Close()
	counts := map[domain.Status]int64{}
	var queues int
	var blocked []string
	var poison, stuck string
	err = svc.Queues(ctx, admin.QueueFilter{}, func(q *domain.Queue) error {
		queues++
		if q.State == domain.QueueBlocked {
			blocked = append(blocked, q.Name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The messages, not the queues' counters: a queue counts what passed
	// through it, so a message routed on counts in two queues.
	err = svc.Messages(ctx, admin.MessageFilter{}, func(m *domain.Message) error {
		counts[m.Status]++
		return nil
	})
	if err != nil {
		return err
	}
	yes := true
	err = svc.Messages(ctx, admin.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV}, Blacklisted: &yes, Limit: 1},
		func(m *domain.Message) error {
			poison = m.ID
			return nil
		})
	if err != nil {
		return err
	}
	err = svc.Messages(ctx, admin.MessageFilter{Statuses: []domain.Status{domain.StatusPEND}, Stuck: &yes, Limit: 1},
		func(m *domain.Message) error {
			stuck = m.ID
			return nil
		})
	if err != nil {
		return err
	}

	out := b.opts.IO.Out
	fmt.Fprintf(out, "Built a demo store in %s: %d queues, %d messages (%s).\n\n",
		took.Round(100*time.Millisecond), queues, total(counts), b.opts.DB)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	line := func(s domain.Status, what string) {
		if counts[s] > 0 {
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", s, counts[s], what)
		}
	}
	line(domain.StatusDLVD, "delivered: EO orders spread over parallel queues, EOIO orders in sequence")
	line(domain.StatusNDLV, "not delivered: a rejected invoice blocks its EOIO queue, a bad label request, the poison message")
	line(domain.StatusHOLD, "held in order behind the blocked invoice queue")
	line(domain.StatusWAIT, "waiting to retry: the CRM answers 503 (maintenance)")
	line(domain.StatusPEND, "prepared by a transactional send: the ERP cannot say whether it booked the order (stuck)")
	tw.Flush()
	if poison != "" {
		fmt.Fprintf(out, "\nThe poison message %s killed the engine process %d times and is now blacklisted.\n", poison, b.kills)
	}
	if stuck != "" {
		fmt.Fprintf(out, "The engine checked back with the ERP on three prepared orders: it committed one (delivered),\n"+
			"rolled one back (kept in the audit log), and %s is stuck after 3 unanswered checks.\n", stuck)
	}
	if len(blocked) > 0 {
		fmt.Fprintf(out, "Blocked queues: %s.\n", strings.Join(blocked, ", "))
	}

	db := ""
	if b.opts.DB != config.DefaultDBPath() {
		db = " --db " + b.opts.DB
	}
	fmt.Fprintf(out, "\nExplore it:\n")
	for _, c := range []string{
		"queue list", "queue blocked", "blacklist list",
		"message list --status NDLV,WAIT,HOLD", "message show " + poison,
		"tx list --stuck", "message show " + stuck, "audit list --action tx.rollback",
	} {
		if strings.HasSuffix(c, " ") {
			continue
		}
		fmt.Fprintf(out, "  queuectl%s %s\n", db, c)
	}
	return nil
}

func total(counts map[domain.Status]int64) int64 {
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}
