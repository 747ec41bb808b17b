package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/rogpeppe/go-internal/testscript"
	bbolt "go.etcd.io/bbolt"
)

// cmdDamage overwrites COUNT bytes of a store's data pages — the pages past
// the two meta pages, up to the high water mark — at places a source seeded
// with SEED picks, as a failing disk or a stray write would. With -headers
// each byte falls into the page id of a page in use, which every read of
// the page checks, so that the damage is found whatever the store holds:
// damage [-headers] SEED COUNT FILE. With -record, it flips one bit in the
// middle of the stored record of one message instead: damage -record ID FILE.
func cmdDamage(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 3 && args[0] == "-record" && !neg {
		damageRecord(ts, args[1], ts.MkAbs(args[2]))
		return
	}
	headers := len(args) == 4 && args[0] == "-headers"
	if headers {
		args = args[1:]
	}
	if neg || len(args) != 3 {
		ts.Fatalf("usage: damage [-headers] SEED COUNT FILE | damage -record ID FILE")
	}
	seed, err := strconv.ParseUint(args[0], 10, 64)
	ts.Check(err)
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	path := ts.MkAbs(args[2])
	// Read-write, for bbolt to load the freelist (tx.Page); nothing is written.
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	ts.Check(err)
	var size int64
	var used []int64 // the pages in use, by number
	ts.Check(db.View(func(tx *bbolt.Tx) error {
		size = tx.Size()
		for id := 2; ; id++ {
			p, err := tx.Page(id)
			if err != nil || p == nil {
				return err
			}
			if p.Type == "branch" || p.Type == "leaf" {
				used = append(used, int64(id))
			}
		}
	}))
	ts.Check(db.Close())
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	ts.Check(err)
	defer f.Close()
	rng := rand.New(rand.NewPCG(seed, 1))
	pageSize := int64(os.Getpagesize())
	for range n {
		at := 2*pageSize + rng.Int64N(size-2*pageSize)
		if headers {
			at = used[rng.IntN(len(used))]*pageSize + rng.Int64N(8)
		}
		_, err := f.WriteAt([]byte{byte(rng.Uint32())}, at)
		ts.Check(err)
	}
}

// damageRecord flips one bit in the middle of the record of message id, in
// place in the file, as a failing disk would.
func damageRecord(ts *testscript.TestScript, id, path string) {
	key, err := uuid.Parse(id)
	ts.Check(err)
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	ts.Check(err)
	var v []byte
	ts.Check(db.View(func(tx *bbolt.Tx) error {
		v = bytes.Clone(tx.Bucket([]byte("messages")).Get(key[:]))
		return nil
	}))
	ts.Check(db.Close())
	if v == nil {
		ts.Fatalf("damage: the store holds no message %s", id)
	}
	data, err := os.ReadFile(path)
	ts.Check(err)
	at := bytes.Index(data, v)
	if at < 0 || bytes.Contains(data[at+1:], v) {
		ts.Fatalf("damage: the record of message %s is not in the file once", id)
	}
	data[at+len(v)/2] ^= 0x04
	ts.Check(os.WriteFile(path, data, 0o600))
}
