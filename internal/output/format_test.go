package output_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

func TestParseFormat(t *testing.T) {
	t.Parallel()

	for _, f := range output.Formats {
		got, err := output.ParseFormat(string(f))
		require.NoError(t, err)
		require.Equal(t, f, got)
	}

	got, err := output.ParseFormat(" JSON ")
	require.NoError(t, err, "-o takes any case and ignores surrounding blanks")
	require.Equal(t, output.JSON, got)

	for _, bad := range []string{"xml", "", "tabel", "json,yaml"} {
		_, err := output.ParseFormat(bad)
		require.ErrorIs(t, err, domain.ErrInvalid, bad)
		require.ErrorContains(t, err, `output format "`+bad+`"`, "the error names the value")
		require.ErrorContains(t, err, "table, wide, json, jsonl, yaml, ids", "and lists the choices")
	}
}

func TestFormatTabular(t *testing.T) {
	t.Parallel()

	for _, f := range output.Formats {
		require.Equal(t, f == output.Table || f == output.Wide, f.Tabular(), f)
	}
}
