package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

func TestParseStatuses(t *testing.T) {
	t.Parallel()

	tests := []struct {
		in   string
		want []domain.Status
	}{
		{"", nil},
		{" , ", nil},
		{"TBDL", []domain.Status{domain.StatusTBDL}},
		{"TBDL,wait", []domain.Status{domain.StatusTBDL, domain.StatusWAIT}},
		{" ndlv , Hold ,", []domain.Status{domain.StatusNDLV, domain.StatusHOLD}},
		{"PEND,TBDL,DLNG,WAIT,HOLD,NDLV,DLVD,FAIL", domain.Statuses},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := domain.ParseStatuses(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}

	for _, in := range []string{"DONE", "TBDL,DONE", "TBDL;WAIT", "deleted"} {
		_, err := domain.ParseStatuses(in)
		requireInvalid(t, err, "is not one of PEND, TBDL, DLNG, WAIT, HOLD, NDLV, DLVD, FAIL")
	}
	_, err := domain.ParseStatuses("TBDL, done")
	requireInvalid(t, err, `status "done"`)
}

func TestStatusValid(t *testing.T) {
	t.Parallel()

	for _, s := range domain.Statuses {
		require.True(t, s.Valid(), "%s", s)
	}
	for _, s := range []domain.Status{"", "tbdl", "DONE"} {
		require.False(t, s.Valid(), "%q", s)
	}
}

func TestParseQoS(t *testing.T) {
	t.Parallel()

	for in, want := range map[string]domain.QoS{"EO": domain.EO, "eo": domain.EO, " EOIO ": domain.EOIO, "eoio": domain.EOIO} {
		got, err := domain.ParseQoS(in)
		require.NoError(t, err, "%q", in)
		require.Equal(t, want, got)
	}
	for _, in := range []string{"", "BE", "EO,EOIO", "EOI"} {
		_, err := domain.ParseQoS(in)
		requireInvalid(t, err, "qos "+quote(in), "EO or EOIO")
	}
}

func TestParseStage(t *testing.T) {
	t.Parallel()

	for in, want := range map[string]domain.Stage{"inbound": domain.Inbound, "INBOUND": domain.Inbound, " Outbound": domain.Outbound} {
		got, err := domain.ParseStage(in)
		require.NoError(t, err, "%q", in)
		require.Equal(t, want, got)
	}
	for _, in := range []string{"", "in", "outgoing"} {
		_, err := domain.ParseStage(in)
		requireInvalid(t, err, "stage "+quote(in), "inbound or outbound")
	}
}

func TestExpectStatus(t *testing.T) {
	t.Parallel()
	require.Equal(t, "none", domain.Alternatives(nil))
	require.Equal(t, "NDLV", domain.Alternatives([]domain.Status{domain.StatusNDLV}))
	require.Equal(t, "NDLV or WAIT", domain.Alternatives([]domain.Status{domain.StatusNDLV, domain.StatusWAIT}))
	require.Equal(t, "NDLV, WAIT or HOLD",
		domain.Alternatives([]domain.Status{domain.StatusNDLV, domain.StatusWAIT, domain.StatusHOLD}))

	from := []domain.Status{domain.StatusNDLV, domain.StatusWAIT}
	require.NoError(t, domain.ExpectStatus("m1", domain.StatusWAIT, from))
	err := domain.ExpectStatus("m1", domain.StatusDLVD, from)
	require.ErrorIs(t, err, domain.ErrConflict)
	require.EqualError(t, err, "message m1: status is DLVD, expected NDLV or WAIT")
}
