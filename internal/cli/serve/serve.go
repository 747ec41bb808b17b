// Package serve implements `queuectl serve`: run the delivery engine in the
// foreground until a signal stops it.
package serve

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// NewCmd builds `queuectl serve`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var logFormat string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the delivery engine in the foreground",
		Long: `Run the engine: route inbound messages to their receivers, deliver outbound
messages, retry transient errors, block EOIO queues behind failed heads, and
recover from crashes with blacklisting. It logs one line per notable event to
stderr (start, crash recovery, queue blocked, message blacklisted, stop).

SIGINT or SIGTERM stops it cleanly: deliveries in flight get
engine.shutdown_timeout to finish, the rest are handed back to TBDL; a clean
stop never counts as a crash. The process holds the store while it runs.`,
		Example: `  queuectl serve
  queuectl serve --config /etc/queuectl/config.yaml --log-format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd.Context(), f, logFormat)
		},
	}
	cmd.Flags().StringVar(&logFormat, "log-format", "text", "log line format: text or json")
	return cmd
}

func run(ctx context.Context, f *cmdutil.Factory, logFormat string) error {
	c, err := f.Config()
	if err != nil {
		return err
	}
	var h slog.Handler
	switch logFormat {
	case "text":
		h = slog.NewTextHandler(f.IO.ErrOut, nil)
	case "json":
		h = slog.NewJSONHandler(f.IO.ErrOut, nil)
	default:
		return cmdutil.FlagError("--log-format %q must be text or json", logFormat)
	}
	path, err := cmdutil.StorePath(c)
	if err != nil {
		return err
	}
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	eng, err := engine.New(engine.Options{Store: st, Config: c, Logger: slog.New(h).With("store", path)})
	if err != nil {
		return err
	}
	return eng.Run(ctx)
}
