// Command clientserver is queuectl for the tests of the Go client: client/
// is a module of its own, which requires no other module, so its tests
// cannot link queuectl in; they build this command from the repository
// instead and run it as `queuectl serve`. It is the command line of
// queuectl, with two commands more for those tests' PostgreSQL stores:
//
//	clientserver pg-schema BASE-URL   create a new, empty schema in BASE-URL's
//	                                  database; print a URL that selects it
//	clientserver pg-drop URL          drop the schema URL selects, with
//	                                  everything in it
package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/internal/cli"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

func main() {
	if len(os.Args) == 3 {
		switch os.Args[1] {
		case "pg-schema":
			u, _, err := pgtest.NewSchema(context.Background(), os.Args[2])
			exit(err)
			fmt.Println(u)
			return
		case "pg-drop":
			exit(drop(os.Args[2]))
			return
		}
	}
	os.Exit(cli.Main())
}

// drop drops the schema of a URL pg-schema printed.
func drop(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	schema := u.Query().Get("search_path")
	if !strings.HasPrefix(schema, "queuectl_test_") {
		return fmt.Errorf("%s selects no schema of pg-schema's (search_path queuectl_test_…)", raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	return err
}

func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientserver:", err)
		os.Exit(1)
	}
}
