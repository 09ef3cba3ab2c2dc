package codesnap

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestIsRecordAsTheExcludesMatch: isRecord (which index entries capture
// removes) says what git says of the capture's exclude patterns matched
// positively, path by path, in a real index.
func TestIsRecordAsTheExcludesMatch(t *testing.T) {
	paths := []string{
		".brood/outputs/report.md", ".brood/outputs/deep/x", "sub/.brood/fleet/patches/T1.patch",
		"a/b/.brood/workflows/R/result.json", ".brood/brood-debug.log", "sub/.brood/worker.lock",
		".brood/agents/a.md", ".brood/settings.toml", ".brood/.gitignore", "outputs/x", "x.brood/outputs/y",
		".brood/brood-debug.log.old", ".brood/dispatchx/y", "brood/dispatch/y", ".brood/sub/outputs/x",
		".brood/sessions", ".brood/worker.lock/x", "a.txt", ".brood/records/.brood/agents/x",
	}
	dir := t.TempDir()
	run := func(stdin string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), append(env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("", nil, "init", "-q")
	empty := strings.TrimSpace(run("", nil, "hash-object", "-w", "--stdin"))
	var info strings.Builder
	for _, p := range paths {
		info.WriteString("100644 " + empty + "\t" + p + "\n")
	}
	run(info.String(), nil, "update-index", "--index-info")
	args := []string{"ls-files", "-z", "--"}
	for _, p := range recordExcludes() {
		args = append(args, strings.Replace(p, ":(exclude,glob)", ":(glob)", 1))
	}
	matched := map[string]bool{}
	for p := range strings.SplitSeq(run("", []string{"GIT_LITERAL_PATHSPECS=0"}, args...), "\x00") {
		matched[p] = p != ""
	}
	for _, p := range paths {
		if isRecord(p) != matched[p] {
			t.Errorf("%s: isRecord %v, git's patterns %v", p, isRecord(p), matched[p])
		}
	}
}
