package send_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/cli/send"
	"github.com/queuectl/queuectl/internal/domain"
)

func TestReadJSONL(t *testing.T) {
	t.Parallel()

	in := strings.Join([]string{
		`{"qos":"EO","sender":"ERP","receiver":"WMS","interface":"OrderCreate","headers":{"X-Trace":"abc"},"payload":"<order/>"}`,
		``,
		`   `,
		`{"qos":"eoio","sender":"SHOP","receivers":["WMS","ARCHIVE"],"app_queue":"ORDERS_DE","payload_b64":"AAH/Cg=="}`,
		"{\"qos\":\"EO\",\"sender\":\"ERP\",\"prepare\":true}\r",
		`{"qos":"EO","sender":"ERP","receiver":"WMS","key":"order-4711","payload":"<order/>"}`,
		``,
	}, "\n")
	reqs, lines, err := readJSONL(strings.NewReader(in))
	require.NoError(t, err)
	require.Equal(t, []int{1, 4, 5, 6}, lines, "line numbers count blank lines too")
	require.Equal(t, []domain.SendRequest{
		{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Interface: "OrderCreate",
			Headers: map[string]string{"X-Trace": "abc"}, Payload: []byte("<order/>")},
		{QoS: domain.EOIO, Sender: "SHOP", Receivers: []string{"WMS", "ARCHIVE"}, AppQueue: "ORDERS_DE",
			Payload: []byte{0, 1, 0xff, '\n'}},
		{QoS: domain.EO, Sender: "ERP", Payload: []byte{}, Prepare: true},
		{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Key: "order-4711", Payload: []byte("<order/>")},
	}, reqs)
	require.NotNil(t, reqs[2].Payload, "no payload field is an empty payload")
}

func TestReadJSONLEmpty(t *testing.T) {
	t.Parallel()

	reqs, lines, err := readJSONL(strings.NewReader("\n\n  \n"))
	require.NoError(t, err)
	require.Empty(t, reqs)
	require.Empty(t, lines)
}

func TestReadJSONLErrors(t *testing.T) {
	t.Parallel()

	const good = `{"qos":"EO","sender":"ERP","receiver":"WMS"}`
	tests := []struct {
		name, line, want string
	}{
		{"both payloads", `{"qos":"EO","sender":"ERP","payload":"a","payload_b64":"YQ=="}`, `give "payload" or "payload_b64", not both`},
		{"bad base64", `{"qos":"EO","sender":"ERP","payload_b64":"not base64!"}`, `"payload_b64" is not valid base64`},
		{"unknown field", `{"qos":"EO","sender":"ERP","reciever":"WMS"}`, `"reciever"`},
		{"receiver and receivers", `{"qos":"EO","sender":"ERP","receiver":"WMS","receivers":["A"]}`, `give "receiver" or "receivers", not both`},
		{"no qos", `{"sender":"ERP"}`, `"qos" is required`},
		{"bad qos", `{"qos":"XX","sender":"ERP"}`, `"XX"`},
		{"invalid sender", `{"qos":"EO","sender":"E R P"}`, `sender "E R P"`},
		{"lowercase app queue", `{"qos":"EOIO","sender":"ERP","app_queue":"orders"}`, `lowercase`},
		{"not an object", `["EO"]`, "JSON"},
		{"not JSON", `qos=EO`, "JSON"},
		{"cut short", `{"qos":"EO",`, "JSON"},
		{"two values", good + " " + good, "more than one JSON value"},
		{"wrong type", `{"qos":"EO","sender":"ERP","receivers":"WMS"}`, `receivers`},
		{"empty key", `{"qos":"EO","sender":"ERP","key":""}`, `"key" is empty; a key is 1-128 printable characters (leave it out for none)`},
		{"key with a tab", `{"qos":"EO","sender":"ERP","key":"a\tb"}`, `key "a\tb" contains the control character U+0009 at byte 1; a key is 1-128 printable characters (no tab)`},
		{"key too long", `{"qos":"EO","sender":"ERP","key":"` + strings.Repeat("k", 129) + `"}`, `is 129 characters long; a key is 1-128 printable characters`},
		{"key not a string", `{"qos":"EO","sender":"ERP","key":4711}`, `"key" must be a string, not a JSON number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			in := good + "\n\n" + good + "\n" + tt.line + "\n" + good + "\n"
			reqs, lines, err := readJSONL(strings.NewReader(in))
			require.ErrorIs(t, err, domain.ErrInvalid)
			require.ErrorContains(t, err, "line 4: ", "the bad line is named, counting blank lines")
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, "nothing was stored")
			require.Nil(t, reqs)
			require.Nil(t, lines)
		})
	}
}

// longLine reads as a JSONL input whose third line is n bytes long, without
// holding those bytes itself.
func longLine(n int) io.Reader {
	return io.MultiReader(
		strings.NewReader("\n"+`{"qos":"EO","sender":"ERP"}`+"\n"),
		io.LimitReader(xs{}, int64(n)),
		strings.NewReader("\n"),
	)
}

// xs reads as an endless run of x.
type xs struct{}

var xChunk = bytes.Repeat([]byte("x"), 64<<10)

func (xs) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], xChunk)
	}
	return n, nil
}

// A line longer than any message within the payload limit could be is
// refused when it passes that length: the rest is never read.
func TestReadJSONLTooLongLine(t *testing.T) {
	t.Parallel()

	// 6 bytes per payload byte (a \u escape) and 1 MiB for the rest.
	const limit = 1 << 10
	max := 6*limit + 1<<20
	in := &countingReader{r: longLine(10 * max)}
	_, err := send.SpoolJSONL(context.Background(), in, limit)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "line 3 is longer than 1MiB")
	require.ErrorContains(t, err, "nothing was stored")
	require.Less(t, in.n, int64(2*max), "reading stopped at the bound")

	// Exactly at the bound is a line like any other (here an invalid one).
	_, err = send.SpoolJSONL(context.Background(), longLine(max), limit)
	require.ErrorContains(t, err, "line 3: not valid JSON")
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readJSONL spools an input with the default payload limit and reads back
// every message in order.
func readJSONL(in io.Reader) ([]domain.SendRequest, []int, error) {
	sp, err := send.SpoolJSONL(context.Background(), in, domain.DefaultMaxPayload)
	if err != nil {
		return nil, nil, err
	}
	defer sp.Close()
	var reqs []domain.SendRequest
	var lines []int
	err = sp.Batches(func(r []domain.SendRequest, l []int) error {
		reqs, lines = append(reqs, r...), append(lines, l...)
		return nil
	})
	return reqs, lines, err
}

func TestReadJSONLReadError(t *testing.T) {
	t.Parallel()

	boom := io.ErrClosedPipe
	_, _, err := readJSONL(io.MultiReader(bytes.NewReader([]byte("{}\n")), errReader{boom}))
	require.Error(t, err)
	_, _, err = readJSONL(io.MultiReader(strings.NewReader(`{"qos":"EO","sender":"ERP"}`+"\n"), errReader{boom}))
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "reading stdin")
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
