package settings

import (
	"strings"
	"testing"
)

// TestEnvNotice: the trust notice names every variable a settings env
// sets, and calls out by name the ones that redirect network traffic or
// TLS trust.
func TestEnvNotice(t *testing.T) {
	for _, c := range []struct {
		names    []string
		redirect string // "": no call-out
	}{
		{[]string{"DEPLOY_TOKEN", "SETTINGS_GREETING"}, ""},
		{[]string{"NODE_ENV", "PROXYCHAINS_CONF", "URL"}, ""},
		{[]string{"ANTHROPIC_BASE_URL", "DEPLOY_TOKEN"}, "ANTHROPIC_BASE_URL"},
		{[]string{"HTTPS_PROXY", "http_proxy", "NO_PROXY", "ALL_PROXY"}, "HTTPS_PROXY, http_proxy, NO_PROXY, ALL_PROXY"},
		{[]string{"OPENAI_BASE_URL", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "X"}, "OPENAI_BASE_URL, SSL_CERT_FILE, SSL_CERT_DIR, NODE_EXTRA_CA_CERTS"},
		{[]string{"REQUESTS_CA_BUNDLE", "NODE_TLS_REJECT_UNAUTHORIZED"}, "REQUESTS_CA_BUNDLE, NODE_TLS_REJECT_UNAUTHORIZED"},
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SERVICE_NAME"}, "OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{[]string{"GIT_SSL_CAINFO"}, ""},
	} {
		got := envNotice(c.names)
		if want := "env " + strings.Join(c.names, ", ") + " (variables for every command brood and its agents run)"; !strings.HasPrefix(got, want) {
			t.Errorf("envNotice(%v) = %q, want it to start %q", c.names, got, want)
		}
		_, callout, ok := strings.Cut(got, "; ")
		if c.redirect == "" && ok {
			t.Errorf("envNotice(%v) calls out %q", c.names, callout)
		}
		if c.redirect != "" && (!ok || !strings.HasPrefix(callout, c.redirect+" redirect network traffic or TLS trust")) {
			t.Errorf("envNotice(%v) = %q, want %s called out", c.names, got, c.redirect)
		}
	}
}
