package cluster_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/psm/cluster"
)

// node walks the tree by a /-separated path.
func node(root *cluster.ImageNode, path string) *cluster.ImageNode {
	n := root
	for _, c := range strings.Split(strings.Trim(path, "/"), "/") {
		if n = n.Child(c); n == nil {
			return nil
		}
	}
	return n
}

// TestImageTreeIsTheShells: the tree of a real broker's image has the
// names kafka-metadata-shell gives its nodes, and the leaves print as the
// records' toString: stock-trades-0 is the PartitionRecord the hex dump in
// TestRealMetadataSnapshotOnly reads.
func TestImageTreeIsTheShells(t *testing.T) {
	dir := realDir(t, "eric-kimm__stock-market-pipeline", "kafka", "data")
	root := loadMetadata(t, -1, dir).Image.Tree()
	var top []string
	for _, c := range node(root, "/image").Children {
		top = append(top, c.Name)
	}
	if got := strings.Join(top, " "); got != "acls clientQuotas cluster configs features producerIds provenance topics" {
		t.Errorf("/image holds %s", got)
	}
	want := "PartitionRegistration(replicas=[1], directories=["
	p := node(root, "/image/topics/byName/stock-trades/0")
	if p == nil || p.Dir || !strings.HasPrefix(p.Value, want) ||
		!strings.HasSuffix(p.Value, "], isr=[1], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=22, partitionEpoch=22)") {
		t.Fatalf("stock-trades/0: %+v", p)
	}
	byID := node(root, "/image/topics/byId/jI4X6cHZSeqYT3yh6FWfMQ")
	if byID == nil || node(root, "/image/topics/byId/jI4X6cHZSeqYT3yh6FWfMQ/0").Value != p.Value ||
		byID.Child("name").Value != "stock-trades" || byID.Child("id").Value != "jI4X6cHZSeqYT3yh6FWfMQ" {
		t.Errorf("byId: %+v", byID)
	}
	b := node(root, "/image/cluster/brokers/1")
	if b == nil || !strings.HasPrefix(b.Value, "BrokerRegistration(id=1, epoch=") || !strings.Contains(b.Value, "listeners=[Endpoint(listenerName='") {
		t.Errorf("broker 1: %+v", b)
	}
	if v := node(root, "/image/features/metadataVersion"); v == nil || v.Value != "4.0-IV3" { // metadata.version 25
		t.Errorf("metadataVersion: %+v", v)
	}
	if v := node(root, "/image/provenance"); v == nil || v.Value != "offset 194444" {
		t.Errorf("provenance: %+v", v)
	}
}

// TestImageTreeOfTheExample: configs, quotas and ACLs of the bundled
// example as the shell names and prints them.
func TestImageTreeOfTheExample(t *testing.T) {
	root := loadMetadata(t, -1, filepath.Join("..", "..", "testdata", "logdirs", "broker-1")).Image.Tree()
	for path, want := range map[string]string{
		"/image/configs/TOPIC:orders/retention.ms":             "604800000",
		"/image/clientQuotas/user(billing)/consumer_byte_rate": "1048576.0",
		"/image/producerIds/nextProducerId":                    "5000",
		"/image/features/metadataVersion":                      "3.7-IV4",
		"/image/acls/MDAwMDAwMDAwMDAwMDAwMA":                   "StandardAcl(resourceType=TOPIC, resourceName=orders, patternType=LITERAL, principal=User:billing, host=*, operation=READ, permissionType=ALLOW)",
		"/image/topics/byName/__consumer_offsets/name":         "__consumer_offsets",
		"/image/topics/byName/events/id":                       "Dw8PDw8PDw8PDw8PDw8PDw",
		"/image/cluster/brokers/2":                             "BrokerRegistration(id=2, epoch=12, incarnationId=IiIiIiIiIiIiIiIiIiIiIg, listeners=[Endpoint(listenerName='PLAINTEXT', securityProtocol=PLAINTEXT, host='localhost', port=9094)], supportedFeatures={metadata.version: 1-19}, rack=Optional.empty, fenced=false, inControlledShutdown=false, isMigratingZkBroker=false, directories=[])",
		"/image/topics/byName/__consumer_offsets/10":           "PartitionRegistration(replicas=[2], directories=[], isr=[2], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=2, leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0)",
		"/image/topics/byName/__consumer_offsets/9":            "PartitionRegistration(replicas=[1], directories=[], isr=[1], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0)",
	} {
		if n := node(root, path); n == nil || n.Dir || n.Value != want {
			t.Errorf("%s: %+v, want %q", path, n, want)
		}
	}
	// Children sorted as the shell sorts them (String.compareTo): 10 before 2.
	kids := node(root, "/image/topics/byName/__consumer_offsets").Children
	if kids[0].Name != "0" || kids[1].Name != "1" || kids[2].Name != "10" || kids[len(kids)-2].Name != "id" || kids[len(kids)-1].Name != "name" {
		t.Errorf("children of __consumer_offsets: %s %s %s … %s %s", kids[0].Name, kids[1].Name, kids[2].Name, kids[len(kids)-2].Name, kids[len(kids)-1].Name)
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{
		1048576: "1048576.0", 0: "0.0", 1.5: "1.5", 1e7: "1.0E7", 12345678: "1.2345678E7", 0.0001: "1.0E-4", -2: "-2.0", 0.001: "0.001",
	} {
		if got := cluster.JavaDouble(f); got != want {
			t.Errorf("JavaDouble(%v) = %q, want %q", f, got, want)
		}
	}
}
