package mcpserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// RequireToken serves h only to requests that carry token as a bearer
// credential (`Authorization: Bearer TOKEN`, the header `claude mcp add
// --header` sends). Any other request gets 401 and never reaches h. The
// comparison takes the same time whatever the request sent (both sides are
// hashed to a fixed length, then compared in constant time). An empty
// token refuses every request.
func RequireToken(h http.Handler, token string) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 || !ok || token == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="brood mcp"`)
			http.Error(w, "brood mcp: missing or wrong bearer token: send Authorization: Bearer <the token brood mcp --http wrote, see its --token-file>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bearer is the credential of an Authorization header of the Bearer
// scheme (case-insensitive, as RFC 6750 has it).
func bearer(header string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	cred = strings.TrimSpace(cred)
	return cred, cred != ""
}
