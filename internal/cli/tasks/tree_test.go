package tasks_test

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/cli/tasks"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/shortid"
)

const treeScript = `
agents:
  root:
    - tools:
        - Task: {subagent_type: lead, description: "lead the scouts", prompt: "lead"}
        - Task: {subagent_type: scout, description: "scout alone", prompt: "alone"}
    - say: "root done"
  lead:
    - tools:
        - Task: {subagent_type: scout, description: "scout one", prompt: "one"}
        - Task: {subagent_type: scout, description: "scout two", prompt: "two"}
    - say: "lead done"
  scout:
    - say: "scouted"
`

// treeProject runs a nested fan-out (root → lead → two scouts, and a scout
// of the root's own) in real processes, with settings extra.
func treeProject(t *testing.T, extra string) *clitest.Project {
	t.Helper()
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("HOME", p.Home)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "lead.md"), "---\nname: lead\ndescription: leads\ndelegate: [scout]\n---\nYou lead.\n")
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "scout.md"), "---\nname: scout\ndescription: reads\ntools: Read\n---\nYou read.\n")
	spec := p.Script("tree.yaml", treeScript)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "model = \""+spec+"\"\nmaxSubagentDepth = 2\n"+extra)
	if code, out, errOut := p.Brood("run", "fan out"); code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	return p
}

func treeJSON(t *testing.T, p *clitest.Project, args ...string) []*tasks.Node {
	t.Helper()
	code, out, errOut := p.Brood(append([]string{"tasks", "tree", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("tasks tree --json: %d %s", code, errOut)
	}
	var trees []*tasks.Node
	if err := json.Unmarshal([]byte(out), &trees); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return trees
}

// checkRollUp holds every node's tree figures to its own plus its
// children's, all the way down.
func checkRollUp(t *testing.T, n *tasks.Node) {
	t.Helper()
	u, cost := n.Usage, 0.0
	if n.CostUSD != nil {
		cost = *n.CostUSD
	}
	for _, c := range n.Children {
		checkRollUp(t, c)
		u = u.Add(c.TreeUsage)
		cost += c.TreeCostUSD
	}
	if u != n.TreeUsage || math.Abs(cost-n.TreeCostUSD) > 1e-12 {
		t.Errorf("%s %s: tree usage %+v cost %v, want %+v %v", n.Agent, n.ID, n.TreeUsage, n.TreeCostUSD, u, cost)
	}
}

// TestTreeRollsUpUsageAndCost: the session's tree is root → lead → two
// scouts, plus the root's own scout, each with its own tokens and price
// ([prices.script] prices the scripted model here), rolled up.
func TestTreeRollsUpUsageAndCost(t *testing.T) {
	p := treeProject(t, "\n[prices.script]\ninput = 1000\noutput = 2000\n")
	trees := treeJSON(t, p)
	if len(trees) != 1 || trees[0].Kind != "session" || trees[0].Agent != "root" || trees[0].Status != "done" {
		t.Fatalf("trees: %+v", trees)
	}
	s := trees[0]
	if len(s.Children) == 2 && s.Children[0].Agent == "scout" {
		// Dispatched in the same turn: their ids say which started first.
		s.Children[0], s.Children[1] = s.Children[1], s.Children[0]
	}
	if len(s.Children) != 2 || s.Children[0].Agent != "lead" || s.Children[1].Agent != "scout" || len(s.Children[0].Children) != 2 {
		b, _ := json.MarshalIndent(s, "", " ")
		t.Fatalf("shape:\n%s", b)
	}
	for _, sc := range s.Children[0].Children {
		if sc.Agent != "scout" || sc.Depth != 2 || sc.Status != "done" || sc.Usage.Input == 0 || sc.CostUSD == nil || sc.WallMS <= 0 {
			t.Errorf("grandchild: %+v", sc)
		}
		if want := float64(sc.Usage.Input)*1000/1e6 + float64(sc.Usage.Output)*2000/1e6; math.Abs(*sc.CostUSD-want) > 1e-12 {
			t.Errorf("scout cost %v, want %v", *sc.CostUSD, want)
		}
	}
	checkRollUp(t, s)
	if !s.TreeCostComplete || s.TreeUsage.Input <= s.Usage.Input {
		t.Errorf("session roll-up: %+v", s)
	}

	// One task's subtree, and the same session by --session.
	lead := treeJSON(t, p, s.Children[0].ID)
	if len(lead) != 1 || lead[0].ID != s.Children[0].ID || lead[0].TreeUsage != s.Children[0].TreeUsage {
		t.Errorf("subtree: %+v", lead)
	}
	if by := treeJSON(t, p, "--session", s.ID); len(by) != 1 || by[0].TreeUsage != s.TreeUsage {
		t.Errorf("--session: %+v", by)
	}

	code, out, _ := p.Brood("tasks", "tree")
	var all []string
	var walk func(n *tasks.Node)
	walk = func(n *tasks.Node) {
		all = append(all, n.ID)
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, n := range treeJSON(t, p) {
		walk(n)
	}
	short := func(id string) string { return shortid.Prefix(id, all) }
	for _, w := range []string{"root " + short(s.ID) + " (session)", "─ lead " + short(s.Children[0].ID) + "  ", "├─ scout ", "└─ scout ", "─ scout " + short(s.Children[1].ID) + "  ", "TREE COST"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("text tree lacks %q:\n%s", w, out)
		}
	}
	// It fits 80 columns (main's was 164), a cut description ending in …;
	// --wide keeps every count.
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("a %d-column line: %q", n, l)
		}
	}
	if code, wide, _ := p.Brood("tasks", "tree", "--wide"); code != 0 || !strings.Contains(wide, "TREE CACHE W") || !strings.Contains(wide, "─ lead "+s.Children[0].ID) {
		t.Errorf("--wide:\n%s", wide)
	}
	if code, _, errOut := p.Brood("tasks", "tree", "01ARZ3NDEKTSV4RRFFQ69G5FAV"); code != 1 || !strings.Contains(errOut, "no task or session 01ARZ3NDEKTSV4RRFFQ69G5FAV") {
		t.Errorf("unknown root: %d %q", code, errOut)
	}
}

// TestTreeUnpricedShowsTokensOnly: without a price, no cost is made up.
func TestTreeUnpricedShowsTokensOnly(t *testing.T) {
	p := treeProject(t, "")
	s := treeJSON(t, p)[0]
	if s.CostUSD != nil || s.TreeCostUSD != 0 || s.TreeCostComplete || s.TreeUsage == (model.Usage{}) {
		t.Errorf("unpriced: cost %v tree %v complete %v usage %+v", s.CostUSD, s.TreeCostUSD, s.TreeCostComplete, s.TreeUsage)
	}
	_, out, _ := p.Brood("tasks", "tree")
	if strings.Contains(out, "$") || !strings.Contains(out, "- no price; + a sum leaving out models without one") {
		t.Errorf("text:\n%s", out)
	}
}
