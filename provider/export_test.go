package provider

// Test helpers of this package for the tests of package provider_test.
var (
	// CertsForTest is testCerts.
	CertsForTest = testCerts
)

// P12PasswordForTest is testP12Password.
const P12PasswordForTest = testP12Password
