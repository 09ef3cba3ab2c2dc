package mcpclient

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/sandbox/sandboxtest"
)

// TestStdioServerWithoutUnixSockets: a child's stdio MCP server is
// started as its Bash commands are: without unix sockets (it cannot reach
// a service listening on one), unless the child keeps them
// (sandbox.unix_sockets: Options.NoUnixSockets false).
func TestStdioServerWithoutUnixSockets(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 to open a unix socket with")
	}
	sock := filepath.Join(t.TempDir(), "svc.sock")
	sandboxtest.Greet(t, "unix", sock, "served\n")
	for _, tc := range []struct {
		name   string
		noUnix bool
		want   string
	}{{"banned", true, "refused"}, {"kept", false, "served"}} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			spec := mcpspec.Spec{Command: "python3", Args: []string{"-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(99))", sock}}
			tr, err := transportFor(spec, Options{NoUnixSockets: tc.noUnix, Stderr: &out})
			if err != nil {
				t.Fatal(err)
			}
			ct := tr.(*commandTransport)
			ct.cmd.Stdout = &out
			c, err := ct.start()
			if err != nil {
				t.Fatal(err)
			}
			if c.Wait() != nil {
				out.WriteString("refused")
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("the server's unix socket: %q, want %q", out.String(), tc.want)
			}
		})
	}
}
