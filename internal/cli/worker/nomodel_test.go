package worker_test

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/testbrood"
)

// TestWorkerWithNoModel (fleetqa P3): a worker with no model fails at once,
// before it dials the fleet, with one line naming what a worker reads (the
// environment, its settings), never a --model flag it does not have.
func TestWorkerWithNoModel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
	}{
		{"no settings", nil},
		{"settings without a model", map[string]string{"README.md": "# r\n", ".brood/settings.toml": "[pool]\nconcurrency = 2\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testbrood.NewProject(t, mainEnv, tc.files)
			// 127.0.0.1:1: nothing listens there; the model is checked first.
			code, out, errOut := p.Brood(t.Context(), []string{"BROOD_MODEL="}, "worker", "--allow-unsigned", "--temporal", "127.0.0.1:1", "--store", "file://"+t.TempDir())
			if code != 1 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one line", code, out, errOut)
			}
			for _, want := range []string{"no model configured for this worker", "BROOD_MODEL", ".brood/settings.toml", "takes no --model"} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr %q lacks %q", errOut, want)
				}
			}
			if strings.Contains(errOut, "pass --model") {
				t.Errorf("stderr %q tells a worker to pass --model, a flag it has not", errOut)
			}
		})
	}
}

// TestWorkerWithNoModelKey (issue 26, a tester's P2-3): a worker whose
// model needs an API key it was not given fails at once, before it dials
// the fleet, naming the variable: it took calls and failed each one fast,
// draining a shared queue, telling submitters to pass a --model the fleet
// refuses.
func TestWorkerWithNoModelKey(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, nil)
	code, out, errOut := p.Brood(t.Context(), []string{"BROOD_MODEL=anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY="}, "worker", "--allow-unsigned", "--temporal", "127.0.0.1:1", "--store", "file://"+t.TempDir())
	if code != 1 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one line", code, out, errOut)
	}
	for _, want := range []string{"anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "start the worker with it set"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
}
