package attack_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditDenyHoldsWhenAnAncestorIsRenamed: an in-place writer whose
// commands the per-command check cannot read (a script piped to sh, under
// bypassPermissions) cannot write what an Edit deny names by moving a
// directory above it aside and making it anew (review40 P1-A): every
// directory above a held path is a mount point of its own.
func TestEditDenyHoldsWhenAnAncestorIsRenamed(t *testing.T) {
	needLandlock(t)
	for _, tc := range []struct{ name, deny, cmd, path string }{
		{"rename parent (literal)", "Edit(conf/ok.txt)", "echo bXYgY29uZiBjb25mMiAyPiYxOyBta2RpciAtcCBjb25mOyBlY2hvIFBXTkVEID4gY29uZi9vay50eHQgMj4mMTsgbHMgLWxhIGNvbmYgY29uZjI= | base64 -d | sh", "conf/ok.txt"},
		{"rename grandparent (dir pattern)", "Edit(a/conf/**)", "echo bXYgYSBhMiAyPiYxOyBta2RpciAtcCBhL2NvbmY7IGVjaG8gUFdORUQgPiBhL2NvbmYvb2sudHh0IDI+JjE7IGxzIC1sYVIgYSBhMg== | base64 -d | sh", "a/conf/ok.txt"},
		{"direct", "Edit(conf/ok.txt)", "echo ZWNobyBQV05FRCA+IGNvbmYvb2sudHh0IDI+JjE= | base64 -d | sh", "conf/ok.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "r\n", "conf/ok.txt": "ORIG\n", "a/conf/ok.txt": "ORIG\n"})
			cmd := tc.cmd + "; echo probed"
			mdl := p.script("ed.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: probe, prompt: "probe"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+quoteYAML(cmd)+`}
    - say: "PROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "--deny", tc.deny, "go")
			res := taskResult(p)
			t.Logf("code %d\nout: %s\nres: %s", code, out, res)
			if !strings.Contains(res, "probed") {
				t.Fatalf("not run: %s", errs)
			}
			b, _ := os.ReadFile(filepath.Join(p.root, tc.path))
			if strings.Contains(string(b), "PWNED") {
				t.Errorf("BYPASS: %s denied by %s now %q", tc.path, tc.deny, b)
			}
		})
	}
}

// TestReadDenyHoldsWhenAnAncestorIsRenamed: an in-place writer cannot
// move a Read-denied file to a path no rule matches by renaming a directory
// above it, for the next child to read (review40 P1-B).
func TestReadDenyHoldsWhenAnAncestorIsRenamed(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "r\n", ".gitignore": "secrets/\n"})
	writeFile(t, filepath.Join(p.root, "cfg", "secrets", "k"), "SECRET-MOVED\n")
	mv := "echo " + "bXYgY2ZnIGNmZzIgMj4mMTsgbHMgLWxhUiBjZmcy" + " | base64 -d | sh"
	mdl := p.script("rn.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: mover, prompt: "move"}
    - tools:
        - Task: {subagent_type: explore, description: reader, prompt: "read"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+quoteYAML(mv+"; echo probed")+`}
    - say: "MOVED {{result 0}}"
  explore:
    - tools:
        - Bash: {command: "cat cfg2/secrets/k cfg/secrets/k 2>&1; echo probed"}
    - say: "READ {{result 0}}"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "--deny", "Read(cfg/secrets/**)", "go")
	t.Logf("code %d out %s", code, out)
	var all string
	for _, r := range p.rootTranscript() {
		all += r.Output + "\n"
	}
	t.Logf("transcript outputs:\n%s\nerrs: %s", all, errs)
	if strings.Contains(all, "SECRET-MOVED") {
		t.Errorf("BYPASS: the Read-denied secret reached the root transcript")
	}
}

// TestReadDenyWalkStaysInTheWorkspace: a repository's link out of the
// tree (a -> /usr) is not followed by the walk that expands a pattern
// rule, so it cannot push the walk past its bound and switch the
// kernel's hiding off for every child (review40 P1-C).
func TestReadDenyWalkStaysInTheWorkspace(t *testing.T) {
	needLandlock(t)
	for _, c := range childClasses[:2] {
		t.Run(c.name, func(t *testing.T) {
			p := newReadDenyProject(t)
			if err := os.Symlink("/usr", filepath.Join(p.root, "a")); err != nil {
				t.Fatal(err)
			}
			script := "cat conf/a.pem; python3 -c \"print(open('conf/a.pem').read())\""
			rd := "echo " + base64.StdEncoding.EncodeToString([]byte(script)) + " | base64 -d | sh 2>&1; echo probed"
			mdl := p.script("rd.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: `+quoteYAML(rd)+`}
    - say: "PROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "--deny", "Read(**/*.pem)", "go")
			res := taskResult(p)
			if code != 0 || !strings.Contains(res, "probed") {
				t.Fatalf("run: code %d\n%s\n%s\n%s", code, out, res, errs)
			}
			if strings.Contains(res, "SECRET-PEM") {
				t.Errorf("the %s read conf/a.pem past Read(**/*.pem) with a link to /usr in the tree:\n%s", c.name, res)
			}
		})
	}
}

// TestGitDirEntriesCannotBeRenamed (review40 P3-2): an in-place writer
// cannot move .git/refs or .git/objects aside (to make a refs/replace of
// its own in a fresh .git/refs, say): every directory of the git
// directory above what its view holds is a mount point, and so are
// .git/refs and .git/objects themselves where nothing beneath them is
// held (agents.allow_config_changes makes no .git/refs/replace; a
// repository without .git/objects/info).
func TestGitDirEntriesCannotBeRenamed(t *testing.T) {
	needLandlock(t)
	script := "mv .git/refs .git/refsx 2>&1; mv .git/objects .git/objectsx 2>&1; echo probed"
	cmd := "echo " + base64.StdEncoding.EncodeToString([]byte(script)) + " | base64 -d | sh"
	for _, tc := range []struct {
		name string
		env  []string
	}{{"default", nil}, {"allow_config_changes, no objects/info", []string{"BROOD_ALLOW_CONFIG_CHANGES=1"}}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "r\n"})
			if tc.env != nil {
				if err := os.RemoveAll(filepath.Join(p.root, ".git", "objects", "info")); err != nil {
					t.Fatal(err)
				}
			}
			mdl := p.script("gd.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: probe, prompt: "probe"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+quoteYAML(cmd)+`}
    - say: "PROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), tc.env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			res := taskResult(p)
			if code != 0 || !strings.Contains(res, "probed") {
				t.Fatalf("run: code %d\n%s\n%s\n%s", code, out, res, errs)
			}
			for _, moved := range []string{"refsx", "objectsx"} {
				if _, err := os.Lstat(filepath.Join(p.root, ".git", moved)); err == nil {
					t.Errorf("the writer moved .git/%s aside (.git/%s exists):\n%s", strings.TrimSuffix(moved, "x"), moved, res)
				}
			}
			if !strings.Contains(res, "busy") {
				t.Errorf("the renames did not fail as busy:\n%s", res)
			}
		})
	}
}
