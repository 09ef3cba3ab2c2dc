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

// TestCaptureShipsNoTrackedRecord: a record the user's index tracks
// (committed before .brood/.gitignore listed it) shipped as that index
// had it, whatever was on disk, and one deleted on disk came back in the
// worker's copy: add leaves the entries its excludes match alone
// (review37 P3-1). No record ships from the submitter: a tracked one goes
// as the base commit has it (or not at all where the base lacks it), so a
// clean checkout that tracks one stays clean (review38 P3-5); the
// project's own files under .brood ship as they are on disk; the user's
// index is only read. Version 4 indexes take the other way (git
// ls-files by the patterns).
func TestCaptureShipsNoTrackedRecord(t *testing.T) {
	records := []string{".brood/outputs/report.md", "sub/.brood/fleet/patches/T1.patch", ".brood/brood-debug.log"}
	const staged = ".brood/workflows/R2/result.json" // added to the index, never committed
	for _, tt := range []struct {
		name    string
		version string
		change  func(t *testing.T, path string)
		clean   bool // nothing else changed: the snapshot is the base
	}{
		{"edited", "2", func(t *testing.T, p string) { write(t, p, "v2, longer than v1\n") }, false},
		{"edited and staged", "2", func(t *testing.T, p string) {
			write(t, p, "v2, longer than v1\n")
			git(t, filepath.Dir(p), "add", "-f", p)
		}, false},
		{"deleted", "2", func(t *testing.T, p string) { os.Remove(p) }, false},
		{"unchanged, clean", "2", func(t *testing.T, p string) {}, true},
		{"edited, clean", "2", func(t *testing.T, p string) { write(t, p, "v2, longer than v1\n") }, true},
		{"edited, index v4", "4", func(t *testing.T, p string) { write(t, p, "v2, longer than v1\n") }, false},
		{"deleted, index v4", "4", func(t *testing.T, p string) { os.Remove(p) }, false},
		{"unchanged, index v4, clean", "4", func(t *testing.T, p string) {}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			h := newHosts(t)
			for _, r := range records {
				write(t, filepath.Join(h.repo, r), "v1\n")
			}
			write(t, filepath.Join(h.repo, ".brood", "agents", "a.md"), "v1\n")
			git(t, h.repo, "add", "-A")
			git(t, h.repo, "commit", "-q", "-m", "records tracked")
			git(t, h.repo, "push", "-q", "origin", "main")
			git(t, h.repo, "update-index", "--index-version", tt.version)
			os.Remove(filepath.Join(h.repo, "untracked.txt"))
			for _, r := range records {
				tt.change(t, filepath.Join(h.repo, r))
			}
			if !tt.clean {
				write(t, filepath.Join(h.repo, ".brood", "agents", "a.md"), "v2\n")
				write(t, filepath.Join(h.repo, staged), "staged\n")
				git(t, h.repo, "add", "-f", staged)
			}
			snap, err := codesnap.Capture(ctx, h.store, h.repo)
			if err != nil {
				t.Fatal(err)
			}
			if base := git(t, h.repo, "rev-parse", "HEAD^{tree}"); tt.clean && (snap.Pack != nil || snap.Tree != base) {
				t.Errorf("a clean checkout that tracks records captured dirty: tree %s (base %s), pack %v", snap.Tree, base, snap.Pack != nil)
			}
			co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "tracked-records"})
			if err != nil {
				t.Fatal(err)
			}
			defer co.Cleanup()
			got := tree(t, co.Root)
			for _, r := range records {
				if c := got[r]; !strings.HasSuffix(c, ":v1\n") {
					t.Errorf("%s in the worker's copy: %q; want it as committed, v1", r, c)
				}
			}
			if c, ok := got[staged]; ok {
				t.Errorf("%s shipped (%q): a record the base lacks", staged, c)
			}
			if want := map[bool]string{true: ":v1\n", false: ":v2\n"}[tt.clean]; !strings.HasSuffix(got[".brood/agents/a.md"], want) {
				t.Errorf(".brood/agents/a.md in the copy: %q; want it as on disk (%s)", got[".brood/agents/a.md"], want)
			}
			if ls := git(t, h.repo, "ls-files", "--", records[0]); ls != records[0] {
				t.Errorf("the user's index lost the tracked record (ls-files: %q): capture only reads it", ls)
			}
		})
	}
}

// TestCaptureAddKeepsItsHeap: capture's git add runs with glibc's trim
// threshold raised (bulk checkin gave zlib's state back to the kernel
// and faulted it in again for every blob: issue 26's new dirty state,
// 44,000 brk calls), a threshold the user set standing, other tunables
// kept. Seen by a git on PATH that notes add's environment.
func TestCaptureAddKeepsItsHeap(t *testing.T) {
	const ours = "glibc.malloc.trim_threshold=268435456"
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	for _, tt := range []struct {
		name, tunables, mallocTrim, want string
	}{
		{"none set", "", "", ours},
		{"other tunables", "glibc.malloc.arena_max=2", "", "glibc.malloc.arena_max=2:" + ours},
		{"the user's threshold", "glibc.malloc.trim_threshold=4096", "", "glibc.malloc.trim_threshold=4096"},
		{"the user's old variable", "", "4096", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHosts(t)
			bin := t.TempDir()
			log := filepath.Join(bin, "add.env")
			script := "#!/bin/sh\nfor a; do [ \"$a\" = add ] && printf '[%s]\\n' \"$GLIBC_TUNABLES\" >> " + log + "; done\nexec " + realGit + " \"$@\"\n"
			if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			t.Setenv("GLIBC_TUNABLES", tt.tunables)
			t.Setenv("MALLOC_TRIM_THRESHOLD_", tt.mallocTrim)
			if _, err := codesnap.Capture(t.Context(), h.store, h.repo); err != nil {
				t.Fatal(err)
			}
			if got := read(t, log); got != "["+tt.want+"]\n" {
				t.Errorf("git add's GLIBC_TUNABLES: %q; want [%s] once", got, tt.want)
			}
		})
	}
}

// TestCaptureRecordNamedLikePathspecMagic: tracked records whose names
// are pathspec magic or globs (":!x/.brood/outputs/y" would exclude,
// "*/.brood/outputs/z" would match other paths) put back as committed
// touch only themselves: every file edited and staged, the records ship
// as committed, the project's files as edited (review38; the reviewer's
// TestRV38MagicRecordNames, with edits so that a pathspec read as magic
// would show).
func TestCaptureRecordNamedLikePathspecMagic(t *testing.T) {
	ctx := t.Context()
	h := newHosts(t)
	records := []string{"s[/.brood/outputs/]c", ":!x/.brood/outputs/y", "*/.brood/outputs/z"}
	project := []string{"src/a.go", "keep.txt"}
	for _, p := range append(append([]string(nil), records...), project...) {
		write(t, filepath.Join(h.repo, p), "v1\n")
	}
	git(t, h.repo, "add", "-A")
	git(t, h.repo, "commit", "-q", "-m", "records with magic names")
	for _, p := range append(append([]string(nil), records...), project...) {
		write(t, filepath.Join(h.repo, p), "v2, edited\n")
	}
	git(t, h.repo, "add", "-A")
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		paths []string
		want  string
	}{{records, "v1\n"}, {project, "v2, edited\n"}} {
		for _, p := range tt.paths {
			if got := git(t, h.repo, "cat-file", "-p", snap.Tree+":"+p); got+"\n" != tt.want {
				t.Errorf("%s in the snapshot: %q; want %q", p, got, tt.want)
			}
		}
	}
}
