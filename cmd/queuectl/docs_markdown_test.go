package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// The docs are tested like code: their links resolve (docs_links_test.go)
// and their runnable examples run (docs_examples_test.go). This file reads
// them: which files are docs, their fenced blocks, headings and links.

// docsRoot is the repository root seen from this package's directory.
const docsRoot = "../.."

// docFiles returns README.md and every markdown file under docs/, by their
// path relative to the repository root, with slashes.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(docsRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		rel, err := filepath.Rel(docsRoot, p)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	require.NoError(t, err)
	require.Greater(t, len(files), 1, "docs/ holds the guides")
	return files
}

// mdLine is one line of a markdown file outside its fenced code blocks.
type mdLine struct {
	n    int // 1-based
	text string
}

// mdBlock is a fenced code block.
type mdBlock struct {
	line   int    // of the opening fence, 1-based
	info   string // the fence's info string: "sh", "yaml", …
	marker string // the HTML comment on the line before the fence, if any
	body   string
}

// mdDoc is a markdown file split into prose and fenced blocks.
type mdDoc struct {
	path   string
	prose  []mdLine
	blocks []mdBlock
}

var fenceRE = regexp.MustCompile("^ {0,3}(```+|~~~+)\\s*(.*)$")

func readDoc(t *testing.T, path string) mdDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(docsRoot, filepath.FromSlash(path)))
	require.NoError(t, err)
	doc := mdDoc{path: path}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			doc.prose = append(doc.prose, mdLine{i + 1, lines[i]})
			continue
		}
		blk := mdBlock{line: i + 1, info: strings.TrimSpace(m[2])}
		if i > 0 {
			if prev := strings.TrimSpace(lines[i-1]); strings.HasPrefix(prev, "<!--") {
				blk.marker = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(prev, "<!--"), "-->"))
			}
		}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if c := strings.TrimSpace(lines[i]); strings.HasPrefix(c, m[1]) && strings.Trim(c, m[1][:1]) == "" {
				closed = true
				break
			}
			body = append(body, lines[i])
		}
		require.True(t, closed, "%s:%d: a fenced block is not closed", path, blk.line)
		blk.body = strings.Join(body, "\n") + "\n"
		doc.blocks = append(doc.blocks, blk)
	}
	return doc
}

var (
	headingRE  = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
	// An inline link or image: [text](target) or [text](target "title").
	inlineLinkRE = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// A link reference definition: [label]: target.
	refDefRE = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// An HTML anchor target: <a name="x"> or id="x".
	htmlAnchorRE = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// anchors returns the anchors GitHub gives the headings of doc, and those
// of explicit HTML anchors.
func (doc mdDoc) anchors() map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range doc.prose {
		for _, m := range htmlAnchorRE.FindAllStringSubmatch(l.text, -1) {
			out[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// slug is GitHub's anchor for a heading: its text without markup,
// lowercased, with spaces as hyphens and other punctuation dropped.
func slug(heading string) string {
	text := inlineLinkRE.ReplaceAllStringFunc(heading, func(s string) string {
		return s[strings.Index(s, "[")+1 : strings.Index(s, "]")]
	})
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// mdLink is a link target found in the prose of a doc.
type mdLink struct {
	line   int
	target string
}

// links returns the link targets in the prose of doc, leaving out code
// spans, where brackets are text.
func (doc mdDoc) links() []mdLink {
	var out []mdLink
	for _, l := range doc.prose {
		text := codeSpanRE.ReplaceAllString(l.text, "")
		if m := refDefRE.FindStringSubmatch(text); m != nil {
			out = append(out, mdLink{l.n, m[1]})
			continue
		}
		for _, m := range inlineLinkRE.FindAllStringSubmatch(text, -1) {
			out = append(out, mdLink{l.n, m[1]})
		}
	}
	return out
}
