package conformance

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ProtocolVersion is the version of the testee protocol (spec/PROTOCOL.md).
const ProtocolVersion = 1

// Hello is the handshake, both ways.
type Hello struct {
	Type     string   `json:"type"` // "hello"
	Protocol int      `json:"protocol"`
	Name     string   `json:"name,omitempty"`
	Version  string   `json:"version,omitempty"`
	Features []string `json:"features,omitempty"`
}

// Request is a message from the runner to a testee.
type Request struct {
	Type string `json:"type"` // "hello", "reset", "step", "bye"
	// Protocol is set on hello.
	Protocol int `json:"protocol,omitempty"`
	// Step is set on step; its Expect is never sent.
	Step *Step `json:"step,omitempty"`
}

// Response is a testee's answer to reset ("ok") or step ("result",
// "skipped", "unsupported").
type Response struct {
	Type   string `json:"type"`
	Result Result `json:"result,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// MarshalJSON writes a response as PROTOCOL.md shows it: "result" only on
// a result, so a reset is answered exactly {"type":"ok"}.
func (r Response) MarshalJSON() ([]byte, error) {
	type plain struct {
		Type   string  `json:"type"`
		Result *Result `json:"result,omitempty"`
		Reason string  `json:"reason,omitempty"`
	}
	p := plain{Type: r.Type, Reason: r.Reason}
	if r.Type == "result" {
		p.Result = &r.Result
	}
	return json.Marshal(p)
}

// Testee is something the runner can play vectors against.
type Testee interface {
	Hello() (Hello, error)
	// Reset starts a new, empty session.
	Reset() error
	// Do runs one step. An error means the testee failed (crashed, hung,
	// answered garbage), not that the step was rejected.
	Do(Step) (Response, error)
	Close() error
}

// Serve speaks the protocol as a testee on r and w, running steps on t
// (used by `conformance testee`).
func Serve(t Testee, r io.Reader, w io.Writer) error {
	in := bufio.NewReader(r)
	enc := json.NewEncoder(w)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		var req Request
		if err := json.Unmarshal(line, &req); err != nil {
			return fmt.Errorf("bad request: %w", err)
		}
		var out any
		switch req.Type {
		case "hello":
			h, err := t.Hello()
			if err != nil {
				return err
			}
			out = h
		case "reset":
			if err := t.Reset(); err != nil {
				return err
			}
			out = Response{Type: "ok"}
		case "step":
			if req.Step == nil {
				return errors.New("step request without step")
			}
			resp, err := t.Do(*req.Step)
			if err != nil {
				return err
			}
			out = resp
		case "bye":
			return nil
		default:
			return fmt.Errorf("unknown request %q", req.Type)
		}
		if err := enc.Encode(out); err != nil {
			return err
		}
	}
}

// Exec is a testee in another process that speaks the protocol on its
// stdin and stdout (stderr is passed through to Log). It is started from
// Argv when set, else from Command, a shell command line run by /bin/sh -c
// (so quoting, variables and pipes work). The testee runs in a process
// group of its own: a testee that dies, hangs past Timeout or prints
// something that is not a protocol message fails the current request and
// is killed with every process it started; the next Reset starts it again.
//
// Two clocks apply: StartTimeout bounds starting the testee and its
// handshake (a race-enabled or JIT-compiled testee on a busy machine can
// take seconds to start), Timeout bounds the answer to each later request.
type Exec struct {
	Command string
	Argv    []string
	// Timeout bounds each request after the handshake (default 10 s).
	Timeout time.Duration
	// StartTimeout bounds the start and the hello handshake (default 60 s,
	// and never less than Timeout).
	StartTimeout time.Duration
	Log          io.Writer

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Closer
	lines  chan []byte
	hello  *Hello
	mu     sync.Mutex
	pid    atomic.Int64 // the running testee's pid (its group's id), 0 when none
	// pmu orders starts against Stop: once stopped is set, a testee
	// started (a restart under way as the signal came) is killed at once
	// and no later one starts, so nothing the runner started outlives it.
	pmu     sync.Mutex
	stopped bool
}

// errStopped is the error of a start after Stop.
var errStopped = errors.New("the runner is stopping: no testee is started")

// errTimeout is in the error of a request the testee did not answer in
// time (the runner counts them to stop a hopeless run).
const errTimeout = "did not answer within"

func (x *Exec) start() error {
	var cmd *exec.Cmd
	switch {
	case len(x.Argv) > 0:
		cmd = exec.Command(x.Argv[0], x.Argv[1:]...)
	case strings.TrimSpace(x.Command) != "":
		cmd = exec.Command("/bin/sh", "-c", x.Command)
	default:
		return errors.New("empty --exec command")
	}
	ownGroup(cmd)
	cmd.Stderr = x.Log
	if x.Log == nil {
		cmd.Stderr = os.Stderr
	}
	// The pipes are made here, not by exec.Cmd, so that every path closes
	// them: a start refused after Stop or failing would otherwise leave
	// the child's ends open (a runner restarting in a loop ran out of
	// descriptors).
	x.pmu.Lock()
	if x.stopped {
		x.pmu.Unlock()
		return errStopped
	}
	p, err := newPipes()
	if err != nil {
		x.pmu.Unlock()
		return fmt.Errorf("start testee: %w", err)
	}
	cmd.Stdin, cmd.Stdout = p.childIn, p.childOut
	err = cmd.Start()
	p.closeChildEnds()
	if err != nil {
		x.pmu.Unlock()
		p.closeOwnEnds()
		return fmt.Errorf("start testee: %w", err)
	}
	x.pid.Store(int64(cmd.Process.Pid))
	x.pmu.Unlock()
	stdin, stdout := p.in, p.out
	lines := make(chan []byte, 16)
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<16)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				lines <- line
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	x.cmd, x.stdin, x.stdout, x.lines = cmd, stdin, stdout, lines
	h := Hello{}
	if err := x.roundTripWithin(Request{Type: "hello", Protocol: ProtocolVersion}, &h, x.startTimeout()); err != nil {
		x.kill()
		return fmt.Errorf("handshake: %w", err)
	}
	if h.Type != "hello" || h.Protocol != ProtocolVersion {
		x.kill()
		return fmt.Errorf("handshake: testee speaks %q protocol %d, want hello protocol %d", h.Type, h.Protocol, ProtocolVersion)
	}
	x.hello = &h
	return nil
}

// kill ends the testee and everything it started (its process group).
func (x *Exec) kill() {
	if x.cmd != nil && x.cmd.Process != nil {
		signalGroup(x.cmd.Process.Pid, os.Kill)
		x.cmd.Process.Kill()
		x.cmd.Wait()
		x.closePipes()
	}
	x.pid.Store(0)
	x.cmd = nil
}

// closePipes closes the runner's ends of the testee's pipes (once its
// process has been waited for); the reader of its stdout then ends.
func (x *Exec) closePipes() {
	x.stdin.Close()
	x.stdout.Close()
}

// Stop forwards sig (SIGINT or SIGTERM, say) to the testee's process
// group, gives it grace to exit, then kills what is left of the group.
// It does not wait for a request in flight (it takes no lock), so a
// runner can call it from a signal handler while a request hangs; the
// request then fails and the Exec is left with no testee.
//
// After Stop, the Exec starts no testee: a restart under way is refused
// (or, if its process already started, that process is the one Stop
// signals), so a runner exiting after Stop leaves no testee behind.
func (x *Exec) Stop(sig os.Signal, grace time.Duration) {
	x.pmu.Lock()
	x.stopped = true
	pid := int(x.pid.Load())
	x.pmu.Unlock()
	if pid <= 0 {
		return
	}
	signalGroup(pid, sig)
	deadline := time.Now().Add(grace)
	for groupAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	signalGroup(pid, os.Kill)
}

// DefaultTimeout and DefaultStartTimeout are Exec's clocks when its own
// are zero.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultStartTimeout = 60 * time.Second
)

func (x *Exec) requestTimeout() time.Duration {
	if x.Timeout > 0 {
		return x.Timeout
	}
	return DefaultTimeout
}

func (x *Exec) startTimeout() time.Duration {
	t := x.StartTimeout
	if t <= 0 {
		t = DefaultStartTimeout
	}
	return max(t, x.requestTimeout())
}

func (x *Exec) roundTrip(req Request, out any) error {
	return x.roundTripWithin(req, out, x.requestTimeout())
}

func (x *Exec) roundTripWithin(req Request, out any, timeout time.Duration) error {
	b, _ := json.Marshal(req)
	if _, err := x.stdin.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("testee is gone: %w", err)
	}
	select {
	case line, ok := <-x.lines:
		if !ok {
			return errors.New("testee exited")
		}
		dec := json.NewDecoder(strings.NewReader(string(line)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(out); err != nil {
			return fmt.Errorf("testee printed something that is not a protocol message: %.200q", line)
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("testee %s %v", errTimeout, timeout)
	}
}

// Hello implements Testee.
func (x *Exec) Hello() (Hello, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.hello == nil {
		if err := x.start(); err != nil {
			return Hello{}, err
		}
	}
	return *x.hello, nil
}

// Reset implements Testee; it restarts a testee that failed.
func (x *Exec) Reset() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.cmd == nil {
		if err := x.start(); err != nil {
			return err
		}
	}
	var r Response
	if err := x.roundTrip(Request{Type: "reset"}, &r); err != nil {
		x.kill()
		return err
	}
	if r.Type != "ok" {
		x.kill()
		return fmt.Errorf("reset answered %q", r.Type)
	}
	return nil
}

// Do implements Testee.
func (x *Exec) Do(s Step) (Response, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.cmd == nil {
		return Response{}, errors.New("testee is not running")
	}
	s.Expect = nil
	var r Response
	if err := x.roundTrip(Request{Type: "step", Step: &s}, &r); err != nil {
		x.kill()
		return Response{}, err
	}
	switch r.Type {
	case "result", "skipped", "unsupported":
		return r, nil
	}
	x.kill()
	return Response{}, fmt.Errorf("step answered %q", r.Type)
}

// Close implements Testee.
func (x *Exec) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.cmd != nil {
		b, _ := json.Marshal(Request{Type: "bye"})
		x.stdin.Write(append(b, '\n'))
		x.stdin.Close()
		done := make(chan struct{})
		go func() { x.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			x.cmd.Process.Kill()
			<-done
		}
		// What the testee started and left running ends with it.
		signalGroup(x.cmd.Process.Pid, os.Kill)
		x.closePipes()
		x.pid.Store(0)
		x.cmd = nil
	}
	return nil
}

// pipes are a testee's stdin and stdout: the ends the runner keeps (in,
// out) and the ends the child gets (closed in the runner once it started).
type pipes struct {
	in, childIn   *os.File
	out, childOut *os.File
}

func newPipes() (*pipes, error) {
	childIn, in, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	out, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		in.Close()
		return nil, err
	}
	return &pipes{in: in, childIn: childIn, out: out, childOut: childOut}, nil
}

func (p *pipes) closeChildEnds() { p.childIn.Close(); p.childOut.Close() }
func (p *pipes) closeOwnEnds()   { p.in.Close(); p.out.Close() }
