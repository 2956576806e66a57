package cluster

// The names of an ACL's codes, as Kafka's enums spell them
// (org.apache.kafka.common.resource.ResourceType and PatternType,
// org.apache.kafka.common.acl.AclOperation and AclPermissionType) and
// kafka-acls.sh prints them: AccessControlEntryRecord carries the codes,
// an operator reads "TOPIC … READ … ALLOW". The tables are the ones
// ACL.String (StandardAcl.toString) uses; a code Kafka does not define is
// UNKNOWN, as fromCode makes it.

// ResourceTypeName is a.ResourceType as Kafka's ResourceType names it.
func (a ACL) ResourceTypeName() string { return enumName(resourceTypes, a.ResourceType) }

// PatternTypeName is a.PatternType as Kafka's PatternType names it.
func (a ACL) PatternTypeName() string { return enumName(patternTypes, a.PatternType) }

// OperationName is a.Operation as Kafka's AclOperation names it.
func (a ACL) OperationName() string { return enumName(aclOperations, a.Operation) }

// PermissionTypeName is a.PermissionType as Kafka's AclPermissionType
// names it.
func (a ACL) PermissionTypeName() string { return enumName(permissionTypes, a.PermissionType) }
