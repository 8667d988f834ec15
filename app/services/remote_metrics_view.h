// RemoteMetricsView: one scrape of a remote endpoint's /metrics as the Engine dock draws it (a
// copyable value from RemoteMetricsPoller's thread to the GUI). A figure the server does not
// expose is nullopt (shown as unavailable), never 0.
#pragma once

#include <QMetaType>
#include <QString>
#include <optional>

namespace llmwb {

struct RemoteMetricsView {
    qint64 timeMs = 0;  // when the scrape was taken (steady clock, from the poller's start)
    QString endpoint;   // the endpoint's name
    QString serverKind; // "vllm" | "llama.cpp" | "" (neither family found)
    QString error;      // "" = the scrape worked
    std::optional<double> running, waiting;
    std::optional<double> kvUsage; // fraction 0..1
    std::optional<double> promptTokensPerSecond, generationTokensPerSecond;
    std::optional<double> ttftMeanMs; // over the requests that got their first token meanwhile
    // Rates and TTFT come from counters and a histogram: a scrape may have none yet (the first
    // one, or no request finished a first token meanwhile) while the server exposes them.
    bool promptExposed = false, generationExposed = false, ttftExposed = false;
    bool ok() const { return error.isEmpty(); }
};

} // namespace llmwb

Q_DECLARE_METATYPE(llmwb::RemoteMetricsView)
