package cluster

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The metadata image as kafka-metadata-shell shows it: a tree of nodes
// under /image (MetadataImageNode and its children in
// org.apache.kafka.image.node), with the names the shell's ls, cat and
// find use — /image/topics/byName/orders/0, /image/cluster/brokers/1,
// /image/configs/TOPIC:orders/retention.ms — and leaves printed as the
// shell prints them (the records' toString: PartitionRegistration(…),
// BrokerRegistration(…), StandardAcl(…)).
//
// What kseg's image does not hold is not in the tree: SCRAM credentials
// and delegation tokens (counted in MetadataImage.Skipped), the ZooKeeper
// migration state, and the provenance's epoch and time (/image/provenance
// has the offset only). /local, the shell's own node, is not either.

// ImageNode is a node of the tree: a directory (Children) or a leaf
// (Value).
type ImageNode struct {
	Name string
	// Dir is true for a directory, whose children Children lists by name
	// (sorted, as ls and find print them).
	Dir      bool
	Children []*ImageNode
	Value    string
}

// Child is the child named name, nil when there is none.
func (n *ImageNode) Child(name string) *ImageNode {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func dir(name string, children ...*ImageNode) *ImageNode {
	slices.SortFunc(children, func(a, b *ImageNode) int { return strings.Compare(a.Name, b.Name) })
	return &ImageNode{Name: name, Dir: true, Children: children}
}

func leaf(name, value string) *ImageNode { return &ImageNode{Name: name, Value: value} }

// Tree is the image's tree: the root "/", holding "image".
func (im *MetadataImage) Tree() *ImageNode {
	return dir("", dir("image",
		leaf("provenance", fmt.Sprintf("offset %d", im.Offset-1)),
		im.featuresNode(),
		dir("cluster", im.brokersNode(), im.controllersNode()),
		im.topicsNode(),
		im.configsNode(),
		im.quotasNode(),
		im.producerIDsNode(),
		im.aclsNode(),
	))
}

// featuresNode is FeaturesImageNode: metadataVersion, and finalized_<name>
// for the other finalized features.
func (im *MetadataImage) featuresNode() *ImageNode {
	var kids []*ImageNode
	for _, f := range im.Features {
		if f.Name == "metadata.version" {
			kids = append(kids, leaf("metadataVersion", MetadataVersionName(f.Level)))
			continue
		}
		kids = append(kids, leaf("finalized_"+f.Name, strconv.Itoa(int(f.Level))))
	}
	return dir("features", kids...)
}

// metadataVersions are MetadataVersion's KRaft feature levels and names
// (server-common MetadataVersion: IBP_3_0_IV1 is level 1, …).
var metadataVersions = []string{1: "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0",
	"3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4",
	"3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0-IV3"}

// MetadataVersionName is metadata.version's level as MetadataVersion
// names it (19: 3.7-IV4); a level newer than kseg's table as the level.
func MetadataVersionName(level int16) string {
	if level > 0 && int(level) < len(metadataVersions) {
		return metadataVersions[level]
	}
	return "level " + strconv.Itoa(int(level))
}

func (im *MetadataImage) brokersNode() *ImageNode {
	var kids []*ImageNode
	for _, b := range im.Brokers {
		kids = append(kids, leaf(strconv.Itoa(int(b.ID)), b.String()))
	}
	return dir("brokers", kids...)
}

func (im *MetadataImage) controllersNode() *ImageNode {
	var kids []*ImageNode
	for _, c := range im.Controllers {
		kids = append(kids, leaf(strconv.Itoa(int(c.ID)), c.String()))
	}
	return dir("controllers", kids...)
}

// topicsNode is TopicsImageNode: byName and byId, each topic a
// TopicImageNode (name, id, and a leaf per partition).
func (im *MetadataImage) topicsNode() *ImageNode {
	var byName, byID []*ImageNode
	for _, t := range im.Topics {
		topic := func(name string) *ImageNode {
			kids := []*ImageNode{leaf("name", t.Name), leaf("id", t.ID)}
			for _, p := range t.Partitions {
				kids = append(kids, leaf(strconv.Itoa(int(p.Partition)), p.String()))
			}
			return dir(name, kids...)
		}
		byName = append(byName, topic(t.Name))
		byID = append(byID, topic(t.ID))
	}
	return dir("topics", dir("byName", byName...), dir("byId", byID...))
}

// configsNode is ConfigurationsImageNode: TYPE:name per resource (TYPE
// alone for a cluster default), a leaf per config.
func (im *MetadataImage) configsNode() *ImageNode {
	res := map[string][]*ImageNode{}
	var order []string
	for _, c := range im.Configs {
		name := ConfigResourceTypeName(c.ResourceType)
		if c.ResourceName != "" {
			name += ":" + c.ResourceName
		}
		if _, ok := res[name]; !ok {
			order = append(order, name)
		}
		res[name] = append(res[name], leaf(c.Name, c.Value))
	}
	var kids []*ImageNode
	for _, name := range order {
		kids = append(kids, dir(name, res[name]...))
	}
	return dir("configs", kids...)
}

// ConfigResourceTypeName is ConfigResource.Type's name for its id.
func ConfigResourceTypeName(t int8) string {
	switch t {
	case 2:
		return "TOPIC"
	case 4:
		return "BROKER"
	case 8:
		return "BROKER_LOGGER"
	case 16:
		return "CLIENT_METRICS"
	case 32:
		return "GROUP"
	}
	return "UNKNOWN"
}

// quotasNode is ClientQuotasImageNode: an entity as
// clientId(app)_ip(10.0.0.1)_user(alice), a leaf per quota (a Java
// double).
func (im *MetadataImage) quotasNode() *ImageNode {
	ents := map[string][]*ImageNode{}
	var order []string
	for _, q := range im.Quotas {
		name := quotaEntityName(q.Entity)
		if _, ok := ents[name]; !ok {
			order = append(order, name)
		}
		ents[name] = append(ents[name], leaf(q.Key, JavaDouble(q.Value)))
	}
	var kids []*ImageNode
	for _, name := range order {
		kids = append(kids, dir(name, ents[name]...))
	}
	return dir("clientQuotas", kids...)
}

// quotaEntityName renders "user=alice,client-id=app" as
// ClientQuotasImageNode.clientQuotaEntityToString does:
// clientId(app)_user(alice), in the order clientId, ip, user, with \, (
// and ) escaped.
func quotaEntityName(entity string) string {
	vals := map[string]string{}
	for _, part := range strings.Split(entity, ",") {
		k, v, _ := strings.Cut(part, "=")
		vals[k] = v
	}
	esc := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`)
	var parts []string
	for _, k := range [][2]string{{"client-id", "clientId"}, {"ip", "ip"}, {"user", "user"}} {
		if v, ok := vals[k[0]]; ok {
			parts = append(parts, k[1]+"("+esc.Replace(v)+")")
		}
	}
	if len(parts) == 0 {
		return entity
	}
	return strings.Join(parts, "_")
}

// JavaDouble is Double.toString(f): 1048576.0, 1.0E7.
func JavaDouble(f float64) string {
	if a := max(f, -f); a != 0 && (a < 1e-3 || a >= 1e7) {
		m, e, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, 64), "E")
		if !strings.Contains(m, ".") {
			m += ".0"
		}
		n, _ := strconv.Atoi(e)
		return m + "E" + strconv.Itoa(n)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func (im *MetadataImage) producerIDsNode() *ImageNode {
	next := int64(0)
	if im.ProducerIDs != nil {
		next = im.ProducerIDs.NextProducerID
	}
	return dir("producerIds", leaf("nextProducerId", strconv.FormatInt(next, 10)))
}

// aclsNode is what MetadataImageNode puts at "acls": an AclsImageByIdNode,
// a leaf per ACL id.
func (im *MetadataImage) aclsNode() *ImageNode {
	var kids []*ImageNode
	for _, a := range im.ACLs {
		kids = append(kids, leaf(a.ID, a.String()))
	}
	return dir("acls", kids...)
}

// String is PartitionRegistration.toString.
func (p PartitionImage) String() string {
	rs := "RECOVERED"
	if p.LeaderRecoveryState == 1 {
		rs = "RECOVERING"
	}
	return fmt.Sprintf("PartitionRegistration(replicas=%s, directories=%s, isr=%s, removingReplicas=%s, addingReplicas=%s, elr=%s, lastKnownElr=%s, leader=%d, leaderRecoveryState=%s, leaderEpoch=%d, partitionEpoch=%d)",
		javaInts(p.Replicas), javaList(p.Directories), javaInts(p.ISR), javaInts(p.RemovingReplicas), javaInts(p.AddingReplicas),
		javaInts(p.ELR), javaInts(p.LastKnownELR), p.Leader, rs, p.LeaderEpoch, p.PartitionEpoch)
}

// String is BrokerRegistration.toString.
func (b BrokerRegistration) String() string {
	rack := "Optional.empty"
	if b.Rack != "" {
		rack = "Optional[" + b.Rack + "]"
	}
	return fmt.Sprintf("BrokerRegistration(id=%d, epoch=%d, incarnationId=%s, listeners=%s, supportedFeatures=%s, rack=%s, fenced=%t, inControlledShutdown=%t, isMigratingZkBroker=%t, directories=%s)",
		b.ID, b.Epoch, b.IncarnationID, listeners(b.Endpoints), supportedFeatures(b.Features), rack, b.Fenced, b.InControlledShutdown, b.IsMigratingZkBroker, javaList(b.LogDirs))
}

// String is ControllerRegistration.toString.
func (c ControllerRegistration) String() string {
	return fmt.Sprintf("ControllerRegistration(id=%d, incarnationId=%s, zkMigrationReady=%t, listeners=%s, supportedFeatures=%s)",
		c.ID, c.IncarnationID, c.ZkMigrationReady, listeners(c.Endpoints), supportedFeatures(c.Features))
}

// String is StandardAcl.toString.
func (a ACL) String() string {
	return fmt.Sprintf("StandardAcl(resourceType=%s, resourceName=%s, patternType=%s, principal=%s, host=%s, operation=%s, permissionType=%s)",
		enumName(resourceTypes, a.ResourceType), a.ResourceName, enumName(patternTypes, a.PatternType), a.Principal, a.Host,
		enumName(aclOperations, a.Operation), enumName(permissionTypes, a.PermissionType))
}

// The names of the ACL enums by id (ResourceType, PatternType,
// AclOperation, AclPermissionType).
var (
	resourceTypes   = []string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}
	patternTypes    = []string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
	aclOperations   = []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}
	permissionTypes = []string{"UNKNOWN", "ANY", "DENY", "ALLOW"}
)

func enumName(names []string, id int8) string {
	if id >= 0 && int(id) < len(names) {
		return names[id]
	}
	return "UNKNOWN"
}

// securityProtocols are SecurityProtocol's names by id.
var securityProtocols = map[int16]string{0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}

// listeners is "[Endpoint(listenerName='PLAINTEXT', securityProtocol=PLAINTEXT, host='localhost', port=9092), …]",
// sorted by listener name.
func listeners(es []Endpoint) string {
	es = slices.Clone(es)
	slices.SortFunc(es, func(a, b Endpoint) int { return strings.Compare(a.Name, b.Name) })
	parts := make([]string, len(es))
	for i, e := range es {
		proto, ok := securityProtocols[e.SecurityProtocol]
		if !ok {
			proto = strconv.Itoa(int(e.SecurityProtocol))
		}
		parts[i] = fmt.Sprintf("Endpoint(listenerName='%s', securityProtocol=%s, host='%s', port=%d)", e.Name, proto, e.Host, e.Port)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// supportedFeatures is "{metadata.version: 1-19, …}" (VersionRange.toString), sorted by name.
func supportedFeatures(fs []FeatureRange) string {
	fs = slices.Clone(fs)
	slices.SortFunc(fs, func(a, b FeatureRange) int { return strings.Compare(a.Name, b.Name) })
	parts := make([]string, len(fs))
	for i, f := range fs {
		r := strconv.Itoa(int(f.Min)) + "-" + strconv.Itoa(int(f.Max))
		switch {
		case f.Min == f.Max:
			r = strconv.Itoa(int(f.Min))
		case f.Max == 32767:
			r = strconv.Itoa(int(f.Min)) + "+"
		}
		parts[i] = f.Name + ": " + r
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func javaInts(xs []int32) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(int(x))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func javaList(xs []string) string { return "[" + strings.Join(xs, ", ") + "]" }
