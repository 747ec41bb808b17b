package message_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/cli/message"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// showAdmin serves one message and its payload.
type showAdmin struct {
	fakeAdmin
	msg     *domain.Message
	payload []byte
}

func (a *showAdmin) Message(context.Context, string) (*domain.Message, error) { return a.msg, nil }
func (a *showAdmin) Payload(context.Context, string) ([]byte, error)          { return a.payload, nil }

// hostileMessage holds, where a producer, a receiver and an operator write,
// what would retitle and clear a terminal: a message stored before input
// was checked, or read from another producer's store.
func hostileMessage() *domain.Message {
	m := testMessages(1)[0]
	m.Status, m.ErrorClass = domain.StatusNDLV, domain.ErrorPermanent
	m.Interface = "Order\x1b[2JCreate\nX"
	m.Error = "recv.sh exited 1: boom \x1b]0;pwned\a\x1b[2J"
	m.Headers = map[string]string{"X-Trace": "t\r\n\x1b[31m"}
	m.Key = "order\x1b[2J"
	m.History = []domain.HistoryEntry{{At: now, To: domain.StatusNDLV, Actor: "ops", Reason: "fail\x1b[1A"}}
	return m
}

func TestShowAndListEscapeControlCharacters(t *testing.T) {
	t.Parallel()
	for _, f := range []output.Format{output.Table, output.Wide} {
		m := hostileMessage()
		svc := &showAdmin{msg: m, payload: []byte("<a>\u202e</a>\r\n<b/>\r\n")}
		svc.messages = []*domain.Message{m}
		var out bytes.Buffer
		io := &cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: io.Discard}
		admin := func() (admin.Service, error) { return svc, nil }
		format := func() (output.Format, error) { return f, nil }
		clock := func() time.Time { return now }

		err := message.RunShow(context.Background(), &message.ShowOptions{IO: io, Admin: admin, Format: format, Now: clock, ID: m.ID, Preview: 512})
		require.NoError(t, err)
		show := out.String()
		require.NotContains(t, show, "\x1b", "message show -o %s", f)
		require.NotContains(t, show, "\r", "message show -o %s", f)
		for _, want := range []string{
			`Order\x1b[2JCreate\nX`,
			`recv.sh exited 1: boom \x1b]0;pwned\x07\x1b[2J (permanent)`,
			`Header X-Trace:  t\r\n\x1b[31m`,
			`Key:             order\x1b[2J`,
			`fail\x1b[1A`,
			"\n<a>\\u202e</a>\n<b/>\n",
		} {
			require.Contains(t, show, want, "message show -o %s", f)
		}

		out.Reset()
		err = message.RunList(context.Background(), &message.ListOptions{IO: io, Admin: admin, Format: format, Now: clock, Hintf: func(string, ...any) {}})
		require.NoError(t, err)
		require.NotContains(t, out.String(), "\x1b", "message list -o %s", f)
		if f == output.Wide {
			require.Contains(t, out.String(), `recv.sh exited 1: boom \x1b]0;pwned\x07\x1b[2J`, "message list -o %s", f)
			require.Contains(t, out.String(), `Order\x1b[2JCreate\nX`)
		} else {
			// The table clips the text as it shows it, escapes and all.
			require.Contains(t, out.String(), `recv.sh exited 1: boom \x1b]0;pwned\x07…`, "message list -o %s", f)
		}
	}
}

// JSON carries what was written verbatim (§2).
func TestShowJSONKeepsTextVerbatim(t *testing.T) {
	t.Parallel()
	m := hostileMessage()
	var out bytes.Buffer
	err := message.RunShow(context.Background(), &message.ShowOptions{
		IO:     &cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: io.Discard},
		Admin:  func() (admin.Service, error) { return &showAdmin{msg: m}, nil },
		Format: func() (output.Format, error) { return output.JSON, nil },
		Now:    func() time.Time { return now }, ID: m.ID, Preview: 512,
	})
	require.NoError(t, err)
	require.Contains(t, out.String(), `"interface": "Order\u001b[2JCreate\nX"`)
	require.Contains(t, out.String(), `"key": "order\u001b[2J"`)
}
