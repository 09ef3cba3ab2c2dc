package cmdutil

import "strings"

// AliasRules adds brood's spelling of each rule that uses Claude Code's
// newer names: Agent for Task, Explore and Plan for the explore and plan
// agents (Agent(Explore) is Task(explore)).
func AliasRules(rules []string) []string {
	out := append([]string(nil), rules...)
	for _, r := range rules {
		name, arg, hasArg := strings.Cut(r, "(")
		if name != "Agent" && name != "Task" {
			continue
		}
		a := strings.TrimSuffix(arg, ")")
		if a == "Explore" || a == "Plan" {
			a = strings.ToLower(a)
		}
		b := "Task"
		if hasArg {
			b += "(" + a + ")"
		}
		if b != r {
			out = append(out, b)
		}
	}
	return out
}
