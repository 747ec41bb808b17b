package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// maxAnswer bounds the body of an answer the client reads: the stored
// messages of a large batch, as JSON.
const maxAnswer = 256 << 20

// call is one API request, which the client may make more than once.
type call struct {
	method, path string
	query        url.Values
	body         []byte
	header       http.Header
	// replayable: making the request again cannot do anything twice.
	replayable bool
}

// answer is a 2xx answer to a call.
type answer struct {
	status int
	body   []byte
	// attempts is how many requests the call took.
	attempts int
	// repeated: an earlier attempt may have reached the server and acted
	// before it failed.
	repeated bool
}

// do makes the call, again after a failure while the retry policy and
// the context allow.
func (c *Client) do(ctx context.Context, r call) (answer, error) {
	repeated := false
	for n := 1; ; n++ {
		a, sent, err := c.attempt(ctx, r)
		if err == nil {
			a.attempts, a.repeated = n, repeated
			return a, nil
		}
		if ctx.Err() != nil {
			return answer{}, fmt.Errorf("queuectl server %s: %w", c.target, context.Cause(ctx))
		}
		if !retryable(err, sent, r.replayable) || n >= c.retry.MaxAttempts {
			return answer{}, c.final(err, n)
		}
		repeated = repeated || sent
		wait := c.retry.backoff(n)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			// Waiting would only meet the deadline: the failure is the news.
			return answer{}, c.final(err, n)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return answer{}, fmt.Errorf("queuectl server %s: %w", c.target, context.Cause(ctx))
		}
	}
}

// final is the error a call ends with after n attempts.
func (c *Client) final(err error, n int) error {
	var ae *APIError
	switch {
	case errors.As(err, &ae) && n > 1:
		return fmt.Errorf("after %d attempts: %w", n, err)
	case errors.As(err, &ae):
		return err
	case isTLS(err):
		return fmt.Errorf("queuectl server %s: %w", c.target, err)
	}
	return &unavailable{target: c.target, attempts: n, err: err}
}

// attempt makes one request. sent reports whether the request may have
// reached the server: false only when no connection could be made.
func (c *Client) attempt(ctx context.Context, r call) (a answer, sent bool, err error) {
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return answer{}, false, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.agent)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, !notSent(err), unwrapURL(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return answer{}, true, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return answer{}, true, apiError(resp.StatusCode, raw)
	}
	if len(raw) > maxAnswer {
		return answer{}, true, fmt.Errorf("the answer is longer than %d MiB", maxAnswer>>20)
	}
	return answer{status: resp.StatusCode, body: raw}, true, nil
}

// retryable reports whether a failed attempt may be made again: a 5xx
// answer or no answer at all, when repeating the call cannot do anything
// twice or the request never left.
func retryable(err error, sent, replayable bool) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return replayable && ae.StatusCode >= 500
	}
	if isTLS(err) {
		return false // a certificate does not become trusted by asking again
	}
	return replayable || !sent
}

// notSent reports whether a transport error happened before any byte of
// the request could reach the server: the connection was refused, the
// socket is not there, the host has no address.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && !op.Timeout() {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	var dns *net.DNSError
	return errors.As(err, &dns) && dns.IsNotFound
}

// isTLS reports whether err is the server's certificate being refused.
func isTLS(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &verify) || errors.As(err, &unknownCA) || errors.As(err, &host) || errors.As(err, &invalid)
}

// unwrapURL drops the "Post URL:" that net/http puts before a transport
// error: the errors the client returns name the target already.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
