package provider

import (
	"testing"
	"time"
)

func TestIdleTimeoutEnv(t *testing.T) {
	tests := []struct {
		v       string
		want    time.Duration
		wantErr string
	}{
		{"", 0, ""},
		{"90s", 90 * time.Second, ""},
		{" 10m ", 10 * time.Minute, ""},
		{"soon", 0, `BROOD_STREAM_IDLE_TIMEOUT="soon" is not a duration: use e.g. 90s or 10m (unset for the default, 5m)`},
		{"-1s", 0, `BROOD_STREAM_IDLE_TIMEOUT="-1s" is not a duration: use e.g. 90s or 10m (unset for the default, 5m)`},
	}
	for _, tt := range tests {
		got, err := idleTimeout(func(k string) string {
			if k == IdleTimeoutEnv {
				return tt.v
			}
			return ""
		})
		if got != tt.want || (err == nil) != (tt.wantErr == "") || err != nil && err.Error() != tt.wantErr {
			t.Errorf("%q: %v, %v; want %v, %q", tt.v, got, err, tt.want, tt.wantErr)
		}
	}
}
