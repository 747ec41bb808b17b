package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
)

func TestExitCode(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		err  error
		want int
	}{
		{"ok", nil, 0},
		{"plain error", errors.New("disk on fire"), 1},
		{"invalid", domain.ErrInvalid, 2},
		{"invalid, formatted", domain.Invalidf("qos %q must be EO or EOIO", "XO"), 2},
		{"invalid, with hint", domain.WithHint(domain.ErrInvalid, "bad", "do better"), 2},
		{"too large", domain.Errorf(domain.ErrTooLarge, "payload is 11MiB"), 2},
		{"refused request of a batch", &admin.RequestError{Index: 2, Err: domain.Invalidf("bad sender")}, 2},
		{"not found", domain.NotFoundf("message %s does not exist", "x"), 3},
		{"conflict", domain.Conflictf("message x: status is DLVD"), 4},
		{"partial", fmt.Errorf("2 of 3 released: %w", ErrPartial), 5},
		{"unavailable", domain.WithHint(domain.ErrUnavailable, "the store is in use by another process", "stop it"), 6},
		{"timeout", fmt.Errorf("listing: %w", context.DeadlineExceeded), 6},
		{"permission", domain.Errorf(domain.ErrPermission, "token ops may not tune"), 7},
		{"interrupted", context.Canceled, 130},
		{"interrupted, wrapped", fmt.Errorf("send: %w", context.Canceled), 130},
		{"silent", &ErrSilent{Code: 4}, 4},
		{"silent, wrapped", fmt.Errorf("x: %w", &ErrSilent{Code: 5}), 5},
		{"printed partial", cmdutil.Printed(domain.Errorf(cmdutil.ErrPartial, "3 of 5 changed")), 5},
		{"printed conflict", cmdutil.Printed(domain.Conflictf("none of 2 changed")), 4},
		{"printed not found", cmdutil.Printed(domain.NotFoundf("none of 2 found")), 3},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, ExitCode(tt.err), tt.name)
		if tt.err != nil && tt.name != "silent" {
			require.Equal(t, tt.want, ExitCode(fmt.Errorf("outer: %w", tt.err)), "%s, wrapped once more", tt.name)
		}
	}
}

func TestExitCodeConstants(t *testing.T) {
	t.Parallel()

	// §5: 0 ok · 1 error · 2 usage · 3 not found · 4 conflict · 5 partial ·
	// 6 unavailable · 7 permission denied · 130 interrupted.
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 130},
		[]int{ExitOK, ExitError, ExitUsage, ExitNotFound, ExitConflict, ExitPartial, ExitUnavailable, ExitDenied, ExitInterrupted})
}

func TestPrintError(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		err  error
		want string
	}{
		{"plain", errors.New("disk on fire"), "queuectl: disk on fire\n"},
		{"kind text not repeated", domain.NotFoundf("message 0193 does not exist"), "queuectl: message 0193 does not exist\n"},
		{"hint", domain.WithHint(domain.ErrUnavailable, "the store /q.db is in use by another process", "stop the other queuectl process"),
			"queuectl: the store /q.db is in use by another process\nhint: stop the other queuectl process\n"},
		{"wrapped hint", fmt.Errorf("line 3: %w", domain.WithHint(domain.ErrInvalid, "bad", "fix it")), "queuectl: line 3: bad\nhint: fix it\n"},
		{"interrupted", fmt.Errorf("send: %w", context.Canceled), "queuectl: interrupted\n"},
		{"timeout", fmt.Errorf("listing: %w", context.DeadlineExceeded), "queuectl: timed out (see --timeout): listing: context deadline exceeded\n"},
		{"control characters escaped", domain.WithHint(domain.ErrInvalid, "queue \"X\x1b]0;pwned\a\" is too long", "see\x1b[2J"),
			"queuectl: queue \"X\\x1b]0;pwned\\x07\" is too long\nhint: see\\x1b[2J\n"},
		{"silent", &ErrSilent{Code: 5}, ""},
		{"printed bulk result", cmdutil.Printed(domain.Conflictf("none of 2 changed")), ""},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		PrintError(&b, tt.err)
		require.Equal(t, tt.want, b.String(), tt.name)
	}
}

func TestClassifyCobraError(t *testing.T) {
	t.Parallel()

	usage := []string{
		`unknown command "lst" for "queuectl queue"`,
		`unknown flag: --bogus`,
		`unknown shorthand flag: 'x' in -x`,
		`accepts 1 arg(s), received 2`,
		`requires at least 1 arg(s), only received 0`,
		`invalid argument "abc" for "--limit" flag: strconv.ParseInt: parsing "abc": invalid syntax`,
	}
	for _, msg := range usage {
		err := classifyCobraError(errors.New(msg))
		require.ErrorIs(t, err, domain.ErrInvalid, msg)
		require.Equal(t, ExitUsage, ExitCode(err), msg)
		require.EqualError(t, err, msg)
		require.Contains(t, domain.HintOf(err), "queuectl --help", msg)
	}

	err := classifyCobraError(errors.New("unknown command \"qeueu\" for \"queuectl\"\n\nDid you mean this?\n\tqueue\n"))
	require.EqualError(t, err, `unknown command "qeueu" for "queuectl"`, "one line")
	require.Equal(t, "did you mean 'queuectl queue'? see 'queuectl --help'", domain.HintOf(err), "cobra's suggestion becomes the hint")

	already := domain.WithHint(domain.ErrInvalid, "unknown flag: --x", "own hint")
	require.Same(t, already, classifyCobraError(already), "a usage error stays as it is")

	other := domain.NotFoundf("unknown command in audit log")
	require.Same(t, other, classifyCobraError(other), "only cobra's messages are reclassified")
	plain := errors.New("the store is locked")
	require.Same(t, plain, classifyCobraError(plain))
}
