package client

import (
	"math/rand/v2"
	"time"
)

// RetryPolicy says how often, and how patiently, a call is tried again when
// it got no answer (the server could not be reached, the connection broke)
// or a 5xx answer. An answer that refuses the call (4xx) is never retried,
// and no attempt starts after the call's context ended — nor a wait that
// would outlast its deadline.
//
// What may be retried is what cannot happen twice: a message sent with a
// key (the server answers a repeat with the message it stored, as a
// duplicate), and Commit and Rollback, which apply to a prepared message at
// most once. A message without a key gets one from the client unless
// WithoutGeneratedKeys was given; without a key, a send is retried only
// when its request surely never reached the server.
//
// The zero value is the default policy: 4 attempts, 100ms before the
// second, doubling up to 5s, each wait chosen at random between half of
// that and all of it, so that many producers that failed together do not
// come back together.
type RetryPolicy struct {
	// MaxAttempts is how many times a call is made at most, the first
	// included; 1 never retries. 0 means 4.
	MaxAttempts int
	// InitialBackoff is the wait before the second attempt; 0 means 100ms.
	InitialBackoff time.Duration
	// MaxBackoff bounds every wait; 0 means 5s.
	MaxBackoff time.Duration
}

// NoRetry is the policy of a client that makes every call once.
func NoRetry() RetryPolicy { return RetryPolicy{MaxAttempts: 1} }

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = 4
	}
	if p.InitialBackoff == 0 {
		p.InitialBackoff = 100 * time.Millisecond
	}
	if p.MaxBackoff == 0 {
		p.MaxBackoff = 5 * time.Second
	}
	return p
}

func (p RetryPolicy) check() error {
	if p.MaxAttempts < 1 || p.InitialBackoff < 0 || p.MaxBackoff < 0 {
		return invalidf("retry policy %+v: attempts must be at least 1 and waits not negative", p)
	}
	return nil
}

// backoff is the wait after the failed attempt n (1-based).
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.InitialBackoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}
