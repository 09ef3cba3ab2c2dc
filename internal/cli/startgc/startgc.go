// Package startgc holds Go's collector off while brood's package
// initialisers run, and puts it back when main starts.
//
// brood links the SDKs of two model providers, the Temporal client and the
// MCP SDK; their initialisers allocate about 3.5 MiB before main, just under
// the runtime's first 4 MiB heap goal, so a collection ran in the middle of
// them (and with more linked, two): about a third of the CPU a child
// started as brood spends before main, and of the root's start. Nothing
// they allocate is garbage yet, so the collection found nothing to free.
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

// Restore puts the collector back at Go's default (GOGC=100) unless the
// user chose GOGC. main calls it before anything else.
func Restore() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(100)
	}
}
