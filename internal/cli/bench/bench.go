// Package bench implements `queuectl bench` and `queuectl bench fill`:
// measure this build's engine on this machine, and populate a store for
// trying admin commands at scale (§14).
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"

	"github.com/spf13/cobra"

	benchrun "github.com/queuectl/queuectl/internal/bench"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/output"
	"github.com/queuectl/queuectl/internal/store/bolt"
	"github.com/queuectl/queuectl/internal/store/postgres"
)

// Options are the parsed flags of `queuectl bench`.
type Options struct {
	IO         *cmdutil.IOStreams
	Config     func() (*config.Config, error)
	Format     func() (output.Format, error)
	Messages   int
	QoS        string
	Queues     int
	Payload    string
	Receiver   string
	CPUProfile string
	// Store is the store named by an explicit --store; empty for a fresh
	// temporary one.
	Store string
}

// NewCmd builds `queuectl bench` with its `fill` subcommand.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, Config: f.Config, Format: f.Format}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the engine's throughput and latency on this machine",
		Long: `Run the real engine — the one serve runs — on a fresh temporary store, send
--messages messages through the whole pipeline (inbound, routing, outbound,
delivery to a discard receiver or a local HTTP sink) and report:

  throughput           messages delivered per second, from the first send
                       to the last delivery
  send rate            messages stored per second by the sends
  latency p50/p99      from a message's send to its delivery; every message
                       is sent at once, so this is mostly time queued in
                       the burst, not one message's time alone
  commits/message      store commits, sends included
  CPU µs/message       this process's user and system time
  store bytes/message  the store's growth, after delivery

The engine settings come from the configuration (engine.workers,
engine.eo_window, …), so QUEUECTL_ENGINE_WORKERS=32 queuectl bench measures
another setting. --store runs on the given store instead of a temporary one: a
new file, or a store without messages (bench refuses one that holds any, and
changes nothing in it); the run's messages stay there afterwards. A progress
bar shows on a terminal.`,
		Example: `  queuectl bench
  queuectl bench --messages 50000 --qos EO -o json
  queuectl bench --qos EOIO --queues 1 --messages 20000
  queuectl bench --receiver http --payload 1KiB --cpuprofile cpu.out`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fl := cmd.Flags().Lookup("store"); fl != nil && fl.Changed {
				opts.Store = fl.Value.String()
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Messages, "messages", 10000, "how many messages to send")
	fl.StringVar(&opts.QoS, "qos", "EO", "quality of service of the messages: EO or EOIO")
	fl.IntVar(&opts.Queues, "queues", 1, "EO: queues per stage (EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL); EOIO: app queues")
	fl.StringVar(&opts.Payload, "payload", "200B", "payload size of each message")
	fl.StringVar(&opts.Receiver, "receiver", "discard", "receiver: discard, or http (a local HTTP sink bench starts)")
	fl.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	_ = cmd.RegisterFlagCompletionFunc("qos", cobra.FixedCompletions([]string{"EO", "EOIO"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("receiver", cobra.FixedCompletions([]string{"discard", "http"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.AddCommand(newFillCmd(f))
	return cmd
}

// Run measures one run and prints its result.
func Run(ctx context.Context, opts *Options) error {
	cmdutil.TuneForEngine()
	c, err := opts.Config()
	if err != nil {
		return err
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	qos, err := domain.ParseQoS(opts.QoS)
	if err != nil {
		return cmdutil.FlagError("--qos %q must be EO or EOIO", opts.QoS)
	}
	payload, err := config.ParseSize(opts.Payload)
	if err != nil {
		return cmdutil.FlagError("--payload %q is not a size like 200B or 1KiB", opts.Payload)
	}
	if int64(payload) > int64(c.Engine.MaxPayload) {
		return cmdutil.FlagError("--payload %s is above engine.max_payload (%s)", payload, c.Engine.MaxPayload)
	}
	st, closeStore, err := openBenchStore(ctx, c, opts.Store != "")
	if err != nil {
		return err
	}
	defer closeStore()

	if opts.CPUProfile != "" {
		f, err := os.Create(opts.CPUProfile)
		if err != nil {
			return domain.Invalidf("--cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	bar := newProgressBar(opts.IO, c.Quiet)
	res, err := benchrun.Run(ctx, benchrun.Options{
		Store: st, Config: c, Messages: opts.Messages, QoS: qos, Queues: opts.Queues, Payload: int(payload),
		ReceiverType: opts.Receiver, Progress: bar.show,
	})
	bar.done()
	if err != nil {
		return err
	}
	return output.Value(opts.IO.Out, format, res, func(w io.Writer, _ bool) error {
		return output.Fields(w, [][2]string{
			{"Messages", fmt.Sprintf("%d %s in %s, %d-byte payloads, %s receiver", res.Messages, res.QoS,
				plural(res.Queues, "queue", "queues"), res.Payload, res.Receiver)},
			{"Engine", fmt.Sprintf("%d workers, EO window %d", res.Workers, res.EOWindow)},
			{"Throughput", fmt.Sprintf("%s msgs/s end to end (%.2fs)", thousands(res.Throughput), res.Seconds)},
			{"Send rate", thousands(res.SendRate) + " msgs/s"},
			// Every message is sent at once: latency is mostly time queued
			// behind the burst, not the time one message takes alone.
			{"Latency", fmt.Sprintf("p50 %.1f ms, p99 %.1f ms, send to delivery, all %d sent at once (time queued in the burst)",
				res.LatencyP50, res.LatencyP99, res.Messages)},
			{"Commits", commitsLine(res)},
			{"CPU", fmt.Sprintf("%.0f µs per message", res.CPUPerMessage)},
			{"Store", fmt.Sprintf("%s bytes per message", thousands(res.StoreBytes))},
		})
	}, func() []string { return nil })
}

// commitsLine says how often the run committed and, on PostgreSQL, how many
// statements and network round trips it took.
func commitsLine(res *benchrun.Result) string {
	line := fmt.Sprintf("%.3f per message", res.CommitsPerMessage)
	if res.StatementsPerMessage != nil {
		line += fmt.Sprintf(", %.3f statements per message", *res.StatementsPerMessage)
	}
	if res.RoundTripsPerMessage != nil {
		line += fmt.Sprintf(", %.3f round trips per message", *res.RoundTripsPerMessage)
	}
	if res.PageWritesPerCommit != nil && res.PageBytesPerCommit != nil {
		line += fmt.Sprintf(", %.1f page writes and %s bytes of pages per commit", *res.PageWritesPerCommit,
			thousands(*res.PageBytesPerCommit))
	}
	return line
}

// openBenchStore opens the store a run sends to: the one the configuration
// names (--store: a bbolt file or a PostgreSQL database), or a fresh
// temporary file removed when the run ends.
func openBenchStore(ctx context.Context, c *config.Config, given bool) (engine.Store, func(), error) {
	if given {
		loc, err := cmdutil.ResolveStore(c)
		if err != nil {
			return nil, nil, err
		}
		if loc.Postgres != "" {
			st, err := postgres.Open(ctx, loc.Postgres, postgres.Options{Migrate: true, MaxConns: int32(c.Engine.Workers) + 8})
			if err != nil {
				return nil, nil, err
			}
			return st, func() { st.Close() }, nil
		}
		st, err := bolt.Open(loc.Path, bolt.Options{MakeDirs: cmdutil.DefaultStore(loc.Path)})
		if err != nil {
			return nil, nil, err
		}
		return st, func() { st.Close() }, nil
	}
	dir, err := os.MkdirTemp("", "queuectl-bench-")
	if err != nil {
		return nil, nil, err
	}
	st, err := bolt.Open(filepath.Join(dir, "bench.db"), bolt.Options{})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return st, func() { st.Close(); os.RemoveAll(dir) }, nil
}

// thousands formats a rate with thousands separators.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// plural says n things.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
