package domain

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits of §2.
const (
	MaxPartyName      = 60
	MaxAppQueue       = 16
	MaxInterface      = 120
	MaxHeaders        = 64
	MaxHeaderKey      = 64
	MaxHeaderValue    = 1024
	MaxReason         = 1024
	DefaultMaxPayload = 10 << 20
)

// ValidateParty checks a sender or receiver name: 1–60 chars of A-Z a-z 0-9 _ - .
func ValidateParty(field, name string) error {
	if name == "" {
		return Invalidf("%s is required (1-%d characters of A-Z a-z 0-9 _ - .)", field, MaxPartyName)
	}
	// Count characters, not bytes: a name with a non-ASCII letter must be
	// refused for that letter, not reported with an inflated length.
	if n := utf8.RuneCountInString(name); n > MaxPartyName {
		return Invalidf("%s %q is %d characters long; the limit is %d", field, name, n, MaxPartyName)
	}
	for _, r := range name {
		if !(isAlnum(r) || r == '_' || r == '-' || r == '.') {
			return Invalidf("%s %q contains %q; allowed are A-Z a-z 0-9 _ - .", field, name, r)
		}
	}
	return nil
}

// ValidateAppQueue checks an application queue name: 1–16 chars of 0-9 A-Z _ /.
// Lowercase is an error, not silently uppercased.
func ValidateAppQueue(name string) error {
	if name == "" {
		return Invalidf("app queue is required for EOIO (1-%d characters of 0-9 A-Z _ /)", MaxAppQueue)
	}
	if n := utf8.RuneCountInString(name); n > MaxAppQueue {
		return Invalidf("app queue %q is %d characters long; the limit is %d", name, n, MaxAppQueue)
	}
	for _, r := range name {
		if r >= 'a' && r <= 'z' {
			return Invalidf("app queue %q contains lowercase %q; only uppercase A-Z, 0-9, _ and / are allowed (did you mean %q?)", name, r, strings.ToUpper(name))
		}
		if !((r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' || r == '/') {
			return Invalidf("app queue %q contains %q; allowed are A-Z 0-9 _ /", name, r)
		}
	}
	return nil
}

// ValidateInterface checks the optional interface name: at most 120
// characters of printable UTF-8 text (§2).
func ValidateInterface(name string) error {
	if n := utf8.RuneCountInString(name); n > MaxInterface {
		return Invalidf("interface is %d characters long; the limit is %d", n, MaxInterface)
	}
	return CheckText("interface", name)
}

// ValidateHeaders checks the header map: at most 64 entries, keys
// [A-Za-z0-9-]{1,64} unique ignoring case (HTTP receivers would merge X-Id
// and x-id into one header), values at most 1 KiB of printable text.
func ValidateHeaders(h map[string]string) error {
	if len(h) > MaxHeaders {
		return Invalidf("%d headers given; the limit is %d", len(h), MaxHeaders)
	}
	// Sorted, so that a request with several bad headers always gets the same error.
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	seen := make(map[string]string, len(keys))
	for _, k := range keys {
		v := h[k]
		if k == "" || len(k) > MaxHeaderKey {
			return Invalidf("header key %q must be 1-%d characters of A-Z a-z 0-9 -", k, MaxHeaderKey)
		}
		for _, r := range k {
			if !(isAlnum(r) || r == '-') {
				return Invalidf("header key %q contains %q; allowed are A-Z a-z 0-9 -", k, r)
			}
		}
		if other, dup := seen[strings.ToLower(k)]; dup {
			return Invalidf("header keys %q and %q differ only in case; header keys must be unique ignoring case", other, k)
		}
		seen[strings.ToLower(k)] = k
		if len(v) > MaxHeaderValue {
			return Invalidf("header %q has a value of %d bytes; the limit is %d", k, len(v), MaxHeaderValue)
		}
		if err := CheckText(fmt.Sprintf("header %q", k), v); err != nil {
			return err
		}
	}
	return nil
}

// MaxKey is the longest idempotency key, in characters (§2).
const MaxKey = 128

// ValidateKey checks a producer's idempotency key (§2): 1-128 characters of
// printable text, without tab; an empty key is no key. The error names the
// key (its start, when it is too long) and the rule.
func ValidateKey(key string) error {
	if key == "" {
		return nil
	}
	rule := fmt.Sprintf("a key is 1-%d printable characters", MaxKey)
	if n := utf8.RuneCountInString(key); n > MaxKey {
		// The start names it; the whole would drown the message.
		start, count := key, 0
		for i := range key {
			if count == 32 {
				start = key[:i] + "…"
				break
			}
			count++
		}
		return Invalidf("key %q is %d characters long; %s", start, n, rule)
	}
	for i := 0; i < len(key); {
		r, size := utf8.DecodeRuneInString(key[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return Invalidf("key %q is not valid UTF-8 (at byte %d); %s", key, i, rule)
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			return Invalidf("key %q contains the control character %U at byte %d; %s (no tab)", key, r, i, rule)
		}
		i += size
	}
	return nil
}

// ValidateReason checks an operator's --reason (§2): at most 1 KiB of
// printable text. It is recorded in history and audit entries.
func ValidateReason(reason string) error {
	if len(reason) > MaxReason {
		return Invalidf("reason is %d bytes long; the limit is %d", len(reason), MaxReason)
	}
	return CheckText("reason", reason)
}

// CheckText refuses text that is not UTF-8 or holds a control character
// (C0, DEL or C1) other than tab (§2): such text could break an HTTP
// header or an environment variable, or drive an operator's terminal.
// field names the text in the error.
func CheckText(field, s string) error {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return Invalidf("%s %q is not valid UTF-8 (at byte %d)", field, s, i)
		case r == '\t':
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			return Invalidf("%s %q contains the control character %U at byte %d; only tab is allowed", field, s, r, i)
		}
		i += size
	}
	return nil
}

// ValidatePayload checks the payload size against the configured limit.
func ValidatePayload(size, limit int64) error {
	if size <= limit {
		return nil
	}
	got, lim := FormatBytes(size), FormatBytes(limit)
	if got == lim {
		// Rounded, both read the same (10MiB); only the byte counts show the difference.
		return Errorf(ErrTooLarge, "payload is %d bytes; the limit (engine.max_payload) is %s (%d bytes)", size, lim, limit)
	}
	return Errorf(ErrTooLarge, "payload is %s; the limit (engine.max_payload) is %s", got, lim)
}

// FormatBytes renders a byte count in binary units, as the config writes them (10MiB).
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	s := fmt.Sprintf("%.1f", v)
	if s == "1024.0" && exp < len("KMGTPE")-1 {
		// 1023.95KiB and up round to the next unit: 1MiB, not 1024KiB.
		s, exp = "1.0", exp+1
	}
	s = strings.TrimSuffix(s, ".0")
	return s + string("KMGTPE"[exp]) + "iB"
}

func isAlnum(r rune) bool {
	return (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
}

func upper(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }
