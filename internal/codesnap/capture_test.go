package codesnap_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/codesnap"
)

// TestCaptureSeesARacilyCleanEdit: a file edited in the same second as the
// index was written, its size unchanged, matches its index entry by stat;
// git re-reads such a "racily clean" file because its time is not older
// than the index's. Capture's private index must keep the index's time,
// or the snapshot passes the edit as unchanged. (Made deterministic here:
// the file and the index get the same time, and ctime is not trusted.)
func TestCaptureSeesARacilyCleanEdit(t *testing.T) {
	ctx := t.Context()
	h := newHosts(t)
	git(t, h.repo, "config", "core.trustctime", "false")
	when := time.Now().Add(-time.Hour).Truncate(time.Second)
	a := filepath.Join(h.repo, "a.txt")
	write(t, a, "before\n")
	os.Chtimes(a, when, when)
	git(t, h.repo, "add", "a.txt")
	os.Chtimes(filepath.Join(h.repo, ".git", "index"), when, when)
	write(t, a, "edited\n") // same size, same inode
	os.Chtimes(a, when, when)
	// (A status that may write the index would smudge the entry and hide
	// the case: no optional locks.)
	status := exec.Command("git", "status", "--porcelain", "--", "a.txt")
	status.Dir, status.Env = h.repo, append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	if st, err := status.Output(); err != nil || !strings.Contains(string(st), "a.txt") {
		t.Fatalf("git itself does not see the edit (status %q, %v): the set-up is wrong", st, err)
	}
	if info, err := os.Stat(filepath.Join(h.repo, ".git", "index")); err != nil || !info.ModTime().Equal(when) {
		t.Fatalf("the index was rewritten (%v): the set-up is wrong", err)
	}
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "racy"})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Cleanup()
	if got := read(t, filepath.Join(co.Root, "a.txt")); got != "edited\n" {
		t.Fatalf("a.txt in the copy: %q; want the edit", got)
	}
}

// TestCaptureLeavesBroodsRecordsOut: a submitter's .brood holds its
// earlier runs' results and kept patches; with no .brood/.gitignore (a
// checkout used only with the fleet, before brood made one) or an older
// one without fleet/, a capture shipped them to every call as untracked
// files, at any depth. The project's agents and settings under .brood ship.
func TestCaptureLeavesBroodsRecordsOut(t *testing.T) {
	for _, tt := range []struct{ name, ignore string }{
		{"no gitignore", ""},
		{"an older gitignore", "# brood's run records (written by brood)\ndispatch/\nworkflows/\n"},
	} {
		ignore := tt.ignore
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			h := newHosts(t)
			records := []string{".brood/workflows/R1/result.json", ".brood/fleet/patches/R1/T1.patch",
				".brood/dispatch/T1/envelope.json", "sub/.brood/sessions/S.jsonl", ".brood/brood-debug.log", ".brood/outputs/x"}
			for _, r := range records {
				write(t, filepath.Join(h.repo, r), "record\n")
			}
			write(t, filepath.Join(h.repo, ".brood", "agents", "a.md"), "---\nname: a\n---\n")
			write(t, filepath.Join(h.repo, ".brood", "settings.toml"), "# settings\n")
			if ignore != "" {
				write(t, filepath.Join(h.repo, ".brood", ".gitignore"), ignore)
			}
			snap, err := codesnap.Capture(ctx, h.store, h.repo)
			if err != nil {
				t.Fatal(err)
			}
			co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "records"})
			if err != nil {
				t.Fatal(err)
			}
			defer co.Cleanup()
			got := tree(t, co.Root)
			for _, r := range records {
				if _, ok := got[r]; ok {
					t.Errorf("%s shipped to the worker's copy: brood's record", r)
				}
			}
			for _, keep := range []string{".brood/agents/a.md", ".brood/settings.toml", "a.txt"} {
				if _, ok := got[keep]; !ok {
					t.Errorf("%s missing from the copy: the project's own file", keep)
				}
			}
		})
	}
}
