package released

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/surfacelog/surface/internal/zstdframe"
	"pgregory.net/rapid"
)

// This file builds .jsonl.zstd files by hand (internal/zstdframe, written
// from RFC 8878 §3.1.1), instead of through the one Go encoder the other
// tests use. That encoder always writes a window descriptor and
// compressed blocks; a compliant encoder may also write single-segment
// frames (whose content size then takes one byte when it is under 256),
// raw and RLE blocks, a zero dictionary ID of 1, 2 or 4 bytes, content
// sizes of 2 bytes (stored minus 256), 4 or 8, no checksum, and an empty
// last block. The reader must split and decode every such frame, and find
// a torn one wherever it is cut.

// drawShape draws a frame shape that can hold n bytes of content.
func drawShape(t *rapid.T, n int) zstdframe.Shape {
	s := zstdframe.Shape{
		Single:   rapid.Bool().Draw(t, "single"),
		DictSize: rapid.SampledFrom([]int{0, 0, 1, 2, 4}).Draw(t, "dict"),
		Checksum: rapid.IntRange(0, 3).Draw(t, "checksum") > 0,
		Unused:   rapid.IntRange(0, 5).Draw(t, "unused") == 0,
		Window:   rapid.IntRange(0, 7).Draw(t, "window"),
	}
	var flags []int
	for f := range 4 {
		if s.FCSFlag = f; s.Fits(n) {
			flags = append(flags, f)
		}
	}
	s.FCSFlag = rapid.SampledFrom(flags).Draw(t, "fcs")
	return s
}

// drawBlocks splits content into raw and RLE blocks no larger than max:
// a run of one byte may become an RLE block, anything else raw blocks of
// drawn sizes (Frame writes empty content as one empty raw block).
func drawBlocks(t *rapid.T, content []byte, max int) []zstdframe.Block {
	var blocks []zstdframe.Block
	for p := 0; p < len(content); {
		run := 1
		for p+run < len(content) && content[p+run] == content[p] && run < max {
			run++
		}
		if run >= 2 && rapid.IntRange(0, 2).Draw(t, "rle") > 0 {
			blocks = append(blocks, zstdframe.RLE(content[p], run))
			p += run
			continue
		}
		size := min(rapid.IntRange(1, max).Draw(t, "raw"), len(content)-p)
		blocks = append(blocks, zstdframe.Raw(content[p:p+size]))
		p += size
	}
	return blocks
}

// drawLog draws a released log: a turn of user messages whose texts are
// runs of one character (so RLE blocks have something to stand for), cut
// into batches of whole records.
func drawLog(t *rapid.T) (header string, batches [][]string) {
	n := rapid.IntRange(1, 12).Draw(t, "messages")
	records := []string{`{"type":"turn/start","seq":0,"time":10,"data":{"turn":1}}`}
	for i := 1; i <= n; i++ {
		var text strings.Builder
		for range rapid.IntRange(0, 4).Draw(t, "runs") {
			c := rapid.SampledFrom([]string{"a", " ", "z", "é", "0"}).Draw(t, "char")
			text.WriteString(strings.Repeat(c, rapid.IntRange(1, 700).Draw(t, "run")))
		}
		records = append(records, fmt.Sprintf(`{"type":"user/message","seq":%d,"time":11,"data":{"content":[{"type":"text","text":%q}],"source":{"kind":"user"},"role":"user","id":"u%d"},"surfaceOp":"append"}`, i, text.String(), i))
	}
	records = append(records, fmt.Sprintf(`{"type":"turn/end","seq":%d,"time":40,"data":{"turn":1,"reason":{"kind":"completed"}}}`, n+1))
	for len(records) > 0 {
		k := rapid.IntRange(1, len(records)).Draw(t, "batch")
		batches = append(batches, records[:k])
		records = records[k:]
	}
	return `{"type":"session","version":0,"id":"s1","createdAt":1767225600000,"delegationDepth":0}`, batches
}

// handFile writes a released file of hand-built frames: the header's, then
// one per batch. It returns the file and where each frame starts.
func handFile(t *rapid.T, header string, batches [][]string) ([]byte, []int, builtFrame) {
	texts := []string{header + "\n"}
	for _, b := range batches {
		texts = append(texts, strings.Join(b, "\n")+"\n")
	}
	var out []byte
	var starts []int
	var last builtFrame
	for _, text := range texts {
		s := drawShape(t, len(text))
		starts = append(starts, len(out))
		last = builtFrame{s, drawBlocks(t, []byte(text), s.MaxBlock(len(text)))}
		out = append(out, zstdframe.Frame(last.shape, last.blocks)...)
	}
	return out, starts, last
}

// builtFrame is what a hand-built frame was made of.
type builtFrame struct {
	shape  zstdframe.Shape
	blocks []zstdframe.Block
}

// arrived is the content of a frame cut after its first n bytes that a
// reader can still have: each block whose bytes all arrived, then the
// arrived bytes of a raw block cut short (a raw block's bytes are its
// content; an RLE block's one byte is not there until it is whole).
func (f builtFrame) arrived(n int) []byte {
	pos := 4 + 1 + f.shape.DictSize
	if !f.shape.Single {
		pos++
	}
	pos += map[int]int{0: 0, 1: 2, 2: 4, 3: 8}[f.shape.FCSFlag]
	if f.shape.Single && f.shape.FCSFlag == 0 {
		pos++
	}
	var out []byte
	for _, b := range f.blocks {
		wire := 3 + len(b.Data)
		if pos+wire > n {
			if !b.RLE && n > pos+3 {
				out = append(out, b.Data[:n-pos-3]...)
			}
			break
		}
		out = append(out, zstdframe.Content([]zstdframe.Block{b})...)
		pos += wire
	}
	return out
}

func plainOf(header string, batches [][]string) []byte {
	var b strings.Builder
	b.WriteString(header + "\n")
	for _, batch := range batches {
		for _, l := range batch {
			b.WriteString(l + "\n")
		}
	}
	return []byte(b.String())
}

// TestHandBuiltFrames: every frame shape RFC 8878 allows, with raw and RLE
// blocks, reads to the same events as the same records in plain JSONL, one
// frame per batch.
func TestHandBuiltFrames(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		header, batches := drawLog(t)
		z, _, _ := handFile(t, header, batches)
		got, err := Read(z)
		if err != nil {
			t.Fatalf("hand-built file refused: %v", err)
		}
		want, err := Read(plainOf(header, batches))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Compressed || got.Frames != len(batches)+1 || got.TornBytes != 0 {
			t.Fatalf("compressed %v, %d frames (want %d), %d torn bytes", got.Compressed, got.Frames, len(batches)+1, got.TornBytes)
		}
		if d := cmp.Diff(rawStrings(want.Events), rawStrings(got.Events)); d != "" {
			t.Fatalf("events differ from the plain file's (-plain +zstd):\n%s", d)
		}
	})
}

// TestHandBuiltFramesTorn: a hand-built file cut anywhere inside its last
// frame keeps every frame before it, reports the rest as torn, and
// recovers exactly the torn frame's records whose bytes arrived whole.
func TestHandBuiltFramesTorn(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		header, batches := drawLog(t)
		z, starts, lastFrame := handFile(t, header, batches)
		last := starts[len(starts)-1]
		cut := rapid.IntRange(last+1, len(z)-1).Draw(t, "cut")
		got, err := Read(z[:cut])
		if err != nil {
			t.Fatalf("cut at %d of %d (last frame at %d): %v", cut, len(z), last, err)
		}
		if got.Frames != len(starts)-1 || got.TornBytes != cut-last {
			t.Fatalf("cut at %d: %d frames, %d torn bytes; want %d, %d", cut, got.Frames, got.TornBytes, len(starts)-1, cut-last)
		}
		full, err := Read(plainOf(header, batches))
		if err != nil {
			t.Fatal(err)
		}
		before := 0
		for _, b := range batches[:len(batches)-1] {
			before += len(b)
		}
		// What it recovers is every record whose bytes arrived whole.
		recovered := bytes.Count(lastFrame.arrived(cut-last), []byte("\n"))
		if len(got.Events) != before+recovered {
			t.Fatalf("cut at %d of a last frame of %d bytes: %d events, want %d and the %d records that arrived", cut-last, len(z)-last, len(got.Events), before, recovered)
		}
		if d := cmp.Diff(rawStrings(full.Events[:len(got.Events)]), rawStrings(got.Events)); d != "" {
			t.Fatalf("cut at %d: not a prefix (-full +torn):\n%s", cut, d)
		}
	})
}

// TestFrameHeaderLookAlikes: header shapes that differ by one bit or one
// byte, side by side: the content-size flag 0 is one byte in a
// single-segment frame and none in another; the unused bit 4 is ignored
// while the reserved bit 3 is refused; a dictionary ID of 0 in 1, 2 or 4
// bytes is no dictionary, another ID is refused (no dictionary is known);
// an RLE block is one byte on the wire however large its size; four bytes
// of something else than the magic are corrupt, fewer are a torn start.
func TestFrameHeaderLookAlikes(t *testing.T) {
	text := header + "\n"
	raw := []zstdframe.Block{zstdframe.Raw([]byte(text))}
	ok := func(name string, frame []byte) {
		t.Helper()
		l, err := Read(frame)
		if err != nil || l.Frames != 1 || l.TornBytes != 0 || l.Header.ID != "s1" {
			t.Errorf("%s: %+v, %v", name, l, err)
		}
	}
	refused := func(name string, frame []byte) {
		t.Helper()
		if _, err := Read(frame); err == nil {
			t.Errorf("%s: read without error", name)
		}
	}
	ok("single segment, 1-byte size", zstdframe.Frame(zstdframe.Shape{Single: true, Checksum: true}, raw))
	ok("window descriptor, no size", zstdframe.Frame(zstdframe.Shape{Checksum: true}, raw))
	ok("unused bit set", zstdframe.Frame(zstdframe.Shape{Single: true, Unused: true, Checksum: true}, raw))
	reserved := zstdframe.Frame(zstdframe.Shape{Single: true, Checksum: true}, raw)
	reserved[4] |= 0x08
	refused("reserved bit set", reserved)
	for _, d := range []int{1, 2, 4} {
		ok(fmt.Sprintf("dictionary ID 0 in %d bytes", d), zstdframe.Frame(zstdframe.Shape{DictSize: d, FCSFlag: 2, Checksum: true}, raw))
		withID := zstdframe.Frame(zstdframe.Shape{DictSize: d, FCSFlag: 2, Checksum: true}, raw)
		withID[6] = 7 // the dictionary ID's first byte, after magic, descriptor and window
		refused(fmt.Sprintf("dictionary ID 7 in %d bytes", d), withID)
	}
	ok("no checksum", zstdframe.Frame(zstdframe.Shape{FCSFlag: 3}, raw))
	// An RLE block of 300 spaces between two raw blocks: on the wire the
	// frame is far shorter than its content.
	pad := `{"type":"session","version":0,"id":"s1","createdAt":1767225600000,"delegationDepth":0,"cwd":"`
	rle := zstdframe.Frame(zstdframe.Shape{Single: true, FCSFlag: 1, Checksum: true}, []zstdframe.Block{
		zstdframe.Raw([]byte(pad)),
		zstdframe.RLE(' ', 300),
		zstdframe.Raw([]byte("\"}\n")),
	})
	if l, err := Read(rle); err != nil || l.Header.Cwd == nil || len(*l.Header.Cwd) != 300 {
		t.Errorf("RLE block: %+v, %v", l, err)
	}
	// The same frame with the RLE block's one byte dropped is torn, not
	// corrupt: its structure says one more byte was to come.
	if l, err := Read(append(zstdframe.Frame(zstdframe.Shape{Single: true, Checksum: true}, raw), rle[:len(rle)-4-3-3-1]...)); err != nil || l.TornBytes == 0 {
		t.Errorf("RLE block cut before its byte: %+v, %v", l, err)
	}
	first := zstdframe.Frame(zstdframe.Shape{Single: true, Checksum: true}, raw)
	refused("four bytes that are not the magic", append(bytes.Clone(first), 1, 2, 3, 4))
	for n := 1; n <= 3; n++ {
		l, err := Read(append(bytes.Clone(first), 0x28, 0xb5, 0x2f)[:len(first)+n])
		if err != nil || l.TornBytes != n {
			t.Errorf("%d bytes of a next frame's magic: %+v, %v", n, l, err)
		}
	}
	refused("a compressed frame whose block type is reserved", func() []byte {
		f := zstdframe.Frame(zstdframe.Shape{Single: true, Checksum: true}, raw)
		f[6] |= 3 << 1 // after magic, descriptor and the 1-byte size: the block header
		return f
	}())
}

func rawStrings(rs []json.RawMessage) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}
