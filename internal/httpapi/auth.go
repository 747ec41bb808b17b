package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/config"
)

// perm is one kind of access a route needs: the access model of admin,
// where the roles and the commands each may run are written once.
type perm = admin.Permission

// The permissions of routes that run no command of their own.
const (
	permRead    = admin.PermRead // metrics
	permDoc     = admin.PermAny  // the OpenAPI document: every role may read it
	permRefusal = admin.PermAny  // record a refusal of one's own request: every role
	permSelf    = admin.PermAny  // whoami: every role
)

// RoleNames lists the roles, for validation and help.
var RoleNames = admin.Roles

// rolesWith names the roles that grant p, for a refusal to say which role
// a request needs: "operator or admin".
func rolesWith(p perm) string { return admin.NeedsRole(p) }

// caller is who made a request.
type caller struct {
	name string // the token's name, or the operator on the socket
	role string // the token's role; none on the socket
	all  bool   // the unix socket: protected by its file mode, it may do everything
}

func (c *caller) may(p perm) bool {
	return c.all || admin.RoleMay(c.role, p)
}

// tokenSet checks bearer tokens against the configured SHA-256 hashes.
type tokenSet struct {
	tokens []config.Token
	hashes [][]byte
}

func newTokenSet(tokens []config.Token) *tokenSet {
	ts := &tokenSet{}
	for _, t := range tokens {
		h, err := hex.DecodeString(strings.TrimSpace(t.SHA256))
		if err != nil || len(h) != sha256.Size {
			continue // config validation reports these
		}
		ts.tokens = append(ts.tokens, t)
		ts.hashes = append(ts.hashes, h)
	}
	return ts
}

// Why a request has no caller (tokenSet.lookup).
const (
	noToken      = "a bearer token is required (Authorization: Bearer TOKEN)"
	notBearer    = "the Authorization header is not a bearer token (Authorization: Bearer TOKEN)"
	unknownToken = "the bearer token is not valid: the server has no token with its SHA-256"
)

// lookup returns the caller a request's bearer token names, or nil and why
// not: no token, or one the server does not know. Every configured hash is
// compared in constant time, so timing tells nothing.
func (ts *tokenSet) lookup(r *http.Request) (*caller, string) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return nil, noToken
	}
	// The scheme's name is case-insensitive (RFC 9110 §11.1).
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, notBearer
	}
	sum := sha256.Sum256([]byte(token))
	var found *caller
	for i, h := range ts.hashes {
		if subtle.ConstantTimeCompare(sum[:], h) == 1 && found == nil {
			t := ts.tokens[i]
			found = &caller{name: t.Name, role: t.Role}
		}
	}
	if found == nil {
		return nil, unknownToken
	}
	return found, ""
}

// HashToken returns the hex SHA-256 of a token, as the config stores it.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
