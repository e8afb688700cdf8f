package ops

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
)

// The harness of the differential tests, tested on its own: a driver that
// misbehaves in one way is reported, and the same steps on a sound driver
// are not. (Every other package's differential test trusts these checks.)

// rewriting is a sound implementation driver whose State hands out a copy
// and then, at the next call, changes the copy it handed out before: what
// a session whose earlier results share memory with its later state does.
type rewriting struct {
	*Impl
	prev State
}

func (d *rewriting) State() State {
	if len(d.prev.Events) > 0 {
		d.prev.Events[0].Time++
	}
	d.prev = deepCopy(d.Impl.State())
	return d.prev
}

// lying reports one message fewer than the session holds once it holds
// two.
type lying struct{ *Impl }

func (d *lying) State() State {
	st := d.Impl.State()
	if len(st.Messages) >= 2 {
		st.Messages = st.Messages[:len(st.Messages)-1]
	}
	return st
}

func appendUser(text string) Step {
	data := json.RawMessage(`{"content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"user"}}`)
	in := event.AppendIntent()
	return Step{Kind: KindAppend, Type: event.TypeUserMessage, Data: data, Intent: &in}
}

func TestCompareNoticesMisbehavingDrivers(t *testing.T) {
	steps := []Step{appendUser("a"), appendUser("b"), appendUser("c")}
	run := func(wrap func(*Impl) Driver) string {
		p := NewPair()
		p.Impl = wrap(p.Impl.(*Impl))
		for _, s := range steps {
			if d := p.Step(s); d != "" {
				return d
			}
		}
		return ""
	}
	if d := run(func(i *Impl) Driver { return i }); d != "" {
		t.Fatalf("a sound driver diverged: %s", d)
	}
	if d := run(func(i *Impl) Driver { return &rewriting{Impl: i} }); !strings.Contains(d, "a slice handed out earlier changed") {
		t.Errorf("a driver that changes what it handed out: %q", d)
	}
	if d := run(func(i *Impl) Driver { return &lying{Impl: i} }); !strings.Contains(d, "after step 2: state differs") {
		t.Errorf("a driver that drops a message: %q", d)
	}
}

// TestRandomReportString: outcome codes sorted, success named, counts
// shown, and the failure (when there is one) after them.
func TestRandomReportString(t *testing.T) {
	r := RandomReport{Sequences: 3, Steps: 40, Outcomes: map[string]int{"surface.b": 2, "": 30, "event.a": 8}}
	lines := strings.Split(strings.TrimRight(r.String(), "\n"), "\n")
	want := []string{"3 random sequences, 40 steps", "(accepted)", "event.a", "surface.b"}
	if len(lines) != len(want) {
		t.Fatalf("report:\n%s", r)
	}
	for i, w := range want {
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), w) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
	if !strings.HasSuffix(lines[1], " 30") || !strings.HasSuffix(lines[3], " 2") {
		t.Errorf("counts: %q, %q", lines[1], lines[3])
	}
	r.Failure = "shrunk: 2 steps\n"
	if s := r.String(); !strings.HasSuffix(s, "surface.b                        2\nshrunk: 2 steps\n") {
		t.Errorf("report with a failure:\n%s", s)
	}
}

// badReload reloads (Seed of its own events) into a session one event
// short: a resume that loses the last event.
type badReload struct{ *Impl }

func (d *badReload) Seed(events []event.Event) (Driver, error) {
	return d.Impl.Seed(events[:len(events)-1])
}

// TestReloadContinuesOnTheReloadedSide: after a reload step the pair
// goes on with the reloaded session, so a reload that loses an event is
// reported, and a sound one is not.
func TestReloadContinuesOnTheReloadedSide(t *testing.T) {
	for _, bad := range []bool{false, true} {
		p := NewPair()
		if bad {
			p.Impl = &badReload{Impl: p.Impl.(*Impl)}
		}
		d := ""
		for _, s := range []Step{appendUser("a"), appendUser("b"), {Kind: KindReload}, appendUser("c")} {
			if d = p.Step(s); d != "" {
				break
			}
		}
		if (d != "") != bad {
			t.Errorf("reload that loses an event %v: divergence %q", bad, d)
		}
	}
}
