package bolt

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/store"
)

// A receiver's code and the code's owner are sealed: a flipped bit in
// either is damage, named, never another receiver's queues.
func TestReceiverCodesAreSealed(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		bucket, key string
		read        func(store.Writer) error
		want        string
	}{
		"Code": {bucketCodes, "WMS", func(w store.Writer) error { _, err := w.ReceiverCode("WMS"); return err },
			"receiver WMS: its stored code fails its check"},
		"Codes": {bucketCodes, "WMS", func(w store.Writer) error {
			return w.ReceiverCodes(func(string, string) error { return nil })
		}, "receiver WMS: its stored code fails its check"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "queuectl.db")
			s, err := Open(path, Options{NoSync: true})
			require.NoError(t, err)
			require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
				ok, err := w.PutReceiverCode("WMS", "1A2B")
				require.True(t, ok)
				return err
			}))
			require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
				code, err := w.ReceiverCode("WMS")
				require.Equal(t, "1A2B", code)
				return err
			}))
			require.NoError(t, s.Close())
			rawUpdate(t, path, func(tx *bbolt.Tx) error {
				b := tx.Bucket([]byte(tt.bucket))
				v := append([]byte{}, b.Get([]byte(tt.key))...)
				require.Len(t, v, 4+sumSize)
				v[1] ^= 0x04 // '1A2B' → '1E2B': still four hex digits
				return b.Put([]byte(tt.key), v)
			})
			s, err = Open(path, Options{NoSync: true})
			require.NoError(t, err)
			defer func() { require.NoError(t, s.Close()) }()
			err = s.Update(t.Context(), tt.read)
			requireDamaged(t, path, err, name)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
