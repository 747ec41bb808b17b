package client

import (
	"crypto/rand"
	"unicode"
	"unicode/utf8"
)

// maxKey is the longest key, in characters.
const maxKey = 128

// NewKey returns a new random key (26 characters, 130 bits): a name for a
// message that a producer stores with its own record before the first
// send, so that it can send the message again under the same key, even
// after a restart.
func NewKey() string {
	return rand.Text()
}

// checkKey refuses a key the server would refuse, before it is sent: one
// with a control character could not even travel in a header. The empty
// key is no key.
func checkKey(key string) error {
	if key == "" {
		return nil
	}
	if !utf8.ValidString(key) {
		return invalidf("key %q is not valid UTF-8", key)
	}
	if n := utf8.RuneCountInString(key); n > maxKey {
		return invalidf("key is %d characters long; the limit is %d", n, maxKey)
	}
	for _, r := range key {
		if unicode.IsControl(r) {
			return invalidf("key %q contains the control character %U; a key is printable text", key, r)
		}
	}
	return nil
}
