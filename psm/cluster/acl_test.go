package cluster

import "testing"

// TestACLNames: the codes of AccessControlEntryRecord by the names of
// Kafka's enums (their codes checked against Kafka 4.3's
// ResourceType, PatternType, AclOperation and AclPermissionType).
func TestACLNames(t *testing.T) {
	a := ACL{ResourceType: 2, PatternType: 3, Operation: 3, PermissionType: 3}
	if got := a.ResourceTypeName() + " " + a.PatternTypeName() + " " + a.OperationName() + " " + a.PermissionTypeName(); got != "TOPIC LITERAL READ ALLOW" {
		t.Errorf("got %q", got)
	}
	b := ACL{ResourceType: 7, PatternType: 4, Operation: 14, PermissionType: 2}
	if got := b.ResourceTypeName() + " " + b.PatternTypeName() + " " + b.OperationName() + " " + b.PermissionTypeName(); got != "USER PREFIXED DESCRIBE_TOKENS DENY" {
		t.Errorf("got %q", got)
	}
	if got := (ACL{Operation: 99}).OperationName(); got != "UNKNOWN" {
		t.Errorf("an unknown code: %q", got)
	}
}
