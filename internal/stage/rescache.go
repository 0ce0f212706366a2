package stage

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"google.golang.org/protobuf/encoding/protowire"
)

// maxResCacheBytes bounds a projector's resource cache, counted as its keys' and JSON's bytes. A
// put past it evicts entries at random: a working set somewhat larger than the cache still hits
// in proportion, and far more often than when a full cache was cleared, as until 9c8d216
// did (a working set 1.5x the cache: 67% against 39% of lookups hit,
// TestResourceCacheBound). The load's mixed requests carry up to 1,024 distinct resources a
// signal (each names a pod at random): staged from the logs and metrics pools, telemetry.db's
// projector's, 2,022 entries of ~790 bytes of key and JSON, 1.6 MB, more than its stages'
// caches of 1,024 entries held. They now fit.
const maxResCacheBytes = 4 << 20

// resCache remembers, across slices, the resources a stage has staged, keyed by their encoded
// bytes: a Resource message as it came in a payload, which an agent repeats unchanged in every
// request it sends. In a catch-up of logs sent one record a request, decoding each request's
// resource (a dozen attributes) and rendering it as JSON to hash it was half of the stager's
// time, and the stager bounded the catch-up (docs/benchmarks/store.md, bench-serve-ab.sh).
//
// A resource is decoded by pdata the first time its bytes are seen; the cache keeps what that
// decoding produced (its attributes' JSON and service.name). strip then cuts the resources it
// knows out of a payload before pdata decodes the rest, and the stage takes the cached values
// for them: what is staged is what decoding the whole payload would have staged
// (TestResourceCacheStagesAlike, FuzzResourceCache).
//
// A projector has one, which both of its stages use (the slices are staged one at a time).
type ResCache struct {
	m     map[string]resCached
	Bytes int   // the keys' and JSON's bytes in m
	Hits  int64 // resources staged from the cache (tests)
}

type resCached struct {
	Attrs   string
	Service any // string or nil, as resourceEntry.service

	// The hash of the resource as staged under schemaURL, the schema URL of the entry it came
	// in, which an agent sends the same each time: staged under it again, the resource is not
	// hashed again, and the stage's entry shares attrs.
	schemaURL string
	hash      [16]byte
}

// cached returns what the cache keeps of e, a resource just staged.
func cached(e *ResourceEntry) resCached {
	return resCached{Attrs: e.Attrs, Service: e.Service, schemaURL: e.SchemaURL, hash: e.Hash}
}

// resStrip is what strip found in a payload, one entry per top-level resource entry (the export
// request's field 1: ResourceLogs, ResourceSpans or ResourceMetrics), in order.
type resStrip struct {
	Hits []*resCached // the cached resource, or nil: decode it and fill the cache (key)
	keys [][]byte     // the Resource's bytes, for a miss; nil when there is none to cache
	buf  []byte       // the last stripped payload's
}

// put caches e under a Resource's bytes, evicting entries at random while the cache would
// exceed maxResCacheBytes.
func (c *ResCache) put(key []byte, e resCached) {
	if c.m == nil {
		c.m = make(map[string]resCached)
	}
	if old, ok := c.m[string(key)]; ok {
		c.Bytes -= resCacheSize(string(key), old)
		delete(c.m, string(key))
	}
	size := resCacheSize(string(key), e)
	if c.Bytes+size > maxResCacheBytes {
		for k, old := range c.m { // map iteration starts at a random entry
			delete(c.m, k)
			if c.Bytes -= resCacheSize(k, old); c.Bytes+size <= maxResCacheBytes {
				break
			}
		}
	}
	c.m[string(key)] = e
	c.Bytes += size
}

func resCacheSize(key string, e resCached) int { return len(key) + len(e.Attrs) + len(e.schemaURL) }

// strip returns payload without the Resource of each top-level entry whose bytes are in the
// cache, and what it found in rs. A payload it cannot walk (malformed wire format) or whose
// entries carry no cached resource comes back unchanged, every entry a miss; a payload it
// cannot walk has no keys, so nothing from it is cached and pdata reports the error. A
// stripped payload is written into rs's buffer, valid until the next strip: pdata copies what
// it decodes, and the stage copies what it keeps, so a payload need not outlive its decoding
// (a new buffer per payload was ~3 MB more peak RSS under a mixed load).
func (c *ResCache) strip(payload []byte, rs *resStrip) []byte {
	rs.Hits, rs.keys = rs.Hits[:0], rs.keys[:0]
	var out []byte // nil until the first hit
	b := payload
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return unwalkable(payload, rs)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return unwalkable(payload, rs)
		}
		field := b[:n+m]
		b = b[n+m:]
		if num != 1 || typ != protowire.BytesType {
			if out != nil {
				out = append(out, field...)
			}
			continue
		}
		entry, _ := protowire.ConsumeBytes(field[n:])
		res, start, end, ok := resourceField(entry)
		if !ok {
			return unwalkable(payload, rs)
		}
		hit, cached := c.m[string(res)]
		if !cached || res == nil {
			rs.Hits = append(rs.Hits, nil)
			rs.keys = append(rs.keys, res)
			if out != nil {
				out = append(out, field...)
			}
			continue
		}
		rs.Hits = append(rs.Hits, &hit)
		rs.keys = append(rs.keys, nil)
		if out == nil {
			out = append(rs.buf[:0], payload[:len(payload)-len(b)-len(field)]...)
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendVarint(out, uint64(len(entry)-(end-start)))
		out = append(out, entry[:start]...)
		out = append(out, entry[end:]...)
	}
	if out == nil {
		return payload
	}
	if cap(out) <= maxStripBuf {
		rs.buf = out
	}
	return out
}

// maxStripBuf bounds the stripped-payload buffer a stage keeps between payloads.
const maxStripBuf = 1 << 20

// unwalkable resets rs for a payload strip cannot walk: it is decoded whole, and pdata, which
// reads the same wire format, reports what is wrong with it.
func unwalkable(payload []byte, rs *resStrip) []byte {
	rs.Hits, rs.keys = rs.Hits[:0], rs.keys[:0]
	return payload
}

// resourceField finds the Resource (field 1) of a ResourceLogs, ResourceSpans or
// ResourceMetrics message: its value, and where the whole field (tag, length, value) starts and
// ends in entry. A message without one has res nil; a message with two (which protobuf merges)
// is not walked (ok false), nor is a malformed one.
func resourceField(entry []byte) (res []byte, start, end int, ok bool) {
	found := false
	for off := 0; off < len(entry); {
		num, typ, n := protowire.ConsumeTag(entry[off:])
		if n < 0 {
			return nil, 0, 0, false
		}
		m := protowire.ConsumeFieldValue(num, typ, entry[off+n:])
		if m < 0 {
			return nil, 0, 0, false
		}
		if num == 1 {
			if found || typ != protowire.BytesType {
				return nil, 0, 0, false
			}
			found = true
			res, _ = protowire.ConsumeBytes(entry[off+n:])
			start, end = off, off+n+m
			if res == nil {
				res = []byte{} // present but empty: still a key
			}
		}
		off += n + m
	}
	return res, start, end, true
}

// resourceFor stages the resource of the i-th top-level entry: the cached one for a hit, else
// r decoded by pdata, which then goes into the cache under its bytes.
func (st *Stage) resourceFor(rs *resStrip, i int, r pcommon.Resource, schemaURL string) int {
	if i < len(rs.Hits) && rs.Hits[i] != nil {
		st.ResCache.Hits++
		return st.stageCached(rs.Hits[i], schemaURL)
	}
	idx := st.resource(r, schemaURL)
	if i < len(rs.keys) && rs.keys[i] != nil {
		e := &st.Resources[idx]
		st.ResCache.put(rs.keys[i], cached(e))
	}
	return idx
}
