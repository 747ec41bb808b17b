package admin

import (
	"context"
	"slices"
	"sort"
	"strings"
)

// The roles a token may grant (§6), least to most, then the producer's.
const (
	RoleMonitor  = "monitor"
	RoleOperator = "operator"
	RoleAdmin    = "admin"
	RoleProducer = "producer"
)

// Roles lists the roles, for validation and help.
var Roles = []string{RoleMonitor, RoleOperator, RoleAdmin, RoleProducer}

// Permission is one kind of access a command needs.
type Permission int

// The permissions the roles grant.
const (
	// PermAny is every role's: the API document, whoami, reporting a
	// refusal of one's own request.
	PermAny     Permission = iota + 1
	PermRead               // metadata: queues, messages, audit, tuning, nodes
	PermPayload            // message payloads
	PermOperate            // resend, fail, release, stop, start
	PermTx                 // tx commit and rollback
	PermSend               // send messages
	PermAdmin              // tune, purge, eoio switch
)

// rolePermissions is what each role may do. Deny by default.
var rolePermissions = map[string][]Permission{
	RoleMonitor:  {PermAny, PermRead},
	RoleOperator: {PermAny, PermRead, PermPayload, PermOperate, PermTx},
	RoleAdmin:    {PermAny, PermRead, PermPayload, PermOperate, PermTx, PermAdmin},
	RoleProducer: {PermAny, PermSend, PermTx},
}

// RoleMay reports whether role grants p; an unknown role grants nothing.
func RoleMay(role string, p Permission) bool {
	return slices.Contains(rolePermissions[role], p)
}

// RolesWith lists the roles that grant p, in the order of Roles.
func RolesWith(p Permission) []string {
	var out []string
	for _, r := range Roles {
		if RoleMay(r, p) {
			out = append(out, r)
		}
	}
	return out
}

// NeedsRole names the roles that grant p, for a refusal to say which role
// a request needs: "operator or admin".
func NeedsRole(p Permission) string {
	names := RolesWith(p)
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// commands are the queuectl commands that work against a server, each with
// the permission it needs: the one list the HTTP API enforces and whoami
// reports.
var commands = map[string]Permission{
	"queue list": PermRead, "queue show": PermRead, "queue blocked": PermRead,
	"message list": PermRead, "message show": PermRead, "blacklist list": PermRead, "tx list": PermRead,
	"tune list": PermRead, "node list": PermRead, "audit list": PermRead, "eoio status": PermRead,
	"completion":      PermRead,
	"message payload": PermPayload,
	"message resend":  PermOperate, "message fail": PermOperate, "message edit": PermOperate, "blacklist release": PermOperate,
	"blacklist fail": PermOperate, "queue stop": PermOperate, "queue start": PermOperate,
	"queue delete": PermOperate,
	"tx commit":    PermTx, "tx rollback": PermTx,
	"send":     PermSend,
	"tune set": PermAdmin, "tune unset": PermAdmin, "purge": PermAdmin, "eoio switch": PermAdmin,
}

// Command is the queuectl command of an action: "message.resend" is run
// by "message resend".
func (a Action) Command() string { return strings.ReplaceAll(string(a), ".", " ") }

// CommandPermission returns what a command needs, and false for a name
// that is not a command working against a server.
func CommandPermission(command string) (Permission, bool) {
	p, ok := commands[command]
	return p, ok
}

// Commands lists the commands role may run, in name order.
func Commands(role string) []string {
	out := []string{}
	for c, p := range commands {
		if RoleMay(role, p) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// Identity is who the service acts for (GET /v1/whoami): a token's name
// and role, or, in embedded mode and on a server's unix socket, the
// operator, as admin.
type Identity struct {
	// Name is the token's name, or the operator's on the socket and in
	// embedded mode: what history and audit entries record.
	Name string `json:"name" yaml:"name"`
	Role string `json:"role" yaml:"role"`
	// Commands are the commands the role may run, in name order.
	Commands []string `json:"commands" yaml:"commands"`
}

// NewIdentity returns the identity of a token's holder, name, acting in role.
func NewIdentity(name, role string) *Identity {
	return &Identity{Name: name, Role: role, Commands: Commands(role)}
}

// OwnerIdentity returns the identity of the operator name working on a
// store of their own: in embedded mode, or on the unix socket of a server,
// which admits only the owner of the store. It answers as admin, and may
// run every command, send included.
func OwnerIdentity(name string) *Identity {
	all := make([]string, 0, len(commands))
	for c := range commands {
		all = append(all, c)
	}
	sort.Strings(all)
	return &Identity{Name: name, Role: RoleAdmin, Commands: all}
}

// May reports whether the identity may run command.
func (id *Identity) May(command string) bool {
	return slices.Contains(id.Commands, command)
}

// Who is the part of the service that says who it acts for.
type Who interface {
	// WhoAmI returns who the service acts for and what that caller may run.
	WhoAmI(ctx context.Context) (*Identity, error)
}
