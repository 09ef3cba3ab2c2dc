package settings

import "strings"

// envNotice is the trust notice's line for the variables a project's
// settings env sets (names only: a value may be a secret), calling out by
// name those that send network traffic, or the trust placed in TLS,
// elsewhere.
func envNotice(names []string) string {
	s := "env " + strings.Join(names, ", ") + " (variables for every command brood and its agents run)"
	var redirect []string
	for _, n := range names {
		if redirectsNetwork(n) {
			redirect = append(redirect, n)
		}
	}
	if len(redirect) > 0 {
		s += "; " + strings.Join(redirect, ", ") + " redirect network traffic or TLS trust: the model's requests, with your code and keys, and the tools' downloads could go to a server the project chose"
	}
	return s
}

// redirectsNetwork reports whether the variable name points network
// traffic at another server (an API base URL, a proxy, a telemetry
// endpoint) or changes which certificates are trusted.
func redirectsNetwork(name string) bool {
	upper := strings.ToUpper(name)
	switch upper {
	case "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_TLS_REJECT_UNAUTHORIZED":
		return true
	}
	// GIT_* never reaches a command (a settings env does not set it);
	// OTEL_EXPORTER_OTLP_*ENDPOINT sends brood's telemetry elsewhere.
	return strings.HasSuffix(upper, "_BASE_URL") || upper == "BASE_URL" || strings.HasSuffix(upper, "_PROXY") || upper == "PROXY" ||
		strings.HasPrefix(upper, "OTEL_") && strings.HasSuffix(upper, "_ENDPOINT")
}
