package config

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// TokenRoles are the roles of §6 a token may grant, least to most for the
// operators; producer only sends.
var TokenRoles = []string{"monitor", "operator", "admin", "producer"}

// reservedTokenNames are the actors the server writes itself into history
// and audit entries; a token by one of these names would pass for them.
var reservedTokenNames = []string{"engine", "server", "socket", "anonymous"}

// ValidateTokenName checks a token's name, which history and audit entries
// record as the actor: 1-60 characters of A-Z a-z 0-9 _ - . and none of
// the names the server records for itself.
func ValidateTokenName(name string) error {
	if err := domain.ValidateParty("token name", name); err != nil {
		return err
	}
	if slices.Contains(reservedTokenNames, strings.ToLower(name)) {
		return domain.Invalidf("token name %q is reserved: history and audit entries use it for the server itself; choose another",
			name)
	}
	return nil
}

// ValidateTokenRole checks that role is one of TokenRoles.
func ValidateTokenRole(role string) error {
	if slices.Contains(TokenRoles, role) {
		return nil
	}
	return domain.Invalidf("role %q must be one of %s", role, strings.Join(TokenRoles, ", "))
}

// validateTokens checks server.tokens: each entry's name, role and hash,
// and that no name or hash is given twice. An error names the entry.
func validateTokens(tokens []Token) error {
	names, hashes := map[string]int{}, map[string]int{}
	for i, t := range tokens {
		entry := fmt.Sprintf("server.tokens[%d]", i)
		if t.Name != "" {
			entry += " (" + t.Name + ")"
		}
		if err := ValidateTokenName(t.Name); err != nil {
			return domain.Invalidf("%s: %v", entry, err)
		}
		if err := ValidateTokenRole(t.Role); err != nil {
			return domain.Invalidf("%s: %v", entry, err)
		}
		sum := strings.ToLower(strings.TrimSpace(t.SHA256))
		if b, err := hex.DecodeString(sum); err != nil || len(b) != 32 {
			return domain.WithHint(domain.ErrInvalid,
				entry+": sha256 must be the 64 hex digits of the token's SHA-256",
				"'queuectl token create NAME --role ROLE' prints a token and its line")
		}
		if t.Created != "" {
			if _, err := time.Parse(time.RFC3339, t.Created); err != nil {
				return domain.Invalidf("%s: created %q is not an RFC 3339 time (2026-03-01T12:00:00Z)", entry, t.Created)
			}
		}
		if j, ok := names[t.Name]; ok {
			return domain.Invalidf("%s: the name is also server.tokens[%d]'s; audit entries could not tell them apart", entry, j)
		}
		if j, ok := hashes[sum]; ok {
			return domain.Invalidf("%s: the sha256 is also server.tokens[%d]'s: one token with two names", entry, j)
		}
		names[t.Name], hashes[sum] = i, i
	}
	return nil
}
