package h2grpc

import (
	"bytes"
	"slices"

	"golang.org/x/net/http2/hpack"
)

// hpackTableSize is HPACK's dynamic table size until the server says
// otherwise (SETTINGS_HEADER_TABLE_SIZE's initial value, RFC 9113 §6.5.2).
const hpackTableSize = 4096

// methodFields returns m's request header fields. Metadata is sensitive,
// never indexed: it may carry credentials.
func methodFields(cfg Config, m Method) []hpack.HeaderField {
	f := []hpack.HeaderField{
		{Name: ":method", Value: "POST"},
		{Name: ":scheme", Value: "http"},
		{Name: ":path", Value: m.Path},
		{Name: ":authority", Value: cfg.Addr},
		{Name: "content-type", Value: "application/grpc"},
		{Name: "te", Value: "trailers"},
	}
	if cfg.UserAgent != "" {
		f = append(f, hpack.HeaderField{Name: "user-agent", Value: cfg.UserAgent})
	}
	if cfg.Compressor != "" {
		f = append(f, hpack.HeaderField{Name: "grpc-encoding", Value: cfg.Compressor})
	}
	for _, kv := range m.Metadata {
		f = append(f, hpack.HeaderField{Name: kv[0], Value: kv[1], Sensitive: true})
	}
	return f
}

// staticBlock encodes fields as never-indexed literals, a block that does
// not depend on the dynamic table: for servers whose table is too small to
// hold every method's fields at once.
func staticBlock(fields []hpack.HeaderField) []byte {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	for _, f := range fields {
		f.Sensitive = true
		_ = enc.WriteField(f)
	}
	return b.Bytes()
}

// tableSize returns what every method's indexable fields take in the
// dynamic table together (RFC 7541 §4.1).
func tableSize(methods [][]hpack.HeaderField) uint32 {
	seen := map[hpack.HeaderField]bool{}
	var n uint32
	for _, fields := range methods {
		for _, f := range fields {
			if !f.Sensitive && !seen[f] {
				seen[f] = true
				n += f.Size()
			}
		}
	}
	return n
}

// headers is a connection's HPACK encoding of request headers. A method's
// first block inserts its fields into the dynamic table; from its second
// call on, once no other method's first block has moved the entries since,
// it is a cached block of indexed fields (a byte or two each), which a
// server decodes without copying or Huffman-decoding a string. grpc-go's
// client indexes the same way. As long as the fields of every method fit
// the table together none is ever evicted; otherwise (dynamic false) the
// static blocks go. Used under the transport's lock, in the order the
// blocks are written.
type headers struct {
	enc     *hpack.Encoder
	buf     bytes.Buffer
	cached  [][]byte
	sent    []bool
	dynamic bool
	// shrink: the server lowered its table below what we indexed; the next
	// block begins with a table size update to 0 (RFC 7541 §6.3).
	shrink bool
}

func newHeaders(c *Client) *headers {
	h := &headers{cached: make([][]byte, len(c.fields)), sent: make([]bool, len(c.fields)), dynamic: c.indexable}
	h.enc = hpack.NewEncoder(&h.buf)
	return h
}

// block returns method m's next header block.
func (h *headers) block(c *Client, m int) []byte {
	if !h.dynamic {
		if h.shrink {
			h.shrink = false
			return append([]byte{0x20}, c.static[m]...)
		}
		return c.static[m]
	}
	if b := h.cached[m]; b != nil {
		return b
	}
	h.buf.Reset()
	for _, f := range c.fields[m] {
		_ = h.enc.WriteField(f)
	}
	b := bytes.Clone(h.buf.Bytes())
	if h.sent[m] {
		h.cached[m] = b
	} else {
		h.sent[m] = true
		clear(h.cached) // this block inserted entries: the indices of every cached block moved
	}
	return b
}

// tableLimit applies the server's SETTINGS_HEADER_TABLE_SIZE.
func (h *headers) tableLimit(size uint32) {
	if !h.dynamic || size >= hpackTableSize {
		return
	}
	h.dynamic = false
	h.shrink = slices.Contains(h.sent, true) // the server's table may hold what we inserted
}
