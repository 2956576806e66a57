package broker

import "strconv"

// The names of an ACL's codes, as Kafka's enums spell them
// (org.apache.kafka.common.resource.ResourceType and PatternType,
// org.apache.kafka.common.acl.AclOperation and AclPermissionType) and
// kafka-acls.sh prints them. AccessControlEntryRecord carries the codes;
// an operator reads "TOPIC … READ … ALLOW".
var (
	resourceTypeNames   = []string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}
	patternTypeNames    = []string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
	aclOperationNames   = []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS"}
	permissionTypeNames = []string{"UNKNOWN", "ANY", "DENY", "ALLOW"}
)

// enumName is names[code], or "UNKNOWN(code)" for a code this version of
// Kafka does not define (fromCode maps those to UNKNOWN; the code is kept
// so that nothing is lost).
func enumName(names []string, code int8) string {
	if code >= 0 && int(code) < len(names) {
		return names[code]
	}
	return "UNKNOWN(" + strconv.Itoa(int(code)) + ")"
}

// ResourceTypeName is a.ResourceType as Kafka's ResourceType names it.
func (a ACL) ResourceTypeName() string { return enumName(resourceTypeNames, a.ResourceType) }

// PatternTypeName is a.PatternType as Kafka's PatternType names it.
func (a ACL) PatternTypeName() string { return enumName(patternTypeNames, a.PatternType) }

// OperationName is a.Operation as Kafka's AclOperation names it.
func (a ACL) OperationName() string { return enumName(aclOperationNames, a.Operation) }

// PermissionTypeName is a.PermissionType as Kafka's AclPermissionType
// names it.
func (a ACL) PermissionTypeName() string { return enumName(permissionTypeNames, a.PermissionType) }
