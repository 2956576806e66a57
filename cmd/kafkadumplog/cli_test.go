package kafkadumplog

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/version"
)

// kseg kafka-dump-log's command line as jopt-simple and CommandLineUtils
// handle DumpLogSegments': help, version, --files, optional arguments.

// TestKafkaDumpLogHelp: --help (and no argument at all) prints the tool's
// description and jopt's option table on stderr and exits 1; a missing
// --files prints its message and the table, exit 1.
func TestKafkaDumpLogHelp(t *testing.T) {
	for _, args := range [][]string{{"kafka-dump-log", "--help"}, {"kafka-dump-log"}} {
		r := clitest.Run(args...)
		lines := strings.Split(r.Stderr, "\n")
		if r.Code != 1 || r.Stdout != "" || lines[0] != kafkaDumpLogDescription ||
			!strings.HasPrefix(lines[1], "Option ") || !strings.Contains(lines[1], "Description") ||
			!strings.HasPrefix(lines[2], "------ ") {
			t.Fatalf("%v: exit %d\nstdout %q\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
		}
		// Options sorted by name, each once, every line 80 columns or
		// fewer, cells padded (jopt pads the last column too).
		var names []string
		for _, l := range lines[3:] {
			if len(l) > 80 {
				t.Errorf("line over 80 columns: %q", l)
			}
			if strings.HasPrefix(l, "--") {
				names = append(names, strings.Fields(l)[0])
			}
		}
		want := []string{"--cluster-metadata-decoder", "--deep-iteration", "--files", "--help", "--index-sanity-check",
			"--key-decoder-class", "--max-bytes", "--max-message-size", "--offsets-decoder", "--print-data-log",
			"--remote-log-metadata-decoder", "--share-group-state-decoder", "--skip-record-metadata",
			"--transaction-log-decoder", "--value-decoder-class", "--verify-index-only", "--version"}
		if strings.Join(names, " ") != strings.Join(want, " ") {
			t.Errorf("options %v", names)
		}
		clitest.MustContain(t, r.Stderr, "--files <String: file1, file2, ...>", "--key-decoder-class [String]",
			"--max-bytes <Integer: size>", "(default: 2147483647)", "(default: 5242880)")
	}
	r := clitest.Run("kafka-dump-log", "--deep-iteration")
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, "Missing required argument \"[files]\"\nOption ") {
		t.Errorf("no --files: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestKafkaDumpLogVersion: --version prints a version on stdout, exit 0.
func TestKafkaDumpLogVersion(t *testing.T) {
	r := clitest.Run("kafka-dump-log", "--version")
	if r.Code != 0 || r.Stdout != version.String()+"\n" || r.Stderr != "" {
		t.Errorf("exit %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
}

// TestKafkaDumpLogFiles: --files is split as String.split(",") splits it
// (no trimming, trailing empty names dropped), once: a repeated --files
// is jopt's MultipleArgumentsForOptionException. A file that does not
// exist is reached in turn: "Dumping", the header of a .log, then
// NoSuchFileException's message, the path.
func TestKafkaDumpLogFiles(t *testing.T) {
	dir := clitest.ChdirFixture(t, "partitions", "txn-0")
	log := filepath.Join(dir, "00000000000000000000.log")
	one := clitest.Run("kafka-dump-log", "--files", log)
	if r := clitest.Run("kafka-dump-log", "--files", log+",,"); r.Code != 0 || r.Stdout != one.Stdout {
		t.Errorf("trailing commas: exit %d\n%s", r.Code, clitest.FirstDiff(one.Stdout, r.Stdout))
	}
	if r := clitest.Run("kafka-dump-log", "--files", ","); r.Code != 0 || r.Stdout != "" {
		t.Errorf("--files ,: exit %d %q", r.Code, r.Stdout)
	}
	// An empty name in the middle is a file named "": no dot.
	if r := clitest.Run("kafka-dump-log", "--files", log+",,"+log); r.Code != 1 ||
		r.Stdout != one.Stdout+"Dumping \n" || r.Stderr != "begin -1, end 0, length 0\n" {
		t.Errorf("empty name: exit %d\n%q\n%q", r.Code, r.Stdout, r.Stderr)
	}
	if r := clitest.Run("kafka-dump-log", "--files", log, "--files", log); r.Code != 1 || r.Stdout != "" ||
		r.Stderr != "Found multiple arguments for option files, but you asked for only one\n" {
		t.Errorf("repeated --files: exit %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	missing := filepath.Join(dir, "00000000000000000099.log")
	if r := clitest.Run("kafka-dump-log", "--files", log+","+missing+","+log); r.Code != 1 ||
		r.Stdout != one.Stdout+"Dumping "+missing+"\nLog starting offset: 99\n" || r.Stderr != missing+"\n" {
		t.Errorf("missing file: exit %d\n%q\n%q", r.Code, r.Stdout, r.Stderr)
	}
	if r := clitest.Run("dump", "-o", "kafka", log, missing); r.Code != ui.ExitFindings || r.Stderr != missing+"\n" {
		t.Errorf("dump missing file: exit %d %q", r.Code, r.Stderr)
	}
	// A name whose offset does not parse: Long.parseLong.
	if r := clitest.Run("kafka-dump-log", "--files", filepath.Join(dir, "x1.log")); r.Code != 1 || r.Stderr != "For input string: \"x1\"\n" {
		t.Errorf("bad offset: exit %d %q", r.Code, r.Stderr)
	}
}

// TestKafkaDecoderClassOptionalArg: --key-decoder-class and
// --value-decoder-class take an optional argument (jopt withOptionalArg):
// bare, they are StringDecoder and still imply --print-data-log; with a
// following word that is not an option, that word is the class.
func TestKafkaDecoderClassOptionalArg(t *testing.T) {
	dir := clitest.ChdirFixture(t, "partitions", "txn-0")
	log := filepath.Join(dir, "00000000000000000000.log")
	want := clitest.Run("kafka-dump-log", "--print-data-log", "--files", log)
	for _, args := range [][]string{
		{"kafka-dump-log", "--value-decoder-class", "--files", log},
		{"kafka-dump-log", "--files", log, "--key-decoder-class"},
		{"kafka-dump-log", "--key-decoder-class", "StringDecoder", "--files", log},
		{"kafka-dump-log", "--key-decoder-class=org.apache.kafka.tools.api.StringDecoder", "--files", log},
		{"dump", "-o", "kafka", log, "--value-decoder-class"},
		{"dump", "-o", "kafka", "--value-decoder-class", "kafka.serializer.StringDecoder", log},
	} {
		r := clitest.Run(args...)
		if r.Code != 0 || r.Stdout != want.Stdout {
			t.Errorf("kseg %s: exit %d %s\n%s", strings.Join(args, " "), r.Code, r.Stderr, clitest.FirstDiff(want.Stdout, r.Stdout))
		}
	}
	r := clitest.Run("kafka-dump-log", "--value-decoder-class", "IntegerDecoder", "--files", log)
	if r.Code != 0 || !strings.Contains(r.Stdout, " payload: ") || r.Stdout == want.Stdout {
		t.Errorf("IntegerDecoder: exit %d\n%s", r.Code, r.Stdout)
	}
}
