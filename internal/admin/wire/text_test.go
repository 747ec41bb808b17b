package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

func TestCheckText(t *testing.T) {
	t.Parallel()

	for _, ok := range []string{
		`{"payload":"plain"}`,
		`{"payload":"Größe 注文 🚚"}`,
		`{"payload":"\ud83d\ude9a and \u00fc and \\ud800"}`, // a pair, a BMP escape, an escaped backslash
		`{"payload":"\"\\\""}`,
		`{"payload":"\ufffd is a character too"}`,
	} {
		require.NoError(t, CheckText([]byte(ok)), ok)
		var v map[string]string
		require.NoError(t, json.Unmarshal([]byte(ok), &v), ok)
	}
	for bad, want := range map[string]string{
		"{\"payload\":\"\xff\xfe\"}":       "not valid UTF-8 at byte 12",
		`{"payload":"\ud800"}`:             `lone UTF-16 surrogate \ud800 at byte 12`,
		`{"payload":"\udc00"}`:             `lone UTF-16 surrogate \udc00`,
		`{"payload":"\ud800\u0041"}`:       `lone UTF-16 surrogate \ud800`,
		`{"payload":"\ud800"} trailing\\u`: `lone UTF-16 surrogate \ud800`,
	} {
		err := CheckText([]byte(bad))
		require.ErrorIs(t, err, domain.ErrInvalid, bad)
		require.ErrorContains(t, err, want, bad)
	}
}

func FuzzCheckText(f *testing.F) {
	f.Add([]byte(`{"payload":"\ud83d\ude9a"}`))
	f.Add([]byte(`\u`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if CheckText(b) != nil {
			return
		}
		// What passes decodes without a replacement character it did not
		// write itself.
		var s string
		if json.Unmarshal(b, &s) == nil && strings.ContainsRune(s, utf8.RuneError) {
			lower := bytes.ToLower(b)
			require.True(t, bytes.ContainsRune(b, utf8.RuneError) || bytes.Contains(lower, []byte(`\ufffd`)), "%q decodes to %q", b, s)
		}
	})
}
