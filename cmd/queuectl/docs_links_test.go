package main

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocLinks checks every relative link of README.md and docs/**.md: the
// file or directory it names exists, and an #anchor names a heading of the
// page it points to. Links to other sites are not fetched.
func TestDocLinks(t *testing.T) {
	t.Parallel()

	docs := map[string]mdDoc{}
	for _, f := range docFiles(t) {
		docs[f] = readDoc(t, f)
	}
	var problems []string
	checked := 0
	for _, f := range docFiles(t) {
		for _, l := range docs[f].links() {
			if problem := checkLink(docs, f, l.target); problem != "" {
				problems = append(problems, f+":"+strconv.Itoa(l.line)+": "+l.target+": "+problem)
			}
			checked++
		}
	}
	require.Greater(t, checked, 50, "the docs link to each other")
	require.Empty(t, problems, "broken links:\n%s", strings.Join(problems, "\n"))
}

// checkLink says what is wrong with target, a link in the doc from, or "".
func checkLink(docs map[string]mdDoc, from, target string) string {
	if target == "" {
		return "empty link"
	}
	u, err := url.Parse(target)
	if err != nil {
		return err.Error()
	}
	if u.Scheme != "" || u.Host != "" {
		return "" // another site: not checked here
	}
	file := from
	if u.Path != "" {
		if strings.HasPrefix(u.Path, "/") {
			return "a link from the repository root does not resolve on every host: make it relative"
		}
		file = path.Clean(path.Join(path.Dir(from), u.Path))
		if file == ".." || strings.HasPrefix(file, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(docsRoot, filepath.FromSlash(file))); err != nil {
			return "no such file"
		}
	}
	if u.Fragment == "" {
		return ""
	}
	doc, ok := docs[file]
	if !ok {
		if !strings.HasSuffix(file, ".md") {
			return "an anchor into a file that is not markdown"
		}
		return "an anchor into a page that is not among the docs"
	}
	if !doc.anchors()[u.Fragment] {
		return "no heading with anchor #" + u.Fragment + " in " + file
	}
	return ""
}

// TestDocsStandAlone checks that the docs cite nothing a reader does not
// have: no numbered sections of another document, no paths outside the
// repository.
func TestDocsStandAlone(t *testing.T) {
	t.Parallel()

	var problems []string
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(filepath.Join(docsRoot, filepath.FromSlash(f)))
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			for _, bad := range []string{"§", "../shared/", "SPEC.md"} {
				if strings.Contains(line, bad) {
					problems = append(problems, f+":"+strconv.Itoa(i+1)+": "+bad+": "+strings.TrimSpace(line))
				}
			}
		}
	}
	require.Empty(t, problems, "the docs must stand alone:\n%s", strings.Join(problems, "\n"))
}

// TestSlug pins the anchors GitHub gives headings, which links rely on.
func TestSlug(t *testing.T) {
	t.Parallel()

	for heading, want := range map[string]string{
		"Exit codes":                       "exit-codes",
		"eoio switch / eoio status":        "eoio-switch--eoio-status",
		"Sizing `lease_ttl`":               "sizing-lease_ttl",
		"A blocked EOIO queue":             "a-blocked-eoio-queue",
		"Who holds the store?":             "who-holds-the-store",
		"[Remote mode](remote.md) and TLS": "remote-mode-and-tls",
		"Tokens, roles & TLS":              "tokens-roles--tls",
	} {
		require.Equal(t, want, slug(heading), heading)
	}
	doc := mdDoc{prose: []mdLine{{1, "## Errors"}, {2, "## Errors"}, {3, `<a name="exit-5"></a>`}}}
	require.Equal(t, map[string]bool{"errors": true, "errors-1": true, "exit-5": true}, doc.anchors())
}
