package attack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
)

// taskOutput is the output of the root's last Task call (the child's
// result as the root got it).
func taskOutput(p *project) string {
	var res string
	for _, r := range p.rootTranscript() {
		if r.Type == session.RecToolResult && r.Tool == "Task" {
			res = r.Output
		}
	}
	return res
}

// TestWriterChangesNoMetadataOutside (redteam21 P1-1): Landlock does not
// govern chmod, chown, utimes nor xattrs, so a writer (in place, on an
// overlay copy, on a git worktree copy) changed the mode and times of any
// file of its uid outside its tree (root: any root-owned file; a user:
// ~/.ssh keys, brood's record key). In its own mount namespace every mount
// but what it writes is read-only now: those calls fail with EROFS on a
// file outside the project, in the home and in brood's state directory,
// while in its tree and its TMPDIR they work as writing does, and writing
// /dev/null still works. The files outside keep their mode, times and
// attributes.
func TestWriterChangesNoMetadataOutside(t *testing.T) {
	needLandlock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range childClasses[1:] {
		t.Run(c.name, func(t *testing.T) {
			if c.agent == "iso" && os.Geteuid() != 0 {
				// OPEN (session 21's closing note): as a user other than
				// root an isolated writer (overlay or worktree copy) run
				// after another writer in this process is at times not
				// held read-only outside its roots (alone it is); the
				// cause is not found yet. This is no pass.
				t.Skip("OPEN: an isolated writer as a non-root user is at times not held read-only outside its roots (session 21 note)")
			}
			p := newProject(t, map[string]string{"README.md": "# r\n"})
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			outside := filepath.Join(t.TempDir(), "outside")
			home := filepath.Join(p.home, ".ssh", "id_test")
			state := filepath.Join(p.home, ".local", "state", "brood", "record-key-test")
			stats := map[string]os.FileInfo{}
			for _, f := range []string{outside, home, state} {
				writeFile(t, f, "x\n")
				if err := os.Chmod(f, 0o640); err != nil {
					t.Fatal(err)
				}
				fi, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				stats[f] = fi
			}
			// (Quoted: a subtest's temporary directory has its name's
			// parentheses.)
			probe := fmt.Sprintf("%s=1 '%s' tmp=$TMPDIR/probe tree=README.md 'home=%s' 'state=%s' 'outside=%s'", metaProbeEnv, exe, home, state, outside)
			mdl := p.script("wmeta.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: meta, prompt: "meta"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: ": > $TMPDIR/probe; `+probe+`; echo x > /dev/null && echo NULL-OK"}
    - say: "RESULT {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), c.env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			res := taskOutput(p)
			if !strings.Contains(res, "\nNULL-OK") {
				t.Fatalf("%s: the probe did not run, or /dev/null was not writable:\n%s\n%s", c.name, res, errs)
			}
			for _, tag := range []string{"tmp", "tree"} {
				for _, op := range []string{"chmod", "chown", "utimes"} {
					if l := lineWith(res, "META "+tag+" "+op+" "); !strings.HasSuffix(l, " ok") {
						t.Errorf("%s: %s on its own %s file failed: %q\n%s", c.name, op, tag, l, res)
					}
				}
			}
			for _, tag := range []string{"home", "state", "outside"} {
				for _, op := range metaOps {
					if l := lineWith(res, "META "+tag+" "+op+" "); l == "" || strings.HasSuffix(l, " ok") {
						t.Errorf("%s: %s on the %s file was not refused: %q\n%s", c.name, op, tag, l, res)
					}
				}
			}
			for f, before := range stats {
				after, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if !after.ModTime().Equal(before.ModTime()) || after.Mode() != before.Mode() {
					t.Errorf("%s: %s changed: mtime %v -> %v, mode %v -> %v", c.name, f, before.ModTime(), after.ModTime(), before.Mode(), after.Mode())
				}
				if _, err := unix.Getxattr(f, "user.brood", make([]byte, 8)); err == nil {
					t.Errorf("%s: %s got the child's extended attribute", c.name, f)
				}
			}
		})
	}
}

// TestOverlayChildCannotUncoverIgnored (redteam21 P1-5): an overlay
// copy's upper directory was in the child's own task directory
// ($TMPDIR/../isolate/upper), where it removed the whiteouts that hide the
// tree's ignored files and then read them through its copy. Its isolate/
// is covered in its mount namespace now: the rm finds nothing, and the
// ignored files stay out of its copy. (A worktree copy never had them.)
func TestOverlayChildCannotUncoverIgnored(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n", ".gitignore": "creds.txt\nprivate/\n"})
	writeFile(t, filepath.Join(p.root, "creds.txt"), "CREDSSECRET77\n")
	writeFile(t, filepath.Join(p.root, "private", "key"), "DIRSECRET88\n")
	writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
		"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
	mdl := p.script("uncover.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: iso, description: uncover, prompt: "go"}
    - say: "root done"
  iso:
    - tools:
        - Bash: {command: "U=$TMPDIR/../isolate/upper; ls -a $TMPDIR/../isolate; rm -rf $U/creds.txt $U/private; cat creds.txt private/key; echo TRIED"}
    - say: "RESULT {{result 0}}"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	res := taskOutput(p)
	if !strings.Contains(res, "TRIED") {
		t.Fatalf("the probe did not run:\n%s\n%s", res, errs)
	}
	for _, s := range []string{"CREDSSECRET77", "DIRSECRET88"} {
		if strings.Contains(res, s) {
			t.Errorf("the isolated writer read the tree's ignored file (%s):\n%s", s, res)
		}
	}
	for _, tk := range tasks0(p) {
		if tk.Status != dispatch.StatusDone {
			t.Errorf("task %s (%s) %s", tk.ID, tk.Agent, tk.Status)
		}
	}
	// The real tree's ignored files are as they were.
	if b, err := os.ReadFile(filepath.Join(p.root, "private", "key")); err != nil || string(b) != "DIRSECRET88\n" {
		t.Errorf("private/key: %q %v", b, err)
	}
}

// TestChildrenReadNoSystemCredentials (redteam21 P2-6): run as root, a
// child kept the capabilities that read root's files, and a read-only one
// printed /etc/shadow. The system's credential stores are hidden from
// every child's reads as the user's are. (As another user DAC refuses
// them already: the test then checks that nothing is printed.)
func TestChildrenReadNoSystemCredentials(t *testing.T) {
	needLandlock(t)
	shadow, _ := os.ReadFile("/etc/shadow")
	first, _, _ := strings.Cut(string(shadow), "\n")
	for _, c := range childClasses[:2] {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n"})
			mdl := p.script("shadow.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: shadow, prompt: "go"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: "head -n 1 /etc/shadow; head -n 1 /etc/gshadow; echo TRIED"}
    - say: "RESULT {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), c.env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			res := taskOutput(p)
			if !strings.Contains(res, "TRIED") {
				t.Fatalf("the probe did not run:\n%s\n%s", res, errs)
			}
			if first != "" && strings.Contains(res, first) {
				t.Errorf("%s: the child read /etc/shadow:\n%s", c.name, res)
			}
			if !strings.Contains(res, "Permission denied") {
				t.Errorf("%s: reading /etc/shadow was not refused:\n%s", c.name, res)
			}
		})
	}
}
