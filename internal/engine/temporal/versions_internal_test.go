package temporal

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestEveryWorkflowChangeIsKnown: every change id this package's
// workflow code asks workflow.GetVersion about is one the submitter's
// replay knows (knownVersion), at the highest version the code asks for:
// else every history of a new run reads as a newer brood's.
func TestEveryWorkflowChangeIsKnown(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	type use struct {
		arg string
		max int
		at  token.Pos
	}
	var uses []use
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.ValueSpec:
					for i, name := range n.Names {
						if i < len(n.Values) {
							if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								consts[name.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok || sel.Sel.Name != "GetVersion" || len(n.Args) != 4 {
						return true
					}
					id, _ := n.Args[1].(*ast.Ident)
					lit, _ := n.Args[3].(*ast.BasicLit)
					u := use{at: n.Pos()}
					if id != nil {
						u.arg = id.Name
					}
					if lit != nil {
						u.max, _ = strconv.Atoi(lit.Value)
					}
					uses = append(uses, u)
				}
				return true
			})
		}
	}
	if len(uses) < 4 {
		t.Fatalf("found %d GetVersion calls; want the package's (at least 4)", len(uses))
	}
	for _, u := range uses {
		change, ok := consts[u.arg]
		if !ok || u.max < 1 {
			t.Errorf("%s: GetVersion of %q (max %d): want a string constant's change id and a literal version", fset.Position(u.at), u.arg, u.max)
			continue
		}
		if max, known := knownVersion(change); !known || max < u.max {
			t.Errorf("%s: change %q version %d is not in knownVersion (%d, %v): a new run's history would read as a newer brood's", fset.Position(u.at), change, u.max, max, known)
		}
	}
}
