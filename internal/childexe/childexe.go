// Package childexe finds the binary a parent runs for each subagent that
// cannot delegate: brood-child or brood-child-openai, the lean builds of
// the child protocol installed beside brood (`go install
// github.com/broodhq/brood/cmd/...@latest` installs all three). Each links
// only what such a child needs — the agent loop, the tools, one provider
// SDK, the sandbox — and none of the command tree, the terminal UI, the
// Temporal worker, the other SDK or the exporters, whose package
// initialisers are most of a child's CPU. A lean binary is used only when
// its build info proves it is the same build as the parent — or, when the
// build info names no source version (GOFLAGS=-buildvcs=false, a modified
// tree), when both carry the same source digest stamped at build time
// (scripts/build: StampVar), or the lean binary is the parent's very bytes;
// otherwise the parent runs itself as the child, as it always could.
package childexe

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// Name is the lean child's file name, beside brood: the child binary for
// models served by the Anthropic API (and the scripted model). NameOpenAI
// is the one for OpenAI-compatible servers. Each links one provider SDK:
// the other's package initialisers are most of what is left of a lean
// child's start-up (docs/performance.md). A child that may delegate runs
// brood itself, which links both.
const (
	Name       = "brood-child"
	NameOpenAI = "brood-child-openai"
)

// NameFleet is the binary that links the Temporal fleet (brood worker,
// brood fleet, --engine temporal), beside brood and paired with it by the
// same rule as the lean children (FindNamed): brood hands it the commands
// that need the fleet, so that brood itself links none of it.
const NameFleet = "brood-fleet"

// NameBrood is brood's own file name: what brood-fleet (a worker) runs for
// a child that may delegate, when it is beside it and the same build (a
// child never opens the fleet).
const NameBrood = "brood"

// ForAPI is the lean child binary's name for a wire API
// (provider.APIOpenAI is "openai"; anything else is served by Name).
func ForAPI(api string) string {
	if api == "openai" {
		return NameOpenAI
	}
	return Name
}

// Choice is the binary children run and why.
type Choice struct {
	Path string // the binary to execute
	Lean bool   // it is brood-child
	// Why says, when Lean is false, why brood-child was not used.
	Why string
}

// Find returns the child binary for a parent running as self (its
// os.Executable()): brood-child beside it when it is the same build, else
// self.
func Find(self string) Choice { return FindNamed(self, Name) }

// FindNamed is Find for the lean binary called name (Name, NameOpenAI).
func FindNamed(self, name string) Choice {
	if b := filepath.Base(self); b == Name || b == NameOpenAI {
		return Choice{Path: self, Lean: true} // never a parent (it does not delegate); kept for safety
	}
	cand := filepath.Join(filepath.Dir(self), name)
	st, err := os.Stat(cand)
	switch {
	case err != nil:
		return Choice{Path: self, Why: fmt.Sprintf("no %s beside %s (install them together: go install github.com/broodhq/brood/cmd/...@latest)", name, self)}
	case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
		return Choice{Path: self, Why: fmt.Sprintf("%s is not an executable file", cand)}
	}
	mine, ok := debug.ReadBuildInfo()
	if !ok {
		return Choice{Path: self, Why: "this binary carries no build info"}
	}
	theirs, err := buildinfo.ReadFile(cand)
	if err != nil {
		return Choice{Path: self, Why: fmt.Sprintf("%s: %v", cand, err)}
	}
	if name == NameFleet {
		if why := notFleet(self, cand, theirs); why != "" {
			return Choice{Path: self, Why: why}
		}
	}
	why, unversioned := sameBuild(mine, theirs, name == NameFleet)
	if unversioned && name == NameFleet {
		// brood and brood-fleet are never one file: no bytes to compare.
		why = "neither binary records the source it was built from (build them with scripts/build, which stamps its digest, or run brood-fleet directly)"
	} else if unversioned {
		// Nothing in the build info names the source, and no stamp:
		// only the same bytes prove one build (remembered: cache.go).
		why = sameSourceCached(self, cand, func() string { return sameBytes(self, cand) })
	}
	if why != "" {
		return Choice{Path: self, Why: fmt.Sprintf("%s is not the same build as %s: %s (reinstall them together: go install github.com/broodhq/brood/cmd/...@latest)", cand, self, why)}
	}
	return Choice{Path: cand, Lean: true}
}

// FleetModule is the module only a binary that links the Temporal fleet
// lists in its build info.
const FleetModule = "go.temporal.io/sdk"

// notFleet says why cand, whose build info is bi, cannot be the brood-fleet
// beside self ("" when it can): it must be another file than self and link
// the Temporal SDK. A link to, or copy of, brood would otherwise pass the
// pairing and brood hand its commands to itself without end.
func notFleet(self, cand string, bi *debug.BuildInfo) string {
	si, err1 := os.Stat(self)
	ci, err2 := os.Stat(cand)
	if err1 == nil && err2 == nil && os.SameFile(si, ci) {
		return fmt.Sprintf("%s is %s itself (a link), not brood-fleet: install brood-fleet there (go install github.com/broodhq/brood/cmd/...@latest)", cand, self)
	}
	for _, d := range bi.Deps {
		if d.Path == FleetModule {
			return ""
		}
	}
	return fmt.Sprintf("%s links no Temporal SDK (%s): it is not brood-fleet (a copy of brood?); install brood-fleet there (go install github.com/broodhq/brood/cmd/...@latest)", cand, FleetModule)
}

// SameBuild says why child is not provably built from the same source as
// parent ("" when it is): same toolchain, build settings and main module
// at the same version and revision, and every module the child links at
// the version the parent links. A version that names no source — a build
// of a modified tree, or without version control — cannot be matched
// here unless both carry the same source digest stamped at build time
// (StampVar, in -ldflags, which must already match); else unversioned is
// true, everything else matched, and only the binaries' bytes can decide.
func SameBuild(parent, child *debug.BuildInfo) (why string, unversioned bool) {
	return sameBuild(parent, child, false)
}

// sameBuild is SameBuild; with wider, child links more than parent (brood-
// fleet beside brood: the fleet's modules), and only the modules both
// link must agree (the main module's version, revision or stamp pins the
// rest).
func sameBuild(parent, child *debug.BuildInfo, wider bool) (why string, unversioned bool) {
	switch {
	case parent.GoVersion != child.GoVersion:
		return fmt.Sprintf("built with %s, brood with %s", child.GoVersion, parent.GoVersion), false
	case parent.Main.Path != child.Main.Path:
		return fmt.Sprintf("module %s, brood's is %s", child.Main.Path, parent.Main.Path), false
	case parent.Main.Version != child.Main.Version:
		return fmt.Sprintf("version %s, brood's is %s", child.Main.Version, parent.Main.Version), false
	}
	if a, b := setting(parent, "vcs.revision"), setting(child, "vcs.revision"); a != b {
		return fmt.Sprintf("revision %s, brood's is %s", b, a), false
	}
	if why := sameSettings(parent, child); why != "" {
		return why, false
	}
	deps := map[string]string{}
	for _, d := range parent.Deps {
		deps[d.Path] = modVersion(d)
	}
	for _, d := range child.Deps {
		v, ok := deps[d.Path]
		if !ok && wider {
			continue
		}
		if !ok || v != modVersion(d) {
			return fmt.Sprintf("links %s %s, brood links %q", d.Path, modVersion(d), v), false
		}
	}
	if v := parent.Main.Version; v == "" || v == "(devel)" || strings.HasSuffix(v, "+dirty") || setting(parent, "vcs.modified") == "true" {
		if stampOf(parent) != "" && stampOf(parent) == stampOf(child) {
			return "", false // one stamped source digest (sameSettings compared -ldflags)
		}
		return fmt.Sprintf("version %q cannot be matched (a build of a modified tree, or without version control)", v), true
	}
	return "", false
}

// sameSettings compares the build settings (flags, tags, cgo, target).
func sameSettings(parent, child *debug.BuildInfo) string {
	mine, theirs := map[string]string{}, map[string]string{}
	for _, s := range parent.Settings {
		mine[s.Key] = s.Value
	}
	for _, s := range child.Settings {
		theirs[s.Key] = s.Value
		if v, ok := mine[s.Key]; !ok || v != s.Value {
			return fmt.Sprintf("built with %s=%s, brood with %q", s.Key, s.Value, v)
		}
	}
	for _, s := range parent.Settings {
		if _, ok := theirs[s.Key]; !ok {
			return fmt.Sprintf("built without %s, brood with %s=%s", s.Key, s.Key, s.Value)
		}
	}
	return ""
}

func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

func modVersion(m *debug.Module) string {
	v := m.Version + " " + m.Sum
	if m.Replace != nil {
		v += " => " + modVersion(m.Replace)
	}
	return v
}
