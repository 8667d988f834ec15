// node prometheus_parse_test.mjs PATH_TO_test_serving_metrics_exposition
//
// Runs the exposition program (a real engine run observed by ServingMetrics), parses what it
// wrote with npm parse-prometheus-text-format 1.1.1 (found through NODE_PATH, default
// $LLMWB_TEST_ASSETS/npm/node_modules; scripts/fetch-test-assets.sh installs it) and checks that
// every metric of issue 19's list is there with vLLM's name, type and labels. Exit 0: pass;
// anything missing (node package, a metric, a label) fails with a message naming it.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const failures = [];
function fail(msg) {
    failures.push(msg);
    console.error(`FAIL: ${msg}`);
}

const program = process.argv[2];
if (!program) {
    console.error('usage: node prometheus_parse_test.mjs PATH_TO_test_serving_metrics_exposition');
    process.exit(2);
}

// The parser: require() through NODE_PATH, else the test-assets folder.
const assets = process.env.LLMWB_TEST_ASSETS || path.join(os.homedir(), '.cache/llmwb/test-assets');
const require = createRequire(import.meta.url);
let parse;
for (const where of ['parse-prometheus-text-format',
                     path.join(assets, 'npm/node_modules/parse-prometheus-text-format')]) {
    try {
        parse = require(where);
        break;
    } catch {
        // try the next place
    }
}
if (typeof parse !== 'function' && parse && typeof parse.default === 'function')
    parse = parse.default;
if (typeof parse !== 'function') {
    console.error('FAIL: npm package parse-prometheus-text-format@1.1.1 not found (NODE_PATH=' +
                  (process.env.NODE_PATH || '') + ', ' + assets +
                  '/npm/node_modules); run scripts/fetch-test-assets.sh');
    process.exit(1);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'llmwb-metrics-'));
const file = path.join(dir, 'metrics.txt');
let text;
try {
    execFileSync(program, [file], { stdio: ['ignore', 'inherit', 'inherit'] });
    text = fs.readFileSync(file, 'utf8');
} catch (e) {
    console.error(`FAIL: running ${program}: ${e.message}`);
    process.exit(1);
} finally {
    fs.rmSync(dir, { recursive: true, force: true });
}

let families;
try {
    families = parse(text);
} catch (e) {
    console.error(`FAIL: the exposition does not parse: ${e.message}`);
    process.exit(1);
}
const byName = new Map(families.map((f) => [f.name, f]));

// Issue 19's list (+ the older names vLLM's Grafana dashboard queries and the speculative
// decoding counters), as names in the exposition: counters carry _total.
const expected = [
    ['vllm:num_requests_running', 'GAUGE'],
    ['vllm:num_requests_waiting', 'GAUGE'],
    ['vllm:kv_cache_usage_perc', 'GAUGE'],
    ['vllm:gpu_cache_usage_perc', 'GAUGE'],
    ['vllm:prefix_cache_queries_total', 'COUNTER'],
    ['vllm:prefix_cache_hits_total', 'COUNTER'],
    ['vllm:num_preemptions_total', 'COUNTER'],
    ['vllm:prompt_tokens_total', 'COUNTER'],
    ['vllm:generation_tokens_total', 'COUNTER'],
    ['vllm:request_success_total', 'COUNTER', ['finished_reason']],
    ['vllm:spec_decode_num_drafts_total', 'COUNTER'],
    ['vllm:spec_decode_num_draft_tokens_total', 'COUNTER'],
    ['vllm:spec_decode_num_accepted_tokens_total', 'COUNTER'],
    ['vllm:spec_decode_num_accepted_tokens_per_pos_total', 'COUNTER', ['position']],
    ['vllm:time_to_first_token_seconds', 'HISTOGRAM'],
    ['vllm:inter_token_latency_seconds', 'HISTOGRAM'],
    ['vllm:time_per_output_token_seconds', 'HISTOGRAM'],
    ['vllm:request_time_per_output_token_seconds', 'HISTOGRAM'],
    ['vllm:e2e_request_latency_seconds', 'HISTOGRAM'],
    ['vllm:request_queue_time_seconds', 'HISTOGRAM'],
    ['vllm:request_inference_time_seconds', 'HISTOGRAM'],
    ['vllm:request_prefill_time_seconds', 'HISTOGRAM'],
    ['vllm:request_decode_time_seconds', 'HISTOGRAM'],
    ['vllm:request_prompt_tokens', 'HISTOGRAM'],
    ['vllm:request_generation_tokens', 'HISTOGRAM'],
    ['vllm:iteration_tokens_total', 'HISTOGRAM'],
    ['vllm:request_params_max_tokens', 'HISTOGRAM'],
];

// parse-prometheus-text-format 1.1.1 folds a histogram into one {buckets} object keyed by le
// and drops the other labels and, when the samples carry labels, _count and _sum (a limit of
// the library, which vLLM's own output meets too). So the buckets come from the parser, and the
// labels, _count and _sum of each histogram are read from the text's lines.
function sampleLine(sample) {
    const prefix = `${sample}{model_name="llmwb-demo",engine="0"} `;
    const line = text.split('\n').find((l) => l.startsWith(prefix));
    return line === undefined ? undefined : Number(line.slice(prefix.length));
}
function checkHistogram(name, f) {
    if (f.metrics.length !== 1) {
        fail(`${name}: ${f.metrics.length} series, expected 1`);
        return;
    }
    const buckets = f.metrics[0].buckets || {};
    const entries = Object.entries(buckets).map(([le, c]) => [
        le === '+Inf' ? Infinity : Number(le), Number(c)]);
    if (entries.length < 2 || !('+Inf' in buckets)) {
        fail(`${name}: buckets ${JSON.stringify(buckets)}`);
        return;
    }
    let last = -Infinity;
    for (const [le, count] of entries.sort((a, b) => a[0] - b[0])) {
        if (Number.isNaN(le) || Number.isNaN(count) || count < last)
            fail(`${name}: bucket le=${le} ${count} after ${last}`);
        last = count;
    }
    const count = sampleLine(`${name}_count`);
    const sum = sampleLine(`${name}_sum`);
    if (count === undefined || sum === undefined || Number.isNaN(sum))
        fail(`${name}: no _count / _sum line with model_name and engine labels`);
    else if (Number(buckets['+Inf']) !== count)
        fail(`${name}: +Inf ${buckets['+Inf']} != _count ${count}`);
    if (!text.includes(`${name}_bucket{model_name="llmwb-demo",engine="0",le="+Inf"} `))
        fail(`${name}: no +Inf bucket with model_name and engine labels`);
}

for (const [name, type, extraLabels = []] of expected) {
    const f = byName.get(name);
    if (!f) {
        fail(`${name}: missing`);
        continue;
    }
    if (f.type !== type)
        fail(`${name}: type ${f.type}, expected ${type}`);
    if (!f.help)
        fail(`${name}: no HELP text`);
    if (!Array.isArray(f.metrics) || f.metrics.length === 0) {
        fail(`${name}: no samples`);
        continue;
    }
    if (type === 'HISTOGRAM') {
        checkHistogram(name, f);
        continue;
    }
    for (const m of f.metrics) {
        const labels = m.labels || {};
        if (labels.model_name !== 'llmwb-demo')
            fail(`${name}: model_name label ${JSON.stringify(labels.model_name)}`);
        if (labels.engine !== '0')
            fail(`${name}: engine label ${JSON.stringify(labels.engine)}`);
        for (const l of extraLabels)
            if (!(l in labels))
                fail(`${name}: no ${l} label`);
        if (Number.isNaN(Number(m.value)))
            fail(`${name}: value ${m.value}`);
    }
}

// What the run did shows: every finish reason, tokens, a preemption, accepted drafts.
const value = (name, key, want) => {
    const f = byName.get(name);
    const m = f && f.metrics.find((x) => !key || (x.labels || {})[key] === want);
    return m ? Number(m.value) : NaN;
};
for (const reason of ['stop', 'length', 'abort'])
    if (!(value('vllm:request_success_total', 'finished_reason', reason) > 0))
        fail(`vllm:request_success_total{finished_reason="${reason}"} is not > 0`);
for (const name of ['vllm:prompt_tokens_total', 'vllm:generation_tokens_total',
                    'vllm:num_preemptions_total', 'vllm:spec_decode_num_accepted_tokens_total'])
    if (!(value(name) > 0))
        fail(`${name} is not > 0`);
if (!(sampleLine('vllm:time_to_first_token_seconds_count') > 0))
    fail('vllm:time_to_first_token_seconds has no observations');

if (failures.length) {
    console.error(`${failures.length} failure(s)`);
    process.exit(1);
}
console.log(`PASS: ${expected.length} metric families with vLLM's names, types and labels`);
