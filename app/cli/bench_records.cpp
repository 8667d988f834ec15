#include "app/cli/bench_records.h"

#include <algorithm>
#include <cmath>

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

double BenchRecorder::max_output_tokens_per_s() const {
    EngineClock::time_point start = EngineClock::time_point::max();
    for (const BenchRequestRecord& r : records_)
        if (!r.token_times.empty())
            start = std::min(start, r.token_times.front() -
                                        std::chrono::duration_cast<EngineClock::duration>(
                                            std::chrono::duration<double>(r.ttft_s)));
    std::vector<double> per_second;
    for (const BenchRequestRecord& r : records_)
        for (EngineClock::time_point t : r.token_times) {
            const auto s = static_cast<size_t>(std::max(0.0, std::floor(seconds(t - start))));
            if (per_second.size() <= s)
                per_second.resize(s + 1, 0);
            per_second[s] += 1;
        }
    return per_second.empty() ? 0 : *std::max_element(per_second.begin(), per_second.end());
}

int32_t BenchRecorder::max_concurrent_requests() const {
    std::vector<std::pair<double, double>> spans; // [arrival, last token] in seconds
    EngineClock::time_point start = EngineClock::time_point::max();
    for (const BenchRequestRecord& r : records_)
        if (!r.token_times.empty())
            start = std::min(start, r.token_times.front());
    if (start == EngineClock::time_point::max())
        return 0;
    double origin = 0;
    for (const BenchRequestRecord& r : records_)
        if (!r.token_times.empty()) {
            const double first = seconds(r.token_times.front() - start);
            spans.emplace_back(first - r.ttft_s, seconds(r.token_times.back() - start));
            origin = std::min(origin, first - r.ttft_s);
        }
    std::vector<int32_t> per_second;
    for (const auto& [a, b] : spans) {
        const auto s0 = static_cast<size_t>(std::floor(a - origin));
        const auto s1 = static_cast<size_t>(std::floor(b - origin));
        if (per_second.size() <= s1)
            per_second.resize(s1 + 1, 0);
        for (size_t s = s0; s <= s1; ++s)
            ++per_second[s];
    }
    return per_second.empty() ? 0 : *std::max_element(per_second.begin(), per_second.end());
}

} // namespace llmwb::cli
