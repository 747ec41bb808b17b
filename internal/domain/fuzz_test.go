package domain_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// The rules of §2 as regular expressions, written apart from the
// validators so that the fuzzers compare two statements of each rule.
var (
	partyRule    = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,60}$`)
	appQueueRule = regexp.MustCompile(`^[0-9A-Z_/]{1,16}$`)
	headerKey    = regexp.MustCompile(`^[A-Za-z0-9\-]{1,64}$`)
	idRule       = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// checkRefusal requires err to be a clean refusal: ErrInvalid and nothing
// else, a readable message, the same every time.
func checkRefusal(t *testing.T, err, again error) {
	t.Helper()
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.False(t, errors.Is(err, domain.ErrTooLarge) || errors.Is(err, domain.ErrNotFound))
	require.True(t, utf8.ValidString(err.Error()), "the message is valid UTF-8: %q", err.Error())
	require.NotContains(t, err.Error(), "\n")
	require.Equal(t, err.Error(), again.Error(), "the same input gets the same message")
}

func FuzzValidateParty(f *testing.F) {
	for _, s := range []string{"ERP", "WMS", "sap.erp-01_x", "", " ", "E R P", "ERP\n", "ÉRP", "Ｅ", "a/b",
		strings.Repeat("A", 60), strings.Repeat("A", 61), strings.Repeat("é", 61), "\xff", "ERP\x00", "-", "..", "%41"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := domain.ValidateParty("sender", name)
		if partyRule.MatchString(name) {
			require.NoError(t, err, "%q", name)
			return
		}
		require.Error(t, err, "%q", name)
		checkRefusal(t, err, domain.ValidateParty("sender", name))
		require.True(t, strings.HasPrefix(err.Error(), "sender "), "the message names the field: %q", err.Error())
	})
}

func FuzzValidateAppQueue(f *testing.F) {
	for _, s := range []string{"ORDERS_DE", "SAP/ORDERS", "orders", "Orders", "", "A", strings.Repeat("Q", 16),
		strings.Repeat("Q", 17), "ORDERS-DE", "ORDERS DE", "ÄQ", "\xffQ", "Q\x00", "/", "__", "ÖRDERS"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := domain.ValidateAppQueue(name)
		if appQueueRule.MatchString(name) {
			require.NoError(t, err, "%q", name)
			return
		}
		require.Error(t, err, "%q", name)
		checkRefusal(t, err, domain.ValidateAppQueue(name))
		// Lowercase is an error, not silently uppercased: when case is the
		// only fault, the message says so and names the uppercase form.
		if up := strings.ToUpper(name); isASCII(name) && appQueueRule.MatchString(up) {
			require.Contains(t, err.Error(), "lowercase")
			require.Contains(t, err.Error(), `did you mean "`+up+`"?`)
		}
	})
}

func FuzzValidateHeaders(f *testing.F) {
	f.Add("X-Env", "prod", "Trace-Id", "abc", 0)
	f.Add("", "v", "k", "v", 0)
	f.Add("a b", "v", "k", "v", 0)
	f.Add("k", strings.Repeat("v", 1024), "k2", strings.Repeat("v", 1025), 0)
	f.Add("Ключ", "v", "k", "\xff", 0)
	f.Add("k", "v", strings.Repeat("K", 64), "v", 0)
	f.Add("k", "v", strings.Repeat("K", 65), "v", 0)
	f.Add("k", "v", "k2", "v", 62)
	f.Add("k", "v", "k2", "v", 63)
	f.Add("k_1", "v", "k:2", "v", 5)
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, extra int) {
		h := map[string]string{k1: v1, k2: v2}
		extra = max(0, min(extra, 100))
		for i := range extra {
			h["x-"+strings.Repeat("n", i%60)+string(rune('a'+i/60))] = "v"
		}
		ok := len(h) <= domain.MaxHeaders
		for k, v := range h {
			ok = ok && headerKey.MatchString(k) && len(v) <= domain.MaxHeaderValue
		}
		err := domain.ValidateHeaders(h)
		if ok {
			require.NoError(t, err, "%q", h)
			return
		}
		require.Error(t, err, "%q", h)
		checkRefusal(t, err, domain.ValidateHeaders(h))
	})
}

func FuzzValidID(f *testing.F) {
	for _, s := range []string{"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", "0193A5C4-7B1E-7C3D-9F5E-2A4B6C8D0E1F",
		"", "nope", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1", "0193a5c47b1e7c3d9f5e2a4b6c8d0e1f",
		"{0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f}", "urn:uuid:0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f",
		"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1g", "0193a5c4+7b1e-7c3d-9f5e-2a4b6c8d0e1f", "../../v1/queues/XBTI0000/x",
		"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1\xff", "00000000-0000-0000-0000-000000000000"} {
		f.Add(s)
	}
	f.Add(domain.NewID())
	f.Fuzz(func(t *testing.T, id string) {
		err := domain.ValidID(id)
		if idRule.MatchString(id) {
			require.NoError(t, err, "%q", id)
			require.NoError(t, domain.ValidID(strings.ToLower(id)))
			return
		}
		require.Error(t, err, "%q", id)
		checkRefusal(t, err, domain.ValidID(id))
		require.True(t, strings.HasPrefix(err.Error(), "message id "), err.Error())
	})
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
