// Package send implements `queuectl send`: store new inbound messages.
package send

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// Options are the parsed flags of `queuectl send`.
type Options struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Hintf  func(format string, args ...any)
	// PayloadLimit is engine.max_payload of the service the messages go
	// to; input is read up to it, before the service is opened.
	PayloadLimit func(ctx context.Context) (int64, error)

	QoS       string
	Sender    string
	Receivers []string
	AppQueue  string
	Interface string
	Headers   []string
	File      string
	JSONL     bool
	Prepare   bool
	// Key is the idempotency key (§2); KeyGiven tells an empty --key ""
	// from none.
	Key      string
	KeyGiven bool
}

// NewCmd builds the command; runF replaces the run function in flag tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{
		IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf, PayloadLimit: f.PayloadLimit,
	}
	cmd := &cobra.Command{
		Use:   "send",
		Short: "Send a message (payload from --file or stdin), or a batch with --jsonl",
		Long: `Store a new inbound message and print its id.

The payload is read from --file, or from stdin. It may be empty and may be
binary; it is stored byte for byte. With --prepare the message is stored as PEND
for a transactional send and becomes visible to delivery only on 'tx commit'.

With --key the send is idempotent: a key is unique per sender, and sending
again with a key the store holds for the sender stores nothing — it prints
the id of the message sent with it first (and exits 0), so a producer that
timed out can retry safely. The same key with a different payload,
receivers, qos or app queue is a conflict (exit 4) naming what differs.

With --jsonl, stdin holds one message per line:
  {"qos": "EO", "sender": "ERP", "receiver": "WMS", "interface": "OrderCreate",
   "headers": {"k": "v"}, "payload": "text"}
("receivers" takes a list, "payload_b64" a base64 payload, "app_queue" the
EOIO application queue, "key" the idempotency key, "prepare" true for PEND).
Every line is checked before anything is stored; a bad line is named and
nothing is stored. The ids are printed one per line, in input order; a line
that repeats a key prints the id of its key's message.`,
		Example: `  echo '<order id="4711"/>' | queuectl send --qos EO --sender ERP --receiver WMS
  queuectl send --qos EOIO --sender ERP --receiver WMS --app-queue ORDERS_DE --file order.xml
  queuectl send --qos EO --sender ERP --receiver WMS --header X-Trace=abc < payload.bin
  queuectl send --qos EO --sender ERP --receiver WMS --key order-4711 --file order.xml
  queuectl send --jsonl < messages.jsonl`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.KeyGiven = cmd.Flags().Changed("key")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmdutil.Audited(cmd, "send")
	cmdutil.CreatesStore(cmd)
	fl := cmd.Flags()
	fl.StringVar(&opts.QoS, "qos", "", "quality of service: EO or EOIO")
	fl.StringVar(&opts.Sender, "sender", "", "sending system (1-60 of A-Z a-z 0-9 _ - .)")
	fl.StringArrayVar(&opts.Receivers, "receiver", nil, "receiving system; repeat for several")
	fl.StringVar(&opts.AppQueue, "app-queue", "", "EOIO application queue (1-16 of A-Z 0-9 _ /)")
	fl.StringVar(&opts.Interface, "interface", "", "interface name (up to 120 characters)")
	fl.StringArrayVar(&opts.Headers, "header", nil, "header KEY=VALUE; repeat for several")
	fl.StringVar(&opts.File, "file", "", "read the payload from this file instead of stdin")
	fl.BoolVar(&opts.JSONL, "jsonl", false, "read one message per line of JSON from stdin")
	fl.BoolVar(&opts.Prepare, "prepare", false, "store as PEND for a transactional send (commit with 'tx commit')")
	fl.StringVar(&opts.Key, "key", "", "idempotency key (1-128 printable characters), unique per sender: a repeat stores nothing")
	_ = cmd.RegisterFlagCompletionFunc("qos", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"EO", "EOIO"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// noArgs refuses arguments, with a hint for the likely mistake of naming
// the payload file as one.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return domain.WithHint(domain.ErrInvalid,
		fmt.Sprintf("queuectl send takes no arguments, got %q", strings.Join(args, " ")),
		fmt.Sprintf("to send a file's content: --file %s (or < %s)", args[0], args[0]))
}

// Run sends the message or batch and prints the ids.
func Run(ctx context.Context, opts *Options) error {
	format, err := opts.Format()
	if err != nil {
		return err
	}
	if opts.JSONL {
		if err := opts.checkJSONLFlags(); err != nil {
			return err
		}
		return opts.sendJSONL(ctx, format)
	}
	req, err := opts.request(ctx)
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	sent, err := svc.Send(ctx, []domain.SendRequest{*req})
	if err != nil {
		return err
	}
	// One message is one object, as message show prints it, with
	// duplicate; a table is its id, so that id=$(queuectl send ...) works.
	m := sent[0]
	if m.Duplicate {
		opts.Hintf("key %q of sender %s was sent already: message %s (%s); nothing new was stored",
			m.Key, m.Sender, m.ID, m.Status)
	}
	return output.Value(opts.IO.Out, format, m, func(w io.Writer, _ bool) error {
		_, err := fmt.Fprintln(w, m.ID)
		return err
	}, func() []string { return []string{m.ID} })
}

func (opts *Options) checkJSONLFlags() error {
	if opts.QoS != "" || opts.Sender != "" || len(opts.Receivers) > 0 || opts.AppQueue != "" ||
		opts.Interface != "" || len(opts.Headers) > 0 || opts.File != "" || opts.Prepare || opts.KeyGiven {
		return domain.Invalidf("--jsonl takes every field from its input lines; drop the other send flags")
	}
	return nil
}

// request builds the single message of a plain send from flags and payload.
func (opts *Options) request(ctx context.Context) (*domain.SendRequest, error) {
	if opts.QoS == "" {
		return nil, domain.WithHint(domain.ErrInvalid, "--qos is required (EO or EOIO)",
			"e.g. queuectl send --qos EO --sender ERP --receiver WMS < payload")
	}
	qos, err := domain.ParseQoS(opts.QoS)
	if err != nil {
		return nil, err
	}
	headers, err := parseHeaders(opts.Headers)
	if err != nil {
		return nil, err
	}
	if opts.KeyGiven && opts.Key == "" {
		return nil, domain.Invalidf("--key is empty; a key is 1-%d printable characters", domain.MaxKey)
	}
	req := &domain.SendRequest{
		QoS: qos, Sender: opts.Sender, Receivers: opts.Receivers, AppQueue: opts.AppQueue,
		Interface: opts.Interface, Headers: headers, Prepare: opts.Prepare, Key: opts.Key,
	}
	// Check everything but the payload before waiting on stdin.
	if err := req.Validate(1<<62 - 1); err != nil {
		return nil, err
	}
	limit, err := opts.PayloadLimit(ctx)
	if err != nil {
		return nil, err
	}
	if req.Payload, err = opts.readPayload(ctx, limit); err != nil {
		return nil, err
	}
	return req, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

func parseHeaders(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	h := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, domain.Invalidf("--header %q must be KEY=VALUE", kv)
		}
		if _, dup := h[k]; dup {
			return nil, domain.Invalidf("--header %q is given twice", k)
		}
		h[k] = v
	}
	return h, nil
}

// newIDList prints stored messages: their ids for table and ids output
// (so that id=$(queuectl send ...) works), the message objects, with
// duplicate, otherwise.
func newIDList(w io.Writer, f output.Format) *output.List[admin.Sent] {
	if f.Tabular() {
		f = output.IDs
	}
	return output.NewList[admin.Sent](w, f, nil, func(m admin.Sent) string { return m.ID })
}
