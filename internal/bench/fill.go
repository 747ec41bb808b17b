package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// fillBatch is how many messages one commit of Fill stores.
const fillBatch = 10000

// FillOptions describe a store to populate for trying admin commands at
// scale.
type FillOptions struct {
	Messages, Queues, Blacklisted int
	// Payload is each message's size in bytes.
	Payload int
	// Force fills a store that holds messages already.
	Force    bool
	Progress func(done, total int)
}

// FillResult says what Fill stored.
type FillResult struct {
	Messages    int     `json:"messages"`
	Queues      int     `json:"queues"`
	Blacklisted int     `json:"blacklisted"`
	Open        int     `json:"open"`
	Seconds     float64 `json:"seconds"`
}

// fillReceivers are the receivers the filled messages went to.
var fillReceivers = []string{"WMS", "BILLING", "CRM"}

// Fill stores o.Messages outbound messages spread round robin over
// o.Queues queues — EO and EOIO by turns — as an engine would have left
// them: most delivered, the last of each queue still TBDL, and
// o.Blacklisted of the EO ones NDLV and blacklisted after two crashes.
func Fill(ctx context.Context, st store.Store, o FillOptions) (*FillResult, error) {
	switch {
	case o.Messages < 1:
		return nil, domain.Invalidf("--messages %d must be at least 1", o.Messages)
	case o.Queues < 1 || o.Queues > o.Messages:
		return nil, domain.Invalidf("--queues %d must be between 1 and --messages (%d)", o.Queues, o.Messages)
	case o.Blacklisted < 0 || o.Blacklisted > EOMessages(o.Messages, o.Queues):
		return nil, domain.Invalidf("--blacklisted %d must be between 0 and the %d messages of EO queues (every other queue is EO)",
			o.Blacklisted, EOMessages(o.Messages, o.Queues))
	}
	if !o.Force {
		empty := true
		err := st.View(ctx, func(r store.Reader) error {
			return r.Queues("", func(*store.QueueRecord) error {
				empty = false
				return store.ErrStop
			})
		})
		if err != nil {
			return nil, err
		}
		if !empty {
			return nil, domain.WithHint(domain.ErrInvalid, "the store holds messages already",
				"fill a new store (--db NEW.db), or add --force to add to this one")
		}
	}
	start := time.Now()
	payload := make([]byte, o.Payload)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	res := &FillResult{Messages: o.Messages, Queues: o.Queues}
	for done := 0; done < o.Messages; {
		end := min(done+fillBatch, o.Messages)
		var open, blacklisted int
		err := st.Update(ctx, func(w store.Writer) error {
			open, blacklisted = 0, 0
			codes := map[string]string{}
			for _, rc := range fillReceivers {
				code, err := store.AssignCode(w, rc)
				if err != nil {
					return err
				}
				codes[rc] = code
			}
			for i := done; i < end; i++ {
				m, h := fillMessage(i, o, codes)
				switch {
				case m.Status == domain.StatusTBDL:
					open++
				case m.Blacklisted:
					blacklisted++
				}
				if err := w.Insert(m, payload, h); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("fill: %w", err)
		}
		res.Open += open
		res.Blacklisted += blacklisted
		done = end
		if o.Progress != nil {
			o.Progress(done, o.Messages)
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// EOMessages is how many of messages spread over queues fall to EO queues
// (queues 0, 2, 4 …), the most --blacklisted can be.
func EOMessages(messages, queues int) int {
	n := 0
	for q := 0; q < queues; q += 2 {
		n += (messages - q + queues - 1) / queues
	}
	return n
}

// eoRank is the place of message i among the messages of EO queues.
func eoRank(i, queues int) int {
	round, q := i/queues, i%queues
	return round*((queues+1)/2) + q/2
}

// fillMessage builds message i of a fill.
func fillMessage(i int, o FillOptions, codes map[string]string) (*domain.Message, domain.HistoryEntry) {
	q := i % o.Queues
	receiver := fillReceivers[q%len(fillReceivers)]
	m := &domain.Message{
		ID: domain.NewID(), Sender: "ERP", Receiver: receiver, Interface: "OrderCreate", Stage: domain.Outbound,
		Status: domain.StatusDLVD, Attempts: 1,
	}
	if q%2 == 0 {
		m.QoS = domain.EO
		m.Queue = domain.EOOutboundQueue(codes[receiver], 9999, (q/2)%9999)
	} else {
		m.QoS = domain.EOIO
		m.AppQueue = fmt.Sprintf("F%06d", q/2)
		m.Queue = domain.EOIOOutboundQueue(domain.PrefixXBQ, codes[receiver], m.AppQueue)
	}
	last := i+o.Queues >= o.Messages
	switch {
	case m.QoS == domain.EO && eoRank(i, o.Queues) < o.Blacklisted:
		m.Status, m.Crashes, m.Blacklisted, m.Node = domain.StatusNDLV, 2, true, "fill-node"
		m.ErrorClass = domain.ErrorCrash
		m.Error = "blacklisted: the engine process died 2 times while delivering it (last: node fill-node)"
	case last:
		m.Status, m.Attempts = domain.StatusTBDL, 0
	}
	return m, domain.HistoryEntry{Actor: "bench fill", Reason: "filled by queuectl bench fill"}
}
