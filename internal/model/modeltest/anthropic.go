package modeltest

import (
	"net/http"
	"testing"

	"github.com/broodhq/brood/internal/model/fakewire"
)

// NewAnthropic starts a fake Anthropic Messages API serving replies in order.
// Point an adapter's base URL at s.URL (it answers POST /v1/messages).
func NewAnthropic(t testing.TB, replies ...Reply) *Server {
	return newServer(t, "/v1/messages", writeAnthropic, replies)
}

func writeAnthropic(w http.ResponseWriter, rec Recorded, r Reply) {
	fakewire.WriteAnthropic(w, rec.N, fakewire.RequestModel(rec.Body), r)
}
