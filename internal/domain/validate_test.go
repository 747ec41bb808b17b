package domain_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// requireInvalid asserts that err is an ErrInvalid whose text contains every
// one of want: the bad value and the rule it breaks.
func requireInvalid(t *testing.T, err error, want ...string) {
	t.Helper()
	require.ErrorIs(t, err, domain.ErrInvalid)
	for _, w := range want {
		require.ErrorContains(t, err, w)
	}
}

func TestValidatePartyAccepts(t *testing.T) {
	t.Parallel()

	for _, name := range []string{
		"a",
		"ERP",
		"erp.eu-west_1",
		"A-Z.a-z_0-9",
		strings.Repeat("x", domain.MaxPartyName), // exactly 60
	} {
		for _, field := range []string{"sender", "receiver"} {
			require.NoError(t, domain.ValidateParty(field, name), "%s %q", field, name)
		}
	}
}

func TestValidatePartyRefuses(t *testing.T) {
	t.Parallel()

	long := strings.Repeat("x", domain.MaxPartyName+1) // 61
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", []string{"sender is required", "1-60", "A-Z a-z 0-9 _ - ."}},
		{"61 chars", long, []string{long, "61 characters", "limit is 60"}},
		{"space", "ERP 1", []string{`"ERP 1"`, `' '`, "A-Z a-z 0-9 _ - ."}},
		{"slash", "ERP/1", []string{`"ERP/1"`, `'/'`}},
		{"colon", "erp:1", []string{`"erp:1"`, `':'`}},
		{"non-ASCII letter", "Müller", []string{`"Müller"`, `'ü'`}},
		// 31 two-byte letters are 62 bytes but 31 characters: the letter is
		// what is wrong, not the length.
		{"non-ASCII under the limit", strings.Repeat("é", 31), []string{`'é'`, "allowed are"}},
		{"61 non-ASCII chars", strings.Repeat("é", 61), []string{"61 characters", "limit is 60"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireInvalid(t, domain.ValidateParty("sender", tt.in), tt.want...)
		})
	}

	requireInvalid(t, domain.ValidateParty("receiver", "a b"), `receiver "a b"`)
}

func TestValidateAppQueueAccepts(t *testing.T) {
	t.Parallel()

	for _, name := range []string{
		"A",
		"ORDERS_DE",
		"0123456789",
		"EU/DE/ORDERS",
		strings.Repeat("Q", domain.MaxAppQueue), // exactly 16
	} {
		require.NoError(t, domain.ValidateAppQueue(name), "%q", name)
	}
}

func TestValidateAppQueueRefuses(t *testing.T) {
	t.Parallel()

	long := strings.Repeat("Q", domain.MaxAppQueue+1) // 17
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", []string{"app queue is required for EOIO", "1-16", "0-9 A-Z _ /"}},
		{"17 chars", long, []string{long, "17 characters", "limit is 16"}},
		// Lowercase is refused, not uppercased; the error suggests the fix.
		{"lowercase", "orders_de", []string{`"orders_de"`, "lowercase", `'o'`, "uppercase", `"ORDERS_DE"`}},
		{"one lowercase letter", "ORDERs", []string{`"ORDERs"`, `'s'`}},
		{"dash", "ORDERS-DE", []string{`"ORDERS-DE"`, `'-'`, "A-Z 0-9 _ /"}},
		{"dot", "ORDERS.DE", []string{`'.'`}},
		{"space", "ORDERS DE", []string{`' '`}},
		{"non-ASCII", "ÄPFEL", []string{`'Ä'`}},
		{"17 non-ASCII chars", strings.Repeat("Ä", 17), []string{"17 characters", "limit is 16"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireInvalid(t, domain.ValidateAppQueue(tt.in), tt.want...)
		})
	}
}

func TestValidateInterface(t *testing.T) {
	t.Parallel()

	require.NoError(t, domain.ValidateInterface(""), "the interface is optional")
	require.NoError(t, domain.ValidateInterface("OrderCreate v2 (urn:example:orders)"))
	require.NoError(t, domain.ValidateInterface(strings.Repeat("i", domain.MaxInterface)))
	require.NoError(t, domain.ValidateInterface(strings.Repeat("ü", domain.MaxInterface)), "the limit counts characters, not bytes")

	requireInvalid(t, domain.ValidateInterface(strings.Repeat("i", domain.MaxInterface+1)), "interface", "121 characters", "limit is 120")
	requireInvalid(t, domain.ValidateInterface("bad\xff"), "interface", "UTF-8")
	require.NoError(t, domain.ValidateInterface("Order\tCreate"), "tab is allowed")
	require.NoError(t, domain.ValidateInterface("Order\uFFFD"), "a replacement character is text like any other")
	for _, bad := range map[string]string{"newline": "a\nb", "CR": "a\rb", "NUL": "a\x00b", "ESC": "a\x1b[2Jb", "DEL": "a\x7f", "C1": "a\u009bb"} {
		requireInvalid(t, domain.ValidateInterface(bad), "interface", "control character")
	}
}

func TestValidateReason(t *testing.T) {
	t.Parallel()

	require.NoError(t, domain.ValidateReason(""))
	require.NoError(t, domain.ValidateReason("duplicate of 4711\tsee ticket OPS-12 (ü)"))
	require.NoError(t, domain.ValidateReason(strings.Repeat("r", domain.MaxReason)))
	requireInvalid(t, domain.ValidateReason(strings.Repeat("r", domain.MaxReason+1)), "reason", "1025 bytes", "limit is 1024")
	requireInvalid(t, domain.ValidateReason("done\nhint: forged"), "reason", "control character U+000A")
	requireInvalid(t, domain.ValidateReason("\xff"), "reason", "UTF-8")
}

func TestValidateHeadersAccepts(t *testing.T) {
	t.Parallel()

	full := map[string]string{}
	for i := range domain.MaxHeaders { // exactly 64
		full[fmt.Sprintf("X-H%d", i)] = "v"
	}
	for _, h := range []map[string]string{
		nil,
		{},
		{"X-Env": "prod", "trace-id": "", "A1": "any text: ü, spaces, =, ;", "X-Tab": "a\tb"},
		full,
		{strings.Repeat("k", domain.MaxHeaderKey): strings.Repeat("v", domain.MaxHeaderValue)}, // 64-char key, 1024-byte value
	} {
		require.NoError(t, domain.ValidateHeaders(h))
	}
}

func TestValidateHeadersRefuses(t *testing.T) {
	t.Parallel()

	tooMany := map[string]string{}
	for i := range domain.MaxHeaders + 1 { // 65
		tooMany[fmt.Sprintf("X-H%d", i)] = "v"
	}
	longKey := strings.Repeat("k", domain.MaxHeaderKey+1)
	tests := []struct {
		name string
		in   map[string]string
		want []string
	}{
		{"65 headers", tooMany, []string{"65 headers", "limit is 64"}},
		{"empty key", map[string]string{"": "v"}, []string{`header key ""`, "1-64", "A-Z a-z 0-9 -"}},
		{"65-char key", map[string]string{longKey: "v"}, []string{longKey, "1-64"}},
		{"underscore in key", map[string]string{"X_Env": "v"}, []string{`"X_Env"`, `'_'`, "A-Z a-z 0-9 -"}},
		{"colon in key", map[string]string{"X-Env:": "v"}, []string{`"X-Env:"`, `':'`}},
		{"space in key", map[string]string{"X Env": "v"}, []string{`' '`}},
		{"1025-byte value", map[string]string{"X-Big": strings.Repeat("v", domain.MaxHeaderValue+1)}, []string{`"X-Big"`, "1025 bytes", "limit is 1024"}},
		{"CR LF in a value", map[string]string{"X-A": "a\r\nX-Injected: 1"}, []string{`header "X-A"`, "control character U+000D"}},
		{"NUL in a value", map[string]string{"X-A": "a\x00"}, []string{`header "X-A"`, "control character U+0000"}},
		{"value not UTF-8", map[string]string{"X-A": "\xfe"}, []string{`header "X-A"`, "UTF-8"}},
		{"keys equal ignoring case", map[string]string{"k": "1", "K": "2"}, []string{`"K" and "k"`, "unique ignoring case"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireInvalid(t, domain.ValidateHeaders(tt.in), tt.want...)
		})
	}
}

// With several bad headers the same one is reported every time.
func TestValidateHeadersIsDeterministic(t *testing.T) {
	t.Parallel()

	h := map[string]string{"B_": "v", "A_": "v", "C_": "v", "D_": "v", "E_": "v"}
	for range 20 {
		requireInvalid(t, domain.ValidateHeaders(h), `"A_"`)
	}
}

func TestValidatePayload(t *testing.T) {
	t.Parallel()

	const limit = domain.DefaultMaxPayload
	require.Equal(t, int64(10<<20), int64(limit))
	require.NoError(t, domain.ValidatePayload(0, limit), "an empty payload is allowed")
	require.NoError(t, domain.ValidatePayload(limit, limit), "exactly the limit is allowed")

	err := domain.ValidatePayload(limit+1, limit)
	require.ErrorIs(t, err, domain.ErrTooLarge)
	require.NotErrorIs(t, err, domain.ErrInvalid)
	// Rounded, both sizes read 10MiB, so the error shows the bytes.
	require.ErrorContains(t, err, "payload is 10485761 bytes")
	require.ErrorContains(t, err, "engine.max_payload")
	require.ErrorContains(t, err, "10MiB (10485760 bytes)")

	err = domain.ValidatePayload(12<<20, limit)
	require.ErrorIs(t, err, domain.ErrTooLarge)
	require.EqualError(t, err, "payload is 12MiB; the limit (engine.max_payload) is 10MiB")

	err = domain.ValidatePayload(1, 0)
	require.ErrorIs(t, err, domain.ErrTooLarge)
	require.EqualError(t, err, "payload is 1B; the limit (engine.max_payload) is 0B")
}

func TestFormatBytes(t *testing.T) {
	t.Parallel()

	tests := []struct {
		in   int64
		want string
	}{
		{0, "0B"},
		{1, "1B"},
		{1023, "1023B"},
		{1024, "1KiB"},
		{1536, "1.5KiB"},
		{1 << 20, "1MiB"},
		{(1 << 20) - 1, "1MiB"}, // rounds up to the next unit, not "1024KiB"
		{(1 << 20) + (1 << 19), "1.5MiB"},
		{10 << 20, "10MiB"},
		{(10 << 20) + 1, "10MiB"},
		{(1 << 30) - 1, "1GiB"},
		{5 << 30, "5GiB"},
		{1 << 40, "1TiB"},
		{1 << 50, "1PiB"},
		{1 << 60, "1EiB"},
		{1<<63 - 1, "8EiB"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.in), func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, domain.FormatBytes(tt.in))
		})
	}
}

func TestValidateKey(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", "k", "order-4711", "Bestellung Nr. 4711 / ÄÖÜ", strings.Repeat("ü", domain.MaxKey)} {
		require.NoError(t, domain.ValidateKey(ok), ok)
	}
	for name, c := range map[string]struct {
		key  string
		want string
	}{
		"too long": {strings.Repeat("k", domain.MaxKey+1),
			`key "` + strings.Repeat("k", 32) + `…" is 129 characters long; a key is 1-128 printable characters`},
		"tab":         {"a\tb", `key "a\tb" contains the control character U+0009 at byte 1; a key is 1-128 printable characters (no tab)`},
		"newline":     {"a\n", `key "a\n" contains the control character U+000A at byte 1; a key is 1-128 printable characters (no tab)`},
		"C1":          {"a\u0085", `key "a\u0085" contains the control character U+0085 at byte 1; a key is 1-128 printable characters (no tab)`},
		"not UTF-8":   {"a\xff", `key "a\xff" is not valid UTF-8 (at byte 1); a key is 1-128 printable characters`},
		"nul":         {"\x00", `key "\x00" contains the control character U+0000 at byte 0; a key is 1-128 printable characters (no tab)`},
		"delete char": {"\x7f", `key "\x7f" contains the control character U+007F at byte 0; a key is 1-128 printable characters (no tab)`},
	} {
		err := domain.ValidateKey(c.key)
		require.ErrorIs(t, err, domain.ErrInvalid, name)
		require.EqualError(t, err, c.want, name)
	}
}
