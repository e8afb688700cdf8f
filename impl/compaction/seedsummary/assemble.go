package seedsummary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/surfacelog/surface/impl/message"
)

// Chunk is one chunk of a streamed reply, in the seed system's stream
// chunk form (its LLM package's StreamChunk), as JSON:
//
//	{"type":"block-start","index":I,"blockType":T}
//	{"type":"text-delta","index":I,"text":S}
//	{"type":"reasoning-delta","index":I,"text":S}
//	{"type":"tool-call-delta","index":I,"id":C,"name":N?,"argumentsDelta":S}
//	{"type":"block-end","index":I,"block":BLOCK}
//	{"type":"usage","usage":U}
//	{"type":"finish","reason":{"kind":"stop"|"tool-calls"|"max-tokens"|"aborted"|"error","message"?,"code"?}}
type Chunk = json.RawMessage

// Assembler builds the blocks of a reply from its chunks, as the seed
// system's block assembler does: a block per index, in the order its
// index first appears; deltas append to it; a block-end sets it as given
// (the first one wins, and later deltas for its index are ignored); a
// block never ended is assembled from its deltas (text, reasoning, a tool
// call whose id defaults to "call-INDEX" and name to ""); the last finish
// chunk is the finish reason ({"kind":"stop"} when none came).
type Assembler struct {
	order    []int64
	partials map[int64]*partial
	finish   json.RawMessage
	usage    json.RawMessage
}

type partial struct {
	blockType string
	text      string
	id, name  *string
	args      string
	block     json.RawMessage // set by block-end
}

// Push adds one chunk. A chunk that is not an object with a known type is
// an error (the seed system's assembler throws on it).
func (a *Assembler) Push(c Chunk) error {
	var ch struct {
		Type           string          `json:"type"`
		Index          json.RawMessage `json:"index"`
		BlockType      json.RawMessage `json:"blockType"`
		Text           json.RawMessage `json:"text"`
		ID             json.RawMessage `json:"id"`
		Name           json.RawMessage `json:"name"`
		ArgumentsDelta json.RawMessage `json:"argumentsDelta"`
		Block          json.RawMessage `json:"block"`
		Usage          json.RawMessage `json:"usage"`
		Reason         json.RawMessage `json:"reason"`
	}
	if err := json.Unmarshal(c, &ch); err != nil {
		return fmt.Errorf("a stream chunk that is not a JSON object: %w", err)
	}
	if a.partials == nil {
		a.partials = map[int64]*partial{}
	}
	index, _ := strconv.ParseInt(message.JSNumber(ch.Index), 10, 64)
	switch ch.Type {
	case "block-start":
		if _, ok := a.partials[index]; !ok {
			a.order = append(a.order, index)
			a.partials[index] = &partial{blockType: jsString(ch.BlockType)}
		}
	case "text-delta", "reasoning-delta":
		p := a.ensure(index, strings.TrimSuffix(ch.Type, "-delta"))
		if p.block == nil {
			p.text += jsString(ch.Text)
		}
	case "tool-call-delta":
		p := a.ensure(index, "tool-call")
		if p.block == nil {
			id := jsString(ch.ID)
			p.id = &id
			if truthy(ch.Name) {
				name := jsString(ch.Name)
				p.name = &name
			}
			p.args += jsString(ch.ArgumentsDelta)
		}
	case "block-end":
		var b struct {
			Type json.RawMessage `json:"type"`
		}
		_ = json.Unmarshal(ch.Block, &b)
		p := a.ensure(index, jsString(b.Type))
		if p.block == nil {
			p.block = slices.Clone(ch.Block)
		}
	case "usage":
		a.usage = slices.Clone(ch.Usage)
	case "finish":
		a.finish = slices.Clone(ch.Reason)
	default:
		return fmt.Errorf("Unhandled BlockAssembler.push: %s", c)
	}
	return nil
}

func (a *Assembler) ensure(index int64, blockType string) *partial {
	p, ok := a.partials[index]
	if !ok {
		p = &partial{blockType: blockType}
		a.partials[index] = p
		a.order = append(a.order, index)
	}
	return p
}

// Blocks returns the blocks assembled so far, in order, as JSON written as
// JavaScript's JSON.stringify writes them. A block of a type other than
// text, reasoning and tool-call that no block-end set cannot be assembled
// (the seed system's error).
func (a *Assembler) Blocks() ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(a.order))
	for _, i := range a.order {
		p := a.partials[i]
		switch {
		case p.block != nil:
			out = append(out, json.RawMessage(Stringify(p.block)))
		case p.blockType == "text" || p.blockType == "reasoning":
			out = append(out, json.RawMessage(`{"type":"`+p.blockType+`","text":`+message.QuoteJS(p.text)+`}`))
		case p.blockType == "tool-call":
			id := "call-" + strconv.FormatInt(i, 10)
			if p.id != nil {
				id = *p.id
			}
			name := ""
			if p.name != nil {
				name = *p.name
			}
			out = append(out, json.RawMessage(`{"type":"tool-call","id":`+message.QuoteJS(id)+`,"name":`+message.QuoteJS(name)+`,"arguments":`+message.QuoteJS(p.args)+`}`))
		default:
			return nil, fmt.Errorf("cannot assemble incomplete block of type %q", p.blockType)
		}
	}
	return out, nil
}

// Finish is the reply's finish reason: the last finish chunk's, or
// {"kind":"stop"}.
func (a *Assembler) Finish() json.RawMessage {
	if a.finish == nil {
		return json.RawMessage(`{"kind":"stop"}`)
	}
	return a.finish
}

// Usage is the last usage chunk's usage, or nil.
func (a *Assembler) Usage() json.RawMessage { return a.usage }

// Stringify returns the JSON text raw as JavaScript's
// JSON.stringify(JSON.parse(raw)) writes it: no whitespace, strings
// quoted as JavaScript quotes them, numbers as JavaScript writes them, an
// object's integer-like keys first in ascending order and the others in
// their order (the last of a repeated key winning, at the place of the
// first).
func Stringify(raw []byte) string {
	var b bytes.Buffer
	stringify(&b, bytes.TrimSpace(raw))
	return b.String()
}

func stringify(b *bytes.Buffer, v []byte) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		b.WriteString("null")
		return
	}
	switch v[0] {
	case '"':
		b.WriteString(message.Restringify(v))
	case '{':
		var keys []string
		vals := map[string]json.RawMessage{}
		lits := map[string][]byte{}
		dec := json.NewDecoder(bytes.NewReader(v))
		_, _ = dec.Token()
		for dec.More() {
			start := dec.InputOffset()
			tok, err := dec.Token()
			if err != nil {
				break
			}
			k, _ := tok.(string)
			lit := bytes.TrimLeft(v[start:dec.InputOffset()], " \t\r\n,")
			var val json.RawMessage
			if dec.Decode(&val) != nil {
				break
			}
			if _, seen := vals[k]; !seen {
				keys = append(keys, k)
			}
			vals[k], lits[k] = val, lit
		}
		var ints []string
		var rest []string
		for _, k := range keys {
			if arrayIndex(k) {
				ints = append(ints, k)
			} else {
				rest = append(rest, k)
			}
		}
		slices.SortFunc(ints, func(x, y string) int {
			a, _ := strconv.ParseUint(x, 10, 32)
			c, _ := strconv.ParseUint(y, 10, 32)
			return int(a) - int(c)
		})
		b.WriteByte('{')
		for i, k := range append(ints, rest...) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(message.Restringify(lits[k]))
			b.WriteByte(':')
			stringify(b, vals[k])
		}
		b.WriteByte('}')
	case '[':
		var elems []json.RawMessage
		_ = json.Unmarshal(v, &elems)
		b.WriteByte('[')
		for i, e := range elems {
			if i > 0 {
				b.WriteByte(',')
			}
			stringify(b, e)
		}
		b.WriteByte(']')
	case 't', 'f', 'n':
		b.Write(v)
	default:
		b.WriteString(message.JSNumber(v))
	}
}

// arrayIndex reports whether k is a canonical array index (0 to 2^32-2),
// which JavaScript orders first among an object's keys.
func arrayIndex(k string) bool {
	if k == "" || (len(k) > 1 && k[0] == '0') {
		return false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	return err == nil && n < 1<<32-1
}
