package attack_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/session"
)

// TestReadOnlyChildSetsMetadataInTmpdir (issue 25, item 14): a read-only
// child sets times and modes on files in its own TMPDIR (touch, chmod,
// cp -p, tar x work there), and still changes no file's metadata in the
// work tree: its mounts are read-only but its task directory.
func TestReadOnlyChildSetsMetadataInTmpdir(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	readme := filepath.Join(p.root, "README.md")
	before, err := os.Stat(readme)
	if err != nil {
		t.Fatal(err)
	}
	tmpWork := `touch -d 2000-01-01 $TMPDIR/f && chmod 600 $TMPDIR/f && cp -p $TMPDIR/f $TMPDIR/g && tar cf $TMPDIR/t.tar -C $TMPDIR f && mkdir $TMPDIR/x && tar xf $TMPDIR/t.tar -C $TMPDIR/x && stat -c 'G %a %Y' $TMPDIR/g && stat -c 'X %a %Y' $TMPDIR/x/f && echo TMP-OK`
	tree := `touch -d 2000-01-01 README.md 2>&1 || echo TOUCH-REFUSED; chmod 777 README.md 2>&1 || echo CHMOD-REFUSED`
	mdl := p.script("tmpmeta.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: meta, prompt: "meta"}
    - say: "root done"
  explore:
    - tools:
        - Bash: {command: "`+strings.ReplaceAll(tmpWork, `"`, `\"`)+`"}
        - Bash: {command: "`+tree+`"}
    - say: "META {{result 0}} // {{result 1}}"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	var res string
	for _, r := range p.rootTranscript() {
		if r.Type == session.RecToolResult && r.Tool == "Task" {
			res = r.Output
		}
	}
	if !strings.Contains(res, "TMP-OK") {
		t.Fatalf("touch, chmod, cp -p and tar x failed in the read-only child's TMPDIR:\n%s\n%s", res, errs)
	}
	// 2000-01-01 in any time zone: the copy and the extracted file kept
	// the mode and the time set on the original.
	for _, tag := range []string{"G", "X"} {
		var mode string
		var mtime int64
		for _, l := range strings.Split(res, "\n") {
			if f := strings.Fields(strings.TrimPrefix(l, "META ")); len(f) == 3 && f[0] == tag {
				mode = f[1]
				mtime, _ = strconv.ParseInt(f[2], 10, 64)
			}
		}
		lo := time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC).Unix()
		hi := time.Date(2000, 1, 2, 0, 0, 0, 0, time.UTC).Unix()
		if mode != "600" || mtime < lo || mtime > hi {
			t.Errorf("%s: mode %q mtime %d, want 600 and 2000-01-01:\n%s", tag, mode, mtime, res)
		}
	}
	for _, want := range []string{"TOUCH-REFUSED", "CHMOD-REFUSED"} {
		if !strings.Contains(res, want) {
			t.Errorf("the read-only child changed README.md's metadata (no %s):\n%s", want, res)
		}
	}
	after, err := os.Stat(readme)
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime().Equal(before.ModTime()) || after.Mode() != before.Mode() {
		t.Errorf("README.md changed: mtime %v -> %v, mode %v -> %v", before.ModTime(), after.ModTime(), before.Mode(), after.Mode())
	}
}
