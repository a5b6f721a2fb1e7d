package kafka

import "testing"

// TestAzureScope is the scope the stand-in of Entra ID of UseFakeEntraID
// hands tokens out for.
const TestAzureScope = testAzureScope

// UseFakeEntraID makes AZURE_EVENT_HUBS_ENTRA_ID connections of the test
// get token from a stand-in of Microsoft Entra ID, through the agent's
// Azure credential chain, until the test ends.
func UseFakeEntraID(t *testing.T, token string) { useFakeEntraID(t, newFakeEntraID(t, token)) }
