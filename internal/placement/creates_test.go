package placement

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// params is a set of tuning values, by name and sub.
type params map[[2]string]int

func (p params) Param(name, sub string) (int, bool, error) {
	v, ok := p[[2]string{name, sub}]
	return v, ok, nil
}

// TestCreates: an EO queue is one the tuning values create when its slot
// lies within its parameter's value, in the form the value asks for; an
// EOIO queue always is.
func TestCreates(t *testing.T) {
	t.Parallel()
	tuned := params{{ParamEOOutbound, "WMS"}: 2, {ParamEOInbound, "SENDER"}: 3, {ParamEOOutbound, ""}: 4}
	for _, c := range []struct {
		name, receiver string
		p              params
		want           bool
	}{
		{"XBTI0000", "", params{}, true},
		{"XBTI0001", "", params{}, false},
		{"XBTS0002", "", tuned, true},
		{"XBTS0003", "", tuned, false},
		{"XBTI0001", "", tuned, false}, // CENTRAL is not tuned: 1
		{"XBTO2107", "WMS", params{}, true},
		{"XBTO21070000", "WMS", params{}, false},
		{"XBTO21070001", "WMS", tuned, true},
		{"XBTO21070002", "WMS", tuned, false},
		{"XBTO2107", "WMS", tuned, false},
		{"XBTOE8B90003", "CRM", tuned, true}, // the default for all receivers: 4
		{"XBTOE8B90004", "CRM", tuned, false},
		{"XBTOE8B9000X", "CRM", tuned, false},
		{"XBQIORDERS", "", params{}, true},
		{"XBQO2107ORDERS", "WMS", tuned, true},
		{"XB2OE8B9ORDERS", "CRM", tuned, true},
	} {
		got, err := Creates(c.p, c.name, c.receiver)
		require.NoError(t, err)
		require.Equal(t, c.want, got, "%s of %q", c.name, c.receiver)
	}
}
