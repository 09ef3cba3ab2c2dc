package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/childexe"
	"github.com/broodhq/brood/internal/testbrood"
)

// notLinked are packages the lean child binaries must not link, each with
// why: every linked package's initialiser runs at every subagent's start,
// and its code is in every child's address space (docs/performance.md).
// The schema validator, the plan checker and the OpenTelemetry exporters
// (with gRPC and protobuf) are for processes that delegate or export,
// which run brood (cmdutil.Links); the command tree, the terminal UI and
// the Temporal worker are brood's alone.
var notLinked = []struct{ pkg, why string }{
	{"github.com/broodhq/brood/internal/call/jsonschema", "the output-schema compiler: only a delegating child checks answers (brood)"},
	{"github.com/broodhq/brood/internal/workflow", "plans: the Workflow tool is a delegating child's (brood)"},
	{"github.com/broodhq/brood/internal/workflowtool", "the Workflow tool is a delegating child's (brood)"},
	{"github.com/broodhq/brood/internal/engine", "engines run in the root"},
	{"github.com/broodhq/brood/internal/engine/local", "engines run in the root"},
	{"github.com/broodhq/brood/internal/engine/temporal", "the fleet is brood-fleet's"},
	{"github.com/broodhq/brood/internal/telemetry/otlp", "a child exporting telemetry runs brood"},
	{"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp", "a child exporting telemetry runs brood"},
	{"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc", "a child exporting telemetry runs brood"},
	{"go.opentelemetry.io/otel/sdk/trace", "a child exporting telemetry runs brood"},
	{"google.golang.org/grpc", "the OTLP exporters' and the fleet's"},
	{"google.golang.org/protobuf/encoding/protojson", "the OTLP exporters' and the fleet's"},
	{"github.com/broodhq/brood/internal/cli", "the command tree"},
	{"github.com/broodhq/brood/internal/cli/cmdutil", "the commands' Factory (settings files, the command tree's flags): a child gets everything resolved in its envelope"},
	{"github.com/spf13/cobra", "the command tree; and it links text/template"},
	{"github.com/spf13/pflag", "the command tree's flags: a child's command line is child.Parse"},
	{"golang.org/x/term", "a child's streams are pipes"},
	{"text/template", "its reflect.Value.MethodByName makes the linker keep every exported method of every type (brood-child 38 against 16 MB: the SDK's)"},
	{"html/template", "as text/template"},
	{"github.com/broodhq/brood/internal/model/script", "the scripted model's templates are text/template: its children run brood"},
	{"github.com/broodhq/brood/internal/childexe", "which binary children run: a parent's question (and it links debug/buildinfo)"},
	{"debug/buildinfo", "a parent's check of its lean binaries (debug/elf, debug/dwarf)"},
	{"github.com/broodhq/brood/internal/mcpclient", "an agent's MCP servers: its parent runs brood for a child whose envelope names any"},
	{"github.com/modelcontextprotocol/go-sdk/mcp", "the MCP SDK (1.8 MB), through mcpclient"},
	{"github.com/google/jsonschema-go/jsonschema", "the MCP SDK's schemas: the heaviest initialiser after the provider's SDK"},
	{"encoding/gob", "the MCP SDK's (its initialiser is 0.1 ms)"},
	{"github.com/broodhq/brood/internal/tui", "the interactive mode"},
	{"go.temporal.io/sdk/client", "the fleet is brood-fleet's"},
	{"github.com/charmbracelet/glamour", "the interactive mode"},
	{"github.com/alecthomas/chroma/v2", "the interactive mode"},
}

// TestLinksNoneOfTheHeavyPackages fails when one of notLinked, or the
// other provider's SDK, is linked into a lean child binary again (go list
// -deps over its import graph).
func TestLinksNoneOfTheHeavyPackages(t *testing.T) {
	for _, tc := range []struct {
		pkg, sdk, otherSDK string
	}{
		{"github.com/broodhq/brood/cmd/brood-child", "github.com/anthropics/anthropic-sdk-go/v2", "github.com/openai/openai-go/v3"},
		{"github.com/broodhq/brood/cmd/brood-child-openai", "github.com/openai/openai-go/v3", "github.com/anthropics/anthropic-sdk-go/v2"},
	} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", tc.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", tc.pkg, err)
		}
		deps, graph := map[string]bool{}, map[string][]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			p, imports, _ := strings.Cut(l, ": ")
			deps[p], graph[p] = true, strings.Fields(imports)
		}
		if !deps["github.com/broodhq/brood/internal/childrun"] || !deps[tc.sdk] {
			t.Fatalf("go list -deps %s names no internal/childrun or %s: not a child's graph?\n%s", tc.pkg, tc.sdk, out)
		}
		for _, p := range append(notLinked, struct{ pkg, why string }{tc.otherSDK, "the other provider's SDK"}) {
			if deps[p.pkg] {
				t.Errorf("%s links %s (%s): %s", tc.pkg, p.pkg, p.why, importChain(deps, graph, tc.pkg, p.pkg))
			}
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

// TestBroodsInitialisersAllocateLittle: none of brood's own packages that
// a lean child links builds a table at package init (allocation bytes
// from GODEBUG=inittrace=1: deterministic, unlike its clock time). Build
// such a table at first use (sync.OnceValue) instead: every subagent runs
// every initialiser. internal/tool's tables took 83 KB before.
func TestBroodsInitialisersAllocateLittle(t *testing.T) {
	const limit = 16 << 10
	for _, pkg := range []string{"github.com/broodhq/brood/cmd/brood-child", "github.com/broodhq/brood/cmd/brood-child-openai"} {
		bin := filepath.Join(t.TempDir(), "child")
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
		cmd := exec.Command(bin) // no arguments: its usage line, after every initialiser
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		out, _ := cmd.CombinedOutput()
		inits := testbrood.OwnInits(out)
		for p, b := range inits {
			if b < 0 || b > limit {
				t.Errorf("%s: %s allocates %d bytes at package init (at most %d): build its tables at first use", pkg, p, b, limit)
			}
		}
		if len(inits) == 0 {
			t.Fatalf("%s: no init trace of brood's packages:\n%s", pkg, out)
		}
	}
}

// TestNameIsChildexes: the name this binary says is the one its parent
// looks for beside brood.
func TestNameIsChildexes(t *testing.T) {
	if name != childexe.Name {
		t.Errorf("name %q, childexe.Name %q", name, childexe.Name)
	}
}
