package run_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestWebFetchCLI: brood run's root fetches a loopback page only under a
// rule naming its host; the page comes back as markdown inside an
// untrusted envelope. Without a rule the headless run is refused with the
// rule to add; a bare WebFetch rule does not open loopback.
func TestWebFetchCLI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><body><h2>Release notes</h2><p>Version <code>1.2</code> is out.</p></body></html>`))
	}))
	t.Cleanup(srv.Close)
	p := clitest.NewProject(t)
	mdl := p.Script("s.yaml", `agents:
  root:
    - tools:
        - WebFetch: {url: "`+srv.URL+`/notes", prompt: "which version?"}
    - say: "RESULT={{result 0}}"
`)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"explicit rule", []string{"--allowedTools", "WebFetch(domain:127.0.0.1)"},
			[]string{`trust="untrusted"`, "## Release notes", "Version `1.2` is out.", "which version?"}},
		{"no rule", nil, []string{"permission denied", `"WebFetch(domain:127.0.0.1)"`}},
		{"bare rule keeps loopback shut", []string{"--allowedTools", "WebFetch"}, []string{"private, loopback or link-local"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"-p", "--model", mdl}, tc.args...), "--", "fetch it")
			code, out, errOut := p.Brood(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s %s", code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestWebFetchChild: a subagent (a real child process) fetches under the
// project's rule; one whose definition says `network: none` is refused by
// the tool, and nothing is fetched for it.
func TestWebFetchChild(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("plain notes v7"))
	}))
	t.Cleanup(srv.Close)
	p := clitest.NewDispatchProject(t, false)
	for name, net := range map[string]string{"fetcher": "on", "offline": "none"} {
		clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", name+".md"),
			"---\nname: "+name+"\ndescription: fetches\ntools: WebFetch\nnetwork: "+net+"\n---\nYou fetch.\n")
	}
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "[permissions]\nallow = [\"WebFetch(domain:127.0.0.1)\"]\n")
	step := `    - tools:
        - WebFetch: {url: "` + srv.URL + `/n", prompt: "version?"}
    - say: "CHILD={{result 0}}"
`
	mdl := p.Script("c.yaml", "agents:\n  fetcher:\n"+step+"  offline:\n"+step)
	code, out, errOut := p.Brood("subagent", "--model", mdl, "fetcher", "fetch")
	if code != 0 || !strings.Contains(out, "plain notes v7") || hits.Load() != 1 {
		t.Fatalf("fetcher: exit %d, hits %d:\n%s\n%s", code, hits.Load(), out, errOut)
	}
	code, out, errOut = p.Brood("subagent", "--model", mdl, "offline", "fetch")
	if code != 0 || !strings.Contains(out, "network: none") || hits.Load() != 1 {
		t.Fatalf("offline: exit %d, hits %d:\n%s\n%s", code, hits.Load(), out, errOut)
	}
}
