package output

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape makes text that a producer, a receiver or an operator wrote safe to
// show on a terminal (§2): control characters (C0 including tab and
// newline, DEL, C1), the bidirectional overrides that reorder what a line
// seems to say, and bytes that are not UTF-8 are written as Go escapes
// (\n, \x1b, \u009b), so no message can retitle, clear or rewrite an
// operator's screen. Everything else, any script or symbol, is kept. JSON
// and YAML output carry the text verbatim and do not use it.
//
// Every human-readable renderer calls it on every field it prints (tables,
// field blocks, error messages, the TUI), so a new column or view is safe
// without thinking about it.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !unsafeRune(r):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte Escape must rewrite, or -1.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune reports whether a terminal could act on r rather than show it.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		// Bidirectional marks, embeddings, overrides and isolates.
		return true
	}
	return false
}
