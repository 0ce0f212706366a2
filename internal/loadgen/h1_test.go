package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

func TestReadResponse(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		status    int
		body      string
		ct, retry string
		keepAlive bool
		err       bool
	}{
		{"content length", "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 3\r\n\r\nabcNEXT", 200, "abc", "application/x-protobuf", "", true, false},
		{"empty 200", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, "", "", "", true, false},
		{"503 retry after", "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\ncontent-length: 0\r\n\r\n", 503, "", "", "7", true, false},
		{"chunked with trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n3;ext=1\r\n{\"a\r\n2\r\n\":\r\n0\r\nX-T: 1\r\n\r\n", 200, "{\"a\":", "application/json", "", true, false},
		{"connection close", "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", 400, "no", "", "", false, false},
		{"http 1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", 200, "", "", "", true, false},
		{"http 1.0 default close", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 200, "", "", "", false, false},
		{"body until eof", "HTTP/1.1 200 OK\r\n\r\nrest of it", 200, "rest of it", "", "", false, false},
		{"interim 100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 413 Too Large\r\nContent-Length: 0\r\n\r\n", 413, "", "", "", true, false},
		{"204 no body", "HTTP/1.1 204 No Content\r\n\r\n", 204, "", "", "", true, false},
		{"LF only", "HTTP/1.1 200 OK\nContent-Length: 1\n\nx", 200, "x", "", "", true, false},
		{"truncated body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0, "", "", "", false, true},
		{"not http", "SSH-2.0-OpenSSH\r\n\r\n", 0, "", "", "", false, true},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 0, "", "", "", false, true},
		{"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0, "", "", "", false, true},
		{"eof in headers", "HTTP/1.1 200 OK\r\nContent-", 0, "", "", "", false, true},
		{"empty", "", 0, "", "", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			resp, keep, err := readResponse(bufio.NewReader(strings.NewReader(tt.in)), &buf)
			if (err != nil) != tt.err {
				t.Fatalf("err %v, want error=%v", err, tt.err)
			}
			if tt.err {
				return
			}
			if resp.status != tt.status || string(resp.body) != tt.body || resp.contentType != tt.ct || resp.retryAfter != tt.retry || keep != tt.keepAlive {
				t.Errorf("got status %d body %q ct %q retry %q keep-alive %v, want %d %q %q %q %v",
					resp.status, resp.body, resp.contentType, resp.retryAfter, keep, tt.status, tt.body, tt.ct, tt.retry, tt.keepAlive)
			}
		})
	}
}

func TestReadResponseBoundsBody(t *testing.T) {
	big := strings.Repeat("x", DefaultMaxResponse+100)
	in := "HTTP/1.1 200 OK\r\nContent-Length: " + itoa(len(big)) + "\r\n\r\n" + big + "HTTP/1.1 503 X\r\nContent-Length: 0\r\n\r\n"
	br := bufio.NewReader(strings.NewReader(in))
	var buf bytes.Buffer
	resp, keep, err := readResponse(br, &buf)
	if err != nil || len(resp.body) != DefaultMaxResponse || !keep {
		t.Fatalf("got %d body bytes, keep-alive %v, err %v; want %d, true, nil", len(resp.body), keep, err, DefaultMaxResponse)
	}
	// The rest of the oversized body was skipped: the next response parses.
	resp, _, err = readResponse(br, &buf)
	if err != nil || resp.status != 503 {
		t.Errorf("next response status %d err %v, want 503", resp.status, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// FuzzReadResponse feeds arbitrary server bytes to the HTTP/1.1 response
// reader: no panic, no body beyond the bound, and an error or a status.
func FuzzReadResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 503 X\r\nRetry-After: 1\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 999 X\r\nContent-Length: 99999999999\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var buf bytes.Buffer
		resp, _, err := readResponse(bufio.NewReader(bytes.NewReader(in)), &buf)
		if err == nil && (resp.status < 200 || resp.status > 999) {
			t.Errorf("status %d without error", resp.status)
		}
		if len(resp.body) > DefaultMaxResponse {
			t.Errorf("body %d bytes, bound %d", len(resp.body), DefaultMaxResponse)
		}
		if errors.Is(err, io.EOF) {
			t.Errorf("bare io.EOF, want io.ErrUnexpectedEOF")
		}
	})
}
