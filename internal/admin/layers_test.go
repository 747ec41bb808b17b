package admin_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoImportUpTheLayers: the admin service and its implementations sit
// under the HTTP API and the command line; none of their code (tests
// aside) imports either. What joins them — the API served on an embedded
// store's socket — is wired above both (cmdutil.SocketAPI).
func TestNoImportUpTheLayers(t *testing.T) {
	t.Parallel()
	above := []string{"github.com/queuectl/queuectl/internal/httpapi", "github.com/queuectl/queuectl/internal/cli"}
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			for _, a := range above {
				require.False(t, p == a || strings.HasPrefix(p, a+"/"), "%s imports %s, a layer above it", path, p)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 10)
}
