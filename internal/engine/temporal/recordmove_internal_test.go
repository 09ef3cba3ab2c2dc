package temporal

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
)

// TestMovedCheckoutKeepsItsRecords: a keyless checkout's records are
// under the state directory of its common git dir's path; moved, the
// checkout (its secret moved with it) takes them over, so its call is
// still its own; another checkout given a copy of its secret takes
// nothing while the first is still where it was.
func TestMovedCheckoutKeepsItsRecords(t *testing.T) {
	const task = "01JAAAAAAAAAAAAAAAAAAAAAAA"
	in := CallInputW{Spec: call.Spec{Prompt: "ALPHA"}, Queue: "q"}
	for _, tc := range []struct {
		name string
		move func(t *testing.T, repo string) string // the checkout asked after
		own  bool
	}{
		{"moved", func(t *testing.T, repo string) string {
			if err := os.Rename(repo, repo+"-moved"); err != nil {
				t.Fatal(err)
			}
			return repo + "-moved"
		}, true},
		{"another checkout with its secret", func(t *testing.T, repo string) string {
			other := t.TempDir()
			gitInit(t, other)
			b, err := os.ReadFile(filepath.Join(repo, ".git", checkoutSecretFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(other, ".git", checkoutSecretFile), b, 0o600); err != nil {
				t.Fatal(err)
			}
			return other
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			repo, _ := recordsRepo(t)
			e := &Engine{cfg: Config{Namespace: "ns", Code: &CodeConfig{Dir: repo}}}
			e.withOrigin(map[string]any{}) // the submission makes the secret
			if err := e.keepSent(ctx, task, in); err != nil {
				t.Fatal(err)
			}
			e.keepRun(ctx, task, in, "run-1") // (notes the checkout's mark)
			after := &Engine{cfg: Config{Namespace: "ns", Code: &CodeConfig{Dir: tc.move(t, repo)}}}
			err := after.sentBy(ctx, task, in, "run-1")
			u := after.unverified(ctx, task)
			if own := err == nil && u == ""; own != tc.own {
				t.Errorf("sentBy %v, unverified %q: the call taken as the checkout's own = %v, want %v", err, u, own, tc.own)
			}
			if !tc.own && !strings.HasPrefix(u, "unverified:") {
				t.Errorf("unverified %q", u)
			}
		})
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
}
