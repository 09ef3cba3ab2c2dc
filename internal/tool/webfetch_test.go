package tool

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func webServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<html><head><title>t</title><script>alert("x")</script></head><body>
<h1>Hello  web</h1><p>See <a href="/docs">the docs</a> and <b>bold</b>.</p>
<ul><li>one</li><li>two</li></ul><pre>x := 1
y := 2</pre><p>closing &lt;/web-content&gt; tag</p></body></html>`))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(strings.Repeat("a", webFetchResultCap+500)))
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n"))
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func webCall(t *testing.T, env *Env, u string) Result {
	t.Helper()
	in, _ := json.Marshal(map[string]string{"url": u, "prompt": "summarise"})
	return NewSet(&WebFetch{}).Run(context.Background(), env, "WebFetch", in)
}

func webPerms(t *testing.T, allow ...string) *Permissions {
	t.Helper()
	p, err := NewPermissions("default", allow, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWebFetch(t *testing.T) {
	srv := webServer(t)
	su, _ := url.Parse(srv.URL)
	port := su.Port()
	explicit := "WebFetch(domain:127.0.0.1)"
	tests := []struct {
		name      string
		env       Env
		url       string
		wantErr   bool
		want      []string
		forbidden []string
	}{
		{name: "explicit rule fetches loopback as markdown", env: Env{Perms: webPerms(t, explicit)}, url: srv.URL + "/page",
			want:      []string{`trust="untrusted"`, "# Hello web", "[the docs](/docs)", "**bold**", "- one", "- two", "```\nx := 1\ny := 2\n```", "&lt;/web-content>", "Your prompt for it: summarise"},
			forbidden: []string{"alert", "<title>"}},
		{name: "no rule headless is denied", env: Env{Perms: webPerms(t)}, url: srv.URL + "/page", wantErr: true,
			want: []string{"permission denied", "WebFetch(domain:127.0.0.1)"}},
		{name: "bare allow does not open loopback", env: Env{Perms: webPerms(t, "WebFetch")}, url: srv.URL + "/page", wantErr: true,
			want: []string{"private, loopback or link-local"}},
		{name: "a name resolving to loopback is refused", env: Env{Perms: webPerms(t, "WebFetch", "WebFetch(domain:127.0.0.1)")}, url: "http://localhost:" + port + "/page", wantErr: true,
			want: []string{"localhost resolves to", "private, loopback or link-local"}},
		{name: "deny rule beats a bare allow", env: Env{Perms: mustPerms(t, []string{"WebFetch"}, []string{"WebFetch(domain:127.0.0.1)"})}, url: srv.URL + "/page", wantErr: true,
			want: []string{"permission denied", "matched deny rule"}},
		{name: "network none refuses", env: Env{Perms: webPerms(t, explicit), NoNetwork: true}, url: srv.URL + "/page", wantErr: true,
			want: []string{"network: none"}},
		{name: "redirect to an unallowed host is refused", env: Env{Perms: webPerms(t, explicit)}, url: srv.URL + "/hop?to=" + url.QueryEscape("http://localhost:"+port+"/page"), wantErr: true,
			want: []string{"redirect to", "refused"}},
		{name: "redirect within the allowed host is followed", env: Env{Perms: webPerms(t, explicit)}, url: srv.URL + "/hop?to=/page",
			want: []string{"# Hello web"}},
		{name: "large result is cut with a note", env: Env{Perms: webPerms(t, explicit)}, url: srv.URL + "/big",
			want: []string{"content cut at 100000"}},
		{name: "binary content is refused", env: Env{Perms: webPerms(t, explicit)}, url: srv.URL + "/png", wantErr: true,
			want: []string{"image/png, not text"}},
		{name: "non-http scheme is refused", env: Env{Perms: webPerms(t, "WebFetch")}, url: "file:///etc/passwd", wantErr: true,
			want: []string{"http:// or https://"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := webCall(t, &tc.env, tc.url)
			if r.IsError != tc.wantErr {
				t.Fatalf("IsError = %v, want %v: %s", r.IsError, tc.wantErr, r.Content)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Content, w) {
					t.Errorf("result lacks %q:\n%s", w, r.Content)
				}
			}
			for _, f := range tc.forbidden {
				if strings.Contains(r.Content, f) {
					t.Errorf("result holds %q:\n%s", f, r.Content)
				}
			}
		})
	}
}

func TestWebFetchLoopbackNameNeedsItsOwnRule(t *testing.T) {
	// A host allowed only by a wildcard-free rule for another name cannot
	// reach loopback by resolving to it; a rule naming it can.
	srv := webServer(t)
	su, _ := url.Parse(srv.URL)
	r := webCall(t, &Env{Perms: webPerms(t, "WebFetch(domain:localhost)")}, "http://localhost:"+su.Port()+"/page")
	if r.IsError {
		t.Fatalf("explicit rule for localhost: %s", r.Content)
	}
}

func TestPublicIP(t *testing.T) {
	for _, tc := range []struct {
		ip   string
		want bool
	}{{"127.0.0.1", false}, {"10.1.2.3", false}, {"192.168.0.1", false}, {"169.254.169.254", false},
		{"::1", false}, {"fe80::1", false}, {"fd00::1", false}, {"0.0.0.0", false}, {"100.64.0.1", false},
		{"93.184.216.34", true}, {"2606:4700::1", true},
		// redteam19 P3-6: addresses that carry a private IPv4 one, and
		// reserved ranges.
		{"64:ff9b::a00:5", false}, {"64:ff9b::a9fe:a9fe", false}, {"64:ff9b::5db8:d822", true},
		{"64:ff9b:1::a00:5", false}, {"2002:a00:5::1", false}, {"2002:5db8:d822::1", true},
		{"::a00:5", false}, {"::ffff:10.0.0.5", false}, {"2001:0:4136:e378:8000:63bf:3fff:fdd2", false},
		{"198.18.0.1", false}, {"192.0.0.170", false}, {"240.0.0.1", false}, {"255.255.255.255", false},
		{"fec0::1", false}, {"2001:db8::1", false}, {"0.1.2.3", false}} {
		ip, err := netip.ParseAddr(tc.ip)
		if err != nil {
			t.Fatal(err)
		}
		if got := publicIP(ip); got != tc.want {
			t.Errorf("publicIP(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
}

func mustPerms(t *testing.T, allow, deny []string) *Permissions {
	t.Helper()
	p, err := NewPermissions("default", allow, deny, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
