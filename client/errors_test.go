package client_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/client/internal/require"

	"github.com/queuectl/queuectl/client"
)

// kinds are the sentinels, for checking that an error is of one kind only.
var kinds = map[string]error{
	"ErrInvalid": client.ErrInvalid, "ErrTooLarge": client.ErrTooLarge, "ErrNotFound": client.ErrNotFound,
	"ErrConflict": client.ErrConflict, "ErrUnauthorized": client.ErrUnauthorized, "ErrForbidden": client.ErrForbidden,
	"ErrUnavailable": client.ErrUnavailable,
}

// requireKinds checks that err is of the kinds named, and of no other.
func requireKinds(t *testing.T, err error, want ...error) {
	t.Helper()
	require.Error(t, err)
	for name, kind := range kinds {
		is := false
		for _, w := range want {
			is = is || w == kind
		}
		require.Equal(t, is, errors.Is(err, kind), "errors.Is(%v, %s)", err, name)
	}
}

// requireAPIError checks that err is an error answer with this status and
// code, and returns it.
func requireAPIError(t *testing.T, err error, status int, code string) *client.APIError {
	t.Helper()
	var apiErr *client.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, status, apiErr.StatusCode)
	require.Equal(t, code, apiErr.Code)
	require.NotEmpty(t, apiErr.Message)
	return apiErr
}

func TestErrors(t *testing.T) {
	t.Parallel()
	forEachStore(t, "engine: {max_payload: 1KiB}\n", func(t *testing.T, s *server) {
		c := s.client(t)
		ctx := context.Background()
		m := client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}}

		bad := m
		bad.QoS, bad.AppQueue = client.EOIO, ""
		_, err := c.Send(ctx, bad)
		requireKinds(t, err, client.ErrInvalid)
		apiErr := requireAPIError(t, err, http.StatusBadRequest, "invalid")
		require.Equal(t, -1, apiErr.Index, "a Send's refusal is not about a position")
		require.Contains(t, apiErr.Message, "app queue")
		require.True(t, strings.HasPrefix(err.Error(), "queuectl server: "), err.Error())
		require.True(t, strings.HasSuffix(err.Error(), "(HTTP 400)"), err.Error())

		big := m
		big.Payload = make([]byte, 2<<10)
		_, err = c.Send(ctx, big)
		requireKinds(t, err, client.ErrTooLarge, client.ErrInvalid)
		requireAPIError(t, err, http.StatusRequestEntityTooLarge, "too_large")

		// Tokens: none, one the server does not know, one whose role
		// may not send.
		for _, token := range []string{"", "no-such-token"} {
			anon, err := client.New(s.url, client.WithToken(token))
			require.NoError(t, err)
			_, err = anon.Send(ctx, m)
			requireKinds(t, err, client.ErrUnauthorized)
			requireAPIError(t, err, http.StatusUnauthorized, "unauthorized")
		}
		monitor, err := client.New(s.url, client.WithToken(monitorToken))
		require.NoError(t, err)
		_, err = monitor.Send(ctx, m)
		requireKinds(t, err, client.ErrForbidden)
		apiErr = requireAPIError(t, err, http.StatusForbidden, "forbidden")
		require.Contains(t, apiErr.Message, "producer")
		requireKinds(t, monitor.Commit(ctx, newID()), client.ErrForbidden)

		// Ends of a transaction that cannot be.
		unknown := newID()
		err = c.Commit(ctx, unknown)
		requireKinds(t, err, client.ErrNotFound)
		require.Contains(t, err.Error(), unknown)
		requireKinds(t, c.Rollback(ctx, unknown), client.ErrNotFound)
		err = c.Commit(ctx, "4711")
		requireKinds(t, err, client.ErrInvalid)
		requireAPIError(t, err, http.StatusBadRequest, "invalid")
		requireKinds(t, c.Commit(ctx, ""), client.ErrInvalid)

		sent, err := c.Prepare(ctx, m)
		require.NoError(t, err)
		require.Equal(t, client.StatusPEND, sent.Status)
		require.NoError(t, c.Commit(ctx, sent.ID))
		require.NoError(t, c.Commit(ctx, sent.ID), "a message committed already is committed")
		err = c.Rollback(ctx, sent.ID)
		requireKinds(t, err, client.ErrConflict)
		require.Contains(t, err.Error(), "needs PEND")
		var notAPI *client.APIError
		require.False(t, errors.As(err, &notAPI), "the server answered; the action did not apply")

		sent, err = c.Prepare(ctx, m)
		require.NoError(t, err)
		require.NoError(t, c.Rollback(ctx, sent.ID))
		requireKinds(t, c.Rollback(ctx, sent.ID), client.ErrNotFound)
		requireKinds(t, c.Commit(ctx, sent.ID), client.ErrNotFound)
	})
}

// TestKeyChecked: a key the server would refuse is refused before anything
// is sent — one with a line break could not even be a header.
func TestKeyChecked(t *testing.T) {
	t.Parallel()
	s := serveT(t, serveOptions{})
	p := newProxy(t, s, nil)
	c, err := client.New(p.url, client.WithToken(producerToken))
	require.NoError(t, err)
	ctx := context.Background()
	for _, key := range []string{"order\n4711", "order\x004711", "\x7f", strings.Repeat("k", 129), "\xff"} {
		_, err := c.Send(ctx, client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}, Key: key})
		requireKinds(t, err, client.ErrInvalid)
		require.Contains(t, err.Error(), "key")
		_, err = c.SendBatch(ctx, []client.Message{
			{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}},
			{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}, Key: key},
		})
		requireKinds(t, err, client.ErrInvalid)
		require.Contains(t, err.Error(), "message 1 of the batch")
	}
	require.Empty(t, p.requests())
}

func TestAPIErrorKinds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  client.APIError
		want []error
	}{
		{client.APIError{StatusCode: 400, Code: "invalid"}, []error{client.ErrInvalid}},
		{client.APIError{StatusCode: 413, Code: "too_large"}, []error{client.ErrTooLarge, client.ErrInvalid}},
		{client.APIError{StatusCode: 404, Code: "not_found"}, []error{client.ErrNotFound}},
		{client.APIError{StatusCode: 409, Code: "conflict"}, []error{client.ErrConflict}},
		{client.APIError{StatusCode: 401, Code: "unauthorized"}, []error{client.ErrUnauthorized}},
		{client.APIError{StatusCode: 403, Code: "forbidden"}, []error{client.ErrForbidden}},
		{client.APIError{StatusCode: 503, Code: "unavailable"}, []error{client.ErrUnavailable}},
		{client.APIError{StatusCode: 500, Code: "internal"}, nil},
		// Answers without the API's body, as a proxy gives them.
		{client.APIError{StatusCode: 502}, []error{client.ErrUnavailable}},
		{client.APIError{StatusCode: 504}, []error{client.ErrUnavailable}},
		{client.APIError{StatusCode: 413}, []error{client.ErrTooLarge, client.ErrInvalid}},
		{client.APIError{StatusCode: 404}, []error{client.ErrNotFound}},
		{client.APIError{StatusCode: 418}, nil},
		// A code the client does not know is no kind it knows.
		{client.APIError{StatusCode: 400, Code: "rate_limited"}, nil},
	} {
		requireKinds(t, &c.err, c.want...)
	}
	require.Equal(t, "queuectl server: 502 Bad Gateway (HTTP 502)", (&client.APIError{StatusCode: 502, Index: -1}).Error())
	require.Equal(t, "queuectl server: message 2 of the batch: lowercase (HTTP 400)",
		(&client.APIError{StatusCode: 400, Message: "lowercase", Index: 2}).Error())
}
