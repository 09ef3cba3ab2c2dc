package protocol

import (
	"errors"
	"io"
)

// KindStart is the one message a warm child waits for before it reads its
// envelope (down, parent → child). A warm child is started ahead of its
// task, already in its own process group, cgroup and sandbox, with its
// task's command line; it initialises and then blocks on its stdin until
// this line arrives. EOF instead means it was never needed: it exits
// without reading anything of its task. Local: never relayed.
const KindStart Kind = "start"

// StartLine is Start on the wire, newline included.
var StartLine = []byte(`{"type":"start"}` + "\n")

// ErrNotStarted means a warm child's stdin ended, or carried something other
// than StartLine, before it was told to start: it must exit, having done
// nothing.
var ErrNotStarted = errors.New("protocol: stdin ended before the start message")

// ReadStart reads StartLine from r one byte at a time, so that nothing after
// it (the answers of the protocol proper) is consumed. Anything else is
// ErrNotStarted.
func ReadStart(r io.Reader) error {
	var b [1]byte
	for i := 0; i < len(StartLine); i++ {
		if _, err := io.ReadFull(r, b[:]); err != nil || b[0] != StartLine[i] {
			return ErrNotStarted
		}
	}
	return nil
}
