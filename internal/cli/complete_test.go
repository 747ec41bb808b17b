package cli_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// complete asks queuectl for the candidates of the last word of args, as
// the bash, zsh and fish scripts all do (queuectl __complete ...), and
// returns them (without descriptions) and the directive.
func (b *testBundle) complete(t *testing.T, args ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	r := b.run(t, "", append([]string{"__complete"}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.NotEmpty(t, lines)
	last := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(last, ":"), "the directive line: %q", r.stdout)
	d, err := strconv.Atoi(last[1:])
	require.NoError(t, err)
	var out []string
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		out = append(out, v)
	}
	return out, cobra.ShellCompDirective(d)
}

// asStrings writes values of a string type as strings.
func asStrings[S ~string](values []S) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// TestCompleteFixedSetsWithoutAStore: flags that take one of a fixed set
// of values complete them with no store in reach — in the order of a
// message's and a queue's life, never file names — and a store is not
// created by asking.
func TestCompleteFixedSetsWithoutAStore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	counts := []string{"0"}
	for n := 1; n <= domain.MaxEOIOQueues; n++ {
		counts = append(counts, strconv.Itoa(n))
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"message", "list", "--status", ""}, asStrings(domain.Statuses)},
		{[]string{"message", "list", "--status", "NDLV,"}, []string{"NDLV,PEND", "NDLV,TBDL", "NDLV,DLNG", "NDLV,WAIT",
			"NDLV,HOLD", "NDLV,DLVD", "NDLV,FAIL"}},
		{[]string{"message", "list", "--status", "d"}, []string{"DLNG", "DLVD"}},
		{[]string{"queue", "list", "--state", ""}, asStrings(domain.QueueStates)},
		{[]string{"audit", "list", "--result", ""}, []string{"ok", "conflict", "denied", "error"}},
		{[]string{"audit", "list", "--action", ""}, admin.AuditActions},
		{[]string{"audit", "list", "--action", "tx."}, []string{"tx.commit", "tx.rollback"}},
		{[]string{"eoio", "switch", "--queues", ""}, counts},
		{[]string{"eoio", "switch", "--queues", "9"}, []string{"9", "90", "91", "92", "93", "94", "95", "96", "97", "98", "99"}},
	} {
		got, directive := b.complete(t, c.args...)
		require.Equal(t, c.want, got, "%q", c.args)
		require.Equal(t, cobra.ShellCompDirectiveNoFileComp, directive, "%q: no file names", c.args)
	}
	require.Equal(t, []string{"send", "tx.commit", "tx.rollback", "message.resend", "message.fail",
		"message.edit", "blacklist.release", "blacklist.fail", "queue.stop", "queue.start", "queue.delete", "tune.set", "tune.unset",
		"purge", "eoio.switch"}, admin.AuditActions)
	_, err := os.Stat(b.db)
	require.True(t, os.IsNotExist(err), "completion creates no store")
}
