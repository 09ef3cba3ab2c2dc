// Package brood is brood's source tree, embedded: the proof that a
// brood-child beside brood is the same build when neither binary records a
// version or revision (GOFLAGS=-buildvcs=false, a build of a modified tree).
// Both binaries link it; internal/childexe compares its digests. Nothing
// reads it but that digest, so its pages are touched once per parent.
package brood

import "embed"

// Source is the module's Go source and module files as they were built.
//
//go:embed go.mod go.sum cmd internal
var Source embed.FS
