package edit

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A broker's lock is on its log directory's .lock, found through the
// partition directory's parent. A partition directory bind-mounted
// elsewhere (mount --bind /data/kafka/orders-0 /mnt/x/orders-0) has
// another parent there, without the broker's .lock: kseg run on
// /mnt/x/orders-0 would not see a broker running on /data/kafka. The
// kernel's mount table says where else the same directory is reachable:
// every mount of the same file system (device) whose root holds the
// directory shows it at another path, and one that is the same directory
// (device and inode) there is an alias whose parent's lock counts too.

// mountEntry is a line of /proc/self/mountinfo (proc(5)).
type mountEntry struct {
	dev        string // major:minor of the file system
	root       string // the mounted directory, within its file system
	mountPoint string
}

// readMounts parses /proc/self/mountinfo; nil when it cannot be read.
func readMounts() []mountEntry {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []mountEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		out = append(out, mountEntry{dev: fields[2], root: unescapeMount(fields[3]), mountPoint: unescapeMount(fields[4])})
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// under reports whether path is dir or inside it, and the rest of path.
func under(path, dir string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

// dirAliases are the other paths at which the existing directory dir is
// mounted (bind mounts), each the same directory (os.SameFile).
func dirAliases(dir string) []string {
	real := RealPath(dir)
	st, err := os.Stat(real)
	if err != nil || !st.IsDir() {
		return nil
	}
	mounts := readMounts()
	// The mount dir is in: the last of the longest mount points above it.
	var in *mountEntry
	rest := ""
	for i := range mounts {
		m := &mounts[i]
		if r, ok := under(real, m.mountPoint); ok && (in == nil || len(m.mountPoint) >= len(in.mountPoint)) {
			in, rest = m, r
		}
	}
	if in == nil {
		return nil
	}
	fsPath := filepath.Join(in.root, rest)
	seen := map[string]bool{real: true}
	var out []string
	for _, m := range mounts {
		if m.dev != in.dev {
			continue
		}
		r, ok := under(fsPath, m.root)
		if !ok {
			continue
		}
		p := filepath.Join(m.mountPoint, r)
		if seen[p] {
			continue
		}
		seen[p] = true
		if fi, err := os.Stat(p); err == nil && os.SameFile(fi, st) {
			out = append(out, p)
		}
	}
	return out
}
