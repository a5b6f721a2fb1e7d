package spec

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"math"
)

// This file bounds the work of opening a PKCS#12 store. go-pkcs12 runs
// every key derivation a store asks for, with any iteration count, so a
// crafted store could make each validation, PUT and Kafka client spend
// minutes of CPU. p12Iterations reads the iteration counts from the
// store's ASN.1 (RFC 7292, RFC 8018, RFC 9579) before go-pkcs12 derives
// any key, and keystore refuses a store whose counts add up to more than
// MaxP12Iterations.

// MaxP12Iterations is the most key-derivation iterations, summed over the
// MAC and every encryption of a PKCS#12 store that can be seen without the
// password, that tls.keystore_p12_base64 accepts. Real tools write far
// fewer (OpenSSL 3: 2048 for each of three derivations, Java keytool:
// 10000 each, go-pkcs12: 2048 each). On the development machine a million
// iterations of PBKDF2-HMAC-SHA-256 take 0.3 s and go-pkcs12 opens a store
// of three 1,000,000-iteration derivations in 0.6 s (PBES2) to 1.1 s
// (legacy 3DES, whose encryption derives twice), so the worst store
// accepted costs about 1.3 s.
//
// A store can hide a key bag inside its encrypted contents, where its count
// cannot be read without decrypting; go-pkcs12 decrypts at most one key.
const MaxP12Iterations = 3_000_000

// MaxP12Bytes is the largest PKCS#12 store, decoded, that
// tls.keystore_p12_base64 accepts; a client certificate, its chain and key
// take a few KiB.
const MaxP12Bytes = 1 << 20

// Object identifiers of the PKCS#12 structures that carry iteration counts.
var (
	oidP12Data           = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidP12EncryptedData  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 6}
	oidP12ShroudedKeyBag = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 2}
	oidP12PBEPrefix      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1}
	oidPBKDF2            = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidPBES2             = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBMAC1            = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 14}
)

// p12PFX is the PFX of RFC 7292.
type p12PFX struct {
	Version  int
	AuthSafe p12ContentInfo
	MacData  p12MacData `asn1:"optional"`
}

// p12ContentInfo is a PKCS#7 ContentInfo.
type p12ContentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"tag:0,explicit,optional"`
}

// p12MacData is the MacData of RFC 7292.
type p12MacData struct {
	Mac struct {
		Algorithm pkix.AlgorithmIdentifier
		Digest    []byte
	}
	MacSalt    []byte
	Iterations int `asn1:"optional,default:1"`
}

// p12EncryptedData is a PKCS#7 EncryptedData.
type p12EncryptedData struct {
	Version              int
	EncryptedContentInfo struct {
		ContentType                asn1.ObjectIdentifier
		ContentEncryptionAlgorithm pkix.AlgorithmIdentifier
		EncryptedContent           []byte `asn1:"tag:0,optional"`
	}
}

// p12SafeBag is a SafeBag of RFC 7292; the attributes are not needed.
type p12SafeBag struct {
	ID         asn1.ObjectIdentifier
	Value      asn1.RawValue `asn1:"tag:0,explicit"`
	Attributes asn1.RawValue `asn1:"optional"`
}

// p12EncryptedPrivateKeyInfo is the EncryptedPrivateKeyInfo of RFC 5208.
type p12EncryptedPrivateKeyInfo struct {
	Algorithm     pkix.AlgorithmIdentifier
	EncryptedData []byte
}

// p12PBEParams is the pkcs-12PbeParams of RFC 7292.
type p12PBEParams struct {
	Salt       []byte
	Iterations int
}

// p12PBES2Params is PBES2-params of RFC 8018 (and, with the names
// changed, PBMAC1-params: the key derivation function comes first in both).
type p12PBES2Params struct {
	KeyDerivationFunc pkix.AlgorithmIdentifier
	Scheme            pkix.AlgorithmIdentifier
}

// p12PBKDF2Params is PBKDF2-params of RFC 8018.
type p12PBKDF2Params struct {
	Salt       asn1.RawValue
	Iterations int
	KeyLength  int                      `asn1:"optional"`
	Prf        pkix.AlgorithmIdentifier `asn1:"optional"`
}

// p12Iterations returns the sum and the largest of the iteration counts in
// the PKCS#12 store der that can be read without its password: the MAC's
// and those of the algorithms that encrypt its safe contents and private
// keys. ok is false when the store's structure is not understood; go-pkcs12
// then gives its own error (it reads the same DER, with the same rules).
func p12Iterations(der []byte) (sum, largest int64, ok bool) {
	var counts []int
	add := func(alg pkix.AlgorithmIdentifier) bool {
		n, ok := algorithmIterations(alg)
		if ok && n > 0 {
			counts = append(counts, n)
		}
		return ok
	}
	var pfx p12PFX
	if !unmarshalAll(der, &pfx) || !pfx.AuthSafe.ContentType.Equal(oidP12Data) {
		return 0, 0, false
	}
	if len(pfx.MacData.Mac.Algorithm.Algorithm) > 0 {
		if pfx.MacData.Mac.Algorithm.Algorithm.Equal(oidPBMAC1) {
			// RFC 9579: PBMAC1 takes its count from its parameters and
			// ignores MacData.iterations.
			if !add(pfx.MacData.Mac.Algorithm) {
				return 0, 0, false
			}
		} else if pfx.MacData.Iterations > 0 {
			counts = append(counts, pfx.MacData.Iterations)
		}
	}
	var authSafeData []byte
	var authSafe []p12ContentInfo
	if !unmarshalAll(pfx.AuthSafe.Content.Bytes, &authSafeData) || !unmarshalAll(authSafeData, &authSafe) {
		return 0, 0, false
	}
	for _, ci := range authSafe {
		switch {
		case ci.ContentType.Equal(oidP12Data):
			var data []byte
			var bags []p12SafeBag
			if !unmarshalAll(ci.Content.Bytes, &data) || !unmarshalAll(data, &bags) {
				return 0, 0, false
			}
			for _, bag := range bags {
				if !bag.ID.Equal(oidP12ShroudedKeyBag) {
					continue
				}
				var key p12EncryptedPrivateKeyInfo
				if !unmarshalAll(bag.Value.Bytes, &key) || !add(key.Algorithm) {
					return 0, 0, false
				}
			}
		case ci.ContentType.Equal(oidP12EncryptedData):
			var ed p12EncryptedData
			if !unmarshalAll(ci.Content.Bytes, &ed) || !add(ed.EncryptedContentInfo.ContentEncryptionAlgorithm) {
				return 0, 0, false
			}
		default:
			return 0, 0, false
		}
	}
	for _, n := range counts {
		// Saturate: two counts near the int64 limit must not wrap to a
		// small sum.
		sum = min(sum, math.MaxInt64-int64(n)) + int64(n)
		largest = max(largest, int64(n))
	}
	return sum, largest, true
}

// algorithmIterations returns the iteration count of a password-based
// algorithm: a PKCS#12 PBE algorithm, or PBES2 or PBMAC1 with PBKDF2. It returns 0 and true for an algorithm it does not know, which
// go-pkcs12 refuses without deriving a key, and false when the
// parameters of one it knows do not parse.
func algorithmIterations(alg pkix.AlgorithmIdentifier) (int, bool) {
	oid := alg.Algorithm
	switch {
	case len(oid) == len(oidP12PBEPrefix)+1 && oid[:len(oidP12PBEPrefix)].Equal(oidP12PBEPrefix):
		var p p12PBEParams
		if !unmarshalAll(alg.Parameters.FullBytes, &p) {
			return 0, false
		}
		return p.Iterations, true
	case oid.Equal(oidPBES2) || oid.Equal(oidPBMAC1):
		var p p12PBES2Params
		if !unmarshalAll(alg.Parameters.FullBytes, &p) {
			return 0, false
		}
		if !p.KeyDerivationFunc.Algorithm.Equal(oidPBKDF2) {
			return 0, true
		}
		var kdf p12PBKDF2Params
		if !unmarshalAll(p.KeyDerivationFunc.Parameters.FullBytes, &kdf) {
			return 0, false
		}
		return kdf.Iterations, true
	}
	return 0, true
}

// unmarshalAll decodes the DER of in into out and reports whether that
// worked with no bytes left over.
func unmarshalAll(in []byte, out any) bool {
	rest, err := asn1.Unmarshal(in, out)
	return err == nil && len(rest) == 0
}

// p12IterationsError is the error for a store whose key derivations ask
// for more than MaxP12Iterations iterations.
func p12IterationsError(sum, largest int64) error {
	return fmt.Errorf("the PKCS#12 key store asks for %d key-derivation iterations in all (the largest count is %d), "+
		"more than the %d the agent accepts, so opening it would cost seconds of CPU each time; re-export it with fewer, "+
		"e.g. `openssl pkcs12 -in client.p12 -nodes -out client.pem` then "+
		"`openssl pkcs12 -export -in client.pem -iter 10000 -out client-new.p12` (OpenSSL's default, 2048, is also fine)",
		sum, largest, MaxP12Iterations)
}
