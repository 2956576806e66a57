// Command measure times commands for bench/run.sh: it runs each command
// -n times, round-robin (A B C A B C …, so that a burst of load on the
// machine hits every command alike), with stdout sent to /dev/null, and
// prints one line per command:
//
//	median_seconds min_seconds max_seconds max_rss_kib
//
// max_rss_kib is the largest peak resident set (getrusage ru_maxrss) of
// any run. Commands are separated by a lone "::"; a command may start with
// NAME=VALUE words, which are added to its environment (GOMAXPROCS=1 …).
//
//	go run ./bench/measure -n 5 -- ./kseg dump -o json seg.log :: ./crcfloor seg.log
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

type command struct {
	env  []string
	args []string
	wall []time.Duration
	rss  int64
}

func main() {
	n := flag.Int("n", 5, "runs per command")
	flag.Parse()
	var cmds []*command
	cur := &command{}
	for _, a := range flag.Args() {
		if a == "::" {
			cmds = append(cmds, cur)
			cur = &command{}
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
			cmd := exec.Command(c.args[0], c.args[1:]...)
			cmd.Env = append(os.Environ(), c.env...)
			cmd.Stdout, cmd.Stderr = devnull, os.Stderr
			start := time.Now()
			if err := cmd.Run(); err != nil {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 0 && ee.ExitCode() != 3 {
					fmt.Fprintf(os.Stderr, "measure: %s: %v\n", strings.Join(c.args, " "), err)
					os.Exit(1)
				}
			}
			c.wall = append(c.wall, time.Since(start))
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				c.rss = max(c.rss, int64(ru.Maxrss))
			}
		}
	}
	for _, c := range cmds {
		slices.Sort(c.wall)
		fmt.Printf("%.4f %.4f %.4f %d\n", c.wall[len(c.wall)/2].Seconds(), c.wall[0].Seconds(), c.wall[len(c.wall)-1].Seconds(), c.rss)
	}
}
