package registry_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment/registry"
)

// TestPresetNamesUnique: every preset of every family has its own name (a
// name is how --preset, the catalog and the TUI find a preset), and the
// default preset is one of them.
func TestPresetNamesUnique(t *testing.T) {
	cat := registry.Catalog()
	owner := map[string]string{}
	for _, f := range cat.Families() {
		if len(f.Presets()) == 0 {
			t.Errorf("family %s has no preset", f.Name())
		}
		for _, p := range f.Presets() {
			if p.Name == "" {
				t.Errorf("family %s has a preset without a name", f.Name())
			}
			if prev, dup := owner[p.Name]; dup {
				t.Errorf("preset %q belongs to %s and %s", p.Name, prev, f.Name())
			}
			owner[p.Name] = f.Name()
			if sc := p.Scenario(); sc.Family == nil || sc.Family.Name() != f.Name() || sc.Preset != p.Name {
				t.Errorf("preset %q of %s builds a scenario of family %v named %q", p.Name, f.Name(), sc.Family, sc.Preset)
			}
		}
	}
	if _, err := cat.Lookup(registry.DefaultPreset); err != nil {
		t.Errorf("default preset: %v", err)
	}
	names := map[string]bool{}
	for _, f := range cat.Families() {
		if names[f.Name()] {
			t.Errorf("two families named %q", f.Name())
		}
		names[f.Name()] = true
	}
}

// TestNoFamilySwitch keeps the promise of package experiment's doc: nothing
// outside a family's package and the registry switches on which family a
// scenario belongs to. It parses the non-test sources of experiment/ (not
// its subpackages), internal/ and tui/ and fails on a case clause that names
// a family's package (linear.Family, newton.KindKRR …) or a family's name as
// a string ("linear"), and on an == or != against a family's name.
func TestNoFamilySwitch(t *testing.T) {
	pkgs, names := familyPackages(t), map[string]bool{}
	for _, f := range registry.Catalog().Families() {
		names[f.Name()] = true
	}
	if len(pkgs) != len(names) {
		t.Fatalf("the registry imports %d family packages for %d families", len(pkgs), len(names))
	}
	root := filepath.Join("..", "..")
	var files []string
	add := func(dir string, recursive bool) {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != filepath.Join(root, dir) && !recursive {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	add("experiment", false)
	add("internal", true)
	add("cli", true)
	add("tui", true)
	if len(files) < 10 {
		t.Fatalf("found only %d source files under %s: wrong root?", len(files), root)
	}

	// names a family: a selector on a family's package, or its name as a string.
	familyOf := func(e ast.Expr) string {
		found := ""
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && pkgs[id.Name] {
					found = id.Name + "." + n.Sel.Name
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && names[s] {
					found = n.Value
				}
			}
			return found == ""
		})
		return found
	}
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CaseClause:
				for _, e := range n.List {
					if name := familyOf(e); name != "" {
						t.Errorf("%s: a case on family %s", fset.Position(e.Pos()), name)
					}
				}
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					if name := familyOf(n); name != "" {
						t.Errorf("%s: a comparison with family %s", fset.Position(n.Pos()), name)
					}
				}
			}
			return true
		})
	}
}

// familyPackages returns the names of the family packages the registry
// imports (every family is built by experiment.Define, so its dynamic type
// does not name its package).
func familyPackages(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "registry.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "github.com/fedscope/fedscope/experiment/"
	out := map[string]bool{}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, prefix) {
			out[path.Base(p)] = true
		}
	}
	return out
}
