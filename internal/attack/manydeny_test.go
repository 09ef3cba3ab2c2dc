package attack_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// manyPems writes n files matching *.pem, each with a long name, under
// fixtures/ of p's tree (untracked: fixtures/ is ignored), and returns one
// of them (relative) and the word it holds.
func manyPems(t *testing.T, p *project, n int) (one, secret string) {
	t.Helper()
	dir := filepath.Join(p.root, "fixtures", "certificates-for-the-mutual-tls-integration-suite-of-the-payments-gateway")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		name := fmt.Sprintf("client-certificate-number-%05d-for-mutual-tls-between-services.pem", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("SECRET-PEM-%05d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(p.root, ".gitignore"), "secrets/\n.env\nfixtures/\n")
	rel, _ := filepath.Rel(p.root, filepath.Join(dir, fmt.Sprintf("client-certificate-number-%05d-for-mutual-tls-between-services.pem", 7)))
	return rel, "SECRET-PEM-00007"
}

// TestManyDenyMatchesStartEveryClass (review39/40 P2-C): Read and Edit
// deny rules matching thousands of files (`Read(**/*.pem)` over a fixtures
// directory) do not keep any class of child from starting: the lists the
// child's confinement needs (its policy, its mount view) are larger than
// one environment string may be (128 KiB), and still reach it whole —
// the files stay hidden from its Bash under bypassPermissions, and a
// writer's write to one fails.
func TestManyDenyMatchesStartEveryClass(t *testing.T) {
	needLandlock(t)
	for _, c := range childClasses {
		t.Run(c.name, func(t *testing.T) {
			p := newReadDenyProject(t)
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			one, secret := manyPems(t, p, 5000)
			// (Through sh, so that the per-command rule check does not
			// see the path: as a script or python would.)
			inner := "cat '" + one + "' 2>&1; cat README.md"
			if c.agent != "explore" {
				inner += "; echo NEW > '" + one + "' && echo WROTE-" + "DENIED"
			}
			cmd := "echo STARTED-" + "OK; echo " + base64.StdEncoding.EncodeToString([]byte(inner)) + " | base64 -d | sh"
			mdl := p.script("many.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: "`+strings.ReplaceAll(cmd, `"`, `\"`)+`"}
    - say: "PROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), c.env, "run", "--model", mdl, "--permission-mode", "bypassPermissions",
				"--deny", "Read(**/*.pem)", "--deny", "Edit(**/*.pem)", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			res := taskResult(p)
			if !strings.Contains(res, "STARTED-OK") || !strings.Contains(res, "README-VISIBLE") {
				t.Fatalf("the child did not run its command (it never started?):\n%s\n%s", res, errs)
			}
			if strings.Contains(res, secret) {
				t.Errorf("the child read %s, which Read(**/*.pem) denies:\n%s", one, res)
			}
			if c.agent != "explore" && !strings.Contains(res, "cannot create") {
				t.Errorf("the writer's write to %s did not fail (or never ran):\n%s", one, res)
			}
			if strings.Contains(res, "WROTE-DENIED") {
				t.Errorf("the child wrote %s, which Edit(**/*.pem) denies:\n%s", one, res)
			}
		})
	}
}
