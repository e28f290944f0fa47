package gate

// Policy is a validated policy document (docs/policy.md). Owned by the core
// logic; this is a placeholder that the policy decoder fills in.
type Policy struct {
	Name    string
	Version string
}
