package released

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/surfacelog/surface/internal/zstdframe"
)

// The tests in this file read .jsonl.zstd files written by the reference C
// encoder (libzstd, through the zstd CLI): the encoder behind the released
// system's Node zlib, and a second producer beside the Go encoder of the
// other tests. testdata/libzstd holds files it wrote (make.sh says how);
// when the zstd CLI is installed (CI installs it), fresh files of random
// logs are written and read too.

// frameKinds lists the shapes of the frames and blocks in a zstd file,
// read from its structure: "single" or "windowed", the content size's
// byte count, "checksum" or "no checksum", and the block types.
func frameKinds(t *testing.T, data []byte) map[string]int {
	t.Helper()
	kinds := map[string]int{}
	for p := 0; p < len(data); {
		fhd := data[p+4]
		single := fhd&0x20 != 0
		pos := p + 5 + []int{0, 1, 2, 4}[fhd&3]
		fcs := []int{0, 2, 4, 8}[fhd>>6]
		if single {
			kinds["single"]++
			if fcs == 0 {
				fcs = 1
			}
		} else {
			kinds["windowed"]++
			pos++
		}
		kinds[fmt.Sprintf("size in %d bytes", fcs)]++
		pos += fcs
		for {
			h := int(data[pos]) | int(data[pos+1])<<8 | int(data[pos+2])<<16
			pos += 3
			typ := (h >> 1) & 3
			kinds[[]string{"raw block", "RLE block", "compressed block", "reserved block"}[typ]]++
			if typ == 1 {
				pos++
			} else {
				pos += h >> 3
			}
			if h&1 == 1 {
				break
			}
		}
		if fhd&0x04 != 0 {
			kinds["checksum"]++
			pos += 4
		} else {
			kinds["no checksum"]++
		}
		p = pos
	}
	return kinds
}

// sameAsPlain reads z and plain and requires the same header and events,
// frames frames and no torn bytes.
func sameAsPlain(t *testing.T, name string, z, plain []byte, frames int) {
	t.Helper()
	got, err := Read(z)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want, err := Read(plain)
	if err != nil {
		t.Fatalf("%s (plain): %v", name, err)
	}
	if !got.Compressed || got.Frames != frames || got.TornBytes != 0 || got.Header != want.Header {
		t.Fatalf("%s: compressed %v, %d frames (want %d), %d torn bytes, header %+v (want %+v)", name, got.Compressed, got.Frames, frames, got.TornBytes, got.Header, want.Header)
	}
	if d := cmp.Diff(rawStrings(want.Events), rawStrings(got.Events)); d != "" {
		t.Fatalf("%s: events differ (-plain +zstd):\n%s", name, d)
	}
}

// TestLibzstdFixtures: every file the reference encoder wrote reads to the
// events of its plain twin, and together they hold the shapes the Go
// encoder never writes (so a regenerated set still tests them).
func TestLibzstdFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/libzstd/*.jsonl.zstd")
	if err != nil || len(files) < 7 {
		t.Fatalf("%d fixtures, %v", len(files), err)
	}
	all := map[string]int{}
	for _, f := range files {
		z, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		twin := strings.SplitN(filepath.Base(f), "-", 2)[0] + ".jsonl"
		plain, err := os.ReadFile(filepath.Join("testdata/libzstd", twin))
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(plain, []byte("\n")) - 1 // events, the header aside
		sameAsPlain(t, f, z, plain, 1+(lines+2)/3)
		for k, n := range frameKinds(t, z) {
			all[k] += n
		}
	}
	for _, k := range []string{"single", "windowed", "size in 0 bytes", "size in 1 bytes", "size in 2 bytes", "raw block", "RLE block", "compressed block", "checksum", "no checksum"} {
		if all[k] == 0 {
			t.Errorf("no fixture has a frame or block of kind %q (kinds: %v)", k, all)
		}
	}
}

// TestLibzstdFresh: random logs framed by the zstd CLI at varied settings
// read like their plain text, and cut anywhere in the last frame keep every
// frame before it. Skipped when the CLI is missing, except under CI.
func TestLibzstdFresh(t *testing.T) {
	zstdCLI, err := exec.LookPath("zstd")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the zstd CLI is not installed (CI installs the zstd package)")
		}
		t.Skip("no zstd CLI")
	}
	r := rand.New(rand.NewPCG(5, 8))
	settings := [][]string{{"-3", "--check"}, {"-1", "--no-check"}, {"-19", "--check"}, {"--fast=50", "--check"}, {"-3", "--check", "--no-content-size"}}
	dir := t.TempDir()
	rounds := 12
	if testing.Short() {
		rounds = 3
	}
	for round := range rounds {
		header, batches := randomLog(r)
		args := settings[round%len(settings)]
		texts := []string{header + "\n"}
		for _, b := range batches {
			texts = append(texts, strings.Join(b, "\n")+"\n")
		}
		var z []byte
		var last int
		for i, text := range texts {
			in := filepath.Join(dir, fmt.Sprintf("f%d", i))
			if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(zstdCLI, append(append([]string{"-q", "-c"}, args...), in)...)
			if r.IntN(2) == 0 { // streamed from stdin: the size is not known up front
				cmd = exec.Command(zstdCLI, append([]string{"-q", "-c"}, args...)...)
				cmd.Stdin = strings.NewReader(text)
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("zstd %v: %v", args, err)
			}
			last = len(z)
			z = append(z, out...)
		}
		name := fmt.Sprintf("round %d (zstd %v)", round, args)
		sameAsPlain(t, name, z, plainOf(header, batches), len(texts))
		cut := last + 1 + r.IntN(len(z)-last-1)
		got, err := Read(z[:cut])
		if err != nil || got.Frames != len(texts)-1 || got.TornBytes != cut-last {
			t.Fatalf("%s cut at %d: %+v, %v", name, cut, got, err)
		}
		full, _ := Read(plainOf(header, batches))
		if len(got.Events) > len(full.Events) {
			t.Fatalf("%s cut at %d: %d events of %d", name, cut, len(got.Events), len(full.Events))
		}
		if d := cmp.Diff(rawStrings(full.Events[:len(got.Events)]), rawStrings(got.Events)); d != "" {
			t.Fatalf("%s cut at %d: not a prefix:\n%s", name, cut, d)
		}
		if args[1] == "--check" {
			// Cut in its checksum, the last frame has every block whole:
			// all its records are recovered.
			got, err := Read(z[:len(z)-1-r.IntN(4)])
			if err != nil || got.TornBytes == 0 || len(got.Events) != len(full.Events) {
				t.Fatalf("%s cut in its checksum: %d events of %d, %v", name, len(got.Events), len(full.Events), err)
			}
		}
	}
}

// randomLog is a turn of user messages, prose and runs of one character
// (up to past a 128 KiB block), cut into batches.
func randomLog(r *rand.Rand) (string, [][]string) {
	words := strings.Fields("the surface of a session log is derived from its events é ü 字 🙂 tool result")
	n := 1 + r.IntN(8)
	records := []string{`{"type":"turn/start","seq":0,"time":10,"data":{"turn":1}}`}
	for i := 1; i <= n; i++ {
		var text strings.Builder
		for range r.IntN(4) {
			if r.IntN(2) == 0 {
				text.WriteString(strings.Repeat([]string{"a", " ", "-", "é"}[r.IntN(4)], 1+r.IntN([]int{10, 1000, 140000}[r.IntN(3)])))
			} else {
				for range 1 + r.IntN(500) {
					text.WriteString(words[r.IntN(len(words))] + " ")
				}
			}
		}
		records = append(records, fmt.Sprintf(`{"type":"user/message","seq":%d,"time":11,"data":{"content":[{"type":"text","text":%q}],"source":{"kind":"user"},"role":"user","id":"u%d"},"surfaceOp":"append"}`, i, text.String(), i))
	}
	records = append(records, fmt.Sprintf(`{"type":"turn/end","seq":%d,"time":40,"data":{"turn":1,"reason":{"kind":"completed"}}}`, n+1))
	var batches [][]string
	for len(records) > 0 {
		k := 1 + r.IntN(len(records))
		batches = append(batches, records[:k])
		records = records[k:]
	}
	return `{"type":"session","version":0,"id":"s1","createdAt":1767225600000,"delegationDepth":0}`, batches
}

// TestSQLiteBlobsOfEveryProducer: schema 17's zstd data reads the same
// whoever compressed it: the Go encoder, frames built by hand (raw and
// RLE blocks, single-segment and windowed, with and without checksum), and
// the reference encoder when its CLI is installed.
func TestSQLiteBlobsOfEveryProducer(t *testing.T) {
	producers := map[string]func([]byte) []byte{
		"hand-built single-segment": func(b []byte) []byte {
			s := zstdframe.Shape{Single: true, FCSFlag: 1, Checksum: true}
			return zstdframe.Frame(s, zstdframe.Split(b, s.MaxBlock(len(b)), 4))
		},
		"hand-built windowed, no checksum": func(b []byte) []byte {
			s := zstdframe.Shape{Window: 2}
			return zstdframe.Frame(s, zstdframe.Split(b, s.MaxBlock(len(b)), 2))
		},
	}
	if zstdCLI, err := exec.LookPath("zstd"); err == nil {
		producers["libzstd"] = func(b []byte) []byte {
			cmd := exec.Command(zstdCLI, "-q", "-c", "-3", "--check")
			cmd.Stdin = bytes.NewReader(b)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	var want []json.RawMessage
	for _, name := range []string{"hand-built single-segment", "hand-built windowed, no checksum", "libzstd"} {
		compress, ok := producers[name]
		if !ok {
			continue
		}
		path, db := writeDBWith(t, 17, compress)
		l, err := ReadSQLite(context.Background(), path, "")
		db.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s, err := Check(l)
		if err != nil || len(s.Messages) != 3 {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(string(s.Events[4].Data), strings.Repeat("long ", 1000)) {
			t.Fatalf("%s: the compressed row reads %.80s", name, s.Events[4].Data)
		}
		if want == nil {
			want = s.Messages
		} else if !equalMessages(want, s.Messages) {
			t.Fatalf("%s derives other messages", name)
		}
	}
}
