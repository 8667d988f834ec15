// ForwardBatch: the explicit metadata of one forward step over a varlen batch of sequences.
// Nothing about the batch is hidden state: the CpuTransformer reads K/V positions, block tables and
// the rows that need logits from here only. A sequence contributes a run of consecutive query
// tokens (a prefill chunk, or one decode token); the runs are concatenated in token order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/util/result.h"

namespace llmwb {

struct ForwardBatch {
    // Per token (n_tokens entries, sequences concatenated).
    std::vector<int32_t> token_ids;    // [n_tokens]
    std::vector<int32_t> positions;    // [n_tokens] RoPE position (== index in the sequence)
    std::vector<int64_t> slot_mapping; // [n_tokens] KV slot = block_id * block_size + offset

    // Per sequence (n_seqs entries).
    std::vector<int32_t> query_start;  // [n_seqs + 1] prefix sums into the token rows
    std::vector<int32_t> context_lens; // [n_seqs] tokens in KV after this step (incl. this step's)
    int32_t max_blocks_per_seq = 0;    // row stride of block_tables
    std::vector<int32_t> block_tables; // [n_seqs][max_blocks_per_seq] block ids, -1 = unused

    // Token rows whose logits are wanted, in output order (normally the last row of every
    // sequence; every row for perplexity). forward() writes logits[i] for logits_rows[i].
    std::vector<int32_t> logits_rows;

    enum class Logits { None, Last, All };

    int32_t n_tokens() const { return static_cast<int32_t>(token_ids.size()); }
    int32_t n_seqs() const {
        return query_start.empty() ? 0 : static_cast<int32_t>(query_start.size()) - 1;
    }
    int32_t query_len(int32_t seq) const { return query_start[seq + 1] - query_start[seq]; }
    const int32_t* block_table(int32_t seq) const {
        return block_tables.data() + static_cast<int64_t>(seq) * max_blocks_per_seq;
    }

    void clear();

    // Appends one sequence whose `tokens` occupy positions [first_position, first_position +
    // tokens.size()); the sequence's KV blocks are `blocks` (in order) of `block_size` slots.
    // Tokens before first_position must already be in the KV cache. Widens block_tables when the
    // sequence has more blocks than the previous ones (padding with -1).
    void add_sequence(std::span<const int32_t> tokens, int32_t first_position,
                      std::span<const int32_t> blocks, int32_t block_size, Logits logits);

    // Checks every internal invariant (lengths, prefix sums, positions inside the blocks, slots
    // matching the block tables, block ids < num_blocks, logits rows in range). Used by tests and
    // by callers that assemble batches by hand; forward() only asserts.
    Status validate(int32_t block_size, int32_t num_blocks) const;
};

} // namespace llmwb
