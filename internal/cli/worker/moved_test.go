package worker_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestAMovedCheckoutLandsItsOwnCall (issue 26, P3): a writer submitted
// from checkout A whose submitter died finishes on the worker. A clone of
// A with A's .brood/ copied in (what a repository could ship) is another
// checkout: `tasks resume` there refuses, naming A, and lands nothing. A
// itself, moved to another path, is still the submitter's checkout (its
// git directory's identity is the one its submission was marked with):
// `tasks resume` there lands the change.
func TestAMovedCheckoutLandsItsOwnCall(t *testing.T) {
	srv := devserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	d := newDeadCallFleet(ctx, t, srv.Addr)
	one := d.writeAndDie("one", nil)
	rootA, err := filepath.EvalSymlinks(d.sub.Root)
	if err != nil {
		t.Fatal(err)
	}

	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", d.sub.Root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(d.sub.Root, ".brood"), clone).CombinedOutput(); err != nil {
		t.Fatalf("cp .brood: %v\n%s", err, out)
	}
	c := &testbrood.Project{T: t, Root: clone, Home: d.sub.Home, Env: d.sub.Env}
	if code, out, errs := c.Brood(ctx, nil, append([]string{"tasks", "resume", one}, d.fleet...)...); code == 0 || !strings.Contains(errs, rootA) {
		t.Errorf("tasks resume in a clone of A with A's .brood/: exit %d\n%s\n%s\nwant a refusal naming A", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(clone, "one.txt")); err == nil {
		t.Errorf("the clone landed A's change")
	}

	moved := d.sub.Root + "-moved"
	if err := os.Rename(d.sub.Root, moved); err != nil {
		t.Fatal(err)
	}
	d.sub.Root = moved
	if code, out, errs := d.brood("tasks", "resume", one); code != 0 || !strings.Contains(out, "landed the change of fleet call "+one+" in your tree") {
		t.Fatalf("tasks resume in A moved to %s: exit %d\n%s\n%s", moved, code, out, errs)
	}
	if got := readFile(t, moved, "one.txt"); got != "one from the writer\n" {
		t.Errorf("one.txt %q in the moved checkout", got)
	}
}
