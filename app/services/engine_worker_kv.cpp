// The engine worker's KV-cache element type (EngineTuning::kvCacheDtype): resolved against the
// backend ("auto" is the backend's own), fp8 scales calibrated on the built-in text, applied
// before a model's first engine and switched live through Engine::set_kv_dtype (running
// requests are preempted and recomputed in the new type; their streamed text stays).
#include <QLocale>
#include <algorithm>

#include "app/services/engine_worker_private.h"
#include "engine/runtime/kv_calibration.h"

namespace llmwb {

namespace {

QString name(KvDtype t) {
    return QString::fromLatin1(kv_dtype_name(t));
}

} // namespace

KvDtype EngineWorker::wantedKvDtype(const Model& m) const {
    const auto t = parse_kv_dtype(tuning_.kvCacheDtype.toStdString());
    return t ? *t : m.autoKv;
}

KvScales EngineWorker::kvScalesFor(Model& m, KvDtype t) {
    kvCalibration_.clear();
    if (!kv_dtype_is_fp8(t))
        return {};
    Result<KvScales> s = calibrate_kv_scales(*m.backend.executor, *m.tokenizer, t);
    if (!s || s->k.empty() || s->v.empty()) {
        kvCalibration_ = tr("fp8 scales: calibration failed (%1); every layer uses the scale 1.0.")
                             .arg(s ? tr("no layers") : q(s.message()));
        return {};
    }
    const QLocale loc;
    const auto [k0, k1] = std::minmax_element(s->k.begin(), s->k.end());
    const auto [v0, v1] = std::minmax_element(s->v.begin(), s->v.end());
    kvCalibration_ = tr("fp8 scales calibrated per layer on a built-in text: K %1 to %2, V %3 to "
                        "%4 (stored value = x / scale).")
                         .arg(loc.toString(*k0, 'g', 3), loc.toString(*k1, 'g', 3),
                              loc.toString(*v0, 'g', 3), loc.toString(*v1, 'g', 3));
    return std::move(*s);
}

void EngineWorker::applyKvDtypeAtLoad(Model& m) {
    ModelExecutor& exec = *m.backend.executor;
    m.autoKv = exec.kv_dtype();
    kvSwitch_ = {};
    kvDtypeError_.clear();
    refusedKvDtype_.clear();
    kvCalibration_.clear();
    const KvDtype want = wantedKvDtype(m);
    if (want == m.autoKv)
        return;
    if (!exec.supports_kv_dtype(want)) {
        kvDtypeError_ = tr("The %1 backend cannot store the KV cache as %2; it uses %3.")
                            .arg(q(device_kind_name(exec.kind())), name(want), name(m.autoKv));
        return;
    }
    const KvScales scales = kvScalesFor(m, want);
    if (Status st = exec.set_kv_dtype(want, scales); !st)
        kvDtypeError_ = tr("The KV cache cannot be stored as %1 (%2 is used): %3")
                            .arg(name(want), name(exec.kv_dtype()), q(st.message()));
}

bool EngineWorker::applyKvDtype(const QString& previous) {
    Engine& e = *model_->serving;
    ModelExecutor& exec = *model_->backend.executor;
    const KvDtype want = wantedKvDtype(*model_);
    const KvDtype from = e.pending_kv_dtype();
    if (want == from) {
        kvDtypeError_.clear();
        refusedKvDtype_.clear();
        return false;
    }
    auto refuse = [&](const QString& why) {
        kvDtypeError_ = tr("The KV cache stays %1: %2").arg(name(from), why);
        refusedKvDtype_ = tuning_.kvCacheDtype;
        tuning_.kvCacheDtype = previous;
        return false;
    };
    if (!exec.supports_kv_dtype(want))
        return refuse(tr("the %1 backend cannot store it as %2.")
                          .arg(q(device_kind_name(exec.kind())), name(want)));
    const QString calibration = kvCalibration_;
    const KvScales scales = kvScalesFor(*model_, want);
    const MemoryPlan before = e.memory_plan();
    if (Status st = e.set_kv_dtype(want, scales); !st) {
        kvCalibration_ = calibration;
        return refuse(q(st.message()));
    }
    kvDtypeError_.clear();
    refusedKvDtype_.clear();
    kvSwitch_ = {true, exec.kv_dtype(), before.num_blocks, before.block_size,
                 before.bytes_per_block};
    return true;
}

} // namespace llmwb
