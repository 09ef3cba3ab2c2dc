package sandbox

import (
	"net"
	"os/exec"
	"strings"
	"testing"
)

// TestNoNetworkForCommand: a command started from a thread under the ban
// cannot connect to a loopback TCP server (nor make a UDP socket), can
// still use a unix socket, and this process itself still connects.
func TestNoNetworkForCommand(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
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
	if out, err := run(true, "python3 -c 'import socket; socket.socket(socket.AF_UNIX)' && echo unix-ok"); err != nil || !strings.Contains(out, "unix-ok") {
		t.Errorf("a command under the ban could not make a unix socket: %v %q", err, out)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("this process lost its network: %v", err)
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
