package childrun

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox/sandboxtest"
)

// TestHookWithoutUnixSockets: a hook a child runs for its own tool calls
// is started as its Bash commands are: without unix sockets, unless the
// envelope keeps them (the user's sandbox.unix_sockets).
func TestHookWithoutUnixSockets(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 to open a unix socket with")
	}
	sock := filepath.Join(t.TempDir(), "svc.sock")
	sandboxtest.Greet(t, "unix", sock, "served\n")
	for _, tc := range []struct {
		name string
		keep bool
		want string
	}{{"banned", false, "refused"}, {"kept", true, "served"}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			h := hookPlace(&dispatch.Envelope{Workspace: dir, ProjectRoot: dir, UnixSockets: tc.keep}, dir, true)
			var out strings.Builder
			cmd := exec.Command("python3", "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(99))", sock)
			cmd.Stdout, cmd.Stderr = &out, &out
			wait, err := h.Start(cmd)
			if err != nil {
				t.Fatal(err)
			}
			if wait() != nil {
				out.WriteString("refused")
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("the hook's unix socket: %q, want %q", out.String(), tc.want)
			}
		})
	}
}
