// The text the demo model's n-gram table is counted from (engine/model/demo_ngram.h), written
// for this project: one chat message per line. A line that starts with "U: " is a user message,
// every other line is an assistant answer. Each message is counted as its own ChatML turn
// ("<|im_start|>user\n...<|im_end|>" or "<|im_start|>assistant\n...<|im_end|>"), so an answer
// starts after "assistant\n" and ends with <|im_end|> after its last sentence.
#pragma once

namespace llmwb {

inline constexpr const char* kDemoNgramCorpus = R"TEXT(
Hello! I am the demo model of the workbench. I only repeat words from my own notes.
Hello! I am a small n-gram model, not a trained language model.
Hello! I am the demo model. Open a real model file to chat with a real model.
Hi! I am the demo model of the workbench. My sentences are silly on purpose.
Hello there! I am glad you are here. Ask me about the engine and I will try my best.
Good morning! I am the demo model, and I am ready when you are.
Thank you for the question. I am the demo model, so my answer is silly.
I am fine, thank you. I am the demo model of the workbench.
My name is Workbench. I am the demo model.
I am the demo model. I count words, I do not think.
I am a table of counts that pretends to be a transformer.
I am written by the workbench itself on the first run.
I do not know the answer, but I know many words about the engine.
I am not a trained model. I only know the words of this page.
The demo model is a table of word pairs.
The demo model picks the next token that most often follows the last token.
The demo model is small, so it loads in a moment.
The demo model has one layer, and the layer does nothing at all.
The demo model has no secrets. Its weights are counts from a short text.
The demo model writes sentences that sound right and mean very little.
The demo model writes silly sentences.
The demo model writes silly sentences. It knows it.
The demo model writes silly sentences on purpose.
The demo model writes one token at a time.
The demo model writes silly sentences. They always end.
A model writes its answer one token at a time.
This model writes silly sentences because it only counts word pairs.
Every model writes with the same engine.
A real model writes real answers.
The workbench is a small place where you can watch a language model work.
The workbench shows every step of the engine.
The workbench runs on your own machine, without any downloads.
The workbench has a chat, a model dock, a tuning dock and a few charts.
The workbench can open a GGUF file or a folder with safetensors weights.
The workbench writes this demo model the first time it starts.
The workbench keeps your conversations on your own disk.
The engine reads the prompt as a list of token ids.
The engine runs one step at a time.
The engine keeps the keys and values of every token in the cache.
The engine shares the cache between requests that start with the same prompt.
The engine can run many requests in one batch.
The engine is written in plain C++ without Qt.
The workbench is written in C++ with Qt.
The engine checks every stop condition after each step.
The engine measures the time of each step.
The engine stops when the model writes the end of the turn.
The model reads the prompt and writes an answer one token at a time.
The model sees only token ids, never letters.
The model turns the last hidden state into logits.
The model has layers, and each layer has attention and a small network.
The model file holds the weights, the tokenizer and the chat template.
The model runner builds one batch from the scheduled tokens.
The scheduler chooses which requests run in the next step.
The scheduler gives each request a share of the token budget.
The scheduler pauses the newest request when the cache is full.
The scheduler puts the paused request back in the queue.
The scheduler mixes prefill and decode tokens in the same step.
The sampler turns the logits into the next token.
The sampler can pick the most likely token, or draw one at random.
The sampler uses the temperature, top k, top p and min p.
The sampler applies the penalties before it draws a token.
The tokenizer cuts the text into tokens.
The tokenizer learns its merges from a short English text.
The tokenizer knows three special tokens for the chat.
The tokenizer turns the answer back into text.
The chat template wraps each message in special tokens.
The chat template tells the model where the answer starts.
The cache is split into blocks of sixteen tokens.
The cache holds the keys and values of every layer.
The cache can run out of free blocks when many requests are long.
The cache returns the blocks of a finished request to the pool.
The pool keeps the free blocks in a list.
The pool gives a new block to a request that needs one.
The prefix cache keeps the blocks of a prompt after the request is done.
The prefix cache lets a second request skip the work of the first.
The KV map shows which request owns each block.
The KV map shows shared blocks in their own colour.
The KV map fills up as the answer grows.
The chart shows the tokens per second of each step.
The chart shows how many tokens ran in each batch.
The charts show the memory, the batch and the speed of the engine.
The benchmark measures the tokens per second on this machine.
The benchmark reports the time to the first token.
The benchmark runs many requests at the same time.
The benchmark compares the speed with the bandwidth of the memory.
The tuning dock changes the batch size and the number of tokens per step.
The tuning dock shows how fast the engine runs.
The model dock shows the name, the layers and the size of the model.
The model dock can load a model from a file or a folder.
The status bar shows the state of the engine.
The command line tool can generate text, run a benchmark and write a model.
The command line tool prints the answer as it is written.
The command line tool can print the result as JSON.
The answer ends when the model writes the end of the turn.
The answer can also end when it reaches the maximum number of tokens.
The answer can stop at a stop string.
The prompt is encoded once, and its blocks stay in the cache.
The prompt of a chat holds every earlier message.
The first token takes longer, because the whole prompt runs first.
The next tokens are fast, because only one token runs per step.
The speed of decoding is limited by the memory bandwidth.
The speed of prefill is limited by the arithmetic.
The weights are read once for every step.
The weights can be stored in sixteen bits, eight bits or four bits.
The weights of this demo are counts, not learned numbers.
The logits are the scores of every token in the vocabulary.
The logits of this demo model are the log probabilities of the next token.
The temperature makes the answer more or less random.
The temperature of zero always picks the most likely token.
The top k setting keeps only the best tokens.
The top p setting keeps the smallest set of tokens that is likely enough.
The attention of a token looks at every earlier token.
The attention uses the keys and values in the cache.
The attention of this demo model looks but does not change anything.
The hidden state is a long list of numbers.
The hidden state of this demo is one token and nothing else.
The vocabulary of the demo has a few hundred tokens.
The speculative decoding guesses a few tokens and checks them in one step.
The draft tokens come from an earlier part of the text.
The draft is accepted when the model agrees with it.
The draft is rejected when the model disagrees.
The prompt lookup finds the last few tokens earlier in the text.
The prompt lookup works well when the answer repeats itself.
The demo model repeats itself a lot, so the drafts are often accepted.
A token is a short piece of text.
A token can be a whole word, a part of a word or a single byte.
A request is one prompt and its answer.
A request waits in the queue until the scheduler picks it.
A request finishes when it reaches a stop.
A block holds the keys and values of sixteen tokens.
A block can be shared by many requests.
A batch is a group of tokens that run in one step.
A step runs the model once on the batch.
A step can hold prefill tokens and decode tokens.
A layer has attention, a small network and two norms.
A model with half a billion parameters needs about one gigabyte of memory.
A model with eight bits per weight is faster than a model with sixteen bits.
A model file can be large, so the workbench maps it into memory.
A larger batch uses the memory bandwidth better.
A longer prompt takes longer before the first token.
A shared prefix saves time and memory.
A real model writes much better answers than this demo.
A real model learns its weights from a lot of text.
This demo model is an n-gram model, not a trained model.
This demo model counts which token follows which token.
This demo model was written for the workbench.
This demo model is small, and it loads in a moment.
This demo model writes silly sentences, and that is fine.
This demo model lets you try every part of the workbench.
This demo model shows how the cache and the batch work.
This is the demo model speaking. Please open a real model for real answers.
This is a demo. The words come from a table of counts.
This is a small model with a big name.
This is how a bigram model writes: each word only looks at the word before it.
This is why the answer sounds a little strange.
This answer is silly, but it ends.
Each token is chosen from the token before it.
Each step adds one token to every running request.
Each block holds sixteen tokens.
Each layer of a real model reads the whole context.
Each request has its own list of blocks.
Each answer ends with a special token.
Every step follows the same plan.
Every request gets its share of the batch.
Every token reads all the weights once.
Every block returns to the pool at the end.
When the cache is full, the newest request waits.
When two prompts start the same way, they share their blocks.
When the answer is done, the blocks go back to the pool.
When you want real answers, open a model file of your own.
When you change the batch size, the engine starts again.
When the model writes the end of the turn, the answer stops.
You can type a message and press Enter to send it.
You can open a model from the File menu.
You can drop a GGUF file on the window.
You can change the temperature in the tuning dock.
You can watch the KV map while the answer grows.
You can run a benchmark from the command line.
You can stop the answer at any time.
You can copy an answer or export a conversation.
You can try a real model such as a small Qwen model.
Your messages stay on your machine.
Your conversations are saved on your disk.
To get real answers, open a GGUF file of a trained model.
To see the prefix cache, send the same message twice.
To see the batch grow, start a benchmark with many requests.
To see speculative decoding, set the speculative tokens in the tuning dock.
Try a second question. The answer will be just as silly.
Try a higher temperature for more surprising sentences.
Try the benchmark to see the speed of the engine.
Sorry, I do not know. I am only the demo model.
Sorry, I only know the words of the workbench.
Yes. I am the demo model, and I say yes to everything.
No. I am the demo model, and I do not know the answer.
Maybe. The demo model is not sure about anything.
Of course. The engine will do its best.
Sure. The workbench is ready.
Good question. The answer is in the tokens.
Good bye! Thank you for trying the workbench.
See you soon! Open a real model next time.
Numbers matter as well. The benchmark shows the tokens per second.
Memory is shared in blocks. The blocks return to the pool.
Speed comes from the memory bandwidth. Smaller weights are faster.
Nothing that was shown to you is lost when a request waits.
Prefill runs the whole prompt at once.
Decode runs one token per request and step.
Greedy decoding always picks the most likely token.
Sampling draws the next token from the probabilities.
Counting is all this model does.
Words follow words. That is all there is to it.
U: Hello
U: Hello!
U: Hi
U: Hello, who are you?
U: What are you?
U: What is your name?
U: How are you today?
U: What is the workbench?
U: What is a token?
U: What is the KV cache?
U: What does the scheduler do?
U: What does the sampler do?
U: How fast is the engine?
U: Why is the answer so strange?
U: Are you a real model?
U: Can you write a poem?
U: Tell me about the cache.
U: Tell me about the batch.
U: Tell me about speculative decoding.
U: How do I open a model?
U: Thank you!
U: Good bye.
)TEXT";

} // namespace llmwb
