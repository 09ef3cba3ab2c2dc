package attack_test

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goProject is a project whose module needs example.com/m v1.0.0, which
// the user has downloaded and built into their module and build caches in
// caches (GOMODCACHE and GOCACHE: the test's projects share them, so only
// its first compiles the standard library, minutes as a user whose own
// cache is cold under load), from a module proxy in a directory; brood's
// children get GOPROXY=off beyond the user's downloads (no network).
func goProject(t *testing.T, caches string) (p *project, userCaches []string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	userCaches = []string{filepath.Join(caches, "mod"), filepath.Join(caches, "build")}
	p = newProject(t, map[string]string{
		"go.mod":    "module example.com/app\n\ngo 1.21\n\nrequire example.com/m v1.0.0\n",
		"a.go":      "package app\n\nimport \"example.com/m\"\n\nfunc A() int { return m.M() }\n",
		"a_test.go": "package app\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif A() != 1 {\n\t\tt.Fatal(A())\n\t}\n}\n",
	})
	proxy := modProxy(t)
	p.Env = append(p.Env, "GOTOOLCHAIN=local", "GOSUMDB=off", "GOENV=off", "GOFLAGS=-buildvcs=false", "GOMODCACHE="+userCaches[0], "GOCACHE="+userCaches[1])
	user := append(append([]string{}, p.Env...), "GOPROXY=file://"+proxy, "GOFLAGS=-mod=mod -modcacherw -buildvcs=false", "GOTMPDIR="+t.TempDir())
	for _, argv := range [][]string{{"go", "mod", "tidy"}, {"go", "test", "./..."}} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = p.root, user
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the user's %v: %v\n%s", argv, err, out)
		}
	}
	p.git("add", "-A")
	p.git("commit", "-qm", "go.sum")
	p.Env = append(p.Env, "GOPROXY=off")
	return p, userCaches
}

// modProxy makes a module proxy directory serving example.com/m v1.0.0.
func modProxy(t *testing.T) string {
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

// treeSum is a hash of every name, mode and content beneath dirs.
func treeSum(t *testing.T, dirs ...string) string {
	t.Helper()
	h := sha256.New()
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			h.Write([]byte(path + "\x00" + fi.Mode().String() + "\x00"))
			if fi.Mode().IsRegular() {
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				h.Write(data)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// plantGo is task A: it extracts example.com/m into its module cache,
// appends a panicking init to it, and plants a file in its build cache;
// it says where both caches were (a.txt).
const plantGo = `go mod download example.com/m 2>&1; f=$GOMODCACHE/example.com/m@v1.0.0/m.go
chmod u+w $(dirname $f) $f; printf '\nfunc init() { panic("PLANTED") }\n' >> $f && grep -c PLANTED $f
mkdir -p $GOCACHE && echo x > $GOCACHE/planted.txt; echo "$TMPDIR/go/build $TMPDIR/go/mod" > a.txt`

// testGo is task B, an honest writer: go build (how many times it
// compiled example.com/m, which the user's go test compiled: M-COMPILES),
// go test, and a look for A's file. (Whether its caches were overlays over
// the user's is said in b.txt.)
const testGo = `n=$(go build -x ./... 2>&1 | grep -c -- '-p example.com/m '); go test ./... > b.txt 2>&1; echo "M-COMPILES $n" >> b.txt; test -e $GOCACHE/planted.txt && echo SAW-PLANTED-FILE >> b.txt
awk -v c="$GOCACHE" -v m="$GOMODCACHE" '($5 == c || $5 == m) && / - overlay / { print "OVERLAY", $5 }' /proc/self/mountinfo >> b.txt; echo done >> b.txt`

// TestWriterGoCachePlantStaysItsOwn (red team 20, P2-4): a writer task
// plants code in the module cache its go extracted a dependency into, and
// a file in its build cache; a later writer of the same project (in the
// same run, and in a later run) runs go test and neither runs the plant
// nor sees the file; A's caches are gone after it, and the user's module
// and build caches are as they were.
func TestWriterGoCachePlantStaysItsOwn(t *testing.T) {
	needLandlock(t)
	caches := t.TempDir()
	for _, tc := range []struct {
		name string
		runs [][]string // each run's root dispatches these tasks
	}{
		{"one run", [][]string{{"plant", "test"}}},
		{"two runs", [][]string{{"plant"}, {"test"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, user := goProject(t, caches)
			before := treeSum(t, user...)
			for i, tasks := range tc.runs {
				root := ""
				for _, task := range tasks {
					root += "    - tools:\n        - Task: {subagent_type: general-purpose, description: " + task + ", prompt: " + task + "}\n"
				}
				mdl := p.script("gocache.yaml", "agents:\n  root:\n"+root+`    - say: "root done"
  general-purpose:
    - cases:
        - if: "plant"
          tools:
            - Bash: {command: `+quoteYAML(plantGo)+`}
      tools:
        - Bash: {command: `+quoteYAML(testGo)+`, timeout: 600000}
    - say: "child done"
`)
				code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
				if code != 0 || !strings.Contains(out, "root done") {
					t.Fatalf("run %d: code %d\n%s\n%s", i, code, out, errs)
				}
			}
			a, err := os.ReadFile(filepath.Join(p.root, "a.txt"))
			if err != nil {
				t.Fatalf("task A never planted (no a.txt: %v)", err)
			}
			for _, d := range strings.Fields(string(a)) {
				// (Its directory holds the overlays' upper layers.)
				if _, err := os.Stat(filepath.Dir(d)); err == nil {
					t.Errorf("task A's Go cache %s (or its directory) outlived it", d)
				}
			}
			b, err := os.ReadFile(filepath.Join(p.root, "b.txt"))
			if err != nil || !strings.Contains(string(b), "done") {
				t.Fatalf("task B never tested (b.txt: %q, %v)", b, err)
			}
			if s := string(b); strings.Contains(s, "PLANTED") || strings.Contains(s, "SAW-PLANTED-FILE") || !strings.Contains(s, "ok") {
				t.Errorf("task B ran or saw task A's plant, or its go test failed:\n%s", s)
			}
			t.Logf("task B's go test, and its caches' overlays:\n%s", b)
			// Its overlays are at the user's caches' own paths, so go's
			// action IDs (which hash a dependency's directory) match the
			// user's: what the user compiled, it does not compile again.
			if s := string(b); strings.Contains(s, "OVERLAY") && !strings.Contains(s, "M-COMPILES 0\n") {
				t.Errorf("task B compiled example.com/m again, which the user's cache holds compiled:\n%s", s)
			}
			if after := treeSum(t, user...); after != before {
				t.Errorf("the user's Go caches %v changed", user)
			}
		})
	}
}
