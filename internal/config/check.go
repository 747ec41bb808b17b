package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// Problems are the problems of a configuration, each naming its key. As an
// error it reads as the first one, and its hint says how many more there
// are; `config check` lists them all.
type Problems []error

func (p Problems) Error() string { return p[0].Error() }

// Unwrap gives the problems, each an error of kind invalid.
func (p Problems) Unwrap() []error { return p }

// Hint is the first problem's hint, or where to see every problem.
func (p Problems) Hint() string {
	if len(p) > 1 {
		return fmt.Sprintf("%d more problem(s): 'queuectl config check' lists every one", len(p)-1)
	}
	return domain.HintOf(p[0])
}

// Validate checks everything a typo would otherwise carry into a running
// engine: values in range, receivers complete, routes to receivers that
// exist, names that are names. Every command runs it when it reads the
// configuration, so serve refuses to start on what config check reports.
func (c *Config) Validate() error {
	ps := Problems(slices.Clone(c.unknown))
	add := func(err error) {
		if err != nil {
			ps = append(ps, err)
		}
	}
	if _, err := domain.ParseRole(c.Engine.Role); err != nil {
		add(err)
	}
	for _, r := range c.ranges() {
		if !r.ok {
			add(domain.Invalidf("%s", r.what))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Receivers)) {
		add(c.Receivers[name].validate(name))
	}
	for i, r := range c.Routes {
		for _, err := range c.checkRoute(i, r) {
			add(err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Senders)) {
		add(checkSender(name, c.Senders[name]))
	}
	add(validateTokens(c.Server.Tokens))
	for _, name := range slices.Sorted(maps.Keys(c.Contexts)) {
		if ctx := c.Contexts[name]; ctx.Server != "" && ctx.Store != "" {
			add(domain.Invalidf("contexts.%s: server and store exclude each other: a context talks to a server or works on a store", name))
		}
	}
	if c.Context != "" {
		if _, ok := c.Contexts[c.Context]; !ok {
			add(c.UndefinedContext("context", c.Context))
		}
	}
	if c.CurrentContext != "" {
		if _, ok := c.Contexts[c.CurrentContext]; !ok {
			add(c.UndefinedContext("current_context", c.CurrentContext))
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// rangeCheck is one value's rule: ok, or what is wrong, naming the key.
type rangeCheck struct {
	ok   bool
	what string
}

// ranges are the rules of the values of §8.
func (c *Config) ranges() []rangeCheck {
	e := c.Engine
	positive := func(key string, d time.Duration) rangeCheck {
		return rangeCheck{d > 0, fmt.Sprintf("%s %s must be more than 0", key, d)}
	}
	notNegative := func(key string, d time.Duration) rangeCheck {
		return rangeCheck{d >= 0, fmt.Sprintf("%s %s must not be negative", key, d)}
	}
	return []rangeCheck{
		{e.Workers >= 1, fmt.Sprintf("engine.workers %d must be at least 1", e.Workers)},
		{e.EOWindow >= 1, fmt.Sprintf("engine.eo_window %d must be at least 1 (1 makes EO queues serial)", e.EOWindow)},
		positive("engine.poll_interval", e.PollInterval),
		{e.MaxPayload >= 1, fmt.Sprintf("engine.max_payload %d must be at least 1 byte", e.MaxPayload)},
		{e.Retry.Count >= 0, fmt.Sprintf("engine.retry.count %d must not be negative", e.Retry.Count)},
		positive("engine.retry.interval", e.Retry.Interval),
		{e.Retry.Backoff == "fixed" || e.Retry.Backoff == "exponential",
			fmt.Sprintf("engine.retry.backoff %q must be fixed or exponential", e.Retry.Backoff)},
		{e.Retry.MaxInterval >= e.Retry.Interval,
			fmt.Sprintf("engine.retry.max_interval %s must be at least engine.retry.interval (%s)", e.Retry.MaxInterval, e.Retry.Interval)},
		{e.Blacklisting.Crashes >= 1, fmt.Sprintf("engine.blacklisting.crashes %d must be at least 1", e.Blacklisting.Crashes)},
		notNegative("engine.retention.delivered", e.Retention.Delivered),
		notNegative("engine.retention.failed", e.Retention.Failed),
		notNegative("engine.retention.audit", e.Retention.Audit),
		notNegative("engine.shutdown_timeout", e.ShutdownTimeout),
		positive("tx.check_after", c.Tx.CheckAfter),
		positive("tx.check_interval", c.Tx.CheckInterval),
		{c.Tx.MaxChecks >= 1, fmt.Sprintf("tx.max_checks %d must be at least 1", c.Tx.MaxChecks)},
		positive("tx.check_timeout", c.Tx.CheckTimeout),
		positive("cluster.heartbeat", c.Cluster.Heartbeat),
		{c.Cluster.LeaseTTL > c.Cluster.Heartbeat,
			fmt.Sprintf("cluster.lease_ttl %s must be longer than cluster.heartbeat (%s)", c.Cluster.LeaseTTL, c.Cluster.Heartbeat)},
		{c.Timeout >= 0, "timeout must not be negative"},
	}
}

func (r Receiver) validate(name string) error {
	if err := domain.ValidateParty("receiver", name); err != nil {
		return domain.Invalidf("receivers: %v", err)
	}
	key := "receivers." + name
	if r.Timeout < 0 {
		return domain.Invalidf("%s.timeout %s must not be negative", key, r.Timeout)
	}
	switch r.Type {
	case "http":
		if len(r.URLs) == 0 {
			return domain.Invalidf("%s: type http needs urls", key)
		}
		for i, u := range r.URLs {
			if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
				return domain.Invalidf("%s.urls[%d] %q is not an http:// or https:// URL", key, i, RedactURL(u))
			}
		}
	case "exec":
		if len(r.Command) == 0 || strings.TrimSpace(r.Command[0]) == "" {
			return domain.Invalidf("%s: type exec needs command (the program and its arguments)", key)
		}
		if err := validateEnv(name, r.Env, r.InheritEnv); err != nil {
			return err
		}
	case "file":
		if r.Dir == "" {
			return domain.Invalidf("%s: type file needs dir", key)
		}
	case "discard":
	default:
		return domain.Invalidf("%s: type %q must be http, exec, file or discard", key, r.Type)
	}
	if r.Type != "exec" && (len(r.Env) > 0 || len(r.InheritEnv) > 0) {
		return domain.Invalidf("%s: env and inherit_env are for exec receivers, not %s", key, r.Type)
	}
	return nil
}

// checkRoute checks one routing rule: a sender to match, and receivers
// that are configured — a route to a receiver that is not would fail every
// message it routes (receiver X is not configured).
func (c *Config) checkRoute(i int, r Route) []error {
	key := fmt.Sprintf("routes[%d]", i)
	var errs []error
	if err := domain.ValidateParty("sender", r.Sender); err != nil {
		errs = append(errs, domain.Invalidf("%s.sender: %v", key, err))
	}
	if len(r.Receivers) == 0 {
		errs = append(errs, domain.Invalidf("%s.receivers is empty: a route names the receivers it routes to", key))
	}
	names := slices.Sorted(maps.Keys(c.Receivers))
	for j, name := range r.Receivers {
		rk := fmt.Sprintf("%s.receivers[%d]", key, j)
		switch {
		case strings.TrimSpace(name) == "":
			errs = append(errs, domain.WithHint(domain.ErrInvalid, rk+" is empty",
				`YAML reads null, NULL and ~ as no value: quote a receiver of that name ("NULL")`))
		case !slices.Contains(names, name):
			errs = append(errs, domain.WithHint(domain.ErrInvalid,
				fmt.Sprintf("%s: %s is not a configured receiver%s", rk, name, domain.DidYouMean(name, names)),
				"configure it under receivers:, or route to one of: "+strings.Join(names, ", ")))
		}
	}
	return errs
}

// checkSender checks a producer's transactional check-back endpoint (§9).
func checkSender(name string, s Sender) error {
	if err := domain.ValidateParty("sender", name); err != nil {
		return domain.Invalidf("senders: %v", err)
	}
	if s.CheckURL == "" {
		return nil
	}
	if p, err := url.Parse(s.CheckURL); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return domain.Invalidf("senders.%s.check_url %q is not an http:// or https:// URL", name, RedactURL(s.CheckURL))
	}
	return nil
}
