package attack_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/sandbox/sandboxtest"
)

// TestWriterReachesNoUnixSocketService is red team 4's P2-2: a writer
// (network on, the default) refused a write outside its tree would make
// it through a service of the user's on a pathname unix socket (docker,
// the systemd user manager, an agent), which acts outside the sandbox and
// outlives the task. Its tool processes make no unix socket; the user's
// own sandbox.unix_sockets = true gives them back.
func TestWriterReachesNoUnixSocketService(t *testing.T) {
	needLandlock(t)
	for _, allow := range []bool{false, true} {
		name := "denied"
		if allow {
			name = "allowed by the user"
		}
		t.Run(name, func(t *testing.T) {
			p := newProject(t, nil)
			if allow {
				writeFile(t, filepath.Join(p.home, ".config", "brood", "settings.toml"), "[sandbox]\nunix_sockets = true\n")
			}
			sock := filepath.Join(t.TempDir(), "svc.sock")
			sandboxtest.Greet(t, "unix", sock, "SERVICE-REACHED\n")
			res := p.inPlaceBash("unix", "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(99).decode())' "+sock+" 2>&1 || echo REFUSED")
			reached := strings.Contains(res, "SERVICE-REACHED")
			if reached != allow || (!allow && !strings.Contains(res, "REFUSED")) {
				t.Errorf("unix_sockets %v: the writer reached the service: %v\n%s", allow, reached, res)
			}
		})
	}
}
