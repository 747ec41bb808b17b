package config

import (
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Redacted returns a copy fit to show: the token, passwords in the store
// URLs (of the configuration and of its contexts) and in receiver URLs, and
// receiver headers and exec environment variables that carry credentials
// are replaced by a marker.
func (c *Config) Redacted() *Config {
	r := *c
	if r.Token != "" {
		r.Token = redactedMark
	}
	r.Store = RedactURL(r.Store)
	if c.Contexts != nil {
		r.Contexts = make(map[string]Context, len(c.Contexts))
		for name, ctx := range c.Contexts {
			ctx.Store = RedactURL(ctx.Store)
			r.Contexts[name] = ctx
		}
	}
	if c.Receivers != nil {
		r.Receivers = make(map[string]Receiver, len(c.Receivers))
		for name, rc := range c.Receivers {
			rc.URLs = slices.Clone(rc.URLs)
			for i, u := range rc.URLs {
				rc.URLs[i] = RedactURL(u)
			}
			rc.Headers = maps.Clone(rc.Headers)
			for k := range rc.Headers {
				if secretHeader(k) {
					rc.Headers[k] = redactedMark
				}
			}
			rc.Env = maps.Clone(rc.Env)
			for k := range rc.Env {
				if secretEnv(k) {
					rc.Env[k] = redactedMark
				}
			}
			r.Receivers[name] = rc
		}
	}
	return &r
}

const redactedMark = "REDACTED"

// RedactURL hides the password of a URL, whether in its user info
// (postgres://user:pw@host) or, as libpq also takes it, in its query
// (postgres://host/db?password=pw), for messages and config view.
func RedactURL(s string) string {
	if s == "" {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return redactUnparsed(s)
	}
	changed := false
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), redactedMark)
			changed = true
		}
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", redactedMark)
		u.RawQuery = q.Encode()
		changed = true
	}
	if !changed {
		return s
	}
	return u.String()
}

// redactUnparsed hides what may be a password in a URL that does not parse
// (a bad port, a stray %): everything between the first colon of the user
// info and the last @, and every password= value. It may hide more than the
// password, never less.
func redactUnparsed(s string) string {
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if user, _, hasPassword := strings.Cut(rest[:at], ":"); hasPassword {
				s = scheme + "://" + user + ":" + redactedMark + rest[at:]
			}
		}
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "password=")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i] + "password=" + redactedMark)
		s = s[i+len("password="):]
		s = s[strings.IndexAny(s+"&", "& "):]
	}
}

// secretHeader reports whether a header's value is likely a credential.
func secretHeader(key string) bool {
	k := strings.ToLower(key)
	if k == "authorization" || k == "proxy-authorization" || k == "cookie" {
		return true
	}
	for _, w := range []string{"token", "secret", "password", "api-key", "apikey"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// secretEnv reports whether an environment variable's value is likely a
// credential (API_KEY, AWS_SECRET_ACCESS_KEY, PGPASSWORD, ...).
func secretEnv(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"token", "secret", "passw", "key", "credential", "auth"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
