// A 409 that is not a conflict: the catalog is still processing an earlier request that
// carried the same Idempotency-Key. Lakekeeper answers a duplicate of a mutation in flight
// with type "RequestInProgress" (ErrorModel::request_in_progress in
// crates/iceberg-ext/src/catalog/rest/error.rs); the spec's proposed wording for the same case
// is "request_in_progress" (apache/iceberg#14196). The spec never finalizes such an answer,
// so the request is resent unchanged, with the same key, after a pause (catalog_channel.h),
// and a commit that still gets it has an unknown outcome, never a failed requirement.
// Internal to the catalog client (catalog_channel.cpp, catalog_client.cpp).
#pragma once

#include "health/http_transport.h"

namespace icewarden {

// True for a 409 whose IcebergErrorResponse type says "still in progress". It means that only
// for a request that carried an Idempotency-Key; without one, a 409 is the conflict it says,
// so callers check the key first.
bool IsRequestInProgress(const HttpResponse& response);

}  // namespace icewarden
