package tasks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/taskdir"
)

const readOnlyScript = `
agents:
  root:
    - tools:
        - Task: {subagent_type: scout, description: "scout the readme", prompt: "read it"}
    - say: "root done"
  scout:
    - say: "scouted"
`

// readOnly makes dir unwritable to this process and its children: a
// read-only bind mount when it runs as root (root passes every mode
// check), else chmod -R a-w.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil {
				os.Chmod(p, 0o555)
			}
			return nil
		})
		t.Cleanup(func() {
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					os.Chmod(p, 0o755)
				}
				return nil
			})
		})
		return
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		t.Fatalf("bind %s: %v", dir, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only: %v", dir, err)
	}
}

// TestReadOnlyProjectKeepsRecordsInStateDir: a project brood cannot write
// (#28) still runs: `brood run` says once where the records went, the
// subagent's task is there and `brood tasks` lists it; the project is
// untouched.
func TestReadOnlyProjectKeepsRecordsInStateDir(t *testing.T) {
	p := clitest.NewProject(t)
	state := t.TempDir()
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("HOME", p.Home)
	t.Setenv("XDG_STATE_HOME", state)
	p.Env["XDG_STATE_HOME"] = state
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "scout.md"), "---\nname: scout\ndescription: reads\ntools: Read\n---\nYou read.\n")
	spec := p.Script("ro.yaml", readOnlyScript)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "model = \""+spec+"\"\n")
	readOnly(t, p.Root)

	code, out, errOut := p.Brood("run", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	fb, err := taskdir.Fallback(p.Root)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fb, filepath.Join(state, "brood", "projects")+string(filepath.Separator)) {
		t.Fatalf("fallback %s is not under %s", fb, state)
	}
	var notices []string
	for _, l := range strings.Split(errOut, "\n") {
		if strings.Contains(l, fb) && strings.Contains(l, "cannot be written") {
			notices = append(notices, l)
		}
	}
	if len(notices) != 1 {
		t.Errorf("want one line naming %s on stderr, have:\n%s", fb, errOut)
	}
	ents, err := os.ReadDir(filepath.Join(fb, "dispatch"))
	if err != nil || len(ents) != 1 {
		t.Fatalf("tasks in %s: %v %v", fb, ents, err)
	}
	id := ents[0].Name()
	if _, err := os.Stat(filepath.Join(fb, "records", id+".json")); err != nil {
		t.Errorf("owner record: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.Root, ".brood", "dispatch")); !os.IsNotExist(err) {
		t.Errorf("the project has a .brood/dispatch: %v", err)
	}
	code, out, errOut = p.Brood("tasks", "--json") // whole ids (the table shows the shortest unique prefix)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "scout") {
		t.Errorf("tasks: %d\n%s\n%s", code, out, errOut)
	}
}

// TestReadOnlyProjectNestedDelegation: in a read-only project a delegating
// child (root → lead → two scouts, under the kernel sandbox) makes its own
// children's task directories in the state directory too (nested in its
// own), and the tree
// lists them all; the records directory stays the parent's.
func TestReadOnlyProjectNestedDelegation(t *testing.T) {
	p := clitest.NewProject(t)
	state := t.TempDir()
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("HOME", p.Home)
	t.Setenv("XDG_STATE_HOME", state)
	p.Env["XDG_STATE_HOME"] = state
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "lead.md"), "---\nname: lead\ndescription: leads\ndelegate: [scout]\n---\nYou lead.\n")
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "scout.md"), "---\nname: scout\ndescription: reads\ntools: Read\n---\nYou read.\n")
	spec := p.Script("tree.yaml", treeScript)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "model = \""+spec+"\"\nmaxSubagentDepth = 2\n")
	readOnly(t, p.Root)
	if code, out, errOut := p.Brood("run", "fan out"); code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	fb, _ := taskdir.Fallback(p.Root)
	// The lead's two scouts are nested in its own task directory.
	ents, err := os.ReadDir(filepath.Join(fb, "dispatch"))
	if err != nil || len(ents) != 2 {
		t.Fatalf("want 2 top-level tasks in %s, have %v %v", fb, ents, err)
	}
	dirs, err := taskdir.Open(p.Root).Tasks()
	nested := 0
	for _, d := range dirs {
		if d.Nested() {
			nested++
		}
	}
	if err != nil || len(dirs) != 4 || nested != 2 {
		t.Fatalf("want 4 tasks, 2 nested, in %s; have %d (%d nested) %v", fb, len(dirs), nested, err)
	}
	trees := treeJSON(t, p)
	if len(trees) != 1 || len(trees[0].Children) != 2 {
		t.Fatalf("tree: %+v", trees)
	}
}
