package components

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/stretchr/testify/require"
)

func TestTableLeavesOutDroppableColumns(t *testing.T) {
	t.Parallel()
	tb := Table{
		Columns: []Column{{Title: "QUEUE", Width: 24}, {Title: "STAGE", Width: 8, Drop: 2},
			{Title: "OLDEST", Width: 6, Drop: 3}, {Title: "ERROR", Width: 20}},
		Rows:    [][]string{{"XBQIORDERS_DE", "inbound", "3m", "422 Unprocessable Entity"}, {"XBTI0000", "inbound", "-", "-"}},
		Cursor:  1,
		Marked:  []bool{true, false},
		SortCol: -1,
	}
	wide := tb.View(100, 10, TableStyles{})
	require.Contains(t, wide, "STAGE")
	require.Contains(t, wide, "OLDEST")
	require.Contains(t, wide, " *XBQIORDERS_DE")
	require.Contains(t, wide, "> XBTI0000")

	narrow := tb.View(40, 10, TableStyles{})
	require.NotContains(t, narrow, "OLDEST", "the highest Drop goes first")
	require.NotContains(t, narrow, "STAGE")
	for _, l := range strings.Split(narrow, "\n") {
		require.LessOrEqual(t, len([]rune(l)), 40, l)
	}
	require.Len(t, strings.Split(tb.View(100, 2, TableStyles{}), "\n"), 2, "the header and one row fit in 2 lines")
}

// TestTableColumnsTakeWhatTheyShow: a column is as wide as its title and
// values need, up to its Width; the last column takes the rest.
func TestTableColumnsTakeWhatTheyShow(t *testing.T) {
	t.Parallel()
	tb := Table{
		Columns: []Column{{Title: "QUEUE", Width: 24}, {Title: "ATTEMPTS", Width: 8}, {Title: "ERROR", Width: 80}},
		Rows:    [][]string{{"XBQIA", "1", "timeout"}, {"XBQIABCDEFGHIJKLMNOPQRSTUVWXYZ", "12", "HTTP 503"}},
		Cursor:  0, SortCol: -1,
	}
	require.Equal(t, []int{24, 8, 70 - 24 - 2 - 8 - 2}, tb.fit(70), "the long name is cut at Width 24; ATTEMPTS by its title")
	tb.Rows = tb.Rows[:1]
	require.Equal(t, []int{5, 8, 70 - 5 - 2 - 8 - 2}, tb.fit(70), "short values: narrow columns")
	require.Equal(t, "  QUEUE  ATTEMPTS  ERROR\n> XBQIA  1         timeout", tb.View(70, 5, TableStyles{}))
}

// TestTableLastColumnMin: a last column that says it needs less room keeps
// the droppable columns that the default room would push out.
func TestTableLastColumnMin(t *testing.T) {
	t.Parallel()
	tb := Table{
		Columns: []Column{{Title: "QUEUE", Width: 24}, {Title: "ATTEMPTS", Width: 8, Drop: 1}, {Title: "ERROR", Width: 80}},
		Rows:    [][]string{{"XBQIWAREHOUSE_ORDERS", "4", "503 Service Unavailable"}},
		SortCol: -1,
	}
	require.Equal(t, []int{20, 0, 20}, tb.fit(42), "the default keeps 16 columns for the error: ATTEMPTS goes")
	tb.Columns[2].Min = 8
	require.Equal(t, []int{20, 8, 10}, tb.fit(42), "with Min 8 ATTEMPTS stays")
}

func TestStatusLine(t *testing.T) {
	t.Parallel()
	s := StatusLine{Text: "server unreachable", Error: true, Right: "refresh every 2s"}.View(50, lipgloss.NewStyle(), lipgloss.NewStyle())
	require.True(t, strings.HasPrefix(s, "error: server unreachable"))
	require.True(t, strings.HasSuffix(s, "refresh every 2s"))
	require.Len(t, []rune(s), 50)
}

// A cell or a status a producer or receiver wrote cannot drive the
// terminal: its control characters are shown escaped.
func TestTableAndStatusLineEscapeControlCharacters(t *testing.T) {
	t.Parallel()
	tb := Table{
		Columns: []Column{{Title: "INTERFACE", Width: 30}, {Title: "ERROR", Width: 40}},
		Rows:    [][]string{{"Order\nCreate", "boom \x1b]0;pwned\a\x1b[2J"}},
		SortCol: -1,
	}
	v := tb.View(120, 10, TableStyles{})
	require.NotContains(t, v, "\x1b")
	require.Len(t, strings.Split(v, "\n"), 2, "one header line, one row")
	require.Contains(t, v, `Order\n`)
	require.Contains(t, v, `boom \x1b]0;pwned\x07\x1b[2J`)

	s := StatusLine{Text: "message x: boom \x1b[2J", Error: true}.View(80, lipgloss.NewStyle(), lipgloss.NewStyle())
	require.NotContains(t, s, "\x1b")
	require.Contains(t, s, `boom \x1b[2J`)
}
