package bench

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	benchrun "github.com/queuectl/queuectl/internal/bench"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/output"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// FillOptions are the parsed flags of `queuectl bench fill`.
type FillOptions struct {
	IO          *cmdutil.IOStreams
	Config      func() (*config.Config, error)
	Format      func() (output.Format, error)
	Messages    int
	Queues      int
	Blacklisted int
	Payload     string
	Force       bool
	// Announce names the target a context chose, before the store changes.
	Announce func()
}

func newFillCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &FillOptions{IO: f.IO, Config: f.Config, Format: f.Format, Announce: f.AnnounceContextTarget}
	cmd := &cobra.Command{
		Use:   "fill",
		Short: "Populate a store with many messages, for trying admin commands at scale",
		Long: `Store --messages outbound messages spread over --queues queues (EO and EOIO
by turns) in the store (the default one, or --db): most DLVD, the last of each
queue TBDL, and --blacklisted of the EO ones NDLV and blacklisted. Then try
queue list, blacklist list or the TUI on it. It writes straight to the store
in commits of 10,000 messages; a million take well under a minute. A store
that holds messages already is left alone unless --force adds to it.`,
		Example: `  queuectl --db big.db bench fill --messages 1000000 --queues 1000 --blacklisted 100
  queuectl --db big.db queue list
  queuectl --db big.db blacklist list --limit 100`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The defaults fit a small --messages too: no more queues
			// than messages, no more blacklisted than EO messages.
			if !cmd.Flags().Changed("queues") && opts.Queues > opts.Messages && opts.Messages > 0 {
				opts.Queues = opts.Messages
			}
			if !cmd.Flags().Changed("blacklisted") {
				opts.Blacklisted = min(opts.Blacklisted, benchrun.EOMessages(opts.Messages, opts.Queues))
			}
			return RunFill(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Messages, "messages", 100000, "how many messages to store")
	fl.IntVar(&opts.Queues, "queues", 100, "how many queues to spread them over (at most --messages)")
	fl.IntVar(&opts.Blacklisted, "blacklisted", 10, "how many of them are blacklisted (NDLV)")
	fl.StringVar(&opts.Payload, "payload", "200B", "payload size of each message")
	fl.BoolVar(&opts.Force, "force", false, "add to a store that holds messages already")
	cmdutil.Acts(cmd)
	return cmd
}

// RunFill populates the store and says what it stored.
func RunFill(ctx context.Context, opts *FillOptions) error {
	c, err := opts.Config()
	if err != nil {
		return err
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	payload, err := config.ParseSize(opts.Payload)
	if err != nil {
		return cmdutil.FlagError("--payload %q is not a size like 200B or 1KiB", opts.Payload)
	}
	path, err := cmdutil.StorePath(c)
	if err != nil {
		return err
	}
	if opts.Announce != nil {
		opts.Announce()
	}
	st, err := bolt.Open(path, bolt.Options{MakeDirs: cmdutil.DefaultStore(path)})
	if err != nil {
		return err
	}
	defer st.Close()
	bar := newProgressBar(opts.IO, c.Quiet)
	res, err := benchrun.Fill(ctx, st, benchrun.FillOptions{
		Messages: opts.Messages, Queues: opts.Queues, Blacklisted: opts.Blacklisted, Payload: int(payload),
		Force: opts.Force, Progress: bar.show,
	})
	bar.done()
	if err != nil {
		return err
	}
	messages := "messages"
	if res.Messages == 1 {
		messages = "message"
	}
	return output.Value(opts.IO.Out, format, res, func(w io.Writer, _ bool) error {
		_, err := fmt.Fprintf(w, "Stored %s %s in %s in %.1fs (%s): %d blacklisted, %d TBDL, the rest DLVD.\n",
			thousands(float64(res.Messages)), messages,
			plural(res.Queues, "queue", "queues"), res.Seconds, path, res.Blacklisted, res.Open)
		return err
	}, func() []string { return nil })
}
