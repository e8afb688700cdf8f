package zstdframe

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestXXH64KnownValues(t *testing.T) {
	// The reference values of one input of each length class (under 4,
	// 4 to 7, 32 and more), as published with the xxHash port
	// github.com/cespare/xxhash.
	for in, want := range map[string]uint64{
		"":     0xef46db3751d8e999,
		"a":    0xd24ec4f1a98c6e5b,
		"as":   0x1c330fb2d66be179,
		"asd":  0x631c37ce72a97393,
		"asdf": 0x415872f599cea71e,
		"Call me Ishmael. Some years ago--never mind how long precisely-": 0x02a2e85470d6fd96,
	} {
		if got := XXH64([]byte(in)); got != want {
			t.Errorf("XXH64(%q) = %#x, want %#x", in, got, want)
		}
	}
}

// TestFramesDecode: every shape, over contents of every size class (empty,
// under 256, the 2-byte size's range, beyond it), decodes with the Go
// decoder (which checks the checksum) to the content, and Split's blocks
// regenerate their content.
func TestFramesDecode(t *testing.T) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	contents := [][]byte{nil, []byte("x"), bytes.Repeat([]byte("ab"), 127), append(bytes.Repeat([]byte(" "), 300), "tail"...), bytes.Repeat([]byte("0123456789abcdef"), 5000)}
	shapes := 0
	for _, c := range contents {
		for _, single := range []bool{false, true} {
			for fcs := range 4 {
				for _, dict := range []int{0, 1, 2, 4} {
					for _, sum := range []bool{false, true} {
						s := Shape{Single: single, FCSFlag: fcs, DictSize: dict, Checksum: sum, Unused: dict == 2, Window: fcs * 2}
						if !s.Fits(len(c)) {
							continue
						}
						shapes++
						blocks := Split(c, s.MaxBlock(len(c)), 4)
						if !bytes.Equal(Content(blocks), c) {
							t.Fatalf("Split(%d bytes) regenerates %d bytes", len(c), len(Content(blocks)))
						}
						got, err := dec.DecodeAll(Frame(s, blocks), nil)
						if err != nil || !bytes.Equal(got, c) {
							t.Fatalf("%+v over %d bytes: %d bytes back, %v", s, len(c), len(got), err)
						}
					}
				}
			}
		}
	}
	if shapes < 150 {
		t.Fatalf("only %d shapes tried", shapes)
	}
	// A wrong checksum is caught by the decoder: the checksum is real.
	f := Frame(Shape{Single: true, Checksum: true}, []Block{Raw([]byte("abc"))})
	f[len(f)-1] ^= 1
	if _, err := dec.DecodeAll(f, nil); err == nil {
		t.Fatal("a damaged checksum decoded")
	}
}

// TestFitsAtItsEdges: each content size field at the sizes either side
// of what it can say: a 1-byte size (Single, flag 0) up to 255; flag 1's
// 2 bytes from 256 to 65,791; flag 2's 4 bytes up to 2^32-1; no size
// field at all (flag 0, not Single) and 8 bytes for any.
func TestFitsAtItsEdges(t *testing.T) {
	for _, c := range []struct {
		s    Shape
		n    int
		want bool
	}{
		{Shape{Single: true}, 255, true}, {Shape{Single: true}, 256, false},
		{Shape{}, 256, true}, {Shape{}, 1 << 20, true},
		{Shape{FCSFlag: 1}, 255, false}, {Shape{FCSFlag: 1}, 256, true},
		{Shape{FCSFlag: 1}, 256 + 65535, true}, {Shape{FCSFlag: 1}, 256 + 65536, false},
		{Shape{FCSFlag: 2}, 0, true}, {Shape{FCSFlag: 2}, 0xffffffff, true}, {Shape{FCSFlag: 2}, 0x100000000, false},
		{Shape{FCSFlag: 3}, 0x100000000, true},
	} {
		if got := c.s.Fits(c.n); got != c.want {
			t.Errorf("%+v.Fits(%d) = %v, want %v", c.s, c.n, got, c.want)
		}
	}
}

// TestSplitRuns: runs one byte short of the RLE threshold stay raw, runs
// at it become one RLE block, a run longer than a block is cut at the
// block size, raw stretches are cut at it too, and the blocks regenerate
// the content.
func TestSplitRuns(t *testing.T) {
	content := []byte("ab" + "ccc" + "d" + "eeee" + "fg" + strings.Repeat("h", 11) + strings.Repeat("xy", 6))
	blocks := Split(content, 5, 4)
	var shape []string
	for _, b := range blocks {
		if b.Size > 5 {
			t.Errorf("a block of %d bytes, over the maximum of 5", b.Size)
		}
		if b.RLE {
			shape = append(shape, fmt.Sprintf("rle %c*%d", b.Data[0], b.Size))
		} else {
			shape = append(shape, "raw "+string(b.Data))
		}
	}
	want := []string{"raw abccc", "raw d", "rle e*4", "raw fg", "rle h*5", "rle h*5", "raw hxyxy", "raw xyxyx", "raw yxy"}
	if strings.Join(shape, "|") != strings.Join(want, "|") {
		t.Errorf("blocks %q, want %q", shape, want)
	}
	if !bytes.Equal(Content(blocks), content) {
		t.Errorf("the blocks regenerate %q", Content(blocks))
	}
}

// TestChecksumAtThe32ByteEdge: XXH64 takes its 32-byte stripes from 32
// bytes on; contents of 31, 32 and 33 bytes in checksummed frames decode
// with the Go decoder, which checks the checksum against its own xxHash.
func TestChecksumAtThe32ByteEdge(t *testing.T) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	for _, n := range []int{31, 32, 33, 63, 64, 65} {
		c := []byte(strings.Repeat("0123456789", 7)[:n])
		if _, err := dec.DecodeAll(Frame(Shape{Single: true, Checksum: true}, []Block{Raw(c)}), nil); err != nil {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
}
