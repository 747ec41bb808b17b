package domain_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// validEO and validEOIO return requests that pass every rule; each test case
// breaks exactly one.
func validEO() *domain.SendRequest {
	return &domain.SendRequest{
		QoS:       domain.EO,
		Sender:    "ERP",
		Receivers: []string{"WMS", "ARCHIVE"},
		Interface: "OrderCreate",
		Headers:   map[string]string{"X-Env": "prod"},
		Payload:   []byte(`{"order":1}`),
	}
}

func validEOIO() *domain.SendRequest {
	r := validEO()
	r.QoS = domain.EOIO
	r.AppQueue = "ORDERS_DE"
	return r
}

func TestSendRequestValidateAccepts(t *testing.T) {
	t.Parallel()

	tests := map[string]*domain.SendRequest{
		"EO":   validEO(),
		"EOIO": validEOIO(),
		"minimal EO": {
			QoS:    domain.EO,
			Sender: "S",
		},
		"empty payload": func() *domain.SendRequest { r := validEOIO(); r.Payload = []byte{}; return r }(),
		"nil payload":   func() *domain.SendRequest { r := validEO(); r.Payload = nil; return r }(),
		"payload at the limit": func() *domain.SendRequest {
			r := validEO()
			r.Payload = make([]byte, 100)
			return r
		}(),
		"boundary lengths": func() *domain.SendRequest {
			r := validEOIO()
			r.Sender = strings.Repeat("s", 60)
			r.Receivers = []string{strings.Repeat("r", 60)}
			r.AppQueue = strings.Repeat("A", 16)
			r.Interface = strings.Repeat("i", 120)
			r.Headers = map[string]string{strings.Repeat("k", 64): strings.Repeat("v", 1024)}
			return r
		}(),
		"prepared": func() *domain.SendRequest { r := validEO(); r.Prepare = true; return r }(),
	}
	for name, r := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, r.Validate(100))
		})
	}
}

func TestSendRequestValidateRefuses(t *testing.T) {
	t.Parallel()

	headers65 := map[string]string{}
	for i := range 65 {
		headers65[fmt.Sprintf("H%d", i)] = "v"
	}
	tests := []struct {
		name   string
		base   func() *domain.SendRequest
		change func(r *domain.SendRequest)
		want   []string
	}{
		{"no qos", validEO, func(r *domain.SendRequest) { r.QoS = "" }, []string{"qos is required", "EO or EOIO"}},
		{"unknown qos", validEO, func(r *domain.SendRequest) { r.QoS = "BE" }, []string{`qos "BE"`, "EO or EOIO"}},
		{"lowercase qos", validEO, func(r *domain.SendRequest) { r.QoS = "eo" }, []string{`qos "eo"`}},
		{"no sender", validEO, func(r *domain.SendRequest) { r.Sender = "" }, []string{"sender is required"}},
		{"61-char sender", validEO, func(r *domain.SendRequest) { r.Sender = strings.Repeat("s", 61) }, []string{"sender", "61 characters", "limit is 60"}},
		{"bad sender char", validEO, func(r *domain.SendRequest) { r.Sender = "ERP#1" }, []string{`sender "ERP#1"`, `'#'`}},
		{"empty receiver", validEO, func(r *domain.SendRequest) { r.Receivers = []string{"WMS", ""} }, []string{"receiver is required"}},
		{"61-char receiver", validEO, func(r *domain.SendRequest) { r.Receivers = []string{strings.Repeat("r", 61)} }, []string{"receiver", "61 characters"}},
		{"bad receiver char", validEO, func(r *domain.SendRequest) { r.Receivers = []string{"W M S"} }, []string{`receiver "W M S"`, `' '`}},
		{"receiver twice", validEO, func(r *domain.SendRequest) { r.Receivers = []string{"WMS", "ARCHIVE", "WMS"} }, []string{`receiver "WMS"`, "twice"}},
		{"EOIO without app queue", validEOIO, func(r *domain.SendRequest) { r.AppQueue = "" }, []string{"app queue is required for EOIO"}},
		{"EO with app queue", validEO, func(r *domain.SendRequest) { r.AppQueue = "ORDERS_DE" }, []string{`app queue "ORDERS_DE"`, "EO message", "EOIO only"}},
		{"lowercase app queue", validEOIO, func(r *domain.SendRequest) { r.AppQueue = "orders" }, []string{`app queue "orders"`, "lowercase"}},
		{"17-char app queue", validEOIO, func(r *domain.SendRequest) { r.AppQueue = strings.Repeat("A", 17) }, []string{"17 characters", "limit is 16"}},
		{"121-char interface", validEO, func(r *domain.SendRequest) { r.Interface = strings.Repeat("i", 121) }, []string{"interface", "121 characters", "limit is 120"}},
		{"65 headers", validEO, func(r *domain.SendRequest) { r.Headers = headers65 }, []string{"65 headers", "limit is 64"}},
		{"bad header key", validEO, func(r *domain.SendRequest) { r.Headers = map[string]string{"X.Env": "prod"} }, []string{`"X.Env"`, `'.'`}},
		{"1025-byte header value", validEO, func(r *domain.SendRequest) { r.Headers = map[string]string{"X-Env": strings.Repeat("v", 1025)} }, []string{`"X-Env"`, "1025 bytes", "limit is 1024"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tt.base()
			tt.change(r)
			requireInvalid(t, r.Validate(domain.DefaultMaxPayload), tt.want...)
		})
	}
}

func TestSendRequestValidatePayloadLimit(t *testing.T) {
	t.Parallel()

	r := validEOIO()
	r.Payload = make([]byte, 101)
	err := r.Validate(100)
	require.ErrorIs(t, err, domain.ErrTooLarge)
	require.NotErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "payload is 101B")
	require.ErrorContains(t, err, "engine.max_payload")
	require.ErrorContains(t, err, "100B")

	r.Payload = r.Payload[:100]
	require.NoError(t, r.Validate(100))
}

// A request that breaks several rules reports an input error before a size error,
// so that a fix-and-retry loop sends the big payload only once it is valid.
func TestSendRequestValidateOrder(t *testing.T) {
	t.Parallel()

	r := validEO()
	r.Sender = ""
	r.Payload = make([]byte, 101)
	requireInvalid(t, r.Validate(100), "sender is required")
}
