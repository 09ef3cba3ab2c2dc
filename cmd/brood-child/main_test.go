package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// notLinked are packages the lean child binaries must not link: each one's
// package initialiser runs at every subagent's start (docs/performance.md).
// The schema validator, the plan checker and the OpenTelemetry exporters
// (with gRPC and protobuf) are for processes that delegate or export,
// which run brood (cmdutil.Links); the command tree, the terminal UI and
// the Temporal worker are brood's alone.
var notLinked = []string{
	"github.com/broodhq/brood/internal/call/jsonschema",
	"github.com/broodhq/brood/internal/workflow",
	"github.com/broodhq/brood/internal/workflowtool",
	"github.com/broodhq/brood/internal/engine",
	"github.com/broodhq/brood/internal/engine/local",
	"github.com/broodhq/brood/internal/engine/temporal",
	"github.com/broodhq/brood/internal/telemetry/otlp",
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp",
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc",
	"go.opentelemetry.io/otel/sdk/trace",
	"google.golang.org/grpc",
	"google.golang.org/protobuf/encoding/protojson",
	"github.com/broodhq/brood/internal/cli",
	"github.com/broodhq/brood/internal/tui",
	"go.temporal.io/sdk/client",
	"github.com/charmbracelet/glamour",
	"github.com/alecthomas/chroma/v2",
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
		out, err := exec.Command("go", "list", "-deps", tc.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", tc.pkg, err)
		}
		deps := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			deps[p] = true
		}
		if !deps["github.com/broodhq/brood/internal/spawn"] || !deps[tc.sdk] {
			t.Fatalf("go list -deps %s names no internal/spawn or %s: not a child's graph?\n%s", tc.pkg, tc.sdk, out)
		}
		for _, p := range append(notLinked, tc.otherSDK) {
			if deps[p] {
				t.Errorf("%s links %s", tc.pkg, p)
			}
		}
	}
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
		seen := 0
		for _, l := range strings.Split(string(out), "\n") {
			// init PKG @T ms, C ms clock, B bytes, A allocs
			f := strings.Fields(l)
			if len(f) < 9 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/broodhq/brood/") {
				continue
			}
			seen++
			if b, err := strconv.Atoi(f[7]); err != nil || b > limit {
				t.Errorf("%s: %s allocates %s bytes at package init (at most %d): build its tables at first use", pkg, f[1], f[7], limit)
			}
		}
		if seen == 0 {
			t.Fatalf("%s: no init trace of brood's packages:\n%s", pkg, out)
		}
	}
}
