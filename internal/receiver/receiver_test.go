package receiver_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/receiver"
)

// message returns an outbound message as the engine hands it to a receiver.
func message(qos domain.QoS, queue string) *domain.Message {
	m := &domain.Message{
		ID: domain.NewID(), QoS: qos, Sender: "ERP", Receiver: "WMS", Interface: "OrderCreate",
		Queue: queue, Stage: domain.Outbound, Status: domain.StatusDLNG, Seq: 42, Attempts: 1,
	}
	if qos == domain.EOIO {
		m.AppQueue = "ORDERS_DE"
	}
	return m
}

func TestNewRejectsBadConfigs(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		rc   config.Receiver
		want string
	}{
		{"http without urls", config.Receiver{Type: "http"}, "receivers.R: type http needs urls"},
		{"http with a url that is not http", config.Receiver{Type: "http", URLs: []string{"http://ok", "ftp://host/in"}},
			`receivers.R: url "ftp://host/in" must start with http:// or https://`},
		{"exec without command", config.Receiver{Type: "exec"}, "receivers.R: type exec needs command"},
		{"file without dir", config.Receiver{Type: "file"}, "receivers.R: type file needs dir"},
		{"unknown type", config.Receiver{Type: "smtp"}, `receivers.R: type "smtp" must be http, exec, file or discard`},
		{"no type", config.Receiver{}, `receivers.R: type "" must be http, exec, file or discard`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := receiver.New("R", tt.rc)
			require.Nil(t, r)
			require.ErrorIs(t, err, domain.ErrInvalid)
			require.EqualError(t, err, tt.want)
		})
	}
}

func TestNewBuildsEachType(t *testing.T) {
	t.Parallel()

	for _, rc := range []config.Receiver{
		{Type: "http", URLs: []string{"http://127.0.0.1:1/in", "https://example.test/in"}},
		{Type: "exec", Command: []string{"/bin/true"}},
		{Type: "file", Dir: t.TempDir()},
		{Type: "discard"},
	} {
		r, err := receiver.New("R", rc)
		require.NoError(t, err, rc.Type)
		require.NotNil(t, r, rc.Type)
	}
}

func TestClassOf(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		err  error
		want domain.ErrorClass
	}{
		{"transient", receiver.Transient("POST %s: 503", "http://x"), domain.ErrorTransient},
		{"permanent", receiver.Permanent("POST %s: 400", "http://x"), domain.ErrorPermanent},
		{"wrapped permanent", fmt.Errorf("delivery: %w", receiver.Permanent("bad")), domain.ErrorPermanent},
		{"wrapped transient", fmt.Errorf("delivery: %w", receiver.Transient("later")), domain.ErrorTransient},
		// Retrying is the safe default for an error nobody classified.
		{"unclassified", errors.New("boom"), domain.ErrorTransient},
		{"context cancelled", context.Canceled, domain.ErrorTransient},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, receiver.ClassOf(tt.err), tt.name)
	}
}

func TestErrorTextAndUnwrap(t *testing.T) {
	t.Parallel()

	cause := errors.New("disk full")
	err := receiver.Permanent("write %s: %w", "/spool/x", cause)
	require.EqualError(t, err, "write /spool/x: disk full")
	require.ErrorIs(t, err, cause)

	var re *receiver.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, domain.ErrorPermanent, re.Class)
}

func TestDiscard(t *testing.T) {
	t.Parallel()

	r, err := receiver.New("NULL", config.Receiver{Type: "discard"})
	require.NoError(t, err)
	d := receiver.Delivery{Message: message(domain.EO, "XBTO0000"), Payload: []byte("x"), Attempt: 1}
	require.NoError(t, r.Deliver(context.Background(), d))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = r.Deliver(ctx, d)
	require.Error(t, err)
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err))
}
