package childexe

import (
	"encoding/json"
	"path/filepath"
	"slices"
)

// EnvVerified carries a parent's verified choices down to a child that
// runs brood (one that may delegate), so that the child does not repeat the
// check (for an unstamped, unversioned build: both binaries hashed, tens
// of ms of CPU) before its own first
// leaf. It says only "the lean binaries named here, beside this brood,
// were proven the same build": a child honours it only for the lean binary
// beside its own executable, when that is the brood named. Only the
// parent sets a child's environment; whoever could set it otherwise (the
// user, or a model's shell inside a child starting a brood of its own) can
// already run any binary there, and the claim reaches no further than that
// process's own children.
const EnvVerified = "BROOD_LEAN_VERIFIED"

type verified struct {
	Brood string   `json:"brood"`
	Lean  []string `json:"lean"`
}

// EncodeVerified is EnvVerified's value: brood, and the lean binaries
// beside it that were proven its build.
func EncodeVerified(brood string, lean []string) string {
	b, _ := json.Marshal(verified{Brood: brood, Lean: lean})
	return string(b)
}

// Inherited is the lean binary called name beside self that value (an
// EnvVerified) vouches for, if it does: value must name self as its brood
// and that very path among its lean binaries.
func Inherited(value, self, name string) (string, bool) {
	var v verified
	if value == "" || json.Unmarshal([]byte(value), &v) != nil || v.Brood == "" || v.Brood != self {
		return "", false
	}
	want := filepath.Join(filepath.Dir(self), name)
	if !slices.Contains(v.Lean, want) {
		return "", false
	}
	return want, true
}
