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
		starts  bool
		room    int64
	}{
		{"EO empty", store.QueueRecord{QoS: domain.EO}, false, true, 32},
		{"EO with some in flight", store.QueueRecord{QoS: domain.EO,
			Counts: map[domain.Status]int64{domain.StatusDLNG: 30}}, false, true, 2},
		{"EO window full", store.QueueRecord{QoS: domain.EO,
			Counts: map[domain.Status]int64{domain.StatusDLNG: 32}}, false, true, 0},
		{"EO NDLV passed over blocks nothing", store.QueueRecord{QoS: domain.EO,
			Counts: map[domain.Status]int64{domain.StatusNDLV: 2}, PassedOver: 2}, false, true, 32},
		{"EO NDLV not passed over blocks", store.QueueRecord{QoS: domain.EO,
			Counts: map[domain.Status]int64{domain.StatusNDLV: 3}, PassedOver: 2}, true, false, 0},
		{"EO waiting for a retry", store.QueueRecord{QoS: domain.EO,
			Counts: map[domain.Status]int64{domain.StatusWAIT: 1}}, false, false, 32},
		{"EO stopped", store.QueueRecord{QoS: domain.EO, Stopped: true}, false, false, 0},
		{"EOIO idle", store.QueueRecord{QoS: domain.EOIO}, false, true, 1},
		{"EOIO delivering", store.QueueRecord{QoS: domain.EOIO,
			Counts: map[domain.Status]int64{domain.StatusDLNG: 1}}, false, true, 0},
		{"EOIO blocked", store.QueueRecord{QoS: domain.EOIO,
			Counts: map[domain.Status]int64{domain.StatusNDLV: 1}}, true, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.blocked, tt.q.Blocked())
			assert.Equal(t, tt.starts, tt.q.Starts())
			assert.Equal(t, tt.room, tt.q.Room(32))
		})
	}
}
