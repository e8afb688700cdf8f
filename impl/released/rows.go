package released

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"strconv"
)

// A packed chunk row (Part B1) stands for a run of at least three
// assistant/chunk events of one kind:
//
//	{"type":"text-chunks"|"reasoning-chunks","seq0":S,"time0":T,"data":{"turn","step","index","dt":[...],"texts":[...]}}
//	{"type":"tool-call-chunks","seq0":S,"time0":T,"data":{"turn","step","index","dt":[...],"id","name"?,"args":[...]}}
//
// Member k is the event at seq0+k, at time0 plus the first k entries of
// dt. The tags have no slash, so no event type is one.

const maxSafe = 1<<53 - 1

// unpack expands a row of the given tag into its events, in wire form.
func unpack(line []byte, tag string) ([]json.RawMessage, error) {
	fail := func(why string, args ...any) ([]json.RawMessage, error) {
		return nil, fmt.Errorf("malformed %s storage row: %s", tag, fmt.Sprintf(why, args...))
	}
	var row map[string]json.RawMessage
	if json.Unmarshal(line, &row) != nil || !keysAre(row, "type", "seq0", "time0", "data") {
		return fail("its members must be type, seq0, time0 and data")
	}
	seq0, ok1 := safeInt(row["seq0"])
	time0, ok2 := safeInt(row["time0"])
	if !ok1 || !ok2 || seq0 < 0 {
		return fail("seq0 must be a safe integer at least 0, time0 a safe integer")
	}
	var data map[string]json.RawMessage
	if json.Unmarshal(row["data"], &data) != nil {
		return fail("data must be an object")
	}
	want := []string{"turn", "step", "index", "dt", "texts"}
	parts := "texts"
	if tag == "tool-call-chunks" {
		want, parts = []string{"turn", "step", "index", "dt", "id", "args"}, "args"
		if _, named := data["name"]; named {
			want = append(want, "name")
		}
	}
	if !keysAre(data, want...) {
		return fail("data's members must be %v", want)
	}
	for _, k := range []string{"turn", "step", "index"} {
		if _, ok := safeInt(data[k]); !ok {
			return fail("%s must be a safe integer", k)
		}
	}
	var dt []json.RawMessage
	var texts []string
	if json.Unmarshal(data["dt"], &dt) != nil || json.Unmarshal(data[parts], &texts) != nil || len(texts) == 0 || texts == nil {
		return fail("dt must be an array and %s a non-empty array of strings", parts)
	}
	if len(dt) != len(texts)-1 {
		return fail("dt has %d entries for %d members", len(dt), len(texts))
	}
	var id, name string
	if tag == "tool-call-chunks" {
		if json.Unmarshal(data["id"], &id) != nil {
			return fail("id must be a string")
		}
		if data["name"] != nil && json.Unmarshal(data["name"], &name) != nil {
			return fail("name must be a string")
		}
	}
	out := make([]json.RawMessage, len(texts))
	t := time0
	for k, text := range texts {
		if k > 0 {
			d, ok := safeInt(dt[k-1])
			if !ok || t+d > maxSafe || t+d < -maxSafe {
				return fail("dt[%d] must be a safe integer that keeps the time safe", k-1)
			}
			t += d
		}
		seq := seq0 + int64(k)
		if seq > maxSafe {
			return fail("member %d's seq is not a safe integer", k)
		}
		var chunk bytes.Buffer
		switch tag {
		case "text-chunks", "reasoning-chunks":
			kind := map[string]string{"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta"}[tag]
			chunk.WriteString(`{"type":"` + kind + `","index":` + string(data["index"]) + `,"text":` + quote(text) + `}`)
		default:
			chunk.WriteString(`{"type":"tool-call-delta","index":` + string(data["index"]) + `,"id":` + quote(id))
			if data["name"] != nil {
				chunk.WriteString(`,"name":` + quote(name))
			}
			chunk.WriteString(`,"argumentsDelta":` + quote(text) + `}`)
		}
		out[k] = json.RawMessage(`{"type":"assistant/chunk","seq":` + strconv.FormatInt(seq, 10) + `,"time":` + strconv.FormatInt(t, 10) +
			`,"data":{"turn":` + string(data["turn"]) + `,"step":` + string(data["step"]) + `,"chunk":` + chunk.String() + `}}`)
	}
	return out, nil
}

// keysAre reports whether m has exactly the keys ks.
func keysAre(m map[string]json.RawMessage, ks ...string) bool {
	if len(m) != len(ks) {
		return false
	}
	for _, k := range ks {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// safeInt reads a JSON number with a safe integer value.
func safeInt(v json.RawMessage) (int64, bool) {
	var f float64
	if v == nil || json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || math.Abs(f) > maxSafe {
		return 0, false
	}
	return int64(f), true
}

// quote writes s as JSON.stringify does (no HTML escaping).
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
