package bolt

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// unsealedRecord turns a sealed record (message, queue) into the form
// layout version 2 wrote: recordV1, the same fields, no seal.
func unsealedRecord(v []byte) []byte {
	return append([]byte{recordV1}, v[1:len(v)-sumSize]...)
}

// unsealStore rewrites a store as layout version 2 wrote it: every value
// in its old form, without seal, and version 2 in the meta bucket. The
// fields of each record are those version 2 wrote, so the file is what
// the previous queuectl leaves.
func unsealStore(t *testing.T, path string) {
	t.Helper()
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		// A record of version 2 keeps its history in the history bucket.
		msgs, hist := tx.Bucket([]byte(bucketMessages)), tx.Bucket([]byte(bucketHistory))
		old := map[string][]byte{}
		require.NoError(t, msgs.ForEach(func(k, v []byte) error {
			m, err := decodeMessage(k, v, false)
			require.NoError(t, err)
			require.NoError(t, hist.Put(bytes.Clone(k), bytes.Clone(m.history)))
			m.history = nil
			rec, err := encodeMessage(uuid.UUID(k), m.Message, m.form)
			require.NoError(t, err)
			old[string(k)] = unsealedRecord(rec)
			return nil
		}))
		for k, v := range old {
			require.NoError(t, msgs.Put([]byte(k), v))
		}
		conv := map[string]func(v []byte) []byte{
			bucketQueues:      unsealedRecord,
			bucketPayloads:    func(v []byte) []byte { return v[:len(v)-sumSize] },
			bucketPayloadRefs: func(v []byte) []byte { return v[:len(v)-sumSize] },
			bucketAudit:       func(v []byte) []byte { return v[1 : len(v)-sumSize] },
			bucketParams:      func(v []byte) []byte { return v[:len(v)-sumSize] },
		}
		for name, f := range conv {
			b := tx.Bucket([]byte(name))
			old := map[string][]byte{}
			require.NoError(t, b.ForEach(func(k, v []byte) error {
				old[string(k)] = f(v)
				return nil
			}))
			for k, v := range old {
				require.NoError(t, b.Put([]byte(k), v))
			}
		}
		// Version 2 ordered the status index by storedStatuses.
		var keys [][]byte
		status := tx.Bucket([]byte(bucketStatus))
		require.NoError(t, status.ForEach(func(k, _ []byte) error {
			keys = append(keys, bytes.Clone(k))
			return nil
		}))
		for _, k := range keys {
			s, ok := statusOfIndex(k[0])
			require.True(t, ok)
			require.NoError(t, status.Delete(k))
			require.NoError(t, status.Put(indexKey(s, uuid.UUID(k[1:]), true), []byte{}))
		}
		meta := tx.Bucket([]byte(bucketMeta))
		if v := meta.Get([]byte(keyEpoch)); v != nil {
			require.NoError(t, meta.Put([]byte(keyEpoch), append([]byte{}, v[:8]...)))
		}
		require.NoError(t, meta.Delete([]byte(keyUnsealed)))
		return meta.Put([]byte(keyVersion), binary.BigEndian.AppendUint32(nil, unsealedVersion))
	})
}

// rawValue reads one value of a file with bbolt directly.
func rawValue(t *testing.T, path, bucket string, key []byte) []byte {
	t.Helper()
	var out []byte
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		if v := tx.Bucket([]byte(bucket)).Get(key); v != nil {
			out = append([]byte{}, v...)
		}
		return nil
	})
	return out
}

// A store of the previous layout (version 2, no seals) opens, read-only
// and read-write, and reads as it did; a read-write open marks it as one
// that may hold unsealed values, and every value written from then on is
// sealed — a message's record and history when it changes, while its
// payload, written once, stays as it was and is still read.
func TestUnsealedStoreOfTheLastLayout(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "queuectl.db")
	soundStore(t, path)
	ids, _, truth := readTruth(t, path)
	unsealStore(t, path)
	require.Equal(t, uint32(unsealedVersion), binary.BigEndian.Uint32(rawValue(t, path, bucketMeta, []byte(keyVersion))))

	check := func() {
		t.Helper()
		_, _, got := readTruth(t, path)
		require.Equal(t, truth, got, "the old store reads as it did")
	}
	ro, err := Open(path, Options{ReadOnly: true})
	require.NoError(t, err)
	require.NoError(t, ro.Close())
	check()

	s, err := Open(path, Options{NoSync: true, Clock: soundClock})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Equal(t, uint32(layoutVersion), binary.BigEndian.Uint32(rawValue(t, path, bucketMeta, []byte(keyVersion))))
	require.Nil(t, rawValue(t, path, bucketStatus, indexKey(domain.StatusTBDL, idOf(ids[1]), true)),
		"the status index is in the new order")
	require.NotNil(t, rawValue(t, path, bucketStatus, statusKey(domain.StatusTBDL, idOf(ids[1]))))
	require.NotNil(t, rawValue(t, path, bucketMeta, []byte(keyUnsealed)))
	check()

	// A change seals what it writes.
	id := ids[1] // TBDL
	key := idOf(id)
	oldPayload := rawValue(t, path, bucketPayloads, key[:])
	require.Equal(t, byte(recordV1), rawValue(t, path, bucketMessages, key[:])[0])
	s, err = Open(path, Options{NoSync: true, Clock: soundClock})
	require.NoError(t, err)
	fresh := storetest.NewMessage()
	require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
		if _, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{domain.StatusTBDL},
			To: domain.StatusDLNG, History: storetest.Entry("delivery attempt 1")}); err != nil {
			return err
		}
		return w.Insert(fresh, storetest.PayloadOf(fresh), storetest.Entry("received"))
	}))
	require.NoError(t, s.View(t.Context(), func(r store.Reader) error {
		p, err := r.Payload(id)
		require.NoError(t, err)
		require.Equal(t, oldPayload, p, "the unsealed payload of a sealed record is read as it is")
		h, err := r.History(id)
		require.NoError(t, err)
		require.Len(t, h, 2)
		p, err = r.Payload(fresh.ID)
		require.NoError(t, err)
		require.Equal(t, storetest.PayloadOf(fresh), p)
		return nil
	}))
	require.NoError(t, s.Close())
	require.Equal(t, byte(recordSealed), rawValue(t, path, bucketMessages, key[:])[0])
	require.Nil(t, rawValue(t, path, bucketHistory, key[:]), "the history moved into the record")
	require.Equal(t, oldPayload, rawValue(t, path, bucketPayloads, key[:]), "a payload is not rewritten")
	freshKey := idOf(fresh.ID)
	_, ok := unseal(freshKey[:], rawValue(t, path, bucketPayloads, freshKey[:]))
	require.True(t, ok, "a new payload is sealed")

	// A sealed record with a flipped bit is damage even where unsealed
	// records are accepted.
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte(bucketMessages))
		v := append([]byte{}, b.Get(key[:])...)
		v[5] ^= 0x10
		return b.Put(key[:], v)
	})
	s, err = Open(path, Options{NoSync: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	err = s.View(t.Context(), func(r store.Reader) error {
		_, err := r.Message(id)
		return err
	})
	requireDamaged(t, path, err, "message show")
	require.ErrorContains(t, err, "message "+id+": its record does not match its checksum")
}

// A store that never held unsealed values accepts none: an unsealed
// record, history, payload, queue record, audit entry or tuning value in
// it is damage, named.
func TestUnsealedValueInASealedStoreIsDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sound := filepath.Join(dir, "sound.db")
	soundStore(t, sound)
	ids, _, _ := readTruth(t, sound)
	id := ids[0]
	key := idOf(id)
	for name, tt := range map[string]struct {
		bucket string
		key    []byte
		conv   func([]byte) []byte
		read   func(store.Reader) error
		want   string
	}{
		"Message": {bucketMessages, key[:], unsealedRecord,
			func(r store.Reader) error { _, err := r.Message(id); return err },
			"message " + id + ": its record starts with 0x1, which this store does not write"},
		"Payload": {bucketPayloads, key[:], func(v []byte) []byte { return v[:len(v)-sumSize] },
			func(r store.Reader) error { _, err := r.Payload(id); return err },
			"message " + id + ": its payload does not match its checksum"},
		"Queue": {bucketQueues, []byte("XBTI0000"), unsealedRecord,
			func(r store.Reader) error { _, err := r.Queue("XBTI0000"); return err },
			`queue "XBTI0000": its record is not in a form this store writes`},
		"Audit": {bucketAudit, seqBytes(1), func(v []byte) []byte { return v[1 : len(v)-sumSize] },
			func(r store.Reader) error {
				return r.Audit(store.AuditFilter{}, func(*domain.AuditEntry) error { return nil })
			},
			"audit entry 1 does not match its checksum"},
		"Param": {bucketParams, paramKey("EO_OUTBOUND_PARALLEL", ""), func(v []byte) []byte { return v[:len(v)-sumSize] },
			func(r store.Reader) error { _, _, err := r.Param("EO_OUTBOUND_PARALLEL", ""); return err },
			"parameter EO_OUTBOUND_PARALLEL : its stored value does not match its checksum"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "queuectl.db")
			soundStore(t, path)
			rawUpdate(t, path, func(tx *bbolt.Tx) error {
				b := tx.Bucket([]byte(tt.bucket))
				v := b.Get(tt.key)
				require.NotNil(t, v)
				return b.Put(tt.key, tt.conv(append([]byte{}, v...)))
			})
			s, err := Open(path, Options{ReadOnly: true})
			require.NoError(t, err)
			defer func() { require.NoError(t, s.Close()) }()
			err = s.View(t.Context(), tt.read)
			requireDamaged(t, path, err, name)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
