package spawn_test

import (
	"context"
	"testing"

	"github.com/broodhq/brood/internal/call"
)

// A finished in-place writer picked up again (Spec.Continue: a workflow
// resume, a fleet retry) returns its recorded result: it must name the
// files the first run changed, as the live result did.
func TestPickedUpWriterNamesItsFiles(t *testing.T) {
	script := `
agents:
  general-purpose:
    - tools: [{Bash: {command: "echo made > made.txt"}}]
    - say: "## What I did\nMade it.\n\n## What I found\nThings.\n\n## Files changed\nmade.txt\n\n## Problems\nnone"
`
	p := newProject(t, script, nil)
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "go", Description: "w"})
	must(t, err)
	t.Logf("live: status %s files %q", out.Status, out.FilesChanged)
	again, err := d.Call(context.Background(), call.Spec{Resume: out.TaskID, Continue: true})
	must(t, err)
	t.Logf("picked up: status %s files %q record files %q", again.Status, again.FilesChanged, again.Record.FilesChanged)
	if len(again.FilesChanged) != 1 || again.FilesChanged[0] != "made.txt" {
		t.Errorf("the recorded result of a finished in-place writer names %q, want [made.txt] (live said %q)", again.FilesChanged, out.FilesChanged)
	}
}
