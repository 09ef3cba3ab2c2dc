// Package sandboxtest is what the tests of a tool's network ban share: a
// loopback server for a confined command to try to reach. Only tests
// import it.
package sandboxtest

import (
	"net"
	"testing"
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
