package skills

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// codeValues returns every code of warning.go (the warning constants and
// the refusal codes refusalCode returns) and the doc comment of Warning,
// which lists them.
func codeValues(t *testing.T) (codes []string, doc string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "warning.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == "Warning" {
						doc = d.Doc.Text()
					}
				case *ast.ValueSpec:
					if id, ok := s.Type.(*ast.Ident); ok && id.Name == "skillCode" {
						for _, v := range s.Values {
							codes = append(codes, literal(t, v))
						}
					}
				}
			}
		case *ast.FuncDecl:
			if d.Name.Name != "refusalCode" {
				continue
			}
			ast.Inspect(d, func(n ast.Node) bool {
				if r, ok := n.(*ast.ReturnStmt); ok {
					codes = append(codes, literal(t, r.Results[0]))
				}
				return true
			})
		}
	}
	if len(codes) < 30 || doc == "" {
		t.Fatalf("found %d codes and doc %q in warning.go", len(codes), doc)
	}
	return codes, doc
}

func literal(t *testing.T, e ast.Expr) string {
	t.Helper()
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		t.Fatalf("a code is not a string literal: %#v", e)
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCodesDocumented: every code, warning or refusal, is listed in
// Warning's doc comment and in docs/skills.md, since users compare codes as
// strings (the constants are unexported).
func TestCodesDocumented(t *testing.T) {
	codes, doc := codeValues(t)
	md, err := os.ReadFile(filepath.Join("..", "docs", "skills.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range codes {
		if !strings.Contains(doc, c+" ") && !strings.Contains(doc, c+",") {
			t.Errorf("code %q is not listed in the doc comment of Warning", c)
		}
		if !strings.Contains(string(md), "`"+c+"`") {
			t.Errorf("code %q is not documented in docs/skills.md", c)
		}
	}
}
