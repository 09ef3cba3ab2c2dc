package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// notLinked are packages brood must not link, and why: each keeps, through
// reflect.Value.MethodByName (a template's execution), every exported
// method of every type in the binary (most of the model SDKs: brood 71
// against 45 MB stripped, its initialisers and page faults with them).
var notLinked = []struct{ pkg, why string }{
	{"html/template", "it executes text/template"},
	{"golang.org/x/net/trace", "its init registers HTTP handlers that execute html/template"},
	{"google.golang.org/grpc", "it imports golang.org/x/net/trace: the OTLP exporters (HTTP ones too) and the fleet are brood-fleet's"},
	{"github.com/broodhq/brood/internal/telemetry/otlp", "the OTLP exporters link gRPC: brood hands agent runs to brood-fleet while telemetry is on"},
	{"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp", "it links gRPC (its config and the collector's protobuf service)"},
}

// executed are symbols of a template's execution: text/template itself is
// in brood's graph (cobra imports it) but must never run, which the
// linker sees.
var executed = []string{"text/template.(*state).walk", "text/template.(*Template).Execute", "reflect.Value.MethodByName", "reflect.Value.Method"}

// TestLinksNoTemplateExecution fails when brood links a package of
// notLinked (with the import chain to cut) or a template's execution (with
// the packages of brood's graph that import text/template).
func TestLinksNoTemplateExecution(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", "github.com/broodhq/brood/cmd/brood").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps, graph := map[string]bool{}, map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, imports, _ := strings.Cut(l, ": ")
		deps[p], graph[p] = true, strings.Fields(imports)
	}
	if !deps["github.com/broodhq/brood/internal/tui"] {
		t.Fatalf("go list -deps names no internal/tui: not brood's graph?\n%s", out)
	}
	for _, p := range notLinked {
		if deps[p.pkg] {
			t.Errorf("brood links %s (%s): %s", p.pkg, p.why, importChain(deps, graph, "github.com/broodhq/brood/cmd/brood", p.pkg))
		}
	}
	bin := filepath.Join(t.TempDir(), "brood")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/broodhq/brood/cmd/brood")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	nm, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	syms := map[string]bool{}
	for _, l := range strings.Split(string(nm), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[1] == "T" {
			syms[f[2]] = true
		}
	}
	if !syms["main.main"] {
		t.Fatalf("go tool nm lists no main.main:\n%.2000s", nm)
	}
	var importers []string
	for p, imports := range graph {
		if slices.Contains(imports, "text/template") {
			importers = append(importers, p)
		}
	}
	slices.Sort(importers)
	for _, s := range executed {
		if syms[s] {
			t.Errorf("brood links %s: a template is executed (it keeps every exported method of every type); text/template's importers: %s", s, strings.Join(importers, ", "))
		}
	}
}

// importChain is a shortest chain of imports from pkg to dep in graph:
// where to cut.
func importChain(deps map[string]bool, graph map[string][]string, pkg, dep string) string {
	prev := map[string]string{pkg: ""}
	for queue := []string{pkg}; len(queue) > 0; queue = queue[1:] {
		for _, next := range graph[queue[0]] {
			if _, seen := prev[next]; !seen && deps[next] {
				prev[next] = queue[0]
				queue = append(queue, next)
			}
		}
	}
	chain := []string{}
	for p := dep; p != ""; p = prev[p] {
		chain = append(chain, p)
	}
	return strings.Join(chain, " <- ")
}
