package message

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// blockGen writes random content blocks that are JSON, drawing every
// rare form the meter must count as the straightforward version does:
// whitespace of each kind in every gap, every escape (\u in both cases,
// surrogates paired and lone), raw astral and two- and three-byte
// characters, invalid UTF-8, numbers of every shape JavaScript writes
// differently, nesting, repeated and escaped member names, each block
// type with its members present, missing or of the wrong kind.
type blockGen struct{ r *rand.Rand }

func (g blockGen) ws() string {
	if g.r.IntN(3) != 0 {
		return ""
	}
	return []string{" ", "\t", "\n", "\r\n", "  \t "}[g.r.IntN(5)]
}

func (g blockGen) char() string {
	switch g.r.IntN(16) {
	case 0:
		return `\"`
	case 1:
		return `\\`
	case 2:
		return []string{`\/`, `\b`, `\f`, `\n`, `\r`, `\t`}[g.r.IntN(6)]
	case 3:
		return fmt.Sprintf(`\u%04x`, g.r.IntN(0x10000))
	case 4:
		return fmt.Sprintf(`\u%04X`, g.r.IntN(0x10000))
	case 5:
		return `\ud83d\ude00` // a pair
	case 6:
		return []string{`\ud800`, `\udc00`, `\udbff\u0041`}[g.r.IntN(3)] // lone
	case 7:
		return []string{"😀", "𝄞", "é", "中", "\u2028"}[g.r.IntN(5)]
	case 8:
		return []string{"\xff", "\xc3", "\xe2\x82", "\xf0\x9f\x98"}[g.r.IntN(4)] // invalid UTF-8
	case 9:
		return " "
	default:
		return string(rune('a' + g.r.IntN(26)))
	}
}

func (g blockGen) str() string {
	var b strings.Builder
	b.WriteByte('"')
	for n := g.r.IntN(12); n > 0; n-- {
		b.WriteString(g.char())
	}
	b.WriteByte('"')
	return b.String()
}

func (g blockGen) number() string {
	return []string{
		"0", "-0", "1", "-17", "1.5", "1.50", "100.25", "0.1", "0.000001", "0.0000001", "1e2", "1E2", "1e+2", "1e-7",
		"-1.25e3", "123456789012345678901", "123456789012345.5", "1E400", "0.30000000000000004", "9007199254740993",
		fmt.Sprint(g.r.IntN(1 << 20)), fmt.Sprintf("%d.%d", g.r.IntN(1000), g.r.IntN(1000)),
	}[g.r.IntN(22)]
}

func (g blockGen) value(depth int) string {
	k := g.r.IntN(8)
	if depth > 3 {
		k %= 4
	}
	switch k {
	case 0:
		return g.str()
	case 1:
		return g.number()
	case 2:
		return []string{"true", "false", "null"}[g.r.IntN(3)]
	case 3:
		return g.str()
	case 4, 5:
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

func (g blockGen) member(name string) string {
	key := `"` + name + `"`
	if g.r.IntN(8) == 0 && name == "type" {
		key = `"t\u0079pe"`
	}
	var v string
	switch name {
	case "type":
		v = []string{`"text"`, `"reasoning"`, `"tool-call"`, `"tool-result"`, `"image"`, `"compaction"`, `"other"`, `5`, `"te\u0078t"`}[g.r.IntN(9)]
	case "text":
		if g.r.IntN(6) == 0 {
			v = g.value(1)
		} else {
			v = g.str()
		}
	case "arguments":
		if g.r.IntN(2) == 0 {
			v = g.str()
		} else {
			v = g.value(0)
		}
	case "content":
		var blocks []string
		for n := g.r.IntN(3); n > 0; n-- {
			blocks = append(blocks, g.block(1))
		}
		v = []string{"[" + strings.Join(blocks, ",") + "]", g.str(), g.value(1)}[g.r.IntN(3)]
	default:
		v = g.value(1)
	}
	return g.ws() + key + g.ws() + ":" + g.ws() + v + g.ws()
}

func (g blockGen) block(depth int) string {
	if depth == 0 && g.r.IntN(20) == 0 {
		return g.value(0) // a block that is not an object
	}
	names := []string{"type", "text", "id", "name", "arguments", "toolCallId", "content", "isError", "native", "data"}
	var members []string
	for _, n := range names {
		if n == "type" || g.r.IntN(3) == 0 {
			members = append(members, g.member(n))
		}
	}
	if g.r.IntN(6) == 0 { // a member repeated
		members = append(members, g.member(names[g.r.IntN(len(names))]))
	}
	g.r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	return "{" + strings.Join(members, ",") + "}"
}

// TestMeterMatchesReferenceOnGeneratedBlocks: the one-pass meter and the
// straightforward one (meter_ref_test.go) count the same for 20,000
// generated blocks, one at a time and as messages of several blocks.
// FuzzMeter explores further when fuzzing; this runs in every test run.
func TestMeterMatchesReferenceOnGeneratedBlocks(t *testing.T) {
	g := blockGen{rand.New(rand.NewPCG(7, 11))}
	checked := 0
	for i := 0; i < 20_000; i++ {
		var content []json.RawMessage
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			b := []byte(g.block(0))
			if !json.Valid(b) {
				t.Fatalf("the generator wrote invalid JSON: %s", b)
			}
			content = append(content, b)
		}
		m := Message{Content: content}
		if got, want := EstimateTokens(m), refEstimate(m); got != want {
			for _, b := range content {
				one := Message{Content: []json.RawMessage{b}}
				if g, w := EstimateTokens(one), refEstimate(one); g != w {
					t.Fatalf("one pass %d, straightforward %d, for %s", g, w, b)
				}
			}
			t.Fatalf("one pass %d, straightforward %d, for the message %s", got, want, content)
		}
		checked += len(content)
	}
	t.Logf("%d generated blocks counted alike", checked)
}
