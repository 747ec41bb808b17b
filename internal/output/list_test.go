package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// queueRow stands in for the values commands list.
type queueRow struct {
	Name  string `json:"name" yaml:"name"`
	Depth int    `json:"depth" yaml:"depth"`
	Owner string `json:"owner" yaml:"owner"`
}

var queueCols = []Column[queueRow]{
	{Header: "NAME", Max: 8, Value: func(q queueRow) string { return q.Name }},
	{Header: "DEPTH", Max: 5, Value: func(q queueRow) string { return fmt.Sprint(q.Depth) }},
	{Header: "OWNER", Max: 6, Wide: true, Value: func(q queueRow) string { return Dash(q.Owner) }},
}

var queueRows = []queueRow{
	{Name: "XBTI0000", Depth: 3, Owner: "node-1"},
	{Name: "XBQIORDERS_DE", Depth: 12345},
	{Name: "XBTOE8B9", Depth: 0, Owner: "n2"},
}

func queueName(q queueRow) string { return q.Name }

func renderList(t *testing.T, f Format, rows []queueRow) string {
	t.Helper()
	var b bytes.Buffer
	l := NewList(&b, f, queueCols, queueName)
	for _, r := range rows {
		require.NoError(t, l.Add(r))
	}
	require.NoError(t, l.Close())
	require.Equal(t, len(rows), l.Count())
	return b.String()
}

// requireNoTrailingSpace checks every line of a table.
func requireNoTrailingSpace(t *testing.T, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		require.Equal(t, strings.TrimRight(line, " "), line, "line %d has trailing spaces", i+1)
	}
}

func TestListTable(t *testing.T) {
	t.Parallel()

	out := renderList(t, Table, queueRows)
	require.Equal(t, ""+
		"NAME           DEPTH\n"+
		"XBTI0000       3\n"+
		"XBQIORDERS_DE  12345\n"+
		"XBTOE8B9       0\n", out, "no wide-only columns, two spaces between columns")
	require.NotContains(t, out, "OWNER")
	requireNoTrailingSpace(t, out)
}

func TestListWide(t *testing.T) {
	t.Parallel()

	out := renderList(t, Wide, queueRows)
	require.Equal(t, ""+
		"NAME           DEPTH  OWNER\n"+
		"XBTI0000       3      node-1\n"+
		"XBQIORDERS_DE  12345  -\n"+
		"XBTOE8B9       0      n2\n", out, "wide adds the wide-only columns in their place")
	requireNoTrailingSpace(t, out)
}

func TestListJSON(t *testing.T) {
	t.Parallel()

	out := renderList(t, JSON, queueRows)
	var got []queueRow
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Equal(t, queueRows, got)
	require.True(t, strings.HasPrefix(out, "[\n  {\n    \"name\": \"XBTI0000\",\n"), "indented like one value: %q", out)
	require.True(t, strings.HasSuffix(out, "\n  }\n]\n"), out)

	out = renderList(t, JSON, queueRows[:1])
	require.Equal(t, "[\n  {\n    \"name\": \"XBTI0000\",\n    \"depth\": 3,\n    \"owner\": \"node-1\"\n  }\n]\n", out)
}

func TestListJSONL(t *testing.T) {
	t.Parallel()

	out := renderList(t, JSONL, queueRows)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, len(queueRows), "one object per line")
	for i, line := range lines {
		var got queueRow
		require.NoError(t, json.Unmarshal([]byte(line), &got), line)
		require.Equal(t, queueRows[i], got)
	}
	require.Equal(t, `{"name":"XBTI0000","depth":3,"owner":"node-1"}`, lines[0], "compact")
}

func TestListYAML(t *testing.T) {
	t.Parallel()

	out := renderList(t, YAML, queueRows)
	var got []queueRow
	require.NoError(t, yaml.Unmarshal([]byte(out), &got), out)
	require.Equal(t, queueRows, got, "the one-element sequences join into one sequence")
	require.True(t, strings.HasPrefix(out, "- name: XBTI0000\n"), out)
}

func TestListIDs(t *testing.T) {
	t.Parallel()

	out := renderList(t, IDs, queueRows)
	require.Equal(t, "XBTI0000\nXBQIORDERS_DE\nXBTOE8B9\n", out)
}

func TestListEmpty(t *testing.T) {
	t.Parallel()

	tests := map[Format]string{
		Table: "", // the command says "no ... match" on stderr
		Wide:  "",
		JSON:  "[]\n",
		JSONL: "",
		YAML:  "[]\n",
		IDs:   "",
	}
	for f, want := range tests {
		require.Equal(t, want, renderList(t, f, nil), f)
	}

	var got []queueRow
	require.NoError(t, json.Unmarshal([]byte(renderList(t, JSON, nil)), &got))
	require.NotNil(t, got, "an empty JSON list is [], not null")
	require.NoError(t, yaml.Unmarshal([]byte(renderList(t, YAML, nil)), &got))
	require.Empty(t, got)
}

func TestListUnknownFormat(t *testing.T) {
	t.Parallel()

	l := NewList(&bytes.Buffer{}, Format("xml"), queueCols, queueName)
	require.ErrorContains(t, l.Add(queueRows[0]), `unknown output format "xml"`)
}

func TestListMarshalError(t *testing.T) {
	t.Parallel()

	for _, f := range []Format{JSON, JSONL} {
		l := NewList(&bytes.Buffer{}, f, nil, func(func()) string { return "" })
		err := l.Add(func() {})
		var uerr *json.UnsupportedTypeError
		require.True(t, errors.As(err, &uerr), "%s: %v", f, err)
	}
}

// TestListStreamsLongTable adds more rows than a table holds back to measure:
// the held rows are released, later rows go straight out, and every row
// keeps the column widths taken from the measured rows and each column's Max.
func TestListStreamsLongTable(t *testing.T) {
	t.Parallel()

	var b bytes.Buffer
	l := NewList(&b, Wide, queueCols, queueName)
	rowAt := func(i int) queueRow {
		return queueRow{Name: fmt.Sprintf("Q%d", i), Depth: i % 100, Owner: "n"}
	}
	for i := range measureRows - 1 {
		require.NoError(t, l.Add(rowAt(i)))
	}
	require.Len(t, l.table.held, measureRows-1, "rows are held until the table is measured")
	require.Nil(t, l.table.streamer)
	require.NoError(t, l.Flush())
	require.Zero(t, b.Len(), "nothing is printed before the widths are known")

	require.NoError(t, l.Add(rowAt(measureRows-1)))
	require.Nil(t, l.table.held, "the measured rows are released once streaming starts")
	require.NotNil(t, l.table.streamer)

	extra := []queueRow{
		{Name: "XBQOE8B9ORDERS_DE_LONG", Depth: 7, Owner: "node-123456"}, // wider than measured and Max: clipped
		{Name: "XBTI9999", Depth: 99999, Owner: "nodeid"},                // exactly as wide as Max
	}
	for i := measureRows; i < measureRows+500; i++ {
		require.NoError(t, l.Add(rowAt(i)))
		require.Nil(t, l.table.held, "streamed rows are not kept (row %d)", i)
	}
	require.NoError(t, l.Flush())
	require.Contains(t, b.String(), "Q1499 ", "streamed rows are printed as they come, before Close")
	for _, r := range extra {
		require.NoError(t, l.Add(r))
	}
	require.NoError(t, l.Close())
	require.Equal(t, measureRows+500+len(extra), l.Count())

	out := b.String()
	requireNoTrailingSpace(t, out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 1+measureRows+500+len(extra), "a header and every row, once")

	// Measured: NAME is at most "Q999" (4) → Max 8; DEPTH "99" (2) → header 5;
	// OWNER "n" (1) → Max 6. Two spaces between columns.
	row := func(name, depth, owner string) string {
		return strings.TrimRight(fmt.Sprintf("%-8s  %-5s  %-6s", name, depth, owner), " ")
	}
	require.Equal(t, row("NAME", "DEPTH", "OWNER"), lines[0])
	for i := range measureRows + 500 {
		r := rowAt(i)
		require.Equal(t, row(r.Name, fmt.Sprint(r.Depth), r.Owner), lines[1+i], "row %d", i)
	}
	n := len(lines)
	require.Equal(t, row("XBQOE8B…", "7", "node-…"), lines[n-2], "a cell wider than its column is cut visibly")
	require.Equal(t, row("XBTI9999", "99999", "nodeid"), lines[n-1])
}

func TestListTableOfExactlyMeasureRows(t *testing.T) {
	t.Parallel()

	rows := make([]queueRow, measureRows)
	for i := range rows {
		rows[i] = queueRow{Name: fmt.Sprintf("XBTI%04d", i), Depth: i}
	}
	out := renderList(t, Table, rows)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 1+measureRows)
	require.Equal(t, "NAME      DEPTH", lines[0])
	require.Equal(t, "XBTI0000  0", lines[1])
	require.Equal(t, "XBTI0999  999", lines[measureRows])
	requireNoTrailingSpace(t, out)
}

// TestListJSONAsMarshal: the one encoder of a list writes each value as
// json.MarshalIndent and json.Marshal do, HTML escaped, maps sorted.
func TestListJSONAsMarshal(t *testing.T) {
	t.Parallel()

	type value struct {
		Text   string           `json:"text"`
		Counts map[string]int64 `json:"counts"`
		Nested []map[string]any `json:"nested,omitempty"`
	}
	values := []value{
		{Text: "<order & co>", Counts: map[string]int64{"TBDL": 1, "DLVD": 999}},
		{Text: "", Counts: nil, Nested: []map[string]any{{"b": 1, "a": []int{1, 2}}}},
		{Text: "é\u2028", Counts: map[string]int64{}},
	}
	var want, wantL strings.Builder
	want.WriteString("[")
	for i, v := range values {
		b, err := json.MarshalIndent(v, "  ", "  ")
		require.NoError(t, err)
		if i > 0 {
			want.WriteString(",")
		}
		want.WriteString("\n  ")
		want.Write(b)
		b, err = json.Marshal(v)
		require.NoError(t, err)
		wantL.Write(b)
		wantL.WriteString("\n")
	}
	want.WriteString("\n]\n")
	for f, want := range map[Format]string{JSON: want.String(), JSONL: wantL.String()} {
		var b bytes.Buffer
		l := NewList(&b, f, nil, func(value) string { return "" })
		for _, v := range values {
			require.NoError(t, l.Add(v))
		}
		require.NoError(t, l.Close())
		require.Equal(t, want, b.String(), f)
	}
}
