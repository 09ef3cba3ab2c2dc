package tasks_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestShippedRecordsAreNotYours (red team P1-6): records another user's
// brood made (a repository that commits its .brood/: sealed under its
// author's key, not this user's) are not listed as the user's and are
// never resumed; the user's own task, made after, is listed and resumes.
func TestShippedRecordsAreNotYours(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	state := filepath.Join(p.Home, "state")
	t.Setenv("XDG_STATE_HOME", state)
	p.Env["XDG_STATE_HOME"] = state
	shipped := p.DispatchOK("stepper", "go")
	if !listed(p, shipped) {
		t.Fatalf("the task is not listed where it was made")
	}
	// The repository's author's key is not this user's.
	if err := os.Remove(filepath.Join(state, "brood", taskdir.RecordKeyName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	mine := p.DispatchOK("stepper", "go")
	if listed(p, shipped) || !listed(p, mine) {
		t.Errorf("listing: shipped %s listed %v, own %s listed %v", shipped, listed(p, shipped), mine, listed(p, mine))
	}
	// Left out, but said: brood tasks shows truly.
	if _, _, errOut := p.Brood("tasks"); !strings.Contains(errOut, "1 task record(s) in") || !strings.Contains(errOut, "carry no seal made with your record key") {
		t.Errorf("brood tasks does not say a task was left out:\n%s", errOut)
	}
	if code, out, errOut := p.Brood("tasks", "resume", shipped, "carry", "on"); code == 0 || !strings.Contains(errOut, "not made by you") {
		t.Errorf("resume of a shipped task: code %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := p.Brood("tasks", "resume", mine, "carry", "on"); code != 0 {
		t.Errorf("resume of the user's own task: code %d\n%s\n%s", code, out, errOut)
	}
}

func listed(p *clitest.Project, id string) bool {
	for _, item := range p.ListJSON() {
		if item["id"] == id {
			return true
		}
	}
	return false
}
