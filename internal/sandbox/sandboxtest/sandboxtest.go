// Package sandboxtest is what the tests of confinement share: a loopback
// server for a confined command to try to reach, and the processes a test
// finds by their command line to see whether they escaped. Only tests
// import it; it imports nothing of brood's, so any package's own tests can.
package sandboxtest

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Greet listens on network ("tcp", "unix") at addr until the test ends;
// each connection is sent greeting (none when empty) and closed. A
// command that prints what it reads shows whether it got through.
func Greet(t testing.TB, network, addr, greeting string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if greeting != "" {
				c.Write([]byte(greeting))
			}
			c.Close()
		}
	}()
	return ln
}

// UniqueSleep is a sleep duration no other process on the machine uses, so
// that a test can find its own sleeper in /proc by its command line.
func UniqueSleep() string {
	return fmt.Sprintf("150.%d%d", os.Getpid(), time.Now().UnixNano()%1e9)
}

// LiveWith lists the live (non-zombie) processes whose command line holds
// arg.
func LiveWith(arg string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(b), arg) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			continue
		}
		out = append(out, pid)
	}
	return out
}
