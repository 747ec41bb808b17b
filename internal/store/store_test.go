package store_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

func TestQueueRoom(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		q       store.QueueRecord
		blocked bool
		room    int64
	}{
		{"EO empty", store.QueueRecord{QoS: domain.EO}, false, 32},
		{"EO with some in flight", store.QueueRecord{QoS: domain.EO,
			Counts: map[domain.Status]int64{domain.StatusDLNG: 30}}, false, 2},
		{"EO window full", store.QueueRecord{QoS: domain.EO,
			Counts: map[domain.Status]int64{domain.StatusDLNG: 32}}, false, 0},
		{"EO NDLV passed over blocks nothing", store.QueueRecord{QoS: domain.EO,
			Counts: map[domain.Status]int64{domain.StatusNDLV: 2}, PassedOver: 2}, false, 32},
		{"EO NDLV not passed over blocks", store.QueueRecord{QoS: domain.EO,
			Counts: map[domain.Status]int64{domain.StatusNDLV: 3}, PassedOver: 2}, true, 0},
		{"EO stopped", store.QueueRecord{QoS: domain.EO, Stopped: true}, false, 0},
		{"EOIO idle", store.QueueRecord{QoS: domain.EOIO}, false, 1},
		{"EOIO delivering", store.QueueRecord{QoS: domain.EOIO,
			Counts: map[domain.Status]int64{domain.StatusDLNG: 1}}, false, 0},
		{"EOIO blocked", store.QueueRecord{QoS: domain.EOIO,
			Counts: map[domain.Status]int64{domain.StatusNDLV: 1}}, true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.blocked, tt.q.Blocked())
			assert.Equal(t, tt.room, tt.q.Room(32))
		})
	}
}
