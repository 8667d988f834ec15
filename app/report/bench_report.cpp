#include "app/report/bench_report.h"

namespace llmwb {

const char* bench_run_status_name(BenchRunStatus s) {
    switch (s) {
    case BenchRunStatus::Completed:
        return "completed";
    case BenchRunStatus::Cancelled:
        return "cancelled";
    case BenchRunStatus::Failed:
        return "failed";
    }
    return "completed";
}

bool parse_bench_run_status(std::string_view name, BenchRunStatus* out) {
    for (BenchRunStatus s :
         {BenchRunStatus::Completed, BenchRunStatus::Cancelled, BenchRunStatus::Failed}) {
        if (name == bench_run_status_name(s)) {
            *out = s;
            return true;
        }
    }
    return false;
}

} // namespace llmwb
