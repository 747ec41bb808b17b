package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/queuectl/queuectl/internal/cli"
	"github.com/queuectl/queuectl/internal/store/bolt"
	"github.com/queuectl/queuectl/internal/termprobe"
)

// TestMain lets the test binary run as `queuectl` inside scripts, so every
// script drives the real command in its own process. It undoes what
// termprobe did before main, as main does.
func TestMain(m *testing.M) {
	termprobe.Restore()
	testscript.Main(m, map[string]func(){
		"queuectl": func() { os.Exit(cli.Main()) },
	})
}

// TestScript runs testdata/script/*.txtar end to end.
func TestScript(t *testing.T) {
	t.Parallel()
	testscript.Run(t, ScriptParams(t))
}

// ScriptParams are the settings every script run shares.
func ScriptParams(t *testing.T) testscript.Params {
	return testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Condition:           scriptCondition,
		Setup: func(env *testscript.Env) error {
			work := env.WorkDir
			env.Setenv("HOME", work)
			env.Setenv("XDG_DATA_HOME", filepath.Join(work, ".data"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(work, ".config"))
			env.Setenv("NO_COLOR", "1")
			env.Setenv("DB", filepath.Join(work, ".data", "queuectl", "queuectl.db"))
			env.Values[heldLocksKey{}] = heldLocks{}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":      cmdExits,
			"holdlock":   cmdHoldLock,
			"genjsonl":   cmdGenJSONL,
			"genbytes":   cmdGenBytes,
			"stdout2env": cmdStdoutToEnv,
			"stderr2env": cmdStderrToEnv,
			"freeport":   cmdFreePort,
			"waithttp":   cmdWaitHTTP,
			"httppost":   cmdHTTPPost,
			"envsubst":   cmdEnvSubst,
			"replace":    cmdReplace,
			"waitfile":   cmdWaitFile,
			"pgstore":    cmdPGStore,
			"pgexec":     cmdPGExec,
			"checkback":  cmdCheckBack,
			"damage":     cmdDamage,
			"filemode":   cmdFileMode,
		},
	}
}

// cmdExits runs a command and checks its exit code: exits N cmd args...
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit code", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

// heldLocks are the stores a script holds open with holdlock, by path.
type heldLocks map[string]*bolt.Store

// heldLocksKey finds a script's heldLocks among its testscript values.
type heldLocksKey struct{}

// cmdHoldLock opens a store in the test process, so that the queuectl
// processes the script starts find it locked, until the script ends or
// `holdlock -release PATH` runs: holdlock [-release] PATH.
func cmdHoldLock(ts *testscript.TestScript, neg bool, args []string) {
	release := len(args) == 2 && args[0] == "-release"
	if release {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: holdlock [-release] PATH")
	}
	held := ts.Value(heldLocksKey{}).(heldLocks)
	path := ts.MkAbs(args[0])
	if release {
		st, ok := held[path]
		if !ok {
			ts.Fatalf("holdlock: %s is not held", path)
		}
		delete(held, path)
		ts.Check(st.Close())
		return
	}
	st, err := bolt.Open(path, bolt.Options{Timeout: 5 * time.Second})
	ts.Check(err)
	held[path] = st
	ts.Defer(func() {
		if held[path] == st {
			st.Close()
		}
	})
}

// cmdGenJSONL writes N valid send --jsonl lines to a file: genjsonl N FILE.
func cmdGenJSONL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: genjsonl N FILE")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[1]))
	ts.Check(err)
	defer f.Close()
	for i := range n {
		if i%2 == 0 {
			fmt.Fprintf(f, `{"qos":"EO","sender":"ERP","receiver":"WMS","payload":"order %d"}`+"\n", i)
		} else {
			fmt.Fprintf(f, `{"qos":"EOIO","sender":"ERP","receiver":"WMS","app_queue":"ORDERS_DE","payload":"order %d"}`+"\n", i)
		}
	}
}

// cmdGenBytes writes N bytes to a file, the values 0 to 255 repeated, for
// binary payloads a txtar section cannot hold: genbytes N FILE.
func cmdGenBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: genbytes N FILE")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
}

// cmdStdoutToEnv sets an environment variable to what the last command
// printed, without the final newline, so that a printed id can be passed on;
// with -last, to its last line only: stdout2env [-last] NAME.
func cmdStdoutToEnv(ts *testscript.TestScript, neg bool, args []string) {
	last := len(args) == 2 && args[0] == "-last"
	if last {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: stdout2env [-last] NAME")
	}
	out := strings.TrimSuffix(ts.ReadFile("stdout"), "\n")
	if last {
		out = out[strings.LastIndexByte(out, '\n')+1:]
	}
	ts.Setenv(args[0], out)
}
