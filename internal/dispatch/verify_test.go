package dispatch

import (
	"os"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/taskdir"
)

// TestVerifyDirHash: the hash a verdict keeps is HashRecord's of the file
// the checks read, for a good result, one that does not parse and none.
func TestVerifyDirHash(t *testing.T) {
	tests := []struct {
		name     string
		content  string // "" leaves result.json out
		wantRes  bool
		wantFail bool
	}{
		{name: "accepted", content: `{"task_id":"ID","agent":"explore","status":"done","summary":"s","files_changed":[]}`, wantRes: true},
		{name: "another task's", content: `{"task_id":"other","agent":"explore","status":"done"}`, wantRes: true, wantFail: true},
		{name: "not JSON", content: `{"task_id":`, wantFail: true},
		{name: "missing", wantFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := taskdir.Open(t.TempDir()).MustTask(taskdir.NewID())
			if err := td.Create(); err != nil {
				t.Fatal(err)
			}
			if tt.content != "" {
				content := strings.ReplaceAll(tt.content, `"ID"`, `"`+td.ID()+`"`)
				if err := os.WriteFile(td.File(taskdir.Result), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := Expect{TaskID: td.ID(), Agent: "explore"}
			res, fails, hash, readErr := VerifyDirHash(td, want)
			if hash != HashRecord(td, taskdir.Result) {
				t.Errorf("hash %q, HashRecord says %q", hash, HashRecord(td, taskdir.Result))
			}
			if (res != nil) != tt.wantRes || (len(fails) > 0) != tt.wantFail {
				t.Errorf("result %v, fails %q; want a result %v, fails %v", res, fails, tt.wantRes, tt.wantFail)
			}
			r2, f2, e2 := VerifyDir(td, want)
			if (r2 == nil) != (res == nil) || len(f2) != len(fails) || (e2 == nil) != (readErr == nil) {
				t.Errorf("VerifyDir = %v %q %v, VerifyDirHash = %v %q %v", r2, f2, e2, res, fails, readErr)
			}
		})
	}
}
