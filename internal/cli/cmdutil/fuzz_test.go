package cmdutil_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// FuzzBulkStdin feeds anything to a bulk action's `-` (ids on stdin): it
// never panics, ends (bounded by a deadline, which it must not need), and
// hands the service only well-formed, distinct ids, in chunks.
func FuzzBulkStdin(f *testing.F) {
	for _, s := range []string{
		"", " \n\t", testID(1), testID(1) + "\n" + testID(2) + "\r\n", testID(1) + " " + testID(1),
		"0193A5C4-7B1E-7C3D-9F5E-000000000001", "not-an-id", testID(1) + "\x00", "\xff\xfe", testID(3) + "x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stdin string) {
		a := newBulkAdmin(t, 4, domain.StatusNDLV)
		b := setupBulk(t, a, output.JSON, stdin)
		b.opts.Args = []string{"-"}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = cmdutil.RunBulk(ctx, b.action, b.opts)
		require.NoError(t, ctx.Err(), "the run ended by itself")
		seen := map[string]bool{}
		for _, call := range a.calls {
			require.LessOrEqual(t, len(call), cmdutil.BulkChunk)
			for _, id := range call {
				require.NoError(t, domain.ValidID(id))
				require.False(t, seen[id], "id %s was applied twice", id)
				seen[id] = true
			}
		}
	})
}
