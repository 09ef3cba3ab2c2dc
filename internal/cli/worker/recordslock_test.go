package worker_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/testbrood"
)

// TestTwoWorkersShareNoRecords (issue 26, a tester's P2-6 and P1-3): a
// worker holds its task records (.brood where it runs, or the ancestor's
// it shares) for its lifetime, and a second worker on the same records
// refuses to start, before it dials the fleet, saying how to give it its
// own: sharing them, a retry on the second returned the first's finished
// writer done, its change never taken.
func TestTwoWorkersShareNoRecords(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, map[string]string{"README.md": "# r\n"})
	lock := filepath.Join(p.Root, ".brood", "worker.lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err) // the first worker, as this test stands in for it
	}
	// 127.0.0.1:1: nothing listens there; the records are held first.
	code, out, errOut := p.Brood(t.Context(), []string{"BROOD_MODEL=script:none"}, "worker", "--allow-unsigned", "--temporal", "127.0.0.1:1", "--store", "file://"+t.TempDir())
	if code != 1 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one line", code, out, errOut)
	}
	for _, want := range []string{"another brood worker keeps its task records in " + filepath.Join(p.Root, ".brood"), "a directory of its own"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	// Alone, it gets past its records (and fails dialling nobody).
	code, _, errOut = p.Brood(t.Context(), []string{"BROOD_MODEL=script:none"}, "worker", "--allow-unsigned", "--temporal", "127.0.0.1:1", "--store", "file://"+t.TempDir())
	if strings.Contains(errOut, "task records") {
		t.Fatalf("exit %d, stderr %q: a lone worker refused its own records", code, errOut)
	}
}
