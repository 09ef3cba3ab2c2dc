package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestBroodHandsAgentRunsToBroodFleetWhenTelemetryIsOn runs the real
// binaries against an OTLP/HTTP collector on loopback: brood links no
// exporter (they link gRPC, which keeps every exported method in the
// binary), so a run with OTEL_EXPORTER_OTLP_ENDPOINT set is handed to
// brood-fleet beside it, which exports its spans and metrics; without
// brood-fleet the run still completes and says in one line that telemetry
// is off and what to install. A run without the variables is brood's own.
func TestBroodHandsAgentRunsToBroodFleetWhenTelemetryIsOn(t *testing.T) {
	paired, alone := t.TempDir(), t.TempDir()
	brood := build(t, paired, "github.com/broodhq/brood/cmd/brood", "aaaa")
	build(t, paired, "github.com/broodhq/brood/cmd/brood-fleet", "aaaa")
	if err := os.Link(brood, filepath.Join(alone, "brood")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, dir string
		otel      bool
		export    bool   // spans and metrics reach the collector
		want      string // in stderr
	}{
		{"paired", paired, true, true, ""},
		{"no brood-fleet", alone, true, false, "telemetry is off: this binary links no OpenTelemetry exporter (brood-fleet does; it needs brood-fleet"},
		{"telemetry off", paired, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			paths = nil
			mu.Unlock()
			home, proj := t.TempDir(), t.TempDir()
			script := filepath.Join(proj, "s.yaml")
			if err := os.WriteFile(script, []byte("agents:\n  \"*\": [{say: done}]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(filepath.Join(tc.dir, "brood"), "run", "--model", "script:"+script, "hi")
			cmd.Dir = proj
			cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
			if tc.otel {
				cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+srv.URL)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil || !strings.Contains(stdout.String(), "done") {
				t.Fatalf("brood run: %v; stdout %q, stderr %q", err, stdout.String(), stderr.String())
			}
			if tc.want != "" && !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr.String())
			}
			if tc.want == "" && strings.Contains(stderr.String(), "brood: telemetry") {
				t.Errorf("stderr speaks of telemetry:\n%s", stderr.String())
			}
			mu.Lock() // the run has exited: its exporters flushed before
			got := slices.Clone(paths)
			mu.Unlock()
			exported := slices.Contains(got, "/v1/traces") && slices.Contains(got, "/v1/metrics")
			if exported != tc.export || (!tc.export && len(got) > 0) {
				t.Errorf("the collector got %v; want spans and metrics: %v", got, tc.export)
			}
		})
	}
}
