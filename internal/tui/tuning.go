package tui

import (
	"context"
	"strconv"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// tuningSource lists the tuning values of §7; there are few, so one page.
type tuningSource struct{}

func (tuningSource) storeFilter() bool { return false }

func (tuningSource) columns() []components.Column {
	return []components.Column{col("PARAM", 22), col("SUB", 12), col("VALUE", 5), optional("SET", 7, 2), col("QUEUES", 30)}
}

func (tuningSource) fetch(ctx context.Context, svc admin.Service, q pageQuery) ([]item, string, error) {
	entries, err := svc.Tuning(ctx)
	if err != nil {
		return nil, "", err
	}
	items := make([]item, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		set := "default"
		if e.Set {
			set = "set"
		}
		queues := strconv.Itoa(len(e.Queues))
		if len(e.Queues) > 0 {
			queues += ": " + strings.Join(e.Queues, " ")
		}
		items = append(items, item{key: e.Param + "/" + e.Sub, tune: e,
			cells: []string{e.Param, dash(e.Sub), strconv.Itoa(e.Value), set, queues}})
	}
	return items, "", nil
}
