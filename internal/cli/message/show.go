package message

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// ShowOptions are the parsed flags of `message show`.
type ShowOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Now    func() time.Time

	ID      string
	Preview int
}

// NewShowCmd builds `message show`.
func NewShowCmd(f *cmdutil.Factory, runF func(context.Context, *ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a message: metadata, last error, history, payload preview",
		Example: `  queuectl message show 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f
  queuectl message show 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f -o json | jq .history`,
		Args:              cmdutil.ExactArgs(1, "ID"),
		ValidArgsFunction: completeOneID(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunShow(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Preview, "preview", 512, "show at most this many payload bytes (0 = none)")
	return cmd
}

// RunShow prints the message.
func RunShow(ctx context.Context, opts *ShowOptions) error {
	if opts.Preview < 0 {
		return domain.Invalidf("--preview %d must be 0 or more", opts.Preview)
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	m, err := svc.Message(ctx, opts.ID)
	if err != nil {
		return err
	}
	var payload []byte
	hidden := false
	if format.Tabular() && opts.Preview > 0 && m.Size > 0 {
		payload, err = svc.Payload(ctx, m.ID)
		// A monitor token may read metadata but not payloads: show the rest.
		if hidden = errors.Is(err, domain.ErrPermission); err != nil && !hidden {
			return err
		}
	}
	return output.Value(opts.IO.Out, format, m, func(w io.Writer, wide bool) error {
		if hidden {
			if err := printMessage(w, m, nil, 0, opts.Now()); err != nil {
				return err
			}
			_, err := fmt.Fprintf(w, "\nPayload (%d bytes): not shown; this token may not read payloads\n", m.Size)
			return err
		}
		return printMessage(w, m, payload, opts.Preview, opts.Now())
	}, func() []string { return []string{m.ID} })
}

func printMessage(w io.Writer, m *domain.Message, payload []byte, preview int, now time.Time) error {
	st := string(m.Status)
	if m.Blacklisted {
		st += " (blacklisted)"
	}
	if domain.CountsStuck(m) {
		st += " (stuck: the check-back gave up; commit or roll it back)"
	}
	pairs := [][2]string{
		{"ID", m.ID},
		{"Status", st},
		{"QoS", string(m.QoS)},
		{"Stage", string(m.Stage)},
		{"Queue", m.Queue},
		{"Seq", seq(m.Seq)},
		{"Sender", m.Sender},
		{"Receiver", receivers(m)},
	}
	opt := func(k, v string) {
		if v != "" {
			pairs = append(pairs, [2]string{k, v})
		}
	}
	opt("Interface", m.Interface)
	opt("App queue", m.AppQueue)
	opt("Parent", m.ParentID)
	opt("Key", m.Key)
	pairs = append(pairs,
		[2]string{"Size", fmt.Sprintf("%s (%d bytes)", domain.FormatBytes(m.Size), m.Size)},
		[2]string{"Attempts", strconv.Itoa(m.Attempts)},
		[2]string{"Crashes", strconv.Itoa(m.Crashes)},
	)
	if m.PayloadVersion > 1 {
		pairs = append(pairs, [2]string{"Payload version", fmt.Sprintf("%d (edited; 'message payload %s --version 1' is the original)", m.PayloadVersion, m.ID)})
	}
	if m.Error != "" {
		pairs = append(pairs, [2]string{"Error", fmt.Sprintf("%s (%s)", m.Error, output.Dash(string(m.ErrorClass)))})
	}
	if m.NextAttemptAt != nil {
		pairs = append(pairs, [2]string{"Next attempt", output.Time(m.NextAttemptAt)})
	}
	if m.Checks > 0 {
		pairs = append(pairs, [2]string{"Check-backs", fmt.Sprintf("%d, the last at %s: %s", m.Checks,
			output.Time(m.LastCheckAt), output.Dash(m.LastAnswer))})
	}
	opt("Node", m.Node)
	pairs = append(pairs,
		[2]string{"Created", fmt.Sprintf("%s (%s ago)", output.Time(&m.CreatedAt), output.Age(&m.CreatedAt, now))},
		[2]string{"Updated", fmt.Sprintf("%s (%s ago)", output.Time(&m.UpdatedAt), output.Age(&m.UpdatedAt, now))},
	)
	for _, k := range sortedKeys(m.Headers) {
		pairs = append(pairs, [2]string{"Header " + k, m.Headers[k]})
	}
	if err := output.Fields(w, pairs); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nHistory:")
	hist := output.NewList(w, output.Table, historyColumns, func(h domain.HistoryEntry) string { return "" })
	for _, h := range m.History {
		if err := hist.Add(h); err != nil {
			return err
		}
	}
	if err := hist.Close(); err != nil {
		return err
	}
	if preview == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nPayload (%d bytes):\n", m.Size)
	writePreview(w, payload, preview)
	return nil
}

var historyColumns = []output.Column[domain.HistoryEntry]{
	{Header: "AT", Value: func(h domain.HistoryEntry) string { return output.Time(&h.At) }},
	{Header: "CHANGE", Value: func(h domain.HistoryEntry) string {
		if h.From == "" {
			return "→ " + string(h.To)
		}
		return string(h.From) + " → " + string(h.To)
	}},
	{Header: "ACTOR", Value: func(h domain.HistoryEntry) string { return h.Actor }},
	{Header: "NODE", Value: func(h domain.HistoryEntry) string { return output.Dash(h.Node) }},
	{Header: "REASON", Value: func(h domain.HistoryEntry) string { return output.Dash(h.Reason) }},
}

// writePreview prints text payloads as text and anything else as a hex dump.
func writePreview(w io.Writer, p []byte, limit int) {
	if len(p) == 0 {
		fmt.Fprintln(w, "(empty)")
		return
	}
	cut := p[:min(len(p), limit)]
	if printable(cut) {
		// Text is shown line by line, each escaped for the terminal; a CRLF
		// line end is a line end.
		for _, line := range strings.Split(strings.TrimRight(string(cut), "\r\n"), "\n") {
			fmt.Fprintln(w, output.Escape(strings.TrimSuffix(line, "\r")))
		}
	} else {
		io.WriteString(w, hex.Dump(cut))
	}
	if len(p) > limit {
		fmt.Fprintf(w, "… %d more bytes; 'queuectl message payload ID' prints it all\n", len(p)-limit)
	}
}

// printable reports whether p is text, to be shown as such rather than as a
// hex dump: UTF-8 without control characters other than line ends and tabs
// (which the preview escapes). A multi-byte character cut at the preview's
// end is allowed.
func printable(p []byte) bool {
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		if r == utf8.RuneError && size <= 1 {
			return len(p) < utf8.UTFMax && !utf8.FullRune(p)
		}
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0x7f {
			return false
		}
		p = p[size:]
	}
	return true
}

func seq(n uint64) string {
	if n == 0 {
		return "- (assigned on commit)"
	}
	return strconv.FormatUint(n, 10)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// completeOneID completes the one id of show and payload, of a message in
// any status.
func completeOneID(f *cmdutil.Factory) cmdutil.CompleteFunc {
	ids := f.CompleteMessageIDs(nil, false)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return ids(cmd, args, toComplete)
	}
}
