package spawn

// Settle is settle, for the race test in inbox_test.go.
var Settle = settle

// RecordSent is recordSent, for the tests that play Send's part.
var RecordSent = recordSent
