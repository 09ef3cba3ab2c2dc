//go:build linux

package isolate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLandingUnderARunningOverlayChild: a landing into a tree that is the
// lower layer of a running overlay child never makes a file it changes
// missing, to the tree or to that child. git apply on the tree unlinked
// each file and made it again; a child that looked a name up meanwhile
// kept a negative entry for it and saw the file missing for the rest of
// its run (the flake of spawn's TestIsolatedWritersInParallel/overlay).
// This process watches the tree while the landing runs and, at the first
// file it finds missing, lets the overlay child look the names up for
// the first time; the child reads each one (the old or the new version,
// never none) during the landing and after it.
func TestLandingUnderARunningOverlayChild(t *testing.T) {
	iso := testIsolator(t)
	if !iso.Support().Overlay {
		t.Skipf("overlay unavailable here (%s)", iso.Support().Why)
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, ".gitignore"), ".brood/\n")
	const n = 500
	var names []string
	for i := range n {
		name := fmt.Sprintf("f%03d.txt", i)
		names = append(names, name)
		write(t, filepath.Join(dir, name), "old\n")
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "init")
	writer := prepare(t, iso, dir, "W", false)
	watcher := prepare(t, iso, dir, "R", false)
	runIsolated(t, writer, `for f in f*.txt; do echo new > "$f"; done`)
	signals := t.TempDir() // outside the tree: not in the watcher's overlay
	goFile, gate := filepath.Join(signals, "go"), filepath.Join(signals, "gate")
	ready := filepath.Join(dir, ".brood", "dispatch", "R", "ready")
	reversed := slices.Clone(names)
	slices.Reverse(reversed)
	// The watcher looks at no file of the tree until told to; then it
	// reads every file in turn (bash builtins: no process per read), last
	// first, until the gate opens, and once more after; it names each file
	// it found missing or with neither version.
	child := startChild(t, watcher, `
check() { for f in `+strings.Join(reversed, " ")+`; do
  if ! read -r line < "$f" 2>/dev/null; then echo "MISSING $f ($1)";
  elif [ "$line" != old ] && [ "$line" != new ]; then echo "TORN $f=$line ($1)"; fi
done; }
: > "$READY"
while [ ! -e "$GO" ]; do :; done
while [ ! -e "$GATE" ]; do check during; done
check after
`, "GO="+goFile, "GATE="+gate, "READY="+ready)
	waitFor(t, "the watching child to start", func() bool { _, err := os.Stat(ready); return err == nil })
	stop := make(chan struct{})
	missing := make(chan string, 1)
	go func() {
		defer close(missing)
		for {
			for _, name := range reversed {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := os.Lstat(filepath.Join(dir, name)); os.IsNotExist(err) {
					_ = os.WriteFile(goFile, nil, 0o644) // the child looks now, in the landing
					missing <- name
					return
				}
			}
		}
	}()
	out, err := writer.Finish(context.Background())
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Applied {
		t.Fatalf("the writer's patch did not land: %+v", out)
	}
	gone := <-missing
	write(t, goFile, "")
	write(t, gate, "")
	if err := child.Wait(); err != nil {
		t.Fatalf("watcher: %v", err)
	}
	stdout := child.Stdout.(fmt.Stringer).String()
	if gone != "" || strings.Contains(stdout, "MISSING") || strings.Contains(stdout, "TORN") {
		t.Fatalf("the landing made files missing (%q in the tree at one point) or torn, to a running overlay child:\n%s", gone, firstLines(stdout, 10))
	}
	for _, name := range names {
		if got := read(t, filepath.Join(dir, name)); got != "new\n" {
			t.Fatalf("%s = %q after the landing, want the writer's", name, got)
		}
	}
}

// waitFor polls cond (bounded) for a state another process reaches.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func firstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	return strings.Join(ls[:min(n, len(ls))], "\n")
}

// TestLandingStagesOutOfEveryChildsReach (review29 P1-1): a writer that
// can write the tree and its git directory (in place, beside an isolated
// sibling whose patch lands) plants a link where the landing stages its
// checkout, to a directory outside the tree: the landing never writes
// there. Its scratch is the parent's own temporary directory, never under
// the tree or its .git, and what it stages is read with no link followed.
func TestLandingStagesOutOfEveryChildsReach(t *testing.T) {
	iso := testIsolator(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, ".gitignore"), ".brood/\n")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "init")
	outside := t.TempDir() // stands for ~/.ssh
	writer := prepare(t, iso, dir, "W", true)
	runIsolated(t, writer, `echo "ssh-ed25519 ATTACKER" > authorized_keys; echo b > a.txt`)
	stop := make(chan struct{})
	planted := make(chan string, 16)
	go func() { // the hostile writer in place: every directory it can write
		defer close(planted)
		for {
			select {
			case <-stop:
				return
			default:
			}
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() && p != dir && strings.Contains(strings.ToLower(d.Name()), "landing") {
					if os.Symlink(outside, filepath.Join(p, "tree")) == nil {
						planted <- p
					}
				}
				return nil
			})
		}
	}()
	out, err := writer.Finish(context.Background())
	close(stop)
	for p := range planted {
		t.Logf("planted %s/tree -> %s", p, outside)
	}
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Fatalf("the landing wrote %d file(s) outside the tree (%s), through a link a child could plant", len(ents), ents[0].Name())
	}
	if !out.Applied || read(t, filepath.Join(dir, "authorized_keys")) != "ssh-ed25519 ATTACKER\n" || read(t, filepath.Join(dir, "a.txt")) != "b\n" {
		t.Fatalf("the patch did not land in the tree: %+v", out)
	}
}

// TestChildChoosesNoFilter: a child's .gitattributes in its copy (or in
// its patch) names a filter the user configured (in their own
// ~/.gitconfig, as git-lfs is): the parent's git that hashes the child's
// files and lands them runs no filter program, the user's included: the
// child would choose which of the user's programs run, unconfined, on
// data it wrote. The child's files land as it wrote them.
func TestChildChoosesNoFilter(t *testing.T) {
	iso := testIsolator(t)
	ran := filepath.Join(t.TempDir(), "ran")
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[filter \"probe\"]\n\tclean = \"echo clean >> "+ran+" && cat\"\n\tsmudge = \"echo smudge >> "+ran+" && cat\"\n\trequired = true\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	for _, m := range modes(t, iso) {
		t.Run(m.name, func(t *testing.T) {
			os.Remove(ran)
			dir := newRepo(t)
			ws := prepare(t, iso, dir, "F", m.force)
			runIsolated(t, ws, `printf '* filter=probe\n' > .gitattributes; echo data > chosen.txt; sed -i 's/^a5$/a5 child/' a.txt`)
			out, err := ws.Finish(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(ran); err == nil {
				t.Fatalf("the parent ran the filter the child's .gitattributes chose:\n%s", b)
			}
			if !out.Applied || read(t, filepath.Join(dir, "chosen.txt")) != "data\n" || !strings.Contains(read(t, filepath.Join(dir, "a.txt")), "a5 child") {
				t.Fatalf("the child's change did not land as it wrote it: %+v", out)
			}
		})
	}
}

// TestLandingRemovesNoFileOfItsScratchName (review29 P3-2): a file of the
// user's beside a changed one, named as the landing's scratch file once
// was (<name>.brood-land-<pid>-<n>), stays as it was after the landing.
func TestLandingRemovesNoFileOfItsScratchName(t *testing.T) {
	iso := testIsolator(t)
	for _, m := range modes(t, iso) {
		t.Run(m.name, func(t *testing.T) {
			dir := newRepo(t)
			ws := prepare(t, iso, dir, "S", m.force)
			runIsolated(t, ws, `sed -i 's/^a5$/a5 child/' a.txt`)
			var mine []string
			for n := range 4 {
				p := filepath.Join(dir, fmt.Sprintf("a.txt.brood-land-%d-%d", os.Getpid(), n))
				write(t, p, "mine\n")
				mine = append(mine, p)
			}
			out, err := ws.Finish(context.Background())
			if err != nil || !out.Applied || !strings.Contains(read(t, filepath.Join(dir, "a.txt")), "a5 child") {
				t.Fatalf("the landing: %v %+v", err, out)
			}
			for _, p := range mine {
				if b, err := os.ReadFile(p); err != nil || string(b) != "mine\n" {
					t.Errorf("%s after the landing: %q %v; it was the user's", filepath.Base(p), b, err)
				}
			}
		})
	}
}

// TestLandingScratchNeverInTheTree: a TMPDIR inside the tree or its git
// directory (TMPDIR=$PWD/tmp), where a writer in place could plant a
// link, is refused for the landing's scratch; the parent's records hold
// it instead (review29 P3-1).
func TestLandingScratchNeverInTheTree(t *testing.T) {
	top := t.TempDir()
	records := filepath.Join(t.TempDir(), "records")
	host := t.TempDir()
	for _, tc := range []struct {
		name, tmp, under string
	}{
		{"the host's temporary directory", host, host},
		{"TMPDIR inside the tree", filepath.Join(top, "tmp"), records},
		{"TMPDIR the tree", top, records},
		{"TMPDIR inside the git directory", filepath.Join(top, ".git", "tmp"), records},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.MkdirAll(tc.tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			d, err := landingScratch(tc.tmp, []string{top, filepath.Join(top, ".git")}, records)
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(d)
			if filepath.Dir(d) != tc.under && filepath.Dir(d) != filepath.Join(tc.under, "landing") {
				t.Fatalf("the landing's scratch is %s, want it under %s", d, tc.under)
			}
			if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
				t.Fatalf("scratch %s: %v %v", d, fi, err)
			}
		})
	}
}
