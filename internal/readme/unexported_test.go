package readme

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNoUnnamableTypesInAPI: no exported function, method, field, variable
// or constant of a library package uses a type a user cannot name (an
// unexported type, or a type of an internal/ package) in its signature.
// Such a type cannot be written in a user's field or signature, and go doc
// hides it.
func TestNoUnnamableTypesInAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list -export")
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Name}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	var libs []string
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) != 3 {
			continue
		}
		exports[f[0]] = f[1]
		own, ok := strings.CutPrefix(f[0], module)
		if ok && f[2] != "main" && !isInternal(own) && !strings.Contains(own, "examples") {
			libs = append(libs, f[0])
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	var bad []string
	for _, path := range libs {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		bad = append(bad, unnamable(pkg)...)
	}
	slices.Sort(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

func isInternal(own string) bool {
	return strings.HasPrefix(own, "internal/") || strings.Contains(own, "/internal/")
}

// unnamable lists the exported API of pkg that mentions a type a user
// cannot name.
func unnamable(pkg *types.Package) []string {
	var bad []string
	short := strings.TrimPrefix(pkg.Path(), module)
	report := func(where string, typ types.Type) {
		if n := firstUnnamable(typ, map[types.Type]bool{}); n != "" {
			bad = append(bad, fmt.Sprintf("%s.%s uses %s, which users cannot name", short, where, n))
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Func, *types.Var, *types.Const:
			report(name, obj.Type())
		case *types.TypeName:
			named, ok := obj.Type().(*types.Named)
			if !ok {
				report(name, obj.Type()) // alias
				continue
			}
			switch u := named.Underlying().(type) {
			case *types.Struct:
				for f := range u.Fields() {
					if f.Exported() {
						report(name+"."+f.Name(), f.Type())
					}
				}
			case *types.Interface:
				for m := range u.ExplicitMethods() {
					if m.Exported() {
						report(name+"."+m.Name(), m.Type())
					}
				}
			default:
				report(name, u)
			}
			for m := range named.Methods() {
				if m.Exported() {
					report(name+"."+m.Name(), m.Type())
				}
			}
		}
	}
	return bad
}

// firstUnnamable is the name of the first type in typ that users cannot
// name, or "".
func firstUnnamable(typ types.Type, seen map[types.Type]bool) string {
	if seen[typ] {
		return ""
	}
	seen[typ] = true
	switch t := typ.(type) {
	case *types.Alias:
		return firstUnnamable(types.Unalias(t), seen)
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() != nil {
			own, ours := strings.CutPrefix(obj.Pkg().Path(), module)
			if !obj.Exported() || ours && isInternal(own) {
				return obj.Pkg().Path() + "." + obj.Name()
			}
		}
		for a := range t.TypeArgs().Types() {
			if n := firstUnnamable(a, seen); n != "" {
				return n
			}
		}
	case *types.Pointer:
		return firstUnnamable(t.Elem(), seen)
	case *types.Slice:
		return firstUnnamable(t.Elem(), seen)
	case *types.Array:
		return firstUnnamable(t.Elem(), seen)
	case *types.Chan:
		return firstUnnamable(t.Elem(), seen)
	case *types.Map:
		if n := firstUnnamable(t.Key(), seen); n != "" {
			return n
		}
		return firstUnnamable(t.Elem(), seen)
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for v := range tup.Variables() {
				if n := firstUnnamable(v.Type(), seen); n != "" {
					return n
				}
			}
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() || f.Embedded() {
				if n := firstUnnamable(f.Type(), seen); n != "" {
					return n
				}
			}
		}
	case *types.Interface:
		for m := range t.ExplicitMethods() {
			if n := firstUnnamable(m.Type(), seen); n != "" {
				return n
			}
		}
	}
	return ""
}

// TestUnnamableFinds: the check finds each kind of use of an unnamable
// type in a fixture package, and nothing else.
func TestUnnamableFinds(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "testdata/unnamable/p.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := (&types.Config{}).Check(module+"fixture/unnamable", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := unnamable(pkg)
	slices.Sort(got)
	var names []string
	for _, g := range got {
		names = append(names, strings.Fields(g)[0])
	}
	want := []string{
		"fixture/unnamable.BadFunc",
		"fixture/unnamable.BadField.F",
		"fixture/unnamable.BadGeneric.G",
		"fixture/unnamable.BadIface.Get",
		"fixture/unnamable.BadMethod.Get",
		"fixture/unnamable.BadNested",
		"fixture/unnamable.BadParam",
		"fixture/unnamable.BadReturn",
		"fixture/unnamable.BadVar",
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("found\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
}
