package released

import (
	"bytes"
	"errors"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/surfacelog/surface/impl/event"
)

// zstdMagic begins every zstd frame (0xFD2FB528, little-endian).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// IsZstd reports whether data begins with a zstd frame.
func IsZstd(data []byte) bool { return len(data) >= 4 && string(data[:4]) == string(zstdMagic) }

// frameEnd returns the length of the zstd frame at the start of data, read
// from its structure (frame header, block headers, checksum) without
// decompressing it, or ok == false when the frame is cut short (a torn
// frame). A structure no frame has is an error.
func frameEnd(data []byte) (n int, ok bool, err error) {
	if len(data) < 4 {
		return 0, false, nil // not even the magic yet
	}
	if !IsZstd(data) {
		return 0, false, errors.New("no zstd frame magic")
	}
	if len(data) < 5 {
		return 0, false, nil
	}
	fhd := data[4]
	if fhd&0x08 != 0 {
		return 0, false, errors.New("reserved bit set in the frame header")
	}
	single := fhd&0x20 != 0
	pos := 5
	if !single {
		pos++ // window descriptor
	}
	pos += []int{0, 1, 2, 4}[fhd&0x03] // dictionary id
	fcs := []int{0, 2, 4, 8}[fhd>>6]
	if fcs == 0 && single {
		fcs = 1
	}
	pos += fcs
	for {
		if pos+3 > len(data) {
			return 0, false, nil
		}
		h := uint32(data[pos]) | uint32(data[pos+1])<<8 | uint32(data[pos+2])<<16
		pos += 3
		last, typ, size := h&1 == 1, (h>>1)&3, int(h>>3)
		switch typ {
		case 1: // RLE: one byte stands for size bytes
			size = 1
		case 3:
			return 0, false, errors.New("reserved block type")
		}
		pos += size
		if pos > len(data) {
			return 0, false, nil
		}
		if last {
			break
		}
	}
	if fhd&0x04 != 0 { // content checksum
		pos += 4
		if pos > len(data) {
			return 0, false, nil
		}
	}
	return pos, true, nil
}

// frames splits data into its zstd frames and decompresses each (its
// checksum checked by the decoder). A torn last frame is not an error: its
// bytes are returned as torn, with the plaintext of the records it holds
// whole when they can be recovered (recovered is nil otherwise).
func frames(data []byte) (plain [][]byte, torn []byte, err error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, nil, err
	}
	defer dec.Close()
	for off := 0; off < len(data); {
		n, ok, ferr := frameEnd(data[off:])
		if ferr != nil {
			return nil, nil, event.Errorf(event.CodePersistCorrupt, -1, "zstd frame %d at byte %d: %v", len(plain)+1, off, ferr)
		}
		if !ok {
			return plain, data[off:], nil
		}
		out, derr := dec.DecodeAll(data[off:off+n], nil)
		if derr != nil {
			return nil, nil, event.Errorf(event.CodePersistCorrupt, -1, "zstd frame %d at byte %d: %v", len(plain)+1, off, derr)
		}
		plain = append(plain, out)
		off += n
	}
	return plain, nil, nil
}

// recover decodes what it can of a torn frame and returns its complete
// JSONL records (up to the last newline), or nil.
func recoverTorn(torn []byte) []byte {
	dec, err := zstd.NewReader(bytes.NewReader(torn), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil
	}
	defer dec.Close()
	out, _ := io.ReadAll(dec)
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		return out[:i+1]
	}
	return nil
}
