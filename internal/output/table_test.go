package output

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTrimWriter(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"trailing spaces", []string{"NAME  DEPTH  \n"}, "NAME  DEPTH\n"},
		{"inner spaces kept", []string{"a  b\n"}, "a  b\n"},
		{"leading spaces kept", []string{"  a\n"}, "  a\n"},
		{"spaces split from text across writes", []string{"a  ", "  b", "  \n"}, "a    b\n"},
		{"spaces split from newline across writes", []string{"a", "  ", "  ", "\nb  \n"}, "a\nb\n"},
		{"blank line", []string{"   \n\n"}, "\n\n"},
		{"no newline at the end", []string{"a  b  "}, "a  b"},
		{"empty", []string{""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			var b bytes.Buffer
			w := &trimWriter{w: &b}
			for _, c := range tt.chunks {
				n, err := w.Write([]byte(c))
				require.NoError(t, err)
				require.Equal(t, len(c), n, "Write reports every byte as taken")
			}
			require.Equal(t, tt.want, b.String())
		})
	}
}
