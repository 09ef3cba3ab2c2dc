package run_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestShippedGitignoreKeepsRecordsOut: a repository that commits a
// .brood/.gitignore ignoring nothing, un-ignoring everything (`!*`,
// which outranks .git/info/exclude), or copying brood's header above its
// negations, would have `git add -A` publish the person's transcripts
// (redteam P2-8, redteam19 P2-1). Whatever it ships, git sees none of
// the run records after a run, a record directory's shipped .gitignore is
// replaced and said, and a second run says nothing new.
func TestShippedGitignoreKeepsRecordsOut(t *testing.T) {
	header := "# brood's run records (written by brood)\n"
	for _, tc := range []struct {
		name, gitignore, shipped string // shipped: .brood/sessions/.gitignore
		wantSaid                 string
	}{
		{name: "ignores nothing", gitignore: "# nothing to ignore\n", wantSaid: "added /.brood/dispatch/, /.brood/brood-debug.log"},
		{name: "negates everything", gitignore: "!*\n!*/\n", wantSaid: "un-ignore brood's /.brood/dispatch/"},
		// brood adds its missing names after the negations (the file looks
		// like an older brood's): the last match wins, nothing to say.
		{name: "brood's header, then negations", gitignore: header + "dispatch/\nsessions/\n!*\n!*/\n"},
		{name: "a record directory's own", gitignore: header + "sessions/\n", shipped: "!*\n", wantSaid: "replaced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewProject(t)
			git := func(args ...string) string {
				t.Helper()
				cmd := exec.Command("git", args...)
				cmd.Dir = p.Root
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
				return string(out)
			}
			git("init", "-q")
			clitest.WriteFile(t, filepath.Join(p.Root, ".brood", ".gitignore"), tc.gitignore)
			if tc.shipped != "" {
				clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "sessions", ".gitignore"), tc.shipped)
			}
			script := p.Script("s.yaml", "agents:\n  root:\n    - say: \"hello\"\n")
			code, out, errOut := p.Brood("run", "--model", script, "hi")
			if code != 0 {
				t.Fatalf("code %d\n%s\n%s", code, out, errOut)
			}
			if tc.wantSaid != "" && !strings.Contains(errOut, tc.wantSaid) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantSaid, errOut)
			}
			recs := []string{"sessions/", "records/", "workflows/", "outputs/"}
			if !strings.Contains(tc.gitignore, "!*") {
				// dispatch/ has no .gitignore of its own (its entries are
				// tasks alone): a negation there is said, not beaten.
				recs = append(recs, "dispatch/")
			}
			for _, rec := range recs {
				if st := git("status", "--porcelain", "--untracked-files=all", "--ignored=no", ".brood"); strings.Contains(st, rec) {
					t.Errorf("git sees %s:\n%s", rec, st)
				}
			}
			if _, err := os.Stat(filepath.Join(p.Root, ".brood", "sessions")); err != nil {
				t.Fatal(err)
			}
			// The next run adds nothing: no notice but the negation's.
			_, _, errOut = p.Brood("run", "--model", script, "hi")
			if strings.Contains(errOut, "added") || strings.Contains(errOut, "replaced") {
				t.Errorf("said again:\n%s", errOut)
			}
			if b, _ := os.ReadFile(filepath.Join(p.Root, ".git", "info", "exclude")); strings.Count(string(b), "/.brood/brood-debug.log") > 1 {
				t.Errorf("the exclude file grows:\n%s", b)
			}
		})
	}
}
