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

JobEnd job_end_from_name(std::string_view name) {
  for (JobEnd e : {JobEnd::kLength, JobEnd::kStopToken, JobEnd::kStopString, JobEnd::kCancelled}) {
    if (name == job_end_name(e)) return e;
  }
  return JobEnd::kFailed;
}

}  // namespace anchorage::server
