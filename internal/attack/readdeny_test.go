package attack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/session"
)

// readDenyFiles are the project's committed files; readDenySecrets the
// secrets the Read deny cases hide, made after the commit (untracked,
// secrets/ and .env gitignored, as a repository keeps them), each
// holding a word no other file of the project holds.
var (
	readDenyFiles = map[string]string{
		"README.md":   "# r\nREADME-VISIBLE\n",
		".gitignore":  "secrets/\n.env\n",
		"conf/ok.txt": "CONF-VISIBLE\n",
	}
	readDenySecrets = map[string]string{
		"secrets/k":      "SECRET-IN-DIR\n",
		"secrets/deep/j": "SECRET-DEEPER\n",
		".env":           "SECRET-DOTENV\n",
		"sub/.env":       "SECRET-SUBENV\n",
		"conf/a.pem":     "SECRET-PEM\n",
	}
)

// newReadDenyProject is a project with readDenyFiles committed and
// readDenySecrets beside them.
func newReadDenyProject(t *testing.T) *project {
	t.Helper()
	p := newProject(t, readDenyFiles)
	for rel, data := range readDenySecrets {
		writeFile(t, filepath.Join(p.root, rel), data)
	}
	return p
}

// TestReadDenyHoldsInReadOnlyBash (newuser P1-2): a Read deny rule holds
// for a read-only child's Bash, which runs every command unchecked: what
// the rule matches is hidden from its Landlock domain, for an anchored
// directory, a name at any depth and a wildcard, through cat, python's
// open(), a link the child makes to the file, a `..` path and an
// absolute one; the rest of the tree stays readable.
func TestReadDenyHoldsInReadOnlyBash(t *testing.T) {
	needLandlock(t)
	py := "true"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		py = `for f in secrets/k .env conf/a.pem; do /usr/bin/python3 -c "import sys; print(open(sys.argv[1]).read())" $f 2>&1 | tail -1; done`
	}
	reads := "cat README.md conf/ok.txt; cat secrets/k secrets/deep/j .env sub/.env conf/a.pem 2>&1; " +
		"cat sub/../secrets/k \"$PWD/conf/a.pem\" 2>&1; " +
		"ln -s \"$PWD/secrets/k\" \"$TMPDIR/l1\"; ln -s \"$PWD/.env\" \"$TMPDIR/l2\"; cat \"$TMPDIR/l1\" \"$TMPDIR/l2\" 2>&1; " +
		"ln secrets/k \"$TMPDIR/h1\" 2>&1; ln .env \"$TMPDIR/h2\" 2>&1; cat \"$TMPDIR/h1\" \"$TMPDIR/h2\" 2>&1; " +
		"cp secrets/k \"$TMPDIR/c\" 2>&1; cat \"$TMPDIR/c\" 2>&1; " +
		"grep -r SECRET . 2>&1; git show HEAD:secrets/k 2>&1; git log --all -p 2>&1 | grep SECRET-; " + py + "; echo probed"
	for _, tc := range []struct {
		name   string
		deny   []string
		hidden []string // secrets that must not come out
	}{
		{"anchored directory", []string{"Read(secrets/**)"}, []string{"SECRET-IN-DIR", "SECRET-DEEPER"}},
		{"name at any depth", []string{"Read(.env)"}, []string{"SECRET-DOTENV", "SECRET-SUBENV"}},
		{"wildcard", []string{"Read(**/*.pem)"}, []string{"SECRET-PEM"}},
		{"all three", []string{"Read(secrets/**)", "Read(.env)", "Read(conf/*.pem)"},
			[]string{"SECRET-IN-DIR", "SECRET-DEEPER", "SECRET-DOTENV", "SECRET-SUBENV", "SECRET-PEM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newReadDenyProject(t)
			mdl := p.script("rd.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: probe, prompt: "probe"}
    - say: "root done"
  explore:
    - tools:
        - Bash: {command: `+quoteYAML(reads)+`}
    - say: "PROBE {{result 0}}"
`)
			args := []string{"run", "--model", mdl}
			for _, d := range tc.deny {
				args = append(args, "--deny", d)
			}
			code, out, errs := p.brood(t.Context(), nil, append(args, "go")...)
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			res := taskResult(p)
			if !strings.Contains(res, "probed") || !strings.Contains(res, "README-VISIBLE") || !strings.Contains(res, "CONF-VISIBLE") {
				t.Fatalf("the child's commands did not run, or could not read the rest of the tree:\n%s\n%s", res, errs)
			}
			for _, s := range tc.hidden {
				if strings.Contains(res, s) {
					t.Errorf("the read-only child's Bash read %s past %v:\n%s", s, tc.deny, res)
				}
			}
		})
	}
}

// TestReadDenyUnexpandedChecksBash: a Read deny the kernel cannot hold
// (a bare `Read`: every path; a denied file git tracks, whose content is
// in the repository's objects) leaves a read-only child's Bash checked
// per command, as the root's is, and its result says so.
func TestReadDenyUnexpandedChecksBash(t *testing.T) {
	needLandlock(t)
	for _, tc := range []struct {
		name, deny, why string
		track           bool
	}{
		{"a deny for all of Read", "Read", "a deny rule for all of Read", false},
		{"a tracked file", "Read(secrets/**)", "secrets/k is tracked by git", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newReadDenyProject(t)
			if tc.track {
				p.git("add", "-f", "secrets/k")
				p.git("commit", "-qm", "a secret")
			}
			mdl := p.script("rd.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: probe, prompt: "probe"}
    - say: "root done"
  explore:
    - tools:
        - Bash: {command: "git show HEAD:secrets/k; cat secrets/k"}
    - say: "PROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--deny", tc.deny, "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			res := taskResult(p)
			if strings.Contains(res, "SECRET-IN-DIR") || !strings.Contains(res, `permission denied: Bash "git show HEAD:secrets/k`) {
				t.Fatalf("the read-only child's command was not refused by the rule check under %s:\n%s\n%s", tc.deny, res, errs)
			}
			results, _ := filepath.Glob(filepath.Join(p.root, ".brood", "dispatch", "*", "result.json"))
			if len(results) != 1 {
				t.Fatalf("want one result.json, have %v", results)
			}
			if sb, _ := readJSON(t, results[0])["sandbox"].(string); !strings.Contains(sb, "Read deny rules not held by the kernel sandbox (") ||
				!strings.Contains(sb, tc.why) || !strings.Contains(sb, "Bash is checked per command") {
				t.Errorf("the result's sandbox line does not say the Read denies are not held (%s): %q", tc.why, sb)
			}
		})
	}
}

// taskResult is the output of the root's last Task call.
func taskResult(p *project) string {
	p.t.Helper()
	var res string
	for _, r := range p.rootTranscript() {
		if r.Type == session.RecToolResult && r.Tool == "Task" {
			res = r.Output
		}
	}
	return res
}

// TestReadDenyHoldsInWritersBash: a writer whose Bash the user let run
// unchecked (bypassPermissions) cannot read what a Read deny matches
// either: an in-place writer's and an overlay copy's mount namespace
// covers it (its tree's Landlock rule would read it), a worktree copy's
// sandbox hides the real tree's. Through cat, a `..` path, the real
// tree's absolute path, a link, a hard link and a rename.
func TestReadDenyHoldsInWritersBash(t *testing.T) {
	needLandlock(t)
	for _, c := range childClasses[1:] {
		t.Run(c.name, func(t *testing.T) {
			p := newReadDenyProject(t)
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			root := p.root
			cmd := "R='" + root + "'; cat README.md; cat secrets/k .env sub/.env conf/a.pem sub/../secrets/k 2>&1; " +
				"cat \"$R/secrets/k\" \"$R/.env\" \"$R/conf/a.pem\" 2>&1; " +
				"ln -s \"$R/conf/a.pem\" l1 2>&1; cat l1 2>&1; ln conf/a.pem h1 2>&1; cat h1 2>&1; ln \"$R/conf/a.pem\" h2 2>&1; cat h2 2>&1; " +
				"mv conf/a.pem conf/b.txt 2>&1; cat conf/b.txt 2>&1; mv secrets s2 2>&1; cat s2/k 2>&1; " +
				"grep -r SECRET- . 2>&1; echo NEW > .env && echo WROTE-\"\"DENIED .env; echo NEW > conf/a.pem && echo WROTE-\"\"DENIED pem; " +
				"echo wrote > new.txt; cat new.txt; echo probed"
			mdl := p.script("rdw.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: `+quoteYAML(cmd)+`}
    - say: "PROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), c.env, "run", "--model", mdl, "--permission-mode", "bypassPermissions",
				"--deny", "Read(secrets/**)", "--deny", "Read(.env)", "--deny", "Read(**/*.pem)", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			res := taskResult(p)
			if !strings.Contains(res, "probed") || !strings.Contains(res, "README-VISIBLE") || !strings.Contains(res, "\nwrote") {
				t.Fatalf("the writer's commands did not run, or could not read the tree or its own file:\n%s\n%s", res, errs)
			}
			for _, s := range []string{"SECRET-IN-DIR", "SECRET-DOTENV", "SECRET-SUBENV", "SECRET-PEM"} {
				if strings.Contains(res, s) {
					t.Errorf("the %s's Bash read %s past the Read deny rules:\n%s", c.name, s, res)
				}
			}
			// A write to a covered file fails: it never "succeeds" into
			// nothing (the writer would report done with nothing changed).
			// (An isolated copy holds no untracked secrets file, .env or
			// *.pem, whatever the ignore rules say: a new one there is the
			// writer's own file; the real one is checked below.)
			wrote := strings.Contains(c.name, "in-place") &&
				(strings.Contains(res, "WROTE-DENIED pem") || strings.Contains(res, "WROTE-DENIED .env"))
			if wrote {
				t.Errorf("the %s's write to a file a Read deny covers succeeded and went nowhere:\n%s", c.name, res)
			}
			for rel, data := range readDenySecrets {
				if b, err := os.ReadFile(filepath.Join(root, rel)); err != nil || string(b) != data {
					t.Errorf("%s changed in the real tree (%v): %q", rel, err, b)
				}
			}
		})
	}
}

// TestReadDenyHoldsInDelegatingChildren: a delegating child's Bash and
// its own read-only child's (started by the child's dispatcher, under
// the child's domain) cannot read what a Read deny matches.
func TestReadDenyHoldsInDelegatingChildren(t *testing.T) {
	needLandlock(t)
	for _, c := range []struct {
		name, agent string
		env         []string
	}{
		{"read-only", "rodel", nil},
		{"in-place writer", "general-purpose", nil},
		{"isolated writer (overlay where it mounts)", "isodel", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newReadDenyProject(t)
			cfg := filepath.Join(p.home, ".config", "brood")
			writeFile(t, filepath.Join(cfg, "settings.toml"), "maxSubagentDepth = 2\n")
			writeFile(t, filepath.Join(cfg, "agents", "rodel.md"),
				"---\nname: rodel\ndescription: read-only delegator\ntools: Read, Bash, Task\ndelegate: explore\nsandbox: read-only\n---\nLook.\n")
			writeFile(t, filepath.Join(cfg, "agents", "isodel.md"),
				"---\nname: isodel\ndescription: isolated delegator\ntools: Bash, Task\ndelegate: explore\nisolation: worktree\n---\nWrite.\n")
			reads := "cat README.md; cat secrets/k .env sub/.env conf/a.pem 2>&1; grep -r SECRET- . 2>&1; echo probed"
			mdl := p.script("rdd.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: `+quoteYAML(reads)+`}
        - Task: {subagent_type: explore, description: grand, prompt: "look"}
    - say: "PROBE {{result 0}} GRAND {{result 1}}"
  explore:
    - tools:
        - Bash: {command: `+quoteYAML(reads)+`}
    - say: "GRANDPROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), c.env, "run", "--model", mdl, "--permission-mode", "bypassPermissions",
				"--deny", "Read(secrets/**)", "--deny", "Read(.env)", "--deny", "Read(**/*.pem)", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			res := taskResult(p)
			if strings.Count(res, "README-VISIBLE") != 2 || !strings.Contains(res, "GRANDPROBE") {
				t.Fatalf("the child or its own child did not run its commands:\n%s\n%s", res, errs)
			}
			for _, s := range []string{"SECRET-IN-DIR", "SECRET-DOTENV", "SECRET-SUBENV", "SECRET-PEM"} {
				if strings.Contains(res, s) {
					t.Errorf("the %s or its child read %s past the Read deny rules:\n%s", c.name, s, res)
				}
			}
		})
	}
}

// TestReadDenyHoldsOutsideWritersTree (review39 P1-B): a writer whose
// Bash runs a reader (under bypassPermissions, or an allow rule for an
// interpreter) cannot read a denied path in its tree nor one outside it
// (the home's), and its result says what held.
func TestReadDenyHoldsOutsideWritersTree(t *testing.T) {
	needLandlock(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	for _, tc := range []struct {
		name, agent string
		env, args   []string
	}{
		{"bypass, in place", "general-purpose", nil, []string{"--permission-mode", "bypassPermissions"}},
		{"python allowed, in place", "general-purpose", nil, []string{"--allow", "Bash(/usr/bin/python3:*)", "--permission-mode", "acceptEdits"}},
		{"bypass, worktree copy", "iso", []string{"BROOD_FORCE_WORKTREE=1"}, []string{"--permission-mode", "bypassPermissions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newReadDenyProject(t)
			writeFile(t, filepath.Join(p.home, "private", "token"), "SECRET-HOME\n")
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			cmd := `/usr/bin/python3 -c "import sys,os
for f in sys.argv[1:]:
    try: print(open(os.path.expanduser(f)).read())
    except OSError as e: print(e)
print('probed')" .env secrets/k ` + filepath.Join(p.home, "private", "token") + ` README.md`
			mdl := p.script("rdo.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+tc.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+tc.agent+`:
    - tools:
        - Bash: {command: `+quoteYAML(cmd)+`}
    - say: "PROBE {{result 0}}"
`)
			args := append([]string{"run", "--model", mdl}, tc.args...)
			args = append(args, "--deny", "Read(.env)", "--deny", "Read(secrets/**)", "--deny", "Read(~/private/**)", "go")
			code, out, errs := p.brood(t.Context(), tc.env, args...)
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			res := taskResult(p)
			if !strings.Contains(res, "probed") || !strings.Contains(res, "README-VISIBLE") {
				t.Fatalf("the writer's command did not run:\n%s\n%s", res, errs)
			}
			for _, s := range []string{"SECRET-DOTENV", "SECRET-IN-DIR", "SECRET-HOME"} {
				if strings.Contains(res, s) {
					t.Errorf("the writer read %s past the Read deny rules:\n%s", s, res)
				}
			}
			results, _ := filepath.Glob(filepath.Join(p.root, ".brood", "dispatch", "*", "result.json"))
			if len(results) != 1 {
				t.Fatalf("want one result.json, have %v", results)
			}
			if sb, _ := readJSON(t, results[0])["sandbox"].(string); !strings.Contains(sb, "paths hidden by the kernel sandbox") || strings.Contains(sb, "NOT held") {
				t.Errorf("the result's sandbox line does not say the Read denies held: %q", sb)
			}
		})
	}
}

// TestEditDenyHoldsInIsolatedLanding (review39 P1-C): a writer whose
// Bash writes a file an Edit deny names by a path no rule check sees
// (cp, sed -i) does not change it: an in-place writer's view holds what
// the rule matches read-only; an isolated writer's patch is refused and
// kept, not landed, and its result says why.
func TestEditDenyHoldsInIsolatedLanding(t *testing.T) {
	needLandlock(t)
	for _, c := range childClasses[1:] {
		t.Run(c.name, func(t *testing.T) {
			p := newReadDenyProject(t)
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			cmd := "cp README.md conf/b.txt; sed -i s/CONF/PWNED/ conf/ok.txt; echo fine > free.txt; echo probed"
			mdl := p.script("ed.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: `+quoteYAML(cmd)+`}
    - say: "PROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), c.env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "--deny", "Edit(conf/**)", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			res := taskResult(p)
			if !strings.Contains(res, "probed") {
				t.Fatalf("the writer's command did not run:\n%s\n%s", res, errs)
			}
			if b, _ := os.ReadFile(filepath.Join(p.root, "conf", "ok.txt")); string(b) != "CONF-VISIBLE\n" {
				t.Errorf("conf/ok.txt, which Edit(conf/**) denies, landed as %q", b)
			}
			if _, err := os.Stat(filepath.Join(p.root, "conf", "b.txt")); err == nil {
				t.Errorf("conf/b.txt, which Edit(conf/**) denies, landed")
			}
			if c.agent == "iso" && !strings.Contains(res, "which your Edit or Write deny rules forbid") {
				t.Errorf("the result does not say why the patch was not landed:\n%s", res)
			}
			// (review40 P3-1) Nothing of a refused patch is in the tree,
			// the allowed free.txt neither, and the result says so.
			if c.agent == "iso" {
				for _, want := range []string{"Files in the kept patch: ", "(refused: it writes conf/", "the whole patch was refused, the files no rule forbids too"} {
					if !strings.Contains(res, want) {
						t.Errorf("the refused patch's result lacks %q:\n%s", want, res)
					}
				}
				for _, bad := range []string{"Files changed: ", "conflict:"} {
					if strings.Contains(res, bad) {
						t.Errorf("the refused patch's result says %q:\n%s", bad, res)
					}
				}
				if _, err := os.Stat(filepath.Join(p.root, "free.txt")); err == nil {
					t.Errorf("free.txt of the refused patch landed")
				}
			}
		})
	}
}
