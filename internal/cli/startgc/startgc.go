// Package startgc holds Go's collector off while brood's package
// initialisers run, and puts it back when main starts.
//
// brood links the SDKs of two model providers, the Temporal client and the
// MCP SDK; their initialisers allocate about 3.5 MiB before main, around
// the runtime's first 4 MiB heap goal, so a collection ran in the middle
// of them (with more linked, two): about a third of the CPU a child
// started as brood spent before main, to free 2 MiB a short process never
// needs back.
//
// Imported first by cmd/brood (its path sorts before every heavy package:
// Go initialises packages in import-path order once their imports are);
// a GOGC the user set is left alone.
package startgc

import (
	"os"
	"runtime"
	"runtime/debug"
)

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(-1)
	}
}

// firstGoal is the GC percentage until the first collection: a heap goal
// of at least 8 MiB instead of 4, so that the initialisers' 3.5 MiB (live,
// nearly all of it) does not start a collection as soon as main runs.
const firstGoal = 200

// sentinel is garbage from the start; its finalizer runs after the first
// collection. (A pointer field keeps it out of the tiny allocator, whose
// blocks' finalizers may never run.)
type sentinel struct {
	_ *int
	_ [16]byte
}

// Restore lets the collector run again, unless the user chose GOGC: at
// firstGoal until the first collection ends, then at Go's default
// (GOGC=100). main calls it before anything else. The channel is closed
// once the default is back (or at once when the user chose GOGC).
func Restore() <-chan struct{} {
	done := make(chan struct{})
	if os.Getenv("GOGC") != "" {
		close(done)
		return done
	}
	debug.SetGCPercent(firstGoal)
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		debug.SetGCPercent(100)
		close(done)
	})
	return done
}
