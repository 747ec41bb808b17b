package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// QoS is a message's quality of service.
type QoS string

const (
	// EO is exactly once: unordered, spread over parallel queues.
	EO QoS = "EO"
	// EOIO is exactly once in order: the messages of one application
	// queue are delivered in the order they were sent (or, when prepared,
	// committed).
	EOIO QoS = "EOIO"
)

// Status is a message's status.
type Status string

// The statuses of a message.
const (
	StatusPEND Status = "PEND" // prepared, waiting for Commit or Rollback
	StatusTBDL Status = "TBDL" // to be delivered
	StatusDLNG Status = "DLNG" // being delivered
	StatusDLVD Status = "DLVD" // delivered
	StatusWAIT Status = "WAIT" // a delivery failed; the next attempt is due later
	StatusHOLD Status = "HOLD" // EOIO: waiting behind a message that blocks its queue
	StatusNDLV Status = "NDLV" // not delivered; an operator decides
	StatusFAIL Status = "FAIL" // cancelled by an operator
)

// Message is a message to send. The server checks it whole, and refuses it
// with ErrInvalid, before it stores anything.
type Message struct {
	// QoS is the message's quality of service, EO or EOIO; it is required.
	QoS QoS
	// Sender names the producer: 1–60 characters of A-Z a-z 0-9 _ - .
	Sender string
	// Receivers get the message; none lets the server's routing rules
	// decide. With several, each gets a copy of its own.
	Receivers []string
	// AppQueue is the application queue of an EOIO message, which keeps
	// its order: 1–16 characters of 0-9 A-Z _ /. EO messages have none.
	AppQueue string
	// Interface optionally names what the message is, for routing rules
	// and operators (at most 120 characters).
	Interface string
	// Headers travel with the message to its receivers, and to the
	// check-back of a prepared message: at most 64, keys of A-Z a-z 0-9 -.
	Headers map[string]string
	// Payload is the message's content, which receivers get as it is: any
	// bytes, or none. The server refuses one larger than its
	// engine.max_payload (10MiB unless configured otherwise) with
	// ErrTooLarge, and stores nothing.
	Payload []byte
	// Key names the message for the server, once per sender: sending a
	// message again with its key stores nothing new, and answers with the
	// message stored first, as a duplicate — so a producer that did not
	// learn whether a send went through can send again. A different message
	// under a key already used is ErrConflict. 1–128 characters of
	// printable text. Empty: the client makes one for its own retries,
	// unless WithoutGeneratedKeys was given; to send again after a restart,
	// choose the key yourself (an order number, or NewKey's, stored with
	// your own record) and reuse it.
	Key string
}

// Sent is what the server stored for a message, or, for a duplicate, held
// already.
type Sent struct {
	// ID is the message's id, the one operators see: it stays the same
	// from send to delivery.
	ID string
	// Key is the key the message was sent with: its own, or the one the
	// client made for it.
	Key string
	// Status is the message's status when the server answered: PEND for
	// Prepare, usually TBDL for Send.
	Status Status
	// Queue is the queue the message was in when the server answered.
	Queue string
	// CreatedAt is when the server stored the message, by its clock; for
	// a duplicate, when it stored the message first sent with the key.
	CreatedAt time.Time
	// Duplicate reports that the server held a message with the key
	// already and stored nothing new: an earlier send with the same key —
	// or, after a retry, an earlier attempt of this very call, which
	// reached the server though its answer was lost (Attempts > 1).
	Duplicate bool
	// Attempts is how many requests the call took.
	Attempts int
}

// Send stores a message for delivery and returns its id. With a deadline
// on ctx, Send gives up when it passes: a message whose send ended with
// ErrUnavailable or the context's error may or may not have been stored,
// and sending it again with the same Key settles which.
func (c *Client) Send(ctx context.Context, m Message) (Sent, error) {
	sent, err := c.send(ctx, []Message{m}, false)
	if err != nil {
		return Sent{}, err
	}
	return sent[0], nil
}

// SendBatch sends several messages in one request, and returns what was
// stored for each, in order. The server checks every message before it
// stores any: a refused message is an *APIError whose Index is its
// position, and nothing is stored. A batch of none sends nothing.
func (c *Client) SendBatch(ctx context.Context, msgs []Message) ([]Sent, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	sent, err := c.send(ctx, msgs, false)
	var ae *APIError
	if len(msgs) == 1 && errors.As(err, &ae) && ae.Index < 0 && errors.Is(ae, ErrInvalid) {
		// The server refuses a request of one message without its
		// position, as it refuses a Send.
		ae.Index = 0
	}
	return sent, err
}

// Prepare stores a message as PEND, the first step of a transactional send:
// it is not delivered until Commit, and Rollback deletes it. Until either
// comes, the server asks the sender's check_url about it (see CheckHandler).
func (c *Client) Prepare(ctx context.Context, m Message) (Sent, error) {
	sent, err := c.send(ctx, []Message{m}, true)
	if err != nil {
		return Sent{}, err
	}
	return sent[0], nil
}

// sendMessage is a message as POST /v1/messages takes it.
type sendMessage struct {
	QoS        QoS               `json:"qos"`
	Sender     string            `json:"sender"`
	Receivers  []string          `json:"receivers,omitempty"`
	AppQueue   string            `json:"app_queue,omitempty"`
	Interface  string            `json:"interface,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	PayloadB64 string            `json:"payload_b64"`
	Key        string            `json:"key,omitempty"`
}

// sentMessage is what the answer says of a stored message.
type sentMessage struct {
	ID        string    `json:"id"`
	Status    Status    `json:"status"`
	Queue     string    `json:"queue"`
	CreatedAt time.Time `json:"created_at"`
	Duplicate bool      `json:"duplicate"`
}

// send posts the messages in one request. A request of one message names
// its key in the Idempotency-Key header, as HTTP clients do; one of several
// names each in its message.
func (c *Client) send(ctx context.Context, msgs []Message, prepare bool) ([]Sent, error) {
	body := struct {
		Messages []sendMessage `json:"messages"`
	}{Messages: make([]sendMessage, len(msgs))}
	keys := make([]string, len(msgs))
	replayable := true
	for i, m := range msgs {
		key := m.Key
		if key == "" && c.keys {
			key = NewKey()
		}
		if err := checkKey(key); err != nil {
			if len(msgs) > 1 {
				err = fmt.Errorf("message %d of the batch: %w", i, err)
			}
			return nil, err
		}
		keys[i], replayable = key, replayable && key != ""
		body.Messages[i] = sendMessage{QoS: m.QoS, Sender: m.Sender, Receivers: m.Receivers, AppQueue: m.AppQueue,
			Interface: m.Interface, Headers: m.Headers, PayloadB64: base64.StdEncoding.EncodeToString(m.Payload), Key: key}
	}
	r := call{method: http.MethodPost, path: "/v1/messages", replayable: replayable}
	if len(msgs) == 1 && keys[0] != "" && strings.Trim(keys[0], " \t") == keys[0] {
		// A header's value loses the spaces around it; a key with
		// such spaces goes in the body.
		r.header = http.Header{"Idempotency-Key": {keys[0]}}
		body.Messages[0].Key = ""
	}
	if prepare {
		r.query = url.Values{"prepare": {"true"}}
	}
	var err error
	if r.body, err = json.Marshal(body); err != nil {
		return nil, err
	}
	a, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	var page struct {
		Items []sentMessage `json:"items"`
	}
	if err := json.Unmarshal(a.body, &page); err != nil {
		return nil, fmt.Errorf("queuectl server %s: unreadable answer to a send: %w", c.target, err)
	}
	if len(page.Items) != len(msgs) {
		return nil, fmt.Errorf("queuectl server %s: answered %d messages for a send of %d", c.target, len(page.Items), len(msgs))
	}
	out := make([]Sent, len(msgs))
	for i, it := range page.Items {
		out[i] = Sent{ID: it.ID, Key: keys[i], Status: it.Status, Queue: it.Queue, CreatedAt: it.CreatedAt,
			// A repeat of one message is answered 200 rather than 201.
			Duplicate: it.Duplicate || (len(msgs) == 1 && a.status == http.StatusOK),
			Attempts:  a.attempts}
	}
	return out, nil
}
