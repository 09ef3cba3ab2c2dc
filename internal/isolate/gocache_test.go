package isolate

import (
	"archive/zip"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
)

// fileProxy makes a module proxy directory serving example.com/m v1.0.0.
func fileProxy(t *testing.T) string {
	t.Helper()
	proxy := t.TempDir()
	v := filepath.Join(proxy, "example.com", "m", "@v")
	writeFile(t, filepath.Join(v, "list"), "v1.0.0\n")
	writeFile(t, filepath.Join(v, "v1.0.0.info"), `{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}`)
	writeFile(t, filepath.Join(v, "v1.0.0.mod"), "module example.com/m\n\ngo 1.21\n")
	f, err := os.Create(filepath.Join(v, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for name, body := range map[string]string{"go.mod": "module example.com/m\n\ngo 1.21\n", "m.go": "package m\n\nfunc M() int { return 1 }\n"} {
		w, err := z.Create("example.com/m@v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return proxy
}

// goRun runs argv in dir with env, confined by p when p is not nil, and
// returns whether it succeeded and what it printed.
func goRun(t *testing.T, p *sandbox.Policy, dir string, env []string, argv ...string) (bool, string) {
	t.Helper()
	type res struct {
		out string
		err error
	}
	done := make(chan res, 1)
	run := func() {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		done <- res{string(out), err}
	}
	if p == nil {
		run()
	} else {
		sandbox.OnThrowawayThread(func() {
			runtime.LockOSThread()
			if _, _, _, err := sandbox.RestrictForChild(*p); err != nil {
				done <- res{err: err}
				return
			}
			run()
		})
	}
	r := <-done
	return r.err == nil, r.out
}

// removable makes the directories beneath dirs their owner's to empty
// when the test ends, before t.TempDir removes them: go makes its module
// caches' read-only, and a user other than root could not remove them.
func removable(t *testing.T, dirs ...string) {
	t.Cleanup(func() {
		for _, d := range dirs {
			filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
				if err == nil && e.IsDir() {
					os.Chmod(path, 0o700)
				}
				return nil
			})
		}
	})
}

// TestWriterCannotPoisonGoCaches (review C13): a writer child, in a real
// confined process, loads a module the user downloaded (from the user's
// downloads, its own module and build caches) but cannot rewrite the
// user's extracted copy of it nor plant a file in the user's build cache;
// the user's own go then reads the module as it was.
func TestWriterCannotPoisonGoCaches(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock on this kernel: nothing confines a writer (brood doctor says so)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	home, proj := t.TempDir(), t.TempDir()
	removable(t, home, proj)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	userMod, userBuild := filepath.Join(home, "go", "pkg", "mod"), filepath.Join(home, ".cache", "go-build")
	t.Setenv("GOMODCACHE", userMod)
	t.Setenv("GOCACHE", userBuild)
	t.Setenv("GOPATH", filepath.Join(home, "go"))
	t.Setenv("GOPROXY", "file://"+fileProxy(t))
	for _, kv := range [][2]string{{"GOSUMDB", "off"}, {"GOFLAGS", "-mod=mod -buildvcs=false"}, {"GOTOOLCHAIN", "local"}, {"GOENV", "off"}, {"GOPRIVATE", ""}, {"GONOPROXY", ""}} {
		t.Setenv(kv[0], kv[1])
	}
	writeFile(t, filepath.Join(proj, "go.mod"), "module example.com/app\n\ngo 1.21\n\nrequire example.com/m v1.0.0\n")
	writeFile(t, filepath.Join(proj, "main.go"), "package main\n\nimport \"example.com/m\"\n\nfunc main() { println(m.M()) }\n")
	writeFile(t, filepath.Join(proj, ".git", "HEAD"), "ref: refs/heads/main\n")
	if ok, out := goRun(t, nil, proj, os.Environ(), "go", "mod", "download", "example.com/m"); !ok {
		t.Fatalf("the user's go mod download: %s", out)
	}
	modFile := filepath.Join(userMod, "example.com", "m@v1.0.0", "m.go")
	if _, err := os.Stat(modFile); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(userBuild, 0o755); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dispatch.Root(proj), "01JAAAAA000000000000000000")
	if err := os.MkdirAll(own, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  dispatch.Envelope
	}{
		{"in-place writer", dispatch.Envelope{Workspace: proj, ProjectRoot: proj}},
		{"isolated writer", dispatch.Envelope{Isolation: "worktree", IsolationRoot: proj, Workspace: proj, ProjectRoot: proj}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := NewPolicyBase(nil)
			goEnv := writerGoEnv(&tc.env, own, os.Getenv)
			if len(goEnv) == 0 {
				t.Fatal("the writer got no Go caches of its own")
			}
			p, _ := ChildPolicy(&tc.env, own, base)
			env := append(os.Environ(), goEnv...)
			if ok, out := goRun(t, &p, proj, env, "go", "list", "-deps", "."); !ok || !strings.Contains(out, "example.com/m") {
				t.Errorf("the writer's go list of its project failed: %s", out)
			}
			if ok, _ := goRun(t, &p, proj, env, "sh", "-c", `chmod u+w "$0" "$(dirname "$0")"; echo 'func init() { panic("planted") }' >> "$0"`, modFile); ok {
				t.Errorf("the writer rewrote the user's %s", modFile)
			}
			if ok, _ := goRun(t, &p, proj, env, "sh", "-c", `echo planted > "$0/ab-planted-a"`, userBuild); ok {
				t.Errorf("the writer planted a file in the user's build cache %s", userBuild)
			}
		})
	}
	data, err := os.ReadFile(modFile)
	if err != nil || strings.Contains(string(data), "planted") {
		t.Errorf("the user's module source is now %q (%v)", data, err)
	}
}

// TestWriterGoCachesAreTheTasks (red team 20, P2-4): a writer's Go caches
// are in its own TMPDIR, overlays (goLayersVar) over the user's caches, so
// that no other task reads what it writes there; a fleet call's stay in
// its task directory, with no layer of the worker's.
func TestWriterGoCachesAreTheTasks(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	userMod, userBuild := filepath.Join(home, "go", "pkg", "mod"), filepath.Join(home, ".cache", "go-build")
	fleet := filepath.Join(home, ".cache", "brood", "fleet", "copy")
	for _, d := range []string{userMod, userBuild, fleet} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home, "GOENV": "off"}
	// A writer's child that starts its own: its caches are in its TMPDIR.
	parent := filepath.Join(t.TempDir(), "tmp", "go")
	nested := map[string]string{"HOME": home, "GOENV": "off", "GOCACHE": filepath.Join(parent, "build"), "GOMODCACHE": filepath.Join(parent, "mod"),
		goUserVar: `{"build":"` + userBuild + `","mod":"` + userMod + `"}`}
	for _, d := range []string{nested["GOCACHE"], nested["GOMODCACHE"]} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	proj := t.TempDir()
	own := filepath.Join(dispatch.Root(proj), "01JAAAAA000000000000000000")
	for _, tc := range []struct {
		name      string
		env       dispatch.Envelope
		dir       string
		wantLayer bool
		env2      map[string]string
	}{
		{"in-place writer", dispatch.Envelope{Workspace: proj, ProjectRoot: proj}, filepath.Join(own, "tmp", "go"), true, env},
		{"a writer's own writer", dispatch.Envelope{Workspace: proj, ProjectRoot: proj}, filepath.Join(own, "tmp", "go"), true, nested},
		{"isolated writer", dispatch.Envelope{Isolation: "worktree", IsolationRoot: proj, Workspace: proj, ProjectRoot: proj}, filepath.Join(own, "tmp", "go"), true, env},
		{"fleet call", dispatch.Envelope{Isolation: "worktree", IsolationRoot: fleet, Workspace: fleet}, filepath.Join(own, "go"), false, env},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for _, kv := range writerGoEnv(&tc.env, own, func(k string) string { return tc.env2[k] }) {
				k, v, _ := strings.Cut(kv, "=")
				got[k] = v
			}
			build, mod := filepath.Join(tc.dir, "build"), filepath.Join(tc.dir, "mod")
			if got["GOCACHE"] != build || got["GOMODCACHE"] != mod {
				t.Errorf("GOCACHE=%s GOMODCACHE=%s, want %s and %s", got["GOCACHE"], got["GOMODCACHE"], build, mod)
			}
			want := ""
			if tc.wantLayer {
				want = `[{"var":"GOCACHE","at":"` + build + `","lower":"` + userBuild + `"},{"var":"GOMODCACHE","at":"` + mod + `","lower":"` + userMod + `"}]`
			}
			if proxy := "file://" + filepath.Join(userMod, "cache", "download") + ","; !strings.HasPrefix(got["GOPROXY"], proxy) {
				t.Errorf("GOPROXY=%s, want the user's downloads first (%s)", got["GOPROXY"], proxy)
			}
			if got[goLayersVar] != want {
				t.Errorf("%s=%s, want %s", goLayersVar, got[goLayersVar], want)
			}
		})
	}
}

// TestTaskGoCachesAreMadeAtStart: a writer's child makes the Go caches
// its parent pointed it at in its TMPDIR before any command runs, so a
// command that writes $GOCACHE before go does finds it where no overlay
// was mounted there (the user has no cache of that kind: on the branch
// that moved them into the TMPDIR, TestInPlaceWriterConfined's in-place
// writer could not write $GOCACHE/probe); none is made where its go was
// pointed elsewhere, nor for a read-only child.
func TestTaskGoCachesAreMadeAtStart(t *testing.T) {
	proj := t.TempDir()
	for _, tc := range []struct {
		name     string
		env      dispatch.Envelope
		pointed  bool // its GOCACHE and GOMODCACHE are its task's
		wantMade bool
	}{
		{"in-place writer", dispatch.Envelope{Workspace: proj, ProjectRoot: proj}, true, true},
		{"isolated writer", dispatch.Envelope{Isolation: "worktree", IsolationRoot: proj, Workspace: proj, ProjectRoot: proj}, true, true},
		{"writer pointed elsewhere", dispatch.Envelope{Workspace: proj, ProjectRoot: proj}, false, false},
		{"read-only child", dispatch.Envelope{Workspace: proj, ProjectRoot: proj, ReadOnly: true}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			build, mod := writerGoDirs(&tc.env, dir)
			env := map[string]string{"GOCACHE": filepath.Join(proj, "elsewhere", "build"), "GOMODCACHE": filepath.Join(proj, "elsewhere", "mod")}
			if tc.pointed {
				env = map[string]string{"GOCACHE": build, "GOMODCACHE": mod}
			}
			makeTaskGoCaches(&tc.env, dir, func(k string) string { return env[k] })
			for _, d := range []string{build, mod, env["GOCACHE"], env["GOMODCACHE"]} {
				fi, err := os.Stat(d)
				made := err == nil && fi.IsDir()
				want := tc.wantMade && (d == build || d == mod)
				if made != want {
					t.Errorf("%s made: %v, want %v", d, made, want)
				}
			}
		})
	}
}

// TestMountedGoCachesAreThisProcesss (review of gocache3 P2-2): a writer's
// child adds a write rule for the user's Go cache only where it mounted
// its own overlay there itself (goMountedVar, with its pid): an entry
// inherited from another process, or none, grants nothing, so a failed
// mount never leaves the user's cache writable.
func TestMountedGoCachesAreThisProcesss(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        []string
	}{
		{"none", "", nil},
		{"this process's", fmt.Sprintf(`{"pid":%d,"paths":["/u/go/pkg/mod","rel"]}`, os.Getpid()), []string{"/u/go/pkg/mod"}},
		{"another process's", fmt.Sprintf(`{"pid":%d,"paths":["/u/go/pkg/mod"]}`, os.Getpid()+1), nil},
		{"unreadable", `{"pid":`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(goMountedVar, tc.value)
			if got := mountedGoCaches(); !slices.Equal(got, tc.want) {
				t.Errorf("mountedGoCaches() = %q, want %q", got, tc.want)
			}
		})
	}
}
