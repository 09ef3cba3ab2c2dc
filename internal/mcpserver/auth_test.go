package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/broodhq/brood/internal/mcpserver"
)

func TestRequireToken(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	reached := 0
	h := mcpserver.RequireToken(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ }), token)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, tc := range []struct {
		name, header string
		want         int
	}{
		{"none", "", http.StatusUnauthorized},
		{"wrong", "Bearer 0123456789abcdef0123456789abcdeX", http.StatusUnauthorized},
		{"prefix", "Bearer " + token[:10], http.StatusUnauthorized},
		{"longer", "Bearer " + token + "0", http.StatusUnauthorized},
		{"basic scheme", "Basic " + token, http.StatusUnauthorized},
		{"bare token", token, http.StatusUnauthorized},
		{"scheme only", "Bearer", http.StatusUnauthorized},
		{"right", "Bearer " + token, http.StatusOK},
		{"scheme in lower case", "bearer " + token, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := reached
			req, err := http.NewRequest("POST", srv.URL+"/mcp", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if passed := reached > before; passed != (tc.want == http.StatusOK) {
				t.Errorf("handler reached = %v with status %d", passed, resp.StatusCode)
			}
			if tc.want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	empty := httptest.NewServer(mcpserver.RequireToken(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("an empty token let a request through") }), ""))
	defer empty.Close()
	req, _ := http.NewRequest("POST", empty.URL, nil)
	req.Header.Set("Authorization", "Bearer ")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("empty token: %v %v", resp, err)
	}
}
