package subagent

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/broodhq/brood/internal/call"
)

// TestFleetJSONSaysWhereTheChangeIs: a fleet call's --json carries patch
// (and the files changed here), as docs/scale-out.md says, beside the
// fields a local call's has; a done call whose change did not land reads
// not-applied and exits 1.
func TestFleetJSONSaysWhereTheChangeIs(t *testing.T) {
	cases := []struct {
		name   string
		patch  string
		files  []string
		status string
		fails  bool
	}{
		{"not landed", call.PatchNotApplied, nil, "not-applied", true},
		{"landed", call.PatchApplied, []string{"one.txt"}, "done", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			r := &call.Result{TaskID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", Status: "done", Summary: "wrote", Patch: tc.patch, FilesChanged: tc.files}
			if err := fleetResult(&b, r, true); (err != nil) != tc.fails {
				t.Fatalf("error %v; want one: %v", err, tc.fails)
			}
			var m map[string]any
			if err := json.Unmarshal(b.Bytes(), &m); err != nil {
				t.Fatalf("%v\n%s", err, b.String())
			}
			if m["patch"] != tc.patch || m["task_id"] != r.TaskID || m["status"] != tc.status {
				t.Errorf("--json %s; want patch %q beside the task's fields", b.String(), tc.patch)
			}
			if files, _ := m["files_changed"].([]any); len(files) != len(tc.files) {
				t.Errorf("files_changed %v; want %v", m["files_changed"], tc.files)
			}
		})
	}
}
