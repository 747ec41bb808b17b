package bench

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/charmbracelet/bubbles/progress"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
)

// progressBar draws a progress line on stderr when it is a terminal, at
// most ten times a second; off a terminal (or with --quiet) it draws
// nothing, so that logs and pipes stay clean.
type progressBar struct {
	w     io.Writer
	bar   progress.Model
	mu    sync.Mutex
	last  time.Time
	shown bool
}

func newProgressBar(io *cmdutil.IOStreams, quiet bool) *progressBar {
	if !io.StderrTTY || quiet {
		return &progressBar{}
	}
	return &progressBar{w: io.ErrOut, bar: progress.New(progress.WithDefaultGradient(), progress.WithWidth(40))}
}

// show draws done of total.
func (p *progressBar) show(done, total int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if done < total && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.shown = true
	fmt.Fprintf(p.w, "\r%s %d/%d", p.bar.ViewAs(float64(done)/float64(total)), done, total)
}

// done ends the progress line.
func (p *progressBar) done() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
