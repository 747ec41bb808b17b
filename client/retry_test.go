package client_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/client/internal/require"

	"github.com/queuectl/queuectl/client"
)

// waitLog records the waits between attempts, and waits for none of them.
type waitLog struct {
	mu    sync.Mutex
	waits []time.Duration
	// then, if set, runs at each wait.
	then func(n int)
}

func (w *waitLog) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.waits = append(w.waits, d)
	n := len(w.waits)
	w.mu.Unlock()
	if w.then != nil {
		w.then(n)
	}
	return ctx.Err()
}

func (w *waitLog) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.waits...)
}

func TestRetryAfterUnavailable(t *testing.T) {
	t.Parallel()
	s := serveT(t, serveOptions{})
	p := newProxy(t, s, unavailableOnce)
	var waits waitLog
	c, err := client.New(p.url, client.WithToken(producerToken), client.WithSleep(waits.sleep))
	require.NoError(t, err)

	sent, err := c.Send(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}})
	require.NoError(t, err)
	require.Equal(t, 2, sent.Attempts)
	require.NotNil(t, s.message(t, sent.ID))
	require.Len(t, s.messagesOf(t, "SHOP"), 1)
	reqs := p.requests()
	require.Len(t, reqs, 2)
	require.Equal(t, sent.Key, reqs[1].header.Get("Idempotency-Key"), "the retry names the message by the same key")
	require.Equal(t, reqs[0].header.Get("Idempotency-Key"), reqs[1].header.Get("Idempotency-Key"))
	require.Equal(t, string(reqs[0].body), string(reqs[1].body))
	w := waits.all()
	require.Len(t, w, 1)
	require.GreaterOrEqual(t, w[0], 50*time.Millisecond, "the default first wait is 100ms, less at most half")
	require.LessOrEqual(t, w[0], 100*time.Millisecond)
}

func TestRetryGivesUp(t *testing.T) {
	t.Parallel()
	s := serveT(t, serveOptions{})
	p := newProxy(t, s, alwaysUnavailable)
	var waits waitLog
	policy := client.RetryPolicy{MaxAttempts: 5, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 30 * time.Millisecond}
	c, err := client.New(p.url, client.WithToken(producerToken), client.WithRetry(policy), client.WithSleep(waits.sleep))
	require.NoError(t, err)

	_, err = c.Send(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}})
	require.ErrorIs(t, err, client.ErrUnavailable)
	var apiErr *client.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
	require.Equal(t, "the store is unreachable", apiErr.Message)
	require.Contains(t, err.Error(), "after 5 attempts")
	require.Len(t, p.requests(), 5)

	// Each wait doubles, at random between half of it and all of it, up
	// to the bound.
	w := waits.all()
	require.Len(t, w, 4)
	for i, max := range []time.Duration{10, 20, 30, 30} {
		max *= time.Millisecond
		require.GreaterOrEqual(t, w[i], max/2, "wait %d", i)
		require.LessOrEqual(t, w[i], max, "wait %d", i)
	}

	// NoRetry tries once.
	c, err = client.New(p.url, client.WithToken(producerToken), client.WithRetry(client.NoRetry()), client.WithSleep(waits.sleep))
	require.NoError(t, err)
	_, err = c.Send(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}})
	require.ErrorIs(t, err, client.ErrUnavailable)
	require.Len(t, p.requests(), 6)

	_, err = client.New(p.url, client.WithRetry(client.RetryPolicy{MaxAttempts: -1}))
	require.ErrorIs(t, err, client.ErrInvalid)
}

// TestNoRetryWithoutKey: a send without a key whose answer was lost may
// have been stored, so it is not sent again — unless it surely never left.
func TestNoRetryWithoutKey(t *testing.T) {
	t.Parallel()
	s := serveT(t, serveOptions{})
	m := client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}}

	for _, f := range []fault{lostAnswerOnce, unavailableOnce} {
		p := newProxy(t, s, f)
		var waits waitLog
		c, err := client.New(p.url, client.WithToken(producerToken), client.WithoutGeneratedKeys(), client.WithSleep(waits.sleep))
		require.NoError(t, err)
		_, err = c.Send(context.Background(), m)
		require.ErrorIs(t, err, client.ErrUnavailable)
		require.Len(t, p.requests(), 1)
		require.Empty(t, p.requests()[0].header.Get("Idempotency-Key"))
		require.Empty(t, waits.all())
	}
	require.Len(t, s.messagesOf(t, "SHOP"), 1, "the answer lost was the answer to a stored message")

	// A refusal is final, key or not.
	p := newProxy(t, s, nil)
	var waits waitLog
	c, err := client.New(p.url, client.WithToken(producerToken), client.WithSleep(waits.sleep))
	require.NoError(t, err)
	_, err = c.Send(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP!", Receivers: []string{"WMS"}})
	require.ErrorIs(t, err, client.ErrInvalid)
	require.Len(t, p.requests(), 1)
	require.Empty(t, waits.all())
}

// TestRetryNotSent: a request that could not even connect is tried again,
// key or not: nothing can have been stored.
func TestRetryNotSent(t *testing.T) {
	t.Parallel()
	s := serveT(t, serveOptions{})
	dir, err := os.MkdirTemp("", "qc")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "later.sock")
	// The socket appears while the client waits to try again.
	waits := waitLog{then: func(int) {
		require.NoError(t, os.Symlink(strings.TrimPrefix(s.socket, "unix://"), sock))
	}}
	c, err := client.New("unix://"+sock, client.WithoutGeneratedKeys(), client.WithSleep(waits.sleep))
	require.NoError(t, err)

	sent, err := c.Send(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}})
	require.NoError(t, err)
	require.Equal(t, 2, sent.Attempts)
	require.Empty(t, sent.Key)
	require.Len(t, waits.all(), 1)
	require.Len(t, s.messagesOf(t, "SHOP"), 1)

	// No server at all: the error says so, after every attempt.
	c, err = client.New("unix://"+filepath.Join(dir, "never.sock"), client.WithSleep((&waitLog{}).sleep))
	require.NoError(t, err)
	_, err = c.Send(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}})
	require.ErrorIs(t, err, client.ErrUnavailable)
	require.Contains(t, err.Error(), "no answer after 4 attempts")
	require.Contains(t, err.Error(), "never.sock")
}

// TestTxRetry: a commit or rollback whose answer was lost is made again,
// and the repeat, which finds the message committed or gone, succeeds.
func TestTxRetry(t *testing.T) {
	t.Parallel()
	s := serveT(t, serveOptions{})
	direct := s.client(t)
	ctx := context.Background()
	m := client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}}

	for _, f := range []fault{lostAnswerOnce, unavailableOnce} {
		// The first attempts of the commit and of the rollback fail.
		p := newProxy(t, s, func(n int, w http.ResponseWriter, r *http.Request, forward http.HandlerFunc) bool {
			if n == 3 {
				n = 1
			}
			return f(n, w, r, forward)
		})
		c, err := client.New(p.url, client.WithToken(producerToken), client.WithoutGeneratedKeys(), client.WithSleep((&waitLog{}).sleep))
		require.NoError(t, err)

		commit, err := direct.Prepare(ctx, m)
		require.NoError(t, err)
		require.NoError(t, c.Commit(ctx, commit.ID))
		require.NotEqual(t, "PEND", s.message(t, commit.ID).Status, "committed")

		rollback, err := direct.Prepare(ctx, m)
		require.NoError(t, err)
		require.NoError(t, c.Rollback(ctx, rollback.ID))
		require.Nil(t, s.message(t, rollback.ID))
		require.Len(t, p.requests(), 4)
	}
}

func TestContext(t *testing.T) {
	t.Parallel()
	s := serveT(t, serveOptions{})
	m := client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}}

	// The caller gives up while the server has not answered: the call
	// ends at once, and is not made again.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newProxy(t, s, func(_ int, _ http.ResponseWriter, r *http.Request, _ http.HandlerFunc) bool {
		cancel()
		<-r.Context().Done() // the client hung up
		return true
	})
	var waits waitLog
	c, err := client.New(p.url, client.WithToken(producerToken), client.WithSleep(waits.sleep))
	require.NoError(t, err)
	_, err = c.Send(ctx, m)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, p.requests(), 1)
	require.Empty(t, waits.all())

	// A deadline passed: nothing is sent.
	p = newProxy(t, s, nil)
	c, err = client.New(p.url, client.WithToken(producerToken), client.WithSleep(waits.sleep))
	require.NoError(t, err)
	past, cancelPast := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelPast()
	_, err = c.Send(past, m)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Empty(t, p.requests())

	// A wait that would outlast the deadline is not waited: the call
	// ends with the failure it had.
	p = newProxy(t, s, alwaysUnavailable)
	c, err = client.New(p.url, client.WithToken(producerToken), client.WithSleep(waits.sleep),
		client.WithRetry(client.RetryPolicy{InitialBackoff: time.Hour, MaxBackoff: time.Hour}))
	require.NoError(t, err)
	soon, cancelSoon := context.WithTimeout(context.Background(), time.Minute)
	defer cancelSoon()
	_, err = c.Send(soon, m)
	require.ErrorIs(t, err, client.ErrUnavailable)
	require.Len(t, p.requests(), 1)
	require.Empty(t, waits.all())

	// A caller that gives up while the client waits to try again.
	p = newProxy(t, s, alwaysUnavailable)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	waits = waitLog{then: func(int) { cancel() }}
	c, err = client.New(p.url, client.WithToken(producerToken), client.WithSleep(waits.sleep))
	require.NoError(t, err)
	_, err = c.Send(ctx, m)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, errors.Is(err, client.ErrUnavailable))
	require.Len(t, p.requests(), 1)
}
