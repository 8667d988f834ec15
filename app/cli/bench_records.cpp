#include "app/cli/bench_records.h"

#include <algorithm>

namespace llmwb::cli {

namespace {

double seconds(EngineClock::duration d) {
    return std::chrono::duration<double>(d).count();
}

} // namespace

BenchRecorder::BenchRecorder(const std::vector<BenchRequest>& requests) {
    records_.resize(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
        records_[i].input_len = static_cast<int32_t>(requests[i].prompt.size());
        records_[i].wanted = std::max(1, requests[i].output_len);
    }
}

void BenchRecorder::on_step(const StepOutputs& so) {
    for (const RequestOutput& o : so.outputs) {
        if (o.id < 0 || static_cast<size_t>(o.id) >= records_.size()) {
            error_ = "an output of unknown request " + std::to_string(o.id);
            continue;
        }
        BenchRequestRecord& r = records_[static_cast<size_t>(o.id)];
        for (int32_t id : o.new_token_ids) {
            // A padded row of a static batch keeps decoding: its extra tokens are thrown away.
            if (static_cast<int32_t>(r.output_ids.size()) >= r.wanted)
                break;
            r.output_ids.push_back(id);
            r.token_times.push_back(so.time);
        }
        if (o.finished) {
            r.finished = true;
            r.ttft_s = o.metrics.ttft_ms / 1000.0;
            if (o.finish == FinishReason::Aborted)
                r.error = "aborted";
        }
    }
}

Status BenchRecorder::check() const {
    if (!error_.empty())
        return make_error("bench records: " + error_);
    for (size_t i = 0; i < records_.size(); ++i)
        if (!records_[i].finished)
            return make_error("bench records: request " + std::to_string(i) + " did not finish");
    return ok_status();
}

std::vector<double> BenchRecorder::itls_s(size_t i) const {
    const auto& t = records_[i].token_times;
    std::vector<double> out;
    for (size_t k = 1; k < t.size(); ++k)
        out.push_back(seconds(t[k] - t[k - 1]));
    return out;
}

} // namespace llmwb::cli
