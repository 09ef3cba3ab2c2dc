package temporal

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
)

// TestFleetRefusalAdvisesTheWorker (fleetqa4 P3): a permission refusal
// from a fleet call says the rule goes in the worker's settings and the
// worker is restarted, never --allow (which the submitter cannot pass on
// the fleet), whole or cut; that its project's file counts only once the
// project is trusted there, its user's settings being the other place
// (issue 26 F1); any other text is kept as it is.
func TestFleetRefusalAdvisesTheWorker(t *testing.T) {
	const head = `unauthorized: Bash "go test" was refused: permission denied: Bash "go test" needs approval (no allow rule matches) `
	for _, tc := range []struct {
		name, in, want string
	}{
		{"whole", head + `and no one is here to give it; to allow it add "Bash(go test:*)" and "Bash(go vet:*)" to [permissions] allow in .brood/settings.toml, or pass --allow 'Bash(go test:*)' --allow 'Bash(go vet:*)'`,
			head + `and no one is here to give it; the worker's settings decide on the fleet (--allow is not the submitter's): to allow it, where brood worker runs add "Bash(go test:*)" and "Bash(go vet:*)" to [permissions] allow in its user's ~/.config/brood/settings.toml, or in its project's .brood/settings.toml once that project is trusted there (brood trust, or brood worker --trust-project: an untrusted project's allow rules are not applied), then restart the worker`},
		{"cut", head + `and no one is here to give it; to allow it add "Bash(go test:*)" and "…`,
			head + `and no one is here to give it; the worker's settings decide on the fleet (--allow is not the submitter's): to allow it, where brood worker runs add "Bash(go test:*)" and "…`},
		{"a program of the repository's", head + `and no one is here to give it; to allow it add "Bash(./build.sh:*)" to [permissions] allow in .brood/settings.local.toml (this project only: edited by hand, it needs brood trust), or pass --allow 'Bash(./build.sh:*)'`,
			head + `and no one is here to give it; the worker's settings decide on the fleet (--allow is not the submitter's): to allow it, where brood worker runs add "Bash(./build.sh:*)" to [permissions] allow in its project's .brood/settings.toml once that project is trusted there (brood trust, or brood worker --trust-project: an untrusted project's allow rules are not applied), then restart the worker`},
		{"no rule to keep", head + `and no one is here to give it; no rule to keep is suggested (one for "python3" would allow far more than this call): approve the call when asked (run brood without -p), or pass --allow 'Bash(python3 -c '\''print(1)'\'')' for one run`,
			head + `and no one is here to give it; no rule to keep is suggested (one for "python3" would allow far more than this call): run the call where you are asked (brood without --engine temporal): the fleet's worker asks no one, and --allow is not the submitter's`},
		{"another error", "the model answered nothing", "the model answered nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &call.Result{Error: tc.in, Text: "<subagent-result>\n</subagent-result>\nConcern: " + tc.in + "\n", Failures: []string{tc.in}}
			fleetAdvice(r)
			if r.Error != tc.want || r.Failures[0] != tc.want || !strings.Contains(r.Text, "Concern: "+tc.want+"\n") {
				t.Errorf("error %q\nwant  %q\ntext %q", r.Error, tc.want, r.Text)
			}
			if strings.Contains(tc.in, "--allow '") && strings.Contains(r.Error, "pass --allow") || strings.Contains(tc.in, "local.toml") && strings.Contains(r.Error, "user's") {
				t.Errorf("the advice still says to pass --allow: %s", r.Error)
			}
		})
	}
}
