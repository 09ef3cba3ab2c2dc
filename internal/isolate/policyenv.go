package isolate

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/broodhq/brood/internal/sandbox"
)

// EnvChildPolicy carries the policy ConfineChild built for a child to the
// child's RestrictChild, which would otherwise build it again from the
// envelope: the credential stores stat'ed, every kept and hidden path's
// links resolved, the host's /tmp listed (about 1.4 ms of a child's CPU,
// docs/performance.md). The parent's is the complete one: it also keeps
// the child's program readable, hides a worktree copy's real tree and the
// dispatcher's extra paths (a `brood mcp --http` token file), which the
// child cannot know. The environment is the parent's to set, at the exec;
// the child reads and removes it before anything else runs, so no
// grandchild inherits it. A long one (a Read deny matching thousands of
// files) rides a sealed memory file the entry names (passPolicy).
// A dispatcher passes none it inherited to its own children
// (spawn.childEnv): each gets the one built for it.
const EnvChildPolicy = "BROOD_CHILD_POLICY"

// passedPolicy is EnvChildPolicy's value: the policy, with what
// ChildPolicy said of it (needed), for the task directory it was built
// for. Every path goes as bytes (base64 in JSON): a path need not be
// UTF-8, and JSON would turn a stray byte into U+FFFD, another path (a
// Latin-1 home's ~/.ssh hidden under a name that does not exist).
type passedPolicy struct {
	Dir    []byte     `json:"dir"`
	Needed bool       `json:"needed"`
	Policy wirePolicy `json:"policy"`
	// ReadDenyHeld and ReadDenyWhy are ChildPolicy's ReadDeny (its paths
	// are in Policy.Hidden): whether the kernel hides what the child's
	// Read deny rules match. Missing, it is not held (fail closed: the
	// child's Bash is then checked per command).
	ReadDenyHeld bool   `json:"read_deny_held"`
	ReadDenyN    int    `json:"read_deny_n,omitempty"`
	ReadDenyWhy  string `json:"read_deny_why,omitempty"`
	// ReadDenyInTree are a writer's (ReadDeny.InTree), which the child
	// checks its mount namespace covers.
	ReadDenyWriter bool     `json:"read_deny_writer,omitempty"`
	ReadDenyInTree [][]byte `json:"read_deny_in_tree,omitempty"`
}

// wirePolicy is a sandbox.Policy with its paths as bytes
// (TestPassedPolicyKeepsEveryField: no field of Policy is left out).
type wirePolicy struct {
	ReadOnly, Network, MountsReadOnly    bool
	Writable, Hidden, HiddenAround, Keep [][]byte
}

func toWire(p sandbox.Policy) wirePolicy {
	return wirePolicy{ReadOnly: p.ReadOnly, Network: p.Network, MountsReadOnly: p.MountsReadOnly,
		Writable: pathBytes(p.Writable), Hidden: pathBytes(p.Hidden), HiddenAround: pathBytes(p.HiddenAround), Keep: pathBytes(p.Keep)}
}

func (w wirePolicy) policy() sandbox.Policy {
	return sandbox.Policy{ReadOnly: w.ReadOnly, Network: w.Network, MountsReadOnly: w.MountsReadOnly,
		Writable: pathStrings(w.Writable), Hidden: pathStrings(w.Hidden), HiddenAround: pathStrings(w.HiddenAround), Keep: pathStrings(w.Keep)}
}

func pathBytes(paths []string) [][]byte {
	if paths == nil {
		return nil
	}
	out := make([][]byte, len(paths))
	for i, p := range paths {
		out[i] = []byte(p)
	}
	return out
}

func pathStrings(paths [][]byte) []string {
	if paths == nil {
		return nil
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = string(p)
	}
	return out
}

// policyEntry is the environment entry that passes p (ChildPolicy's for
// the task directory dir, needed its verdict) to the child. withPaths
// keeps the paths it may not read, for a child that builds its own
// file-system layer: HiddenAround still whole, split by the child when it
// builds its rules (sandbox.Policy.HiddenPaths), so that an entry made in
// the host's /tmp since this call is hidden from it too, as when it built
// its policy itself. A child confined whole from its starting thread
// needs none of them (its Restrict only reports).
func policyEntry(dir string, p sandbox.Policy, needed, withPaths bool, rd ReadDeny) string {
	v := policyValue(dir, p, needed, withPaths, rd)
	if v == nil {
		return ""
	}
	return EnvChildPolicy + "=" + string(v)
}

// passPolicy passes cmd's child what policyEntry says, whatever its size:
// a Read deny matching thousands of files makes it longer than one
// environment string may be, and it then goes in a sealed memory file
// (sandbox.PassEnv).
func passPolicy(cmd *exec.Cmd, dir string, p sandbox.Policy, needed, withPaths bool, rd ReadDeny) error {
	v := policyValue(dir, p, needed, withPaths, rd)
	if v == nil {
		return nil
	}
	return sandbox.PassEnv(cmd, EnvChildPolicy, v)
}

// policyValue is EnvChildPolicy's value (policyEntry).
func policyValue(dir string, p sandbox.Policy, needed, withPaths bool, rd ReadDeny) []byte {
	if !withPaths {
		p.Hidden, p.HiddenAround, p.Keep = nil, nil, nil
	}
	b, err := json.Marshal(passedPolicy{Dir: []byte(filepath.Clean(dir)), Needed: needed, Policy: toWire(p),
		ReadDenyHeld: rd.Held, ReadDenyN: len(rd.Paths), ReadDenyWhy: rd.Why, ReadDenyWriter: rd.Writer, ReadDenyInTree: pathBytes(rd.InTree)})
	if err != nil {
		return nil // (it always marshals) the child builds its own
	}
	return b
}

// takePolicy is the policy the parent passed for the task directory dir,
// removed from the environment; ok is false when none was passed (a child
// started by hand, or by a parent that does not pass one). One passed for
// another directory, or unreadable, is an error: the child must not guess
// at its confinement.
func takePolicy(dir string) (p sandbox.Policy, needed, ok bool, err error) {
	p, needed, _, ok, err = takePolicyRD(dir)
	return p, needed, ok, err
}

// takePolicyRD is takePolicy with the passed ReadDeny (its Paths are
// counted only: they are in the policy's Hidden).
func takePolicyRD(dir string) (p sandbox.Policy, needed bool, rd ReadDeny, ok bool, err error) {
	v, found, err := sandbox.TakeEnv(EnvChildPolicy)
	if err != nil {
		return sandbox.Policy{}, false, rd, false, err
	}
	if !found {
		return sandbox.Policy{}, false, rd, false, nil
	}
	var pp passedPolicy
	if err := json.Unmarshal([]byte(v), &pp); err != nil {
		return sandbox.Policy{}, false, rd, false, fmt.Errorf("%s from the parent: %w", EnvChildPolicy, err)
	}
	if string(pp.Dir) != filepath.Clean(dir) {
		return sandbox.Policy{}, false, rd, false, fmt.Errorf("%s from the parent is for task directory %q, not %q", EnvChildPolicy, pp.Dir, dir)
	}
	rd = ReadDeny{Held: pp.ReadDenyHeld, Why: pp.ReadDenyWhy, Paths: make([]string, pp.ReadDenyN),
		Writer: pp.ReadDenyWriter, InTree: pathStrings(pp.ReadDenyInTree)}
	return pp.Policy.policy(), pp.Needed, rd, true, nil
}
