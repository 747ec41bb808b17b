package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Commit commits a prepared message (PEND → TBDL), the last step of a
// transactional send: from now on it is delivered, and an EOIO message
// takes its place in its queue's order now. Commit succeeds when the
// message is committed already — by an earlier attempt, by the server
// after a check-back answered TxCommit, or by an operator: either way it is
// on its way. A message rolled back is ErrNotFound.
func (c *Client) Commit(ctx context.Context, id string) error {
	return c.endTx(ctx, "tx.commit", id)
}

// Rollback deletes a prepared message, which is then never delivered. A
// message committed already is ErrConflict; one that does not exist is
// ErrNotFound — unless an earlier attempt of this call may have deleted it.
func (c *Client) Rollback(ctx context.Context, id string) error {
	return c.endTx(ctx, "tx.rollback", id)
}

// bulkResult is the answer to an action.
type bulkResult struct {
	Changed int `json:"changed"`
	Skipped []struct {
		ID     string `json:"id"`
		Status Status `json:"status"`
		Reason string `json:"reason"`
	} `json:"skipped"`
	NotFound []string `json:"not_found"`
}

// txError is an action that the server did not apply to the message.
type txError struct {
	id, reason string
	kind       error
}

func (e *txError) Error() string        { return fmt.Sprintf("message %s: %s", e.id, e.reason) }
func (e *txError) Is(target error) bool { return target == e.kind }

// endTx applies tx.commit or tx.rollback to one message. Either applies at
// most once, so it is retried whatever the key policy.
func (c *Client) endTx(ctx context.Context, action, id string) error {
	if id == "" {
		return invalidf("%s needs a message id", action)
	}
	b, err := json.Marshal(map[string][]string{"targets": {id}})
	if err != nil {
		return err
	}
	a, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/actions/" + action, body: b, replayable: true})
	if err != nil {
		return err
	}
	var res bulkResult
	if err := json.Unmarshal(a.body, &res); err != nil {
		return fmt.Errorf("queuectl server %s: unreadable answer to %s: %w", c.target, action, err)
	}
	switch {
	case res.Changed > 0:
		return nil
	case len(res.NotFound) > 0:
		if action == "tx.rollback" && a.repeated {
			return nil // the attempt whose answer was lost deleted it
		}
		return &txError{id: id, reason: "not found: rolled back, or never prepared", kind: ErrNotFound}
	case len(res.Skipped) > 0:
		// A message leaves PEND only when it is committed.
		if action == "tx.commit" {
			return nil
		}
		return &txError{id: id, reason: res.Skipped[0].Reason, kind: ErrConflict}
	}
	return fmt.Errorf("queuectl server %s: %s of message %s changed nothing, skipped nothing and found nothing", c.target, action, id)
}
