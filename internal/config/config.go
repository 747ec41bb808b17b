// Package config loads queuectl's configuration (§8) with viper: flags over
// environment (QUEUECTL_<NAME>) over the config file over defaults. It is the
// only package that imports viper.
package config

import (
	"time"

	"github.com/queuectl/queuectl/internal/placement"
)

// Config is the effective configuration of one invocation.
type Config struct {
	// Global flags (§5); each is also settable as QUEUECTL_<NAME> and in the file.
	DB        string `mapstructure:"db" yaml:"db"`
	Store     string `mapstructure:"store" yaml:"store"`
	ServerURL string `mapstructure:"server_url" yaml:"server_url"`
	Context   string `mapstructure:"context" yaml:"context"`
	Token     string `mapstructure:"token" yaml:"token"`
	TokenFile string `mapstructure:"token_file" yaml:"token_file"`
	// CAFile is a PEM file of CA certificates that an https server's
	// certificate is checked against, instead of the system's.
	CAFile  string        `mapstructure:"ca_file" yaml:"ca_file"`
	Output  string        `mapstructure:"output" yaml:"output"`
	NoColor bool          `mapstructure:"no_color" yaml:"no_color"`
	Quiet   bool          `mapstructure:"quiet" yaml:"quiet"`
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout"`

	Engine    Engine              `mapstructure:"engine" yaml:"engine"`
	Receivers map[string]Receiver `mapstructure:"receivers" yaml:"receivers"`
	Routes    []Route             `mapstructure:"routes" yaml:"routes"`
	Senders   map[string]Sender   `mapstructure:"senders" yaml:"senders"`
	Tx        Tx                  `mapstructure:"tx" yaml:"tx"`
	Server    Server              `mapstructure:"server" yaml:"server"`
	Cluster   Cluster             `mapstructure:"cluster" yaml:"cluster"`

	Contexts       map[string]Context `mapstructure:"contexts" yaml:"contexts"`
	CurrentContext string             `mapstructure:"current_context" yaml:"current_context"`

	// File is the config file that was read, if any.
	File string `mapstructure:"-" yaml:"-"`
	// DBExplicit says that DB was given by --db or QUEUECTL_DB.
	DBExplicit bool `mapstructure:"-" yaml:"-"`
	// unknown are the keys that name no setting (Validate reports them).
	unknown []error
}

// Engine configures delivery (§4, §8).
type Engine struct {
	Role     string `mapstructure:"role" yaml:"role"`
	NodeID   string `mapstructure:"node_id" yaml:"node_id"`
	Workers  int    `mapstructure:"workers" yaml:"workers"`
	EOWindow int    `mapstructure:"eo_window" yaml:"eo_window"`
	// PollInterval is how often the engine claims while it may have ready
	// messages, whatever wakes it besides (§11: a wake-up is a hint).
	PollInterval    time.Duration `mapstructure:"poll_interval" yaml:"poll_interval"`
	MaxPayload      Size          `mapstructure:"max_payload" yaml:"max_payload"`
	Retry           Retry         `mapstructure:"retry" yaml:"retry"`
	Blacklisting    Blacklisting  `mapstructure:"blacklisting" yaml:"blacklisting"`
	Retention       Retention     `mapstructure:"retention" yaml:"retention"`
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout" yaml:"shutdown_timeout"`
}

// Retry is the retry policy for transient errors.
type Retry struct {
	Count       int           `mapstructure:"count" yaml:"count"`
	Interval    time.Duration `mapstructure:"interval" yaml:"interval"`
	Backoff     string        `mapstructure:"backoff" yaml:"backoff"`
	MaxInterval time.Duration `mapstructure:"max_interval" yaml:"max_interval"`
}

// Blacklisting configures crash blacklisting (§4).
type Blacklisting struct {
	Enabled bool `mapstructure:"enabled" yaml:"enabled"`
	Crashes int  `mapstructure:"crashes" yaml:"crashes"`
}

// Retention says how long final messages and audit entries are kept
// before purging.
type Retention struct {
	Delivered time.Duration `mapstructure:"delivered" yaml:"delivered"`
	Failed    time.Duration `mapstructure:"failed" yaml:"failed"`
	Audit     time.Duration `mapstructure:"audit" yaml:"audit"`
}

// Receiver is one configured receiver endpoint (§8).
type Receiver struct {
	Type    string            `mapstructure:"type" yaml:"type"`
	URLs    []string          `mapstructure:"urls" yaml:"urls,omitempty"`
	Command []string          `mapstructure:"command" yaml:"command,omitempty"`
	Dir     string            `mapstructure:"dir" yaml:"dir,omitempty"`
	Timeout time.Duration     `mapstructure:"timeout" yaml:"timeout,omitempty"`
	Headers map[string]string `mapstructure:"headers" yaml:"headers,omitempty"`
	// Env and InheritEnv add to an exec command's clean environment: its
	// own variables, and the names of serve's variables it may see.
	Env        map[string]string `mapstructure:"env" yaml:"env,omitempty"`
	InheritEnv []string          `mapstructure:"inherit_env" yaml:"inherit_env,omitempty"`
}

// Route maps a sender and interface to receivers.
type Route struct {
	Sender    string   `mapstructure:"sender" yaml:"sender"`
	Interface string   `mapstructure:"interface" yaml:"interface,omitempty"`
	Receivers []string `mapstructure:"receivers" yaml:"receivers"`
}

// Sender is a producer's transactional check-back endpoint (§9).
type Sender struct {
	CheckURL string `mapstructure:"check_url" yaml:"check_url"`
}

// Tx configures transactional check-backs (§9).
type Tx struct {
	CheckAfter    time.Duration `mapstructure:"check_after" yaml:"check_after"`
	CheckInterval time.Duration `mapstructure:"check_interval" yaml:"check_interval"`
	MaxChecks     int           `mapstructure:"max_checks" yaml:"max_checks"`
	// CheckTimeout bounds one check: a producer that does not answer
	// within it (or within CheckInterval, if that is shorter, so that a
	// check never overlaps the next) counts as unanswered.
	CheckTimeout time.Duration `mapstructure:"check_timeout" yaml:"check_timeout"`
}

// Server configures `queuectl serve` (§6).
type Server struct {
	Listen  string  `mapstructure:"listen" yaml:"listen"`
	TLSCert string  `mapstructure:"tls_cert" yaml:"tls_cert"`
	TLSKey  string  `mapstructure:"tls_key" yaml:"tls_key"`
	Tokens  []Token `mapstructure:"tokens" yaml:"tokens"`
}

// Token grants a role to the holder of a token whose SHA-256 is given.
type Token struct {
	Name   string `mapstructure:"name" yaml:"name"`
	Role   string `mapstructure:"role" yaml:"role"`
	SHA256 string `mapstructure:"sha256" yaml:"sha256"`
	// Created is when `token create` made the token (RFC 3339), for
	// `token list`; optional.
	Created string `mapstructure:"created" yaml:"created,omitempty"`
}

// Cluster configures PostgreSQL cluster coordination (§11).
type Cluster struct {
	Heartbeat time.Duration `mapstructure:"heartbeat" yaml:"heartbeat"`
	LeaseTTL  time.Duration `mapstructure:"lease_ttl" yaml:"lease_ttl"`
}

// Context names a remote server and the token to use with it, or a store
// (a PostgreSQL database) to work on directly.
type Context struct {
	Server    string `mapstructure:"server" yaml:"server,omitempty"`
	TokenFile string `mapstructure:"token_file" yaml:"token_file,omitempty"`
	// CAFile is the context's CA certificates for an https server.
	CAFile string `mapstructure:"ca_file" yaml:"ca_file,omitempty"`
	Store  string `mapstructure:"store" yaml:"store,omitempty"`
}

// RoutingRules are the routes of §8 as placement's rules: receiver
// determination by the engine's claims, and by a send that routes what it
// stores.
func (c *Config) RoutingRules() []placement.Rule {
	out := make([]placement.Rule, len(c.Routes))
	for i, r := range c.Routes {
		out[i] = placement.Rule{Sender: r.Sender, Interface: r.Interface, Receivers: r.Receivers}
	}
	return out
}
