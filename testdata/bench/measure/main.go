// Command measure times commands for testdata/bench/run.sh: it runs each command
// -n times, round-robin (A B C A B C …, so that a burst of load on the
// machine hits every command alike), with stdout sent to /dev/null, and
// prints one line per command:
//
//	median_seconds min_seconds max_seconds max_rss_kib redone median_cpu_seconds
//
// max_rss_kib is the largest peak resident set (getrusage ru_maxrss) of
// any run; median_cpu_seconds the median of the runs' user+system time,
// a second signal on a machine too busy for wall times to be trusted.
// Commands are separated by a lone "::"; a command may start with
// NAME=VALUE words, which are added to its environment (GOMAXPROCS=1 …).
//
// A command may also start with "@setup SCRIPT": SCRIPT runs with sh -c
// before every run of the command (a redone run included), stdout to
// /dev/null, and is neither timed nor counted: it prepares what the run
// consumes, such as a fresh destination directory for a mirror or a
// restored copy of one.
//
// On a shared machine other processes steal the cores a run was measuring.
// measure reads the machine's busy time from /proc/stat around each run;
// when other processes used more than a quarter of a core on average
// during it (the machine's busy time minus the run's own CPU time), the run
// is thrown away and repeated, up to -retries times, after waiting for the
// machine to calm down. The line then ends with the number of runs thrown
// away; without /proc/stat every run counts.
//
//	go run ./testdata/bench/measure -n 5 -- ./kseg dump -o json seg.log :: ./crcfloor seg.log
//	go run ./testdata/bench/measure -n 5 -- @setup 'rm -rf d && mkdir d' ./kseg mirror src d/p-0 :: …
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type command struct {
	setup   string
	env     []string
	args    []string
	wall    []time.Duration
	cpu     []time.Duration
	rss     int64
	retried int
}

func main() {
	n := flag.Int("n", 5, "runs per command")
	retries := flag.Int("retries", 10, "disturbed runs thrown away per command before keeping one anyway")
	flag.Parse()
	var cmds []*command
	cur := &command{}
	args := flag.Args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "::" {
			cmds = append(cmds, cur)
			cur = &command{}
			continue
		}
		if a == "@setup" && len(cur.args) == 0 && len(cur.env) == 0 && i+1 < len(args) {
			cur.setup = args[i+1]
			i++
			continue
		}
		if len(cur.args) == 0 && strings.Contains(a, "=") && !strings.HasPrefix(a, "/") && !strings.HasPrefix(a, ".") {
			cur.env = append(cur.env, a)
			continue
		}
		cur.args = append(cur.args, a)
	}
	cmds = append(cmds, cur)
	for _, c := range cmds {
		if len(c.args) == 0 {
			fmt.Fprintln(os.Stderr, "measure: empty command")
			os.Exit(2)
		}
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
	for range *n {
		for _, c := range cmds {
			for {
				wall, cpu, disturbed := run(c, devnull)
				if !disturbed || c.retried >= *retries {
					c.wall = append(c.wall, wall)
					c.cpu = append(c.cpu, cpu)
					break
				}
				c.retried++
				time.Sleep(2 * time.Second)
			}
		}
	}
	for _, c := range cmds {
		slices.Sort(c.wall)
		slices.Sort(c.cpu)
		fmt.Printf("%.4f %.4f %.4f %d %d %.4f\n", c.wall[len(c.wall)/2].Seconds(), c.wall[0].Seconds(), c.wall[len(c.wall)-1].Seconds(), c.rss, c.retried,
			c.cpu[len(c.cpu)/2].Seconds())
	}
}

// run runs c once and reports its wall time, its CPU time (user+system,
// children included) and whether other processes took a noticeable share
// of the machine meanwhile.
func run(c *command, devnull *os.File) (time.Duration, time.Duration, bool) {
	if c.setup != "" {
		setup := exec.Command("sh", "-c", c.setup)
		setup.Stdout, setup.Stderr = devnull, os.Stderr
		if err := setup.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "measure: setup %q: %v\n", c.setup, err)
			os.Exit(1)
		}
	}
	cmd := exec.Command(c.args[0], c.args[1:]...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdout, cmd.Stderr = devnull, os.Stderr
	busy0, ok0 := machineBusy()
	start := time.Now()
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 0 && ee.ExitCode() != 3 {
			fmt.Fprintf(os.Stderr, "measure: %s: %v\n", strings.Join(c.args, " "), err)
			os.Exit(1)
		}
	}
	wall := time.Since(start)
	busy1, ok1 := machineBusy()
	own := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		c.rss = max(c.rss, int64(ru.Maxrss))
	}
	if !ok0 || !ok1 {
		return wall, own, false
	}
	// /proc/stat counts in ticks of 10 ms: allow for them.
	foreign := busy1 - busy0 - own
	return wall, own, foreign > max(wall/4, 60*time.Millisecond)
}

// machineBusy is the CPU time all cores have spent busy since boot, from
// the first line of /proc/stat (user nice system idle iowait irq softirq
// steal …, in 1/100 s).
func machineBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		busy += n
	}
	return time.Duration(busy) * 10 * time.Millisecond, true
}
