package sandbox

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/sandbox/sandboxtest"
)

// TestNoNetworkForCommand: a command started from a thread under the ban
// cannot connect to a loopback TCP server (nor make a UDP socket), cannot
// connect to a server on a pathname unix socket (a local proxy is as good
// as the network), can still make a socketpair and a netlink socket, and
// this process itself still connects (TCP and unix).
func TestNoNetworkForCommand(t *testing.T) {
	ln := sandboxtest.Greet(t, "tcp", "127.0.0.1:0", "hello\n")
	port := ln.Addr().(*net.TCPAddr).Port
	sock := filepath.Join(t.TempDir(), "proxy.sock")
	sandboxtest.Greet(t, "unix", sock, "proxied\n")
	run := func(ban bool, script string) (string, error) {
		type res struct {
			out  string
			err  error
			held string
		}
		ch := make(chan res, 1)
		OnThrowawayThread(func() {
			var r res
			if ban {
				if r.held, r.err = NoNetworkForCommand(); r.err != nil {
					ch <- r
					return
				}
			}
			b, err := exec.Command("bash", "-c", script).CombinedOutput()
			r.out, r.err = string(b), err
			ch <- r
		})
		r := <-ch
		return r.out, r.err
	}
	connect := "exec 3<>/dev/tcp/127.0.0.1/" + itoa(port) + " && head -1 <&3"
	if out, err := run(false, connect); err != nil || !strings.Contains(out, "hello") {
		t.Fatalf("without the ban the command should connect: %v %q", err, out)
	}
	if out, err := run(true, connect); err == nil || strings.Contains(out, "hello") {
		t.Fatalf("a command under the ban connected to a loopback server: %q", out)
	}
	if out, err := run(true, "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' 2>&1 || echo refused"); err != nil || !strings.Contains(out, "refused") {
		t.Errorf("a command under the ban made a UDP socket: %v %q", err, out)
	}
	unixConnect := "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(99))' " + sock + " 2>&1"
	if out, err := run(false, unixConnect); err != nil || !strings.Contains(out, "proxied") {
		t.Fatalf("without the ban the command should reach the unix socket: %v %q", err, out)
	}
	if out, _ := run(true, unixConnect+" || echo refused"); strings.Contains(out, "proxied") || !strings.Contains(out, "refused") {
		t.Errorf("a command under the ban reached a server on a unix socket: %q", out)
	}
	if out, err := run(true, "python3 -c 'import socket; a,b=socket.socketpair(); a.send(b\"x\"); print(b.recv(1))' && python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)' && echo local-ok"); err != nil || !strings.Contains(out, "local-ok") {
		t.Errorf("a command under the ban could not make a socketpair or a netlink socket: %v %q", err, out)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("this process lost its network: %v", err)
	}
	c.Close()
	if c, err = net.Dial("unix", sock); err != nil {
		t.Fatalf("this process lost its unix sockets: %v", err)
	}
	c.Close()
	if held, ok := NetworkBan(); !ok || !strings.Contains(held, "seccomp") {
		t.Errorf("NetworkBan = %q, %v", held, ok)
	}
}

func itoa(n int) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}
