package cli_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestListsNameWhatTheirFiltersMiss: a list that matched nothing because a
// filter names a queue or a receiver that does not exist says so, with the
// name most likely meant; one that merely matched nothing says only that.
func TestListsNameWhatTheirFiltersMiss(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, os.WriteFile(b.config, []byte("receivers:\n  WMS: {type: discard}\n"), 0o600))
	r := b.run(t, "x", "send", "--qos", "EO", "--sender", "ERP", "--receiver", "WMS")
	require.Equal(t, 0, r.code, r.stderr)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"queue", "list", "--receiver", "wms"}, "queuectl: no queues match; no receiver wms is configured or has a queue (did you mean WMS?)\n"},
		{[]string{"queue", "list", "--receiver", "CRM"}, "queuectl: no queues match\n"},
		{[]string{"message", "list", "--receiver", "WSM"}, "queuectl: no messages match; no receiver WSM is configured or has a queue (did you mean WMS?)\n"},
		{[]string{"message", "list", "--receiver", "WMS", "--status", "DLVD"}, "queuectl: no messages match\n"},
		{[]string{"message", "list", "--queue", "XBTI000"}, "queuectl: no messages match; queue XBTI000 does not exist (did you mean XBTI0000?)\n"},
	} {
		r := b.run(t, "", c.args...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Empty(t, r.stdout)
		require.Equal(t, c.want, r.stderr, "%v", c.args)
	}
}
