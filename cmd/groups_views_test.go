package cmd

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/psm/cluster/clustertest"
	"github.com/kseg/kseg/segment"
)

// The groups views as kafka-consumer-groups.sh users read them, at a fixed
// terminal width, and data that tries to take over the terminal.

// craftedGroup is a group id that, printed raw, clears the screen, homes
// the cursor and draws a green all-clear over what was there (issue 28.6).
const craftedGroup = "\x1b[2J\x1b[H\x1b[32mNo findings: partition healthy\x1b[0m"

// Long ids of the kind real clusters have: a Flink job's group, a
// consumer id with its UUID.
const (
	flinkGroup    = "flink-group.orders-enrichment.production.eu-west-1"
	flinkConsumer = "consumer-flink-group.orders-enrichment-1-5f0c9a7e-3b1d-4c2e-9f6a-0123456789ab"
)

// viewsLogDir writes a log directory of node 1: orders-0 (20 records) and
// orders-1 (5), a __consumer_offsets partition with three groups — a Flink
// job with long ids, two members (one assigned nothing) and a commit for a
// partition no member holds; billing; and the crafted group, whose member
// has a crafted host and client id and whose commit lies past the log end
// — and a __transaction_state partition with a crafted transactional id.
func viewsLogDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	clitest.Mkdir(t, dir)
	if err := clustertest.WriteMetaProperties(dir, 1, "views-cluster"); err != nil {
		t.Fatal(err)
	}
	t0 := clustertest.T0
	must := func(_ string, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(clustertest.WritePartition(dir, "orders", 0, nil, clustertest.DataBatch(0, t0, 20)))
	must(clustertest.WritePartition(dir, "orders", 1, nil, clustertest.DataBatch(0, t0, 5)))
	recs := []clustertest.KV{
		clustertest.GroupMetadata(flinkGroup, "range", 7, flinkConsumer, t0+10_000, []clustertest.Member{
			{ID: flinkConsumer, ClientID: "consumer-flink-1", Host: "/10.20.30.41", Assigned: map[string][]int32{"orders": {0}}},
			{ID: "consumer-flink-group.orders-enrichment-2-0b1c2d3e", ClientID: "consumer-flink-2", Host: "/10.20.30.42"},
		}),
		clustertest.OffsetCommit(flinkGroup, "orders", 0, 12, 0, "", t0+11_000),
		clustertest.OffsetCommit(flinkGroup, "orders", 1, 5, 0, "", t0+11_000),
		clustertest.GroupMetadata("billing", "range", 3, "billing-1-5f0c", t0+20_000, []clustertest.Member{
			{ID: "billing-1-5f0c", ClientID: "billing-1", Host: "/10.0.0.7", Assigned: map[string][]int32{"orders": {0, 1}}},
		}),
		clustertest.OffsetCommit("billing", "orders", 0, 20, 0, "", t0+21_000),
		clustertest.GroupMetadata(craftedGroup, "range\x1b[8m", 1, "m\x1b[2K", t0+30_000, []clustertest.Member{
			{ID: "m\x1b[2K", ClientID: "client\x1b]0;pwned\x07", Host: "/10.0.0.9\r\x1b[1A", Assigned: map[string][]int32{"orders": {1}}},
		}),
		clustertest.OffsetCommit(craftedGroup, "orders", 1, 99, 0, "", t0+31_000),
	}
	must(clustertest.WritePartition(dir, "__consumer_offsets", 0, nil, clustertest.Batch(0, t0+40_000, recs...)))
	must(clustertest.WritePartition(dir, "__transaction_state", 0, nil, clustertest.Batch(0, t0+50_000,
		clustertest.Txn("pay\x1b[2J-1", 4000, 0, kmsg.TransactionStateCompleteCommit, 60000, nil, t0, t0+1))))
	return dir
}

// runWidth runs kseg on a terminal of width columns (colour off, as under
// TERM=dumb), in-process.
func runWidth(width int, args ...string) clitest.Result {
	return clitest.RunWith(func(s *ui.Streams) {
		s.OutTTY, s.Width = true, width
		s.Env = func(k string) (string, bool) {
			if k == "TERM" {
				return "dumb", true
			}
			return "", false
		}
	}, args...)
}

// runWhere runs kseg piped (width 0) or on a terminal of width columns
// (runWidth), and says which, as the views' goldens record it.
func runWhere(width int, args ...string) (clitest.Result, string) {
	if width == 0 {
		return clitest.Run(args...), "piped"
	}
	return runWidth(width, args...), fmt.Sprintf("a %d-column terminal", width)
}

// writeRun appends one run to a views golden: the command line, where it
// ran (unless ""), its exit code, stdout and stderr.
func writeRun(b *strings.Builder, cmdline, where string, r clitest.Result) {
	if where != "" {
		cmdline += "   # " + where
	}
	fmt.Fprintf(b, "$ kseg %s\nexit %d\n--- stdout\n%s--- stderr\n%s\n", cmdline, r.Code, r.Stdout, r.Stderr)
}

// TestGroupsViewsGolden: every view of kseg groups, on a 100-column
// terminal (a table by default), piped (text), and -o wide, against
// testdata/golden/views/groups-views.txt (go test ./cmd -run
// TestGroupsViewsGolden -update). Before, the terminal's table wrapped
// ids mid-word in boxes and had no member columns.
func TestGroupsViewsGolden(t *testing.T) {
	dir := viewsLogDir(t)
	var b strings.Builder
	for _, tc := range []struct {
		width int // 0: piped
		args  []string
	}{
		{100, []string{"groups"}},
		{100, []string{"groups", "--describe", "--members"}},
		{100, []string{"groups", "--describe", "--members", "--verbose"}},
		{100, []string{"groups", "--describe", "--state"}},
		{100, []string{"groups", "--list"}},
		{100, []string{"groups", "--list", "--state=Stable"}},
		{100, []string{"groups", "-o", "wide"}},
		{100, []string{"groups", "--group", "billing"}},
		{60, []string{"groups", "--describe", "--members"}},
		{0, []string{"groups"}},
		{0, []string{"groups", "--describe", "--members"}},
		{0, []string{"groups", "--describe", "--state"}},
		{0, []string{"groups", "--list"}},
		{0, []string{"groups", "-o", "table", "--describe", "--state"}},
	} {
		r, where := runWhere(tc.width, append(append([]string{}, tc.args...), dir)...)
		if r.Code != ui.ExitFindings && !strings.Contains(strings.Join(tc.args, " "), "billing") {
			t.Errorf("%v: exit %d, want %d (the crafted group's commit is past the log end)\n%s%s", tc.args, r.Code, ui.ExitFindings, r.Stdout, r.Stderr)
		}
		r.Stdout, r.Stderr = strings.ReplaceAll(r.Stdout, dir, "$DIR"), strings.ReplaceAll(r.Stderr, dir, "$DIR")
		writeRun(&b, strings.Join(tc.args, " ")+" $DIR", where, r)
	}
	clitest.CheckGoldenPath(t, filepath.Join(viewsGoldenDir, "groups-views.txt"), []byte(b.String()))
}

// TestGroupsDescribeKeepsEveryMember: the describe table has kafka-consumer-
// groups' columns and a row for every member, the one assigned nothing too,
// whatever the terminal's width; the long ids are elided in the middle on
// a narrow terminal and whole under -o wide or piped.
func TestGroupsDescribeKeepsEveryMember(t *testing.T) {
	dir := viewsLogDir(t)
	for _, width := range []int{60, 100, 200} {
		r := runWidth(width, "groups", dir)
		clitest.MustContain(t, r.Stdout, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
		// A row per assigned partition (3), per commit no member holds
		// (1), per member assigned nothing (1), crafted's (1).
		head, _, _ := strings.Cut(r.Stdout, "ERROR")
		if rows := strings.Count(head, "\n") - 1; rows != 6 {
			t.Errorf("%d columns: %d rows, want 6:\n%s", width, rows, r.Stdout)
		}
		if width == 200 {
			clitest.MustContain(t, r.Stdout, "/10.20.30.41", "/10.20.30.42", "/10.0.0.7", "consumer-flink-2")
		}
	}
	narrow := runWidth(100, "groups", dir).Stdout
	if strings.Contains(narrow, flinkConsumer) || !strings.Contains(narrow, "…") {
		t.Errorf("100 columns: the long consumer id is not elided:\n%s", narrow)
	}
	for _, r := range []clitest.Result{runWidth(100, "groups", "-o", "wide", dir), clitest.Run("groups", "-o", "table", dir)} {
		if !strings.Contains(r.Stdout, flinkConsumer) || !strings.Contains(r.Stdout, flinkGroup) {
			t.Errorf("%v: the ids are not whole:\n%s", r.Args, r.Stdout)
		}
	}
}

// TestDataEscapedInTextAndTable: a group id, member id, client id, host,
// protocol and transactional id holding escape sequences, a record header
// key and an unknown file name holding them, reach the terminal escaped in
// text and table output (and with --format), and exact in JSON; dump -o
// kafka prints them as Kafka's DumpLogSegments does, raw. Before, the
// crafted group id cleared the screen and drew a green all-clear.
func TestDataEscapedInTextAndTable(t *testing.T) {
	dir := viewsLogDir(t)
	evil := filepath.Join(dir, "evil-0")
	clitest.Mkdir(t, evil)
	batch, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: 0, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: clustertest.T0, Key: []byte("k"), Value: []byte("v\x1b[2J"),
			Headers: []decode.Header{{Key: []byte("trace\x1b[2J\x1b[H"), Value: []byte("x")}}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		segment.SegmentFileName(0, segment.LogSuffix): batch,
		"notes\x1b[2J.txt":                            []byte("hello"),
	} {
		testkit.WriteFile(t, filepath.Join(evil, name), data)
	}
	for _, args := range [][]string{
		{"groups", dir}, {"groups", "-o", "table", dir}, {"groups", "--members", dir}, {"groups", "--members", "-o", "table", dir},
		{"groups", "--state", dir}, {"groups", "--state", "-o", "table", dir}, {"groups", "--list", dir}, {"groups", "--list", "-o", "table", dir},
		{"groups", "-o", "wide", dir}, {"groups", "--format", "{{.group}} {{range .members}}{{.clientHost}}{{end}}", dir},
		{"txns", dir}, {"txns", "-o", "table", dir},
		{"dump", "--deep", "--print-data", evil}, {"dump", "-o", "table", "--deep", "--print-data", evil},
		{"status", dir}, {"status", "-o", "table", dir},
		{"dump", filepath.Join(evil, "notes\x1b[2J.txt")}, // an error naming the file, on stderr
	} {
		for _, r := range []clitest.Result{clitest.Run(args...), runWidth(80, args...)} {
			if strings.ContainsAny(r.Stdout+r.Stderr, "\x1b\x07\r") {
				t.Errorf("%v: a control character reached the terminal:\n%q", args, r.Stdout+r.Stderr)
			}
		}
	}
	r := clitest.Run("groups", dir)
	clitest.MustContain(t, r.Stdout, `group \x1b[2J\x1b[H\x1b[32mNo findings: partition healthy\x1b[0m type classic`,
		`clientHost /10.0.0.9\r\x1b[1A`, `clientId client\x1b]0;pwned\x07`, `protocol consumer/range\x1b[8m`)
	clitest.MustContain(t, clitest.Run("txns", dir).Stdout, `transactionalId pay\x1b[2J-1 `)
	clitest.MustContain(t, clitest.Run("dump", "--deep", "--print-data", evil).Stdout, `headerKeys [trace\x1b[2J\x1b[H]`, `notes\x1b[2J.txt`)

	// JSON keeps the bytes (escaped the JSON way), and -o kafka prints
	// the header key raw, as kafka-dump-log.sh does.
	j := clitest.JSONLines(t, clitest.Run("groups", "-o", "json", dir), "group")
	found := false
	for _, g := range j {
		found = found || g["group"] == craftedGroup
	}
	if !found {
		t.Errorf("json: no group %q in %v", craftedGroup, j)
	}
	if k := clitest.Run("dump", "-o", "kafka", "--deep", "--print-data", filepath.Join(evil, segment.SegmentFileName(0, segment.LogSuffix))); !strings.Contains(k.Stdout, "headerKeys: [trace\x1b[2J\x1b[H]") {
		t.Errorf("-o kafka: the header key is not printed as Kafka prints it:\n%q", k.Stdout)
	}
}
