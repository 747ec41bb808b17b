package demo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// builder fills the demo store in two phases: ordinary traffic through an
// engine in this process, then a poison message that crashes a child engine.
type builder struct {
	opts    *Options
	cfg     *config.Config
	cfgFile string
	world   *world
	kills   int
}

// traffic sends the day's messages and lets the engine work them off until
// it is idle: everything delivered that can be, the rest blocked, held,
// waiting or prepared — and the engine has checked back with the ERP on its
// three prepared orders: one committed, one rolled back, one stuck.
func (b *builder) traffic(ctx context.Context) error {
	st, err := bolt.Open(b.opts.DB, bolt.Options{MakeDirs: cmdutil.DefaultStore(b.opts.DB)})
	if err != nil {
		return err
	}
	defer st.Close()
	svc := local.New(st, local.Options{Actor: "demo"})
	err = st.Update(ctx, func(w store.Writer) error {
		if err := w.SetParam(domain.Param{Name: placement.ParamEOInbound, Sub: "CENTRAL", Value: 2}); err != nil {
			return err
		}
		return w.SetParam(domain.Param{Name: placement.ParamEOOutbound, Sub: "WMS", Value: 3})
	})
	if err != nil {
		return err
	}
	if _, err := svc.Send(ctx, demoMessages()); err != nil {
		return fmt.Errorf("demo: send: %w", err)
	}

	p := &progress{changed: make(chan struct{}, 1), checks: map[engine.EventKind]bool{}}
	eng, err := engine.Configured(st, b.cfg, engine.Options{
		Config: engine.Config{NodeID: "demo"}, Logger: slog.New(slog.DiscardHandler), Observe: p.observe,
	})
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- eng.Run(runCtx) }()
	timeout := time.After(45 * time.Second)
	// First the three check-backs, then an idle engine after them: what
	// the check-back committed is delivered by then.
	idles := -1
	for {
		checked, n := p.state()
		if checked && idles < 0 {
			idles = n
			eng.Notify()
		}
		if idles >= 0 && n > idles {
			break
		}
		select {
		case <-p.changed:
		case err := <-ran:
			return fmt.Errorf("demo: the engine stopped early: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			return errors.New("demo: the engine did not finish the demo traffic within 45s")
		}
	}
	stop()
	return <-ran
}

// progress follows the engine's events during the traffic phase.
type progress struct {
	mu      sync.Mutex
	changed chan struct{}
	// checks holds the check-back outcomes seen; idles counts the times
	// the engine went idle.
	checks map[engine.EventKind]bool
	idles  int
}

func (p *progress) observe(ev engine.Event) {
	p.mu.Lock()
	switch ev.Kind {
	case engine.EventCheckCommitted, engine.EventCheckRolledBack, engine.EventStuck:
		p.checks[ev.Kind] = true
	case engine.EventIdle:
		p.idles++
	}
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// state says whether every check-back outcome of the demo was seen, and how
// often the engine went idle so far.
func (p *progress) state() (checked bool, idles int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.checks) == 3, p.idles
}

// demoMessages is a day of integration traffic.
func demoMessages() []domain.SendRequest {
	var reqs []domain.SendRequest
	add := func(qos domain.QoS, sender, iface, appQueue, payload string) {
		reqs = append(reqs, domain.SendRequest{QoS: qos, Sender: sender, Interface: iface, AppQueue: appQueue,
			Headers: map[string]string{"X-Source": "demo"}, Payload: []byte(payload)})
	}
	for i := 1; i <= 40; i++ {
		add(domain.EO, "ERP", "OrderCreate", "", fmt.Sprintf(`<order id="%d" customer="C%03d"/>`, 4700+i, i%17))
	}
	for i := 1; i <= 12; i++ {
		add(domain.EOIO, "ERP", "OrderCreate", "ORDERS_DE", fmt.Sprintf(`<order id="%d" country="DE"/>`, 5100+i))
	}
	for i := 1; i <= 6; i++ {
		cur := "EUR"
		if i == 3 {
			cur = "XXX"
		}
		add(domain.EOIO, "ERP", "InvoiceCreate", "INVOICES_FR", fmt.Sprintf(`invoice=%d currency=%s amount=%d.00`, 9000+i, cur, 100*i))
	}
	// One update for the CRM, which is down: with several, how many
	// start before the first WAITs (the EO window) would vary by run.
	add(domain.EO, "SHOP", "CustomerUpdate", "", `{"customer":"C001","email":"c1@example.com"}`)
	for i := 1; i <= 4; i++ {
		w := i
		if i == 2 {
			w = -2
		}
		add(domain.EO, "SHOP", "LabelRequest", "", fmt.Sprintf(`parcel=P%d weight=%d`, 300+i, w))
	}
	// Three transactional sends whose ERP transactions ended unseen: the
	// engine asks the ERP about each (§9).
	for _, order := range []string{"4797", "4798", "4799"} {
		reqs = append(reqs, domain.SendRequest{QoS: domain.EO, Sender: "ERP", Interface: "OrderCreate", Prepare: true,
			Headers: map[string]string{"X-Order": order},
			Payload: []byte(`<order id="` + order + `" state="prepared, awaiting the ERP's commit"/>`)})
	}
	return reqs
}

// crashes sends a poison message and runs the engine as a child process
// until the poison is blacklisted: the first two runs die by SIGKILL while
// delivering it, the third finds it at the blacklisting threshold.
func (b *builder) crashes(ctx context.Context) error {
	st, err := bolt.Open(b.opts.DB, bolt.Options{MakeDirs: cmdutil.DefaultStore(b.opts.DB)})
	if err != nil {
		return err
	}
	svc := local.New(st, local.Options{Actor: "demo"})
	_, err = svc.Send(ctx, []domain.SendRequest{{QoS: domain.EO, Sender: "LAB", Interface: "SampleResult",
		Payload: []byte("sample=S-77 result=POISON (a payload the archive script cannot survive)")}})
	svc.Close()
	if err != nil {
		return err
	}
	for run := 1; run <= 4; run++ {
		killed, err := b.runChild(ctx)
		if err != nil {
			return err
		}
		if !killed {
			return nil
		}
		b.kills++
		b.opts.Hintf("crash %d: the poison message killed the engine process (SIGKILL); restarting it", b.kills)
	}
	return errors.New("demo: the engine kept crashing; the poison message was not blacklisted")
}

// runChild runs `queuectl serve` on the demo store. It returns killed=true
// when the child died by SIGKILL; otherwise it stops the child with SIGTERM
// once it has started (after crash recovery) and checks it exits cleanly.
func (b *builder) runChild(ctx context.Context) (killed bool, err error) {
	cmd := exec.CommandContext(ctx, b.opts.Exe, "serve", "--db", b.opts.DB, "--config", b.cfgFile, "--log-format", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return false, err
	}
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("demo: start the engine process: %w", err)
	}
	var log lockedBuffer
	// blacklisted is closed when the child reports, after its crash
	// recovery, that the poison is blacklisted: from then on it cannot crash.
	blacklisted := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(io.TeeReader(stderr, &log))
		seen := false
		for sc.Scan() {
			if !seen && strings.Contains(sc.Text(), `"msg":"message blacklisted"`) {
				seen = true
				close(blacklisted)
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	select {
	case err := <-exited:
		return diedOfKill(err), checkExit(err, &log)
	case <-blacklisted:
	case <-timeout.C:
		cmd.Process.Kill()
		<-exited
		return false, fmt.Errorf("demo: the engine process neither crashed nor blacklisted the poison within 30s\n%s", log.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return false, err
	}
	err = <-exited
	if err != nil {
		return false, fmt.Errorf("demo: the engine process did not stop cleanly: %v\n%s", err, log.String())
	}
	return false, nil
}

func diedOfKill(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func checkExit(err error, log *lockedBuffer) error {
	if err == nil || diedOfKill(err) {
		return nil
	}
	return fmt.Errorf("demo: the engine process failed: %v\n%s", err, log.String())
}

// lockedBuffer collects the child's log from the reading goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
