#include "app/remote/remote_engine_metrics.h"

#include "app/remote/openai_client.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace llmwb::remote {

namespace {

struct Sum {
    double total = 0;
    int n = 0;
};

class View {
  public:
    View(const PromScrape& s, const std::string& model) : s_(s), model_(model) {}

    bool counts(const PromSample& x) const {
        if (model_.empty())
            return true;
        const std::string* m = x.label("model_name");
        return !m || *m == model_;
    }
    // The sum of the finite samples named `name`; nullopt when there is none.
    std::optional<Sum> sum(const std::string& name) const {
        Sum out;
        for (const PromSample& x : s_.samples)
            if (x.name == name && counts(x) && std::isfinite(x.value)) {
                out.total += x.value;
                ++out.n;
            }
        if (out.n == 0)
            return std::nullopt;
        return out;
    }
    std::optional<double> total(const std::string& name) const {
        auto s = sum(name);
        return s ? std::optional<double>(s->total) : std::nullopt;
    }
    std::optional<double> mean(const std::string& name) const {
        auto s = sum(name);
        return s ? std::optional<double>(s->total / s->n) : std::nullopt;
    }
    // The first name that has samples.
    std::optional<double> total_of(std::initializer_list<const char*> names) const {
        for (const char* n : names)
            if (auto v = total(n))
                return v;
        return std::nullopt;
    }
    bool has_prefix(const std::string& prefix) const {
        for (const PromSample& x : s_.samples)
            if (x.name.rfind(prefix, 0) == 0)
                return true;
        return false;
    }
    // The cumulative buckets of histogram `name` (summed over the other labels).
    HistogramBuckets buckets(const std::string& name) const {
        std::map<double, double> by_le;
        const std::string bucket = name + "_bucket";
        for (const PromSample& x : s_.samples) {
            if (x.name != bucket || !counts(x) || !std::isfinite(x.value))
                continue;
            const std::string* le = x.label("le");
            if (!le)
                continue;
            double bound = 0;
            if (*le == "+Inf" || *le == "Inf" || *le == "inf")
                bound = INFINITY;
            else {
                char* end = nullptr;
                bound = std::strtod(le->c_str(), &end);
                if (end == le->c_str() || *end != '\0' || std::isnan(bound))
                    continue;
            }
            by_le[bound] += x.value;
        }
        return HistogramBuckets(by_le.begin(), by_le.end());
    }

  private:
    const PromScrape& s_;
    const std::string& model_;
};

std::optional<double> finite(std::optional<double> v) {
    return v && std::isfinite(*v) ? v : std::nullopt;
}

} // namespace

std::optional<double> histogram_quantile(double q, const HistogramBuckets& b) {
    if (b.empty() || !std::isinf(b.back().first))
        return std::nullopt;
    const double count = b.back().second;
    if (!(count > 0))
        return std::nullopt;
    const double rank = std::clamp(q, 0.0, 1.0) * count;
    double lower = 0, below = 0;
    for (size_t i = 0; i < b.size(); ++i) {
        const auto [bound, cum] = b[i];
        if (cum >= rank) {
            if (std::isinf(bound)) // the rank is past the last finite bound
                return i > 0 ? std::optional<double>(b[i - 1].first) : std::nullopt;
            const double in_bucket = cum - below;
            if (in_bucket <= 0)
                return bound;
            return lower + (bound - lower) * (rank - below) / in_bucket;
        }
        lower = bound;
        below = cum;
    }
    return std::nullopt;
}

RemoteMetricsSample RemoteEngineMetrics::update(const PromScrape& scrape, double time_s) {
    View v(scrape, model_);
    RemoteMetricsSample s;
    s.time_s = time_s;
    if (v.has_prefix("vllm:")) {
        s.server_kind = "vllm";
        s.running = v.total("vllm:num_requests_running");
        s.waiting = v.total("vllm:num_requests_waiting");
        s.kv_usage = v.mean("vllm:kv_cache_usage_perc");
        if (!s.kv_usage)
            s.kv_usage = v.mean("vllm:gpu_cache_usage_perc");
        s.prompt_tokens_total = v.total("vllm:prompt_tokens_total");
        s.generation_tokens_total = v.total("vllm:generation_tokens_total");
        s.preemptions_total = v.total("vllm:num_preemptions_total");
        s.prefix_cache_queries_total = v.total("vllm:prefix_cache_queries_total");
        s.prefix_cache_hits_total = v.total("vllm:prefix_cache_hits_total");
        const auto& q = s.prefix_cache_queries_total;
        const auto& h = s.prefix_cache_hits_total;
        if (q && h && *q > 0)
            s.prefix_cache_hit_rate = *h / *q;
        const std::string ttft = "vllm:time_to_first_token_seconds";
        HistogramBuckets buckets = v.buckets(ttft);
        auto sum = v.total(ttft + "_sum");
        auto count = v.total(ttft + "_count");
        if (sum && count) {
            if (*count > 0)
                s.ttft_mean_all_s = *sum / *count;
            if (have_prev_ttft_ && *count >= prev_ttft_count_) {
                const double dc = *count - prev_ttft_count_;
                if (dc > 0) {
                    s.ttft_mean_s = (*sum - prev_ttft_sum_) / dc;
                    HistogramBuckets diff = buckets;
                    bool same = prev_ttft_.size() == diff.size();
                    for (size_t i = 0; same && i < diff.size(); ++i) {
                        same = prev_ttft_[i].first == diff[i].first;
                        diff[i].second = std::max(0.0, diff[i].second - prev_ttft_[i].second);
                    }
                    if (same) {
                        s.ttft_p50_s = histogram_quantile(0.5, diff);
                        s.ttft_p90_s = histogram_quantile(0.9, diff);
                        s.ttft_p99_s = histogram_quantile(0.99, diff);
                    }
                }
            }
            prev_ttft_ = std::move(buckets);
            prev_ttft_sum_ = *sum;
            prev_ttft_count_ = *count;
            have_prev_ttft_ = true;
        }
    } else if (v.has_prefix("llamacpp:")) {
        s.server_kind = "llama.cpp";
        s.running = v.total("llamacpp:requests_processing");
        s.waiting = v.total("llamacpp:requests_deferred");
        s.kv_usage = v.mean("llamacpp:kv_cache_usage_ratio");
        s.prompt_tokens_total = v.total("llamacpp:prompt_tokens_total");
        s.generation_tokens_total = v.total("llamacpp:tokens_predicted_total");
    }
    s.kv_usage = finite(s.kv_usage);
    if (last_) {
        const double dt = time_s - last_->time_s;
        auto rate = [&](const std::optional<double>& now,
                        const std::optional<double>& before) -> std::optional<double> {
            if (!now || !before || !(dt > 0) || *now < *before)
                return std::nullopt;
            return (*now - *before) / dt;
        };
        s.prompt_throughput = rate(s.prompt_tokens_total, last_->prompt_tokens_total);
        s.generation_throughput = rate(s.generation_tokens_total, last_->generation_tokens_total);
    }
    last_ = s;
    return s;
}

Result<RemoteMetricsSample> scrape_metrics(OpenAiClient& client, RemoteEngineMetrics& metrics,
                                           double time_s) {
    auto text = client.fetch_metrics();
    if (!text)
        return text.error();
    auto scrape = parse_prometheus_text(*text);
    if (!scrape)
        return make_error(client.url().text() + "/metrics: " + scrape.message());
    return metrics.update(*scrape, time_s);
}

} // namespace llmwb::remote
