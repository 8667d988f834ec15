// The English text the demo tokenizer's merges are learned from, together with the demo model's
// sentences (demo_ngram_text.h); both written for this project.
#pragma once

namespace llmwb {

inline constexpr const char* kDemoTokenizerCorpus = R"TEXT(
The workbench is a small place where you can watch a language model think. You type a message,
the model reads it as a list of numbers, and then it writes an answer one token at a time. Each
token is a short piece of text: a whole word, a part of a word, a space followed by a few letters,
or a single byte when nothing better fits. The tokenizer decides how the text is cut into pieces,
and the model only ever sees those pieces.

This demo model is a bigram model of a few hundred sentences about the workbench. It was not
trained like a real language model, so the sentences it writes are silly. It is here so that the
application and the command line tools work on a fresh machine without any downloads. When you
want real answers, open a model file of your own: a GGUF file, or a folder with a config file,
safetensors weights and the tokenizer files.

Inside the engine, every step follows the same plan. The scheduler chooses which requests run and
how many tokens each of them may process. The model runner builds one batch from those tokens and
calls the forward pass. The sampler turns the logits of the last position into the next token,
and the engine appends it, checks the stop conditions and records the time that the step took.
Then the next step begins, and the story repeats until every request has finished.

Memory is shared in blocks. Each block holds the keys and values of sixteen tokens for every
layer of the model. When two requests start with the same prompt, they can share the blocks of
that prompt, and the second request does not need to compute them again. When the pool runs out
of free blocks, the newest request is paused and its blocks are returned to the pool, so that the
older requests can finish first. Nothing that was already shown to the user is ever lost.

Numbers matter as well. A model with half a billion parameters stored in sixteen bit floats needs
about one gigabyte of memory, and every generated token reads all of it once. That is why the
speed of decoding is limited by the bandwidth of the memory, and why smaller formats with eight or
four bits per weight make the model faster. The benchmark reports the tokens per second and the
fraction of the measured bandwidth that the engine reaches on this machine.

Here are a few more words so that the tokenizer learns common pieces of English: the, and, of, to,
in, is, that, it, for, with, as, was, on, be, at, by, this, have, from, or, one, had, not, but,
what, all, were, when, we, there, can, an, your, which, their, said, if, do, will, each, about,
how, up, out, them, then, she, many, some, so, these, would, other, into, has, more, her, two,
like, him, see, time, could, no, make, than, first, been, its, who, now, people, my, made, over,
did, down, only, way, find, use, may, water, long, little, very, after, words, called, just,
where, most, know, get, through, back, much, before, go, good, new, write, our, used, me, man,
too, any, day, same, right, look, think, also, around, another, came, come, work, three, word.
Hello! How are you today? I am fine, thank you. What is your name? My name is Workbench.
Count with me: 0 1 2 3 4 5 6 7 8 9 10 11 12 100 2024 3.14 42.
)TEXT";

} // namespace llmwb
