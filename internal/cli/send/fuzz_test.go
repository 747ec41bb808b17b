package send_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/cli/send"
	"github.com/queuectl/queuectl/internal/domain"
)

// FuzzSpoolJSONL feeds anything to `send --jsonl`: it never panics, ends,
// and either refuses the input with a usage error naming a line, or hands
// out every message it counted, each valid by §2 with the payload limit.
func FuzzSpoolJSONL(f *testing.F) {
	for _, s := range []string{
		"",
		`{"qos":"EO","sender":"ERP","receiver":"WMS","payload":"<order/>"}` + "\n",
		`{"qos":"EOIO","sender":"ERP","receivers":["WMS","ARCHIVE"],"app_queue":"ORDERS_DE","headers":{"X-Trace":"t1"},"payload_b64":"AAEC"}`,
		"\n\n  \r\n" + `{"qos":"EO","sender":"ERP","prepare":true}`,
		`{"qos":"EO","sender":"ERP","headers":{"k":"1","K":"2"}}`,
		`{"qos":"EO","sender":"ERP","interface":"a\u0000b"}`,
		`{"qos":"EO","sender":"ERP","payload":"\ud800"}`,
		"{\"qos\":\"EO\",\"sender\":\"ERP\",\"payload\":\"\xff\"}",
		`{"qos":"EO","sender":"ERP","payload":"` + string(bytes.Repeat([]byte("x"), 300)) + `"}`,
		`[1,2]`, `{"qos":"EO",`, `{} {}`,
	} {
		f.Add([]byte(s))
	}
	const limit = 256
	f.Fuzz(func(t *testing.T, in []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sp, err := send.SpoolJSONL(ctx, bytes.NewReader(in), limit)
		require.NoError(t, ctx.Err(), "the check ended by itself")
		if err != nil {
			require.True(t, errors.Is(err, domain.ErrInvalid) || errors.Is(err, domain.ErrTooLarge), "a usage error: %v", err)
			require.Contains(t, err.Error(), "line ")
			require.True(t, utf8.ValidString(err.Error()))
			return
		}
		defer sp.Close()
		n := 0
		last := 0
		require.NoError(t, sp.Batches(func(reqs []domain.SendRequest, lines []int) error {
			require.Len(t, lines, len(reqs))
			for i := range reqs {
				require.NoError(t, reqs[i].Validate(limit))
				require.Greater(t, lines[i], last, "in input order")
				last = lines[i]
			}
			n += len(reqs)
			return nil
		}))
		require.Equal(t, sp.Len(), n)
	})
}
