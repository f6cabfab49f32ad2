#include "server/generation_job.h"

namespace anchorage::server {

const char* job_end_name(JobEnd end) {
  switch (end) {
    case JobEnd::kLength:
      return "length";
    case JobEnd::kStopToken:
      return "stop_token";
    case JobEnd::kStopString:
      return "stop_string";
    case JobEnd::kCancelled:
      return "cancelled";
    case JobEnd::kFailed:
      break;
  }
  return "failed";
}

}  // namespace anchorage::server
