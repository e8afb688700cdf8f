package released

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/zstdframe"
)

// Values the other tests never vary, each beside its look-alike: which
// frame a refusal names (second, third, fourth), the seq a refusal
// carries (none for the file, the event's for a record), an empty frame
// in the middle and at the end, a blank line before a turn/end and after
// the last, and a frame torn only in its checksum.

func frameOf(text string) []byte {
	s := zstdframe.Shape{FCSFlag: 3, Checksum: true}
	return zstdframe.Frame(s, zstdframe.Split([]byte(text), s.MaxBlock(len(text)), 1<<30))
}

func framesOf(texts ...string) []byte {
	var out []byte
	for _, t := range texts {
		out = append(out, frameOf(t)...)
	}
	return out
}

func joined(lines []string) string { return strings.Join(lines, "\n") + "\n" }

// TestRefusalsNameTheirFrame: a complete frame that ends inside a record,
// and a record that is no event, are refused naming the frame they are
// in, whichever it is; the first carries no seq, the second its event's.
func TestRefusalsNameTheirFrame(t *testing.T) {
	for k := 2; k <= 4; k++ {
		texts := []string{header + "\n", joined(batches[0]), joined(batches[1]), joined(batches[2])}
		before := 0
		for _, b := range batches[:k-2] {
			before += len(b)
		}
		cut := slicesClone(texts)
		cut[k-1] = strings.TrimSuffix(cut[k-1], "\n")
		_, err := Read(framesOf(cut...))
		var ee *event.Error
		if !errors.As(err, &ee) || ee.Code != event.CodePersistCorrupt || ee.Seq != -1 || !strings.Contains(err.Error(), fmt.Sprintf("zstd frame %d ", k)) {
			t.Errorf("frame %d ends inside a record: %v (%+v)", k, err, ee)
		}
		bad := slicesClone(texts)
		bad[k-1] = `{"type":"text-chunks","seq0":2,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b","c"]}}` + "\n" + bad[k-1]
		_, err = Read(framesOf(bad...))
		if !errors.As(err, &ee) || ee.Code != event.CodePersistCorrupt || !strings.Contains(err.Error(), fmt.Sprintf("zstd frame %d:", k)) {
			t.Errorf("a bad record in frame %d: %v", k, err)
		}
	}
	// A torn last frame whose recovered records hold a malformed row: the
	// refusal names that frame too.
	malformed := `{"type":"text-chunks","seq0":2,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b","c"]}}`
	torn := framesOf(header+"\n", joined(batches[0]), malformed+"\n"+joined(batches[2]))
	if _, err := Read(torn[:len(torn)-1]); !errors.Is(err, event.CodePersistCorrupt) || !strings.Contains(err.Error(), "zstd frame 3:") {
		t.Errorf("a malformed row in a torn third frame: %v", err)
	}
	for _, data := range [][]byte{framesOf(header + "\n" + batches[0][0] + "\n"), framesOf("not a header\n"), nil} {
		_, err := Read(data)
		var ee *event.Error
		if len(data) > 0 && (!errors.As(err, &ee) || ee.Seq != -1) {
			t.Errorf("%q: %v", data, err)
		}
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// TestEmptyFrames: a frame with no content, between batches or last,
// holds no record and is counted.
func TestEmptyFrames(t *testing.T) {
	want, err := Read(plainFile(batches))
	if err != nil {
		t.Fatal(err)
	}
	for _, texts := range [][]string{
		{header + "\n", joined(batches[0]), "", joined(batches[1]), joined(batches[2])},
		{header + "\n", joined(batches[0]), joined(batches[1]), joined(batches[2]), ""},
	} {
		l, err := Read(framesOf(texts...))
		if err != nil || l.Frames != 5 || len(l.Events) != len(want.Events) || l.TornBytes != 0 {
			t.Errorf("%d frames, %d events, %v", l.Frames, len(l.Events), err)
		}
	}
}

// TestBlankLines: a blank line in a plain file does not parse: before a
// turn/end it is corruption, after the last one a torn tail (its newline
// counted), beside a last line that merely lacks its newline.
func TestBlankLines(t *testing.T) {
	good := string(plainFile(batches))
	lines := strings.Split(strings.TrimSuffix(good, "\n"), "\n")
	mid := joined(append(append(slicesClone(lines[:4]), ""), lines[4:]...))
	if _, err := Read([]byte(mid)); !errors.Is(err, event.CodePersistCorrupt) || !strings.Contains(err.Error(), "line 5:") {
		t.Errorf("a blank line (line 5 of the file) before a turn/end: %v", err)
	}
	for tail, torn := range map[string]int{"\n": 1, "\n\n": 2, "\n{": 2, "{": 1} {
		l, err := Read([]byte(good + tail))
		if err != nil || l.TornBytes != torn || len(l.Events) != 14 {
			t.Errorf("tail %q: %v, %d torn bytes (want %d), %d events", tail, err, l.TornBytes, torn, len(l.Events))
		}
	}
}

// TestTornInItsChecksum: a last frame cut in its checksum has every block
// whole: all its records are recovered, and it is still reported torn.
func TestTornInItsChecksum(t *testing.T) {
	texts := []string{header + "\n", joined(batches[0]), joined(batches[1]), joined(batches[2])}
	z := framesOf(texts...)
	for cut := 1; cut <= 4; cut++ {
		l, err := Read(z[:len(z)-cut])
		if err != nil || l.Frames != 3 || l.TornBytes != len(frameOf(texts[3]))-cut || len(l.Events) != 14 {
			t.Errorf("cut %d bytes into the checksum: %v, %d frames, %d torn, %d events", cut, err, l.Frames, l.TornBytes, len(l.Events))
		}
	}
	// The look-alike: cut inside the block, the record is not whole.
	l, err := Read(z[:len(z)-4-3])
	if err != nil || len(l.Events) != 13 {
		t.Errorf("cut inside the last block: %v, %d events", err, len(l.Events))
	}
	_ = bytes.MinRead
}

// TestHeaderEdges: the header's numbers at the edge of what is read,
// each beside its look-alike; every header refusal carries no seq.
func TestHeaderEdges(t *testing.T) {
	h := func(members string) []byte {
		return []byte(`{"type":"session","version":0,"id":"s1",` + members + "}\n")
	}
	cases := []struct {
		members string
		want    event.Code // "" when read
	}{
		{`"createdAt":1,"delegationDepth":9007199254740991`, ""},
		{`"createdAt":1,"delegationDepth":9007199254740992`, event.CodePersistNotASession},
		{`"createdAt":9007199254740991,"delegationDepth":0`, ""},
		{`"createdAt":9007199254740992,"delegationDepth":0`, event.CodePersistNotASession},
		{`"createdAt":0,"delegationDepth":0`, ""},
		{`"createdAt":-0,"delegationDepth":0`, event.CodePersistNotASession},
		{`"createdAt":1,"delegationDepth":-0`, event.CodePersistNotASession},
		{`"createdAt":1,"delegationDepth":1.0`, ""}, // a number is read by its value, as the released reader reads it
		{`"createdAt":1.0e3,"delegationDepth":0,"seedLength":2.0`, ""},
		{`"createdAt":1,"delegationDepth":0,"seedLength":null`, ""},
		{`"createdAt":1,"delegationDepth":0,"seedLength":-1`, event.CodePersistNotASession},
		{`"createdAt":1,"delegationDepth":0,"seedLength":"2"`, event.CodePersistNotASession},
		{`"createdAt":1,"delegationDepth":1.5`, event.CodePersistNotASession},
		{`"createdAt":1,"delegationDepth":"1"`, event.CodePersistNotASession},
		{`"createdAt":1`, event.CodePersistNotASession},
		{`"createdAt":1,"delegationDepth":0,"sandboxMode":null`, event.CodePersistCorrupt},
		{`"createdAt":1,"delegationDepth":0,"approvalPolicy":null`, event.CodePersistCorrupt},
	}
	for _, c := range cases {
		for _, file := range [][]byte{h(c.members), frameOf(string(h(c.members)))} {
			_, err := Read(file)
			var ee *event.Error
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s: %v", c.members, err)
			case c.want != "" && (!errors.As(err, &ee) || ee.Code != c.want || ee.Seq != -1):
				t.Errorf("%s: %v, want %s with no seq", c.members, err, c.want)
			}
		}
	}
	l, err := Read(h(`"createdAt":1.0e3,"delegationDepth":2.0,"seedLength":2.0`))
	if err != nil || l.Header.CreatedAt != 1000 || l.Header.DelegationDepth != 2 || l.Header.SeedLength == nil || *l.Header.SeedLength != 2 {
		t.Fatalf("numbers by value: %+v, %v", l, err)
	}
	if l, err := Read([]byte(`{"type":"session","version":0.0,"id":"s1","createdAt":1,"delegationDepth":0}` + "\n")); err != nil || l.Header.Version != 0 {
		t.Fatalf("version 0.0: %v", err)
	}
	for _, torn := range []string{`{"type":"session","version":0`, "", "\n"} {
		var ee *event.Error
		if _, err := Read([]byte(torn)); !errors.As(err, &ee) || ee.Code != event.CodePersistNotASession || ee.Seq != -1 {
			t.Errorf("%q: %v", torn, err)
		}
	}
	bad := []byte(`{"type":"session","version":2,"id":"s1","createdAt":1,"delegationDepth":0}` + "\n")
	var ee *event.Error
	if _, err := Read(bad); !errors.As(err, &ee) || ee.Code != event.CodePersistFormatVersion || ee.Seq != -1 {
		t.Errorf("version 2: %v", err)
	}
}

// TestPackedRowEdges: a packed row at seq 0 beside one at -1, a tool-call
// row with its name (on every member) beside one whose name is no string.
func TestPackedRowEdges(t *testing.T) {
	file := func(rows ...string) []byte { return []byte(header + "\n" + joined(rows)) }
	l, err := Read(file(`{"type":"text-chunks","seq0":0,"time0":5,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}`))
	if err != nil || len(l.Events) != 2 || !strings.Contains(string(l.Events[0]), `"seq":0`) {
		t.Fatalf("a row at seq 0: %v %s", err, l.Events)
	}
	if _, err := Read(file(`{"type":"text-chunks","seq0":-1,"time0":5,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}`, `{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`)); !errors.Is(err, event.CodePersistCorrupt) {
		t.Fatalf("a row at seq -1: %v", err)
	}
	l, err = Read(file(`{"type":"tool-call-chunks","seq0":0,"time0":5,"data":{"turn":1,"step":1,"index":2,"dt":[1],"id":"c1","name":"read","args":["{","}"]}}`))
	if err != nil || len(l.Events) != 2 {
		t.Fatalf("a named tool-call row: %v", err)
	}
	for _, e := range l.Events {
		if !strings.Contains(string(e), `"id":"c1","name":"read","argumentsDelta"`) {
			t.Fatalf("a named tool-call row's member: %s", e)
		}
	}
	if _, err := Read(file(`{"type":"tool-call-chunks","seq0":0,"time0":5,"data":{"turn":1,"step":1,"index":2,"dt":[1],"id":"c1","name":5,"args":["{","}"]}}`, `{"type":"turn/end","seq":2,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`)); !errors.Is(err, event.CodePersistCorrupt) {
		t.Fatalf("a tool-call row whose name is a number: %v", err)
	}
}

// TestPackedRowLimits: a packed row's times and seqs at the safe limit
// are read; one past it is refused (each beside the other).
func TestPackedRowLimits(t *testing.T) {
	const max = 1<<53 - 1
	row := func(seq0, time0 int64, dt string, texts string) []byte {
		return []byte(header + "\n" + fmt.Sprintf(`{"type":"text-chunks","seq0":%d,"time0":%d,"data":{"turn":1,"step":1,"index":0,"dt":%s,"texts":%s}}`, seq0, time0, dt, texts) + "\n" +
			`{"type":"turn/end","seq":0,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n")
	}
	cases := []struct {
		name string
		file []byte
		ok   bool
	}{
		{"time up to the limit", row(0, max-1, `[1]`, `["a","b"]`), true},
		{"time one past the limit", row(0, max-1, `[2]`, `["a","b"]`), false},
		{"time down to minus the limit", row(0, -max+1, `[-1]`, `["a","b"]`), true},
		{"time one below minus the limit", row(0, -max+1, `[-2]`, `["a","b"]`), false},
		{"a dt of the limit", row(0, 0, fmt.Sprintf(`[%d]`, max), `["a","b"]`), true},
		{"a dt past the limit", row(0, 0, fmt.Sprintf(`[%d]`, max+1), `["a","b"]`), false},
		{"the last seq at the limit", row(max-1, 0, `[0]`, `["a","b"]`), true},
		{"the last seq past the limit", row(max, 0, `[0]`, `["a","b"]`), false},
	}
	for _, c := range cases {
		// The turn/end after the row makes a refused row corruption, not
		// a torn tail.
		l, err := Read(c.file)
		switch {
		case c.ok && (err != nil || len(l.Events) != 3):
			t.Errorf("%s: %v", c.name, err)
		case !c.ok && !errors.Is(err, event.CodePersistCorrupt):
			t.Errorf("%s: %v, want persist.corrupt", c.name, err)
		case !c.ok && strings.Contains(c.name, "time") && !strings.Contains(err.Error(), "dt[0]"):
			t.Errorf("%s: %v, want it to name dt[0]", c.name, err)
		}
	}
}

// TestEncodeRareValues: an empty batch writes no frame (a batch of one
// event writes one); createdAt 0 is written, a negative one refused with
// no seq.
func TestEncodeRareValues(t *testing.T) {
	one := []event.Event{{Type: event.TypeTurnStart, Seq: 0, Time: 1, Data: []byte(`{"turn":1}`)}}
	for _, c := range []struct {
		batches [][]event.Event
		frames  int
	}{{[][]event.Event{one}, 2}, {[][]event.Event{{}, one, {}}, 2}, {[][]event.Event{{}}, 1}, {nil, 1}} {
		z, err := Encode(Header{ID: "s1"}, c.batches, true)
		if err != nil {
			t.Fatal(err)
		}
		l, err := Read(z)
		if err != nil || l.Frames != c.frames {
			t.Errorf("%d batches: %d frames, want %d (%v)", len(c.batches), l.Frames, c.frames, err)
		}
	}
	if _, err := Encode(Header{ID: "s1", CreatedAt: 0, DelegationDepth: 0}, nil, false); err != nil {
		t.Errorf("createdAt 0: %v", err)
	}
	for _, h := range []Header{{ID: "s1", CreatedAt: -1}, {ID: "s1", DelegationDepth: -1}, {}} {
		_, err := Encode(h, nil, false)
		var ee *event.Error
		if !errors.As(err, &ee) || ee.Code != event.CodePersistHeaderInvalid || ee.Seq != -1 {
			t.Errorf("%+v: %v", h, err)
		}
	}
}

// TestEncodeSegmentEdges: each end of each kept range beside the unit
// just outside it, units past ASCII, a pair of UTF-16 surrogates, and the
// two dot segments beside a name that merely holds dots.
func TestEncodeSegmentEdges(t *testing.T) {
	for in, want := range map[string]string{
		"@AZ[":       "~0040AZ~005B",
		"`az{":       "~0060az~007B",
		"/09:":       "~002F09~003A",
		".-_~ ,+":    ".-_~007E~0020~002C~002B",
		"\x7f\u0080": "~007F~0080",
		"é😀":         "~00E9~D83D~DE00",
		".":          "~002E",
		"..":         "~002E~002E",
		"...":        "...",
		".a":         ".a",
		"":           "",
	} {
		if got := EncodeSegment(in); got != want {
			t.Errorf("EncodeSegment(%q) = %q, want %q", in, got, want)
		}
	}
}
