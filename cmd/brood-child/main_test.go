package main

import (
	"os/exec"
	"strings"
	"testing"
)

// notLinked are packages brood-child must not link: each one's package
// initialiser runs at every subagent's start (docs/performance.md). The
// schema validator and the plan checker are for processes that delegate,
// which run brood (delegate.Extras); the command tree, the terminal UI and
// the Temporal worker are brood's alone.
var notLinked = []string{
	"github.com/santhosh-tekuri/jsonschema/v6",
	"github.com/broodhq/brood/internal/call/jsonschema",
	"github.com/broodhq/brood/internal/workflow",
	"github.com/broodhq/brood/internal/workflowtool",
	"github.com/broodhq/brood/internal/engine",
	"github.com/broodhq/brood/internal/engine/local",
	"github.com/broodhq/brood/internal/engine/temporal",
	"github.com/broodhq/brood/internal/cli",
	"github.com/broodhq/brood/internal/tui",
	"go.temporal.io/sdk/client",
	"github.com/charmbracelet/glamour",
	"github.com/alecthomas/chroma/v2",
}

// TestLinksNoneOfTheHeavyPackages fails when one of notLinked is linked
// into brood-child again (go list -deps over its import graph).
func TestLinksNoneOfTheHeavyPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps["github.com/broodhq/brood/internal/delegate"] {
		t.Fatalf("go list -deps names no internal/delegate: not brood-child's graph?\n%s", out)
	}
	for _, p := range notLinked {
		if deps[p] {
			t.Errorf("brood-child links %s", p)
		}
	}
}
