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
	"runtime/debug"
)

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(-1)
	}
}

// Restore puts Go's default back (GOGC=100: a first heap goal of 4 MiB),
// unless the user chose GOGC. main calls it before anything else.
//
// It once set a first goal of 8 MiB (GOGC=200 until the first
// collection) so that the initialisers' 3.5 MiB did not start a collection
// as soon as main ran. They allocate about 1 MiB now, and the root alone
// allocates under 4 MiB in its whole run, so the default costs it no
// collection; while children run, the root's garbage (about 0.3 MiB a
// child: records, policies, the children's answers) stayed resident up to
// 8 MiB, 2-3 MiB more of the root's memory at K=16
// (docs/performance.md, "Memory").
func Restore() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(100)
	}
}
