package stage

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestResourceStripKeepsUnknownFields: strip removes only the Resource field of an entry it
// knows; the entry's other fields, and the request's fields other than its entries, stay.
func TestResourceStripKeepsUnknownFields(t *testing.T) {
	res := protowire.AppendTag(nil, 5, protowire.VarintType) // an unknown field of Resource
	res = protowire.AppendVarint(res, 9)
	// request is an export request of one entry (schema_url, then res if not nil, then an
	// unknown field) and an unknown field of its own.
	request := func(res []byte) []byte {
		entry := protowire.AppendTag(nil, 3, protowire.BytesType) // schema_url before the resource
		entry = protowire.AppendString(entry, "s")
		if res != nil {
			entry = protowire.AppendTag(entry, 1, protowire.BytesType)
			entry = protowire.AppendBytes(entry, res)
		}
		entry = protowire.AppendTag(entry, 99, protowire.VarintType)
		entry = protowire.AppendVarint(entry, 1)
		payload := protowire.AppendTag(nil, 1, protowire.BytesType)
		payload = protowire.AppendBytes(payload, entry)
		payload = protowire.AppendTag(payload, 42, protowire.Fixed64Type)
		return protowire.AppendFixed64(payload, 3)
	}
	payload := request(res)

	c := ResCache{m: map[string]resCached{string(res): {Attrs: "{}"}}}
	var rs resStrip
	got := c.strip(payload, &rs)
	if want := request(nil); string(got) != string(want) {
		t.Errorf("strip:\n got %x\nwant %x", got, want)
	}
	if len(rs.Hits) != 1 || rs.Hits[0] == nil {
		t.Errorf("strip found %d entries, hits %v; want the one, a hit", len(rs.Hits), rs.Hits)
	}
	// Malformed: cut in the middle of the entry. Nothing is stripped or cached.
	if got := c.strip(payload[:len(payload)-12], &rs); string(got) != string(payload[:len(payload)-12]) || len(rs.Hits) != 0 {
		t.Errorf("a malformed payload came back changed (%x) with %d entries", got, len(rs.Hits))
	}
}

// TestResourceCacheBound: the cache keeps its bytes under maxResCacheBytes and counts them
// exactly, a key put again replaces its entry, and a working set half again as large as the
// cache still mostly hits (evicting at random; clearing a full cache hit ~40% here).
func TestResourceCacheBound(t *testing.T) {
	var c ResCache
	const size = 1024 // key and JSON bytes of one entry
	entry := func(i int) ([]byte, resCached) {
		key := fmt.Appendf(nil, "resource-%08d", i)
		key = append(key, make([]byte, size/2-len(key))...)
		return key, resCached{Attrs: string(make([]byte, size/2)), Service: "svc"}
	}
	counted := func() int {
		n := 0
		for k, e := range c.m {
			n += resCacheSize(k, e)
		}
		return n
	}
	capacity := maxResCacheBytes / size
	working := capacity * 3 / 2
	for i := range working {
		c.put(entry(i))
	}
	if c.Bytes > maxResCacheBytes || c.Bytes != counted() || len(c.m) != capacity {
		t.Fatalf("after %d puts: %d bytes counted %d, %d entries; want at most %d bytes, %d entries",
			working, c.Bytes, counted(), len(c.m), maxResCacheBytes, capacity)
	}
	before := c.Bytes
	key, e := entry(working - 1) // the last one put, still there
	c.put(key, e)
	if c.Bytes != before || c.Bytes != counted() {
		t.Errorf("a key put again: %d bytes (counted %d), want %d", c.Bytes, counted(), before)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	hits, lookups := 0, 20*working
	for range lookups {
		key, e := entry(rng.IntN(working))
		if _, ok := c.m[string(key)]; ok {
			hits++
		} else {
			c.put(key, e)
		}
	}
	if rate := float64(hits) / float64(lookups); rate < 0.55 {
		t.Errorf("hit rate %.2f on a working set of %d entries for %d places, want above 0.55", rate, working, capacity)
	}
	if c.Bytes > maxResCacheBytes || c.Bytes != counted() {
		t.Errorf("after the lookups: %d bytes, counted %d", c.Bytes, counted())
	}
}
