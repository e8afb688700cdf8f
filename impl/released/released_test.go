package released

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/surfacelog/surface/impl/event"
)

const header = `{"type":"session","version":0,"id":"s1","createdAt":1767225600000,"delegationDepth":0}`

// batch is the records of one write: events and packed rows.
var batches = [][]string{
	{
		`{"type":"turn/start","seq":0,"time":10,"data":{"turn":1}}`,
		`{"type":"user/message","seq":1,"time":10,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"u1"},"surfaceOp":"append"}`,
		`{"type":"text-chunks","seq0":2,"time0":11,"data":{"turn":1,"step":1,"index":0,"dt":[1,-1],"texts":["a","b","<c>"]}}`,
		`{"type":"reasoning-chunks","seq0":5,"time0":20,"data":{"turn":1,"step":1,"index":1,"dt":[0,0,5],"texts":["r1","r2","r3","r4"]}}`,
	},
	{
		`{"type":"assistant/chunk","seq":9,"time":30,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":2,"id":"c1","name":"read","argumentsDelta":"{"}}}`,
		`{"type":"tool-call-chunks","seq0":10,"time0":31,"data":{"turn":1,"step":1,"index":2,"dt":[1,1],"id":"c1","args":["\"p\"",":1","}"]}}`,
	},
	{`{"type":"turn/end","seq":13,"time":40,"data":{"turn":1,"reason":{"kind":"completed"}}}`},
}

// zstdFile writes a header frame and one frame per batch, each with its
// checksum, as the released writer does.
func zstdFile(t *testing.T, batches [][]string) ([]byte, []int) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	out := enc.EncodeAll([]byte(header+"\n"), nil)
	starts := []int{0}
	for _, b := range batches {
		starts = append(starts, len(out))
		out = enc.EncodeAll([]byte(strings.Join(b, "\n")+"\n"), out)
	}
	return out, starts
}

func plainFile(batches [][]string) []byte { return plainOf(header, batches) }

// wantEvents are the 14 events the batches stand for.
func checkEvents(t *testing.T, l *Log, n int) {
	t.Helper()
	if len(l.Events) != n {
		t.Fatalf("%d events, want %d", len(l.Events), n)
	}
	for i, e := range l.Events {
		var w struct {
			Type string
			Seq  int64
		}
		if err := json.Unmarshal(e, &w); err != nil || w.Seq != int64(i) {
			t.Fatalf("event %d: %s", i, e)
		}
	}
	want := map[int]string{
		2:  `{"type":"assistant/chunk","seq":2,"time":11,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}}`,
		4:  `{"type":"assistant/chunk","seq":4,"time":11,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"<c>"}}}`,
		8:  `{"type":"assistant/chunk","seq":8,"time":25,"data":{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":1,"text":"r4"}}}`,
		12: `{"type":"assistant/chunk","seq":12,"time":33,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":2,"id":"c1","argumentsDelta":"}"}}}`,
	}
	for i, w := range want {
		if i < len(l.Events) && string(l.Events[i]) != w {
			t.Errorf("event %d:\n got %s\nwant %s", i, l.Events[i], w)
		}
	}
}

// TestReadsEveryPackedKind: a .jsonl.zstd file of several frames and the
// same log in plain JSONL read to the same 14 events: every packed row
// kind expanded (times from dt, negative steps included; a tool call's
// first delta with its name stays a plain event), the header with its
// delegationDepth kept.
func TestReadsEveryPackedKind(t *testing.T) {
	z, _ := zstdFile(t, batches)
	before := bytes.Clone(z)
	l, err := Read(z)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Compressed || l.Frames != 4 || l.TornBytes != 0 || l.Header.ID != "s1" {
		t.Fatalf("%+v", l)
	}
	checkEvents(t, l, 14)
	if !bytes.Equal(z, before) {
		t.Fatal("Read changed its input")
	}
	p, err := Read(plainFile(batches))
	if err != nil {
		t.Fatal(err)
	}
	if p.Compressed {
		t.Fatal("plain file read as compressed")
	}
	checkEvents(t, p, 14)
}

// TestTornLastFrame: a frame cut short by a crash is reported, the frames
// before it are kept, and the complete records the torn frame still holds
// are recovered when they can be.
func TestTornLastFrame(t *testing.T) {
	z, starts := zstdFile(t, batches)
	last := starts[len(starts)-1]
	for _, cut := range []int{last + 3, len(z) - 1} {
		l, err := Read(z[:cut])
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if l.Frames != 3 || l.TornBytes != cut-last {
			t.Fatalf("cut at %d: %d frames, %d torn bytes", cut, l.Frames, l.TornBytes)
		}
		checkEvents(t, l, len(l.Events))
		if len(l.Events) < 13 {
			t.Fatalf("cut at %d: %d events", cut, len(l.Events))
		}
	}
}

// TestRefused: a bad checksum, a complete frame that ends inside a record,
// a malformed packed row, a first frame that is more than the header, a
// header without delegationDepth (this library's own JSONL header) or with
// another version are refused with typed errors, and the bytes are left as
// they were.
func TestRefused(t *testing.T) {
	z, starts := zstdFile(t, batches)
	badSum := bytes.Clone(z)
	badSum[starts[2]-1] ^= 0xff // the last byte of frame 2: its checksum
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	midRecord := enc.EncodeAll([]byte(`{"type":"turn/start","seq":0,"time":1,"da`), bytes.Clone(z[:starts[1]]))
	twoLines := enc.EncodeAll([]byte(header+"\n"+batches[0][0]+"\n"), nil)
	enc.Close()
	malformed := func(row string) []byte {
		return plainFile([][]string{{batches[0][0], batches[0][1], row, `{"type":"turn/end","seq":5,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`}})
	}
	cases := []struct {
		name string
		data []byte
		want event.Code
	}{
		{"bad checksum", badSum, event.CodePersistCorrupt},
		{"frame ends inside a record", midRecord, event.CodePersistCorrupt},
		{"dt one short", malformed(`{"type":"text-chunks","seq0":2,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b","c"]}}`), event.CodePersistCorrupt},
		{"row with an extra member", malformed(`{"type":"text-chunks","seq0":2,"time0":1,"x":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}`), event.CodePersistCorrupt},
		{"tool row without id", malformed(`{"type":"tool-call-chunks","seq0":2,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"args":["a","b","c"]}}`), event.CodePersistCorrupt},
		{"empty texts", malformed(`{"type":"reasoning-chunks","seq0":2,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":[]}}`), event.CodePersistCorrupt},
		{"first frame holds an event", twoLines, event.CodePersistNotASession},
		{"no delegationDepth", []byte(`{"type":"session","version":0,"id":"s1","createdAt":1}` + "\n"), event.CodePersistNotASession},
		{"negative delegationDepth", []byte(`{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":-1}` + "\n"), event.CodePersistNotASession},
		{"version 1", []byte(`{"type":"session","version":1,"id":"s1","createdAt":1,"delegationDepth":0}` + "\n"), event.CodePersistFormatVersion},
		{"retired field", []byte(`{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0,"sandboxMode":"x"}` + "\n"), event.CodePersistCorrupt},
		{"not a session", []byte("hello\n"), event.CodePersistNotASession},
	}
	for _, c := range cases {
		before := bytes.Clone(c.data)
		_, err := Read(c.data)
		var ee *event.Error
		if !errors.Is(err, c.want) || !errors.As(err, &ee) {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
		if !bytes.Equal(before, c.data) {
			t.Errorf("%s: the input changed", c.name)
		}
	}
}

// TestPlainTail: in plain JSONL a last line without its newline is
// ignored, and a line that does not parse is a tolerated crash tail when
// no turn/end follows it, corruption when one does.
func TestPlainTail(t *testing.T) {
	good := plainFile(batches)
	l, err := Read(append(bytes.Clone(good), `{"type":"turn/start","se`...))
	if err != nil || l.TornBytes != len(`{"type":"turn/start","se`) || len(l.Events) != 14 {
		t.Fatalf("%v %+v", err, l)
	}
	l, err = Read(append(bytes.Clone(good), "garbage\n{\"type\":\"x\"\n"...))
	if err != nil || l.TornBytes != len("garbage\n{\"type\":\"x\"\n") || len(l.Events) != 14 {
		t.Fatalf("tail after the last turn/end: %v %+v", err, l)
	}
	lines := strings.Split(strings.TrimSuffix(string(good), "\n"), "\n")
	lines[3] = "garbage"
	if _, err := Read([]byte(strings.Join(lines, "\n") + "\n")); !errors.Is(err, event.CodePersistCorrupt) {
		t.Fatalf("damage before a turn/end: %v", err)
	}
}
