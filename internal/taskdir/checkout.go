package taskdir

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// CheckoutState is the directory of brood's own records about one git
// checkout (its fleet calls' sent starts and landings, the submitter's
// capture index): StateBase/checkouts/H, H the first 32 hex digits of the
// SHA-256 of commonDir, the checkout's common git dir as the caller
// resolved it (absolute, links followed). It lives outside every tree a
// child may write and is hidden from every child with the rest of
// StateBase (isolate.stateBaseHidden), where a record under the git dir
// is only as safe as the kernel's hold of it. "" without a home. Nothing
// is made: the caller makes what it writes (0700).
func CheckoutState(commonDir string) string {
	base := StateBase()
	if base == "" || !filepath.IsAbs(commonDir) {
		return ""
	}
	sum := sha256.Sum256([]byte(filepath.Clean(commonDir)))
	return filepath.Join(base, "checkouts", hex.EncodeToString(sum[:16]))
}
