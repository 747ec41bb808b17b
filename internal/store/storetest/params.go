package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

func testParams(t *testing.T, open Opener) {
	// param reads one value in its own View.
	param := func(t *testing.T, b *testBundle, name, sub string) (int, bool) {
		t.Helper()
		var v int
		var ok bool
		b.view(t, func(r store.Reader) error {
			var err error
			v, ok, err = r.Param(name, sub)
			return err
		})
		return v, ok
	}
	params := func(t *testing.T, b *testBundle) []domain.Param {
		t.Helper()
		out := []domain.Param{}
		b.view(t, func(r store.Reader) error {
			return r.Params(func(p domain.Param) error {
				out = append(out, p)
				return nil
			})
		})
		return out
	}

	t.Run("SetGetAndOverwrite", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		_, ok := param(t, b, "EO_OUTBOUND_PARALLEL", "WMS")
		require.False(t, ok, "not set yet")
		b.update(t, func(w store.Writer) error {
			return w.SetParam(domain.Param{Name: "EO_OUTBOUND_PARALLEL", Sub: "WMS", Value: 4})
		})
		v, ok := param(t, b, "EO_OUTBOUND_PARALLEL", "WMS")
		require.True(t, ok)
		require.Equal(t, 4, v)
		_, ok = param(t, b, "EO_OUTBOUND_PARALLEL", "")
		require.False(t, ok, "a sub is a value of its own")

		b.update(t, func(w store.Writer) error {
			return w.SetParam(domain.Param{Name: "EO_OUTBOUND_PARALLEL", Sub: "WMS", Value: 9999})
		})
		v, _ = param(t, b, "EO_OUTBOUND_PARALLEL", "WMS")
		require.Equal(t, 9999, v)
		require.Len(t, params(t, b), 1)
	})

	t.Run("Unset", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		b.update(t, func(w store.Writer) error {
			if err := w.SetParam(domain.Param{Name: "EO_INBOUND_PARALLEL", Sub: "CENTRAL", Value: 3}); err != nil {
				return err
			}
			return w.SetParam(domain.Param{Name: "EO_INBOUND_PARALLEL", Sub: "SENDER", Value: 2})
		})
		b.update(t, func(w store.Writer) error { return w.UnsetParam("EO_INBOUND_PARALLEL", "CENTRAL") })
		_, ok := param(t, b, "EO_INBOUND_PARALLEL", "CENTRAL")
		require.False(t, ok)
		require.Equal(t, []domain.Param{{Name: "EO_INBOUND_PARALLEL", Sub: "SENDER", Value: 2}}, params(t, b))
		b.update(t, func(w store.Writer) error { return w.UnsetParam("EO_INBOUND_PARALLEL", "CENTRAL") })
		b.update(t, func(w store.Writer) error { return w.UnsetParam("NEVER_SET", "") })
	})

	t.Run("OrderedByNameThenSub", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		want := []domain.Param{
			{Name: "EO_INBOUND_PARALLEL", Sub: "CENTRAL", Value: 1},
			{Name: "EO_INBOUND_PARALLEL", Sub: "SENDER", Value: 2},
			{Name: "EO_OUTBOUND_PARALLEL", Sub: "", Value: 3},
			{Name: "EO_OUTBOUND_PARALLEL", Sub: "ARCHIVE", Value: 4},
			{Name: "EO_OUTBOUND_PARALLEL", Sub: "WMS", Value: 5},
			// A name that extends another sorts after all of the other's subs.
			{Name: "EO_OUTBOUND_PARALLEL_X", Sub: "", Value: 6},
		}
		b.update(t, func(w store.Writer) error {
			for _, i := range []int{4, 0, 5, 2, 1, 3} {
				if err := w.SetParam(want[i]); err != nil {
					return err
				}
			}
			return nil
		})
		require.Equal(t, want, params(t, b))

		var first []domain.Param
		b.view(t, func(r store.Reader) error {
			return r.Params(func(p domain.Param) error {
				first = append(first, p)
				return store.ErrStop
			})
		})
		require.Equal(t, want[:1], first, "ErrStop ends the walk")
	})
}
