package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/surfacelog/surface/conformance"
)

// signalGrace is how long a testee has to exit after the runner forwards
// SIGINT or SIGTERM to it, before its process group is killed.
const signalGrace = 5 * time.Second

// exitOnSignal ends the runner after a forwarded signal; a variable so
// that a test of the forwarding can stay in its process.
var exitOnSignal = os.Exit

// forwardSignals makes SIGINT and SIGTERM of the runner reach the
// testee's process group (which a terminal's Ctrl-C does not reach: the
// testee runs in a group of its own). The runner then exits with 128 +
// the signal's number, as a shell reports a process killed by it. stop
// ends the forwarding; when a signal came, it waits for the runner's exit
// instead of returning, so that the run's own end (a request failing as
// the testee goes) never reports first.
func forwardSignals(x *conformance.Exec, stderr io.Writer) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	var got atomic.Bool
	go func() {
		select {
		case sig := <-sigs:
			got.Store(true)
			fmt.Fprintf(stderr, "conformance: %v: stopping the testee\n", sig)
			x.Stop(sig, signalGrace)
			code := 128 + 15
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			exitOnSignal(code)
		case <-done:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
		})
		if got.Load() || len(sigs) > 0 {
			select {} // the handler exits the process
		}
	}
}
