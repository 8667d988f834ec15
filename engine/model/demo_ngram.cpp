#include "engine/model/demo_ngram.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>

#include "engine/model/demo_ngram_text.h"
#include "engine/model/demo_tokenizer.h"
#include "engine/tokenizer/tokenizer.h"

namespace llmwb {

namespace {

int32_t special_id(const TokenizerData& d, const char* content) {
    for (const auto& a : d.added_tokens)
        if (a.content == content)
            return a.id;
    return -1;
}

} // namespace

const DemoBigramModel& DemoBigramModel::instance() {
    static const DemoBigramModel m;
    return m;
}

DemoBigramModel::DemoBigramModel() {
    const TokenizerFiles tf = make_demo_tokenizer();
    auto tok = Tokenizer::create(tf.data);
    if (!tok)
        return; // an empty table (vocab_size() 0): write_demo_model reports it
    vocab_ = int32_t(tf.data.tokens.size());
    for (const auto& a : tf.data.added_tokens)
        vocab_ = std::max(vocab_, a.id + 1);
    const int32_t im_start = special_id(tf.data, "<|im_start|>");
    const int32_t im_end = special_id(tf.data, "<|im_end|>");

    std::string_view text = kDemoNgramCorpus;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        if (line.empty())
            continue;
        std::string role = "assistant";
        if (line.substr(0, 3) == "U: ") {
            role = "user";
            line.remove_prefix(3);
        }
        std::vector<int32_t> ids{im_start};
        for (int32_t id : tok.value()->encode(role + "\n" + std::string(line), false))
            ids.push_back(id);
        ids.push_back(im_end);
        turns_.push_back(std::move(ids));
        header_.push_back(1 + tok.value()->encode(role, false).size());
    }

    std::vector<std::map<int32_t, int64_t>> pairs(static_cast<size_t>(vocab_));
    std::map<int32_t, int64_t> uni;
    for (size_t k = 0; k < turns_.size(); ++k) {
        const auto& t = turns_[k];
        for (size_t i = header_[k]; i + 1 < t.size(); ++i) { // from the header's "\n" on
            ++pairs[size_t(t[i])][t[i + 1]];
            ++uni[t[i + 1]];
        }
    }
    auto make_row = [](const std::map<int32_t, int64_t>& m) {
        Row r;
        int64_t best_n = 0;
        for (const auto& [id, n] : m) { // ascending id: the first of equal counts wins
            r.next.emplace_back(id, n);
            r.total += n;
            if (n > best_n) {
                best_n = n;
                r.best = id;
            }
        }
        return r;
    };
    rows_.resize(size_t(vocab_));
    for (int32_t v = 0; v < vocab_; ++v)
        rows_[size_t(v)] = make_row(pairs[size_t(v)]);
    unigram_ = make_row(uni);
}

bool DemoBigramModel::seen_as_context(int32_t prev) const {
    return prev >= 0 && prev < vocab_ && rows_[size_t(prev)].total > 0;
}

int32_t DemoBigramModel::most_likely_next(int32_t prev) const {
    return seen_as_context(prev) ? rows_[size_t(prev)].best : unigram_.best;
}

std::vector<float> DemoBigramModel::scores(int32_t prev) const {
    const Row& r = seen_as_context(prev) ? rows_[size_t(prev)] : unigram_;
    std::vector<float> s(size_t(vocab_), kUnseenLogProb);
    for (const auto& [id, n] : r.next)
        s[size_t(id)] = float(std::log(double(n) / double(r.total)));
    if (r.best >= 0)
        s[size_t(r.best)] += kWinnerBonus;
    return s;
}

std::vector<int32_t> DemoBigramModel::greedy(int32_t last_prompt_token, int n) const {
    std::vector<int32_t> out;
    int32_t prev = last_prompt_token;
    for (int i = 0; i < n; ++i) {
        prev = most_likely_next(prev);
        out.push_back(prev);
    }
    return out;
}

double DemoBigramModel::min_margin() const {
    if (unigram_.best < 0)
        return 0; // no table
    double margin = 1e30;
    for (int32_t v = 0; v <= vocab_; ++v) { // v == vocab_: the unigram row
        const std::vector<float> s = scores(v < vocab_ ? v : -1);
        const int32_t best = most_likely_next(v < vocab_ ? v : -1);
        for (int32_t u = 0; u < vocab_; ++u)
            if (u != best)
                margin = std::min(margin, double(s[size_t(best)]) - double(s[size_t(u)]));
    }
    return margin;
}

int64_t DemoBigramModel::count(int32_t a, int32_t b) const {
    if (a < 0 || a >= vocab_)
        return 0;
    for (const auto& [id, n] : rows_[size_t(a)].next)
        if (id == b)
            return n;
    return 0;
}

} // namespace llmwb
