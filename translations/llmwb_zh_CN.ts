<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>llmwb::BatchTimelineView</name>
    <message numerus="yes">
        <source>#%1 %2: %n token(s)</source>
        <translation>
            <numerusform>#%1 %2：%n 个词元</numerusform>
        </translation>
    </message>
    <message>
        <source>Step %1: %2 ms</source>
        <translation>第 %1 步：%2 毫秒</translation>
    </message>
    <message>
        <source>Batch: %1 requests</source>
        <translation>批次：%1 个请求</translation>
    </message>
    <message>
        <source>Prefill: %1 tokens, decode: %2 tokens</source>
        <translation>预填充：%1 个词元，解码：%2 个词元</translation>
    </message>
    <message>
        <source>Preempted: %1</source>
        <translation>被抢占：%1</translation>
    </message>
    <message>
        <source>No steps yet.</source>
        <translation>尚无步骤。</translation>
    </message>
    <message>
        <source>Speculative drafts: %1 verified, %2 accepted</source>
        <translation>推测草稿：验证 %1 个，接受 %2 个</translation>
    </message>
</context>
<context>
    <name>llmwb::BenchCompareView</name>
    <message>
        <source>Check two or more runs in the Runs tab and press Compare.</source>
        <translation>在“运行记录”页勾选两个或更多运行，再点“比较”。</translation>
    </message>
    <message>
        <source>Differences are against the first run. Green: better; red: worse.</source>
        <translation>差异以第一个运行为基准。绿色：更好；红色：更差。</translation>
    </message>
    <message>
        <source>Figure</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Cost / 1M output tokens at %1%2/h</source>
        <translation>每百万输出词元成本（按 %1%2/小时）</translation>
    </message>
    <message>
        <source>Cost / 1M total tokens at %1%2/h</source>
        <translation>每百万总词元成本（按 %1%2/小时）</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Throughput and latency against %1</source>
        <translation>吞吐量与延迟随 %1 的变化</translation>
    </message>
    <message>
        <source>output tok/s</source>
        <translation>输出词元/秒</translation>
    </message>
    <message>
        <source>TTFT (ms)</source>
        <translation>TTFT（毫秒）</translation>
    </message>
    <message>
        <source>%1: output tok/s</source>
        <translation>%1：输出词元/秒</translation>
    </message>
    <message>
        <source>%1: mean TTFT</source>
        <translation>%1：平均 TTFT</translation>
    </message>
    <message>
        <source>Output tokens/s over time</source>
        <translation>输出词元/秒随时间变化</translation>
    </message>
    <message>
        <source>seconds</source>
        <translation>秒</translation>
    </message>
    <message>
        <source>tok/s</source>
        <translation>词元/秒</translation>
    </message>
</context>
<context>
    <name>llmwb::BenchController</name>
    <message>
        <source>A benchmark is already running.</source>
        <translation>已有基准测试在运行。</translation>
    </message>
    <message>
        <source>The benchmark run &quot;%1&quot; could not be stored: %2</source>
        <translation>无法保存基准测试运行“%1”：%2</translation>
    </message>
    <message>
        <source>Choose the runs to export.</source>
        <translation>请选择要导出的运行。</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>%1: the report has no runs.</source>
        <translation>%1：报告中没有运行。</translation>
    </message>
</context>
<context>
    <name>llmwb::BenchPlan</name>
    <message>
        <source>Choose at least one policy.</source>
        <translation>请至少选择一种调度策略。</translation>
    </message>
    <message>
        <source>Unknown policy &quot;%1&quot;.</source>
        <translation>未知策略“%1”。</translation>
    </message>
    <message>
        <source>The number of requests must be between 1 and %1.</source>
        <translation>请求数必须在 1 到 %1 之间。</translation>
    </message>
    <message>
        <source>The input length must be at least 1 token.</source>
        <translation>输入长度至少为 1 个词元。</translation>
    </message>
    <message>
        <source>The output length must be at least 1 token.</source>
        <translation>输出长度至少为 1 个词元。</translation>
    </message>
    <message>
        <source>The range ratio must be at least 0 and below 1.</source>
        <translation>长度浮动比例必须不小于 0 且小于 1。</translation>
    </message>
    <message>
        <source>The shared prefix cannot be negative.</source>
        <translation>共享前缀不能为负数。</translation>
    </message>
    <message>
        <source>The request rate must be 0 (all at once) or a number of requests per second.</source>
        <translation>请求速率必须为 0（一次全部发出）或每秒请求数。</translation>
    </message>
    <message>
        <source>Burstiness must be above 0.</source>
        <translation>突发度必须大于 0。</translation>
    </message>
    <message>
        <source>Max concurrency cannot be negative.</source>
        <translation>最大并发数不能为负数。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; cannot be swept.</source>
        <translation>“%1”不能扫描。</translation>
    </message>
    <message>
        <source>Give the values of %1 to sweep over.</source>
        <translation>请给出要扫描的 %1 取值。</translation>
    </message>
    <message>
        <source>At most 64 sweep values.</source>
        <translation>最多 64 个扫描取值。</translation>
    </message>
    <message>
        <source>gpu_memory_utilization values must be in (0, 1].</source>
        <translation>gpu_memory_utilization 的取值必须在 (0, 1] 内。</translation>
    </message>
    <message>
        <source>%1 values must be whole numbers.</source>
        <translation>%1 的取值必须是整数。</translation>
    </message>
    <message>
        <source>block_size values must be 8, 16 or 32.</source>
        <translation>block_size 的取值必须是 8、16 或 32。</translation>
    </message>
    <message>
        <source>%1 values must be at least 1.</source>
        <translation>%1 的取值至少为 1。</translation>
    </message>
    <message>
        <source>num_speculative_tokens values must be 0 to 16.</source>
        <translation>num_speculative_tokens 的取值必须在 0 到 16 之间。</translation>
    </message>
    <message>
        <source>Choose at least one percentile metric.</source>
        <translation>请至少选择一个百分位指标。</translation>
    </message>
    <message>
        <source>Unknown percentile metric &quot;%1&quot; (ttft, tpot, itl, e2el).</source>
        <translation>未知的百分位指标“%1”（可选 ttft、tpot、itl、e2el）。</translation>
    </message>
    <message>
        <source>Percentiles must be above 0 and below 100.</source>
        <translation>百分位必须大于 0 且小于 100。</translation>
    </message>
</context>
<context>
    <name>llmwb::BenchRunsModel</name>
    <message>
        <source>Price per hour ÷ (output tokens/s × 3,600) × 1,000,000</source>
        <translation>每小时价格 ÷（输出词元/秒 × 3,600）× 1,000,000</translation>
    </message>
    <message>
        <source>Set a price per hour to see the cost.</source>
        <translation>设置每小时价格即可看到成本。</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>this machine</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>imported: %1</source>
        <translation>导入自：%1</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Policy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation>扫描</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>Output tok/s</source>
        <translation>输出词元/秒</translation>
    </message>
    <message>
        <source>Req/s</source>
        <translation>请求/秒</translation>
    </message>
    <message>
        <source>Mean TTFT (ms)</source>
        <translation>平均 TTFT（毫秒）</translation>
    </message>
    <message>
        <source>Mean TPOT (ms)</source>
        <translation>平均 TPOT（毫秒）</translation>
    </message>
    <message>
        <source>Cost / 1M output</source>
        <translation>每百万输出成本</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Date</source>
        <translation>日期</translation>
    </message>
</context>
<context>
    <name>llmwb::BenchStore</name>
    <message>
        <source>Benchmark runs: %1</source>
        <translation>基准测试运行：%1</translation>
    </message>
    <message>
        <source>Benchmark runs: cannot store the run &quot;%1&quot;: %2</source>
        <translation>基准测试运行：无法保存运行“%1”：%2</translation>
    </message>
    <message>
        <source>Benchmark runs: the report holds no runs</source>
        <translation>基准测试运行：该报告不包含任何运行</translation>
    </message>
    <message>
        <source>Benchmark runs: there is no run %1</source>
        <translation>基准测试运行：不存在运行 %1</translation>
    </message>
    <message>
        <source>Benchmark run %1 is damaged: %2</source>
        <translation>基准测试运行 %1 已损坏：%2</translation>
    </message>
    <message>
        <source>Benchmark runs: a run needs a name</source>
        <translation>基准测试运行：运行需要一个名称</translation>
    </message>
    <message>
        <source>Benchmark runs: no runs chosen</source>
        <translation>基准测试运行：未选择任何运行</translation>
    </message>
</context>
<context>
    <name>llmwb::BenchmarkPage</name>
    <message>
        <source>Prompts (JSON Lines)</source>
        <translation>提示词（JSON Lines）</translation>
    </message>
    <message>
        <source>JSON Lines (*.jsonl);;All files (*)</source>
        <translation>JSON Lines (*.jsonl);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Custom</source>
        <translation>自定义</translation>
    </message>
    <message>
        <source>Load test: 16 requests at once</source>
        <translation>负载测试：一次 16 个请求</translation>
    </message>
    <message>
        <source>Continuous vs static vs sequential</source>
        <translation>连续批处理 vs 静态批处理 vs 顺序执行</translation>
    </message>
    <message>
        <source>Throughput against max_num_seqs</source>
        <translation>吞吐量随 max_num_seqs 的变化</translation>
    </message>
    <message>
        <source>optional</source>
        <translation>可选</translation>
    </message>
    <message>
        <source>Workload</source>
        <translation>负载</translation>
    </message>
    <message>
        <source>Random prompts (vLLM&apos;s random dataset)</source>
        <translation>随机提示词（vLLM 的 random 数据集）</translation>
    </message>
    <message>
        <source>Prompts from a JSONL file</source>
        <translation>来自 JSONL 文件的提示词</translation>
    </message>
    <message>
        <source>My conversations&apos; messages</source>
        <translation>我的对话中的消息</translation>
    </message>
    <message>
        <source>prompts.jsonl</source>
        <translation>prompts.jsonl</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>all at once</source>
        <translation>一次全部发出</translation>
    </message>
    <message>
        <source>no cap</source>
        <translation>不限</translation>
    </message>
    <message>
        <source>Policies (each runs the same workload)</source>
        <translation>调度策略（各自运行相同负载）</translation>
    </message>
    <message>
        <source>Continuous batching</source>
        <translation>连续批处理</translation>
    </message>
    <message>
        <source>Static batches (padded)</source>
        <translation>静态批处理（填充）</translation>
    </message>
    <message>
        <source>Sequential (one request at a time)</source>
        <translation>顺序执行（一次一个请求）</translation>
    </message>
    <message>
        <source>Sweep and percentiles</source>
        <translation>扫描与百分位</translation>
    </message>
    <message>
        <source>no sweep</source>
        <translation>不扫描</translation>
    </message>
    <message>
        <source>values, e.g. 1, 2, 4, 8</source>
        <translation>取值，例如 1, 2, 4, 8</translation>
    </message>
    <message>
        <source>Cost</source>
        <translation>成本</translation>
    </message>
    <message>
        <source>not set</source>
        <translation>未设置</translation>
    </message>
    <message>
        <source>Preset:</source>
        <translation>预设：</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <source>Prompts:</source>
        <translation>提示词：</translation>
    </message>
    <message>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>Requests:</source>
        <translation>请求数：</translation>
    </message>
    <message>
        <source>Input tokens:</source>
        <translation>输入词元数：</translation>
    </message>
    <message>
        <source>Output tokens:</source>
        <translation>输出词元数：</translation>
    </message>
    <message>
        <source>Range ratio:</source>
        <translation>长度浮动比例：</translation>
    </message>
    <message>
        <source>Shared prefix:</source>
        <translation>共享前缀：</translation>
    </message>
    <message>
        <source>Request rate (/s):</source>
        <translation>请求速率（/秒）：</translation>
    </message>
    <message>
        <source>Burstiness:</source>
        <translation>突发度：</translation>
    </message>
    <message>
        <source>Max concurrency:</source>
        <translation>最大并发数：</translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation>随机种子：</translation>
    </message>
    <message>
        <source>Sweep over:</source>
        <translation>扫描设置：</translation>
    </message>
    <message>
        <source>Values:</source>
        <translation>取值：</translation>
    </message>
    <message>
        <source>Percentiles:</source>
        <translation>百分位：</translation>
    </message>
    <message>
        <source>Price per hour:</source>
        <translation>每小时价格：</translation>
    </message>
    <message>
        <source>Currency:</source>
        <translation>货币符号：</translation>
    </message>
    <message>
        <source>What an hour of this GPU or machine costs you (or a hosted one would): the cost of 1M tokens is price ÷ (tokens/s × 3,600) × 1M.</source>
        <translation>这块 GPU 或这台机器每小时的花费（或托管服务的价格）：每百万词元成本 = 价格 ÷（词元/秒 × 3,600）× 1M。</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Setup</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Live</source>
        <translation>实时</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>运行记录</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <source>Compare checked</source>
        <translation>比较已勾选</translation>
    </message>
    <message>
        <source>Export report…</source>
        <translation>导出报告…</translation>
    </message>
    <message>
        <source>Import report…</source>
        <translation>导入报告…</translation>
    </message>
    <message>
        <source>Delete checked</source>
        <translation>删除已勾选</translation>
    </message>
    <message>
        <source>Runs use the loaded model with the Tuning dock&apos;s settings (and the run&apos;s policy and sweep value); chats wait while a run is in progress.</source>
        <translation>运行使用已加载的模型和调优面板的设置（加上该运行的策略和扫描取值）；运行期间对话会排队等待。</translation>
    </message>
    <message>
        <source>Load test</source>
        <translation>负载测试</translation>
    </message>
    <message>
        <source>Choose a JSONL file of prompts.</source>
        <translation>请选择提示词 JSONL 文件。</translation>
    </message>
    <message>
        <source>Your conversations have no messages yet.</source>
        <translation>你的对话中还没有消息。</translation>
    </message>
    <message>
        <source>The sweep values must be numbers separated by commas.</source>
        <translation>扫描取值必须是用逗号分隔的数字。</translation>
    </message>
    <message>
        <source>The percentiles must be numbers separated by commas, e.g. 50, 90, 99.</source>
        <translation>百分位必须是用逗号分隔的数字，例如 50, 90, 99。</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>正在开始…</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Run %1 of %2: %3</source>
        <translation>第 %1/%2 个运行：%3</translation>
    </message>
    <message>
        <source>%1 of %2 requests done</source>
        <translation>已完成 %1/%2 个请求</translation>
    </message>
    <message>
        <source>Elapsed %1 · about %2 left</source>
        <translation>已用 %1 · 约剩 %2</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message numerus="yes">
        <source>Done: %n run(s) stored.</source>
        <translation>
            <numerusform>完成：已保存 %n 个运行。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Stopped: %1 (%n run(s) stored).</source>
        <translation>
            <numerusform>已停止：%1（已保存 %n 个运行）。</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Benchmark report</source>
        <translation>基准测试报告</translation>
    </message>
</context>
<context>
    <name>llmwb::ChartsPanel</name>
    <message>
        <source>Throughput (tokens/s)</source>
        <translation>吞吐量（词元/秒）</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>KV cache usage (%)</source>
        <translation>KV 缓存占用（%）</translation>
    </message>
    <message>
        <source>Time to first token (ms)</source>
        <translation>首词元延迟（毫秒）</translation>
    </message>
    <message>
        <source>The last %1 seconds; the x axis counts seconds before the latest update.</source>
        <translation>最近 %1 秒；横轴为距最近一次更新的秒数。</translation>
    </message>
    <message>
        <source>generation</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>prompt</source>
        <translation>提示</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>used blocks</source>
        <translation>已用块</translation>
    </message>
    <message>
        <source>per request</source>
        <translation>每个请求</translation>
    </message>
    <message>
        <source>Unavailable: %1 is not exposed by this server&apos;s /metrics.</source>
        <translation>不可用：此服务器的 /metrics 未提供%1。</translation>
    </message>
    <message>
        <source>Source: %1 (its /metrics, every 1.5 s)</source>
        <translation>来源：%1（其 /metrics，每 1.5 秒）</translation>
    </message>
    <message>
        <source>Last scrape failed: %1</source>
        <translation>上次抓取失败：%1</translation>
    </message>
    <message>
        <source>generation throughput</source>
        <translation>生成吞吐量</translation>
    </message>
    <message>
        <source>prompt throughput</source>
        <translation>提示吞吐量</translation>
    </message>
    <message>
        <source>running requests</source>
        <translation>运行中的请求</translation>
    </message>
    <message>
        <source>waiting requests</source>
        <translation>等待中的请求</translation>
    </message>
    <message>
        <source>KV cache usage</source>
        <translation>KV 缓存使用率</translation>
    </message>
    <message>
        <source>time to first token</source>
        <translation>首 token 延迟</translation>
    </message>
    <message>
        <source>mean per scrape</source>
        <translation>每次抓取的平均值</translation>
    </message>
</context>
<context>
    <name>llmwb::ChatBackendBox</name>
    <message>
        <source>Local model</source>
        <translation>本地模型</translation>
    </message>
    <message>
        <source>Chat backend:</source>
        <translation>聊天后端：</translation>
    </message>
    <message>
        <source>Endpoints…</source>
        <translation>端点…</translation>
    </message>
    <message>
        <source>Add, edit or remove OpenAI-compatible endpoints (vLLM, SGLang, llama.cpp&apos;s server, Ollama, llmwb serve)</source>
        <translation>添加、编辑或删除 OpenAI 兼容端点（vLLM、SGLang、llama.cpp 服务器、Ollama、llmwb serve）</translation>
    </message>
</context>
<context>
    <name>llmwb::ChatController</name>
    <message>
        <source>This conversation is still generating; stop it first.</source>
        <translation>此对话仍在生成中，请先停止。</translation>
    </message>
    <message>
        <source>The conversation no longer exists.</source>
        <translation>该对话已不存在。</translation>
    </message>
    <message>
        <source>Only an answer can be regenerated.</source>
        <translation>只能重新生成回答。</translation>
    </message>
    <message>
        <source>Only your own messages can be edited.</source>
        <translation>只能编辑你自己的消息。</translation>
    </message>
    <message>
        <source>Stop the generation before deleting its message.</source>
        <translation>请先停止生成，再删除该消息。</translation>
    </message>
</context>
<context>
    <name>llmwb::ChatDatabaseStartup</name>
    <message>
        <source>LLM Workbench</source>
        <translation>LLM 工作台</translation>
    </message>
    <message>
        <source>%1

Only one LLM Workbench can use a data folder at a time (two would mix their messages in the same conversations). Switch to the one that is running, or start this one with another folder: --data-dir DIR.</source>
        <translation>%1

同一数据文件夹一次只能由一个 LLM 工作台使用（两个实例会把各自的消息混进同一对话）。请切换到正在运行的那个，或用另一个文件夹启动本实例：--data-dir 目录。</translation>
    </message>
    <message>
        <source>%1

You can open it read-only to read your chats: sending, editing and deleting are disabled. Or quit, make the file and its folder writable, and start again.</source>
        <translation>%1

可以以只读方式打开以浏览聊天记录：发送、编辑和删除将被禁用。也可以退出，使文件及其所在文件夹可写后再启动。</translation>
    </message>
    <message>
        <source>Open read-only</source>
        <translation>以只读方式打开</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <source>The chat database %1 is damaged: SQLite cannot read all of it.

Salvage copies every conversation and message that can still be read into a new database; the damaged file is kept, renamed with the date and time. You can also open it as it is (some chats may be missing, and changes may fail) or quit and restore a backup.</source>
        <translation>聊天数据库 %1 已损坏：SQLite 无法读取其全部内容。

“抢救”会把仍可读取的所有对话和消息复制到一个新数据库；损坏的文件会保留，并以日期和时间重命名。也可以按原样打开（部分聊天可能缺失，修改可能失败），或退出并恢复备份。</translation>
    </message>
    <message>
        <source>Salvage</source>
        <translation>抢救</translation>
    </message>
    <message>
        <source>Open as it is</source>
        <translation>按原样打开</translation>
    </message>
    <message>
        <source>The chat database cannot be opened:
%1</source>
        <translation>无法打开聊天数据库：
%1</translation>
    </message>
    <message>
        <source>The chat database cannot be opened:
%1

Chats of this session will not be saved.</source>
        <translation>无法打开聊天数据库：
%1

本次会话的聊天不会被保存。</translation>
    </message>
</context>
<context>
    <name>llmwb::ChatView</name>
    <message>
        <source>System prompt &amp;&amp; sampling…</source>
        <translation>系统提示词和采样…</translation>
    </message>
    <message>
        <source>System prompt and sampling parameters of this conversation</source>
        <translation>此对话的系统提示词和采样参数</translation>
    </message>
    <message>
        <source>Type a message. Enter sends, Shift+Enter starts a new line.</source>
        <translation>输入消息，按 Enter 发送，按 Shift+Enter 换行。</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Send the message (Enter)</source>
        <translation>发送消息（Enter）</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Stop generating (Esc)</source>
        <translation>停止生成（Esc）</translation>
    </message>
    <message>
        <source>No conversation</source>
        <translation>没有对话</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Start a new chat (Ctrl+N) or pick one from Conversations.</source>
        <translation>开始新对话（Ctrl+N），或从“对话”面板中选择一个。</translation>
    </message>
    <message>
        <source>Type a message below to start.</source>
        <translation>在下方输入消息即可开始。</translation>
    </message>
    <message>
        <source>Sending is disabled: %1</source>
        <translation>发送已禁用：%1</translation>
    </message>
</context>
<context>
    <name>llmwb::ConversationListModel</name>
    <message>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>%1
Updated %2</source>
        <translation>%1
更新于 %2</translation>
    </message>
    <message>
        <source>Generating an answer…</source>
        <translation>正在生成回答…</translation>
    </message>
</context>
<context>
    <name>llmwb::ConversationSettingsDialog</name>
    <message>
        <source>Template default</source>
        <translation>模板默认</translation>
    </message>
    <message>
        <source>On</source>
        <translation>开</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>enable_thinking for models whose chat template has it (Qwen3)</source>
        <translation>用于聊天模板支持 enable_thinking 的模型（Qwen3）</translation>
    </message>
    <message>
        <source>no cap</source>
        <translation>不限</translation>
    </message>
    <message>
        <source>Thinking tokens after which &lt;/think&gt; is forced (models with &lt;think&gt; tokens only)</source>
        <translation>思考 token 数达到此值后强制输出 &lt;/think&gt;（仅限有 &lt;think&gt; token 的模型）</translation>
    </message>
    <message>
        <source>Thinking</source>
        <translation>思考</translation>
    </message>
    <message>
        <source>Thinking budget (tokens)</source>
        <translation>思考预算（token）</translation>
    </message>
    <message>
        <source>Conversation settings</source>
        <translation>对话设置</translation>
    </message>
    <message>
        <source>Optional instructions given to the model before the chat</source>
        <translation>在对话开始前提供给模型的可选指令</translation>
    </message>
    <message>
        <source>0 picks the most likely token every time (greedy)</source>
        <translation>为 0 时每次选择概率最高的词元（贪心解码）</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>random</source>
        <translation>随机</translation>
    </message>
    <message>
        <source>Title</source>
        <translation>标题</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>Repetition penalty</source>
        <translation>重复惩罚</translation>
    </message>
    <message>
        <source>Presence penalty</source>
        <translation>存在惩罚</translation>
    </message>
    <message>
        <source>Frequency penalty</source>
        <translation>频率惩罚</translation>
    </message>
    <message>
        <source>Max new tokens</source>
        <translation>最大生成词元数</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
</context>
<context>
    <name>llmwb::ConversationStore</name>
    <message>
        <source>Chat storage: %1</source>
        <translation>聊天存储：%1</translation>
    </message>
    <message>
        <source>no conversation %1</source>
        <translation>不存在对话 %1</translation>
    </message>
    <message>
        <source>no message %1</source>
        <translation>不存在消息 %1</translation>
    </message>
    <message>
        <source>cannot restore message %1: its conversation is gone</source>
        <translation>无法恢复消息 %1：其所属对话已不存在</translation>
    </message>
</context>
<context>
    <name>llmwb::ConversationsPanel</name>
    <message>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Search all conversations…</source>
        <translation>搜索全部对话…</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>重命名</translation>
    </message>
</context>
<context>
    <name>llmwb::Database</name>
    <message>
        <source>Chat database %1: %2 (%3)</source>
        <translation>聊天数据库 %1：%2（%3）</translation>
    </message>
    <message>
        <source>a statement failed</source>
        <translation>语句执行失败</translation>
    </message>
    <message>
        <source>cannot create the folder</source>
        <translation>无法创建文件夹</translation>
    </message>
    <message>
        <source>not a file</source>
        <translation>不是文件</translation>
    </message>
    <message>
        <source>cannot open</source>
        <translation>无法打开</translation>
    </message>
    <message>
        <source>not a usable SQLite database</source>
        <translation>不是可用的 SQLite 数据库</translation>
    </message>
    <message>
        <source>cannot enable WAL</source>
        <translation>无法启用 WAL</translation>
    </message>
    <message>
        <source>written by a newer version of the app</source>
        <translation>由更新版本的应用写入</translation>
    </message>
    <message>
        <source>%1 [migration to %2]</source>
        <translation>%1［迁移到版本 %2］</translation>
    </message>
    <message>
        <source>the file cannot be written (%1)</source>
        <translation>文件无法写入（%1）</translation>
    </message>
    <message>
        <source>its folder %1 cannot be written (%2), and SQLite keeps its journal files there</source>
        <translation>其所在文件夹 %1 无法写入（%2），而 SQLite 需要在那里保存日志文件</translation>
    </message>
    <message>
        <source>The chat database %1 is read-only: %2.</source>
        <translation>聊天数据库 %1 是只读的：%2。</translation>
    </message>
    <message>
        <source>no such file</source>
        <translation>文件不存在</translation>
    </message>
    <message>
        <source>cannot read</source>
        <translation>无法读取</translation>
    </message>
    <message>
        <source>written by another version of the app; it cannot be upgraded while read-only</source>
        <translation>由其他版本的应用写入；只读时无法升级</translation>
    </message>
    <message>
        <source>read-only</source>
        <translation>只读</translation>
    </message>
    <message>
        <source>no answer</source>
        <translation>无结果</translation>
    </message>
</context>
<context>
    <name>llmwb::DbSalvage</name>
    <message>
        <source>Nothing was salvaged: %1</source>
        <translation>未能抢救任何内容：%1</translation>
    </message>
    <message>
        <source>Recovered %1 conversation(s) and %2 message(s); %3 message(s) could not be read.</source>
        <translation>已恢复 %1 个对话和 %2 条消息；%3 条消息无法读取。</translation>
    </message>
    <message>
        <source>%1 conversation(s) whose title was lost are named &quot;Recovered conversation&quot;.</source>
        <translation>%1 个丢失标题的对话被命名为“恢复的对话”。</translation>
    </message>
    <message>
        <source>The table %1 could not be read to its end.</source>
        <translation>表 %1 未能完整读取。</translation>
    </message>
    <message>
        <source>The damaged file is kept as %1.</source>
        <translation>损坏的文件已保留为 %1。</translation>
    </message>
    <message>
        <source>%1 exists already</source>
        <translation>%1 已存在</translation>
    </message>
    <message>
        <source>the damaged file cannot be read at all (%1)</source>
        <translation>损坏的文件完全无法读取（%1）</translation>
    </message>
    <message>
        <source>Recovered conversation %1</source>
        <translation>恢复的对话 %1</translation>
    </message>
    <message>
        <source>cannot rename %1 to %2</source>
        <translation>无法将 %1 重命名为 %2</translation>
    </message>
</context>
<context>
    <name>llmwb::EnginePanel</name>
    <message>
        <source>KV cache blocks (hatched: shared, grey: cached)</source>
        <translation>KV 缓存块（斜线：共享，灰色：已缓存）</translation>
    </message>
    <message>
        <source>Tokens per step, √ scale (solid: prefill, light: decode, red: preemption)</source>
        <translation>每步词元数，平方根刻度（实色：预填充，浅色：解码，红色：抢占）</translation>
    </message>
    <message>
        <source>No model loaded.</source>
        <translation>未加载模型。</translation>
    </message>
    <message>
        <source>KV %1% of %2 blocks · %3 running / %4 waiting · %5 tokens/s · step %6</source>
        <translation>KV 占用 %1%（共 %2 块）· %3 运行中 / %4 等待中 · %5 词元/秒 · 第 %6 步</translation>
    </message>
    <message>
        <source>Blocks &amp;&amp; steps</source>
        <translation>块与步骤</translation>
    </message>
    <message>
        <source>Charts</source>
        <translation>图表</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>Speculation</source>
        <translation>推测解码</translation>
    </message>
    <message>
        <source>The KV block map and the batch timeline are not available for a remote endpoint (%1): its server does not expose them. The Charts tab shows what its /metrics does.</source>
        <translation>远程端点（%1）没有 KV 块图和批次时间线：其服务器不提供这些信息。“图表”标签页显示其 /metrics 提供的数据。</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>Remote endpoint %1: waiting for its /metrics…</source>
        <translation>远程端点 %1：正在等待其 /metrics…</translation>
    </message>
    <message>
        <source>Remote endpoint %1: no figures (%2)</source>
        <translation>远程端点 %1：无数据（%2）</translation>
    </message>
    <message>
        <source>Remote endpoint %1 · KV %2 · %3 running / %4 waiting · %5 tokens/s</source>
        <translation>远程端点 %1 · KV %2 · %3 个运行 / %4 个等待 · %5 token/秒</translation>
    </message>
</context>
<context>
    <name>llmwb::EngineWorker</name>
    <message>
        <source>the demo model</source>
        <translation>演示模型</translation>
    </message>
    <message>
        <source>%1: tokenizer: %2</source>
        <translation>%1：分词器：%2</translation>
    </message>
    <message>
        <source>%1: KV cache: %2</source>
        <translation>%1：KV 缓存：%2</translation>
    </message>
    <message>
        <source>The chat template failed: %1</source>
        <translation>对话模板出错：%1</translation>
    </message>
    <message>
        <source>The chat template failed: out of memory</source>
        <translation>对话模板出错：内存不足</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>尚未加载模型。</translation>
    </message>
    <message>
        <source>Writing the demo model</source>
        <translation>正在写入演示模型</translation>
    </message>
    <message>
        <source>Reading the model file</source>
        <translation>正在读取模型文件</translation>
    </message>
    <message>
        <source>Validating the model</source>
        <translation>正在校验模型</translation>
    </message>
    <message>
        <source>%1: the model has no layers or no vocabulary</source>
        <translation>%1：模型没有层或没有词表</translation>
    </message>
    <message>
        <source>Loading the tokenizer</source>
        <translation>正在加载分词器</translation>
    </message>
    <message>
        <source>Preparing the weights</source>
        <translation>正在准备权重</translation>
    </message>
    <message>
        <source>Planning the KV cache</source>
        <translation>正在规划 KV 缓存</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>CUDA is unavailable: %1</source>
        <translation>CUDA 不可用：%1</translation>
    </message>
    <message>
        <source>The backend failed: %1</source>
        <translation>后端出错：%1</translation>
    </message>
    <message>
        <source>%1. Reload the model to go on.</source>
        <translation>%1。请重新加载模型后继续。</translation>
    </message>
    <message>
        <source>unknown error</source>
        <translation>未知错误</translation>
    </message>
    <message>
        <source>the running requests need %1 KV blocks (%2)</source>
        <translation>运行中的请求需要 %1 个 KV 块（%2）</translation>
    </message>
    <message>
        <source>the weights and the workspace leave no room for one KV block (%1)</source>
        <translation>权重和工作区之外已容不下一个 KV 块（%1）</translation>
    </message>
    <message>
        <source>GPU memory utilization %1 is refused: %2, and even 1.0 is not enough.</source>
        <translation>已拒绝 GPU 显存利用率 %1：%2，即使 1.0 也不够。</translation>
    </message>
    <message>
        <source>GPU memory utilization %1 is refused: %2. The smallest value that works now is %3.</source>
        <translation>已拒绝 GPU 显存利用率 %1：%2。当前可用的最小值为 %3。</translation>
    </message>
    <message>
        <source>The conversation (%1 tokens) no longer fits the context of the model (%2 tokens); start a new chat or delete messages.</source>
        <translation>对话（%1 个词元）已超出模型的上下文长度（%2 个词元）；请开始新对话或删除一些消息。</translation>
    </message>
    <message>
        <source>The conversation (%1 tokens) no longer fits the KV cache pool (%2 tokens; the model&apos;s context is %3): raise GPU memory utilization in the Tuning dock, or start a new chat.</source>
        <translation>对话（%1 个词元）已放不进 KV 缓存池（%2 个词元；模型的上下文长度为 %3）：请在调优面板中调高 GPU 显存利用率，或开始新对话。</translation>
    </message>
    <message>
        <source>A benchmark is already running.</source>
        <translation>已有基准测试在运行。</translation>
    </message>
    <message>
        <source>The benchmark has no prompts.</source>
        <translation>基准测试没有提示词。</translation>
    </message>
    <message>
        <source>Reading the machine and hashing the model file</source>
        <translation>正在读取机器信息并计算模型文件哈希</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Cancelled by the user.</source>
        <translation>已被用户取消。</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <source>Waiting for the chats that are generating to finish</source>
        <translation>正在等待生成中的对话结束</translation>
    </message>
    <message>
        <source>Run &quot;%1&quot; failed: %2</source>
        <translation>运行“%1”失败：%2</translation>
    </message>
    <message>
        <source>fp8 scales: calibration failed (%1); every layer uses the scale 1.0.</source>
        <translation>fp8 缩放因子：校准失败（%1）；每一层都使用缩放因子 1.0。</translation>
    </message>
    <message>
        <source>no layers</source>
        <translation>没有层</translation>
    </message>
    <message>
        <source>fp8 scales calibrated per layer on a built-in text: K %1 to %2, V %3 to %4 (stored value = x / scale).</source>
        <translation>fp8 缩放因子已在内置文本上逐层校准：K 为 %1 至 %2，V 为 %3 至 %4（存储值 = x / 缩放因子）。</translation>
    </message>
    <message>
        <source>The %1 backend cannot store the KV cache as %2; it uses %3.</source>
        <translation>%1 后端无法以 %2 存储 KV 缓存，改用 %3。</translation>
    </message>
    <message>
        <source>The KV cache cannot be stored as %1 (%2 is used): %3</source>
        <translation>KV 缓存无法以 %1 存储（使用 %2）：%3</translation>
    </message>
    <message>
        <source>The KV cache stays %1: %2</source>
        <translation>KV 缓存保持为 %1：%2</translation>
    </message>
    <message>
        <source>the %1 backend cannot store it as %2.</source>
        <translation>%1 后端无法以 %2 存储它。</translation>
    </message>
    <message>
        <source>Think harder is already running.</source>
        <translation>深度思考已在运行。</translation>
    </message>
    <message>
        <source>A benchmark is running.</source>
        <translation>基准测试正在运行。</translation>
    </message>
    <message>
        <source>This model has no &lt;think&gt; and &lt;/think&gt; tokens: thinking budgets do not apply.</source>
        <translation>此模型没有 &lt;think&gt; 和 &lt;/think&gt; token：思考预算不适用。</translation>
    </message>
    <message>
        <source>The chat template failed on a question: %1</source>
        <translation>聊天模板处理题目时失败：%1</translation>
    </message>
    <message>
        <source>The model was replaced.</source>
        <translation>模型已被替换。</translation>
    </message>
    <message>
        <source>Question %1: %2</source>
        <translation>第 %1 题：%2</translation>
    </message>
    <message>
        <source>Running %1</source>
        <translation>正在运行 %1</translation>
    </message>
    <message>
        <source>The backend failed.</source>
        <translation>后端失败。</translation>
    </message>
    <message>
        <source>Think harder is running.</source>
        <translation>深度思考正在运行。</translation>
    </message>
</context>
<context>
    <name>llmwb::FirstRunDialog</name>
    <message>
        <source>Add a folder of models</source>
        <translation>添加模型文件夹</translation>
    </message>
    <message>
        <source>&lt;b&gt;CPU&lt;/b&gt; %1 — %2 cores, %3 threads, SIMD %4&lt;br&gt;</source>
        <translation>&lt;b&gt;处理器&lt;/b&gt; %1 — %2 核，%3 线程，SIMD %4&lt;br&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;Memory&lt;/b&gt; %1 installed, %2 available now&lt;br&gt;</source>
        <translation>&lt;b&gt;内存&lt;/b&gt; 共 %1，当前可用 %2&lt;br&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;GPU&lt;/b&gt; %1 — %2, compute capability %3, driver %4&lt;br&gt;</source>
        <translation>&lt;b&gt;GPU&lt;/b&gt; %1 — %2，计算能力 %3，驱动 %4&lt;br&gt;</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>&lt;b&gt;GPU&lt;/b&gt; none: the engine runs on the CPU (%1)&lt;br&gt;</source>
        <translation>&lt;b&gt;GPU&lt;/b&gt; 无：引擎在 CPU 上运行（%1）&lt;br&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;System&lt;/b&gt; %1, %2</source>
        <translation>&lt;b&gt;系统&lt;/b&gt; %1，%2</translation>
    </message>
    <message>
        <source>error: %1</source>
        <translation>错误：%1</translation>
    </message>
    <message>
        <source>needs %1 (weights %2 + KV %3 + overhead %4) of %5</source>
        <translation>需要 %1（权重 %2 + KV %3 + 开销 %4），可用 %5</translation>
    </message>
    <message numerus="yes">
        <source>fits — KV %1, up to %n sequence(s), gpu_memory_utilization %2</source>
        <translation>
            <numerusform>装得下 — KV %1，最多 %n 个序列，gpu_memory_utilization %2</numerusform>
        </translation>
    </message>
    <message>
        <source>too big — %1 fits with %2 context</source>
        <translation>太大 — %1 可装下 %2 上下文</translation>
    </message>
    <message>
        <source>does not fit this machine</source>
        <translation>本机装不下</translation>
    </message>
    <message>
        <source>against %1 of GPU memory</source>
        <translation>对比 %1 显存</translation>
    </message>
    <message>
        <source>against %1 of available RAM</source>
        <translation>对比 %1 可用内存</translation>
    </message>
    <message>
        <source>Welcome — this machine and its models</source>
        <translation>欢迎 — 本机与已有的模型</translation>
    </message>
    <message>
        <source>No models found in LM Studio&apos;s, GPT4All&apos;s, Ollama&apos;s or the Hugging Face cache&apos;s folders. Add a folder, or open a model from the File menu.</source>
        <translation>在 LM Studio、GPT4All、Ollama 和 Hugging Face 缓存的文件夹中未找到模型。请添加文件夹，或从“文件”菜单打开模型。</translation>
    </message>
    <message>
        <source>Context (tokens):</source>
        <translation>上下文（词元）：</translation>
    </message>
    <message>
        <source>Sequences:</source>
        <translation>序列数：</translation>
    </message>
    <message>
        <source>Add folder…</source>
        <translation>添加文件夹…</translation>
    </message>
    <message>
        <source>Search again</source>
        <translation>重新搜索</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation>架构</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Tensor types</source>
        <translation>张量类型</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>Fits?</source>
        <translation>能否装下</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) found (headers read, nothing loaded). Double-click one to load it.</source>
        <translation>
            <numerusform>找到 %n 个模型（只读取了文件头，未加载）。双击即可加载。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>llmwb::InstanceLock</name>
    <message>
        <source>The data folder %1 is in use by another LLM Workbench (process %2 on %3).</source>
        <translation>数据文件夹 %1 正被另一个 LLM 工作台使用（%3 上的进程 %2）。</translation>
    </message>
    <message>
        <source>this computer</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>The data folder %1 is in use by another LLM Workbench.</source>
        <translation>数据文件夹 %1 正被另一个 LLM 工作台使用。</translation>
    </message>
    <message>
        <source>Cannot create the lock file %1: permission denied or a read-only folder.</source>
        <translation>无法创建锁文件 %1：权限不足或文件夹只读。</translation>
    </message>
    <message>
        <source>Cannot create the lock file %1.</source>
        <translation>无法创建锁文件 %1。</translation>
    </message>
</context>
<context>
    <name>llmwb::KvBlockMapView</name>
    <message>
        <source>free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>cached (free)</source>
        <translation>已缓存（空闲）</translation>
    </message>
    <message>
        <source>in use</source>
        <translation>使用中</translation>
    </message>
    <message>
        <source>Block %1 (%2)</source>
        <translation>块 %1（%2）</translation>
    </message>
    <message>
        <source>Ref count: %1</source>
        <translation>引用计数：%1</translation>
    </message>
    <message>
        <source>Tokens: %1 / %2</source>
        <translation>词元：%1 / %2</translation>
    </message>
    <message>
        <source>Owner: request #%1</source>
        <translation>所有者：请求 #%1</translation>
    </message>
    <message>
        <source>Hash: %1…</source>
        <translation>哈希：%1…</translation>
    </message>
    <message>
        <source>No KV cache yet: load a model.</source>
        <translation>尚无 KV 缓存：请加载模型。</translation>
    </message>
    <message>
        <source>Blocks %1–%2 (1 cell = %3 blocks)</source>
        <translation>块 %1–%2（1 格 = %3 块）</translation>
    </message>
    <message>
        <source>In use: %1 (shared: %2)</source>
        <translation>使用中：%1（共享：%2）</translation>
    </message>
    <message>
        <source>Cached (free): %1</source>
        <translation>已缓存（空闲）：%1</translation>
    </message>
    <message>
        <source>Free: %1</source>
        <translation>空闲：%1</translation>
    </message>
    <message>
        <source>Tokens: about %1 / %2</source>
        <translation>词元：约 %1 / %2</translation>
    </message>
    <message>
        <source>Owners: %1</source>
        <translation>所有者：%1</translation>
    </message>
    <message>
        <source>1 cell = %1 blocks (hover for the mix)</source>
        <translation>1 格 = %1 块（悬停查看构成）</translation>
    </message>
    <message>
        <source>Blocks 0–%1 of %2 (the rest are free)</source>
        <translation>显示块 0–%1，共 %2 块（其余均空闲）</translation>
    </message>
</context>
<context>
    <name>llmwb::LocalServer</name>
    <message>
        <source>Cannot start the Local server: &quot;%1&quot; is not a host name or address this machine can resolve.</source>
        <translation>无法启动本地服务器：“%1”不是本机能够解析的主机名或地址。</translation>
    </message>
    <message>
        <source>Cannot start the Local server: port %1 on %2 is in use by another program. Choose another port.</source>
        <translation>无法启动本地服务器：%2 上的端口 %1 已被其他程序占用。请换一个端口。</translation>
    </message>
    <message>
        <source>Cannot start the Local server: %1 is not an address of this machine.</source>
        <translation>无法启动本地服务器：%1 不是本机的地址。</translation>
    </message>
    <message>
        <source>Cannot start the Local server: port %1 needs administrator rights; choose one above 1023.</source>
        <translation>无法启动本地服务器：端口 %1 需要管理员权限；请选择大于 1023 的端口。</translation>
    </message>
    <message>
        <source>Cannot start the Local server on %1:%2: %3</source>
        <translation>无法在 %1:%2 上启动本地服务器：%3</translation>
    </message>
    <message>
        <source>the bind failed</source>
        <translation>绑定失败</translation>
    </message>
</context>
<context>
    <name>llmwb::LocalServerLog</name>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Client</source>
        <translation>客户端</translation>
    </message>
    <message>
        <source>Request</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示</translation>
    </message>
    <message>
        <source>Completion</source>
        <translation>补全</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>耗时</translation>
    </message>
    <message>
        <source>Finish</source>
        <translation>结束原因</translation>
    </message>
</context>
<context>
    <name>llmwb::LocalServerPanel</name>
    <message>
        <source>Kept in the app&apos;s settings file, which only you can read.</source>
        <translation>保存在应用的设置文件中，只有你能读取。</translation>
    </message>
    <message>
        <source>Listening on %1. Requests join the same batch as the chats.</source>
        <translation>正在监听 %1。请求与聊天加入同一批次。</translation>
    </message>
    <message>
        <source>Base URL: %1/v1</source>
        <translation>基础 URL：%1/v1</translation>
    </message>
    <message>
        <source>Stopped. Turn it on to serve the OpenAI API (/v1/chat/completions, /v1/completions, /v1/models, /metrics) from the loaded model.</source>
        <translation>已停止。开启后将用已加载的模型提供 OpenAI API（/v1/chat/completions、/v1/completions、/v1/models、/metrics）。</translation>
    </message>
    <message>
        <source>Warning: %1 is reachable from other machines, and no API key is set: anyone on the network can use the model.</source>
        <translation>警告：其他机器可以访问 %1，且未设置 API 密钥：网络上的任何人都能使用该模型。</translation>
    </message>
    <message>
        <source>Warning: %1 is reachable from other machines (they need the API key).</source>
        <translation>警告：其他机器可以访问 %1（需要 API 密钥）。</translation>
    </message>
    <message>
        <source>Local server</source>
        <translation>本地服务器</translation>
    </message>
    <message>
        <source>Serve the OpenAI API (Local server)</source>
        <translation>提供 OpenAI API（本地服务器）</translation>
    </message>
    <message>
        <source>Host:</source>
        <translation>主机：</translation>
    </message>
    <message>
        <source>Port:</source>
        <translation>端口：</translation>
    </message>
    <message>
        <source>API key:</source>
        <translation>API 密钥：</translation>
    </message>
    <message>
        <source>none: no key needed</source>
        <translation>留空：无需密钥</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <source>Show or hide the API key</source>
        <translation>显示或隐藏 API 密钥</translation>
    </message>
    <message>
        <source>Copy curl example</source>
        <translation>复制 curl 示例</translation>
    </message>
    <message>
        <source>Copies a curl command that streams a chat answer from this server</source>
        <translation>复制一条从本服务器流式获取聊天回答的 curl 命令</translation>
    </message>
    <message>
        <source>127.0.0.1: this machine only. 0.0.0.0: every network interface.</source>
        <translation>127.0.0.1：仅本机。0.0.0.0：所有网络接口。</translation>
    </message>
    <message>
        <source>any free port</source>
        <translation>任意空闲端口</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>请求</translation>
    </message>
</context>
<context>
    <name>llmwb::MainWindow</name>
    <message>
        <source>&amp;Find models and check what fits…</source>
        <translation>查找模型并检查能否装下(&amp;F)…</translation>
    </message>
    <message>
        <source>This machine, the models it already has (LM Studio, GPT4All, Ollama, Hugging Face) and whether they fit its memory</source>
        <translation>本机、已有的模型（LM Studio、GPT4All、Ollama、Hugging Face）以及它们能否装入内存</translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation>删除对话</translation>
    </message>
    <message>
        <source>Delete this conversation and all its messages?</source>
        <translation>删除此对话及其全部消息？</translation>
    </message>
    <message>
        <source>About LLM Workbench</source>
        <translation>关于 LLM 工作台</translation>
    </message>
    <message>
        <source>&lt;b&gt;LLM Workbench&lt;/b&gt; %1&lt;br&gt;Chat with local language models and watch the inference engine work.</source>
        <translation>&lt;b&gt;LLM 工作台&lt;/b&gt; %1&lt;br&gt;与本地语言模型对话，同时观察推理引擎的运行。</translation>
    </message>
    <message>
        <source>LLM Workbench</source>
        <translation>LLM 工作台</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>Tuning</source>
        <translation>调优</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Chat</source>
        <translation>对话(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Theme</source>
        <translation>主题(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation>设置(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;New chat</source>
        <translation>新对话(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Open model…</source>
        <translation>打开模型(&amp;O)…</translation>
    </message>
    <message>
        <source>Export conversation as &amp;Markdown…</source>
        <translation>将对话导出为 &amp;Markdown…</translation>
    </message>
    <message>
        <source>Export conversation as &amp;JSON…</source>
        <translation>将对话导出为 &amp;JSON…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Find in conversations</source>
        <translation>在对话中查找(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Send</source>
        <translation>发送(&amp;S)</translation>
    </message>
    <message>
        <source>S&amp;top generating</source>
        <translation>停止生成(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Regenerate last answer</source>
        <translation>重新生成最后的回答(&amp;R)</translation>
    </message>
    <message>
        <source>Conversation &amp;settings…</source>
        <translation>对话设置(&amp;S)…</translation>
    </message>
    <message>
        <source>Follow the &amp;system</source>
        <translation>跟随系统(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation>浅色(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation>深色(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;About LLM Workbench</source>
        <translation>关于 LLM 工作台(&amp;A)</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>模型：%1</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>正在加载模型…</translation>
    </message>
    <message>
        <source>● generating</source>
        <translation>● 生成中</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>The demo model is a bigram model of this project&apos;s own sentences, not a trained model: its answers are silly. Open a real model (File &gt; Open model, or drop a .gguf file here) to chat.</source>
        <translation>演示模型是根据本项目自己的句子统计出的二元语法（bigram）模型，不是训练出来的模型，所以它的回答很滑稽。要正常对话，请打开一个真实模型（文件 &gt; 打开模型，或将 .gguf 文件拖放到此处）。</translation>
    </message>
    <message>
        <source>Could not load the model: %1</source>
        <translation>无法加载模型：%1</translation>
    </message>
    <message>
        <source>Could not export to %1: %2</source>
        <translation>无法导出到 %1：%2</translation>
    </message>
    <message>
        <source>Exported to %1</source>
        <translation>已导出到 %1</translation>
    </message>
    <message>
        <source>conversation</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Export conversation</source>
        <translation>导出对话</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>E&amp;ngine</source>
        <translation>引擎(&amp;N)</translation>
    </message>
    <message>
        <source>Run a &amp;load test (%1 concurrent requests)</source>
        <translation>运行负载测试(&amp;L)（%1 个并发请求）</translation>
    </message>
    <message>
        <source>Sends synthetic requests through the engine to watch batching; their answers are not saved.</source>
        <translation>向引擎发送合成请求以观察批处理；其回答不会保存。</translation>
    </message>
    <message>
        <source>Loading was cancelled.</source>
        <translation>加载已取消。</translation>
    </message>
    <message>
        <source>Cancelled loading %1</source>
        <translation>已取消加载 %1</translation>
    </message>
    <message>
        <source>Message deleted.</source>
        <translation>消息已删除。</translation>
    </message>
    <message>
        <source>Open a model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <source>Open a Hugging Face model folder</source>
        <translation>打开 Hugging Face 模型文件夹</translation>
    </message>
    <message>
        <source>Open a GGUF file, or a Hugging Face folder by its config.json</source>
        <translation>打开 GGUF 文件，或通过 config.json 打开 Hugging Face 文件夹</translation>
    </message>
    <message>
        <source>Open Hugging Face &amp;folder…</source>
        <translation>打开 Hugging Face 文件夹(&amp;F)…</translation>
    </message>
    <message>
        <source>Open a folder with config.json and safetensors</source>
        <translation>打开包含 config.json 和 safetensors 的文件夹</translation>
    </message>
    <message>
        <source>&amp;Rename conversation</source>
        <translation>重命名对话(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Undo delete message</source>
        <translation>撤销删除消息(&amp;U)</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>Put the deleted message back (Ctrl+Z)</source>
        <translation>恢复已删除的消息（Ctrl+Z）</translation>
    </message>
    <message>
        <source>Model: %1 (loading %2 failed)</source>
        <translation>模型：%1（加载 %2 失败）</translation>
    </message>
    <message>
        <source>Could not load %1: %2
%3 is still loaded and answers.</source>
        <translation>无法加载 %1：%2
%3 仍处于加载状态并继续回答。</translation>
    </message>
    <message>
        <source>No model: loading failed</source>
        <translation>无模型：加载失败</translation>
    </message>
    <message>
        <source>No model: loading %1 failed</source>
        <translation>无模型：加载 %1 失败</translation>
    </message>
    <message>
        <source>Loading %1… (%2 stays until it is ready)</source>
        <translation>正在加载 %1…（在其就绪前继续使用 %2）</translation>
    </message>
    <message>
        <source>● load test</source>
        <translation>● 负载测试</translation>
    </message>
    <message>
        <source>● busy</source>
        <translation>● 忙碌</translation>
    </message>
    <message>
        <source>Could not restore the message: %1</source>
        <translation>无法恢复消息：%1</translation>
    </message>
    <message>
        <source>Message restored.</source>
        <translation>消息已恢复。</translation>
    </message>
    <message numerus="yes">
        <source>● benchmark (%n chat(s) wait)</source>
        <translation>
            <numerusform>● 基准测试（%n 个对话等待中）</numerusform>
        </translation>
    </message>
    <message>
        <source>● benchmark</source>
        <translation>● 基准测试</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Benchmark</source>
        <translation>基准测试</translation>
    </message>
    <message>
        <source>&amp;Benchmark…</source>
        <translation>基准测试(&amp;B)…</translation>
    </message>
    <message>
        <source>&amp;Import benchmark report…</source>
        <translation>导入基准测试报告(&amp;I)…</translation>
    </message>
    <message>
        <source>E&amp;xport benchmark report…</source>
        <translation>导出基准测试报告(&amp;X)…</translation>
    </message>
    <message>
        <source>Run a &amp;load test (%1 requests at once)</source>
        <translation>运行负载测试(&amp;L)（一次 %1 个请求）</translation>
    </message>
    <message>
        <source>A benchmark preset: 16 synthetic requests at once, with progress, figures, and the run kept in the Benchmark page.</source>
        <translation>一个基准测试预设：一次发出 16 个合成请求，显示进度和指标，运行记录保存在基准测试页。</translation>
    </message>
    <message>
        <source>Export benchmark report</source>
        <translation>导出基准测试报告</translation>
    </message>
    <message>
        <source>Check the runs to export in the Benchmark page&apos;s Runs tab.</source>
        <translation>请在基准测试页的“运行记录”中勾选要导出的运行。</translation>
    </message>
    <message>
        <source>Benchmark reports (*.zip)</source>
        <translation>基准测试报告 (*.zip)</translation>
    </message>
    <message>
        <source>The report could not be written:
%1</source>
        <translation>无法写入报告：
%1</translation>
    </message>
    <message numerus="yes">
        <source>Exported %n run(s) to %1</source>
        <translation>
            <numerusform>已将 %n 个运行导出到 %1</numerusform>
        </translation>
    </message>
    <message>
        <source>Import benchmark report</source>
        <translation>导入基准测试报告</translation>
    </message>
    <message>
        <source>The report could not be imported:
%1</source>
        <translation>无法导入报告：
%1</translation>
    </message>
    <message>
        <source>Imported %1</source>
        <translation>已导入 %1</translation>
    </message>
    <message numerus="yes">
        <source>%n answer(s) could not be saved in the chat database: %1

If you quit now, their text is lost. Make room (or copy the text) and choose Retry saving.</source>
        <translation>
            <numerusform>%n 条回答无法保存到聊天数据库：%1

如果现在退出，这些文本将丢失。请腾出空间（或先复制文本），然后选择“重试保存”。</numerusform>
        </translation>
    </message>
    <message>
        <source>Retry saving</source>
        <translation>重试保存</translation>
    </message>
    <message>
        <source>Quit and lose them</source>
        <translation>退出并丢弃</translation>
    </message>
    <message>
        <source>&amp;Model</source>
        <translation>模型(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Quantize…</source>
        <translation>量化(&amp;Q)…</translation>
    </message>
    <message>
        <source>Write a quantized GGUF (Q8_0, Q4_K_M, …) of a float model</source>
        <translation>将浮点模型写成量化的 GGUF（Q8_0、Q4_K_M 等）</translation>
    </message>
    <message>
        <source>A model is being quantized. Quit and stop it? (No half-written file is left behind.)</source>
        <translation>正在量化模型。要退出并停止吗？（不会留下写了一半的文件。）</translation>
    </message>
    <message>
        <source>Remote endpoints…</source>
        <translation>远程端点…</translation>
    </message>
    <message>
        <source>Chat: %1 (remote endpoint)</source>
        <translation>聊天：%1（远程端点）</translation>
    </message>
    <message>
        <source>Think harder</source>
        <translation>深度思考</translation>
    </message>
    <message>
        <source>&amp;Think harder…</source>
        <translation>深度思考(&amp;T)…</translation>
    </message>
    <message>
        <source>Export Think harder report</source>
        <translation>导出深度思考报告</translation>
    </message>
    <message>
        <source>Check the runs to export in the Runs tab.</source>
        <translation>请在“运行记录”标签页中勾选要导出的运行。</translation>
    </message>
    <message>
        <source>Reports (*.zip)</source>
        <translation>报告 (*.zip)</translation>
    </message>
</context>
<context>
    <name>llmwb::MarkdownView</name>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy this code block</source>
        <translation>复制此代码块</translation>
    </message>
</context>
<context>
    <name>llmwb::MemoryPanel</name>
    <message>
        <source>Memory plan</source>
        <translation>内存规划</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>Free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>KV blocks</source>
        <translation>KV 块</translation>
    </message>
    <message>
        <source>Capacity</source>
        <translation>容量</translation>
    </message>
    <message>
        <source>KV-cache dtype</source>
        <translation>KV 缓存数据类型</translation>
    </message>
    <message>
        <source>Weight dtypes</source>
        <translation>权重数据类型</translation>
    </message>
    <message>
        <source>No model loaded.</source>
        <translation>未加载模型。</translation>
    </message>
    <message>
        <source>%1 (%2% of the device)</source>
        <translation>%1（占设备的 %2%）</translation>
    </message>
    <message>
        <source>%1 blocks × %2 tokens, %3 per block</source>
        <translation>%1 块 × %2 个词元，每块 %3</translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation>%1 个词元</translation>
    </message>
    <message>
        <source>Budget</source>
        <translation>预算</translation>
    </message>
    <message>
        <source>Limited by</source>
        <translation>限制因素</translation>
    </message>
    <message>
        <source>%1 · %2 %3</source>
        <translation>%1 · %2 %3</translation>
    </message>
    <message>
        <source>Re-planning the KV pool failed (the previous pool stays): %1</source>
        <translation>重新规划 KV 缓存池失败（保留原缓存池）：%1</translation>
    </message>
    <message>
        <source>%1 = gpu_memory_utilization %2 × %3 of GPU memory</source>
        <translation>%1 = gpu_memory_utilization %2 × %3 显存</translation>
    </message>
    <message>
        <source>%1 = gpu_memory_utilization %2 × %3 of RAM available to the engine</source>
        <translation>%1 = gpu_memory_utilization %2 × 引擎可用内存 %3</translation>
    </message>
    <message>
        <source>%1 (weights, workspace and KV cache as planned)</source>
        <translation>%1（按规划的权重、工作区和 KV 缓存）</translation>
    </message>
    <message>
        <source>Draft model</source>
        <translation>草稿模型</translation>
    </message>
    <message>
        <source>self-q4: %1 of 4-bit weights (RAM) + a KV pool of up to %2, committed as drafts write it</source>
        <translation>self-q4：%1 的 4 位权重（内存）+ 最多 %2 的 KV 缓存池（草稿写入时才实际占用）</translation>
    </message>
    <message>
        <source>none (prompt lookup needs no memory)</source>
        <translation>无（提示查找不占内存）</translation>
    </message>
    <message>
        <source>KV switch</source>
        <translation>KV 类型切换</translation>
    </message>
    <message>
        <source>switching to %1 at the next step (now %2)</source>
        <translation>将在下一步切换到 %1（当前为 %2）</translation>
    </message>
    <message>
        <source>%1, was %2</source>
        <translation>%1，之前为 %2</translation>
    </message>
    <message>
        <source>none since the model was loaded (Tuning dock: KV-cache dtype)</source>
        <translation>模型加载后尚未切换（调优面板：KV 缓存数据类型）</translation>
    </message>
    <message>
        <source>bf16 weight cache</source>
        <translation>bf16 权重缓存</translation>
    </message>
    <message>
        <source>Weight layout</source>
        <translation>权重布局</translation>
    </message>
    <message>
        <source>panels: %1 matrices (%2) rearranged at load, no copy kept</source>
        <translation>面板：加载时重排了 %1 个矩阵（%2），不保留副本</translation>
    </message>
    <message>
        <source>rows, as stored</source>
        <translation>按行，与文件相同</translation>
    </message>
    <message>
        <source>as stored</source>
        <translation>与文件相同</translation>
    </message>
    <message>
        <source>On the CPU, weight matrices of the types with a panel layout (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, F16, BF16) are rearranged once at load into 16-row panels read by both the decode and the batched kernels: nothing is repacked per step, and a token&apos;s result does not depend on what shares its batch. LLMWB_WEIGHT_LAYOUT=rows keeps the file&apos;s order.</source>
        <translation>在 CPU 上，具有面板布局的类型（Q8_0、Q4_0、Q4_K、Q5_K、Q6_K、F16、BF16）的权重矩阵在加载时一次性重排为 16 行的面板，解码和批处理内核都读取它：每一步都无需重新打包，且一个词元的结果与同批的其他请求无关。LLMWB_WEIGHT_LAYOUT=rows 保留文件中的顺序。</translation>
    </message>
    <message>
        <source>none (no quantized matrices)</source>
        <translation>无（没有量化矩阵）</translation>
    </message>
    <message>
        <source>none (CUDA backend only)</source>
        <translation>无（仅 CUDA 后端）</translation>
    </message>
    <message>
        <source>%1 (%2 of %3 matrices)</source>
        <translation>%1（%3 个矩阵中的 %2 个）</translation>
    </message>
    <message>
        <source>bf16 copies of quantized weight matrices, made at load when the memory plan has room after a minimum KV pool (largest first): prefill runs cuBLAS on them instead of dequantizing on every call; decode keeps reading the quantized bytes.</source>
        <translation>量化权重矩阵的 bf16 副本：加载时在保留最小 KV 池后若内存计划仍有余量则创建（从最大的矩阵开始）；预填充直接在副本上运行 cuBLAS，而不是每次调用时反量化；解码仍读取量化字节。</translation>
    </message>
    <message>
        <source>active / total: %1 / %2</source>
        <translation>激活 / 总计：%1 / %2</translation>
    </message>
</context>
<context>
    <name>llmwb::MemoryPlanText</name>
    <message>
        <source>GPU memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>RAM</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>CUDA: %1</source>
        <translation>CUDA：%1</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>CPU: %1</source>
        <translation>CPU：%1</translation>
    </message>
    <message>
        <source>On the CUDA backend the device memory is the GPU&apos;s memory; the KV cache is stored in %1.</source>
        <translation>在 CUDA 后端上，设备内存即 GPU 显存；KV 缓存以 %1 存储。</translation>
    </message>
    <message>
        <source>On the CPU backend the device memory is the machine&apos;s RAM; the KV cache is stored in %1.</source>
        <translation>在 CPU 后端上，设备内存即本机内存；KV 缓存以 %1 存储。</translation>
    </message>
    <message>
        <source>Set to %1 blocks.</source>
        <translation>固定为 %1 块。</translation>
    </message>
    <message>
        <source>Set by a KV-cache budget of %1.</source>
        <translation>由 %1 的 KV 缓存预算决定。</translation>
    </message>
    <message>
        <source>The memory free when the pool was planned (the budget would allow more).</source>
        <translation>规划缓存池时的空闲内存（预算本可允许更多）。</translation>
    </message>
    <message>
        <source>What the requests can use (the budget would allow more).</source>
        <translation>请求所能用到的量（预算本可允许更多）。</translation>
    </message>
    <message>
        <source>Capped: %1 sequences of the full context never use more than %2 blocks.</source>
        <translation>已封顶：%1 个完整上下文长度的序列最多只用 %2 块。</translation>
    </message>
    <message>
        <source>The budget does not hold the weights, so a small pool is used instead: %1</source>
        <translation>预算容纳不下权重，因此改用一个小缓存池：%1</translation>
    </message>
    <message>
        <source>Kept large enough for the longest running request.</source>
        <translation>保持足够容纳最长的运行中请求。</translation>
    </message>
    <message>
        <source>gpu_memory_utilization × the GPU&apos;s memory, less the weights and the workspace.</source>
        <translation>gpu_memory_utilization × GPU 显存，减去权重和工作区。</translation>
    </message>
    <message>
        <source>gpu_memory_utilization × the RAM available to the engine, less the weights and the workspace.</source>
        <translation>gpu_memory_utilization × 引擎可用内存，减去权重和工作区。</translation>
    </message>
    <message>
        <source>GPU memory utilization: the fraction of the GPU&apos;s memory the engine may use for weights, workspace and the KV cache (as in vLLM).</source>
        <translation>GPU 显存利用率：引擎可用于权重、工作区和 KV 缓存的 GPU 显存比例（与 vLLM 相同）。</translation>
    </message>
    <message>
        <source>GPU memory utilization on the CPU: the share of the memory available to the engine (free RAM plus what it already holds) that it may use for weights, workspace and the KV cache. The pool holds at most %1 sequences of the model&apos;s full context, and its pages take RAM only as blocks fill.</source>
        <translation>CPU 上的 GPU 显存利用率：引擎可用内存（空闲内存加上它已占用的部分）中可用于权重、工作区和 KV 缓存的比例。缓存池最多容纳 %1 个完整上下文长度的序列，且其内存页只在块被写入时才占用内存。</translation>
    </message>
    <message>
        <source>Budget: %1 = %2 × %3 of GPU memory (weights, workspace and KV cache)</source>
        <translation>预算：%1 = %2 × %3 显存（权重、工作区和 KV 缓存）</translation>
    </message>
    <message>
        <source>Budget: %1 = %2 × %3 of RAM available (weights, workspace and KV cache)</source>
        <translation>预算：%1 = %2 × 可用内存 %3（权重、工作区和 KV 缓存）</translation>
    </message>
    <message>
        <source>4 bytes per value: exact, and the most memory.</source>
        <translation>每个值 4 字节：精确，占用内存最多。</translation>
    </message>
    <message>
        <source>2 bytes per value, half of fp32: 11 significant bits, values up to 65,504.</source>
        <translation>每个值 2 字节，为 fp32 的一半：11 位有效位，数值最大 65,504。</translation>
    </message>
    <message>
        <source>2 bytes per value, half of fp32: fp32&apos;s range with 8 significant bits.</source>
        <translation>每个值 2 字节，为 fp32 的一半：与 fp32 范围相同，8 位有效位。</translation>
    </message>
    <message>
        <source>1 byte per value, a quarter of fp32: 4 significant bits; K and V of each layer are divided by a scale calibrated on a short built-in text when it is chosen (1.0 if that fails).</source>
        <translation>每个值 1 字节，为 fp32 的四分之一：4 位有效位；每层的 K 和 V 除以一个缩放因子，该因子在选择此类型时于一段内置短文本上校准（校准失败则为 1.0）。</translation>
    </message>
    <message>
        <source>1 byte per value, a quarter of fp32: 3 significant bits and a wider range than e4m3; K and V of each layer are divided by a scale calibrated on a short built-in text when it is chosen (1.0 if that fails).</source>
        <translation>每个值 1 字节，为 fp32 的四分之一：3 位有效位，范围比 e4m3 更大；每层的 K 和 V 除以一个缩放因子，该因子在选择此类型时于一段内置短文本上校准（校准失败则为 1.0）。</translation>
    </message>
    <message>
        <source>1 byte per value plus a 4-byte scale per token and KV head (about 1.06 bytes per value at head size 64): symmetric, each token&apos;s K and V rows scaled by their own largest value, robust to outlier tokens.</source>
        <translation>每个值 1 字节，另加每个词元、每个 KV 头一个 4 字节缩放因子（头大小为 64 时约每个值 1.06 字节）：对称量化，每个词元的 K、V 行按其自身的最大值缩放，对离群词元稳健。</translation>
    </message>
    <message>
        <source>%1: %2 blocks × %3 tokens = %4 tokens (%5 per block)</source>
        <translation>%1：%2 个块 × %3 个词元 = %4 个词元（每块 %5）</translation>
    </message>
</context>
<context>
    <name>llmwb::MessageWidget</name>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy the text of this message</source>
        <translation>复制此消息的文本</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <source>Edit this message and send it again</source>
        <translation>编辑此消息并重新发送</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <source>Generate this answer again</source>
        <translation>重新生成此回答</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Delete this message</source>
        <translation>删除此消息</translation>
    </message>
    <message>
        <source>Resend</source>
        <translation>重新发送</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>助手</translation>
    </message>
    <message>
        <source>Assistant · %1</source>
        <translation>助手 · %1</translation>
    </message>
    <message>
        <source>System</source>
        <translation>系统</translation>
    </message>
    <message>
        <source>generating…</source>
        <translation>生成中…</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>interrupted (the app was closed)</source>
        <translation>已中断（应用被关闭）</translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 词元/秒</translation>
    </message>
    <message>
        <source>TTFT %1 ms</source>
        <translation>首词元延迟 %1 毫秒</translation>
    </message>
    <message>
        <source>%1 generated tokens (counted streamed chunks: the endpoint sent no usage)</source>
        <translation>生成 %1 个词元（按流式片段计数：端点未返回 usage）</translation>
    </message>
    <message>
        <source>%1 prompt + %2 generated tokens</source>
        <translation>提示 %1 + 生成 %2 个词元</translation>
    </message>
    <message>
        <source>Send the edited message; the messages after it are replaced (Ctrl+Enter)</source>
        <translation>发送编辑后的消息；其后的消息将被替换（Ctrl+Enter）</translation>
    </message>
    <message>
        <source>Keep the message as it was (Esc)</source>
        <translation>保持消息原样（Esc）</translation>
    </message>
    <message>
        <source>cut off at the token limit</source>
        <translation>因达到词元上限而截断</translation>
    </message>
    <message>
        <source>failed: %1</source>
        <translation>失败：%1</translation>
    </message>
    <message>
        <source>cut off: context full</source>
        <translation>已截断：上下文已满</translation>
    </message>
    <message>
        <source>cut off: KV cache full</source>
        <translation>已截断：KV 缓存已满</translation>
    </message>
    <message>
        <source>The answer reached the conversation&apos;s max tokens before it ended.</source>
        <translation>回答在结束前达到了对话的最大词元数。</translation>
    </message>
    <message>
        <source>The model ended the answer (a stop token or stop string).</source>
        <translation>模型结束了回答（停止词元或停止字符串）。</translation>
    </message>
    <message>
        <source>You stopped the answer.</source>
        <translation>你停止了回答。</translation>
    </message>
    <message>
        <source>The generation failed.</source>
        <translation>生成失败。</translation>
    </message>
    <message>
        <source>The generation failed: %1</source>
        <translation>生成失败：%1</translation>
    </message>
    <message>
        <source>The app was closed while the answer was being written.</source>
        <translation>回答生成期间应用被关闭。</translation>
    </message>
    <message>
        <source>The conversation filled the model&apos;s context: start a new chat or delete messages.</source>
        <translation>对话已占满模型的上下文：请开始新对话或删除一些消息。</translation>
    </message>
    <message>
        <source>The conversation filled the whole KV cache pool, which is smaller than the model&apos;s context: raise GPU memory utilization in the Tuning dock, or start a new chat.</source>
        <translation>对话已占满整个 KV 缓存池（它小于模型的上下文）：请在调优面板中调高 GPU 显存利用率，或开始新对话。</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
    <message>
        <source>The text is on the clipboard</source>
        <translation>文本已复制到剪贴板</translation>
    </message>
    <message>
        <source>Earlier answer</source>
        <translation>上一个回答</translation>
    </message>
    <message>
        <source>Later answer</source>
        <translation>下一个回答</translation>
    </message>
    <message>
        <source>Answer %1 of %2: Regenerate keeps the earlier answers</source>
        <translation>第 %1 个回答，共 %2 个：重新生成会保留之前的回答</translation>
    </message>
    <message>
        <source>not saved</source>
        <translation>未保存</translation>
    </message>
    <message>
        <source>%1 · not saved</source>
        <translation>%1 · 未保存</translation>
    </message>
    <message>
        <source>Not saved in the chat database yet (retrying): %1</source>
        <translation>尚未保存到聊天数据库（正在重试）：%1</translation>
    </message>
</context>
<context>
    <name>llmwb::ModelPanel</name>
    <message>
        <source>Open a Hugging Face model folder</source>
        <translation>打开 Hugging Face 模型文件夹</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation>架构</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>Weight types</source>
        <translation>权重类型</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>Shape</source>
        <translation>结构</translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation>对话模板</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Open file…</source>
        <translation>打开文件…</translation>
    </message>
    <message>
        <source>Open a .gguf model file (or drop it on the window)</source>
        <translation>打开 .gguf 模型文件（或将其拖放到窗口上）</translation>
    </message>
    <message>
        <source>Open folder…</source>
        <translation>打开文件夹…</translation>
    </message>
    <message>
        <source>Open a Hugging Face folder with config.json and safetensors</source>
        <translation>打开包含 config.json 和 safetensors 的 Hugging Face 文件夹</translation>
    </message>
    <message>
        <source>Recent models</source>
        <translation>最近使用的模型</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>Could not load the model: %1</source>
        <translation>无法加载模型：%1</translation>
    </message>
    <message>
        <source>No model loaded.</source>
        <translation>未加载模型。</translation>
    </message>
    <message>
        <source>The built-in demo model: a bigram model of this project&apos;s own sentences, not a trained model, so its answers are silly. Open a real model to chat.</source>
        <translation>内置演示模型：根据本项目自己的句子统计出的二元语法（bigram）模型，不是训练出来的模型，因此回答很滑稽。要正常对话，请打开一个真实模型。</translation>
    </message>
    <message>
        <source>Loaded.</source>
        <translation>已加载。</translation>
    </message>
    <message>
        <source>%1 parameters, %2 of weights</source>
        <translation>%1 个参数，权重 %2</translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation>%1 个词元</translation>
    </message>
    <message>
        <source>%1 layers, hidden %2, %3 heads (%4 KV), vocabulary %5</source>
        <translation>%1 层，隐藏维度 %2，%3 个注意力头（%4 个 KV 头），词表 %5</translation>
    </message>
    <message>
        <source>present</source>
        <translation>有</translation>
    </message>
    <message>
        <source>missing (a plain prompt is used)</source>
        <translation>无（使用纯文本提示）</translation>
    </message>
    <message>
        <source>%1 no longer exists. Remove it from the list or open another model.</source>
        <translation>%1 已不存在。请将其从列表中移除，或打开其他模型。</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Cancelling the loading of %1…</source>
        <translation>正在取消加载 %1…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop loading this model</source>
        <translation>停止加载此模型</translation>
    </message>
    <message>
        <source>Remove from list</source>
        <translation>从列表中移除</translation>
    </message>
    <message>
        <source>Forget the selected model (the file is not deleted)</source>
        <translation>从列表中移除所选模型（不会删除文件）</translation>
    </message>
    <message>
        <source>%1 (missing)</source>
        <translation>%1（缺失）</translation>
    </message>
    <message>
        <source>%1
This file or folder no longer exists.</source>
        <translation>%1
此文件或文件夹已不存在。</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>正在加载…</translation>
    </message>
    <message>
        <source>Could not load %1: %2</source>
        <translation>无法加载 %1：%2</translation>
    </message>
    <message>
        <source>The previous model (%1) is still loaded.</source>
        <translation>之前的模型（%1）仍处于加载状态。</translation>
    </message>
    <message>
        <source>Running on</source>
        <translation>运行设备</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Auto (CUDA when available)</source>
        <translation>自动（可用时使用 CUDA）</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>unknown reason</source>
        <translation>原因未知</translation>
    </message>
    <message>
        <source>Run the model on the GPU</source>
        <translation>在 GPU 上运行模型</translation>
    </message>
    <message>
        <source>CUDA is unavailable: %1</source>
        <translation>CUDA 不可用：%1</translation>
    </message>
    <message>
        <source>Where the model runs; a change reloads the model</source>
        <translation>模型运行的设备；更改后会重新加载模型</translation>
    </message>
    <message>
        <source>Where the model runs; a change reloads the model.
CUDA is unavailable: %1</source>
        <translation>模型运行的设备；更改后会重新加载模型。
CUDA 不可用：%1</translation>
    </message>
    <message>
        <source>CPU (CUDA is unavailable: %1)</source>
        <translation>CPU（CUDA 不可用：%1）</translation>
    </message>
    <message>
        <source>Open a model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <source>Models: GGUF files or a Hugging Face config.json (*.gguf config.json);;GGUF models (*.gguf);;Hugging Face folder (config.json)</source>
        <translation>模型：GGUF 文件或 Hugging Face 的 config.json (*.gguf config.json);;GGUF 模型 (*.gguf);;Hugging Face 文件夹 (config.json)</translation>
    </message>
    <message>
        <source>Bits per weight</source>
        <translation>每权重位数</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>%1 over the weight matrices, %2 over all tensors</source>
        <translation>权重矩阵平均 %1，全部张量平均 %2</translation>
    </message>
    <message>
        <source>Embedding</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>Feed-forward</source>
        <translation>前馈网络</translation>
    </message>
    <message>
        <source>Norms</source>
        <translation>归一化</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>RoPE frequencies</source>
        <translation>RoPE 频率</translation>
    </message>
    <message>
        <source>%1 bpw</source>
        <translation>%1 位/权重</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>As stored</source>
        <translation>按文件原样</translation>
    </message>
    <message>
        <source>bfloat16 (cast at load)</source>
        <translation>bfloat16（加载时转换）</translation>
    </message>
    <message>
        <source>As stored: every matrix runs in the file&apos;s type.
bfloat16: F32 and F16 matrices are rounded to bfloat16 when the model loads on the CPU: no more memory, faster prompt processing on CPUs with AVX512_BF16, slightly different outputs (`llmwb kld --dtype bfloat16` measures how much).
A change reloads the model.</source>
        <translation>按文件原样：每个矩阵以文件中的类型运行。
bfloat16：模型在 CPU 上加载时，F32 和 F16 矩阵舍入为 bfloat16：不增加内存，在支持 AVX512_BF16 的 CPU 上提示词处理更快，输出略有不同（`llmwb kld --dtype bfloat16` 可测量差异）。
更改后会重新加载模型。</translation>
    </message>
    <message>
        <source>cast to bfloat16 at load: %1 matrices, %2 → %3</source>
        <translation>加载时转换为 bfloat16：%1 个矩阵，%2 → %3</translation>
    </message>
    <message>
        <source>not cast to bfloat16: %1</source>
        <translation>未转换为 bfloat16：%1</translation>
    </message>
</context>
<context>
    <name>llmwb::PresetStore</name>
    <message>
        <source>Presets: %1</source>
        <translation>预设：%1</translation>
    </message>
    <message>
        <source>a preset needs a name</source>
        <translation>预设需要一个名称</translation>
    </message>
    <message>
        <source>a preset named &quot;%1&quot; already exists</source>
        <translation>已存在名为“%1”的预设</translation>
    </message>
    <message>
        <source>there is no preset named &quot;%1&quot;</source>
        <translation>不存在名为“%1”的预设</translation>
    </message>
</context>
<context>
    <name>llmwb::QuantizeController</name>
    <message>
        <source>A quantization is already running.</source>
        <translation>已有量化任务在运行。</translation>
    </message>
    <message>
        <source>Choose the model to quantize.</source>
        <translation>请选择要量化的模型。</translation>
    </message>
    <message>
        <source>Choose where to write the quantized model.</source>
        <translation>请选择量化后模型的保存位置。</translation>
    </message>
    <message>
        <source>The output must be another file than the input.</source>
        <translation>输出文件必须与输入文件不同。</translation>
    </message>
</context>
<context>
    <name>llmwb::QuantizeDialog</name>
    <message>
        <source>Choose a float model (GGUF)</source>
        <translation>选择浮点模型（GGUF）</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf);;All files (*)</source>
        <translation>GGUF 模型 (*.gguf);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Choose a Hugging Face model folder</source>
        <translation>选择 Hugging Face 模型文件夹</translation>
    </message>
    <message>
        <source>Write the quantized model to</source>
        <translation>量化后的模型保存到</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF 模型 (*.gguf)</translation>
    </message>
    <message>
        <source>Choose an importance matrix</source>
        <translation>选择重要性矩阵</translation>
    </message>
    <message>
        <source>Importance matrices (*.gguf *.dat);;All files (*)</source>
        <translation>重要性矩阵 (*.gguf *.dat);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Choose a calibration text</source>
        <translation>选择校准文本</translation>
    </message>
    <message>
        <source>Text files (*.txt *.md);;All files (*)</source>
        <translation>文本文件 (*.txt *.md);;所有文件 (*)</translation>
    </message>
    <message>
        <source>every matrix</source>
        <translation>所有矩阵</translation>
    </message>
    <message>
        <source>no quantization</source>
        <translation>不量化</translation>
    </message>
    <message>
        <source>output</source>
        <translation>输出层</translation>
    </message>
    <message>
        <source>bpw</source>
        <translation>位/权重</translation>
    </message>
    <message>
        <source>preset mix</source>
        <translation>预设组合</translation>
    </message>
    <message>
        <source>single type</source>
        <translation>单一类型</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>Quantize a model</source>
        <translation>量化模型</translation>
    </message>
    <message>
        <source>Model to quantize:</source>
        <translation>要量化的模型：</translation>
    </message>
    <message>
        <source>Target:</source>
        <translation>目标：</translation>
    </message>
    <message>
        <source>Output file:</source>
        <translation>输出文件：</translation>
    </message>
    <message>
        <source>Importance matrix (optional):</source>
        <translation>重要性矩阵（可选）：</translation>
    </message>
    <message>
        <source>Calibration text (optional):</source>
        <translation>校准文本（可选）：</translation>
    </message>
    <message>
        <source>A GGUF file (F32, F16 or BF16) or a Hugging Face folder</source>
        <translation>GGUF 文件（F32、F16 或 BF16）或 Hugging Face 文件夹</translation>
    </message>
    <message>
        <source>Where to write the GGUF file</source>
        <translation>GGUF 文件的保存位置</translation>
    </message>
    <message>
        <source>An importance-matrix file (common GGUF imatrix format)</source>
        <translation>重要性矩阵文件（通用 GGUF imatrix 格式）</translation>
    </message>
    <message>
        <source>A text file of your own to gather importances from</source>
        <translation>用于收集重要性的自有文本文件</translation>
    </message>
    <message>
        <source>File…</source>
        <translation>文件…</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>The K and IQ types use the importances to choose their scales; without either file, scales come from round-to-nearest with the usual scale search.</source>
        <translation>K 和 IQ 类型根据重要性选择缩放；两个文件都不提供时，缩放由就近取整加常规缩放搜索确定。</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop quantizing (no output file is left behind)</source>
        <translation>停止量化（不会留下输出文件）</translation>
    </message>
    <message>
        <source>Load the new model</source>
        <translation>加载新模型</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>%1 already exists. Replace it?</source>
        <translation>%1 已存在。要替换吗？</translation>
    </message>
    <message>
        <source>Choose a model and a target, then Start.</source>
        <translation>选择模型和目标，然后点击“开始”。</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>Writing the file</source>
        <translation>正在写入文件</translation>
    </message>
    <message>
        <source>Quantizing %1</source>
        <translation>正在量化 %1</translation>
    </message>
    <message>
        <source>Tensor %1 of %2 · %3 MB/s · %4</source>
        <translation>张量 %1/%2 · %3 MB/s · %4</translation>
    </message>
    <message>
        <source>Done: %1</source>
        <translation>完成：%1</translation>
    </message>
    <message>
        <source>Quantization failed.</source>
        <translation>量化失败。</translation>
    </message>
    <message>
        <source>Cancelled; no output file was written.</source>
        <translation>已取消；未写入输出文件。</translation>
    </message>
    <message>
        <source>Wrote %1</source>
        <translation>已写入 %1</translation>
    </message>
    <message>
        <source>Size: %1 → %2</source>
        <translation>大小：%1 → %2</translation>
    </message>
    <message>
        <source>Bits per weight over the quantized matrices: %1</source>
        <translation>量化矩阵的每权重位数：%1</translation>
    </message>
    <message>
        <source>Types: %1</source>
        <translation>类型：%1</translation>
    </message>
    <message numerus="yes">
        <source>%n tensor(s) in a fallback type (the row length does not fit the block):</source>
        <translation>
            <numerusform>%n 个张量使用了回退类型（行长度不是块大小的整数倍）：</numerusform>
        </translation>
    </message>
    <message>
        <source>Time: %1 s</source>
        <translation>用时：%1 秒</translation>
    </message>
    <message>
        <source>A quantization is running. Stop it and close?</source>
        <translation>量化正在进行。要停止并关闭吗？</translation>
    </message>
    <message>
        <source>Gathering importances from the calibration text: token %1 of %2</source>
        <translation>正在从校准文本收集重要性：第 %1/%2 个词元</translation>
    </message>
    <message>
        <source>Time: %1 s, of which %2 s gathering importances from the calibration text</source>
        <translation>用时：%1 秒，其中 %2 秒用于从校准文本收集重要性</translation>
    </message>
</context>
<context>
    <name>llmwb::RemoteChatWorker</name>
    <message>
        <source>No usable remote endpoint: %1</source>
        <translation>没有可用的远程端点：%1</translation>
    </message>
</context>
<context>
    <name>llmwb::RemoteEndpoint</name>
    <message>
        <source>The endpoint needs a name.</source>
        <translation>端点需要一个名称。</translation>
    </message>
    <message>
        <source>A field is longer than %1 characters.</source>
        <translation>某个字段超过 %1 个字符。</translation>
    </message>
    <message>
        <source>The base URL is not usable: %1</source>
        <translation>基础 URL 不可用：%1</translation>
    </message>
    <message>
        <source>Choose the model the endpoint serves.</source>
        <translation>请选择端点提供的模型。</translation>
    </message>
    <message>
        <source>The API key contains a line break.</source>
        <translation>API 密钥包含换行符。</translation>
    </message>
    <message>
        <source>The server refused the API key.</source>
        <translation>服务器拒绝了 API 密钥。</translation>
    </message>
    <message>
        <source>The server has no such route or model: check the base URL and the model.</source>
        <translation>服务器没有此路径或模型：请检查基础 URL 和模型。</translation>
    </message>
    <message>
        <source>The server could not be reached.</source>
        <translation>无法连接到服务器。</translation>
    </message>
    <message>
        <source>The server lists no model.</source>
        <translation>服务器未列出任何模型。</translation>
    </message>
</context>
<context>
    <name>llmwb::RemoteEndpointDialog</name>
    <message>
        <source>Kept in the app&apos;s settings file, which only you can read.</source>
        <translation>保存在应用的设置文件中，只有你能读取。</translation>
    </message>
    <message>
        <source>Remote endpoints</source>
        <translation>远程端点</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Fetch models</source>
        <translation>获取模型</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>基础 URL</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>(unnamed)</source>
        <translation>（未命名）</translation>
    </message>
    <message>
        <source>Endpoint %1</source>
        <translation>端点 %1</translation>
    </message>
    <message>
        <source>The base URL is not usable: %1</source>
        <translation>基础 URL 不可用：%1</translation>
    </message>
    <message>
        <source>Asking %1 for its models…</source>
        <translation>正在向 %1 查询模型…</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) served.</source>
        <translation>
            <numerusform>服务器提供 %n 个模型。</numerusform>
        </translation>
    </message>
    <message>
        <source>Another endpoint has this name.</source>
        <translation>已有同名端点。</translation>
    </message>
</context>
<context>
    <name>llmwb::SearchResultsModel</name>
    <message>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
</context>
<context>
    <name>llmwb::SpeculationPanel</name>
    <message>
        <source>No model loaded.</source>
        <translation>未加载模型。</translation>
    </message>
    <message>
        <source>Speculative decoding is on (up to %1 draft tokens per step); no drafts verified yet. Prompt lookup proposes drafts when the text repeats itself.</source>
        <translation>推测解码已开启（每步最多 %1 个草稿词元）；尚未验证任何草稿。文本出现重复时，提示查找才会给出草稿。</translation>
    </message>
    <message>
        <source>Speculative decoding is off. Set Speculative tokens in the Tuning dock to verify draft tokens inside the batch.</source>
        <translation>推测解码已关闭。在调优面板中设置“推测词元数”，即可在批次内验证草稿词元。</translation>
    </message>
    <message>
        <source>Up to %1 draft tokens per step · %2 drafts · %3 of %4 draft tokens accepted (%5%) · mean acceptance length %6</source>
        <translation>每步最多 %1 个草稿词元 · %2 次草稿 · 已接受 %4 个草稿词元中的 %3 个（%5%）· 平均接受长度 %6</translation>
    </message>
    <message>
        <source>Acceptance over time</source>
        <translation>接受率随时间变化</translation>
    </message>
    <message>
        <source>acceptance rate (%)</source>
        <translation>接受率（%）</translation>
    </message>
    <message>
        <source>mean acceptance length (tokens)</source>
        <translation>平均接受长度（词元）</translation>
    </message>
    <message>
        <source>seconds before the latest update</source>
        <translation>距最近一次更新的秒数</translation>
    </message>
    <message>
        <source>Acceptance per draft position (%)</source>
        <translation>各草稿位置的接受率（%）</translation>
    </message>
    <message>
        <source>draft position</source>
        <translation>草稿位置</translation>
    </message>
</context>
<context>
    <name>llmwb::StorageBanner</name>
    <message numerus="yes">
        <source>%n answer(s) not saved in the chat database yet; the text is kept here and saving is retried. %1</source>
        <translation>
            <numerusform>%n 条回答尚未保存到聊天数据库；文本保留在此处，并会重试保存。%1</numerusform>
        </translation>
    </message>
    <message>
        <source>Your message could not be saved, so it was not sent: %1. It is kept in the message box: send it again once there is room.</source>
        <translation>你的消息无法保存，因此没有发送：%1。消息仍保留在输入框中：有空间后请再次发送。</translation>
    </message>
    <message>
        <source>Could not read the chat database: %1. Start the app again to check it and salvage what is readable.</source>
        <translation>无法读取聊天数据库：%1。请重新启动应用以检查数据库并抢救可读取的内容。</translation>
    </message>
    <message>
        <source>Read-only: %1 Sending is disabled.</source>
        <translation>只读：%1 发送已禁用。</translation>
    </message>
    <message>
        <source>Retry saving</source>
        <translation>重试保存</translation>
    </message>
</context>
<context>
    <name>llmwb::ThinkController</name>
    <message>
        <source>Think harder is already running.</source>
        <translation>深度思考已在运行。</translation>
    </message>
    <message>
        <source>Choose the runs to export.</source>
        <translation>请选择要导出的运行。</translation>
    </message>
    <message>
        <source>No benchmark runs are available.</source>
        <translation>没有可用的基准测试运行。</translation>
    </message>
</context>
<context>
    <name>llmwb::ThinkPage</name>
    <message>
        <source>Task file</source>
        <translation>任务文件</translation>
    </message>
    <message>
        <source>JSON Lines (*.jsonl);;All files (*)</source>
        <translation>JSON Lines (*.jsonl);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Tasks</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Task set:</source>
        <translation>任务集：</translation>
    </message>
    <message>
        <source>Generated arithmetic (multi-step)</source>
        <translation>生成的算术题（多步）</translation>
    </message>
    <message>
        <source>Generated logic (ordering)</source>
        <translation>生成的逻辑题（排序）</translation>
    </message>
    <message>
        <source>My JSONL file of questions and answers</source>
        <translation>我的问答 JSONL 文件</translation>
    </message>
    <message>
        <source>Difficulty level:</source>
        <translation>难度等级：</translation>
    </message>
    <message>
        <source>Questions:</source>
        <translation>题目数：</translation>
    </message>
    <message>
        <source>Task seed:</source>
        <translation>任务种子：</translation>
    </message>
    <message>
        <source>Task file:</source>
        <translation>任务文件：</translation>
    </message>
    <message>
        <source>{&quot;question&quot;: &quot;…&quot;, &quot;answer&quot;: &quot;…&quot;} per line</source>
        <translation>每行一个 {&quot;question&quot;: &quot;…&quot;, &quot;answer&quot;: &quot;…&quot;}</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Ladder of budgets</source>
        <translation>预算阶梯</translation>
    </message>
    <message>
        <source>Samples (vote):</source>
        <translation>采样数（投票）：</translation>
    </message>
    <message>
        <source>Thinking budgets:</source>
        <translation>思考预算：</translation>
    </message>
    <message>
        <source>Beam widths:</source>
        <translation>束宽：</translation>
    </message>
    <message>
        <source>Thinking tokens before &lt;/think&gt; is forced, comma-separated (0 to 4,096 and up to 32,768).</source>
        <translation>强制输出 &lt;/think&gt; 之前的思考 token 数，以逗号分隔（0 到 4,096，最多 32,768）。</translation>
    </message>
    <message>
        <source>Beam search widths, comma-separated (1 to 16).</source>
        <translation>束搜索宽度，以逗号分隔（1 到 16）。</translation>
    </message>
    <message>
        <source>Sampling and cost</source>
        <translation>采样与成本</translation>
    </message>
    <message>
        <source>Max tokens per answer:</source>
        <translation>每个回答的最大 token 数：</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>温度：</translation>
    </message>
    <message>
        <source>Sampling seed:</source>
        <translation>采样种子：</translation>
    </message>
    <message>
        <source>Price per hour:</source>
        <translation>每小时价格：</translation>
    </message>
    <message>
        <source>What an hour of this machine costs you (for the cost axis).</source>
        <translation>这台机器每小时的花费（用于成本坐标轴）。</translation>
    </message>
    <message>
        <source>Run ladder</source>
        <translation>运行阶梯</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Accuracy against:</source>
        <translation>准确率对比：</translation>
    </message>
    <message>
        <source>Tokens per question</source>
        <translation>每题 token 数</translation>
    </message>
    <message>
        <source>Wall time per question (s)</source>
        <translation>每题耗时（秒）</translation>
    </message>
    <message>
        <source>Cost per question</source>
        <translation>每题成本</translation>
    </message>
    <message>
        <source>Rung:</source>
        <translation>阶梯档位：</translation>
    </message>
    <message>
        <source>Questions</source>
        <translation>题目</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>运行记录</translation>
    </message>
    <message>
        <source>Export report…</source>
        <translation>导出报告…</translation>
    </message>
    <message>
        <source>Delete run</source>
        <translation>删除运行</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>Question</source>
        <translation>题目</translation>
    </message>
    <message>
        <source>Expected</source>
        <translation>期望答案</translation>
    </message>
    <message>
        <source>Vote</source>
        <translation>投票结果</translation>
    </message>
    <message>
        <source>Correct</source>
        <translation>正确</translation>
    </message>
    <message>
        <source>Answers</source>
        <translation>各样本答案</translation>
    </message>
    <message>
        <source>Agreement</source>
        <translation>一致性</translation>
    </message>
    <message>
        <source>This model has no &lt;think&gt; tokens: thinking budgets do not apply.</source>
        <translation>此模型没有 &lt;think&gt; token：思考预算不适用。</translation>
    </message>
    <message>
        <source>Load a model with &lt;think&gt; tokens (Qwen3) for thinking budgets.</source>
        <translation>加载带 &lt;think&gt; token 的模型（如 Qwen3）以使用思考预算。</translation>
    </message>
    <message>
        <source>Load a model first.</source>
        <translation>请先加载模型。</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Rung %1 of %2 (%3): %4 of %5 questions · %6 s</source>
        <translation>第 %1/%2 档（%3）：已完成 %4/%5 题 · %6 秒</translation>
    </message>
    <message>
        <source>Done in %1 s.</source>
        <translation>完成，用时 %1 秒。</translation>
    </message>
    <message>
        <source>Cancelled; the rungs done so far are kept.</source>
        <translation>已取消；已完成的档位已保留。</translation>
    </message>
    <message>
        <source>Failed: %1</source>
        <translation>失败：%1</translation>
    </message>
    <message>
        <source>Samples + vote</source>
        <translation>采样 + 投票</translation>
    </message>
    <message>
        <source>Thinking budget</source>
        <translation>思考预算</translation>
    </message>
    <message>
        <source>Beam search</source>
        <translation>束搜索</translation>
    </message>
    <message>
        <source>Accuracy (%)</source>
        <translation>准确率（%）</translation>
    </message>
    <message>
        <source>Run a ladder to see accuracy against compute</source>
        <translation>运行一个阶梯，查看准确率与计算量的关系</translation>
    </message>
    <message>
        <source>Test-time scaling on this model</source>
        <translation>此模型的测试时扩展曲线</translation>
    </message>
    <message>
        <source>no answer ×%1</source>
        <translation>无答案 ×%1</translation>
    </message>
    <message>
        <source>one sample</source>
        <translation>单个样本</translation>
    </message>
    <message>
        <source>unanimous</source>
        <translation>一致</translation>
    </message>
    <message>
        <source>no answers</source>
        <translation>均无答案</translation>
    </message>
    <message>
        <source>tie</source>
        <translation>平票</translation>
    </message>
    <message>
        <source>split</source>
        <translation>有分歧</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>Sample %1 (%2 tokens) → %3</source>
        <translation>样本 %1（%2 个 token）→ %3</translation>
    </message>
    <message>
        <source>no answer</source>
        <translation>无答案</translation>
    </message>
    <message>
        <source>Think harder report</source>
        <translation>深度思考报告</translation>
    </message>
</context>
<context>
    <name>llmwb::ThinkPlan</name>
    <message>
        <source>Choose a task file.</source>
        <translation>请选择任务文件。</translation>
    </message>
    <message>
        <source>Unknown task set &quot;%1&quot;.</source>
        <translation>未知任务集“%1”。</translation>
    </message>
    <message>
        <source>The level must be 1 to 5.</source>
        <translation>难度等级须为 1 到 5。</translation>
    </message>
    <message>
        <source>The task count must be 1 to %1.</source>
        <translation>题目数须为 1 到 %1。</translation>
    </message>
    <message>
        <source>Max tokens must be 1 to 8192.</source>
        <translation>最大 token 数须为 1 到 8192。</translation>
    </message>
    <message>
        <source>The temperature must be 0 to 2.</source>
        <translation>温度须为 0 到 2。</translation>
    </message>
    <message>
        <source>The price per hour must be 0 or more.</source>
        <translation>每小时价格须不小于 0。</translation>
    </message>
</context>
<context>
    <name>llmwb::ThinkStore</name>
    <message>
        <source>Think harder runs: the run is not a JSON object</source>
        <translation>深度思考运行：该运行不是 JSON 对象</translation>
    </message>
    <message>
        <source>Think harder runs: cannot store the run &quot;%1&quot;: %2</source>
        <translation>深度思考运行：无法保存运行“%1”：%2</translation>
    </message>
    <message>
        <source>Think harder runs: %1</source>
        <translation>深度思考运行：%1</translation>
    </message>
    <message>
        <source>Think harder runs: no run %1</source>
        <translation>深度思考运行：没有运行 %1</translation>
    </message>
    <message>
        <source>Think harder runs: run %1 has no rungs</source>
        <translation>深度思考运行：运行 %1 没有档位</translation>
    </message>
</context>
<context>
    <name>llmwb::TuningPanel</name>
    <message>
        <source>Drafts from</source>
        <translation>草稿来源</translation>
    </message>
    <message>
        <source>Pool: applies when a model is loaded.</source>
        <translation>缓存池：加载模型后生效。</translation>
    </message>
    <message>
        <source>Pool: %1 blocks × %2 tokens = %3 tokens · KV %4</source>
        <translation>缓存池：%1 块 × %2 个词元 = %3 个词元 · KV %4</translation>
    </message>
    <message>
        <source>Block size %1 applies when the running requests finish.</source>
        <translation>块大小 %1 将在运行中的请求结束后生效。</translation>
    </message>
    <message>
        <source>Engine (applies live)</source>
        <translation>引擎（实时生效）</translation>
    </message>
    <message>
        <source>Default sampling for new conversations</source>
        <translation>新对话的默认采样</translation>
    </message>
    <message>
        <source>GPU memory utilization</source>
        <translation>GPU 显存利用率</translation>
    </message>
    <message>
        <source>Max sequences (max_num_seqs)</source>
        <translation>最大序列数（max_num_seqs）</translation>
    </message>
    <message>
        <source>Max batched tokens</source>
        <translation>每批最大词元数</translation>
    </message>
    <message>
        <source>Block size (tokens)</source>
        <translation>块大小（词元）</translation>
    </message>
    <message>
        <source>KV-cache dtype</source>
        <translation>KV 缓存数据类型</translation>
    </message>
    <message>
        <source>Speculative tokens</source>
        <translation>推测词元数</translation>
    </message>
    <message>
        <source>Most requests in one batch (applies from the next step).</source>
        <translation>一个批次中的最多请求数（从下一步起生效）。</translation>
    </message>
    <message>
        <source>Token budget of one step: prefill chunks and decode tokens share it (applies from the next step).</source>
        <translation>每一步的词元预算：预填充块与解码词元共享（从下一步起生效）。</translation>
    </message>
    <message>
        <source>The block size can change only while the engine is idle: wait for the running requests to finish.</source>
        <translation>只有引擎空闲时才能修改块大小：请等待运行中的请求结束。</translation>
    </message>
    <message>
        <source>Tokens per KV block. Changing it rebuilds the engine (the prefix cache is emptied).</source>
        <translation>每个 KV 块的词元数。修改后会重建引擎（前缀缓存被清空）。</translation>
    </message>
    <message>
        <source>Disabled while requests run.</source>
        <translation>请求运行时不可用。</translation>
    </message>
    <message>
        <source>Applies when idle (rebuilds the engine).</source>
        <translation>空闲时生效（重建引擎）。</translation>
    </message>
    <message>
        <source>Used by conversations created from now on; each conversation keeps its own settings (Chat &gt; Conversation settings).</source>
        <translation>用于此后新建的对话；每个对话保留自己的设置（对话 &gt; 对话设置）。</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Top-k (0: off)</source>
        <translation>Top-k（0：关闭）</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>Repetition penalty</source>
        <translation>重复惩罚</translation>
    </message>
    <message>
        <source>Presence penalty</source>
        <translation>存在惩罚</translation>
    </message>
    <message>
        <source>Frequency penalty</source>
        <translation>频率惩罚</translation>
    </message>
    <message>
        <source>Reset to defaults</source>
        <translation>恢复默认值</translation>
    </message>
    <message>
        <source>Budget: %1% of the device memory (weights, workspace and KV cache)</source>
        <translation>预算：设备内存的 %1%（权重、工作区和 KV 缓存）</translation>
    </message>
    <message>
        <source>Limited by: %1</source>
        <translation>限制因素：%1</translation>
    </message>
    <message>
        <source>Re-planning failed (the previous pool stays): %1</source>
        <translation>重新规划失败（保留原缓存池）：%1</translation>
    </message>
    <message>
        <source>Drafts by n-gram prompt lookup, verified in the batch.</source>
        <translation>草稿词元来自 n-gram 提示查找，在同一批次中验证。</translation>
    </message>
    <message>
        <source>Off: one token per request and step.</source>
        <translation>关闭：每个请求每步生成一个词元。</translation>
    </message>
    <message>
        <source>So far %1 of %2 draft tokens accepted (%3%), %4 tokens per verify step.</source>
        <translation>至今已接受 %2 个草稿词元中的 %1 个（%3%），每个验证步平均 %4 个词元。</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Speculative decoding: up to this many draft tokens per step, found by looking up the last few tokens earlier in the conversation (n-gram prompt lookup), are checked by the model in the same step. Greedy answers stay identical and sampled ones keep their distribution. Applies from the next step.</source>
        <translation>推测解码：每步最多这么多个草稿词元（在对话前文中查找最后几个词元得到，即 n-gram 提示查找）在同一步中由模型验证。贪婪解码的回答保持不变，采样的回答分布不变。从下一步起生效。</translation>
    </message>
    <message>
        <source>Changing it re-plans the KV pool while requests run: requests that no longer fit are preempted and resume later; a value too small for the running requests is refused.</source>
        <translation>修改后会在请求运行时重新规划 KV 缓存池：放不下的请求会被抢占，稍后继续；对运行中的请求来说过小的值会被拒绝。</translation>
    </message>
    <message>
        <source>Drafts by the model&apos;s own weights at 4 bits, verified in the batch.</source>
        <translation>草稿由模型自身的 4 位权重生成，在批次内验证。</translation>
    </message>
    <message>
        <source>Auto: up to %1 per request and step, none where they do not pay.</source>
        <translation>自动：每个请求每步最多 %1 个，不划算时不生成草稿。</translation>
    </message>
    <message>
        <source>Speculation is off: %1</source>
        <translation>推测解码已关闭：%1</translation>
    </message>
    <message>
        <source>prompt lookup</source>
        <translation>提示查找</translation>
    </message>
    <message>
        <source>self-q4 draft</source>
        <translation>self-q4 草稿</translation>
    </message>
    <message>
        <source>Where drafts come from: prompt lookup finds the last few tokens earlier in the conversation (free, helps when text repeats); self-q4 runs the model&apos;s own weights re-quantized to 4 bits (made when first chosen, about a quarter of F16 memory).</source>
        <translation>草稿的来源：提示查找在对话前文中查找最后几个词元（无额外开销，文本重复时有效）；self-q4 运行重新量化为 4 位的模型自身权重（首次选择时生成，约占 F16 内存的四分之一）。</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Choose the number of drafts per request and step from the measured acceptance and step cost; none where they do not pay.</source>
        <translation>根据实测的接受率和每步开销，为每个请求每步选择草稿数；不划算时不生成草稿。</translation>
    </message>
    <message>
        <source>auto (%1)</source>
        <translation>自动（%1）</translation>
    </message>
    <message>
        <source>The backend&apos;s own type.</source>
        <translation>后端自身的类型。</translation>
    </message>
    <message>
        <source>The backend&apos;s own type: fp16 on the CPU and on CUDA.</source>
        <translation>后端自身的类型：CPU 和 CUDA 上均为 fp16。</translation>
    </message>
    <message>
        <source>How the KV cache stores keys and values. Changing it re-plans the pool while requests run: more or fewer blocks for the same memory; running requests are recomputed in the new type and keep what they streamed.</source>
        <translation>KV 缓存存储键和值的方式。请求运行时修改它会重新规划缓存池：同样的内存容纳更多或更少的块；正在运行的请求以新类型重新计算，已流式输出的内容保留。</translation>
    </message>
    <message>
        <source>Applies when a model is loaded.</source>
        <translation>加载模型时生效。</translation>
    </message>
    <message>
        <source>In use: %1.</source>
        <translation>当前使用：%1。</translation>
    </message>
    <message>
        <source>Switching to %1 at the next step.</source>
        <translation>将在下一步切换到 %1。</translation>
    </message>
</context>
</TS>
