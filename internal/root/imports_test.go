package root_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	module = "github.com/broodhq/brood"
	cliPkg = module + "/internal/cli"
)

// helpers are the packages under internal/cli that are not verbs: what
// every command shares, the rendering of results, the tests' harness.
var helpers = []string{"cmdutil", "render", "clitest"}

// imports is every package under dirs with its direct imports, test
// files' included (go list).
func imports(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(patterns, " "), err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		m[f[0]] = f[1:]
	}
	return m
}

// verb is the verb package p is (cli/run: run), or "" for the command tree
// itself, a helper, or a package outside internal/cli.
func verb(p string) string {
	rest, ok := strings.CutPrefix(p, cliPkg+"/")
	if !ok || strings.Contains(rest, "/") || slices.Contains(helpers, rest) {
		return ""
	}
	return rest
}

// TestVerbsImportNoSiblingVerb fails when a verb package
// (internal/cli/<noun>) imports another verb, or chooses an engine by
// importing the Temporal engine (root.Root.Engine and root.OpenFleet do,
// through the fleet brood-fleet links: root/fleetlink, which alone imports
// it), or when package root imports a verb or the Temporal engine.
func TestVerbsImportNoSiblingVerb(t *testing.T) {
	graph := imports(t, "../cli/...", ".")
	verbs := 0
	for p, deps := range graph {
		for _, d := range deps {
			if p == module+"/internal/root" && (verb(d) != "" || d == cliPkg) {
				t.Errorf("package root imports the command package %s: commands import root, not the other way", d)
			}
			v := verb(p)
			if v == "" {
				continue
			}
			if w := verb(d); w != "" && w != v {
				t.Errorf("verb %s imports verb %s: share through internal/root or cmdutil, or have the command tree (internal/cli) pass it in", v, w)
			}
			if p == module+"/internal/root" && d == module+"/internal/engine/temporal" {
				t.Errorf("package root imports the Temporal engine: only root/fleetlink (brood-fleet's) may")
			}
			if d == module+"/internal/engine/temporal" && v != "" && v != "worker" && v != "fleet" { // their tests read the fleet's keys and records
				t.Errorf("verb %s imports the Temporal engine: choose the engine with root.Root.Engine (or root.OpenFleet); what only the fleet does goes in root/fleetlink", v)
			}
		}
		if verb(p) != "" {
			verbs++
		}
	}
	// The check ran over the real tree: the verbs are there.
	for _, want := range []string{"run", "interactive", "mcp", "worker", "subagent", "tasks", "workflow"} {
		if _, ok := graph[path.Join(cliPkg, want)]; !ok {
			t.Fatalf("go list names no %s/%s: not the command tree?", cliPkg, want)
		}
	}
	if verbs < 10 {
		t.Fatalf("only %d verb packages found", verbs)
	}
}

// TestVerbFinder checks the verb rule itself.
func TestVerbFinder(t *testing.T) {
	for _, c := range []struct{ pkg, want string }{
		{cliPkg + "/run", "run"},
		{cliPkg + "/tasks", "tasks"},
		{cliPkg + "/cmdutil", ""},
		{cliPkg + "/render", ""},
		{cliPkg, ""},
		{module + "/internal/root", ""},
		{cliPkg + "/testdata/x", ""},
	} {
		if got := verb(c.pkg); got != c.want {
			t.Errorf("verb(%q) = %q, want %q", c.pkg, got, c.want)
		}
	}
}

// TestNoDispatcherSetters fails when code outside delegate sets a
// dispatcher's wiring after New: the lifetime, the children's tool hooks
// and the session are in spawn.Config, which root fills in; a TUI that
// opens another transcript names it call by call (call.Spec.Session).
func TestNoDispatcherSetters(t *testing.T) {
	var found []string
	for _, dir := range []string{"../../internal", "../../cmd"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel("../..", p)
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.HasPrefix(rel, "internal/spawn/") {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, setter := range []string{".SetLifetime(", ".SetToolHooks(", ".SetSession("} {
				if strings.Contains(string(data), setter) {
					found = append(found, rel+": "+setter)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(found) > 0 {
		t.Errorf("a dispatcher is wired after New (put it in spawn.Config through root.New):\n%s", strings.Join(found, "\n"))
	}
}
