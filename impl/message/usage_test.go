package message

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// refUsageTokens is UsageTokens as it was written first, through
// encoding/json: the reference the scanning version must agree with.
func refUsageTokens(data []byte) (int, bool) {
	var d map[string]json.RawMessage
	if json.Unmarshal(data, &d) != nil {
		return 0, false
	}
	u, ok := d["usage"]
	if !ok {
		return 0, false
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(u, &raw) != nil {
		return 0, false
	}
	for _, k := range []string{"outputTokens", "output_tokens", "completion_tokens"} {
		var n json.Number
		if v, ok := raw[k]; ok && json.Unmarshal(v, &n) == nil {
			if i, err := n.Int64(); err == nil && i >= 0 {
				return int(i), true
			}
		}
	}
	return 0, false
}

// TestUsageTokensMatchesReference: on 20,000 generated assistant data
// objects (no usage, usage not an object, each key alone or with others,
// escaped keys, the usage key escaped, the keys' names in a text or a
// nested object where they do not count, values that are whole numbers, negative, fractional,
// exponents, past int64, strings holding numbers or not, null, true), the
// scanning UsageTokens and the encoding/json reference agree.
func TestUsageTokensMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 4))
	values := []string{"0", "12", "-0", "-3", "1.0", "2.5", "1e2", "9223372036854775807", "9223372036854775808",
		`"15"`, `"1.5"`, `" 15"`, `"15 "`, `"-2"`, `"01"`, `"x"`, `""`, "null", "true", "{}", "[]"}
	keys := []string{"outputTokens", "output_tokens", "completion_tokens", "inputTokens", "prompt_tokens"}
	found := 0
	for i := 0; i < 20_000; i++ {
		var members []string
		for _, k := range keys {
			if r.IntN(3) == 0 {
				if r.IntN(3) == 0 {
					// The same key, escaped (a log refuses it twice).
					switch k {
					case "output_tokens":
						k = `output\u005ftokens`
					case "outputTokens":
						k = `outputT\u006fkens`
					case "completion_tokens":
						k = `\u0063ompletion_tokens`
					}
				}
				members = append(members, fmt.Sprintf(`"%s":%s`, k, values[r.IntN(len(values))]))
			}
		}
		r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		usage := "{" + strings.Join(members, ",") + "}"
		switch r.IntN(8) {
		case 0:
			usage = values[r.IntN(len(values))] // not an object
		case 1:
			usage = ""
		}
		// Look-alikes of the keys where they do not count: in a text, in
		// a nested object.
		content := []string{`[]`, `[{"type":"text","text":"outputTokens: 7"}]`,
			`[{"type":"data","usage":{"output_tokens":7,"completion_tokens":8}}]`}[r.IntN(3)]
		data := `{"turn":1,"content":` + content
		if usage != "" {
			name := "usage"
			if r.IntN(4) == 0 {
				name = `us\u0061ge` // the usage key escaped
			}
			data += `,"` + name + `":` + usage
		}
		data += "}"
		if !json.Valid([]byte(data)) {
			t.Fatalf("generated invalid JSON %s", data)
		}
		got, gok := UsageTokens([]byte(data))
		want, wok := refUsageTokens([]byte(data))
		if got != want || gok != wok {
			t.Fatalf("%s: UsageTokens %d %v, reference %d %v", data, got, gok, want, wok)
		}
		if gok {
			found++
		}
	}
	if found < 2_000 {
		t.Errorf("only %d data objects held usable usage: the generator tests too little", found)
	}
}
