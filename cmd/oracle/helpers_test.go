package oracle

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/kafkaoracle"
	"github.com/kseg/kseg/segment/segtest"
)

// The partition sets, relative to this package's directory.
const (
	testdataDir = "../../testdata"
	realDir     = "../../../shared/fixtures/real"
)

// partition is one partition directory to judge.
type partition struct {
	name string // testdata/… or real/…
	path string
	// interval is its topic's index.interval.bytes when the fixture's
	// writer says (0: unknown, Kafka's default): the commands and Kafka's
	// loader are given it, as an operator gives the topic's config.
	interval int
}

// config are the oracle's arguments for p's topic config.
func (p partition) config() []string {
	if p.interval == 0 {
		return nil
	}
	return []string{"--config", "index.interval.bytes=" + strconv.Itoa(p.interval)}
}

// flags are the write commands' flags for p's topic config.
func (p partition) flags() []string {
	if p.interval == 0 {
		return nil
	}
	return []string{"--index-interval-bytes", strconv.Itoa(p.interval)}
}

// partitions lists every partition directory with a .log under testdata/
// and ../shared/fixtures/real (when present), sorted by name.
func partitions(t *testing.T) []partition {
	t.Helper()
	var out []partition
	for _, set := range []struct{ root, prefix string }{{testdataDir, "testdata"}, {realDir, "real"}} {
		if _, err := os.Stat(set.root); err != nil {
			if set.prefix == "real" {
				t.Logf("%s is not present: judging testdata/ only", strings.TrimPrefix(realDir, "../"))
				continue
			}
			t.Fatal(err)
		}
		err := filepath.WalkDir(set.root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if _, _, ok := segment.ParsePartitionDirName(d.Name()); !ok {
				return nil
			}
			pd, err := segment.OpenPartitionDir(p)
			if err != nil {
				return err
			}
			if slices.ContainsFunc(pd.Segments, func(s segment.SegmentFiles) bool { return s.Log != "" }) {
				rel, _ := filepath.Rel(set.root, p)
				name := set.prefix + "/" + filepath.ToSlash(rel)
				interval := 0
				switch {
				case strings.HasPrefix(name, "testdata/partitions/"):
					interval = segtest.IndexIntervals[d.Name()]
				case strings.HasPrefix(name, "testdata/broken/"):
					interval = segtest.IndexIntervals[segtest.BrokenPartition]
				}
				out = append(out, partition{name: name, path: p, interval: interval})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Broker-shaped data where the fixtures are thin, written at test time.
	shaped := t.TempDir()
	dirs, err := segtest.WriteBrokerShaped(shaped)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		rel, _ := filepath.Rel(shaped, d)
		out = append(out, partition{name: "shaped/" + filepath.ToSlash(rel), path: d, interval: segtest.BrokerShapedIndexInterval})
	}
	slices.SortFunc(out, func(a, b partition) int { return strings.Compare(a.name, b.name) })
	return out
}

// replay runs replay-psm -o json on dir with the clock kseg's log clock
// reaches (so that the oracle, given the same clock, expires the same
// producers) and returns the state and that clock.
func replay(t *testing.T, dir string, extra ...string) (*kafkaoracle.State, int64, clitest.Result) {
	t.Helper()
	r := clitest.Run(append([]string{"replay-psm", "-q", "-o", "json", "--clock", "log"}, append(extra, dir)...)...)
	s, err := kafkaoracle.ParseState([]byte(r.Stdout))
	if err != nil {
		return nil, 0, r
	}
	clock := int64(0)
	if s.Clock != nil && *s.Clock > 0 {
		clock = *s.Clock
	}
	r = clitest.Run(append([]string{"replay-psm", "-q", "-o", "json", "--clock", strconv.FormatInt(clock, 10)}, append(extra, dir)...)...)
	s, err = kafkaoracle.ParseState([]byte(r.Stdout))
	if err != nil {
		return nil, clock, r
	}
	return s, clock, r
}

// hashes maps every regular file of dir to its SHA-256.
func hashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b := testkit.ReadFile(t, filepath.Join(dir, e.Name()))
		h := sha256.Sum256(b)
		out[e.Name()] = hex.EncodeToString(h[:])
	}
	return out
}

// parallel runs f(t, i) for i in [0, n), each in a parallel subtest named
// name(i), and returns when all are done: the test runner's -parallel
// bounds how many run at once (GOMAXPROCS by default), and what f
// records is read after them.
func parallel(t *testing.T, n int, name func(i int) string, f func(t *testing.T, i int)) {
	t.Run("each", func(t *testing.T) {
		for i := range n {
			t.Run(name(i), func(t *testing.T) {
				t.Parallel()
				f(t, i)
			})
		}
	})
}
