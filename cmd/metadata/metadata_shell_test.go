package metadata_test

import (
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// kseg metadata ls | cat | find over the example image, as
// kafka-metadata-shell prints them (LsCommandHandler.printTargets,
// CatCommandHandler, FindCommandHandler).
func TestMetadataShell(t *testing.T) {
	ld := clitest.Testdata("logdirs/broker-1")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ls", "/image/cluster"}, "brokers\ncontrollers\n"},
		{[]string{"ls", "cluster"}, "brokers\ncontrollers\n"}, // relative: under /image
		{[]string{"ls", "/image/cluster/brokers/1"}, "1\n"},   // a leaf: its name
		// Several matches: each directory headed by its name; a leaf
		// first, as the shell prints files before directories.
		{[]string{"ls", "/image/topics/byName/payments/*"}, "0\nid\nname\n"},
		{[]string{"ls", "/image/topics/byName/[op]*"}, "orders:\n0\nid\nname\n\npayments:\n0\nid\nname\n"},
		{[]string{"cat", "/image/topics/byName/*/id"}, "AQEBAQEBAQEBAQEBAQEBAQ\nAgICAgICAgICAgICAgICAg\nDw8PDw8PDw8PDw8PDw8PDw\nCgoKCgoKCgoKCgoKCgoKCg\nCwsLCwsLCwsLCwsLCwsLCw\n"},
		{[]string{"find", "/image/topics/byName/payments"}, "/image/topics/byName/payments\n/image/topics/byName/payments/0\n/image/topics/byName/payments/id\n/image/topics/byName/payments/name\n"},
		{[]string{"find", "-o", "json", "/image/producerIds/nextProducerId"}, `{"type":"metadataNode","path":"/image/producerIds/nextProducerId","directory":false,"value":"5000"}` + "\n"},
		{[]string{"ls", "-o", "json", "/image/cluster"}, `{"type":"metadataNode","path":"/image/cluster/brokers","directory":true}` + "\n" + `{"type":"metadataNode","path":"/image/cluster/controllers","directory":true}` + "\n"},
		{[]string{"find", "-o", "table", "/image/producerIds"}, "PATH                               VALUE\n/image/producerIds                     -\n/image/producerIds/nextProducerId   5000\n"},
	} {
		r := clitest.Run(append(append([]string{"metadata"}, tc.args...), ld)...)
		if r.Code != ui.ExitOK || r.Stdout != tc.want {
			t.Errorf("metadata %q: exit %d\n%s--- want\n%s--- stderr\n%s", tc.args, r.Code, r.Stdout, tc.want, r.Stderr)
		}
	}
	// --at: the image before events was deleted and recreated holds its
	// first id.
	r := clitest.Run("metadata", "cat", "--at", "66", "/image/topics/byName/events/id", ld)
	if r.Code != ui.ExitOK || r.Stdout != "Dg4ODg4ODg4ODg4ODg4ODg\n" {
		t.Errorf("--at 66: exit %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"cat", "/image/topics/byName/nosuch/0", ld}, "no such node in the image at offset 69"},
		{[]string{"cat", "/topics/orders/0", ld}, "kafka-metadata-shell names the image's nodes /image/topics/byName/<topic>/<partition>"},
		{[]string{"cat", "/image/topics", ld}, "is a directory"},
		{[]string{"ls", ld}, "needs an image path and at least one log directory"},
		{[]string{"ls", "-o", "kafka", "/image", ld}, "--output must be text, table or json"},
	} {
		r := clitest.Run(append([]string{"metadata"}, tc.args...)...)
		if r.Code != ui.ExitUsage || !strings.Contains(r.Stderr, tc.err) {
			t.Errorf("metadata %q: exit %d, stderr %q; want %d and %q", tc.args, r.Code, r.Stderr, ui.ExitUsage, tc.err)
		}
	}
}
