package cmdutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// BulkChunk is how many targets one call of Act gets when they come from
// stdin or from --all, so that memory stays bounded however many there are.
const BulkChunk = 1000

// maxTarget bounds one target read from stdin: ids are 36 bytes, queue
// names 24.
const maxTarget = 4096

// BulkAction describes one bulk command (§5): what it does and how --all
// finds its targets.
type BulkAction struct {
	Action admin.Action
	// Verb names the action in prompts and summaries: "resend", "roll back".
	Verb string
	// Change says what happens to a target that changes: "NDLV/WAIT → TBDL".
	Change string
	// Noun is what a target is: "message" or "queue".
	Noun string
	// Select is what --all selects: the filters of the matching list
	// command. Only --all needs it.
	Select *admin.Selection
	// IncludeBlacklisted is passed on to the service: message resend
	// resends blacklisted messages only when asked.
	IncludeBlacklisted bool
	// Blacklisted, for an action that leaves blacklisted messages alone
	// unless asked (message resend), selects the blacklisted messages
	// --all would select but for that: they are counted and named apart,
	// in the prompt and in the result.
	Blacklisted *admin.Selection
	// Suggest, if set, says which target one not found most likely meant
	// ("" when none is close): a hint line after the result.
	Suggest func(ctx context.Context, svc admin.Service, missing string) string
}

// BulkOptions are the flags and arguments every bulk command shares.
type BulkOptions struct {
	IO     *IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Hintf  func(format string, args ...any)

	// Args are the targets given as arguments; a lone "-" reads them from stdin.
	Args []string
	// AllowAll says the command has --all (AddBulkFlags sets it).
	AllowAll bool
	All      bool
	Yes      bool
	DryRun   bool
	Reason   string
	// FilterFlags are the names of the selection flags given; they need --all.
	FilterFlags []string
}

// AddBulkFlags adds --all, --yes and --dry-run; withAll false leaves out
// --all and --yes for commands that take explicit targets only.
func AddBulkFlags(cmd *cobra.Command, opts *BulkOptions, noun string, withAll bool) {
	fl := cmd.Flags()
	opts.AllowAll = withAll
	if withAll {
		fl.BoolVar(&opts.All, "all", false, "act on every "+noun+" the filters select (asks first on a terminal)")
		fl.BoolVarP(&opts.Yes, "yes", "y", false, "do not ask before acting on --all (needed off a terminal)")
	}
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print what would change and change nothing")
}

// ChangedFlags returns the names of those flags that were given.
func ChangedFlags(cmd *cobra.Command, names ...string) []string {
	var out []string
	for _, n := range names {
		if cmd.Flags().Changed(n) {
			out = append(out, "--"+n)
		}
	}
	return out
}

// RunBulk applies a bulk action to the targets opts name, prints the
// aggregated result in the -o format and returns an error whose kind gives
// the exit code (§5): none when every target changed, ErrPartial when some
// did, a conflict when none did and some were skipped, not found when none
// exists. The result explains those errors, so they are not printed again.
func RunBulk(ctx context.Context, a *BulkAction, opts *BulkOptions) error {
	if err := checkBulkArgs(a, opts); err != nil {
		return err
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	if opts.All && !opts.Yes && !opts.DryRun && !opts.IO.StdinTTY {
		return domain.WithHint(domain.ErrInvalid,
			"--all needs --yes when stdin is not a terminal to confirm on; nothing was changed",
			fmt.Sprintf("add --yes to %s every %s the filters select, or try --dry-run first", a.Verb, a.Noun))
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	r := &bulkRun{action: a, opts: opts, svc: svc, format: format, res: admin.NewBulkResult()}
	r.res.DryRun = opts.DryRun
	switch {
	case opts.All:
		err = r.all(ctx)
	case len(opts.Args) == 1 && opts.Args[0] == "-":
		err = r.stdin(ctx)
	default:
		err = r.act(ctx, opts.Args)
	}
	if err != nil && r.total() == 0 {
		return err // refused or aborted before anything was applied
	}
	if r.total() == 0 {
		if r.none != "" {
			opts.Hintf("%s", r.none)
		}
		if format.Tabular() || format == output.IDs {
			return nil
		}
	}
	if perr := printBulk(opts.IO, format, a, r.res, r.tally); perr != nil && err == nil {
		err = perr
	}
	if a.Suggest != nil {
		for _, missing := range r.res.NotFound[:min(len(r.res.NotFound), 5)] {
			if s := a.Suggest(ctx, svc, missing); s != "" {
				opts.Hintf("%s", output.Escape(s))
			}
		}
	}
	if err != nil {
		return err
	}
	return bulkOutcome(r.tally)
}

// checkBulkArgs applies the target rules of §5 before anything is opened.
func checkBulkArgs(a *BulkAction, opts *BulkOptions) error {
	hint := fmt.Sprintf("give %s ids as arguments, - to read them from stdin", a.Noun)
	if a.Noun == "queue" {
		hint = "give queue names as arguments, - to read them from stdin"
	}
	if opts.AllowAll {
		hint += ", or --all with filters"
	}
	if err := domain.ValidateReason(opts.Reason); err != nil {
		return domain.Errorf(domain.ErrInvalid, "--reason: %v; nothing was changed", err)
	}
	switch {
	case opts.All && len(opts.Args) > 0:
		return domain.WithHint(domain.ErrInvalid, fmt.Sprintf("give %ss or --all, not both", targetWord(a)), hint)
	case !opts.All && len(opts.Args) == 0 && len(opts.FilterFlags) > 0:
		// Filters name no targets by themselves: they select for --all.
		return noTargets{domain.WithHint(domain.ErrInvalid,
			fmt.Sprintf("no %ss to %s: %s selects %ss only with --all", targetWord(a), a.Verb, strings.Join(opts.FilterFlags, ", "), a.Noun),
			fmt.Sprintf("add --all to %s what the filters select (--dry-run first shows what that is)", a.Verb))}
	case !opts.All && len(opts.Args) == 0:
		return noTargets{domain.WithHint(domain.ErrInvalid, fmt.Sprintf("no %ss to %s", targetWord(a), a.Verb), hint)}
	case len(opts.Args) > 1 && containsDash(opts.Args):
		return domain.WithHint(domain.ErrInvalid, fmt.Sprintf("- reads the %ss from stdin; give it alone", targetWord(a)), hint)
	case !opts.All && len(opts.FilterFlags) > 0:
		return domain.WithHint(domain.ErrInvalid,
			fmt.Sprintf("%s selects %ss for --all; explicit %ss need no filters", strings.Join(opts.FilterFlags, ", "), a.Noun, targetWord(a)),
			"add --all, or leave out the filters")
	}
	return nil
}

func containsDash(args []string) bool {
	for _, a := range args {
		if a == "-" {
			return true
		}
	}
	return false
}

// targetWord is how the user names a target: an id or a queue name.
func targetWord(a *BulkAction) string {
	if a.Noun == "queue" {
		return "queue name"
	}
	return a.Noun + " id"
}

// bulkRun is one run of a bulk command: the result so far.
type bulkRun struct {
	action *BulkAction
	opts   *BulkOptions
	svc    admin.Service
	format output.Format
	// res holds what the format prints at the end; tally counts everything.
	res   *admin.BulkResult
	tally tally
	// none is the hint printed when there was nothing to do.
	none string
}

func (r *bulkRun) total() int { return r.tally.total() }

// act applies the action to one chunk of targets and adds up the result.
func (r *bulkRun) act(ctx context.Context, targets []string) error {
	return r.apply(ctx, admin.ActParams{Targets: targets})
}

// apply asks the service to act and adds up the result. -o ids prints each
// call's changed targets at once and keeps nothing; a table keeps no
// changed ids, only what it lists: so memory does not grow with the
// targets where the output does not need it.
func (r *bulkRun) apply(ctx context.Context, p admin.ActParams) error {
	p.Action, p.Reason, p.DryRun = r.action.Action, r.opts.Reason, r.opts.DryRun
	p.IncludeBlacklisted = r.action.IncludeBlacklisted
	res, err := r.svc.Act(ctx, p)
	if res == nil {
		return err
	}
	r.tally.add(res)
	switch {
	case r.format == output.IDs:
		if perr := printIDs(r.opts.IO, res); perr != nil && err == nil {
			err = perr
		}
	case r.format.Tabular():
		res.ChangedIDs = nil
		r.res.Add(res)
	default:
		r.res.Add(res)
	}
	return err
}

// stdin reads targets from stdin, whitespace separated, and applies them a
// chunk at a time. A malformed target stops the run before its chunk.
func (r *bulkRun) stdin(ctx context.Context) error {
	// Reads end with ctx (Ctrl-C, --timeout) even while stdin waits; a
	// target longer than any id or queue name stops the read at maxTarget.
	sc := bufio.NewScanner(ContextReader(ctx, r.opts.IO.In))
	sc.Buffer(make([]byte, 0, maxTarget), maxTarget)
	sc.Split(bufio.ScanWords)
	seen := map[string]bool{}
	chunk := make([]string, 0, BulkChunk)
	read, applied := 0, 0
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if err := r.act(ctx, chunk); err != nil {
			return err
		}
		applied += len(chunk)
		chunk = chunk[:0]
		return nil
	}
	for sc.Scan() {
		read++
		t := sc.Text()
		if err := r.checkTarget(t); err != nil {
			// The service refuses it too, and records the refusal in the
			// audit log as it does for a malformed argument or an API call.
			_, _ = r.svc.Act(ctx, admin.ActParams{Action: r.action.Action, Targets: []string{t}, Reason: r.opts.Reason})
			if applied == 0 {
				return fmt.Errorf("stdin, %s %d: %w; nothing was changed", targetWord(r.action), read, err)
			}
			return fmt.Errorf("stdin, %s %d: %w; the %d before it were applied (the result above), none after", targetWord(r.action), read, err, applied)
		}
		if r.action.Noun != "queue" {
			t = strings.ToLower(t)
		}
		if seen[t] {
			continue
		}
		seen[t] = true
		chunk = append(chunk, t)
		if len(chunk) == BulkChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = domain.Invalidf("stdin, %s %d is longer than %d bytes, no %s is", targetWord(r.action), read+1, maxTarget, targetWord(r.action))
		}
		if applied == 0 {
			return fmt.Errorf("reading %ss from stdin: %w; nothing was changed", targetWord(r.action), err)
		}
		return fmt.Errorf("reading %ss from stdin: %w; the %d before it were applied (the result above), none after", targetWord(r.action), err, applied)
	}
	if err := flush(); err != nil {
		return err
	}
	if read == 0 {
		r.none = fmt.Sprintf("no %ss on stdin; nothing to %s", targetWord(r.action), r.action.Verb)
	}
	return nil
}

// checkTarget checks the form of a target read from stdin.
func (r *bulkRun) checkTarget(t string) error {
	if r.action.Noun == "queue" {
		if len(t) > domain.MaxQueueName {
			return domain.Invalidf("queue name %q is longer than %d characters", t, domain.MaxQueueName)
		}
		return nil
	}
	return domain.ValidID(t)
}

// all counts the targets --all selects, asks on a terminal, then has the
// service apply the action to the selection, up to the last target counted
// (what appears after the count is left alone), as one action: however
// many batches it takes, the HOLD rule is restored once, at its end.
func (r *bulkRun) all(ctx context.Context) error {
	sel := *r.action.Select
	n, err := countSelection(ctx, r.svc, r.action.Action, &sel)
	if err != nil {
		return err
	}
	blacklisted := 0
	if r.action.Blacklisted != nil {
		if blacklisted, err = countUpTo(ctx, r.svc, r.action.Blacklisted, sel.Last, r.action.IncludeBlacklisted); err != nil {
			return err
		}
	}
	left := 0
	if !r.action.IncludeBlacklisted {
		left, blacklisted = blacklisted, 0
	}
	if n == 0 {
		r.none = fmt.Sprintf("no %ss match; nothing to %s", r.action.Noun, r.action.Verb)
		if left > 0 {
			r.none += "; " + leftAlone(left)
		}
		return nil
	}
	if !r.opts.Yes && !r.opts.DryRun {
		if err := r.confirm(ctx, n, blacklisted, left); err != nil {
			return err
		}
	}
	r.res.BlacklistedLeft = left
	return r.apply(ctx, admin.ActParams{Select: &sel, CountOnly: r.format.Tabular()})
}

// countUpTo counts the messages sel selects; within is set when they are
// part of the action's selection, which ends at last (what appeared after
// the count is left to a later action either way).
func countUpTo(ctx context.Context, svc admin.Service, sel *admin.Selection, last string, within bool) (int, error) {
	n := 0
	err := svc.Messages(ctx, *sel.Messages, func(m *domain.Message) error {
		if within && last != "" && m.ID > last {
			return admin.ErrStop
		}
		n++
		return nil
	})
	return n, err
}

// leftAlone says what a resend does not do to blacklisted messages, and
// how to do it.
func leftAlone(n int) string {
	noun := "message is"
	if n != 1 {
		noun = "messages are"
	}
	return fmt.Sprintf("%s blacklisted %s left alone: release with 'queuectl blacklist release', or add --include-blacklisted",
		FormatCount(n), noun)
}

// countSelection counts the targets sel names as the service selects them,
// and sets sel.Last to the last of them.
func countSelection(ctx context.Context, svc admin.Service, a admin.Action, sel *admin.Selection) (int, error) {
	n := 0
	if sel.Queues != nil {
		err := svc.Queues(ctx, *sel.Queues, func(q *domain.Queue) error {
			if a.Selects(q) {
				n++
				sel.Last = q.Name
			}
			return nil
		})
		return n, err
	}
	err := svc.Messages(ctx, *sel.Messages, func(m *domain.Message) error {
		n++
		sel.Last = m.ID
		return nil
	})
	return n, err
}

// errAborted is returned when the operator answers no.
var errAborted = errors.New("aborted; nothing was changed")

// confirm asks on stderr, reading the answer from stdin.
// blacklisted of the n are blacklisted messages the action includes; left
// are those it leaves alone.
func (r *bulkRun) confirm(ctx context.Context, n, blacklisted, left int) error {
	noun := r.action.Noun
	if n != 1 {
		noun += "s"
	}
	if left > 0 {
		fmt.Fprintf(r.opts.IO.ErrOut, "queuectl: %s\n", leftAlone(left))
	}
	apart := ""
	if blacklisted > 0 {
		apart = fmt.Sprintf(", %s of them blacklisted (crashes are reset to 0)", FormatCount(blacklisted))
	}
	fmt.Fprintf(r.opts.IO.ErrOut, "%s %s %s%s? [y/N] ", capitalize(r.action.Verb), FormatCount(n), noun, apart)
	// No answer, at the end of the input, is no.
	answer, _ := bufio.NewReader(io.LimitReader(ContextReader(ctx, r.opts.IO.In), 1<<10)).ReadString('\n')
	if ctx.Err() != nil {
		fmt.Fprintln(r.opts.IO.ErrOut)
		return fmt.Errorf("%w; nothing was changed", ctx.Err())
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return errAborted
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// FormatCount writes n with thousands separators: 1,204.
func FormatCount(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
