<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>llmwb::BatchTimelineView</name>
    <message numerus="yes">
        <source>#%1 %2: %n token(s)</source>
        <translation>
            <numerusform>#%1 %2: %n token</numerusform>
            <numerusform>#%1 %2: %n tokens</numerusform>
        </translation>
    </message>
    <message>
        <source>Step %1: %2 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batch: %1 requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prefill: %1 tokens, decode: %2 tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preempted: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No steps yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speculative drafts: %1 verified, %2 accepted</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::BenchCompareView</name>
    <message>
        <source>Check two or more runs in the Runs tab and press Compare.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Differences are against the first run. Green: better; red: worse.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Figure</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost / 1M output tokens at %1%2/h</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost / 1M total tokens at %1%2/h</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Throughput and latency against %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>output tok/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TTFT (ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: output tok/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: mean TTFT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Output tokens/s over time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>seconds</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tok/s</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::BenchController</name>
    <message>
        <source>A benchmark is already running.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The benchmark run &quot;%1&quot; could not be stored: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the runs to export.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: the report has no runs.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::BenchPlan</name>
    <message>
        <source>Choose at least one policy.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unknown policy &quot;%1&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The number of requests must be between 1 and %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The input length must be at least 1 token.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The output length must be at least 1 token.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The range ratio must be at least 0 and below 1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The shared prefix cannot be negative.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The request rate must be 0 (all at once) or a number of requests per second.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Burstiness must be above 0.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max concurrency cannot be negative.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; cannot be swept.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Give the values of %1 to sweep over.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>At most 64 sweep values.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>gpu_memory_utilization values must be in (0, 1].</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 values must be whole numbers.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>block_size values must be 8, 16 or 32.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 values must be at least 1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>num_speculative_tokens values must be 0 to 16.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose at least one percentile metric.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unknown percentile metric &quot;%1&quot; (ttft, tpot, itl, e2el).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Percentiles must be above 0 and below 100.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::BenchRunsModel</name>
    <message>
        <source>Price per hour ÷ (output tokens/s × 3,600) × 1,000,000</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set a price per hour to see the cost.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>completed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>imported: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Policy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Output tok/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Req/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mean TTFT (ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mean TPOT (ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost / 1M output</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Source</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Date</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::BenchStore</name>
    <message>
        <source>Benchmark runs: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Benchmark runs: cannot store the run &quot;%1&quot;: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Benchmark runs: the report holds no runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Benchmark runs: there is no run %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Benchmark run %1 is damaged: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Benchmark runs: a run needs a name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Benchmark runs: no runs chosen</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::BenchmarkPage</name>
    <message>
        <source>Prompts (JSON Lines)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON Lines (*.jsonl);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Custom</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load test: 16 requests at once</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Continuous vs static vs sequential</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Throughput against max_num_seqs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>optional</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Workload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Random prompts (vLLM&apos;s random dataset)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompts from a JSONL file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>My conversations&apos; messages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prompts.jsonl</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all at once</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no cap</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Policies (each runs the same workload)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Continuous batching</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Static batches (padded)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sequential (one request at a time)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep and percentiles</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no sweep</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>values, e.g. 1, 2, 4, 8</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not set</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preset:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompts:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Input tokens:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Output tokens:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Range ratio:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shared prefix:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request rate (/s):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Burstiness:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max concurrency:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep over:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Values:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Percentiles:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Price per hour:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Currency:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What an hour of this GPU or machine costs you (or a hosted one would): the cost of 1M tokens is price ÷ (tokens/s × 3,600) × 1M.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Setup</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Live</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compare</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compare checked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export report…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import report…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete checked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs use the loaded model with the Tuning dock&apos;s settings (and the run&apos;s policy and sweep value); chats wait while a run is in progress.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load test</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a JSONL file of prompts.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your conversations have no messages yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The sweep values must be numbers separated by commas.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The percentiles must be numbers separated by commas, e.g. 50, 90, 99.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run %1 of %2: %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2 requests done</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Elapsed %1 · about %2 left</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Done: %n run(s) stored.</source>
        <translation>
            <numerusform>Done: %n run stored.</numerusform>
            <numerusform>Done: %n runs stored.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Stopped: %1 (%n run(s) stored).</source>
        <translation>
            <numerusform>Stopped: %1 (%n run stored).</numerusform>
            <numerusform>Stopped: %1 (%n runs stored).</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Benchmark report</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ChartsPanel</name>
    <message>
        <source>Throughput (tokens/s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV cache usage (%)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time to first token (ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The last %1 seconds; the x axis counts seconds before the latest update.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>generation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>waiting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>used blocks</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>per request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unavailable: %1 is not exposed by this server&apos;s /metrics.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Source: %1 (its /metrics, every 1.5 s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last scrape failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>generation throughput</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prompt throughput</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>running requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>waiting requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV cache usage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>time to first token</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mean per scrape</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ChatBackendBox</name>
    <message>
        <source>Local model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat backend:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Endpoints…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add, edit or remove OpenAI-compatible endpoints (vLLM, SGLang, llama.cpp&apos;s server, Ollama, llmwb serve)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ChatController</name>
    <message>
        <source>This conversation is still generating; stop it first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The conversation no longer exists.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only an answer can be regenerated.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only your own messages can be edited.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the generation before deleting its message.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ChatDatabaseStartup</name>
    <message>
        <source>LLM Workbench</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1

Only one LLM Workbench can use a data folder at a time (two would mix their messages in the same conversations). Switch to the one that is running, or start this one with another folder: --data-dir DIR.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1

You can open it read-only to read your chats: sending, editing and deleting are disabled. Or quit, make the file and its folder writable, and start again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open read-only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat database %1 is damaged: SQLite cannot read all of it.

Salvage copies every conversation and message that can still be read into a new database; the damaged file is kept, renamed with the date and time. You can also open it as it is (some chats may be missing, and changes may fail) or quit and restore a backup.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Salvage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open as it is</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat database cannot be opened:
%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat database cannot be opened:
%1

Chats of this session will not be saved.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ChatView</name>
    <message>
        <source>System prompt &amp;&amp; sampling…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System prompt and sampling parameters of this conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type a message. Enter sends, Shift+Enter starts a new line.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send the message (Enter)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop generating (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start a new chat (Ctrl+N) or pick one from Conversations.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type a message below to start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sending is disabled: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ConversationListModel</name>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1
Updated %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Generating an answer…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ConversationSettingsDialog</name>
    <message>
        <source>Template default</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>enable_thinking for models whose chat template has it (Qwen3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no cap</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking tokens after which &lt;/think&gt; is forced (models with &lt;think&gt; tokens only)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking budget (tokens)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversation settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Optional instructions given to the model before the chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>0 picks the most likely token every time (greedy)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>random</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Title</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repetition penalty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Presence penalty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Frequency penalty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max new tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seed</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ConversationStore</name>
    <message>
        <source>Chat storage: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no conversation %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no message %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot restore message %1: its conversation is gone</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ConversationsPanel</name>
    <message>
        <source>Export…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search all conversations…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::Database</name>
    <message>
        <source>Chat database %1: %2 (%3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a statement failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot create the folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not a file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not a usable SQLite database</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot enable WAL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>written by a newer version of the app</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 [migration to %2]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the file cannot be written (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>its folder %1 cannot be written (%2), and SQLite keeps its journal files there</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat database %1 is read-only: %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no such file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>written by another version of the app; it cannot be upgraded while read-only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>read-only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no answer</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::DbSalvage</name>
    <message>
        <source>Nothing was salvaged: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recovered %1 conversation(s) and %2 message(s); %3 message(s) could not be read.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 conversation(s) whose title was lost are named &quot;Recovered conversation&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The table %1 could not be read to its end.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The damaged file is kept as %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 exists already</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the damaged file cannot be read at all (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recovered conversation %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot rename %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::EnginePanel</name>
    <message>
        <source>KV cache blocks (hatched: shared, grey: cached)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens per step, √ scale (solid: prefill, light: decode, red: preemption)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV %1% of %2 blocks · %3 running / %4 waiting · %5 tokens/s · step %6</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Blocks &amp;&amp; steps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Charts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speculation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The KV block map and the batch timeline are not available for a remote endpoint (%1): its server does not expose them. The Charts tab shows what its /metrics does.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>n/a</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remote endpoint %1: waiting for its /metrics…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remote endpoint %1: no figures (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remote endpoint %1 · KV %2 · %3 running / %4 waiting · %5 tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::EngineWorker</name>
    <message>
        <source>the demo model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: tokenizer: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: KV cache: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat template failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat template failed: out of memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writing the demo model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading the model file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validating the model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: the model has no layers or no vocabulary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading the tokenizer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preparing the weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Planning the KV cache</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ready</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CUDA is unavailable: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The backend failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1. Reload the model to go on.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the running requests need %1 KV blocks (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the weights and the workspace leave no room for one KV block (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU memory utilization %1 is refused: %2, and even 1.0 is not enough.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU memory utilization %1 is refused: %2. The smallest value that works now is %3.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The conversation (%1 tokens) no longer fits the context of the model (%2 tokens); start a new chat or delete messages.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The conversation (%1 tokens) no longer fits the KV cache pool (%2 tokens; the model&apos;s context is %3): raise GPU memory utilization in the Tuning dock, or start a new chat.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A benchmark is already running.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The benchmark has no prompts.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading the machine and hashing the model file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled by the user.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting for the chats that are generating to finish</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run &quot;%1&quot; failed: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fp8 scales: calibration failed (%1); every layer uses the scale 1.0.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no layers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fp8 scales calibrated per layer on a built-in text: K %1 to %2, V %3 to %4 (stored value = x / scale).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The %1 backend cannot store the KV cache as %2; it uses %3.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The KV cache cannot be stored as %1 (%2 is used): %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The KV cache stays %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the %1 backend cannot store it as %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Think harder is running.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model was replaced.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Think harder is already running.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A benchmark is running.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This model has no &lt;think&gt; and &lt;/think&gt; tokens: thinking budgets do not apply.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat template failed on a question: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Question %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The backend failed.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::FirstRunDialog</name>
    <message>
        <source>Add a folder of models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;CPU&lt;/b&gt; %1 — %2 cores, %3 threads, SIMD %4&lt;br&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Memory&lt;/b&gt; %1 installed, %2 available now&lt;br&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;GPU&lt;/b&gt; %1 — %2, compute capability %3, driver %4&lt;br&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;GPU&lt;/b&gt; none: the engine runs on the CPU (%1)&lt;br&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;System&lt;/b&gt; %1, %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>error: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>needs %1 (weights %2 + KV %3 + overhead %4) of %5</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>fits — KV %1, up to %n sequence(s), gpu_memory_utilization %2</source>
        <translation>
            <numerusform>fits — KV %1, up to %n sequence, gpu_memory_utilization %2</numerusform>
            <numerusform>fits — KV %1, up to %n sequences, gpu_memory_utilization %2</numerusform>
        </translation>
    </message>
    <message>
        <source>too big — %1 fits with %2 context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>does not fit this machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>against %1 of GPU memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>against %1 of available RAM</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Welcome — this machine and its models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No models found in LM Studio&apos;s, GPT4All&apos;s, Ollama&apos;s or the Hugging Face cache&apos;s folders. Add a folder, or open a model from the File menu.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context (tokens):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sequences:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Source</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tensor types</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fits?</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) found (headers read, nothing loaded). Double-click one to load it.</source>
        <translation>
            <numerusform>%n model found (headers read, nothing loaded). Double-click it to load it.</numerusform>
            <numerusform>%n models found (headers read, nothing loaded). Double-click one to load it.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>llmwb::InstanceLock</name>
    <message>
        <source>The data folder %1 is in use by another LLM Workbench (process %2 on %3).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this computer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The data folder %1 is in use by another LLM Workbench.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot create the lock file %1: permission denied or a read-only folder.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot create the lock file %1.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::KvBlockMapView</name>
    <message>
        <source>free</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cached (free)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>in use</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Block %1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ref count: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens: %1 / %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Owner: request #%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hash: %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No KV cache yet: load a model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Blocks %1–%2 (1 cell = %3 blocks)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In use: %1 (shared: %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cached (free): %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Free: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens: about %1 / %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Owners: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>1 cell = %1 blocks (hover for the mix)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Blocks 0–%1 of %2 (the rest are free)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::LocalServer</name>
    <message>
        <source>Cannot start the Local server: &quot;%1&quot; is not a host name or address this machine can resolve.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot start the Local server: port %1 on %2 is in use by another program. Choose another port.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot start the Local server: %1 is not an address of this machine.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot start the Local server: port %1 needs administrator rights; choose one above 1023.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot start the Local server on %1:%2: %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the bind failed</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::LocalServerLog</name>
    <message>
        <source>running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Client</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Completion</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Duration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finish</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::LocalServerPanel</name>
    <message>
        <source>Kept in the app&apos;s settings file, which only you can read.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Listening on %1. Requests join the same batch as the chats.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Base URL: %1/v1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped. Turn it on to serve the OpenAI API (/v1/chat/completions, /v1/completions, /v1/models, /metrics) from the loaded model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Warning: %1 is reachable from other machines, and no API key is set: anyone on the network can use the model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Warning: %1 is reachable from other machines (they need the API key).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Local server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Serve the OpenAI API (Local server)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Host:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Port:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>API key:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none: no key needed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show or hide the API key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy curl example</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copies a curl command that streams a chat answer from this server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>127.0.0.1: this machine only. 0.0.0.0: every network interface.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>any free port</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::MainWindow</name>
    <message>
        <source>&amp;Find models and check what fits…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This machine, the models it already has (LM Studio, GPT4All, Ollama, Hugging Face) and whether they fit its memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete this conversation and all its messages?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>About LLM Workbench</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;LLM Workbench&lt;/b&gt; %1&lt;br&gt;Chat with local language models and watch the inference engine work.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>LLM Workbench</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Engine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tuning</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Theme</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open model…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export conversation as &amp;Markdown…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export conversation as &amp;JSON…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Find in conversations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>S&amp;top generating</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Regenerate last answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversation &amp;settings…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Follow the &amp;system</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;About LLM Workbench</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>● generating</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>idle</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The demo model is a bigram model of this project&apos;s own sentences, not a trained model: its answers are silly. Open a real model (File &gt; Open model, or drop a .gguf file here) to chat.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not load the model: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not export to %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exported to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>E&amp;ngine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a &amp;load test (%1 concurrent requests)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sends synthetic requests through the engine to watch batching; their answers are not saved.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading was cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled loading %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message deleted.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a Hugging Face model folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a GGUF file, or a Hugging Face folder by its config.json</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open Hugging Face &amp;folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a folder with config.json and safetensors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Rename conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Undo delete message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Undo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Put the deleted message back (Ctrl+Z)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: %1 (loading %2 failed)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not load %1: %2
%3 is still loaded and answers.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model: loading failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model: loading %1 failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading %1… (%2 stays until it is ready)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>● load test</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>● busy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not restore the message: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message restored.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>● benchmark (%n chat(s) wait)</source>
        <translation>
            <numerusform>● benchmark (%n chat waits)</numerusform>
            <numerusform>● benchmark (%n chats wait)</numerusform>
        </translation>
    </message>
    <message>
        <source>● benchmark</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Benchmark</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Benchmark…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Import benchmark report…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>E&amp;xport benchmark report…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a &amp;load test (%1 requests at once)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A benchmark preset: 16 synthetic requests at once, with progress, figures, and the run kept in the Benchmark page.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export benchmark report</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check the runs to export in the Benchmark page&apos;s Runs tab.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Benchmark reports (*.zip)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The report could not be written:
%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Exported %n run(s) to %1</source>
        <translation>
            <numerusform>Exported %n run to %1</numerusform>
            <numerusform>Exported %n runs to %1</numerusform>
        </translation>
    </message>
    <message>
        <source>Import benchmark report</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The report could not be imported:
%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Imported %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n answer(s) could not be saved in the chat database: %1

If you quit now, their text is lost. Make room (or copy the text) and choose Retry saving.</source>
        <translation>
            <numerusform>%n answer could not be saved in the chat database: %1

If you quit now, its text is lost. Make room (or copy the text) and choose Retry saving.</numerusform>
            <numerusform>%n answers could not be saved in the chat database: %1

If you quit now, their text is lost. Make room (or copy the text) and choose Retry saving.</numerusform>
        </translation>
    </message>
    <message>
        <source>Retry saving</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quit and lose them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quantize…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write a quantized GGUF (Q8_0, Q4_K_M, …) of a float model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A model is being quantized. Quit and stop it? (No half-written file is left behind.)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remote endpoints…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat: %1 (remote endpoint)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Think harder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Think harder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export Think harder report</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check the runs to export in the Runs tab.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reports (*.zip)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::MarkdownView</name>
    <message>
        <source>Copied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy this code block</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::MemoryPanel</name>
    <message>
        <source>Memory plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Free</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV blocks</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Capacity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV-cache dtype</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weight dtypes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2% of the device)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 blocks × %2 tokens, %3 per block</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Budget</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Limited by</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 · %2 %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-planning the KV pool failed (the previous pool stays): %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 = gpu_memory_utilization %2 × %3 of GPU memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 = gpu_memory_utilization %2 × %3 of RAM available to the engine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (weights, workspace and KV cache as planned)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Draft model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>self-q4: %1 of 4-bit weights (RAM) + a KV pool of up to %2, committed as drafts write it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none (prompt lookup needs no memory)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV switch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>switching to %1 at the next step (now %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, was %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none since the model was loaded (Tuning dock: KV-cache dtype)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bf16 weight cache</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weight layout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>panels: %1 matrices (%2) rearranged at load, no copy kept</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rows, as stored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>as stored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On the CPU, weight matrices of the types with a panel layout (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, F16, BF16) are rearranged once at load into 16-row panels read by both the decode and the batched kernels: nothing is repacked per step, and a token&apos;s result does not depend on what shares its batch. LLMWB_WEIGHT_LAYOUT=rows keeps the file&apos;s order.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none (no quantized matrices)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none (CUDA backend only)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2 of %3 matrices)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bf16 copies of quantized weight matrices, made at load when the memory plan has room after a minimum KV pool (largest first): prefill runs cuBLAS on them instead of dequantizing on every call; decode keeps reading the quantized bytes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>active / total: %1 / %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::MemoryPlanText</name>
    <message>
        <source>GPU memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>RAM</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CUDA: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On the CUDA backend the device memory is the GPU&apos;s memory; the KV cache is stored in %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On the CPU backend the device memory is the machine&apos;s RAM; the KV cache is stored in %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set to %1 blocks.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set by a KV-cache budget of %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The memory free when the pool was planned (the budget would allow more).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What the requests can use (the budget would allow more).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Capped: %1 sequences of the full context never use more than %2 blocks.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The budget does not hold the weights, so a small pool is used instead: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kept large enough for the longest running request.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>gpu_memory_utilization × the GPU&apos;s memory, less the weights and the workspace.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>gpu_memory_utilization × the RAM available to the engine, less the weights and the workspace.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU memory utilization: the fraction of the GPU&apos;s memory the engine may use for weights, workspace and the KV cache (as in vLLM).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU memory utilization on the CPU: the share of the memory available to the engine (free RAM plus what it already holds) that it may use for weights, workspace and the KV cache. The pool holds at most %1 sequences of the model&apos;s full context, and its pages take RAM only as blocks fill.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Budget: %1 = %2 × %3 of GPU memory (weights, workspace and KV cache)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Budget: %1 = %2 × %3 of RAM available (weights, workspace and KV cache)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>4 bytes per value: exact, and the most memory.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>2 bytes per value, half of fp32: 11 significant bits, values up to 65,504.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>2 bytes per value, half of fp32: fp32&apos;s range with 8 significant bits.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>1 byte per value, a quarter of fp32: 4 significant bits; K and V of each layer are divided by a scale calibrated on a short built-in text when it is chosen (1.0 if that fails).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>1 byte per value, a quarter of fp32: 3 significant bits and a wider range than e4m3; K and V of each layer are divided by a scale calibrated on a short built-in text when it is chosen (1.0 if that fails).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>1 byte per value plus a 4-byte scale per token and KV head (about 1.06 bytes per value at head size 64): symmetric, each token&apos;s K and V rows scaled by their own largest value, robust to outlier tokens.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 blocks × %3 tokens = %4 tokens (%5 per block)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::MessageWidget</name>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the text of this message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit this message and send it again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Generate this answer again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete this message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Assistant · %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>generating…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>interrupted (the app was closed)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TTFT %1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 generated tokens (counted streamed chunks: the endpoint sent no usage)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 prompt + %2 generated tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send the edited message; the messages after it are replaced (Ctrl+Enter)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep the message as it was (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cut off at the token limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cut off: context full</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cut off: KV cache full</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The answer reached the conversation&apos;s max tokens before it ended.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model ended the answer (a stop token or stop string).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You stopped the answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The generation failed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The generation failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The app was closed while the answer was being written.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The conversation filled the model&apos;s context: start a new chat or delete messages.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The conversation filled the whole KV cache pool, which is smaller than the model&apos;s context: raise GPU memory utilization in the Tuning dock, or start a new chat.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The text is on the clipboard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Earlier answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Later answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answer %1 of %2: Regenerate keeps the earlier answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 · not saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not saved in the chat database yet (retrying): %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ModelPanel</name>
    <message>
        <source>Open a Hugging Face model folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weight types</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shape</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open file…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a .gguf model file (or drop it on the window)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a Hugging Face folder with config.json and safetensors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recent models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not load the model: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The built-in demo model: a bigram model of this project&apos;s own sentences, not a trained model, so its answers are silly. Open a real model to chat.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 parameters, %2 of weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 layers, hidden %2, %3 heads (%4 KV), vocabulary %5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>present</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>missing (a plain prompt is used)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 no longer exists. Remove it from the list or open another model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelling the loading of %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop loading this model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove from list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Forget the selected model (the file is not deleted)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (missing)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1
This file or folder no longer exists.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not load %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The previous model (%1) is still loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running on</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Auto (CUDA when available)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown reason</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run the model on the GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CUDA is unavailable: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where the model runs; a change reloads the model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where the model runs; a change reloads the model.
CUDA is unavailable: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU (CUDA is unavailable: %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models: GGUF files or a Hugging Face config.json (*.gguf config.json);;GGUF models (*.gguf);;Hugging Face folder (config.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bits per weight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 over the weight matrices, %2 over all tensors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embedding</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attention</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Feed-forward</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Norms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Output</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>RoPE frequencies</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 bpw</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>As stored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bfloat16 (cast at load)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>As stored: every matrix runs in the file&apos;s type.
bfloat16: F32 and F16 matrices are rounded to bfloat16 when the model loads on the CPU: no more memory, faster prompt processing on CPUs with AVX512_BF16, slightly different outputs (`llmwb kld --dtype bfloat16` measures how much).
A change reloads the model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cast to bfloat16 at load: %1 matrices, %2 → %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not cast to bfloat16: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::PresetStore</name>
    <message>
        <source>Presets: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a preset needs a name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a preset named &quot;%1&quot; already exists</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>there is no preset named &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::QuantizeController</name>
    <message>
        <source>A quantization is already running.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the model to quantize.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose where to write the quantized model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The output must be another file than the input.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::QuantizeDialog</name>
    <message>
        <source>Choose a float model (GGUF)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GGUF models (*.gguf);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a Hugging Face model folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write the quantized model to</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GGUF models (*.gguf)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose an importance matrix</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Importance matrices (*.gguf *.dat);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a calibration text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text files (*.txt *.md);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>every matrix</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no quantization</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>output</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bpw</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>preset mix</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>single type</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quantize a model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model to quantize:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Target:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Output file:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Importance matrix (optional):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Calibration text (optional):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A GGUF file (F32, F16 or BF16) or a Hugging Face folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where to write the GGUF file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>An importance-matrix file (common GGUF imatrix format)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A text file of your own to gather importances from</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The K and IQ types use the importances to choose their scales; without either file, scales come from round-to-nearest with the usual scale search.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop quantizing (no output file is left behind)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load the new model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 already exists. Replace it?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a model and a target, then Start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writing the file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quantizing %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tensor %1 of %2 · %3 MB/s · %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quantization failed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled; no output file was written.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Wrote %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size: %1 → %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bits per weight over the quantized matrices: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Types: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n tensor(s) in a fallback type (the row length does not fit the block):</source>
        <translation>
            <numerusform>%n tensor in a fallback type (the row length does not fit the block):</numerusform>
            <numerusform>%n tensors in a fallback type (the row length does not fit the block):</numerusform>
        </translation>
    </message>
    <message>
        <source>Time: %1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A quantization is running. Stop it and close?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gathering importances from the calibration text: token %1 of %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time: %1 s, of which %2 s gathering importances from the calibration text</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::RemoteChatWorker</name>
    <message>
        <source>No usable remote endpoint: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::RemoteEndpoint</name>
    <message>
        <source>The endpoint needs a name.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A field is longer than %1 characters.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The base URL is not usable: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the model the endpoint serves.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The API key contains a line break.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server refused the API key.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server has no such route or model: check the base URL and the model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server could not be reached.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server lists no model.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::RemoteEndpointDialog</name>
    <message>
        <source>Kept in the app&apos;s settings file, which only you can read.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remote endpoints</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fetch models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>API key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(unnamed)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Endpoint %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The base URL is not usable: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Asking %1 for its models…</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) served.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Another endpoint has this name.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::SearchResultsModel</name>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::SpeculationPanel</name>
    <message>
        <source>No model loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speculative decoding is on (up to %1 draft tokens per step); no drafts verified yet. Prompt lookup proposes drafts when the text repeats itself.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speculative decoding is off. Set Speculative tokens in the Tuning dock to verify draft tokens inside the batch.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Up to %1 draft tokens per step · %2 drafts · %3 of %4 draft tokens accepted (%5%) · mean acceptance length %6</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Acceptance over time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>acceptance rate (%)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mean acceptance length (tokens)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>seconds before the latest update</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Acceptance per draft position (%)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>draft position</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::StorageBanner</name>
    <message numerus="yes">
        <source>%n answer(s) not saved in the chat database yet; the text is kept here and saving is retried. %1</source>
        <translation>
            <numerusform>%n answer is not saved in the chat database yet; the text is kept here and saving is retried. %1</numerusform>
            <numerusform>%n answers are not saved in the chat database yet; the text is kept here and saving is retried. %1</numerusform>
        </translation>
    </message>
    <message>
        <source>Your message could not be saved, so it was not sent: %1. It is kept in the message box: send it again once there is room.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not read the chat database: %1. Start the app again to check it and salvage what is readable.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Read-only: %1 Sending is disabled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry saving</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ThinkController</name>
    <message>
        <source>Think harder is already running.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the runs to export.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No benchmark runs are available.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ThinkPage</name>
    <message>
        <source>Task file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON Lines (*.jsonl);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tasks</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task set:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Generated arithmetic (multi-step)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Generated logic (ordering)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>My JSONL file of questions and answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Difficulty level:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Questions:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task seed:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task file:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{&quot;question&quot;: &quot;…&quot;, &quot;answer&quot;: &quot;…&quot;} per line</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ladder of budgets</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples (vote):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking budgets:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Beam widths:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking tokens before &lt;/think&gt; is forced, comma-separated (0 to 4,096 and up to 32,768).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Beam search widths, comma-separated (1 to 16).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sampling and cost</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max tokens per answer:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sampling seed:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Price per hour:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What an hour of this machine costs you (for the cost axis).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run ladder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Accuracy against:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens per question</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Wall time per question (s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost per question</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rung:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Questions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export report…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>#</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Question</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Expected</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vote</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Correct</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Agreement</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This model has no &lt;think&gt; tokens: thinking budgets do not apply.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load a model with &lt;think&gt; tokens (Qwen3) for thinking budgets.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load a model first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rung %1 of %2 (%3): %4 of %5 questions · %6 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done in %1 s.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled; the rungs done so far are kept.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples + vote</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking budget</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Beam search</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a ladder to see accuracy against compute</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test-time scaling on this model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no answer ×%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>one sample</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unanimous</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tie</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>split</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(none)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>yes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sample %1 (%2 tokens) → %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Think harder report</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ThinkPlan</name>
    <message>
        <source>Choose a task file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unknown task set &quot;%1&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The level must be 1 to 5.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The task count must be 1 to %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max tokens must be 1 to 8192.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The temperature must be 0 to 2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The price per hour must be 0 or more.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::ThinkStore</name>
    <message>
        <source>Think harder runs: the run is not a JSON object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Think harder runs: cannot store the run &quot;%1&quot;: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Think harder runs: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Think harder runs: no run %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Think harder runs: run %1 has no rungs</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmwb::TuningPanel</name>
    <message>
        <source>Pool: applies when a model is loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pool: %1 blocks × %2 tokens = %3 tokens · KV %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Block size %1 applies when the running requests finish.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Engine (applies live)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Default sampling for new conversations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU memory utilization</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max sequences (max_num_seqs)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max batched tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Block size (tokens)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV-cache dtype</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speculative tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Most requests in one batch (applies from the next step).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Token budget of one step: prefill chunks and decode tokens share it (applies from the next step).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The block size can change only while the engine is idle: wait for the running requests to finish.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens per KV block. Changing it rebuilds the engine (the prefix cache is emptied).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Disabled while requests run.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Applies when idle (rebuilds the engine).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Used by conversations created from now on; each conversation keeps its own settings (Chat &gt; Conversation settings).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-k (0: off)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repetition penalty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Presence penalty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Frequency penalty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset to defaults</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Budget: %1% of the device memory (weights, workspace and KV cache)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Limited by: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-planning failed (the previous pool stays): %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drafts by n-gram prompt lookup, verified in the batch.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Off: one token per request and step.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>So far %1 of %2 draft tokens accepted (%3%), %4 tokens per verify step.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speculative decoding: up to this many draft tokens per step, found by looking up the last few tokens earlier in the conversation (n-gram prompt lookup), are checked by the model in the same step. Greedy answers stay identical and sampled ones keep their distribution. Applies from the next step.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Changing it re-plans the KV pool while requests run: requests that no longer fit are preempted and resume later; a value too small for the running requests is refused.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drafts by the model&apos;s own weights at 4 bits, verified in the batch.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Auto: up to %1 per request and step, none where they do not pay.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speculation is off: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prompt lookup</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>self-q4 draft</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where drafts come from: prompt lookup finds the last few tokens earlier in the conversation (free, helps when text repeats); self-q4 runs the model&apos;s own weights re-quantized to 4 bits (made when first chosen, about a quarter of F16 memory).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>auto</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the number of drafts per request and step from the measured acceptance and step cost; none where they do not pay.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drafts from</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>auto (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The backend&apos;s own type.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The backend&apos;s own type: fp16 on the CPU and on CUDA.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How the KV cache stores keys and values. Changing it re-plans the pool while requests run: more or fewer blocks for the same memory; running requests are recomputed in the new type and keep what they streamed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Applies when a model is loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In use: %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Switching to %1 at the next step.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
