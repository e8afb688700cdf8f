package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows a progress bar on a terminal for work that takes more
// than a second (conformance validate). Off when the writer is not a
// terminal, unless mode is "always".
type progress struct {
	w       io.Writer
	enabled bool
	delay   time.Duration
	start   time.Time
	desc    string
	total   int64
	bar     *progressbar.ProgressBar
}

func newProgress(w io.Writer, mode string) (*progress, error) {
	p := &progress{w: w, delay: time.Second}
	switch mode {
	case "auto":
		f, ok := w.(*os.File)
		p.enabled = ok && term.IsTerminal(int(f.Fd()))
	case "always":
		p.enabled, p.delay = true, 0
	case "never":
	default:
		return nil, fmt.Errorf("--progress %q: want auto, always or never", mode)
	}
	return p, nil
}

// phase starts a new piece of work of total units (-1: unknown).
func (p *progress) phase(desc string, total int64) {
	p.finish()
	p.desc, p.total, p.start = desc, total, time.Now()
}

// set reports that n units of the current phase are done.
func (p *progress) set(n int64) {
	if !p.enabled {
		return
	}
	if p.bar == nil {
		if time.Since(p.start) < p.delay {
			return
		}
		p.bar = progressbar.NewOptions64(p.total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.desc),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
		)
	}
	_ = p.bar.Set64(n)
}

// finish ends the current phase's bar, if one is shown.
func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}

// reader counts the bytes read from r as progress.
func (p *progress) reader(r io.Reader) io.Reader {
	if !p.enabled {
		return r
	}
	return &countingReader{r: r, p: p}
}

type countingReader struct {
	r io.Reader
	p *progress
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	c.p.set(c.n)
	return n, err
}
