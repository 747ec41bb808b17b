package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEscape(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, in, want string
	}{
		{"plain text is kept", "OrderCreate", "OrderCreate"},
		{"other scripts are kept", "Bestellung Größe 注文 🚚", "Bestellung Größe 注文 🚚"},
		{"newline and carriage return", "a\r\nb", `a\r\nb`},
		{"tab", "a\tb", `a\tb`},
		{"OSC title and clear screen", "boom \x1b]0;pwned\a\x1b[2J", `boom \x1b]0;pwned\x07\x1b[2J`},
		{"NUL and DEL", "a\x00b\x7f", `a\x00b\x7f`},
		{"C1 CSI", "a\u009b2J", `a\u009b2J`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`},
		{"bytes that are not UTF-8", "a\xff\xfeb", `a\xff\xfeb`},
		{"backslashes are kept as written", `C:\tmp`, `C:\tmp`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, Escape(tt.in))
		})
	}
}

// FuzzEscape: whatever goes in, nothing a terminal acts on comes out.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a\x1b[2Jb", "\xff", "\u202e", "\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		require.Equal(t, -1, firstUnsafe(out), "Escape(%q) = %q", s, out)
		if firstUnsafe(s) < 0 {
			require.Equal(t, s, out)
		}
	})
}

// A table and a field block escape every cell a producer or receiver
// wrote; JSON keeps it verbatim.
func TestRenderersEscapeControlCharacters(t *testing.T) {
	t.Parallel()
	type row struct{ Interface, Error string }
	evil := row{Interface: "a\nb", Error: "exited 1: boom \x1b]0;pwned\a\x1b[2J"}
	cols := []Column[row]{
		{Header: "INTERFACE", Value: func(r row) string { return r.Interface }},
		{Header: "ERROR", Value: func(r row) string { return r.Error }},
	}
	for _, f := range []Format{Table, Wide} {
		var b bytes.Buffer
		l := NewList(&b, f, cols, func(row) string { return "" })
		require.NoError(t, l.Add(evil))
		require.NoError(t, l.Close())
		require.NotContains(t, b.String(), "\x1b")
		require.Equal(t, 2, strings.Count(b.String(), "\n"), "one header line and one row: %q", b.String())
		require.Contains(t, b.String(), `a\nb`)
		require.Contains(t, b.String(), `boom \x1b]0;pwned\x07\x1b[2J`)
	}

	var b bytes.Buffer
	require.NoError(t, Fields(&b, [][2]string{{"Error", evil.Error}}))
	require.Equal(t, "Error:  exited 1: boom \\x1b]0;pwned\\x07\\x1b[2J\n", b.String())

	b.Reset()
	l := NewList(&b, JSON, cols, func(row) string { return "" })
	require.NoError(t, l.Add(evil))
	require.NoError(t, l.Close())
	require.Contains(t, b.String(), `"Error": "exited 1: boom \u001b]0;pwned\u0007\u001b[2J"`)
}
