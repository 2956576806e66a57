// Package kafkaoracle runs Apache Kafka's own log loading — LogLoader,
// LogSegment.recover, ProducerStateManager, LeaderEpochFileCache — on
// partition directories, through the driver in ../shared/kafka-oracle
// (beside the repository; its README says what it is and how it is
// called). Kafka's code is the judge of what kseg reads and writes: a test
// asks it what a starting broker does with a directory and what it then
// holds, and compares.
//
// Every load changes the directory it is given, as a broker would
// (recovery truncates and rebuilds indexes, snapshots are written and
// deleted): give it copies (Stage). One JVM serves every load of a Run
// (the driver's batch mode): a JVM start costs about a second, a load a
// few milliseconds.
//
// Only tests import this package. Find skips a test, with a message naming
// what is missing, when ../shared/kafka-oracle or java is absent, so that a
// bare clone passes.
package kafkaoracle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// OracleDir is where the oracle lives, relative to the repository root.
const OracleDir = "../shared/kafka-oracle"

// Jars are the Debian packages' jars the driver needs beside its own
// (../shared/kafka-oracle/README.md: openjdk-17-jre-headless liblz4-java
// libsnappy-java libzstd-jni-java libjackson2-databind-java libslf4j-java
// libcaffeine-java).
var Jars = []string{
	"slf4j-api.jar", "slf4j-nop.jar", "jackson-databind.jar", "jackson-core.jar",
	"jackson-annotations.jar", "lz4-java.jar", "snappy-java.jar", "zstd-jni.jar", "caffeine.jar",
}

// JarDir is where Debian installs them.
const JarDir = "/usr/share/java"

// Oracle is a located driver: the java binary and its class path.
type Oracle struct {
	Java      string
	ClassPath string
}

// Find locates the oracle from the repository root (the directory holding
// go.mod, found upwards from the working directory). It skips t when
// ../shared/kafka-oracle or java is absent; a missing Debian jar fails t,
// since java without them is a broken install (.ci/run installs them).
func Find(t testing.TB) *Oracle {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	jar := filepath.Join(root, OracleDir, "kafka-oracle.jar")
	if _, err := os.Stat(jar); err != nil {
		t.Skipf("%s (beside the repository) is not present: skipping the tests judged by Kafka's own log loader", OracleDir)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skipf("java is not installed: skipping the tests judged by Kafka's own log loader (%s/README.md lists the Debian packages; .ci/run installs them)", OracleDir)
	}
	cp := []string{jar}
	for _, j := range Jars {
		p := filepath.Join(JarDir, j)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("java is installed but %s is not: install the packages %s/README.md lists", p, OracleDir)
		}
		cp = append(cp, p)
	}
	return &Oracle{Java: java, ClassPath: strings.Join(cp, string(os.PathListSeparator))}
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("kafkaoracle: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Mode is the driver's --mode: which start the broker makes.
type Mode string

const (
	// Broker: what a starting broker does with the files in the parent log
	// directory (.kafka_cleanshutdown and the checkpoint files).
	Broker Mode = "broker"
	// Clean: a clean shutdown (no recovery).
	Clean Mode = "clean"
	// Unclean: an unclean shutdown with recovery point 0: every segment
	// is recovered.
	Unclean Mode = "unclean"
	// Crash: unclean, with the recovery point of the checkpoint.
	Crash Mode = "crash"
)

// Request is one load: a partition directory (a copy: the load changes
// it), the mode, the broker's wall clock (NowMs, for producer expiry; pass
// the clock kseg was given), and other driver arguments.
type Request struct {
	Dir   string
	Mode  Mode
	NowMs int64
	Extra []string
}

func (r Request) line() string {
	args := []string{"--mode", string(r.Mode), "--now", strconv.FormatInt(r.NowMs, 10)}
	args = append(args, r.Extra...)
	return strings.Join(append(args, r.Dir), "\t")
}

// Run loads every request in one JVM (the driver's batch mode) and returns
// the results in order.
func (o *Oracle) Run(ctx context.Context, reqs []Request) ([]Load, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	f, err := os.CreateTemp("", "kafkaoracle-batch-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	var b strings.Builder
	for _, r := range reqs {
		if strings.ContainsAny(r.Dir, "\t\n") {
			return nil, fmt.Errorf("kafkaoracle: directory %q holds a tab or newline", r.Dir)
		}
		b.WriteString(r.line())
		b.WriteByte('\n')
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	// C1 only and the serial collector: the loads are short, and the JIT's
	// second tier and a parallel collector cost more than they gain here
	// (measured on 180 loads).
	cmd := exec.CommandContext(ctx, o.Java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", o.ClassPath, "kafkaoracle.Main", "batch", f.Name())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kafkaoracle: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	loads := make([]Load, 0, len(reqs))
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var l Load
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("kafkaoracle: load %d: %v", len(loads)+1, err)
		}
		l.Request = reqs[len(loads)]
		loads = append(loads, l)
		if len(loads) == len(reqs) {
			break
		}
	}
	if len(loads) != len(reqs) {
		return nil, fmt.Errorf("kafkaoracle: %d results for %d loads: %s", len(loads), len(reqs), strings.TrimSpace(stderr.String()))
	}
	return loads, nil
}

// Timeout bounds a Run in tests.
const Timeout = 10 * time.Minute
