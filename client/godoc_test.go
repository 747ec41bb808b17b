package client_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestEverythingDocumented fails on an exported type, function, method,
// constant, variable or struct field of the client that has no doc comment:
// go doc is the client's manual, and a field it shows bare (what does the
// server do with it? what limits it?) leaves a producer to guess.
func TestEverythingDocumented(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var missing []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		missing = append(missing, undocumented(fset, f)...)
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Errorf("%d exported names have no doc comment:\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
}

// undocumented lists the exported names of f that have no doc comment. A
// name in a group (const, var, type) may take the group's comment, and a
// constant or field may be documented by a comment at the end of its line.
func undocumented(fset *token.FileSet, f *ast.File) []string {
	var out []string
	miss := func(pos token.Pos, what string) {
		out = append(out, fset.Position(pos).String()+": "+what)
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
				continue
			}
			if d.Doc == nil {
				miss(d.Pos(), "func "+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if s.Doc == nil && d.Doc == nil {
						miss(s.Pos(), "type "+s.Name.Name)
					}
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							for _, n := range field.Names {
								if n.IsExported() && field.Doc == nil && field.Comment == nil {
									miss(n.Pos(), s.Name.Name+"."+n.Name)
								}
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Doc == nil && s.Comment == nil && d.Doc == nil {
							miss(n.Pos(), n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

func exportedRecv(recv *ast.FieldList) bool {
	typ := recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}
