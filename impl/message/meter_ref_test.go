package message

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/surfacelog/surface/impl/event"
)

// The straightforward meter, as it was before the one-pass version of
// meter.go: decode each member with encoding/json, compact a block that
// holds whitespace, re-quote each string as JavaScript would and measure
// it. FuzzMeter holds the two equal.

// meterBlocks is the meter's estimate of a list of blocks.
func refMeterBlocks(blocks []json.RawMessage) int {
	n := 0
	for _, b := range blocks {
		n += refMeterBlock(b)
	}
	return n
}

func refQuarter(units int) int { return (units + 3) / 4 }

func refMeterBlock(b json.RawMessage) int {
	if bytes.ContainsAny(b, " \t\r\n") {
		// Not as the log holds it (compact): measure the compact text.
		var buf bytes.Buffer
		if json.Compact(&buf, b) == nil {
			b = buf.Bytes()
		}
	}
	typ := event.StringMember(b, "type")
	switch typ {
	case "text", "reasoning":
		if t, ok := event.ObjectMember(b, "text"); ok {
			if units, ok := refStringUnits(t); ok {
				return refQuarter(units) + 4
			}
		}
	case "tool-call":
		name, _ := event.ObjectMember(b, "name")
		args, _ := event.ObjectMember(b, "arguments")
		nameUnits, _ := refStringUnits(name)
		argUnits, ok := refStringUnits(args)
		if !ok { // an object: its JSON text
			argUnits = refJsonUnits(args)
		}
		return refQuarter(nameUnits) + refQuarter(argUnits) + 4
	case "tool-result":
		content, _ := event.ObjectMember(b, "content")
		els := event.ArrayElements(content)
		inner := make([]json.RawMessage, len(els))
		for i, e := range els {
			inner[i] = e
		}
		return refMeterBlocks(inner) + 4
	}
	if _, ok := event.ObjectMember(b, "native"); ok {
		// PROV-7: a provider's item is priced by its portable text only.
		t, _ := event.ObjectMember(b, "text")
		units, _ := refStringUnits(t)
		return refQuarter(units) + 4
	}
	return refQuarter(refJsonUnits(b)) + 4
}

// stringUnits is the UTF-16 length of the JSON string literal lit; ok is
// false when lit is not a string.
func refStringUnits(lit []byte) (int, bool) {
	var s string
	if len(lit) == 0 || lit[0] != '"' || json.Unmarshal(lit, &s) != nil {
		return 0, false
	}
	return refUtf16Len(s), true
}

func refUtf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// jsonUnits is the UTF-16 length of JSON text as JavaScript's
// JSON.stringify(JSON.parse(text)) would write it: each string literal
// quoted as JavaScript quotes it, each number as JavaScript writes it.
// (JavaScript also moves integer-like object keys first; the length does
// not change.)
func refJsonUnits(raw []byte) int {
	n := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == '-' || (c >= '0' && c <= '9') {
			j := i + 1
			for j < len(raw) && strings.IndexByte("0123456789.eE+-", raw[j]) >= 0 {
				j++
			}
			n += len(JSNumber(raw[i:j]))
			i = j
			continue
		}
		if c != '"' {
			n++ // JSON punctuation and literals are ASCII
			i++
			continue
		}
		j := i + 1
		for j < len(raw) && raw[j] != '"' {
			if raw[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(raw) {
			return n + refUtf16Len(string(raw[i:]))
		}
		n += refUtf16Len(Restringify(raw[i : j+1]))
		i = j + 1
	}
	return n
}

// refEstimate is EstimateTokens by the straightforward meter.
func refEstimate(m Message) int { return refMeterBlocks(m.Content) + 4 }
