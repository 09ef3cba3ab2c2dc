package delegate

// Settle is settle, for the race test in inbox_test.go.
var Settle = settle
