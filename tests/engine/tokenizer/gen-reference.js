// Reference ids from the real Hugging Face tokenizers for the tokenizer tests.
// Usage: node gen-reference.js <tokenizers dir> <out dir>
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('@anush008/tokenizers');

const [tokDir, outDir] = process.argv.slice(2);

const fixed = [
  '', ' ', '  ', '\n', '\n\n', '\t', ' \t\n', '\r\n', 'a\r\nb', 'Hello world', ' Hello world', '  leading two',
  'trailing space ', 'trailing spaces   ', 'Hello,   world!  ', 'tabs\tand\t\ttabs', 'line1\nline2\n\nline4\n\n\n',
  'mixed \n \t \r\n  \n end', '\u00a0nbsp\u00a0 and\u3000ideographic space', 'a\u2028b\u2029c', 'a\u0085b',
  'x\u180Ey', '!\u180E!', ' \u180E\n', '\u180E\u180E a', 'a \u180E b', '1\u180E2',
  "it's", "IT'S", "we're we've I'm you'll he'd can't", "WE'RE WE'VE I'M YOU'LL HE'D CAN'T", "'s 'S 't 'T",
  "x'ſ y", "'ſa", "'ſt", "rock'n'roll", "''quoted''", "don't", "'ll", "'LL", "'Ll", "'lL", "y'all",
  '1', '12', '123', '1234', '12345', '123456', '1234567', '12345678901234567890', '3.14159', '1,000,000',
  '٣٤٥ ١٢', '१२३४५', '½ ² Ⅻ', '０１２３', 'v1.2.3-rc4', 'x=42;y=-7', '2024-01-01T12:00:00Z',
  '你好，世界！', '日本語のテキストです。', '한국어 텍스트입니다', '中文 English 混合 text',
  '🙂', '🙂👍', '👨‍👩‍👧', '👨‍👩‍👧‍👦 family', '🏳️‍🌈', '👍🏽', '❤️', '🇩🇪🇯🇵', 'emoji🙂in🙂text', ' 🙂 ',
  'e\u0301', 'café', 'cafe\u0301', 'A\u030A', '\u212B', 'Ω\u2126', 'n\u0303o\u0308', '\u1100\u1161\u11A8',
  'a\u0301\u0327', 'ḍ̇', 'q\u0307\u0323', 'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǵ̗̻̊o̠̜', 'ﬁ ﬂ ﬃ', 'Ｆｕｌｌｗｉｄｔｈ',
  'مرحبا بالعالم', 'नमस्ते दुनिया', 'สวัสดีชาวโลก', 'Привет, мир!', 'Γειά σου Κόσμε', 'שלום עולם',
  'ქართული', 'Հայերեն', 'ᚠᛇᚻ', '𝐇𝐞𝐥𝐥𝐨 𝕎𝕠𝕣𝕝𝕕', '𠀀𠀁 𪚥', '\u{10FFFD}', '\u{E0001}\u{E0041}',
  'def f(x):\n    return x ** 2  # square\n', 'for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}',
  '<html><body class="x">Hi</body></html>', 'SELECT * FROM t WHERE a = \'b\';', '{"key": [1, 2, {"x": null}]}',
  'https://example.com/path?q=1&r=two#frag', 'user@example.com', '$ echo "hi" | grep -v h > /dev/null',
  '<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n', '<|im_start|>', 'x<|im_end|>y', ' <|im_end|> ',
  '<|endoftext|>', '<s>', '</s>', '<s>Hello</s>', ' <s> text </s> ', '<s><s></s>', '<unk>', 'a<unk>b',
  '<|begin_of_text|>Hello', '<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>', '<|eom_id|>',
  '<think>\nreasoning\n</think>\n\nanswer', '<tool_call>{"name": "f"}</tool_call>', '<|im_start', 'im_start|>',
  '<|reserved_special_token_5|>', 'a <t> b', 'a<t> b', '<t>', 'x <t>y', ' <|im_start|>', 'a  <|im_end|>  b',
  '<think> x', 'a<think>', ' <think> ', '<|fim_prefix|>code<|fim_suffix|>', '<0x41>', '▁', '▁▁x', 'Ġhello',
  'The quick brown fox jumps over the lazy dog.', 'THE QUICK BROWN FOX', 'MiXeD CaSe WoRdS',
  'supercalifragilisticexpialidocious', 'pneumonoultramicroscopicsilicovolcanoconiosis',
  '...', '!!!???', '---', '___init___', '→ ← ↑ ↓', '© ® ™ § ¶', '€100 £50 ¥1000 ₹500',
  '<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n', '<bos><eos>', '<｜User｜>Hi<｜Assistant｜>', '<｜begin▁of▁sentence｜>x',
  '<|user|>\nHi<|end|>\n<|assistant|>\n', '<|end|>  \n next', '<|system|> sys', 'ＡＢＣ ﬁ ǅ İstanbul ΣΑΣ straße ß ẞ', 'x²+y³ ⅓ ㎏ ℃ ①',
  '12ab34cd 5,678.90 $1,000 #hashtag @user', 'aXbxcXd QUIET quick', '<Mark>', 'x <Mark> y <mark> z<MARK>', '<mark>a', '#<mark>', 'a—b–c…d «e» „f“ ¿g? ¡h!', '   \n\n   ', '\t\tindented\n\t\tcode',
  '\u0000nul', '\u0001\u0002\u001f', '\u007f', 'zero\u200bwidth\u200cjoin\u200d', '\ufeffbom', '\ufffd',
];

// Deterministic PRNG (mulberry32).
function rng(seed) {
  return function () {
    seed |= 0; seed = (seed + 0x6D2B79F5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pools = [
  'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '0123456789', ' ', ' ', ' ', '\n', '\t', '\r',
  ".,;:!?'\"()[]{}<>-_=+*/\\|@#$%^&~`", "'", 'sStTmMdDlLrReEvV', '你好世界中文字符测试', 'ひらがなカタカナ',
  'абвгдежзийклмнопрстуфхцчшщыэюя', 'αβγδεζηθικλμνξοπρστυφχψω', 'مرحبابالعالم', 'नमस्तेदुनिया',
  'สวัสดีชาวโลก', '\u0301\u0308\u0327\u0323\u0903\u093f', 'éèêëàâäôöûüçñ', '٠١٢٣٤٥٦٧٨٩', '①②³¼Ⅷ',
  '\u00a0\u2009\u3000\u2028\u180e', '\u200b\u200c\u200d\ufe0f', '가나다라마바사', '\u1100\u1161\u11a8',
];
const emojis = ['🙂', '👍', '👍🏽', '👨‍👩‍👧', '🏳️‍🌈', '❤️', '🇯🇵', '🤖', '𝐀', '𠀋'];
const specials = ['<|im_start|>', '<|im_end|>', '<|endoftext|>', '<s>', '</s>', '<|begin_of_text|>', '<|eot_id|>',
  '<think>', '</think>', '<unk>', '<|im_start', '<s', ' <s>'];
function randomText(r) {
  const n = Math.floor(r() * 40);
  let s = '';
  for (let i = 0; i < n; i++) {
    const k = r();
    if (k < 0.06) { s += emojis[Math.floor(r() * emojis.length)]; continue; }
    if (k < 0.09) { s += specials[Math.floor(r() * specials.length)]; continue; }
    const pool = Array.from(pools[Math.floor(r() * pools.length)]);
    const run = 1 + Math.floor(r() * 4);
    for (let j = 0; j < run; j++) s += pool[Math.floor(r() * pool.length)];
  }
  return s;
}

// Variants of the real files that exercise the other configurations a tokenizer.json can
// have (Metaspace pre-tokenizer and decoder, GPT-2 ByteLevel regex with add_prefix_space,
// lstrip/rstrip/single_word added tokens); written to <out>/variants/<name>/tokenizer.json.
function writeVariants() {
  const load = (m) => JSON.parse(fs.readFileSync(path.join(tokDir, m, 'tokenizer.json'), 'utf8'));
  const variants = {};
  let v = load('llama2');
  v.normalizer = null;
  v.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false };
  variants.llama2_metaspace_first = v;
  v = load('llama2');
  v.normalizer = null;
  v.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
  v.decoder = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
  v.added_tokens.push({ id: 32000, content: '<t>', single_word: true, lstrip: false, rstrip: false, normalized: false, special: true });
  variants.llama2_metaspace_always_split = v;
  v = load('qwen3');
  v.normalizer = null;
  v.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  for (const t of v.added_tokens) {
    if (t.content === '<|im_start|>') t.lstrip = true;
    if (t.content === '<|im_end|>') t.rstrip = true;
    if (t.content === '<think>') t.single_word = true;
  }
  variants.qwen3_gpt2_prefix_space = v;
  // The general pipeline (issue 18): tokenizer.json files no npm package ships (Phi-3's
  // llama-2 style SentencePiece, Phi-4-mini's byte-level BPE with the o200k split) and one per
  // normalizer and pre-tokenizer step, on the Qwen3 (byte-level) and Llama 2 (SentencePiece)
  // vocabularies.
  const bl = (use_regex, add_prefix_space = false) => ({ type: 'ByteLevel', add_prefix_space, trim_offsets: true, use_regex });
  const split = (pattern, behavior, invert = false) => ({ type: 'Split', pattern, behavior, invert });
  v = load('llama2');
  for (const [i, c] of ['<|endoftext|>', '<|assistant|>', '<|system|>', '<|end|>', '<|user|>'].entries())
    v.added_tokens.push({ id: 32000 + i, content: c, single_word: false, lstrip: false, rstrip: c !== '<|endoftext|>', normalized: false, special: true });
  variants.phi3_style = v;
  v = load('qwen3');
  v.normalizer = null;
  v.pre_tokenizer = { type: 'Sequence', pretokenizers: [split({ Regex: "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, 'Isolated'), bl(false)] };
  variants.phi4_mini_style = v;
  v = load('qwen3');
  v.normalizer = { type: 'Sequence', normalizers: [{ type: 'Strip', strip_left: true, strip_right: true }, { type: 'NFKC' }, { type: 'Lowercase' },
    { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' }, { type: 'Replace', pattern: { String: 'ss' }, content: 'ß' }, { type: 'Prepend', prepend: '#' }] };
  // Normalized added tokens are matched by their normalized content ("#<mark>" here).
  v.added_tokens.push({ id: v.added_tokens[v.added_tokens.length - 1].id + 1, content: '<Mark>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: false });
  variants.qwen3_nfkc_lower_strip_replace = v;
  v = load('qwen3');
  v.normalizer = { type: 'Lowercase' };
  v.added_tokens.push({ id: v.added_tokens[v.added_tokens.length - 1].id + 1, content: '<Mark>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: false });
  variants.qwen3_lowercase_normalized_added = v;
  v = load('qwen3');
  v.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'Strip', strip_left: false, strip_right: true }] };
  v.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, { type: 'Digits', individual_digits: true },
    { type: 'Punctuation', behavior: 'Contiguous' }, bl(false, true)] };
  variants.qwen3_nfd_wssplit_digits_punct = v;
  v = load('qwen3');
  v.normalizer = { type: 'NFKD' };
  v.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' }, { type: 'Digits', individual_digits: false }, bl(true)] };
  variants.qwen3_nfkd_whitespace = v;
  v = load('qwen3');
  v.normalizer = null;
  v.pre_tokenizer = { type: 'Sequence', pretokenizers: [split({ String: ' ' }, 'MergedWithPrevious'), split({ Regex: '\\p{N}+' }, 'MergedWithNext'),
    split({ Regex: '[aeiouAEIOU]' }, 'Contiguous', true), split({ Regex: 'x' }, 'Removed'), split({ Regex: '(?=[A-Z])' }, 'Isolated'),
    { type: 'Punctuation', behavior: 'MergedWithPrevious' }, split({ String: 'q' }, 'Removed', true), bl(false)] };
  variants.qwen3_split_behaviors = v;
  v = load('llama2');
  v.normalizer = { type: 'Lowercase' };
  v.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true },
    { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: true }] };
  v.decoder = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: true };
  variants.llama2_lower_digits_metaspace = v;
  for (const [name, json] of Object.entries(variants)) {
    fs.mkdirSync(path.join(outDir, 'variants', name), { recursive: true });
    fs.writeFileSync(path.join(outDir, 'variants', name, 'tokenizer.json'), JSON.stringify(json));
  }
  return Object.keys(variants);
}

(async () => {
  fs.mkdirSync(outDir, { recursive: true });
  const variantNames = writeVariants();
  for (const model of ['qwen3', 'llama2', 'llama3_1', 'gemma3', 'deepseek_v3', ...variantNames]) {
    const file = variantNames.includes(model) ? path.join(outDir, 'variants', model, 'tokenizer.json')
                                              : path.join(tokDir, model, 'tokenizer.json');
    const tok = Tokenizer.fromFile(file);
    const r = rng(20240607);
    const texts = fixed.slice();
    for (let i = 0; i < 400; i++) texts.push(randomText(r));
    const cases = [];
    for (const text of texts) {
      const plain = await tok.encode(text, null, { addSpecialTokens: false });
      const withSpecial = await tok.encode(text, null, { addSpecialTokens: true });
      const ids = Array.from(plain.getIds());
      cases.push({
        text,
        ids,
        ids_special: Array.from(withSpecial.getIds()),
        decoded: await tok.decode(ids, false),
        decoded_skip: await tok.decode(Array.from(withSpecial.getIds()), true),
      });
    }
    fs.writeFileSync(path.join(outDir, model + '.json'), JSON.stringify({ model, cases }));
    console.log(`gen-reference: ${model}: ${cases.length} cases`);
  }
})().catch((e) => { console.error(e); process.exit(1); });
