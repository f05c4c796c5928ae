package evalapi

// The upstream metrics, for the tests of package evalapi_test.
var (
	UpstreamRequests = upstreamRequests
	UpstreamDuration = upstreamDuration
)
