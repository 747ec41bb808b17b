package httpapi

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// Refusals of requests that carry no valid token are recorded at most once
// per source address and refusalWindow, with a count of the rest (§6):
// anyone who reaches the port could otherwise grow the store with each
// request. With entries bounded, an address adds at most two entries, a
// few KB, per window. A request with a valid token is recorded the first
// time in a window that its token asks it and is refused for a reason, and
// counted the other times (noteToken): its holder is known.
const (
	refusalWindow = time.Minute
	// maxRefusalSources bounds the addresses counted at once; beyond it,
	// all further addresses share one count.
	maxRefusalSources = 4096
	otherSources      = "other addresses"
)

// refusalLog counts anonymous refusals per source address.
type refusalLog struct {
	mu        sync.Mutex
	windows   map[string]*refusalWindowState
	lastSweep time.Time
}

// refusalWindowState is one address's current window — or one token's,
// for one request refused for the same reason — when it began, and the
// refusals after the first, which were counted but not recorded.
type refusalWindowState struct {
	start      time.Time
	suppressed int
	last       string // the last suppressed request, METHOD path
	// token is the entry that opened a token's window; nil for an
	// address's.
	token *domain.AuditEntry
	// reported says the window counts refusals a client reported
	// (noteReport); last is then the reason of the last one counted.
	reported bool
}

func newRefusalLog() *refusalLog {
	return &refusalLog{windows: map[string]*refusalWindowState{}}
}

// note counts the refusal entry describes (from entry.Source, at entry.At)
// and returns the entries to write: entry itself when it opens its
// source's window, and the summaries of windows that have ended.
func (l *refusalLog) note(entry *domain.AuditEntry) []*domain.AuditEntry {
	now := entry.At
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*domain.AuditEntry
	if now.Sub(l.lastSweep) >= refusalWindow {
		out = l.sweep(now, false)
		l.lastSweep = now
	}
	key := sourceKey(entry.Source)
	if _, ok := l.windows[key]; !ok && len(l.windows) >= maxRefusalSources {
		key = otherSources
	}
	w, ok := l.windows[key]
	if ok && now.Sub(w.start) >= refusalWindow {
		out = append(out, l.summary(key, w, now)...)
		ok = false
	}
	if !ok {
		l.windows[key] = &refusalWindowState{start: now}
		entry.Detail += fmt.Sprintf("; further refusals from %s until %s are counted, not recorded one by one",
			key, now.Add(refusalWindow).UTC().Format(time.RFC3339))
		return append(out, entry)
	}
	w.suppressed++
	w.last = entry.Action
	return out
}

// noteToken counts a refusal of a request that carried a valid token and
// returns the entries to write: entry itself when it is the first of its
// kind in refusalWindow — the same token asking the same thing from the
// same address, refused for the same reason — and the summaries of windows
// that have ended. A client that repeats what it may not do (a screen
// refreshing a payload its token may not read) adds one entry and a count,
// not one entry a refresh. Tokens are few and their holders known: past
// maxRefusalSources windows, every refusal is recorded.
func (l *refusalLog) noteToken(entry *domain.AuditEntry) []*domain.AuditEntry {
	now := entry.At
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*domain.AuditEntry
	if now.Sub(l.lastSweep) >= refusalWindow {
		out = l.sweep(now, false)
		l.lastSweep = now
	}
	key := "\x00" + entry.Actor + "\x00" + entry.Source + "\x00" + entry.Action + "\x00" + entry.Detail
	w, ok := l.windows[key]
	if ok && now.Sub(w.start) >= refusalWindow {
		out = append(out, l.summary(key, w, now)...)
		delete(l.windows, key)
		ok = false
	}
	switch {
	case ok:
		w.suppressed++
		return out
	case len(l.windows) < maxRefusalSources:
		first := *entry
		l.windows[key] = &refusalWindowState{start: now, token: &first}
	}
	return append(out, entry)
}

// noteReport counts a refusal that a client reports it made itself (POST
// /v1/audit/refusals: a usage error a front end found) and says whether to
// record it: the first an actor reports for an action in refusalWindow is
// recorded, the others in the window are counted, and their count is
// written when the window ends — as the server folds the refusals it makes
// itself. It also returns the summaries of windows that have ended. An
// actor thus adds at most two entries per audited action and window,
// whatever it posts; past maxRefusalSources windows, the reports of every
// further actor of an action share one window.
func (l *refusalLog) noteReport(entry *domain.AuditEntry) (bool, []*domain.AuditEntry) {
	now := entry.At
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*domain.AuditEntry
	if now.Sub(l.lastSweep) >= refusalWindow {
		out = l.sweep(now, false)
		l.lastSweep = now
	}
	key := "\x01" + entry.Actor + "\x00" + entry.Action
	if _, ok := l.windows[key]; !ok && len(l.windows) >= maxRefusalSources {
		key = "\x01\x00" + entry.Action
	}
	w, ok := l.windows[key]
	if ok && now.Sub(w.start) >= refusalWindow {
		out = append(out, l.summary(key, w, now)...)
		delete(l.windows, key)
		ok = false
	}
	if ok {
		w.suppressed++
		w.last = entry.Detail
		return false, out
	}
	first := *entry
	l.windows[key] = &refusalWindowState{start: now, token: &first, reported: true}
	return true, out
}

// sweep ends the windows that are over (all of them with all set) and
// returns their summaries.
func (l *refusalLog) sweep(now time.Time, all bool) []*domain.AuditEntry {
	var out []*domain.AuditEntry
	for key, w := range l.windows {
		if all || now.Sub(w.start) >= refusalWindow {
			out = append(out, l.summary(key, w, now)...)
			delete(l.windows, key)
		}
	}
	return out
}

// summary is the entry that counts a window's unrecorded refusals, if any.
func (l *refusalLog) summary(key string, w *refusalWindowState, now time.Time) []*domain.AuditEntry {
	if w.suppressed == 0 {
		return nil
	}
	end := w.start.Add(refusalWindow)
	if now.Before(end) {
		end = now
	}
	if t := w.token; t != nil && w.reported {
		return []*domain.AuditEntry{{
			At: now, Actor: t.Actor, Source: t.Source, Action: t.Action, Targets: []string{}, Result: t.Result,
			Detail: fmt.Sprintf("%d more refusals of %s reported by %s between %s and %s were counted, not recorded "+
				"one by one; the last: %s", w.suppressed, t.Action, t.Actor, w.start.UTC().Format(time.RFC3339),
				end.UTC().Format(time.RFC3339), w.last),
		}}
	}
	if t := w.token; t != nil {
		return []*domain.AuditEntry{{
			At: now, Actor: t.Actor, Source: t.Source, Action: t.Action, Targets: []string{}, Result: domain.AuditDenied,
			Detail: fmt.Sprintf("%d more identical requests were refused between %s and %s: %s",
				w.suppressed, w.start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), t.Detail),
		}}
	}
	return []*domain.AuditEntry{{
		At: now, Actor: "anonymous", Source: key, Action: w.last, Targets: []string{}, Result: domain.AuditDenied,
		Detail: fmt.Sprintf("%d more requests without a valid token were refused from %s between %s and %s (the last is this entry's action)",
			w.suppressed, key, w.start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339)),
	}}
}

// sourceKey is what refusals are counted by: an IPv4 address, or an IPv6
// address's /64, which one client commonly holds whole.
func sourceKey(source string) string {
	ip := net.ParseIP(source)
	if ip == nil || ip.To4() != nil {
		return source
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}
