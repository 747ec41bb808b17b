package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/domain"
)

// whoami asks GET /v1/whoami of srv with the given Authorization header
// and actor header (none when empty).
func whoami(t *testing.T, srv *httptest.Server, auth, actor string) (int, admin.Identity) {
	t.Helper()
	req, err := http.NewRequest("GET", srv.URL+"/v1/whoami", nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if actor != "" {
		req.Header.Set(wire.ActorHeader, actor)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var id admin.Identity
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&id))
	}
	return resp.StatusCode, id
}

// TestWhoAmI: every token learns its name, its role and the commands it may
// run — the commands of §6, written out here — without a refusal in the
// audit log; the socket answers admin, under the operator's name.
func TestWhoAmI(t *testing.T) {
	t.Parallel()
	b := setupAuth(t, tokenConfig)
	read := []string{"audit list", "blacklist list", "completion", "eoio status", "message list", "message show",
		"node list", "queue blocked", "queue list", "queue show", "tune list", "tx list"}
	operate := []string{"blacklist fail", "blacklist release", "message edit", "message fail", "message payload", "message resend",
		"queue delete", "queue start", "queue stop", "tx commit", "tx rollback"}
	administer := []string{"eoio switch", "purge", "tune set", "tune unset"}
	sorted := func(lists ...[]string) []string { return slices.Sorted(slices.Values(slices.Concat(lists...))) }
	for role, want := range map[string][]string{
		"monitor":  sorted(read),
		"operator": sorted(read, operate),
		"admin":    sorted(read, operate, administer),
		"producer": {"send", "tx commit", "tx rollback"},
	} {
		status, id := whoami(t, b.srv, "Bearer "+roleTokens[role], "")
		require.Equal(t, http.StatusOK, status, role)
		require.Equal(t, admin.Identity{Name: "ops-" + role, Role: role, Commands: want}, id, role)
	}

	status, id := whoami(t, b.socket, "", "local:alice")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, admin.Identity{Name: "local:alice", Role: "admin", Commands: sorted(read, operate, administer,
		[]string{"send"})}, id, "the socket may do everything, send included")

	for _, auth := range []string{"", "Bearer not-a-token"} {
		status, _ := whoami(t, b.srv, auth, "")
		require.Equal(t, http.StatusUnauthorized, status, "%q", auth)
	}
	entries := 0
	require.NoError(t, b.svc.Audit(t.Context(), admin.AuditFilter{}, func(*domain.AuditEntry) error {
		entries++
		return nil
	}))
	require.Zero(t, entries, "asking who one is changes nothing and is refused to nobody")
}

// TestWhoAmIAgreesWithTheRoutes: a command whoami lists is one whose route
// the token may use, and one it does not list is refused — for every route
// of a command and every role.
func TestWhoAmIAgreesWithTheRoutes(t *testing.T) {
	t.Parallel()
	b := setupAuth(t, tokenConfig)
	s := New(Options{})
	for _, role := range everyRole {
		_, id := whoami(t, b.srv, "Bearer "+roleTokens[role], "")
		c := &caller{name: "ops-" + role, role: role}
		for _, rt := range s.routes {
			cmds := []string{rt.cmd}
			if rt.permFor != nil {
				cmds = []string{"message resend", "message fail", "blacklist release", "blacklist fail", "queue stop",
					"queue start", "queue delete", "tx commit", "tx rollback"}
			}
			for _, cmd := range cmds {
				need, ok := admin.CommandPermission(cmd)
				if !ok {
					continue // no command: the API document, metrics, refusals, whoami
				}
				require.Equal(t, id.May(cmd), c.may(need), "%s: %s", role, cmd)
			}
		}
	}
}

// TestRoutesNeedWhatTheirCommandNeeds: a route that a command makes takes
// its permission from the access model, not from a second declaration.
func TestRoutesNeedWhatTheirCommandNeeds(t *testing.T) {
	t.Parallel()
	s := &Server{}
	for _, rt := range s.table() {
		if rt.cmd == "" || strings.Contains(rt.cmd, "/") {
			continue // the actions name their command in the path; the others serve none
		}
		_, ok := admin.CommandPermission(rt.cmd)
		require.True(t, ok, "%s %s: command %q is in the access model (admin.CommandPermission)", rt.Method, rt.Pattern, rt.cmd)
		require.Zero(t, rt.perm, "%s %s: its permission is its command's", rt.Method, rt.Pattern)
	}
}
