package state

// KeyPrefix starts every key the Redis store writes. The redaction audit (internal/audit) reads
// the store's keyspace by it.
const KeyPrefix = prefix

// FixturesKey is the key of a scope's runtime fixture bodies, as their authors wrote them: the
// one key of a scope that holds a client's text by design (the audit leaves its own scope's out
// of its search).
func FixturesKey(scope string) string { return key(scope, "fx") }
