// TEMP stub, replaced by the metrics branch at merge: the server branch builds against the
// ServingMetrics interface (serving_metrics.h) without its implementation.
#include "engine/serving/serving_metrics.h"

namespace llmwb {

struct ServingMetrics::State {};

ServingMetrics::ServingMetrics(std::string) : state_(std::make_unique<State>()) {}
ServingMetrics::~ServingMetrics() = default;
void ServingMetrics::observe_step(const StepOutputs&, const Engine&) {}
void ServingMetrics::observe_aborted(RequestId) {}
std::string ServingMetrics::render_prometheus() const {
    return "";
}

} // namespace llmwb
