package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// keyed returns a new message of sender with an idempotency key.
func keyed(sender, key string) *domain.Message {
	m := NewMessage()
	m.Sender, m.Key = sender, key
	return m
}

// testKeys holds the cases of idempotent sends (§2): a key is unique per
// sender, enforced by the store, kept as long as its message is.
func testKeys(t *testing.T, open Opener) {
	t.Run("AKeySentTwiceStoresOneMessage", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		first := keyed(SenderERP, "order-4711")
		b.insert(t, first)
		err := b.store.Update(b.ctx, func(w store.Writer) error {
			return w.Insert(keyed(SenderERP, "order-4711"), []byte("again"), Entry("received"))
		})
		require.ErrorIs(t, err, store.ErrKeyExists)
		require.ErrorIs(t, err, domain.ErrConflict, "a key used already is a conflict where nobody handles it")
		require.Equal(t, idsOf(first), b.ids(t, store.MessageFilter{}), "one message")

		var found *domain.Message
		b.view(t, func(r store.Reader) error {
			var err error
			found, err = r.MessageByKey(SenderERP, "order-4711")
			return err
		})
		require.Equal(t, first.ID, found.ID)
		require.Equal(t, "order-4711", found.Key)
		require.Equal(t, "order-4711", b.message(t, first.ID).Key, "the message shows its key")
	})

	t.Run("TheSameKeyTwiceInOneTransaction", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		err := b.store.Update(b.ctx, func(w store.Writer) error {
			if err := w.Insert(keyed(SenderERP, "k"), []byte("one"), Entry("received")); err != nil {
				return err
			}
			err := w.Insert(keyed(SenderERP, "k"), []byte("two"), Entry("received"))
			require.ErrorIs(t, err, store.ErrKeyExists)
			return nil
		})
		require.NoError(t, err)
		require.Len(t, b.ids(t, store.MessageFilter{}), 1)
	})

	t.Run("AKeyIsUniquePerSender", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		erp, shop := keyed(SenderERP, "42"), keyed(SenderSHOP, "42")
		plain := NewMessage()
		b.insert(t, erp, shop, plain)
		require.ElementsMatch(t, idsOf(erp, shop), b.ids(t, store.MessageFilter{Key: "42"}), "message list --key")
		var none error
		b.view(t, func(r store.Reader) error {
			_, none = r.MessageByKey(SenderERP, "43")
			return nil
		})
		require.ErrorIs(t, none, domain.ErrNotFound)
	})

	t.Run("ConcurrentSendsWithOneKeyStoreOneMessage", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		const racers = 8
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				errs[i] = b.store.Update(b.ctx, func(w store.Writer) error {
					return w.Insert(keyed(SenderERP, "race"), []byte("payload"), Entry("received"))
				})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
				continue
			}
			require.True(t, errors.Is(err, store.ErrKeyExists), "a loser learns that the key exists: %v", err)
		}
		require.Equal(t, 1, won, "one send stores the message")
		require.Len(t, b.ids(t, store.MessageFilter{}), 1)
		requireConsistent(t, b)
	})

	t.Run("TheKeyGoesWithItsMessage", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := keyed(SenderERP, "once")
		b.insert(t, m)
		b.move(t, m.ID, domain.StatusTBDL, domain.StatusDLNG)
		b.move(t, m.ID, domain.StatusDLNG, domain.StatusDLVD)
		require.Equal(t, "once", b.message(t, m.ID).Key, "kept while the message is")
		b.update(t, func(w store.Writer) error { return w.Delete(m.ID) })
		again := keyed(SenderERP, "once")
		b.insert(t, again)
		require.Equal(t, idsOf(again), b.ids(t, store.MessageFilter{Key: "once"}), "purged with its message, the key is free")
	})
}
