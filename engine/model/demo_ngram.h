// The language model behind the demo model file: a bigram (n = 2) model over the demo
// tokenizer's ids, counted from the project's own text (demo_ngram_text.h). demo_model.cpp
// encodes its score table into transformer weights; the tests check that the engine's greedy
// output equals most_likely_next() applied step by step.
//
// Counting. Every line of the text is one ChatML turn, tokenized as
//   <|im_start|> encode(role + "\n" + message) <|im_end|>
// (role "user" for lines starting with "U: ", else "assistant"), and every adjacent pair
// (a, b) from the "\n" that ends the role header to the <|im_end|> is counted: ("\n", first
// token of the message), ..., (last token, <|im_end|>). Pairs inside the header are not
// counted (so the role's pieces never follow message words), no pair crosses two turns and
// nothing is counted after <|im_end|>. The unigram count of b is the number of pairs whose
// second token is b.
//
// Scores of the next token after `prev` (the logits the model file reproduces):
//   - prev was seen as the first token of a pair (bigram):  log(count(prev, b) / count(prev, *))
//   - otherwise (back-off to the unigram):                 log(count(b) / number of pairs)
//   - a token with no count in the row used:               kUnseenLogProb
//   - the row's most likely token — the highest count, ties broken by the LOWEST id — gets
//     + kWinnerBonus on top, so that the argmax of the scores is unique, is that token, and
//     stays it after float rounding of the weights (min_margin() says by how much).
// The scores are log-probabilities up to these two adjustments (softmax renormalises them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace llmwb {

class DemoBigramModel {
  public:
    static constexpr float kUnseenLogProb = -30.0f;
    static constexpr float kWinnerBonus = 0.01f;

    // Counted once per process from the built-in text and the demo tokenizer.
    static const DemoBigramModel& instance();

    int32_t vocab_size() const { return vocab_; }
    // The most likely next token after prev (see above; the back-off applies).
    int32_t most_likely_next(int32_t prev) const;
    // The scores of every token id after prev: vocab_size() values.
    std::vector<float> scores(int32_t prev) const;
    // The greedy continuation of a prompt: n tokens, each most_likely_next() of the one before.
    std::vector<int32_t> greedy(int32_t last_prompt_token, int n) const;
    // The smallest gap, over every row, between the best score and the second best.
    double min_margin() const;
    // The counted turns (token ids), for the tests.
    const std::vector<std::vector<int32_t>>& turns() const { return turns_; }
    int64_t count(int32_t a, int32_t b) const;
    bool seen_as_context(int32_t prev) const;

  private:
    DemoBigramModel();
    struct Row {
        std::vector<std::pair<int32_t, int64_t>> next; // (id, count), by id
        int64_t total = 0;
        int32_t best = -1;
    };
    int32_t vocab_ = 0;
    std::vector<Row> rows_; // [vocab]
    Row unigram_;
    std::vector<std::vector<int32_t>> turns_;
    std::vector<std::size_t> header_; // per turn: tokens of "<|im_start|>role" before the "\n"
};

} // namespace llmwb
