package event_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/model"
)

// jsonGen writes random JSON and near-JSON: every value kind, numbers of
// each shape, strings with every escape, whitespace of each kind, deep
// and wide nesting; then, for near-JSON, one edit at a random place (a
// cut, a byte dropped, one of JSON's own bytes inserted).
type jsonGen struct{ r *rand.Rand }

func (g jsonGen) ws() string {
	if g.r.IntN(4) != 0 {
		return ""
	}
	return []string{" ", "\t", "\n", "\r", " \n\t"}[g.r.IntN(5)]
}

func (g jsonGen) str() string {
	var b strings.Builder
	b.WriteByte('"')
	for n := g.r.IntN(6); n > 0; n-- {
		switch g.r.IntN(10) {
		case 0:
			b.WriteString([]string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`}[g.r.IntN(8)])
		case 1:
			fmt.Fprintf(&b, `\u%04x`, g.r.IntN(0x10000))
		case 2:
			b.WriteString([]string{"é", "😀", "\u2028", "中"}[g.r.IntN(4)])
		default:
			b.WriteByte(byte('a' + g.r.IntN(26)))
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (g jsonGen) number() string {
	return []string{"0", "-0", "1", "-1", "10", "1.0", "1.5", "-0.25", "1e0", "1E5", "1e+2", "1e-2", "2.5E-3",
		"9007199254740991", "9007199254740992", "9007199254740993", "1e400", "123456789012345678901234"}[g.r.IntN(18)]
}

func (g jsonGen) value(depth int) string {
	k := g.r.IntN(7)
	if depth > 4 {
		k %= 3
	}
	switch k {
	case 0:
		return g.str()
	case 1:
		return g.number()
	case 2:
		return []string{"true", "false", "null"}[g.r.IntN(3)]
	case 3, 4:
		var parts []string
		for n := g.r.IntN(4); n > 0; n-- {
			parts = append(parts, g.ws()+g.value(depth+1)+g.ws())
		}
		return "[" + strings.Join(parts, ",") + g.ws() + "]"
	default:
		var parts []string
		for n := g.r.IntN(4); n > 0; n-- {
			parts = append(parts, g.ws()+g.str()+g.ws()+":"+g.ws()+g.value(depth+1)+g.ws())
		}
		return "{" + strings.Join(parts, ",") + g.ws() + "}"
	}
}

// damage makes one edit to b at a random place, or none.
func (g jsonGen) damage(b []byte) []byte {
	if len(b) == 0 || g.r.IntN(3) == 0 {
		return b
	}
	i := g.r.IntN(len(b))
	switch g.r.IntN(3) {
	case 0:
		return b[:i]
	case 1:
		return append(slices.Clone(b[:i]), b[i+1:]...)
	}
	ins := []byte(`{}[]",:\ 0123456789eE+-.tfnu`)
	return slices.Insert(slices.Clone(b), i, ins[g.r.IntN(len(ins))])
}

// TestValidSyntaxOnGeneratedInputs: ValidSyntax agrees with
// encoding/json.Valid on 50,000 generated texts, valid and damaged (the
// ones that are valid UTF-8, where the two define the same syntax).
func TestValidSyntaxOnGeneratedInputs(t *testing.T) {
	g := jsonGen{rand.New(rand.NewPCG(3, 5))}
	valid := 0
	for i := 0; i < 50_000; i++ {
		b := g.damage([]byte(g.ws() + g.value(0) + g.ws()))
		if !utf8.Valid(b) {
			continue
		}
		want := json.Valid(b)
		if got := event.ValidSyntax(b); got != want {
			t.Fatalf("ValidSyntax(%q) = %v, encoding/json says %v", b, got, want)
		}
		if want {
			valid++
		}
	}
	if valid < 10_000 || valid > 45_000 {
		t.Errorf("%d of 50,000 texts valid: the generator tests too little of one side", valid)
	}
}

// TestDecodeAgainstModelOnGeneratedLines: event.Decode and the model's
// plain decoder agree, on acceptance, the code of a refusal, and every
// field of an accepted event, for 30,000 generated log lines varying the
// envelope's rare values: members in any order, repeated, escaped or
// unknown; seq and time written as 1.0, -0, 1e0, past 2^53, negative,
// strings or null; markers of every kind with their seqs in any form;
// sources empty, null, unsorted, repeated, fractional; ignorable true,
// false or not a boolean; and damaged lines.
func TestDecodeAgainstModelOnGeneratedLines(t *testing.T) {
	g := jsonGen{rand.New(rand.NewPCG(9, 2))}
	nums := []string{"0", "1", "2", "1.0", "-0", "1e0", "-1", "2.5", "9007199254740991", "9007199254740992", `"1"`, "null", "1e400"}
	num := func() string { return nums[g.r.IntN(len(nums))] }
	accepted := 0
	for i := 0; i < 30_000; i++ {
		members := map[string]string{
			"type": []string{`"user/message"`, `"assistant/message"`, `"app/note"`, `"tool/result"`, `"turn/start"`, `""`, `null`, `"user\/message"`, `5`}[g.r.IntN(9)],
			"seq":  num(),
			"time": num(),
		}
		if g.r.IntN(6) != 0 {
			members["data"] = []string{`{}`, `{"content":[],"source":{"kind":"user"}}`, g.value(1), `null`, `{"a":1,"a":2}`}[g.r.IntN(5)]
		}
		switch g.r.IntN(6) {
		case 0:
			members["surfaceOp"] = `{"kind":"append"}`
		case 1:
			members["surfaceOp"] = `{"kind":"replace","startSeq":` + num() + `,"endSeq":` + num() + `}`
		case 2:
			members["surfaceOp"] = []string{`{"kind":"swap"}`, `{}`, `null`, `"append"`, `{"kind":"append","x":1}`}[g.r.IntN(5)]
		}
		if g.r.IntN(3) == 0 {
			var s []string
			for n := g.r.IntN(4); n > 0; n-- {
				s = append(s, num())
			}
			members["sourceEventSeqs"] = []string{"[" + strings.Join(s, ",") + "]", "null", "[]", `"x"`}[g.r.IntN(4)]
		}
		if g.r.IntN(5) == 0 {
			members["ignorable"] = []string{"true", "false", `"yes"`, "null"}[g.r.IntN(4)]
		}
		if g.r.IntN(10) == 0 {
			members["extra"] = "1"
		}
		var keys []string
		for k := range members {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		var parts []string
		for _, k := range keys {
			key := `"` + k + `"`
			if k == "seq" && g.r.IntN(20) == 0 {
				key = `"s\u0065q"`
			}
			parts = append(parts, g.ws()+key+g.ws()+":"+g.ws()+members[k])
		}
		if g.r.IntN(15) == 0 {
			parts = append(parts, `"type":"app/other"`) // repeated
		}
		line := g.damage([]byte("{" + strings.Join(parts, ",") + "}"))
		got, gerr := event.Decode(line)
		want, werr := model.DecodeLine(line)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%s: the implementation says %v, the model %v", line, gerr, werr)
		}
		if gerr != nil {
			if event.CodeOf(gerr) != event.CodeOf(werr) {
				t.Fatalf("%s: codes %s and %s", line, event.CodeOf(gerr), event.CodeOf(werr))
			}
			continue
		}
		accepted++
		compact := func(b []byte) string {
			var buf bytes.Buffer
			if json.Compact(&buf, b) == nil {
				return buf.String()
			}
			return string(b)
		}
		if got.Type != want.Type || got.Seq != want.Seq || got.Time != want.Time || got.Ignorable != want.Ignorable ||
			got.Op != want.Op || !slices.Equal(got.Sources, want.Sources) || (got.Sources == nil) != (want.Sources == nil) || compact(got.Data) != compact(want.Data) {
			t.Fatalf("%s:\nimplementation %+v\nmodel          %+v", line, got, want)
		}
	}
	if accepted < 1_000 {
		t.Errorf("only %d of 30,000 lines accepted: the generator tests too little of the accepting side", accepted)
	}
	t.Logf("%d of 30,000 generated lines accepted alike, the rest refused with the same code", accepted)
}
