package config

import (
	"net/url"
)

// Redacted returns a copy fit to show: the token, and any password in the
// store URL, are replaced by a marker.
func (c *Config) Redacted() *Config {
	r := *c
	if r.Token != "" {
		r.Token = redactedMark
	}
	if u, err := url.Parse(r.Store); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), redactedMark)
			r.Store = u.String()
		}
	}
	return &r
}

const redactedMark = "REDACTED"
