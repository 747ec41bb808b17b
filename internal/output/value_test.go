package output_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/queuectl/queuectl/internal/output"
)

type bulkResult struct {
	Changed    int      `json:"changed" yaml:"changed"`
	ChangedIDs []string `json:"changed_ids" yaml:"changed_ids"`
}

type valueBundle struct {
	value   bulkResult
	wideArg []bool // the wide argument of each call of the table func
}

func setupValue(t *testing.T) (*valueBundle, func(output.Format) (string, error)) {
	t.Helper()
	b := &valueBundle{value: bulkResult{Changed: 2, ChangedIDs: []string{"a", "b"}}}
	render := func(f output.Format) (string, error) {
		var out bytes.Buffer
		err := output.Value(&out, f, b.value, func(w io.Writer, wide bool) error {
			b.wideArg = append(b.wideArg, wide)
			_, err := fmt.Fprintf(w, "changed %d\n", b.value.Changed)
			return err
		}, func() []string { return b.value.ChangedIDs })
		return out.String(), err
	}
	return b, render
}

func TestValueFormats(t *testing.T) {
	t.Parallel()

	b, render := setupValue(t)

	out, err := render(output.Table)
	require.NoError(t, err)
	require.Equal(t, "changed 2\n", out)
	out, err = render(output.Wide)
	require.NoError(t, err)
	require.Equal(t, "changed 2\n", out)
	require.Equal(t, []bool{false, true}, b.wideArg, "the table func learns whether -o wide was asked for")

	out, err = render(output.JSON)
	require.NoError(t, err)
	require.Equal(t, "{\n  \"changed\": 2,\n  \"changed_ids\": [\n    \"a\",\n    \"b\"\n  ]\n}\n", out)

	out, err = render(output.JSONL)
	require.NoError(t, err)
	require.Equal(t, `{"changed":2,"changed_ids":["a","b"]}`+"\n", out)

	out, err = render(output.YAML)
	require.NoError(t, err)
	var got bulkResult
	require.NoError(t, yaml.Unmarshal([]byte(out), &got))
	require.Equal(t, b.value, got)
	require.Equal(t, "changed: 2\nchanged_ids:\n    - a\n    - b\n", out)

	out, err = render(output.IDs)
	require.NoError(t, err)
	require.Equal(t, "a\nb\n", out)

	_, err = render(output.Format("xml"))
	require.ErrorContains(t, err, `unknown output format "xml"`)
}

func TestValueTableError(t *testing.T) {
	t.Parallel()

	var out bytes.Buffer
	boom := fmt.Errorf("boom")
	err := output.Value(&out, output.Table, nil, func(w io.Writer, _ bool) error {
		fmt.Fprintln(w, "half a table")
		return boom
	}, nil)
	require.ErrorIs(t, err, boom)
	require.Empty(t, out.String(), "nothing of a failed rendering is flushed")
}

func TestValueJSONError(t *testing.T) {
	t.Parallel()

	var out bytes.Buffer
	err := output.Value(&out, output.JSON, func() {}, nil, nil)
	var uerr *json.UnsupportedTypeError
	require.ErrorAs(t, err, &uerr)
	require.Empty(t, out.String())
}

func TestFields(t *testing.T) {
	t.Parallel()

	var out bytes.Buffer
	require.NoError(t, output.Fields(&out, [][2]string{
		{"ID", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f"},
		{"Status", "NDLV"},
		{"Next attempt", "-"},
	}))
	require.Equal(t, ""+
		"ID:            0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f\n"+
		"Status:        NDLV\n"+
		"Next attempt:  -\n", out.String())

	out.Reset()
	require.NoError(t, output.Fields(&out, nil))
	require.Empty(t, out.String())
}
