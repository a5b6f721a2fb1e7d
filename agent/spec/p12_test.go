package spec

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"software.sslmate.com/src/go-pkcs12"
)

// testdataP12Password opens the stores of testdata/p12, which were written by
// `openssl pkcs12 -export` (OpenSSL 3.0: default, -iter 3000000, -legacy) and
// `keytool -genkeypair -storetype PKCS12` (Java 17), each holding a
// throw-away self-signed EC key.
const testdataP12Password = "changeit"

// hugeIterations is an iteration count that would take minutes to derive.
const hugeIterations = 1<<31 - 1

// encodeP12 returns a store of a fresh client key written by enc.
func encodeP12(t testing.TB, enc *pkcs12.Encoder) []byte {
	t.Helper()
	ca, client := newClientPair(t)
	der, err := enc.Encode(client.Key, client.Cert, []*x509.Certificate{ca.Cert}, testdataP12Password)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// readP12 returns the store testdata/p12/name.
func readP12(t testing.TB, name string) []byte {
	t.Helper()
	der, err := os.ReadFile(filepath.Join("testdata", "p12", name))
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// marshal is asn1.Marshal for values the test built itself.
func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := asn1.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unmarshal is unmarshalAll that fails the test.
func unmarshal(t *testing.T, in []byte, out any) {
	t.Helper()
	if !unmarshalAll(in, out) {
		t.Fatalf("cannot decode %T", out)
	}
}

// explicit0 returns inner wrapped in the [0] EXPLICIT tag of ContentInfo and
// SafeBag: encoding/asn1 writes a RawValue field as it is, without its tag.
func explicit0(inner []byte) asn1.RawValue {
	return asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: inner}
}

// withMACIterations returns der with its MAC iteration count set to n.
func withMACIterations(t *testing.T, der []byte, n int) []byte {
	t.Helper()
	var pfx p12PFX
	unmarshal(t, der, &pfx)
	pfx.MacData.Iterations = n
	return marshal(t, pfx)
}

// withKeyBagIterations returns der with the PBKDF2 iteration count of its
// PBES2 shrouded key bags set to n.
func withKeyBagIterations(t *testing.T, der []byte, n int) []byte {
	t.Helper()
	var pfx p12PFX
	var authSafeData []byte
	var authSafe []p12ContentInfo
	unmarshal(t, der, &pfx)
	unmarshal(t, pfx.AuthSafe.Content.Bytes, &authSafeData)
	unmarshal(t, authSafeData, &authSafe)
	changed := false
	for i, ci := range authSafe {
		if !ci.ContentType.Equal(oidP12Data) {
			continue
		}
		var data []byte
		var bags []p12SafeBag
		unmarshal(t, ci.Content.Bytes, &data)
		unmarshal(t, data, &bags)
		for j, bag := range bags {
			if !bag.ID.Equal(oidP12ShroudedKeyBag) {
				continue
			}
			var key p12EncryptedPrivateKeyInfo
			var pbes2 p12PBES2Params
			var kdf p12PBKDF2Params
			unmarshal(t, bag.Value.Bytes, &key)
			unmarshal(t, key.Algorithm.Parameters.FullBytes, &pbes2)
			unmarshal(t, pbes2.KeyDerivationFunc.Parameters.FullBytes, &kdf)
			kdf.Iterations = n
			pbes2.KeyDerivationFunc.Parameters = asn1.RawValue{FullBytes: marshal(t, kdf)}
			key.Algorithm.Parameters = asn1.RawValue{FullBytes: marshal(t, pbes2)}
			bags[j].Value = explicit0(marshal(t, key))
			changed = true
		}
		authSafe[i].Content = explicit0(marshal(t, marshal(t, bags)))
	}
	if !changed {
		t.Fatal("the store has no shrouded key bag in plain data")
	}
	pfx.AuthSafe.Content = explicit0(marshal(t, marshal(t, authSafe)))
	out := marshal(t, pfx)
	// go-pkcs12 reads the rewritten store: only its MAC, checked first,
	// no longer matches.
	if _, _, _, err := pkcs12.DecodeChain(out, testdataP12Password); !errors.Is(err, pkcs12.ErrIncorrectPassword) {
		t.Fatalf("go-pkcs12 does not read the rewritten store: %v", err)
	}
	return out
}

func TestKeystoreAcceptsRealStores(t *testing.T) {
	stores := map[string][]byte{
		"go-pkcs12 Modern2023": encodeP12(t, pkcs12.Modern2023),
		"go-pkcs12 Modern2026": encodeP12(t, pkcs12.Modern2026),
		"go-pkcs12 LegacyDES":  encodeP12(t, pkcs12.LegacyDES),
		"go-pkcs12 LegacyRC2":  encodeP12(t, pkcs12.LegacyRC2),
		"go-pkcs12 10000 iter": encodeP12(t, pkcs12.Modern2023.WithIterations(10000)),
		"openssl 3 default":    readP12(t, "openssl-default.p12"),
		"openssl 3 -legacy":    readP12(t, "openssl-legacy.p12"),
		"keytool 17 PKCS12":    readP12(t, "keytool.p12"),
	}
	for name, der := range stores {
		t.Run(name, func(t *testing.T) {
			if _, fe := keystore(base64.StdEncoding.EncodeToString(der), testdataP12Password); fe != nil {
				t.Fatalf("refused: %v", fe)
			}
		})
	}
}

func TestKeystoreRefusesCostlyStores(t *testing.T) {
	modern := encodeP12(t, pkcs12.Modern2023)
	for _, tc := range []struct {
		name string
		der  []byte
		want []string
	}{
		{"openssl -iter 3000000", readP12(t, "openssl-iter3m.p12"), []string{"9000000 key-derivation iterations", "largest count is 3000000"}},
		{"huge MAC count", withMACIterations(t, modern, hugeIterations), []string{"largest count is 2147483647"}},
		{"huge PBES2 key bag count", withKeyBagIterations(t, modern, hugeIterations), []string{"largest count is 2147483647"}},
		{"huge counts do not wrap", withMACIterations(t, withKeyBagIterations(t, modern, 1<<62), 1<<62), []string{"largest count is 4611686018427387904"}},
		{"just over the limit", withMACIterations(t, modern, MaxP12Iterations-2*2048+1), []string{"3000001 key-derivation"}},
		{"too big", append(modern, make([]byte, MaxP12Bytes)...), []string{"more than the 1048576 accepted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, fe := keystore(base64.StdEncoding.EncodeToString(tc.der), testdataP12Password)
			if fe == nil {
				t.Fatal("accepted")
			}
			msg := fe.Error()
			for _, w := range append(tc.want, "keystore_p12_base64: ") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, testdataP12Password) {
				t.Errorf("error %q quotes the password", msg)
			}
		})
	}
}

func TestP12IterationsCounts(t *testing.T) {
	for _, tc := range []struct {
		name         string
		der          []byte
		sum, largest int64
	}{
		{"openssl default", readP12(t, "openssl-default.p12"), 3 * 2048, 2048},
		{"keytool", readP12(t, "keytool.p12"), 3 * 10000, 10000},
		{"openssl legacy", readP12(t, "openssl-legacy.p12"), 3 * 2048, 2048},
		{"PBMAC1", encodeP12(t, pkcs12.Modern2026.WithIterations(1234)), 3 * 1234, 1234},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, largest, ok := p12Iterations(tc.der)
			if !ok || sum != tc.sum || largest != tc.largest {
				t.Fatalf("p12Iterations = %d, %d, %v; want %d, %d, true", sum, largest, ok, tc.sum, tc.largest)
			}
		})
	}
	for _, bad := range [][]byte{nil, {0x30, 0x00}, []byte("not DER"), marshal(t, pkix.AlgorithmIdentifier{Algorithm: oidPBES2})} {
		if _, _, ok := p12Iterations(bad); ok {
			t.Errorf("p12Iterations(%x) understood", bad)
		}
	}
}

func FuzzP12Iterations(f *testing.F) {
	for _, name := range []string{"openssl-default.p12", "openssl-iter3m.p12", "openssl-legacy.p12", "keytool.p12"} {
		f.Add(readP12(f, name))
	}
	f.Add(encodeP12(f, pkcs12.Modern2026))
	f.Add(encodeP12(f, pkcs12.LegacyRC2))
	f.Fuzz(func(t *testing.T, der []byte) {
		sum, largest, ok := p12Iterations(der)
		if !ok && (sum != 0 || largest != 0) {
			t.Fatalf("not understood but counted %d, %d", sum, largest)
		}
		if sum < largest || largest < 0 {
			t.Fatalf("sum %d, largest %d", sum, largest)
		}
	})
}
