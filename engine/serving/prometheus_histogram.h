// A Prometheus histogram with a fixed number of bucket bounds held inline (no allocation when it
// observes or is copied), so that the engine thread can observe into it under a short lock and a
// reader can copy it out whole. Buckets are "less than or equal" bounds as in Prometheus; the
// exposition writes them cumulatively with a final le="+Inf" bucket equal to the count.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace llmwb::metrics {

inline constexpr int32_t kMaxHistogramBounds = 32;

class Histogram {
  public:
    Histogram() = default;
    // Ascending bounds; beyond kMaxHistogramBounds the rest are dropped (their observations land
    // in +Inf). Clears the observations.
    explicit Histogram(std::span<const double> bounds) { set_bounds(bounds); }
    void set_bounds(std::span<const double> bounds) {
        *this = Histogram();
        for (double b : bounds) {
            if (n_ == kMaxHistogramBounds)
                break;
            if (n_ > 0 && !(b > bounds_[n_ - 1]))
                continue; // keep them strictly ascending
            bounds_[n_++] = b;
        }
    }

    // A NaN is ignored (it has no bucket).
    void observe(double v) {
        if (std::isnan(v))
            return;
        const auto it = std::lower_bound(bounds_.begin(), bounds_.begin() + n_, v); // v <= bound
        ++counts_[static_cast<size_t>(it - bounds_.begin())];
        ++count_;
        sum_ += v;
    }

    int32_t num_bounds() const { return n_; }
    double bound(int32_t i) const { return bounds_[static_cast<size_t>(i)]; }
    // Observations <= bound(i); i == num_bounds(): all of them (the +Inf bucket).
    uint64_t cumulative(int32_t i) const {
        uint64_t c = 0;
        for (int32_t j = 0; j <= i && j <= n_; ++j)
            c += counts_[static_cast<size_t>(j)];
        return c;
    }
    // Observations in bucket i alone (bound(i-1) < v <= bound(i)); i == num_bounds(): above all.
    uint64_t in_bucket(int32_t i) const { return counts_[static_cast<size_t>(i)]; }
    uint64_t count() const { return count_; }
    double sum() const { return sum_; }

  private:
    std::array<double, kMaxHistogramBounds> bounds_{};
    std::array<uint64_t, kMaxHistogramBounds + 1> counts_{}; // per bucket; [n_]: above every bound
    int32_t n_ = 0;
    uint64_t count_ = 0;
    double sum_ = 0;
};

// vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up to max_value (inclusive).
inline std::vector<double> buckets_1_2_5(double max_value) {
    std::vector<double> out;
    for (double scale = 1; out.size() < static_cast<size_t>(kMaxHistogramBounds); scale *= 10)
        for (double m : {1.0, 2.0, 5.0}) {
            if (m * scale > max_value)
                return out;
            out.push_back(m * scale);
        }
    return out;
}

} // namespace llmwb::metrics
