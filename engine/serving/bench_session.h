// One benchmark run as a steppable object: the workload runner behind `llmwb bench` and the
// app's Benchmark dock. It submits BenchRequests to an Engine (all at once or at their arrival
// times, under a concurrency cap, or in static batches), runs one engine step per advance() and
// records one row per request and one per step. advance() never sleeps: when nothing is due it
// says how long to wait, so that the GUI's worker thread keeps serving its event queue (Cancel,
// tuning) between steps. run_bench() is the blocking loop over it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/serving/bench_runner.h"
#include "engine/serving/bench_workload.h"
#include "engine/serving/engine.h"

namespace llmwb {

// One request of a run. Times are seconds from the run's start; -1: did not happen.
struct BenchRequestRow {
    int32_t index = 0;         // submission order (the workload's order)
    double arrival_s = 0;      // when it was submitted to the engine
    double first_token_s = -1; // its first (requested) output token was sampled
    double finish_s = -1;      // it finished (-1: cancelled or failed before)
    int32_t input_tokens = 0;  // prompt tokens as the workload gave them (no padding)
    int32_t output_tokens = 0; // requested output tokens generated (padded rows' extra: no)
    int32_t preemptions = 0;
    int32_t prefix_hit_tokens = 0; // prompt tokens served by the prefix cache
    std::string error;             // "" when it completed
};

// One engine step of a run (a step that scheduled nothing is not recorded).
struct BenchStepRow {
    double time_s = 0; // when the step's tokens were sampled, from the run's start
    double step_ms = 0;
    int32_t prefill_tokens = 0, decode_tokens = 0;
    int32_t running = 0, waiting = 0;              // requests after the step
    int32_t preempted = 0;                         // moved back to waiting before this step ran
    double kv_usage = 0;                           // fraction of KV blocks in use after the step
    int32_t draft_tokens = 0, accepted_tokens = 0; // speculative tokens verified this step
};

class BenchSession {
  public:
    // `engine` must outlive the session and have no requests of its own while it runs (its
    // figures would count them). Nothing is submitted before the first advance().
    BenchSession(Engine& engine, std::vector<BenchRequest> requests, BenchRunOptions options);
    ~BenchSession();
    BenchSession(const BenchSession&) = delete;
    BenchSession& operator=(const BenchSession&) = delete;

    // Submits what is due and runs one engine step. Returns the seconds to wait before the
    // next call (0: call again at once; > 0: nothing runs until the next arrival). Errors: a
    // request the engine rejects or a backend failure; the session is then done() and its
    // unfinished requests carry the error.
    Result<double> advance();
    // Aborts every unfinished request of the run in the engine (their rows keep what they got,
    // error = reason); done() afterwards. The figures cover what completed.
    void cancel(const std::string& reason);

    bool done() const;
    bool cancelled() const { return cancelled_; }
    int32_t total() const { return static_cast<int32_t>(requests_.size()); }
    int32_t completed() const { return done_; }
    double elapsed_s() const;
    // The outputs of the last step advance() ran (for live views and recorders).
    const StepOutputs& last_outputs() const { return so_; }

    // The figures of the run so far (final once done()): vLLM's, with the percentiles chosen
    // (e.g. {50, 90, 99}) for every latency metric, and llmwb's (KV, prefix cache, preemptions,
    // speculation).
    BenchResult result(const std::vector<double>& percentiles = {99}) const;
    const std::vector<BenchRequestRow>& request_rows() const { return rows_; }
    const std::vector<BenchStepRow>& step_rows() const { return steps_; }

  private:
    struct Track;
    Status submit(int32_t i, size_t pad_prompt_to, int32_t pad_output_to);
    void record(const StepOutputs& so);

    Engine& engine_;
    std::vector<BenchRequest> requests_;
    BenchRunOptions opt_;
    std::vector<double> arrivals_;
    std::vector<Track> track_;
    std::unordered_map<RequestId, int32_t> index_;
    std::vector<BenchRequestRow> rows_;
    std::vector<BenchStepRow> steps_;
    std::vector<double> itls_ms_;
    StepOutputs so_;
    EngineClock::time_point t0_{}, t_end_{};
    bool started_ = false, cancelled_ = false, failed_ = false;
    int32_t next_ = 0, done_ = 0, in_flight_ = 0;
    int64_t batch_sum_ = 0;
    // Engine counters at the start (the figures are differences).
    KvAccounting acc0_;
    int64_t hits0_ = 0, queries0_ = 0, preempt0_ = 0, steps0_ = 0;
    SpeculativeStats spec0_;
    int64_t spec_drafted_ = 0, spec_accepted_ = 0; // engine totals after the last step
};

} // namespace llmwb
