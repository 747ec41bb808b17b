package wire

import (
	"unicode/utf8"

	"github.com/queuectl/queuectl/internal/domain"
)

// CheckText refuses JSON text that Go's decoder would silently change:
// bytes that are not UTF-8, and \u escapes of lone UTF-16 surrogates. Both
// would decode as U+FFFD, so a payload or a header would be stored as
// something other than what was sent (§2: invalid UTF-8 is refused, never
// replaced). It is for one JSON value, such as a line of `send --jsonl` or
// a request body.
func CheckText(b []byte) error {
	if !utf8.Valid(b) {
		return domain.Invalidf("not valid UTF-8 at byte %d; JSON text must be UTF-8 (send a binary payload as payload_b64)", invalidAt(b))
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			continue
		}
		i++ // the escaped character: \\ and \" are skipped whole
		if b[i] != 'u' {
			continue
		}
		r, ok := hex4(b[i+1:])
		switch {
		case !ok:
			continue // the decoder reports a malformed escape
		case r >= 0xdc00 && r <= 0xdfff:
			return domain.Invalidf(`a lone UTF-16 surrogate \u%04x at byte %d is not a character`, r, i-1)
		case r >= 0xd800 && r <= 0xdbff:
			next := b[i+5:]
			if len(next) < 6 || next[0] != '\\' || next[1] != 'u' {
				return domain.Invalidf(`a lone UTF-16 surrogate \u%04x at byte %d is not a character`, r, i-1)
			}
			if lo, ok := hex4(next[2:]); !ok || lo < 0xdc00 || lo > 0xdfff {
				return domain.Invalidf(`a lone UTF-16 surrogate \u%04x at byte %d is not a character`, r, i-1)
			}
			i += 10 // the pair's second half
		}
	}
	return nil
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
