package guard

import (
	"fmt"
	"strings"
)

// Policies of a guardrail (settings: guardrails.<kind>).
const (
	// PolicyReject makes a concern of the kind reject the result: it is
	// `rejected` with the concern as its reason, and resumable with it.
	PolicyReject = "reject"
	// PolicyWarn makes it a Concern line only: the status stands.
	PolicyWarn = "warn"
)

// Kinds lists the guardrails, in the order Check runs them.
func Kinds() []string { return []string{KindShape, KindScope, KindEvidence, KindUnauthorized} }

// DefaultPolicy is a guardrail's policy when no setting names one: warn
// for shape (a report laid out otherwise is still a report), reject for
// scope, evidence and unauthorized, as the delegation-patterns seed's
// "Reject if" column has it.
func DefaultPolicy(kind string) string {
	if kind == KindShape {
		return PolicyWarn
	}
	return PolicyReject
}

// Policies maps a guardrail kind to its policy; a kind not in it (or "")
// has its DefaultPolicy.
type Policies map[string]string

// Of is the policy of kind.
func (p Policies) Of(kind string) string {
	if v := p[kind]; v == PolicyReject || v == PolicyWarn {
		return v
	}
	return DefaultPolicy(kind)
}

// CheckPolicy refuses a policy value that is neither reject nor warn ("" is
// the default).
func CheckPolicy(v string) error {
	switch v {
	case "", PolicyReject, PolicyWarn:
		return nil
	}
	return fmt.Errorf("%q is not a guardrail policy: use reject or warn", v)
}

// Rejecting are the concerns whose kind's policy is reject.
func Rejecting(cs []Concern, p Policies) []Concern {
	var out []Concern
	for _, c := range cs {
		if p.Of(c.Kind) == PolicyReject {
			out = append(out, c)
		}
	}
	return out
}

// Reason is the one-line reason of a rejection: its concerns, joined.
func Reason(cs []Concern) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}

// Said is Reason for a result's error, where the kinds are said already
// ("rejected by its parent's guardrails (unauthorized): ..."): each
// concern's text without its kind when they are of one kind, else
// Reason.
func Said(cs []Concern) string {
	for _, c := range cs {
		if c.Kind != cs[0].Kind {
			return Reason(cs)
		}
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Text
	}
	return strings.Join(parts, "; ")
}

// FollowUp is the follow-up a rejected task is resumed with when none is
// given: the reason, and what to do about it.
func FollowUp(reason string) string {
	return "Your parent rejected your last report: " + reason +
		". Fix what this says (do the work, or run the check, that your report claims), then report again with the evidence; if it cannot be done, say so plainly instead of claiming it."
}
