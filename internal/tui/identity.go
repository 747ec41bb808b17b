package tui

import (
	"context"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// actionCommands are the commands behind the TUI's actions: a role that
// may run none of them gets a read-only TUI.
var actionCommands = []string{"message resend", "message fail", "message edit", "blacklist release", "blacklist fail",
	"queue stop", "queue start", "tune set", "tune unset"}

// Identify asks the service who the TUI acts for. It refuses a caller that
// may not list queues — a producer's token — which the server would refuse
// at every refresh, each refusal in its audit log.
func Identify(ctx context.Context, svc admin.Service, timeout time.Duration) (*admin.Identity, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, err := svc.WhoAmI(ctx)
	if err != nil {
		return nil, err
	}
	if !id.May("queue list") {
		need, _ := admin.CommandPermission("queue list")
		return nil, domain.WithHint(domain.ErrPermission,
			"token "+id.Name+" (role "+id.Role+") may not read queues, which the TUI shows: it needs role "+admin.NeedsRole(need),
			"use a token of one of those roles (--token, --token-file or a context)")
	}
	return id, nil
}

// mayAct reports whether the identity may run any of the TUI's actions.
func mayAct(id *admin.Identity) bool {
	for _, c := range actionCommands {
		if id.May(c) {
			return true
		}
	}
	return false
}

// who is the header's part that names the identity: "as ops, role operator".
func (m *Model) who() string {
	return "as " + m.identity.Name + ", role " + m.identity.Role
}

// mayRun reports whether the role may run command, and else says so in the
// status line, for the key that asked: nothing is sent that the server
// would refuse (and audit).
func (m *Model) mayRun(msg tea.KeyMsg, command string) bool {
	if command == "" || m.identity.May(command) {
		return true
	}
	text := fmt.Sprintf("%s: role %s may not run '%s'", msg.String(), m.identity.Role, command)
	if need, ok := admin.CommandPermission(command); ok {
		text += "; it needs role " + admin.NeedsRole(need)
	}
	m.status = components.StatusLine{Text: text, Error: true}
	return false
}
