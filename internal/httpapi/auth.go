package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/queuectl/queuectl/internal/config"
)

// perm is one kind of access a route needs.
type perm int

// The permissions the roles of §6 grant.
const (
	permRead    perm = iota + 1 // metadata: queues, messages, audit, tuning
	permPayload                 // message payloads
	permOperate                 // resend, fail, release, stop, start
	permTx                      // tx commit and rollback
	permSend                    // send messages
	permAdmin                   // tune, purge, eoio switch
	permDoc                     // the OpenAPI document: every role may read it
	permRefusal                 // record a refusal of one's own request: every role
)

// Roles maps each role of §6 to what it may do. Deny by default.
var roles = map[string][]perm{
	"monitor":  {permDoc, permRefusal, permRead},
	"operator": {permDoc, permRefusal, permRead, permPayload, permOperate, permTx},
	"admin":    {permDoc, permRefusal, permRead, permPayload, permOperate, permTx, permAdmin},
	"producer": {permDoc, permRefusal, permSend, permTx},
}

// RoleNames lists the roles, for validation and help.
var RoleNames = []string{"monitor", "operator", "admin", "producer"}

// caller is who made a request.
type caller struct {
	name  string // the token's name, or "socket"
	perms []perm
	all   bool // the unix socket: protected by its file mode, it may do everything
}

func (c *caller) may(p perm) bool {
	if c.all {
		return true
	}
	for _, q := range c.perms {
		if q == p {
			return true
		}
	}
	return false
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

// lookup returns the caller a request's bearer token names, or nil. Every
// configured hash is compared in constant time, so timing tells nothing.
func (ts *tokenSet) lookup(r *http.Request) *caller {
	// The scheme's name is case-insensitive (RFC 9110 §11.1).
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(token))
	var found *caller
	for i, h := range ts.hashes {
		if subtle.ConstantTimeCompare(sum[:], h) == 1 && found == nil {
			t := ts.tokens[i]
			found = &caller{name: t.Name, perms: roles[t.Role]}
		}
	}
	return found
}

// HashToken returns the hex SHA-256 of a token, as the config stores it.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
