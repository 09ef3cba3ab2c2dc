// Package childexe finds the binary a parent runs for each subagent:
// brood-child, the lean build of the child protocol installed beside brood
// (`go install github.com/broodhq/brood/cmd/...@latest` installs both). It
// links only what a child needs — the agent loop, the tools, both provider
// SDKs, the sandbox — and none of the command tree, the terminal UI or the
// Temporal worker, whose package initialisers are most of a child's CPU.
// A brood-child is used only when its build info proves it is the same
// build as the parent; otherwise the parent runs itself as the child, as
// it always could.
package childexe

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// Name is the lean child's file name, beside brood.
const Name = "brood-child"

// Choice is the binary children run and why.
type Choice struct {
	Path string // the binary to execute
	Lean bool   // it is brood-child
	// Why says, when Lean is false, why brood-child was not used.
	Why string
}

// Find returns the child binary for a parent running as self (its
// os.Executable()): brood-child beside it when it is the same build, else
// self. A parent that is brood-child itself (a child that delegates) runs
// itself.
func Find(self string) Choice {
	if filepath.Base(self) == Name {
		return Choice{Path: self, Lean: true}
	}
	cand := filepath.Join(filepath.Dir(self), Name)
	st, err := os.Stat(cand)
	switch {
	case err != nil:
		return Choice{Path: self, Why: fmt.Sprintf("no %s beside %s (install both: go install github.com/broodhq/brood/cmd/...@latest)", Name, self)}
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
	if why := SameBuild(mine, theirs); why != "" {
		return Choice{Path: self, Why: fmt.Sprintf("%s is not the same build as %s: %s (reinstall both: go install github.com/broodhq/brood/cmd/...@latest)", cand, self, why)}
	}
	return Choice{Path: cand, Lean: true}
}

// SameBuild says why child is not provably built from the same source as
// parent ("" when it is): same toolchain, same main module at the same
// version — a released or pseudo-version, never a modified tree — and every
// module the child links at the version the parent links.
func SameBuild(parent, child *debug.BuildInfo) string {
	switch {
	case parent.GoVersion != child.GoVersion:
		return fmt.Sprintf("built with %s, brood with %s", child.GoVersion, parent.GoVersion)
	case parent.Main.Path != child.Main.Path:
		return fmt.Sprintf("module %s, brood's is %s", child.Main.Path, parent.Main.Path)
	case parent.Main.Version != child.Main.Version:
		return fmt.Sprintf("version %s, brood's is %s", child.Main.Version, parent.Main.Version)
	}
	if v := parent.Main.Version; v == "" || v == "(devel)" || strings.HasSuffix(v, "+dirty") {
		return fmt.Sprintf("version %q cannot be matched (a build of a modified tree, or without version control)", v)
	}
	if a, b := setting(parent, "vcs.revision"), setting(child, "vcs.revision"); a != b {
		return fmt.Sprintf("revision %s, brood's is %s", b, a)
	}
	deps := map[string]string{}
	for _, d := range parent.Deps {
		deps[d.Path] = modVersion(d)
	}
	for _, d := range child.Deps {
		if v, ok := deps[d.Path]; !ok || v != modVersion(d) {
			return fmt.Sprintf("links %s %s, brood links %q", d.Path, modVersion(d), v)
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
