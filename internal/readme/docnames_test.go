package readme

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestDocsNameNoUnexported: the doc comments a user reads in go doc (the
// package doc, and the docs of exported names, fields and methods of
// library packages) never name an unexported identifier of the package:
// a user cannot look it up, and it is usually a name that was hidden while
// the prose was not updated. Only identifiers that cannot be mistaken for
// words are checked (camelCase, or with a digit or underscore).
func TestDocsNameNoUnexported(t *testing.T) {
	var bad []string
	for _, dir := range libraryDirs(t) {
		bad = append(bad, unexportedInDocs(t, dir)...)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// libraryDirs lists the directories of the module's library packages:
// not internal, not commands, not examples, not testdata.
func libraryDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		switch base := d.Name(); {
		case rel == ".":
			return nil
		case base == "internal", base == "testdata", base == "cmd", base == "examples", base == "node_modules", strings.HasPrefix(base, "."):
			return filepath.SkipDir
		}
		dirs = append(dirs, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

var identWord = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// looksLikeIdent reports whether w cannot be an English word: it starts
// lower-case and has an upper-case letter, a digit or an underscore.
func looksLikeIdent(w string) bool {
	if w == "" || !unicode.IsLower(rune(w[0])) {
		return false
	}
	return strings.ContainsFunc(w[1:], func(r rune) bool { return unicode.IsUpper(r) || unicode.IsDigit(r) || r == '_' })
}

func unexportedInDocs(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for name, pkg := range pkgs {
		if name == "main" {
			continue
		}
		hidden := map[string]bool{}
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil && !d.Name.IsExported() {
						hidden[d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if !s.Name.IsExported() {
								hidden[s.Name.Name] = true
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if !n.IsExported() {
									hidden[n.Name] = true
								}
							}
						}
					}
				}
			}
		}
		check := func(where string, cg *ast.CommentGroup) {
			if cg == nil {
				return
			}
			for _, w := range identWord.FindAllString(cg.Text(), -1) {
				if looksLikeIdent(w) && hidden[w] {
					rel, _ := filepath.Rel(root, dir)
					bad = append(bad, rel+": the doc of "+where+" names "+w+", which is unexported")
				}
			}
		}
		for _, f := range pkg.Files {
			check("package "+name, f.Doc)
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
						check(d.Name.Name, d.Doc)
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if !s.Name.IsExported() {
								continue
							}
							doc := s.Doc
							if doc == nil {
								doc = d.Doc
							}
							check(s.Name.Name, doc)
							checkMembers(s, check)
						case *ast.ValueSpec:
							if slices.ContainsFunc(s.Names, func(n *ast.Ident) bool { return n.IsExported() }) {
								doc := s.Doc
								if doc == nil {
									doc = d.Doc
								}
								check(s.Names[0].Name, doc)
								check(s.Names[0].Name, s.Comment)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

// checkMembers checks the docs of an exported type's exported fields and
// interface methods.
func checkMembers(s *ast.TypeSpec, check func(string, *ast.CommentGroup)) {
	var fields *ast.FieldList
	switch tt := s.Type.(type) {
	case *ast.StructType:
		fields = tt.Fields
	case *ast.InterfaceType:
		fields = tt.Methods
	default:
		return
	}
	for _, f := range fields.List {
		for _, n := range f.Names {
			if n.IsExported() {
				check(s.Name.Name+"."+n.Name, f.Doc)
				check(s.Name.Name+"."+n.Name, f.Comment)
			}
		}
	}
}

func exportedRecv(fl *ast.FieldList) bool {
	if len(fl.List) == 0 {
		return false
	}
	typ := fl.List[0].Type
	for {
		switch tt := typ.(type) {
		case *ast.StarExpr:
			typ = tt.X
		case *ast.IndexExpr:
			typ = tt.X
		case *ast.IndexListExpr:
			typ = tt.X
		case *ast.Ident:
			return tt.IsExported()
		default:
			return false
		}
	}
}
