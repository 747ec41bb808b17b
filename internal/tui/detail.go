package tui

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// previewBytes bounds the payload preview of the detail view.
const previewBytes = 1024

// detailPage is the Message detail view: metadata, error, history, payload
// preview.
type detailPage struct {
	id      string
	msg     *domain.Message
	payload []byte
	// payloadErr says why there is no preview (a monitor token may not read payloads).
	payloadErr error
	offset     int
}

type detailLoadedMsg struct {
	gen        int
	msg        *domain.Message
	payload    []byte
	payloadErr error
	err        error
}

// errPayloadDenied stands for the payload a token was refused before: it is
// not asked for again.
var errPayloadDenied = domain.Errorf(domain.ErrPermission, "this token may not read payloads")

// fetchDetail reads a message and, withPayload, the start of its payload.
func fetchDetail(ctx context.Context, svc admin.Service, id string, withPayload bool, gen int) detailLoadedMsg {
	m, err := svc.Message(ctx, id)
	if err != nil {
		return detailLoadedMsg{gen: gen, err: err}
	}
	if !withPayload {
		return detailLoadedMsg{gen: gen, msg: m, payloadErr: errPayloadDenied}
	}
	p, perr := svc.Payload(ctx, id)
	if len(p) > previewBytes {
		p = p[:previewBytes]
	}
	return detailLoadedMsg{gen: gen, msg: m, payload: p, payloadErr: perr}
}

// lines renders the detail as lines; the view shows a window of them.
func (d *detailPage) lines(now time.Time) []string {
	m := d.msg
	if m == nil {
		return []string{"loading " + d.id + "…"}
	}
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	kv := func(k, v string) string { return fmt.Sprintf("%-16s %s", k+":", v) }
	out := []string{
		kv("id", m.ID),
		kv("status", string(m.Status)+blacklistedMark(m)),
		kv("queue", fmt.Sprintf("%s (seq %d, %s, %s)", m.Queue, m.Seq, m.QoS, m.Stage)),
		kv("sender", m.Sender),
		kv("receiver", dash(m.Receiver)),
		kv("interface", dash(m.Interface)),
		kv("app queue", dash(m.AppQueue)),
		kv("attempts", fmt.Sprintf("%d   crashes: %d", m.Attempts, m.Crashes)),
		kv("created", ts(m.CreatedAt)+" ("+output.Age(&m.CreatedAt, now)+" ago)"),
		kv("updated", ts(m.UpdatedAt)),
	}
	if m.NextAttemptAt != nil {
		out = append(out, kv("next attempt", ts(*m.NextAttemptAt)))
	}
	if m.ParentID != "" {
		out = append(out, kv("parent", m.ParentID))
	}
	if m.Key != "" {
		out = append(out, kv("key", m.Key))
	}
	for _, k := range slices.Sorted(maps.Keys(m.Headers)) {
		out = append(out, kv("header", k+"="+m.Headers[k]))
	}
	if m.Error != "" {
		out = append(out, "", "Error ("+dash(string(m.ErrorClass))+"):", "  "+dash(m.Error))
	}
	out = append(out, "", "History:")
	for _, h := range m.History {
		from := string(h.From)
		if from == "" {
			from = "-"
		}
		line := fmt.Sprintf("  %s  %-4s → %-4s  %s", ts(h.At), from, h.To, h.Actor)
		if h.Node != "" {
			line += " @" + h.Node
		}
		if h.Reason != "" {
			line += "  " + dash(h.Reason)
		}
		out = append(out, line)
	}
	out = append(out, "", fmt.Sprintf("Payload (%d bytes):", m.Size))
	switch {
	case errors.Is(d.payloadErr, domain.ErrPermission):
		out = append(out, "  (not shown: this token may not read payloads)")
	case d.payloadErr != nil:
		out = append(out, "  (not shown: "+d.payloadErr.Error()+")")
	case !utf8.Valid(d.payload):
		out = append(out, fmt.Sprintf("  (binary; %% x of the first %d bytes)", min(len(d.payload), 64)),
			fmt.Sprintf("  % x", d.payload[:min(len(d.payload), 64)]))
	default:
		for _, l := range strings.Split(strings.TrimRight(string(d.payload), "\n"), "\n") {
			out = append(out, "  "+strings.Map(printable, l))
		}
		if int64(len(d.payload)) < m.Size {
			out = append(out, fmt.Sprintf("  … (%d more bytes)", m.Size-int64(len(d.payload))))
		}
	}
	// Producers, receivers and operators wrote most of it.
	for i, l := range out {
		out[i] = output.Escape(l)
	}
	return out
}

func blacklistedMark(m *domain.Message) string {
	if m.Blacklisted {
		return " (blacklisted)"
	}
	return ""
}

// printable keeps terminal control characters out of the preview.
func printable(r rune) rune {
	if r == '\t' {
		return ' '
	}
	if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
		return '.'
	}
	return r
}
