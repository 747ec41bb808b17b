package bolt

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// editedStore writes a store with one NDLV message whose payload was
// edited twice: versions 1 and 2 kept, version 3 current. It returns the
// message and its three payloads.
func editedStore(t *testing.T, path string) (*domain.Message, [][]byte) {
	t.Helper()
	s, err := Open(path, Options{NoSync: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	m := storetest.NotDelivered(storetest.NewMessage(), domain.ErrorPermanent)
	payloads := [][]byte{storetest.PayloadOf(m), []byte("<order corrected/>"), []byte("<order corrected twice/>")}
	require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
		return w.Insert(m, payloads[0], storetest.Entry("received"))
	}))
	for v, p := range payloads[1:] {
		require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
			_, err := w.EditPayload(store.EditPayloadParams{ID: m.ID, From: []domain.Status{domain.StatusNDLV},
				Version: v + 1, Payload: p, History: storetest.Entry("edited")})
			return err
		}))
	}
	return m, payloads
}

// readVersion reads version n of a message's payload from the store at
// path, opened read-only.
func readVersion(t *testing.T, path, id string, n int) ([]byte, error) {
	t.Helper()
	s, err := Open(path, Options{ReadOnly: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	var out []byte
	err = s.View(t.Context(), func(r store.Reader) error {
		var err error
		out, err = r.PayloadVersion(id, n)
		return err
	})
	return out, err
}

// The versions of an edited payload are sealed like every other value: a
// sound store reads each back, and a flipped bit in a kept version or in
// the current one, or a kept version gone, is damage, named — never a
// payload that differs from the one stored.
func TestEditedPayloadVersionsAreSealed(t *testing.T) {
	t.Parallel()
	sound := filepath.Join(t.TempDir(), "sound.db")
	m, payloads := editedStore(t, sound)
	key := idOf(m.ID)
	for n, p := range payloads {
		got, err := readVersion(t, sound, m.ID, n+1)
		require.NoError(t, err)
		require.Equal(t, p, got, "version %d", n+1)
	}
	v1 := rawValue(t, sound, bucketVersions, versionKey(key, 1))
	require.Len(t, v1, len(payloads[0])+sumSize, "a kept version is its payload and a seal")

	flip := func(bucket string, k []byte) func(*bbolt.Tx) error {
		return func(tx *bbolt.Tx) error {
			b := tx.Bucket([]byte(bucket))
			v := append([]byte{}, b.Get(k)...)
			require.NotEmpty(t, v)
			v[2] ^= 0x10
			return b.Put(k, v)
		}
	}
	for name, tt := range map[string]struct {
		damage  func(*bbolt.Tx) error
		version int
		want    string
	}{
		"FlippedBitInAKeptVersion": {flip(bucketVersions, versionKey(key, 1)), 1,
			"message " + m.ID + ": its payload version 1 does not match its checksum"},
		"FlippedBitInTheSecondVersion": {flip(bucketVersions, versionKey(key, 2)), 2,
			"message " + m.ID + ": its payload version 2 does not match its checksum"},
		"FlippedBitInTheCurrentVersion": {flip(bucketPayloads, key[:]), 3,
			"message " + m.ID + ": its payload does not match its checksum"},
		"KeptVersionGone": {func(tx *bbolt.Tx) error {
			return tx.Bucket([]byte(bucketVersions)).Delete(versionKey(key, 1))
		}, 2, "message " + m.ID + ": its payload versions hold a key"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "queuectl.db")
			file, err := os.ReadFile(sound)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, file, 0o600))
			rawUpdate(t, path, tt.damage)
			_, err = readVersion(t, path, m.ID, tt.version)
			requireDamaged(t, path, err, name)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// An edit of a payload stored unsealed, by a store of the previous layout,
// keeps the old payload as a sealed version and seals the new one; both
// read back, and the record no longer takes the payload for an unsealed one.
func TestEditOfAnUnsealedPayload(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "queuectl.db")
	s, err := Open(path, Options{NoSync: true})
	require.NoError(t, err)
	m := storetest.NotDelivered(storetest.NewMessage(), domain.ErrorPermanent)
	require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
		return w.Insert(m, storetest.PayloadOf(m), storetest.Entry("received"))
	}))
	require.NoError(t, s.Close())
	unsealStore(t, path)
	key := idOf(m.ID)
	require.Equal(t, storetest.PayloadOf(m), rawValue(t, path, bucketPayloads, key[:]), "the payload is unsealed")

	s, err = Open(path, Options{NoSync: true})
	require.NoError(t, err)
	fixed := []byte("<order corrected/>")
	require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
		_, err := w.EditPayload(store.EditPayloadParams{ID: m.ID, From: []domain.Status{domain.StatusNDLV},
			Version: 1, Payload: fixed, History: storetest.Entry("edited")})
		return err
	}))
	require.NoError(t, s.Close())

	body, ok := unseal(key[:], rawValue(t, path, bucketPayloads, key[:]))
	require.True(t, ok, "the new payload is sealed")
	require.Equal(t, fixed, body)
	vk := versionKey(key, 1)
	body, ok = unseal(vk, rawValue(t, path, bucketVersions, vk))
	require.True(t, ok, "the old payload is kept sealed")
	require.Equal(t, storetest.PayloadOf(m), body)
	for n, want := range [][]byte{storetest.PayloadOf(m), fixed} {
		got, err := readVersion(t, path, m.ID, n+1)
		require.NoError(t, err)
		require.Equal(t, want, got, "version %d", n+1)
	}
}
