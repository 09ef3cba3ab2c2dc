package main

import (
	"os/exec"
	"strings"
	"testing"
)

// initHeavy are packages whose initialisers cost every brood process
// milliseconds of CPU and megabytes of heap before main (chroma registers
// every lexer and style, bluemonday and gorilla/css build their tables,
// goldmark's extensions compile regexps): a child started as brood (a
// single-binary install) pays them at every spawn. The terminal UI renders
// markdown with goldmark's core parser alone (internal/tui/markdown.go).
var initHeavy = []string{
	"charm.land/glamour/v2",
	"github.com/charmbracelet/glamour",
	"github.com/alecthomas/chroma/v2",
	"github.com/alecthomas/chroma/v2/lexers",
	"github.com/alecthomas/chroma/v2/styles",
	"github.com/microcosm-cc/bluemonday",
	"github.com/gorilla/css/scanner",
	"github.com/yuin/goldmark/extension",
}

// TestLinksNoInitHeavyPackages fails when one of initHeavy is linked into
// brood again (go list -deps over its import graph).
func TestLinksNoInitHeavyPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/broodhq/brood/cmd/brood").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps["github.com/broodhq/brood/internal/tui"] {
		t.Fatalf("go list -deps names no internal/tui: not brood's graph?\n%s", out)
	}
	for _, p := range initHeavy {
		if deps[p] {
			t.Errorf("brood links %s", p)
		}
	}
}
