package tune

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

func TestQueueCell(t *testing.T) {
	t.Parallel()

	require.Equal(t, "-", queueCell(nil, 60))
	require.Equal(t, "XBTI0000,XBTI0001", queueCell([]string{"XBTI0000", "XBTI0001"}, 60))
	many := make([]string, 100)
	for i := range many {
		many[i] = "XBTO2107" + string(rune('A'+i%26)) + "000"
	}
	cell := queueCell(many, 60)
	require.LessOrEqual(t, len([]rune(cell)), 60+len(",… (100 in all)"))
	require.Contains(t, cell, ",… (100 in all)")
}

// tuneAdmin records what Tune was asked.
type tuneAdmin struct {
	admin.Service
	got admin.TuneParams
}

func (a *tuneAdmin) Tune(_ context.Context, p admin.TuneParams) (*admin.TuningEntry, error) {
	a.got = p
	if p.Value == "0" {
		return nil, domain.Invalidf("value 0 is out of range")
	}
	return &admin.TuningEntry{Param: p.Param, Sub: p.Sub, Value: 16, Set: !p.Unset, Queues: []string{}}, nil
}

func TestRunSet(t *testing.T) {
	t.Parallel()

	a := &tuneAdmin{}
	out := &bytes.Buffer{}
	opts := &SetOptions{
		IO:     &cmdutil.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: io.Discard},
		Admin:  func() (admin.Service, error) { return a, nil },
		Format: func() (output.Format, error) { return output.Table, nil },
		Hintf:  func(string, ...any) {},
		Param:  "EO_OUTBOUND_PARALLEL", Sub: "WMS", Value: "16",
	}
	require.NoError(t, RunSet(context.Background(), opts))
	require.Equal(t, "EO_OUTBOUND_PARALLEL --sub WMS = 16\n", out.String())
	require.Equal(t, admin.TuneParams{Param: "EO_OUTBOUND_PARALLEL", Sub: "WMS", Value: "16"}, a.got)

	opts.Value = "0"
	require.ErrorIs(t, RunSet(context.Background(), opts), domain.ErrInvalid)
	require.Equal(t, "0", a.got.Value, "the service checks the value (and audits its refusal), as in remote mode")

	out.Reset()
	opts.Unset, opts.Value = true, ""
	require.NoError(t, RunSet(context.Background(), opts))
	require.True(t, a.got.Unset)
}
