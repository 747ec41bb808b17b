// Command queuectl administers asynchronous message queues. See README.md.
package main

import (
	"os"

	"github.com/queuectl/queuectl/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}
