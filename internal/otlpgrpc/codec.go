package otlpgrpc

import (
	"fmt"

	"google.golang.org/grpc/mem"
)

// Message is a protobuf message kept as the bytes gRPC received, or the
// bytes to send. The zero value is an empty message.
type Message struct {
	data mem.BufferSlice // received: gRPC's pooled buffers, referenced until Free
	raw  []byte          // to send, or received and copied (Bytes)
	rawp *[]byte         // to send, handed back to pool once sent (Recycled)
	pool mem.BufferPool
}

// Raw returns a Message that sends b as it is (b must not change until the
// call returns).
func Raw(b []byte) *Message { return &Message{raw: b} }

// Recycled returns a Message that sends *b as it is and gives b to
// pool.Put once gRPC no longer reads it, which can be after the call
// returned (an answer that came before the whole message was written).
// Buffers below gRPC's pooling threshold (1 KiB) are never given back.
func Recycled(b *[]byte, pool mem.BufferPool) *Message {
	return &Message{raw: *b, rawp: b, pool: pool}
}

// Len returns the message's size in bytes.
func (m *Message) Len() int {
	if m.data != nil {
		return m.data.Len()
	}
	return len(m.raw)
}

// Contiguous reports whether Bytes returns the message without a copy.
func (m *Message) Contiguous() bool { return m.data == nil || len(m.data) <= 1 }

// Bytes returns the message as one slice, valid until Free. A message that
// arrived in one buffer is returned without a copy; otherwise it is copied
// into dst (grown as needed; dst may come from a pool), and the copy is
// returned.
func (m *Message) Bytes(dst []byte) []byte {
	switch {
	case m.data == nil:
		return m.raw
	case len(m.data) == 0:
		return nil
	case len(m.data) == 1:
		return m.data[0].ReadOnlyData()
	}
	n := m.data.Len()
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	m.data.CopyTo(dst)
	return dst
}

// Free gives received buffers back to gRPC's pool. The Message is empty
// afterwards.
func (m *Message) Free() {
	if m.data != nil {
		m.data.Free()
	}
	*m = Message{}
}

// Codec is a gRPC codec (encoding.CodecV2) for *Message: Marshal sends the
// bytes as they are and Unmarshal keeps a reference to the received buffers
// instead of copying or decoding them. It names itself "proto", the content
// subtype every OTLP client sends; install it per server or per call
// (grpc.ForceServerCodecV2, grpc.ForceCodecV2), never globally, so other
// gRPC users in the process keep the real protobuf codec.
type Codec struct{}

// Name returns "proto".
func (Codec) Name() string { return "proto" }

// Marshal returns the bytes of a *Message.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*Message)
	if !ok {
		return nil, fmt.Errorf("otlpgrpc codec: marshal %T, want *otlpgrpc.Message", v)
	}
	if m.data != nil {
		m.data.Ref()
		return m.data, nil
	}
	if m.pool != nil {
		return mem.BufferSlice{mem.NewBuffer(m.rawp, m.pool)}, nil
	}
	// SliceBuffer is not pooled: gRPC's Free of it does nothing, and the
	// caller's slice is sent without a copy.
	return mem.BufferSlice{mem.SliceBuffer(m.raw)}, nil
}

// Unmarshal makes a *Message refer to data; the caller must Free it.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*Message)
	if !ok {
		return fmt.Errorf("otlpgrpc codec: unmarshal into %T, want *otlpgrpc.Message", v)
	}
	m.Free()
	data.Ref()
	m.data = data
	return nil
}
