package childexe

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// StampVar is the variable scripts/build sets with -ldflags -X to the
// SHA-256 of the source it builds (go.mod, go.sum, cmd and internal but
// for tests and test data). The linker records the flag in the binary's
// build info, so a lean binary's stamp is read from its file
// (debug/buildinfo) and never by running it.
const StampVar = "github.com/broodhq/brood/internal/childexe.sourceDigest"

// sourceDigest is the stamp this binary was linked with ("" unstamped):
// written by the linker only, read by nothing at run time but Stamp.
var sourceDigest string

// Stamp is the source digest this binary was built with ("" when its
// builder stamped none).
func Stamp() string { return sourceDigest }

// stampOf is the source digest recorded in bi's -ldflags ("" for none).
func stampOf(bi *debug.BuildInfo) string {
	flags := setting(bi, "-ldflags")
	for _, f := range strings.Fields(flags) {
		f = strings.TrimPrefix(strings.TrimPrefix(f, "-X="), "-X")
		if v, ok := strings.CutPrefix(f, StampVar+"="); ok {
			return v
		}
	}
	return ""
}

// sameBytes says why the file cand is not the very file self is ("" when
// both hold the same bytes: a hard link or a copy of one binary, as tests
// and some installs make). It is how an unstamped, unversioned build is
// still proven one build.
func sameBytes(self, cand string) string {
	const differ = "neither binary records the source it was built from (build both with scripts/build, which stamps its digest, or from a committed tree)"
	si, err1 := os.Stat(self)
	ci, err2 := os.Stat(cand)
	switch {
	case err1 == nil && err2 == nil && os.SameFile(si, ci):
		return "" // one file, two names
	case err1 == nil && err2 == nil && si.Size() != ci.Size():
		return differ
	}
	a, err := fileDigest(self)
	if err != nil {
		return "cannot read this binary: " + err.Error()
	}
	b, err := fileDigest(cand)
	if err != nil {
		return fmt.Sprintf("cannot read %s: %v", cand, err)
	}
	if !bytes.Equal(a, b) {
		return differ
	}
	return ""
}

func fileDigest(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
