#include "engine/runtime/forward_batch.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace llmwb {

void ForwardBatch::clear() {
    token_ids.clear();
    positions.clear();
    slot_mapping.clear();
    query_start.clear();
    context_lens.clear();
    block_tables.clear();
    max_blocks_per_seq = 0;
    logits_rows.clear();
}

void ForwardBatch::add_sequence(std::span<const int32_t> tokens, int32_t first_position,
                                std::span<const int32_t> blocks, int32_t block_size,
                                Logits logits) {
    assert(block_size > 0);
    const auto n = static_cast<int32_t>(tokens.size());
    assert(static_cast<int64_t>(first_position) + n <=
           static_cast<int64_t>(blocks.size()) * block_size);
    if (query_start.empty())
        query_start.push_back(0);
    const int32_t row0 = n_tokens();
    for (int32_t i = 0; i < n; ++i) {
        const int32_t pos = first_position + i;
        token_ids.push_back(tokens[i]);
        positions.push_back(pos);
        slot_mapping.push_back(static_cast<int64_t>(blocks[pos / block_size]) * block_size +
                               pos % block_size);
    }
    query_start.push_back(row0 + n);
    context_lens.push_back(first_position + n);

    // Widen the table when this sequence needs more columns than the previous ones.
    const auto need = static_cast<int32_t>(blocks.size());
    const int32_t seqs_before = n_seqs() - 1;
    if (need > max_blocks_per_seq) {
        std::vector<int32_t> wide(static_cast<size_t>(seqs_before) * need, -1);
        for (int32_t s = 0; s < seqs_before; ++s)
            std::copy_n(block_tables.begin() + static_cast<int64_t>(s) * max_blocks_per_seq,
                        max_blocks_per_seq, wide.begin() + static_cast<int64_t>(s) * need);
        block_tables = std::move(wide);
        max_blocks_per_seq = need;
    }
    const size_t base = block_tables.size();
    block_tables.resize(base + max_blocks_per_seq, -1);
    std::copy(blocks.begin(), blocks.end(), block_tables.begin() + static_cast<int64_t>(base));

    if (logits == Logits::Last && n > 0) {
        logits_rows.push_back(row0 + n - 1);
    } else if (logits == Logits::All) {
        for (int32_t i = 0; i < n; ++i)
            logits_rows.push_back(row0 + i);
    }
}

Status ForwardBatch::validate(int32_t block_size, int32_t num_blocks) const {
    auto fail = [](std::string m) -> Status { return make_error("ForwardBatch: " + m); };
    const int32_t nt = n_tokens();
    if (positions.size() != token_ids.size() || slot_mapping.size() != token_ids.size())
        return fail("token_ids, positions and slot_mapping differ in length");
    if (query_start.empty()) {
        if (nt != 0)
            return fail("tokens without sequences");
        return ok_status();
    }
    const int32_t ns = n_seqs();
    if (query_start.front() != 0 || query_start.back() != nt)
        return fail("query_start must run from 0 to n_tokens");
    if (static_cast<int32_t>(context_lens.size()) != ns)
        return fail("context_lens has " + std::to_string(context_lens.size()) + " entries for " +
                    std::to_string(ns) + " sequences");
    if (max_blocks_per_seq < 0 ||
        block_tables.size() != static_cast<size_t>(ns) * static_cast<size_t>(max_blocks_per_seq))
        return fail("block_tables is not [n_seqs][max_blocks_per_seq]");
    for (int32_t s = 0; s < ns; ++s) {
        const int32_t q = query_start[s + 1] - query_start[s];
        if (q < 0)
            return fail("query_start is not non-decreasing");
        const int32_t ctx = context_lens[s];
        if (ctx < q)
            return fail("sequence " + std::to_string(s) + ": context_len < query tokens");
        if (static_cast<int64_t>(ctx) > static_cast<int64_t>(max_blocks_per_seq) * block_size)
            return fail("sequence " + std::to_string(s) + ": context exceeds its block table");
        const int32_t* table = block_table(s);
        const int32_t used = (ctx + block_size - 1) / block_size;
        for (int32_t b = 0; b < used; ++b)
            if (table[b] < 0 || table[b] >= num_blocks)
                return fail("sequence " + std::to_string(s) + ": block id " +
                            std::to_string(table[b]) + " out of range");
        for (int32_t i = 0; i < q; ++i) {
            const int32_t row = query_start[s] + i;
            const int32_t pos = ctx - q + i;
            if (positions[row] != pos)
                return fail("row " + std::to_string(row) + ": position " +
                            std::to_string(positions[row]) + ", expected " + std::to_string(pos));
            const int64_t slot =
                static_cast<int64_t>(table[pos / block_size]) * block_size + pos % block_size;
            if (slot_mapping[row] != slot)
                return fail("row " + std::to_string(row) + ": slot does not match block table");
        }
    }
    for (int32_t r : logits_rows)
        if (r < 0 || r >= nt)
            return fail("logits row " + std::to_string(r) + " out of range");
    return ok_status();
}

} // namespace llmwb
