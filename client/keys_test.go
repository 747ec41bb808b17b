package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/client/internal/require"

	"github.com/queuectl/queuectl/client"
)

// The tests of this file hold the server to its idempotency keys: a message
// sent again with its key is answered with the message stored first, as a
// duplicate (HTTP 200), and a different message under the same key is a
// conflict (HTTP 409).

func TestKeys(t *testing.T) {
	t.Parallel()
	forEachStore(t, "", func(t *testing.T, s *server) {
		c := s.client(t)
		ctx := context.Background()
		order := client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}, Key: "order-4711",
			Payload: []byte(`<order id="4711"/>`)}

		first, err := c.Send(ctx, order)
		require.NoError(t, err)
		require.False(t, first.Duplicate)
		require.Equal(t, "order-4711", first.Key)
		require.Equal(t, "order-4711", s.message(t, first.ID).Key, "the server keeps the key with its message")

		again, err := c.Send(ctx, order)
		require.NoError(t, err)
		require.True(t, again.Duplicate)
		require.Equal(t, first.ID, again.ID, "a repeat answers with the message stored first")
		require.Equal(t, 1, again.Attempts)
		require.Len(t, s.messagesOf(t, "SHOP"), 1, "a repeat stores nothing")

		// A key names one message of one sender: another sender's is
		// its own.
		other := order
		other.Sender = "POS"
		sent, err := c.Send(ctx, other)
		require.NoError(t, err)
		require.False(t, sent.Duplicate)
		require.NotEqual(t, first.ID, sent.ID)

		// A different message under the key is a conflict, whatever
		// differs.
		for name, change := range map[string]func(m *client.Message){
			"payload":  func(m *client.Message) { m.Payload = []byte(`<order id="4711" qty="2"/>`) },
			"receiver": func(m *client.Message) { m.Receivers = []string{"ARCHIVE"} },
			"qos":      func(m *client.Message) { m.QoS, m.AppQueue = client.EOIO, "ORDERS" },
		} {
			m := order
			change(&m)
			_, err := c.Send(ctx, m)
			require.ErrorIs(t, err, client.ErrConflict, name)
			var apiErr *client.APIError
			require.ErrorAs(t, err, &apiErr, name)
			require.Equal(t, http.StatusConflict, apiErr.StatusCode, name)
		}
		require.Len(t, s.messagesOf(t, "SHOP"), 1)

		// Prepare takes keys too: a repeat is the PEND message.
		tx := client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}, Key: "order-4712"}
		prepared, err := c.Prepare(ctx, tx)
		require.NoError(t, err)
		again, err = c.Prepare(ctx, tx)
		require.NoError(t, err)
		require.True(t, again.Duplicate)
		require.Equal(t, prepared.ID, again.ID)
		require.Equal(t, client.StatusPEND, again.Status)
	})
}

func TestKeysInBatch(t *testing.T) {
	t.Parallel()
	forEachStore(t, "", func(t *testing.T, s *server) {
		c := s.client(t)
		ctx := context.Background()
		msg := func(key, payload string) client.Message {
			return client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}, Key: key, Payload: []byte(payload)}
		}

		first, err := c.SendBatch(ctx, []client.Message{msg("a", "1"), msg("b", "2")})
		require.NoError(t, err)
		sent, err := c.SendBatch(ctx, []client.Message{msg("b", "2"), msg("c", "3")})
		require.NoError(t, err)
		require.True(t, sent[0].Duplicate)
		require.Equal(t, first[1].ID, sent[0].ID)
		require.False(t, sent[1].Duplicate)
		require.Len(t, s.messagesOf(t, "SHOP"), 3)

		_, err = c.SendBatch(ctx, []client.Message{msg("d", "4"), msg("a", "changed")})
		require.ErrorIs(t, err, client.ErrConflict)
		require.Len(t, s.messagesOf(t, "SHOP"), 3, "a batch with a conflict stores nothing")

		// Messages without keys get keys of their own, each its own.
		sent, err = c.SendBatch(ctx, []client.Message{msg("", "5"), msg("", "6")})
		require.NoError(t, err)
		require.NotEmpty(t, sent[0].Key)
		require.NotEqual(t, sent[0].Key, sent[1].Key)
		for _, s1 := range sent {
			require.Equal(t, s1.Key, s.message(t, s1.ID).Key)
		}
	})
}

// TestKeyGenerated: the key the client makes for a message is the one the
// server keeps.
func TestKeyGenerated(t *testing.T) {
	t.Parallel()
	forEachStore(t, "", func(t *testing.T, s *server) {
		sent, err := s.client(t).Send(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}})
		require.NoError(t, err)
		require.Len(t, sent.Key, 26)
		require.Equal(t, sent.Key, s.message(t, sent.ID).Key)
	})
}

// TestKeyWithSpaces: a key that begins or ends with a space, which a
// header would lose, arrives whole.
func TestKeyWithSpaces(t *testing.T) {
	t.Parallel()
	s := serveT(t, serveOptions{})
	c := s.client(t)
	sent, err := c.Send(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}, Key: " order 1 "})
	require.NoError(t, err)
	require.Equal(t, " order 1 ", s.message(t, sent.ID).Key)
}

// TestRetryReusesKey: a send whose answer was lost is sent again with the
// same key, and the server answers with the message the first attempt
// stored: one message, whatever the network did.
func TestRetryReusesKey(t *testing.T) {
	t.Parallel()
	forEachStore(t, "", func(t *testing.T, s *server) {
		for _, keyed := range []bool{false, true} {
			p := newProxy(t, s, lostAnswerOnce)
			var waits waitLog
			c, err := client.New(p.url, client.WithToken(producerToken), client.WithSleep(waits.sleep))
			require.NoError(t, err)
			sender := "GEN"
			m := client.Message{QoS: client.EO, Sender: sender, Receivers: []string{"WMS"}}
			if keyed {
				sender, m.Sender, m.Key = "OWN", "OWN", "order-1"
			}

			sent, err := c.Send(context.Background(), m)
			require.NoError(t, err)
			require.Equal(t, 2, sent.Attempts)
			require.True(t, sent.Duplicate, "the second attempt found what the first stored")
			stored := s.messagesOf(t, sender)
			require.Len(t, stored, 1, "one message, though it was sent twice")
			require.Equal(t, stored[0].ID, sent.ID)
			reqs := p.requests()
			require.Len(t, reqs, 2)
			require.Equal(t, reqs[0].header.Get("Idempotency-Key"), reqs[1].header.Get("Idempotency-Key"))
			require.Equal(t, sent.Key, reqs[0].header.Get("Idempotency-Key"))
			require.Len(t, waits.all(), 1)
		}
	})
}

// TestRetryReusesKeysInBatch: so does a batch, each message with its own.
func TestRetryReusesKeysInBatch(t *testing.T) {
	t.Parallel()
	forEachStore(t, "", func(t *testing.T, s *server) {
		p := newProxy(t, s, lostAnswerOnce)
		var waits waitLog
		c, err := client.New(p.url, client.WithToken(producerToken), client.WithSleep(waits.sleep))
		require.NoError(t, err)
		batch := []client.Message{
			{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}, Payload: []byte("1")},
			{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}, Payload: []byte("2")},
		}
		sent, err := c.SendBatch(context.Background(), batch)
		require.NoError(t, err)
		require.Len(t, s.messagesOf(t, "SHOP"), 2)
		reqs := p.requests()
		require.Len(t, reqs, 2)
		require.JSONEq(t, string(reqs[0].body), string(reqs[1].body), "the retry is the same request")
		var body struct {
			Messages []struct {
				Key string `json:"key"`
			} `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(reqs[0].body, &body))
		for i := range sent {
			require.True(t, sent[i].Duplicate)
			require.Equal(t, sent[i].Key, body.Messages[i].Key)
			require.False(t, strings.TrimSpace(sent[i].Key) == "")
		}
	})
}
