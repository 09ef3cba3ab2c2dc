package workflow_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

const mainEnv = "BROOD_WORKFLOW_CMD_TEST_MAIN"

// TestMain lets the test binary be brood: `brood workflow run` runs as a
// real process, and its agents as real children of it.
func TestMain(m *testing.M) { testbrood.Main(m, mainEnv) }

// project is a repository whose model is a script, with a fast heartbeat.
type project struct {
	*testbrood.Project
}

func newProject(t *testing.T, script string) *project {
	t.Helper()
	p := &project{testbrood.NewProject(t, mainEnv, nil)}
	spec := p.Script("script.yaml", script)
	// The scripted model in the environment, as a user gives one: a
	// script: model in the project's settings waits for trust.
	p.Env = append(p.Env, "BROOD_MODEL="+spec)
	testbrood.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"),
		"[pool]\nping_interval = \"100ms\"\nkill_grace = \"2s\"\n")
	return p
}

// plan writes a plan file and returns its name.
func (p *project) plan(name, body string) string {
	testbrood.WriteFile(p.T, filepath.Join(p.Root, name), body)
	return name
}

// run runs `brood workflow run FILE --yes --json` and decodes the result.
func (p *project) run(args ...string) (*wf.Result, int, string) {
	p.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, out, errs := p.Brood(ctx, nil, append([]string{"workflow", "run", "--yes", "--json"}, args...)...)
	var res wf.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		p.T.Fatalf("brood workflow run %v: exit %d, no JSON result (%v)\nstdout: %s\nstderr: %s", args, code, err, out, errs)
	}
	return &res, code, errs
}

// phase finds a phase of a result.
func phase(t *testing.T, r *wf.Result, id string) wf.PhaseResult {
	t.Helper()
	for _, ph := range r.Phases {
		if ph.ID == id {
			return ph
		}
	}
	t.Fatalf("no phase %s in %+v", id, r.Phases)
	return wf.PhaseResult{}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func fence(s string) string { return "```json\n" + s + "\n```" }

// indent puts a block under a YAML key.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
