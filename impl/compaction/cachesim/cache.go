package cachesim

import (
	"time"
)

// Msg is one message of a request: its identity (the seq of the surface
// node it comes from: a node never changes, a change is a new node) and
// its tokens; Breakpoint marks a cache_control breakpoint after it
// (Anthropic).
type Msg struct {
	ID         int64
	Tokens     int
	Breakpoint bool
}

// Bill is what one request's input cost.
type Bill struct {
	Input, Read, Written, Uncached int
	// Cost is the input's price in base-price tokens.
	Cost float64
}

// Cache is one provider's prompt cache over a session's requests.
type Cache struct {
	m       Model
	entries map[uint64]*entry
	n       int
}

type entry struct {
	tokens int
	last   time.Time
}

// NewCache is an empty cache of model m.
func NewCache(m Model) *Cache { return &Cache{m: m, entries: map[uint64]*entry{}} }

// prefixes are the hash and the cumulative tokens of each prefix of p.
func prefixes(p []Msg) ([]uint64, []int) {
	hs, cum := make([]uint64, len(p)), make([]int, len(p))
	h, t := uint64(14695981039346656037), 0
	for i, m := range p {
		x := uint64(m.ID)
		for k := 0; k < 8; k++ {
			h ^= x & 0xff
			h *= 1099511628211
			x >>= 8
		}
		t += m.Tokens
		hs[i], cum[i] = h, t
	}
	return hs, cum
}

func (c *Cache) live(h uint64, at time.Time) *entry {
	if e := c.entries[h]; e != nil && at.Sub(e.last) <= c.m.TTL {
		return e
	}
	return nil
}

// Request bills prompt p sent at time at, and updates the cache.
func (c *Cache) Request(p []Msg, at time.Time) Bill {
	hs, cum := prefixes(p)
	var b Bill
	if len(p) == 0 {
		return b
	}
	b.Input = cum[len(p)-1]
	if c.m.Explicit {
		var bps []int
		for i, m := range p {
			if m.Breakpoint {
				bps = append(bps, i)
			}
		}
		hit := -1
		for _, bp := range bps {
			for j := bp; j >= 0 && j >= bp-c.m.Lookback; j-- {
				if e := c.live(hs[j], at); e != nil && j > hit {
					hit = j
					break
				}
			}
		}
		if hit >= 0 {
			b.Read = cum[hit]
			c.entries[hs[hit]].last = at
		}
		if len(bps) > 0 {
			last := bps[len(bps)-1]
			if cum[last] >= c.m.MinTokens && cum[last] > b.Read {
				b.Written = cum[last] - b.Read
			}
			for _, bp := range bps {
				if cum[bp] >= c.m.MinTokens {
					c.entries[hs[bp]] = &entry{tokens: cum[bp], last: at}
				}
			}
		}
	} else {
		for i := len(p) - 1; i >= 0; i-- {
			if c.live(hs[i], at) != nil {
				b.Read = cum[i]
				break
			}
		}
		switch {
		case b.Read < c.m.MinTokens:
			b.Read = 0
		case c.m.Step > 0:
			b.Read = c.m.MinTokens + (b.Read-c.m.MinTokens)/c.m.Step*c.m.Step
		}
		for i := range p {
			if cum[i] >= c.m.MinTokens {
				c.entries[hs[i]] = &entry{tokens: cum[i], last: at}
			}
		}
	}
	b.Uncached = b.Input - b.Read - b.Written
	b.Cost = float64(b.Read)*c.m.Read + float64(b.Written)*c.m.Write + float64(b.Uncached)
	if c.n++; c.n%64 == 0 {
		for h, e := range c.entries {
			if at.Sub(e.last) > c.m.TTL {
				delete(c.entries, h)
			}
		}
	}
	return b
}
