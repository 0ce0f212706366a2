package linesink

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpwire"
)

// Field numbers of opentelemetry/proto/collector/logs/v1 and logs/v1.
const (
	fieldResourceLogs = 1 // ExportLogsServiceRequest.resource_logs
	fieldScopeLogs    = 2 // ResourceLogs.scope_logs
	fieldLogRecords   = 2 // ScopeLogs.log_records
	fieldBody         = 5 // LogRecord.body
	fieldString       = 1 // AnyValue.string_value
	fieldKvlist       = 6 // AnyValue.kvlist_value
	fieldBytes        = 7 // AnyValue.bytes_value
	fieldValues       = 1 // KeyValueList.values
	fieldKVValue      = 2 // KeyValue.value
)

// forEachBody calls fn with the body of every log record of an
// ExportLogsServiceRequest body in encoding enc: the string (or bytes)
// value, or for a map body (agents that parse lines into attributes) its
// first string value fn accepts. A record without a usable body is passed
// as nil. fn returns whether it accepted the body.
func forEachBody(enc otlpcodec.Encoding, body []byte, fn func([]byte) bool) error {
	if enc == otlpcodec.EncodingJSON {
		return forEachBodyJSON(body, fn)
	}
	return walk(body, fieldResourceLogs, func(rl []byte) error {
		return walk(rl, fieldScopeLogs, func(sl []byte) error {
			return walk(sl, fieldLogRecords, func(rec []byte) error {
				found := false
				err := walk(rec, fieldBody, func(v []byte) error {
					found = true
					if !anyValue(v, fn, 0) {
						fn(nil)
					}
					return nil
				})
				if err == nil && !found {
					fn(nil)
				}
				return err
			})
		})
	})
}

// anyValue offers the strings of an AnyValue to fn, descending one map
// level deep, until fn accepts one.
func anyValue(v []byte, fn func([]byte) bool, depth int) bool {
	accepted := false
	_ = walkAll(v, func(num int32, b []byte) error {
		switch {
		case accepted:
		case num == fieldString || num == fieldBytes:
			accepted = fn(b)
		case num == fieldKvlist && depth == 0:
			_ = walk(b, fieldValues, func(kv []byte) error {
				return walk(kv, fieldKVValue, func(val []byte) error {
					if !accepted {
						accepted = anyValue(val, fn, depth+1)
					}
					return nil
				})
			})
		}
		return nil
	})
	return accepted
}

// walk calls fn with the bytes of every length-delimited field number want.
func walk(buf []byte, want int32, fn func([]byte) error) error {
	return walkAll(buf, func(num int32, b []byte) error {
		if num == want {
			return fn(b)
		}
		return nil
	})
}

// walkAll calls fn with every length-delimited field of a message.
func walkAll(buf []byte, fn func(int32, []byte) error) error {
	for pos := 0; pos < len(buf); {
		num, wt, next, err := otlpwire.ConsumeTag(buf, pos)
		if err != nil {
			return fmt.Errorf("%w: %v", otlpcodec.ErrCorrupt, err)
		}
		if wt != otlpwire.Len {
			if pos, err = otlpwire.ConsumeUnknown(buf, next, wt); err != nil {
				return fmt.Errorf("%w: %v", otlpcodec.ErrCorrupt, err)
			}
			continue
		}
		b, end, err := otlpwire.ConsumeBytes(buf, next)
		if err != nil {
			return fmt.Errorf("%w: %v", otlpcodec.ErrCorrupt, err)
		}
		if err := fn(num, b); err != nil {
			return err
		}
		pos = end
	}
	return nil
}

func forEachBodyJSON(body []byte, fn func([]byte) bool) error {
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalJSON(body); err != nil {
		return fmt.Errorf("%w: json: %v", otlpcodec.ErrCorrupt, err)
	}
	rls := req.Logs().ResourceLogs()
	for i := range rls.Len() {
		sls := rls.At(i).ScopeLogs()
		for j := range sls.Len() {
			recs := sls.At(j).LogRecords()
			for k := range recs.Len() {
				if !valueJSON(recs.At(k).Body(), fn, 0) {
					fn(nil)
				}
			}
		}
	}
	return nil
}

func valueJSON(v pcommon.Value, fn func([]byte) bool, depth int) bool {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return fn([]byte(v.Str()))
	case pcommon.ValueTypeBytes:
		return fn(v.Bytes().AsRaw())
	case pcommon.ValueTypeMap:
		if depth > 0 {
			return false
		}
		accepted := false
		v.Map().Range(func(_ string, mv pcommon.Value) bool {
			accepted = valueJSON(mv, fn, depth+1)
			return !accepted
		})
		return accepted
	}
	return false
}
