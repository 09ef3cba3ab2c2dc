package attack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOtherProjectsRecordsUnreadable (review 18, still open): brood ran in
// another project under the user's home, so that project's .brood holds
// its root's transcripts, records, its tasks' transcripts and workflow
// runs; and this project's own workflow journals and spilled outputs
// hold every call's result. A child of no class reads any of them (the
// other project is on the user's list of known projects: its state
// directory is hidden whole), nor writes an entry into that list; it
// still reads the other project's files and its own task directory.
func TestOtherProjectsRecordsUnreadable(t *testing.T) {
	needLandlock(t)
	for _, c := range childClasses {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n", ".gitignore": "vendor/\n"})
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			other := filepath.Join(p.home, "src", "other")
			writeFile(t, filepath.Join(other, "README.md"), "OTHER-README-VISIBLE\n")
			p.broodIn(t, other)
			known := filepath.Join(p.home, ".local", "state", "brood", "known-projects")
			if data, err := os.ReadFile(known); err != nil || !strings.Contains(string(data), filepath.Join(other, ".brood")) {
				t.Fatalf("brood run in %s did not put it on %s (%v):\n%s", other, known, err, data)
			}
			// A known project nested in this one's tree, whose rule on
			// the tree would read it for a writer.
			inner := filepath.Join(p.root, "vendor", "inner")
			writeFile(t, filepath.Join(inner, "README.md"), "inner\n")
			p.broodIn(t, inner)
			writeFile(t, filepath.Join(inner, ".brood", "sessions", "y.jsonl"), "INNER-SESSION-SECRET-7\n")
			ob := filepath.Join(other, ".brood")
			writeFile(t, filepath.Join(ob, "sessions", "x.jsonl"), "{\"text\":\"OTHER-SESSION-SECRET-1\"}\n")
			writeFile(t, filepath.Join(ob, "records", "01OTHER.json"), "OTHER-RECORD-SECRET-2\n")
			writeFile(t, filepath.Join(ob, "dispatch", "01TASK", "session.jsonl"), "OTHER-TASK-SECRET-3\n")
			b := filepath.Join(p.root, ".brood")
			writeFile(t, filepath.Join(b, "workflows", "01RUN", "journal.jsonl"), "JOURNAL-SECRET-4\n")
			writeFile(t, filepath.Join(b, "workflows", "01RUN", "result.json"), "RESULT-SECRET-5\n")
			writeFile(t, filepath.Join(b, "outputs", "01OUT.txt"), "OUTPUT-SECRET-6\n")
			mdl := p.script("probe.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: "cat '`+ob+`'/sessions/* '`+inner+`'/.brood/sessions/* '`+ob+`'/records/* '`+ob+`'/dispatch/*/* '`+b+`'/workflows/*/* '`+b+`'/outputs/* 2>/dev/null | grep -o 'SECRET-[0-9]*' | sort -u | tr '\\n' ' '; cat '`+other+`'/README.md; test -r \"$TMPDIR/../envelope.json\" && echo OWN-READ; echo /x >> '`+known+`' 2>/dev/null && echo REGISTERED; echo probed"}
    - say: "PROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), c.env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			res := p.taskResult(t)
			if !strings.Contains(res, "probed") || !strings.Contains(res, "OTHER-README-VISIBLE") || !strings.Contains(res, "OWN-READ") {
				t.Fatalf("%s: the probe did not run, or the child reads neither the other project nor its own task directory:\n%s\n%s", c.name, res, errs)
			}
			if strings.Contains(res, "SECRET-") {
				t.Errorf("%s: the child read another project's records or this project's workflow runs or outputs:\n%s", c.name, res)
			}
			if strings.Contains(res, "REGISTERED") {
				t.Errorf("%s: the child wrote the known projects' list %s", c.name, known)
			}
		})
	}
}

// broodIn runs `brood run` with a model that only answers in dir, as the
// user would in another project.
func (p *project) broodIn(t *testing.T, dir string) {
	t.Helper()
	git := exec.Command("git", "init", "-q")
	git.Dir, git.Env = dir, p.Env
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init %s: %v\n%s", dir, err, out)
	}
	mdl := p.script("hello.yaml", "agents:\n  root:\n    - say: \"hello\"\n")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "run", "--model", mdl, "hi")
	cmd.Dir, cmd.Env = dir, p.Env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("brood run in %s: %v\n%s", dir, err, out)
	}
}

// taskResult is the output of the root's last Task call.
func (p *project) taskResult(t *testing.T) string {
	t.Helper()
	var res string
	for _, r := range p.rootTranscript() {
		if r.Tool == "Task" && r.Output != "" {
			res = r.Output
		}
	}
	return res
}
