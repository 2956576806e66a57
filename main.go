// Command kseg inspects and repairs Apache Kafka partition directories
// offline. See README.md.
package main

import (
	"os"

	"github.com/kseg/kseg/cmd"
)

func main() { os.Exit(cmd.Main()) }
