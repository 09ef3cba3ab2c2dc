package fleet_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// TestTrustWorker through the real CLI: a worker key given as its line,
// and a file of keys, land in ~/.config/brood/fleet/trusted_workers (0600),
// each once, its fingerprint printed; the submitter's allowlist then
// trusts them; a line that is no key is refused, naming the argument; a
// trusted_workers others can write is refused, not added to.
func TestTrustWorker(t *testing.T) {
	p := clitest.NewProject(t)
	dir := temporal.KeyDir(p.Home)
	file := filepath.Join(dir, temporal.TrustedWorkersFile)
	_ = os.Remove(file) // the project's own: this test starts from none
	a, err := temporal.GenerateWorkerKey(filepath.Join(t.TempDir(), "a"), "a", false)
	if err != nil {
		t.Fatal(err)
	}
	bDir := filepath.Join(t.TempDir(), "b")
	b, err := temporal.GenerateWorkerKey(bDir, "b", false)
	if err != nil {
		t.Fatal(err)
	}
	pubA, _ := temporal.ParsePublicKey(a)
	pubB, _ := temporal.ParsePublicKey(b)
	code, out, errOut := p.Brood("fleet", "trust-worker", a, filepath.Join(bDir, temporal.WorkerPublicKeyFile))
	if code != 0 || !strings.Contains(out, temporal.Fingerprint(pubA)) || !strings.Contains(out, temporal.Fingerprint(pubB)) {
		t.Fatalf("trust-worker: exit %d %q %q", code, out, errOut)
	}
	if code, out, _ := p.Brood("fleet", "trust-worker", a); code != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("trusting a key again: exit %d, printed %q; want nothing added", code, out)
	}
	data, err := os.ReadFile(file)
	if err != nil || strings.Count(string(data), temporal.KeyPrefix) != 2 {
		t.Fatalf("trusted_workers: %q, %v; want the two keys once each", data, err)
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("trusted_workers mode: %v, %v; want 0600", info.Mode().Perm(), err)
	}
	if _, err := temporal.SubmitterWorkerTrust(dir); err != nil {
		t.Errorf("the submitter's allowlist does not load: %v", err)
	}
	if code, _, errOut := p.Brood("fleet", "trust-worker", "not a key"); code == 0 || !strings.Contains(errOut, "not a key") {
		t.Errorf("a bad key: exit %d %q; want refused, naming it", code, errOut)
	}
	if err := os.Chmod(file, 0o666); err != nil {
		t.Fatal(err)
	}
	c, _ := temporal.GenerateWorkerKey(filepath.Join(t.TempDir(), "c"), "c", false)
	if code, _, errOut := p.Brood("fleet", "trust-worker", c); code == 0 || !strings.Contains(errOut, "chmod go-w") {
		t.Errorf("a trusted_workers others can write: exit %d %q; want refused", code, errOut)
	}
}
