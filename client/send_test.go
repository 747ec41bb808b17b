package client_test

import (
	"context"
	"testing"

	"github.com/queuectl/queuectl/client/internal/require"

	"github.com/queuectl/queuectl/client"
)

func TestSend(t *testing.T) {
	t.Parallel()
	forEachStore(t, "", func(t *testing.T, s *server) {
		c := s.client(t)
		ctx := context.Background()

		payload := []byte("<order id=\"4711\"/>\x00\xff") // bytes, not text
		sent, err := c.Send(ctx, client.Message{QoS: client.EO, Sender: "ERP", Receivers: []string{"WMS"},
			Interface: "OrderCreate", Headers: map[string]string{"X-Order": "4711"}, Payload: payload})
		require.NoError(t, err)
		require.Regexp(t, uuidV7, sent.ID, "message ids are UUIDv7")
		require.Equal(t, client.StatusTBDL, sent.Status)
		require.NotEmpty(t, sent.Queue)
		require.False(t, sent.CreatedAt.IsZero())
		require.False(t, sent.Duplicate)
		require.Equal(t, 1, sent.Attempts)
		require.NotEmpty(t, sent.Key, "a message without a key gets one, so that retries are safe")

		m := s.message(t, sent.ID)
		require.NotNil(t, m, "the id Send returned is the stored message's")
		require.Equal(t, "ERP", m.Sender)
		require.Equal(t, "OrderCreate", m.Interface)
		require.Equal(t, map[string]string{"X-Order": "4711"}, m.Headers)
		require.Equal(t, payload, s.payload(t, sent.ID), "byte for byte")

		// An empty payload is a payload; EOIO needs its app queue.
		sent, err = c.Send(ctx, client.Message{QoS: client.EOIO, Sender: "ERP", Receivers: []string{"WMS", "ARCHIVE"}, AppQueue: "ORDERS_DE"})
		require.NoError(t, err)
		m = s.message(t, sent.ID)
		require.NotNil(t, m)
		require.Equal(t, "ORDERS_DE", m.AppQueue)
		require.Empty(t, s.payload(t, sent.ID))
	})
}

func TestSendBatch(t *testing.T) {
	t.Parallel()
	forEachStore(t, "", func(t *testing.T, s *server) {
		// Keys in a batch are TestKeysInBatch's.
		c := s.client(t, client.WithoutGeneratedKeys())
		ctx := context.Background()

		// Messages of one app queue keep the order of the batch.
		var batch []client.Message
		for _, p := range []string{"first", "second", "third"} {
			batch = append(batch, client.Message{QoS: client.EOIO, Sender: "ERP", Receivers: []string{"WMS"},
				AppQueue: "ORDERS_AT", Payload: []byte(p)})
		}
		sent, err := c.SendBatch(ctx, batch)
		require.NoError(t, err)
		require.Len(t, sent, 3)
		for i, got := range sent {
			require.Equal(t, string(batch[i].Payload), string(s.payload(t, got.ID)), "answers in the batch's order")
			require.False(t, got.Duplicate)
			require.Empty(t, got.Key)
		}
		require.Less(t, sent[0].ID, sent[1].ID)
		require.Less(t, sent[1].ID, sent[2].ID)

		// A refused message stores none of the batch, and is named by
		// its position.
		batch[1].AppQueue = "orders_at"
		_, err = c.SendBatch(ctx, batch)
		require.ErrorIs(t, err, client.ErrInvalid)
		var apiErr *client.APIError
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, 1, apiErr.Index)
		require.Contains(t, apiErr.Message, "lowercase")
		require.Len(t, s.messagesOf(t, "ERP"), 3, "nothing of the refused batch was stored")

		// A batch of one is a batch: a refusal names its position too.
		_, err = c.SendBatch(ctx, batch[1:2])
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, 0, apiErr.Index)

		none, err := c.SendBatch(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, none)
	})
}
