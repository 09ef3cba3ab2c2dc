package attack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAddDirHoldsNoOtherProjectsRecords (review22 P1-1): an in-place
// writer's rule on an added directory read and wrote whatever its
// Landlock policy hid beneath it, so `--add-dir ~/work` read another
// known project's root transcripts in ~/work/other/.brood and rewrote its
// records, and `--add-dir ~/work/other` read them. They are covered in
// its mount namespace as those beneath its tree are.
func TestAddDirHoldsNoOtherProjectsRecords(t *testing.T) {
	needLandlock(t)
	for _, tc := range []struct{ name, dir string }{
		{"an added directory holding the project", "work"},
		{"the project added itself", "work/other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n"})
			other := filepath.Join(p.home, "work", "other")
			writeFile(t, filepath.Join(other, "README.md"), "o\n")
			p.broodIn(t, other)
			ob := filepath.Join(other, ".brood")
			writeFile(t, filepath.Join(ob, "sessions", "x.jsonl"), "OTHER-SESSION-SECRET\n")
			writeFile(t, filepath.Join(ob, "records", "r.json"), "REC\n")
			cmd := fmt.Sprintf(`ob=%q; { cat $ob/sessions/x.jsonl; echo FORGED > $ob/records/forged.json && echo FORGE-OK; rm $ob/records/r.json && echo RM-OK; cat %q; } > probe.txt 2>&1; echo tried > tried.txt`, ob, filepath.Join(other, "README.md"))
			p.addDirRun(filepath.Join(p.home, tc.dir), cmd)
			b, _ := os.ReadFile(filepath.Join(p.root, "probe.txt"))
			if s := string(b); strings.Contains(s, "OTHER-SESSION-SECRET") || strings.Contains(s, "FORGE-OK") || strings.Contains(s, "RM-OK") {
				t.Fatalf("the writer reached the other project's records through its added directory:\n%s", b)
			}
			if !strings.Contains(string(b), "o\n") {
				t.Errorf("the added directory's own files were not readable (the cover is too wide):\n%s", b)
			}
			if _, err := os.Stat(filepath.Join(ob, "records", "r.json")); err != nil {
				t.Errorf("the other project's record is gone: %v", err)
			}
		})
	}
}
