package call

import (
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/tool"
)

// The pieces every agent loop is assembled from, the root's (`brood run`)
// and a child's alike, so that both build them the same way.

// Transcript opens (or continues) the transcript at path and replays what
// it already holds: the conversation to continue and the usage so far.
func Transcript(path string, redact func(string) string) (*session.Writer, session.State, error) {
	tw, err := session.Open(path, session.Options{Redact: redact})
	if err != nil {
		return nil, session.State{}, err
	}
	recs, _, _ := session.ReadFile(tw.Path())
	return tw, session.Replay(recs), nil
}

// Permissions builds the tool rules of an agent from its records' rules
// plus the rules it always has (the delegation tools, which write nothing
// themselves) and any extra ones its caller grants.
func Permissions(p dispatch.Permissions, always []string, extraAllow ...string) (*tool.Permissions, error) {
	allow := append(append(append([]string(nil), always...), p.Allow...), extraAllow...)
	perms, err := tool.NewPermissions(p.Mode, allow, p.Deny, p.Ask)
	if err != nil {
		return nil, err
	}
	why := ""
	if p.OnlyFile != "" {
		why = " (" + p.OnlyFile + " is a project file, and the project is not trusted: its specifiers narrow the tool, they allow nothing; run `brood trust`)"
	}
	return perms.WithHeld(p.Held, p.HeldAlso).WithAskFrom(p.AskFrom).WithOnly(p.Only, why)
}
