package attack_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/session"
)

// TestRootRecordsUnreadable (review 18 X2): the root, unconfined, reads a
// credential file; its transcript in .brood/sessions then holds the
// secret, with every task's result and an earlier session's, and
// .brood/records holds other tasks' summaries. A child of no class reads
// them: a read-only child and a worktree copy's through their hidden
// list, an in-place writer and an overlay child (whose tree's rule would
// grant them) through an empty read-only cover in their mount namespace;
// an in-place writer that delegates neither (it writes only its own task
// directory beneath .brood/dispatch: its children's are nested in it).
func TestRootRecordsUnreadable(t *testing.T) {
	needLandlock(t)
	type class struct {
		name, agent string
		env         []string
		delegates   bool
	}
	classes := []class{{name: "in-place writer that delegates", agent: "general-purpose", delegates: true}}
	for _, c := range childClasses {
		classes = append(classes, class{name: c.name, agent: c.agent, env: c.env})
	}
	for _, c := range classes {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n"})
			if c.delegates {
				writeFile(t, filepath.Join(p.home, ".config", "brood", "settings.toml"), "maxSubagentDepth = 2\n")
			}
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			writeFile(t, filepath.Join(p.home, ".aws", "credentials"), "[default]\nsecret = ROOT-READ-SECRET-123\n")
			writeFile(t, filepath.Join(p.root, ".brood", "sessions", "01EARLIER.jsonl"), "{\"text\":\"EARLIER-SESSION-SECRET-7\"}\n")
			writeFile(t, filepath.Join(p.root, ".brood", "records", "01OTHER.summary.md"), "OTHER-SUMMARY-SECRET-9\n")
			brood := filepath.Join(p.root, ".brood")
			mdl := p.script("probe.yaml", `agents:
  root:
    - tools:
        - Bash: {command: "cat $HOME/.aws/credentials"}
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: "cat '`+brood+`'/sessions/* '`+brood+`'/records/* 2>/dev/null | grep -o 'SECRET-[0-9]*' | sort -u | tr '\\n' ' '; test -r \"$TMPDIR/../envelope.json\" && echo OWN-READ; touch \"$TMPDIR/../../.probe\" 2>/dev/null && rm -f \"$TMPDIR/../../.probe\" && echo DISPATCH-WRITTEN; echo probed"}
    - say: "PROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), c.env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			var res string
			rootRead := false
			for _, r := range p.rootTranscript() {
				if r.Type == session.RecToolResult && r.Tool == "Task" {
					res = r.Output
				}
				rootRead = rootRead || (r.Type == session.RecToolResult && strings.Contains(r.Output, "ROOT-READ-SECRET-123"))
			}
			if !rootRead {
				t.Fatalf("the root's transcript does not hold what it read: no test")
			}
			if !strings.Contains(res, "probed") {
				t.Fatalf("the %s child's probe did not run:\n%s\n%s", c.name, res, errs)
			}
			if !strings.Contains(res, "OWN-READ") {
				t.Errorf("%s: the child cannot read its own task directory:\n%s", c.name, res)
			}
			if strings.Contains(res, "DISPATCH-WRITTEN") {
				t.Errorf("%s: the child writes the dispatch directory beside its own task directory (review 18 S1):\n%s", c.name, res)
			}
			if strings.Contains(res, "SECRET-") {
				t.Errorf("%s: the child read the root's transcripts or records:\n%s", c.name, res)
			}
		})
	}
}
