// Command queuectl administers asynchronous message queues. See README.md.
package main

import (
	"os"

	"github.com/queuectl/queuectl/internal/cli"
	"github.com/queuectl/queuectl/internal/termprobe"
)

func main() {
	termprobe.Restore()
	os.Exit(cli.Main())
}
