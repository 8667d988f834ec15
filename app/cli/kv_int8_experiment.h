// Measurement only (hidden option --kv-int8-experiment; scripts/kv-fidelity.sh): int8 KV-cache
// variants simulated on an f32 pool, to compare their fidelity with the built-in int8 (one scale
// per token and KV head). Fidelity depends only on the values attention reads, so each variant
// quantizes and dequantizes the f32 values in place (q = rne(x * 127 / amax), x' = q * amax /
// 127, as kv_quantize_int8) through CpuExecutor's after-forward hook, when a block becomes full:
//   tokenhead  one scale per token and KV head for K and V (the built-in int8's grouping)
//   token      one scale per token over all KV heads for K and V (per-token only)
//   kchannel   keys: one scale per channel (KV head x dimension) over the block's tokens (KIVI /
//              KVQuant: key outliers are per channel); values: one per token and KV head
// Until its block is full a token's K/V stay in f32 (kchannel needs the whole block; the others
// follow the same rule so that the three differ only in their grouping). Run the model in
// forwards of one block (aligned to blocks) so that later tokens see the quantized values.
#pragma once

#include "app/cli/cli_options.h"
#include "engine/runtime/cpu_executor.h"

namespace llmwb::cli {

const char* kv_int8_experiment_name(KvInt8Experiment e); // "off", "tokenhead", "token", "kchannel"

// Quantizes-dequantizes in place the blocks of `kv` (f32, asserted) that `batch` filled: every
// block whose last slot the batch wrote.
void apply_kv_int8_experiment(KvInt8Experiment e, KvCacheStorage& kv, const ForwardBatch& batch);

// Installs the hook on `exec` (a CPU executor with an f32 KV type); Off removes it. Errors: not
// the CPU, or a KV type other than f32.
Status install_kv_int8_experiment(ModelExecutor& exec, KvInt8Experiment e);

} // namespace llmwb::cli
