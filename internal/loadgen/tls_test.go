package loadgen

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client certificate, written
// as PEM files.
type testPKI struct {
	caFile, certFile, keyFile string
	pool                      *x509.CertPool
	server                    tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "otelbench test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, *ecdsa.PrivateKey) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "otelbench test"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		b, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	p := &testPKI{pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.caFile = write("ca.pem", "CERTIFICATE", caDER)
	srvDER, srvKey := issue(2, x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	p.server = tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}
	cliDER, cliKey := issue(3, x509.ExtKeyUsageClientAuth, nil)
	p.certFile = write("client.pem", "CERTIFICATE", cliDER)
	p.keyFile = write("client-key.pem", "EC PRIVATE KEY", keyDER(cliKey))
	return p
}

// startTLS starts an OTLP-ish TLS server with the test PKI; mTLS makes it require a client
// certificate from the CA.
func (p *testPKI) startTLS(t *testing.T, mTLS bool) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{p.server}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	if mTLS {
		srv.TLS.ClientCAs, srv.TLS.ClientAuth = p.pool, tls.RequireAndVerifyClientCert
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestTLSWithTestCA runs every sender against TLS servers of a CA made here: trusted through
// the CA file, refused without it, accepted unverified with InsecureSkipVerify, and with a
// client certificate where the server requires one.
func TestTLSWithTestCA(t *testing.T) {
	pki := newTestPKI(t)
	plain, mutual := pki.startTLS(t, false), pki.startTLS(t, true)
	tests := []struct {
		name   string
		url    string
		tls    TLSConfig
		sender Sender
		rate   float64
		ok     bool
		cause  string
	}{
		{"CA file", plain.URL, TLSConfig{CAFile: pki.caFile}, SenderAuto, 0, true, ""},
		{"CA file, open model", plain.URL, TLSConfig{CAFile: pki.caFile}, SenderAuto, 500, true, ""},
		{"CA file, net/http", plain.URL, TLSConfig{CAFile: pki.caFile}, SenderNetHTTP, 0, true, ""},
		{"no CA", plain.URL, TLSConfig{}, SenderAuto, 0, false, "TLS certificate not trusted"},
		{"no CA, net/http", plain.URL, TLSConfig{}, SenderNetHTTP, 0, false, "TLS certificate not trusted"},
		{"skip verify", plain.URL, TLSConfig{InsecureSkipVerify: true}, SenderAuto, 0, true, ""},
		{"client certificate", mutual.URL, TLSConfig{CAFile: pki.caFile, CertFile: pki.certFile, KeyFile: pki.keyFile}, SenderAuto, 0, true, ""},
		{"client certificate, net/http", mutual.URL, TLSConfig{CAFile: pki.caFile, CertFile: pki.certFile, KeyFile: pki.keyFile}, SenderNetHTTP, 0, true, ""},
		{"no client certificate", mutual.URL, TLSConfig{CAFile: pki.caFile}, SenderAuto, 0, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Run(context.Background(), Config{Endpoint: tt.url, TLS: tt.tls, Sender: tt.sender, Rate: tt.rate,
				Requests: 24, Concurrency: 3, Payload: otlpgen.Config{Records: 5, PoolSize: 2}})
			if err != nil {
				t.Fatal(err)
			}
			err = rep.Check(DefaultMinSuccess)
			if (err == nil) != tt.ok {
				t.Fatalf("Check() = %v, want ok=%v; failures %+v", err, tt.ok, rep.Failures)
			}
			if tt.ok && rep.Totals.Status.S2xx != 24 {
				t.Errorf("2xx %d of 24", rep.Totals.Status.S2xx)
			}
			if tt.cause != "" && (len(rep.Failures) == 0 || rep.Failures[0].Cause != tt.cause) {
				t.Errorf("failures %+v, want cause %q", rep.Failures, tt.cause)
			}
		})
	}
}

func TestTLSConfigErrors(t *testing.T) {
	pki := newTestPKI(t)
	tests := []struct {
		name string
		tls  TLSConfig
	}{
		{"missing CA file", TLSConfig{CAFile: filepath.Join(t.TempDir(), "nope.pem")}},
		{"CA file without PEM", TLSConfig{CAFile: pki.keyFile + ".x"}},
		{"cert without key", TLSConfig{CertFile: pki.certFile}},
		{"key is not a certificate", TLSConfig{CertFile: pki.keyFile, KeyFile: pki.keyFile}},
	}
	if err := os.WriteFile(pki.keyFile+".x", []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		if _, err := tt.tls.clientConfig("127.0.0.1"); err == nil {
			t.Errorf("%s: clientConfig = nil error, want one", tt.name)
		}
	}
}
