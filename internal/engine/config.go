package engine

import (
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/receiver"
)

// Config is what the engine needs of queuectl's configuration (§8).
type Config struct {
	Role domain.Role
	// NodeID names the node; default hostname-pid.
	NodeID string
	// Address is where the node serves its API, for `node list`.
	Address string
	// Workers bounds the deliveries in flight at once, over all queues.
	Workers int
	// EOWindow bounds the deliveries in flight at once of one EO queue.
	EOWindow int
	// PollInterval is how often the engine claims at least, while it may
	// have ready messages (engine.poll_interval): wake-ups are hints.
	PollInterval    time.Duration
	Retry           Retry
	Blacklisting    Blacklisting
	Retention       Retention
	ShutdownTimeout time.Duration
	// Routes are the routing rules of §8.
	Routes []placement.Rule
	// Heartbeat is how often the node tells the store it is alive, and
	// LeaseTTL how long a silent node keeps its queues (§11).
	Heartbeat time.Duration
	LeaseTTL  time.Duration
	// Tx is the check-back of transactional sends (§9).
	Tx Tx
}

// Tx is how the engine checks back with the producers of prepared
// messages (§9): tx and senders.<name>.check_url in the configuration.
type Tx struct {
	// After, Interval, MaxChecks and Timeout are tx.check_after,
	// tx.check_interval, tx.max_checks and tx.check_timeout.
	After     time.Duration
	Interval  time.Duration
	MaxChecks int
	Timeout   time.Duration
	// CheckURLs are the senders' check_url, by sender.
	CheckURLs map[string]string
}

// Retry is the retry policy for transient errors.
type Retry struct {
	Count       int
	Interval    time.Duration
	Exponential bool
	MaxInterval time.Duration
}

// Blacklisting is engine.blacklisting (§4).
type Blacklisting struct {
	Enabled bool
	Crashes int
}

// Retention says how long final messages and audit entries are kept.
type Retention struct {
	Delivered, Failed, Audit time.Duration
}

// ConfigOf takes the engine's part of queuectl's configuration.
func ConfigOf(c *config.Config) (Config, error) {
	role, err := domain.ParseRole(c.Engine.Role)
	if err != nil {
		return Config{}, err
	}
	return Config{
		Role:         role,
		NodeID:       c.Engine.NodeID,
		Workers:      c.Engine.Workers,
		EOWindow:     c.Engine.EOWindow,
		PollInterval: c.Engine.PollInterval,
		Retry: Retry{Count: c.Engine.Retry.Count, Interval: c.Engine.Retry.Interval,
			Exponential: c.Engine.Retry.Backoff == "exponential", MaxInterval: c.Engine.Retry.MaxInterval},
		Blacklisting: Blacklisting{Enabled: c.Engine.Blacklisting.Enabled, Crashes: c.Engine.Blacklisting.Crashes},
		Retention: Retention{Delivered: c.Engine.Retention.Delivered, Failed: c.Engine.Retention.Failed,
			Audit: c.Engine.Retention.Audit},
		ShutdownTimeout: c.Engine.ShutdownTimeout,
		Routes:          c.RoutingRules(),
		Heartbeat:       c.Cluster.Heartbeat,
		LeaseTTL:        c.Cluster.LeaseTTL,
		Tx:              txOf(c),
	}, nil
}

// txOf takes the check-back's part of the configuration.
func txOf(c *config.Config) Tx {
	urls := make(map[string]string, len(c.Senders))
	for name, s := range c.Senders {
		if s.CheckURL != "" {
			urls[name] = s.CheckURL
		}
	}
	return Tx{After: c.Tx.CheckAfter, Interval: c.Tx.CheckInterval, MaxChecks: c.Tx.MaxChecks,
		Timeout: c.Tx.CheckTimeout, CheckURLs: urls}
}

// check fills in what a zero Config leaves open and refuses what cannot run.
func (c *Config) check() error {
	if c.Role == "" {
		c.Role = domain.RoleCentral
	}
	if c.Workers < 1 {
		c.Workers = 1
	}
	if c.EOWindow < 1 {
		c.EOWindow = 1
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = time.Second
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 10 * time.Second
	}
	if c.Tx.After <= 0 {
		c.Tx.After = 30 * time.Second
	}
	if c.Tx.Interval <= 0 {
		c.Tx.Interval = 30 * time.Second
	}
	if c.Tx.MaxChecks < 1 {
		c.Tx.MaxChecks = 10
	}
	if c.Tx.Timeout <= 0 {
		c.Tx.Timeout = 10 * time.Second
	}
	if c.Blacklisting.Enabled && c.Blacklisting.Crashes < 1 {
		return fmt.Errorf("engine: blacklisting needs crashes ≥ 1, not %d", c.Blacklisting.Crashes)
	}
	return nil
}

// storeTimeout is the deadline of one store call of the engine: a hung
// connection fails the call instead of freezing the engine or its shutdown.
// A call that takes longer than the lease is of no use anyway.
func (c Config) storeTimeout() time.Duration {
	return max(c.LeaseTTL, 5*time.Second)
}

// retryIn is how long after failed attempt n attempt n+1 waits:
// engine.retry.interval, doubled per attempt up to max_interval with
// exponential backoff.
func (r Retry) retryIn(attempts int) time.Duration {
	wait := r.Interval
	if r.Exponential {
		for i := 1; i < attempts && (r.MaxInterval <= 0 || wait < r.MaxInterval); i++ {
			wait *= 2
		}
		if r.MaxInterval > 0 && wait > r.MaxInterval {
			wait = r.MaxInterval
		}
	}
	return wait
}

// Configured builds an engine on st from queuectl's configuration: its
// engine part (ConfigOf) and its receivers. opts.Config.NodeID, when set,
// names the node instead of engine.node_id.
func Configured(st Store, c *config.Config, opts Options) (*Engine, error) {
	cfg, err := ConfigOf(c)
	if err != nil {
		return nil, err
	}
	if opts.Config.NodeID != "" {
		cfg.NodeID = opts.Config.NodeID
	}
	cfg.Address = opts.Config.Address
	receivers, err := receiver.Build(c.Receivers)
	if err != nil {
		return nil, err
	}
	opts.Store, opts.Config, opts.Receivers = st, cfg, receivers
	return New(opts)
}
