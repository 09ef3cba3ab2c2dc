package tasks_test

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
)

const thinkerScript = `
agents:
  thinker:
    - say: "Reading the README first."
      tools:
        - Read: {file_path: README.md}
    - say: "thinking for an hour"
      delay: 1h
`

// TestTasksRunningTokens: a running task whose first turn has finished
// shows the tokens its transcript records so far, in the table and in
// --json, not 0 until it ends (newuser P3-6).
func TestTasksRunningTokens(t *testing.T) {
	p := clitest.NewDispatchProject(t, false)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "thinker.md"), "---\nname: thinker\ndescription: reads, then thinks\ntools: Read\n---\nYou think.\n")
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "model = \""+p.Script("thinker.yaml", thinkerScript)+"\"\n")
	parent := p.Start(nil, "subagent", "--background", "thinker", "think")
	id := p.RunningTask()
	p.WaitTranscript(id, "the first turn's usage", func(r session.Record) bool { return r.Type == session.RecUsage })
	recs, _, err := session.ReadFile(filepath.Join(dispatch.Dir(p.Root, id), dispatch.SessionFile))
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, r := range recs {
		if r.Type == session.RecUsage && r.Usage != nil {
			want += r.Usage.Total()
		}
	}
	list := p.ListJSON()
	if len(list) != 1 || list[0]["status"] != "running" || clitest.JSONNumber(list[0]["tokens"]) != clitest.JSONNumber(float64(want)) || want == 0 {
		t.Errorf("tasks --json of the running task: %v; want running with its first turn's %d tokens", list, want)
	}
	_, out, _ := p.Brood("tasks")
	if !regexp.MustCompile(`(?m)^` + id[:12] + `\w*\s+thinker\s+running\s+.*\s` + clitest.JSONNumber(float64(want)) + `\s+think`).MatchString(out) {
		t.Errorf("table of the running task; want TOKENS %d:\n%s", want, out)
	}
	if code, _, errOut := p.Brood("tasks", "kill", id); code != 0 {
		t.Fatalf("kill: %s", errOut)
	}
	parent.Wait(t)
}
