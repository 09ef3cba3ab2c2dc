package fleet_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/engine/temporal"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// TestKeygen through the real CLI: the key pair in ~/.config/brood/fleet
// (private key 0600 in a 0700 directory, the public key printed and
// parseable, its comment), kept on a second run, replaced with --force.
func TestKeygen(t *testing.T) {
	p := clitest.NewProject(t)
	dir := temporal.KeyDir(p.Home)
	code, out, errOut := p.Brood("fleet", "keygen", "--comment", "alice laptop")
	if code != 0 || !strings.HasPrefix(out, temporal.KeyPrefix+" ") || !strings.HasSuffix(strings.TrimSpace(out), "alice laptop") {
		t.Fatalf("keygen: exit %d %q %q", code, out, errOut)
	}
	first := strings.TrimSpace(out)
	if _, err := temporal.ParsePublicKey(first); err != nil {
		t.Fatalf("the printed key: %v", err)
	}
	pub, err := os.ReadFile(filepath.Join(dir, temporal.PublicKeyFile))
	if err != nil || strings.TrimSpace(string(pub)) != first {
		t.Fatalf("submitter.pub %q (%v); printed %q", pub, err, first)
	}
	for name, want := range map[string]os.FileMode{temporal.PrivateKeyFile: 0o600, ".": 0o700} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.Mode().Perm() != want {
			t.Fatalf("%s: %v, mode %v; want %v", name, err, info.Mode().Perm(), want)
		}
	}
	if s, err := temporal.LoadSigner(filepath.Join(dir, temporal.PrivateKeyFile)); err != nil || s == nil || !strings.HasPrefix(first, s.Public()) {
		t.Fatalf("the private key does not load as the printed key's: %v", err)
	}
	if code, _, errOut := p.Brood("fleet", "keygen"); code == 0 || !strings.Contains(errOut, "--force") {
		t.Fatalf("a second keygen: exit %d %q; want refused, naming --force", code, errOut)
	}
	code, out, _ = p.Brood("fleet", "keygen", "--force")
	if code != 0 || strings.TrimSpace(out) == first {
		t.Fatalf("keygen --force: exit %d, key %q (was %q)", code, out, first)
	}
}

// TestFleetUnknownVerb: a verb brood fleet does not have is a usage error
// (exit 2) naming it, as for every command; bare brood fleet is its help.
func TestFleetUnknownVerb(t *testing.T) {
	p := clitest.NewProject(t)
	if code, _, errOut := p.Brood("fleet", "bogus"); code != 2 || !strings.Contains(errOut, `unknown command "bogus" for brood fleet`) {
		t.Errorf("brood fleet bogus: exit %d, stderr %q; want 2 and the unknown command named", code, errOut)
	}
	if code, out, _ := p.Brood("fleet"); code != 0 || !strings.Contains(out, "keygen") {
		t.Errorf("brood fleet: exit %d, stdout %q; want its help", code, out)
	}
}
