package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/testbrood"
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
	// The Temporal fleet and the S3 store are brood-fleet's (cmd/brood-
	// fleet): brood hands it the commands that need them.
	"go.temporal.io/sdk/client",
	"go.temporal.io/api/workflowservice/v1",
	"github.com/nexus-rpc/sdk-go/nexus",
	"github.com/aws/aws-sdk-go-v2/aws",
	"github.com/aws/aws-sdk-go-v2/service/s3",
	"gocloud.dev/blob/s3blob",
	"github.com/broodhq/brood/internal/engine/temporal",
	"github.com/broodhq/brood/internal/root/fleetlink",
}

// TestLinksNoInitHeavyPackages fails when one of initHeavy is linked into
// brood again (go list -deps over its import graph), among them
// go.temporal.io and aws-sdk-go-v2.
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

// TestNoCollectionBeforeMain: brood's initialisers run with the collector
// held off (internal/cli/startgc, initialised before the heavy packages),
// so no collection runs before main; a child's command line is enough to
// reach main and stop.
func TestNoCollectionBeforeMain(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "brood")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/broodhq/brood/cmd/brood").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--envelope", filepath.Join(t.TempDir(), "missing.json"), "--task-id", "x")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1,gctrace=1", "GOGC=")
	out, _ := cmd.CombinedOutput() // exits 1: no envelope
	lines := strings.Split(string(out), "\n")
	lastInit, held := -1, false
	for i, l := range lines {
		if strings.HasPrefix(l, "init ") {
			lastInit = i
		}
		held = held || strings.HasPrefix(l, "init github.com/broodhq/brood/internal/cli/startgc ")
	}
	if lastInit < 0 || !held || !strings.Contains(string(out), "missing.json") {
		t.Fatalf("no init trace, no startgc init, or main not reached:\n%s", out)
	}
	for _, l := range lines[:lastInit] {
		if strings.HasPrefix(l, "gc ") {
			t.Errorf("a collection ran during package init: %s", l)
		}
	}
}

// TestBroodsOwnInitialisersAllocateLittle: none of brood's own packages
// linked into brood builds a table or compiles a regexp at package init
// (allocation bytes from GODEBUG=inittrace=1: deterministic, unlike its
// clock time). A subagent started as brood (a single-binary install, go
// run, the demo) runs every one of them at every spawn: compile a pattern
// or build a table at first use (sync.OnceValue). The terminal UI's
// patterns took 127 KB, cmdutil's, tasks' and workflow's 6-9 KB each.
func TestBroodsOwnInitialisersAllocateLittle(t *testing.T) {
	const limit = 4 << 10
	bin := filepath.Join(t.TempDir(), "brood")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/broodhq/brood/cmd/brood").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "version") // after every initialiser
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("brood version: %v\n%s", err, out)
	}
	inits := testbrood.OwnInits(out)
	for pkg, b := range inits {
		if b < 0 || b > limit {
			t.Errorf("%s allocates %d bytes at package init (at most %d): compile its patterns and build its tables at first use", pkg, b, limit)
		}
	}
	if len(inits) < 10 {
		t.Fatalf("%d init traces of brood's packages (at least 10 expected):\n%s", len(inits), out)
	}
}
