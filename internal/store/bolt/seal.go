package bolt

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"

	bbolt "go.etcd.io/bbolt"
)

// Every value the store writes is sealed: the CRC-32C of its key and its
// bytes follows it, four bytes little-endian, and every read checks it. A
// value that fails its check is damage (ErrDamaged, exit 6), never data: a
// flipped bit in a record, a key or a length would otherwise decode as a
// plausible message, queue or entry.
//
// Stores written before sealing (layout version 2) hold unsealed values;
// they are read as they are, until rewritten (meta key keyUnsealed). So
// that a damaged sealed value cannot pass for an unsealed one, sealed
// records start with a marker far (in bits) from the old first bytes, and
// a store that never held unsealed values accepts none.
//
// What an index entry names (a message's id, its status, queue and seq in
// the key) is checked against the sealed record it leads to instead: an
// index entry's key is a copy of the record's fields.

// castagnoli is the table of CRC-32C, which CPUs compute in hardware.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sumSize is the length of a seal.
const sumSize = 4

// Markers: the first byte of a sealed record (message, queue) and of a
// sealed JSON document (audit entry, EOIO switch). Old records start with
// recordV1 (0x01), old JSON with '{' (0x7b); each marker differs from those
// in five bits or more. (A message's history is sealed with its record.)
const (
	recordSealed = 0x5a
	jsonSealed   = 0x84
)

func checksum(key, body []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, body)
}

// seal appends the checksum of key and body to body.
func seal(key, body []byte) []byte {
	return binary.LittleEndian.AppendUint32(body, checksum(key, body))
}

// unseal returns the body of a value sealed under key; ok is false when
// the value fails its check.
func unseal(key, v []byte) (body []byte, ok bool) {
	if len(v) < sumSize {
		return nil, false
	}
	body = v[:len(v)-sumSize]
	return body, binary.LittleEndian.Uint32(v[len(body):]) == checksum(key, body)
}

// sealedFixed returns the body of a fixed-length value sealed under key
// (a be64 number): n bytes sealed, or n bytes unsealed where old values
// are accepted. ok is false for anything else.
func sealedFixed(key, v []byte, n int, legacy bool) ([]byte, bool) {
	switch {
	case len(v) == n+sumSize:
		return unseal(key, v)
	case len(v) == n && legacy:
		return v, true
	}
	return nil, false
}

// sealedJSON returns the JSON document of a sealed JSON value: jsonSealed,
// the document, the seal; or an old one, unsealed, where old values are
// accepted.
func sealedJSON(key, v []byte, legacy bool) ([]byte, bool) {
	if len(v) > 0 && v[0] == jsonSealed {
		body, ok := unseal(key, v)
		if !ok {
			return nil, false
		}
		return body[1:], true
	}
	if legacy && len(v) > 0 && v[0] == '{' {
		return v, true
	}
	return nil, false
}

// sealJSON seals a JSON document under key.
func sealJSON(key, doc []byte) []byte {
	b := make([]byte, 0, 1+len(doc)+sumSize)
	return seal(key, append(append(b, jsonSealed), doc...))
}

// absentSound reports whether a key that Get did not find is truly absent.
// bbolt finds a key by the keys of the branch pages above its leaf; a
// damaged one sends the search to a neighbouring leaf, and the key looks
// absent though a scan lists it. In a sound tree the key after the place
// the search ends is above key and the one before it below; anything else
// is damage, and absentSound says so.
func absentSound(b *bbolt.Bucket, key []byte) bool {
	c := b.Cursor()
	k, _ := c.Seek(key)
	var prev []byte
	if k == nil {
		prev, _ = c.Last()
	} else {
		if bytes.Compare(k, key) <= 0 {
			return false
		}
		prev, _ = c.Prev()
	}
	return prev == nil || bytes.Compare(prev, key) < 0
}
