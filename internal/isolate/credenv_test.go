package isolate

import (
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
)

// TestChildrenReadNoCredentialsElsewhere (review C2, C9): a child reads
// no credential where the environment brood started with points (an
// XDG_CONFIG_HOME, AWS_SHARED_CREDENTIALS_FILE, KUBECONFIG's entries,
// CARGO_HOME's credentials), in the stores the first list missed, nor
// the worker's fleet cache where it falls back to $TMPDIR/brood-fleet
// (no home, no cache directory); here all in a directory the child is
// otherwise let read (its home, its tree).
func TestChildrenReadNoCredentialsElsewhere(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock on this kernel: nothing hides a path (brood doctor says so)")
	}
	home, proj := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	xdg := filepath.Join(home, "xdg")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "elsewhere", "aws-creds"))
	t.Setenv("KUBECONFIG", filepath.Join(home, "k1")+":"+filepath.Join(home, "k2"))
	t.Setenv("CARGO_HOME", filepath.Join(home, "cargo"))
	secrets := []string{
		filepath.Join(xdg, "gh", "hosts.yml"), filepath.Join(xdg, "git", "credentials"),
		filepath.Join(home, "elsewhere", "aws-creds"), filepath.Join(home, "k2"),
		filepath.Join(home, "cargo", "credentials.toml"),
		filepath.Join(home, ".config", "containers", "auth.json"), filepath.Join(home, ".config", "rclone", "rclone.conf"),
		filepath.Join(home, ".bash_history"), filepath.Join(home, ".m2", "settings.xml"), filepath.Join(home, ".s3cfg"),
	}
	for _, s := range secrets {
		writeFile(t, s, "secret")
	}
	readable := []string{filepath.Join(home, "notes.txt"), filepath.Join(home, "cargo", "registry", "x"), filepath.Join(home, ".m2", "repository", "x")}
	for _, r := range readable {
		writeFile(t, r, "fine")
	}
	own := filepath.Join(dispatch.Root(proj), "01OWN")
	writeFile(t, filepath.Join(own, "envelope.json"), "{}")
	env := dispatch.Envelope{ReadOnly: true, Workspace: proj, ProjectRoot: proj}
	p, _ := ChildPolicy(&env, own, NewPolicyBase(nil))
	for _, s := range secrets {
		if readAs(t, p, s) {
			t.Errorf("the child read %s", s)
		}
	}
	for _, r := range readable {
		if !readAs(t, p, r) {
			t.Errorf("the child cannot read %s, which holds no credential", r)
		}
	}
	t.Run("no home", func(t *testing.T) {
		tmp := filepath.Join(proj, "tmp") // the tree holds it: kept
		t.Setenv("TMPDIR", tmp)
		t.Setenv("HOME", "")
		t.Setenv("XDG_CACHE_HOME", "")
		job := filepath.Join(tmp, "brood-fleet", "jobs", "other", "secret.go")
		writeFile(t, job, "another job's tree")
		p, _ := ChildPolicy(&env, own, NewPolicyBase(nil))
		if readAs(t, p, job) {
			t.Errorf("the child read the fleet cache's %s", job)
		}
	})
}
