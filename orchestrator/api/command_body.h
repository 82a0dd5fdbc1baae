// What every route of the API shares: the 400 and 500 answers, reading a JSON object body
// with only known fields, and mapping a refusal's Status to its HTTP status and error code.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/api/api.h"
#include "state/status.h"

namespace icewarden {

// 400 bad_request with `message`.
ApiResponse BadRequestResponse(const std::string& message);
// 500 store_error: "state store failed: " and the store's Status.
ApiResponse StoreErrorResponse(const Status& status);
// The body as an object holding only `allowed` fields; kInvalidArgument saying what is wrong.
Result<nlohmann::json> ReadBody(const std::string& body, const std::vector<std::string>& allowed);
// A string field: absent (or null) leaves *out alone; anything but a string is an error.
Status StringField(const nlohmann::json& doc, const std::string& key, std::string* out);
// 400 invalid argument, 403, 404, 409 (failed precondition, conflict), 503, else 500.
int HttpStatusOf(const Status& s);
// bad_request, forbidden, not_found, refused, conflict, unavailable, store_error.
const char* ErrorCodeOf(const Status& s);

}  // namespace icewarden
