package modeltest

import (
	"net"
	"sync"
	"testing"
)

// Silent is a loopback server that accepts connections and never answers:
// a model endpoint that hangs. Conns yields once per accepted connection.
type Silent struct {
	URL   string
	Conns <-chan struct{}
}

// NewSilent starts a Silent server; it closes when the test ends.
func NewSilent(t *testing.T) *Silent {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan struct{}, 64)
	var mu sync.Mutex
	var open []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c) // held open, never read or answered
			mu.Unlock()
			select {
			case conns <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	return &Silent{URL: "http://" + ln.Addr().String(), Conns: conns}
}
