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

func TestParseValue(t *testing.T) {
	t.Parallel()

	for in, want := range map[string]int{"1": 1, "16": 16, "9999": 9999, "10000": 10000, "-3": -3} {
		got, err := parseValue(in)
		require.NoError(t, err, "%s: the range is the service's to check, so that the refusal is audited", in)
		require.Equal(t, want, got)
	}
	for _, bad := range []string{"0", "four", "2.5", "", "1e3", "0x10"} {
		_, err := parseValue(bad)
		require.ErrorIs(t, err, domain.ErrInvalid, bad)
		require.ErrorContains(t, err, "nothing was changed", bad)
	}
	_, err := parseValue("0")
	require.Contains(t, domain.HintOf(err), "tune unset", "0 would mean unset: the hint says how")
}

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

// tuneAdmin records Tune's arguments.
type tuneAdmin struct {
	admin.Service
	called bool
	param  string
	sub    string
	value  int
}

func (a *tuneAdmin) Tune(_ context.Context, param, sub string, value int) (*admin.TuningEntry, error) {
	a.called, a.param, a.sub, a.value = true, param, sub, value
	return &admin.TuningEntry{Param: param, Sub: sub, Value: max(value, 1), Set: value > 0, Queues: []string{}}, nil
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
	require.Equal(t, [3]any{"EO_OUTBOUND_PARALLEL", "WMS", 16}, [3]any{a.param, a.sub, a.value})

	a.called = false
	opts.Value = "0"
	require.ErrorIs(t, RunSet(context.Background(), opts), domain.ErrInvalid)
	require.False(t, a.called, "0 is refused before the service is asked")

	out.Reset()
	opts.Unset, opts.Value = true, ""
	require.NoError(t, RunSet(context.Background(), opts))
	require.Zero(t, a.value, "unset is Tune with value 0")
}
