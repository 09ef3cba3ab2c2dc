package taskdir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// readOnly makes dir unwritable for this process: a read-only bind mount
// when it runs as root (root passes every mode check), else chmod -R a-w
// on the directories.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		chmodDirs := func(mode os.FileMode) {
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					os.Chmod(p, mode)
				}
				return nil
			})
		}
		chmodDirs(0o555)
		t.Cleanup(func() { chmodDirs(0o755) })
		return
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind %s: %v", dir, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only: %v", dir, err)
	}
}

func TestFallbackForReadOnlyProject(t *testing.T) {
	for _, tc := range []struct {
		name  string
		brood bool // .brood exists (with settings, .gitignore) before it turns read-only
	}{{"no .brood", false}, {"read-only .brood", true}} {
		t.Run(tc.name, func(t *testing.T) {
			root, state := t.TempDir(), t.TempDir()
			t.Setenv("XDG_STATE_HOME", state)
			if tc.brood {
				if err := os.MkdirAll(filepath.Join(root, StateDirName), 0o755); err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{"settings.toml", ".gitignore"} {
					if err := os.WriteFile(filepath.Join(root, StateDirName, f), []byte("# x\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			readOnly(t, root)
			if p := Open(root); p.Elsewhere() || p.Notice() != "" {
				t.Fatalf("before Ensure the records are still in the project: %s", p.StateDir())
			}
			if err := Open(root).EnsureWritable(); err != nil {
				t.Fatalf("EnsureWritable: %v", err)
			}
			p := Open(root)
			fb, _ := Fallback(root)
			if !p.Elsewhere() || p.StateDir() != fb || !strings.HasPrefix(fb, filepath.Join(state, "brood", "projects", filepath.Base(root)+"-")) {
				t.Fatalf("state dir %s, fallback %s", p.StateDir(), fb)
			}
			if n := p.Notice(); !strings.Contains(n, fb) || strings.Contains(n, "\n") {
				t.Errorf("notice %q", n)
			}
			if p.Settings() != filepath.Join(root, StateDirName, "settings.toml") {
				t.Errorf("settings are read from %s, not the project", p.Settings())
			}
			id := NewID()
			d := Open(root).MustTask(id)
			if err := d.Create(); err != nil {
				t.Fatalf("Create: %v", err)
			}
			if err := d.WriteFile(Result, []byte("{}"), false); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if _, err := os.Stat(filepath.Join(fb, "dispatch", id, Result)); err != nil {
				t.Fatal(err)
			}
			back, err := FromPath(d.Path())
			if err != nil || back.Path() != d.Path() {
				t.Fatalf("FromPath(%s) = %v, %v", d.Path(), back, err)
			}
			if ids, err := Open(root).TaskIDs(); err != nil || len(ids) != 1 || ids[0] != id {
				t.Errorf("TaskIDs %v, %v", ids, err)
			}
		})
	}
}

func TestWritableProjectKeepsBrood(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	if err := Open(root).EnsureWritable(); err != nil {
		t.Fatal(err)
	}
	p := Open(root)
	if p.Elsewhere() || p.StateDir() != filepath.Join(root, StateDirName) || p.Notice() != "" {
		t.Fatalf("state dir %s", p.StateDir())
	}
	// Only the known projects' list is there (Remember), no fallback.
	if _, err := os.Lstat(filepath.Join(state, "brood", "projects")); err == nil {
		t.Errorf("a fallback state directory was made in %s", state)
	}
	real, _ := filepath.EvalSymlinks(root)
	if known := readKnown(KnownFile()); !slices.Equal(known, []string{filepath.Join(real, StateDirName)}) {
		t.Errorf("known projects %q, want the project's .brood", known)
	}
	if ents, _ := os.ReadDir(filepath.Join(root, StateDirName)); len(ents) != 1 {
		t.Errorf(".brood holds %v (the probe left behind?)", ents)
	}
}

// TestCreateInReadOnlyProject: `brood subagent` makes a task without a
// run's EnsureWritable first; a read-only project with a .brood/ already
// set up still gets its task, in the state directory.
func TestCreateInReadOnlyProject(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	if err := Open(root).Ensure(); err != nil {
		t.Fatal(err)
	}
	readOnly(t, root)
	d := Open(root).MustTask(NewID())
	if err := d.Create(); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if fb, _ := Fallback(root); !strings.HasPrefix(d.Path(), fb+string(filepath.Separator)) || !d.Exists() {
		t.Errorf("task at %s, not in %s", d.Path(), fb)
	}
}
