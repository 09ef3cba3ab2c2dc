package sandbox

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/sandbox/sandboxtest"
)

// TestNoUnixSocketsForCommand: a command started from a thread under the
// unix ban cannot reach a server on a pathname unix socket (docker.sock,
// an agent, a bus), still connects to a loopback TCP server and still
// makes a socketpair; this process keeps its unix sockets.
func TestNoUnixSocketsForCommand(t *testing.T) {
	ln := sandboxtest.Greet(t, "tcp", "127.0.0.1:0", "hello\n")
	port := ln.Addr().(*net.TCPAddr).Port
	sock := filepath.Join(t.TempDir(), "svc.sock")
	sandboxtest.Greet(t, "unix", sock, "served\n")
	run := func(script string) string {
		ch := make(chan string, 1)
		OnThrowawayThread(func() {
			if _, err := NoUnixSocketsForCommand(); err != nil {
				ch <- "ban: " + err.Error()
				return
			}
			b, _ := exec.Command("bash", "-c", script).CombinedOutput()
			ch <- string(b)
		})
		return <-ch
	}
	unixConnect := "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(99))' " + sock + " 2>&1 || echo refused"
	if out := run(unixConnect); strings.Contains(out, "served") || !strings.Contains(out, "refused") {
		t.Errorf("a command under the ban reached a server on a unix socket: %q", out)
	}
	if out := run("exec 3<>/dev/tcp/127.0.0.1/" + itoa(port) + " && head -1 <&3"); !strings.Contains(out, "hello") {
		t.Errorf("a command under the unix ban lost TCP: %q", out)
	}
	if out := run("python3 -c 'import socket; a,b=socket.socketpair(); a.send(b\"x\"); print(b.recv(1))' && echo pair-ok"); !strings.Contains(out, "pair-ok") {
		t.Errorf("a command under the unix ban could not make a socketpair: %q", out)
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("this process lost its unix sockets: %v", err)
	}
	c.Close()
}
