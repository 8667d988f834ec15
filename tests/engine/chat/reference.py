#!/usr/bin/env python3
"""Renders the chat-template test cases with Python Jinja2 the way Hugging Face's
apply_chat_template does, and writes the expected outputs for tst_chat_template.

Environment: jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
with the loopcontrols extension and a {% generation %} tag, HF's tojson filter (json.dumps with
ensure_ascii=False), raise_exception, and strftime_now on a FIXED clock (2024-07-26 10:30:00) so
that the C++ side can reproduce it.

Usage: reference.py SOURCE_DIR OUT_DIR
"""
import datetime
import json
import os
import sys

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

FIXED_NOW = datetime.datetime(2024, 7, 26, 10, 30, 0)


class RaisedByTemplate(jinja2.exceptions.TemplateError):
    pass


class GenerationTag(Extension):
    """Like HF's AssistantTracker: {% generation %}...{% endgeneration %} renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(lineno)

    def _render_body(self, caller):
        return caller()


def make_env():
    def raise_exception(message):
        raise RaisedByTemplate(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return FIXED_NOW.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, source, context):
    try:
        return {"expected": env.from_string(source).render(**context)}
    except RaisedByTemplate as e:
        return {"error": str(e), "error_kind": "raise"}
    except jinja2.exceptions.UndefinedError as e:
        return {"error": str(e), "error_kind": "UndefinedError"}
    except Exception as e:  # noqa: BLE001 - any failure is an expected error for the C++ side
        return {"error": str(e), "error_kind": type(e).__name__}


def token_text(tok):
    if tok is None:
        return ""
    if isinstance(tok, dict):
        return tok.get("content", "")
    return tok


def load_template(entry, source_dir, assets):
    kind, _, rel = entry["source"].partition(":")
    if kind == "asset":
        with open(os.path.join(assets, rel), encoding="utf-8") as f:
            cfg = json.load(f)
        return cfg["chat_template"], token_text(cfg.get("bos_token")), token_text(cfg.get("eos_token"))
    with open(os.path.join(source_dir, "tests/engine/chat/templates", rel), encoding="utf-8") as f:
        return f.read(), entry["bos_token"], entry["eos_token"]


RANDOM_CONTEXT = {"n": 3, "m": -7, "f": 2.5, "s": "abc", "w": " Hello World ", "u": "héllo 😀", "e": "",
                  "l": [3, 1, 2], "ls": ["b", "A", "c"], "d": {"a": 1, "b": "x", "c": [1, 2]}, "z": None, "t": True,
                  "users": [{"name": "ann", "age": 30}, {"name": "bob", "age": 20, "admin": True}]}


def random_whitespace_template(rng, depth):
    """Text, newlines, indentation and tags with random -/+ modifiers: the whitespace control
    (trim_blocks, lstrip_blocks, -, +) is where byte-identity is most fragile."""
    texts = ["\n", "\n\n", "  ", "\t", " x ", "y", "\n  ", "  \n", "\r\n", " \n \n ", "z\n"]

    def mod_open():
        return rng.choice(["", "", "-", "+"])

    def mod_close():
        return rng.choice(["", "", "-", "+"])

    def seq(d):
        parts = []
        for _ in range(rng.randint(1, 5)):
            r = rng.random()
            if r < 0.4:
                parts.append(rng.choice(texts))
            elif r < 0.55:
                parts.append("{{" + rng.choice(["", "-"]) + " 'v' " + rng.choice(["", "-"]) + "}}")
            elif r < 0.65:
                parts.append("{#" + mod_open() + " c " + mod_close() + "#}")
            elif r < 0.8 and d > 0:
                cond = rng.choice(["true", "false", "n > 1"])
                inner = seq(d - 1)
                if rng.random() < 0.5:
                    inner += "{%" + mod_open() + " else " + mod_close() + "%}" + seq(d - 1)
                parts.append("{%" + mod_open() + " if " + cond + " " + mod_close() + "%}" + inner +
                             "{%" + mod_open() + " endif " + mod_close() + "%}")
            elif r < 0.9 and d > 0:
                parts.append("{%" + mod_open() + " for i in [1, 2] " + mod_close() + "%}" + seq(d - 1) + "{{ i }}" +
                             "{%" + mod_open() + " endfor " + mod_close() + "%}")
            else:
                parts.append("{%" + mod_open() + " set q = 1 " + mod_close() + "%}")
        return "".join(parts)

    return seq(depth)


def random_statement_template(rng):
    """Loops, loop variables, conditions, set / namespace / macros in random combinations."""
    iters = ["l", "ls", "d", "d.items()", "d | items", "users", "u", "[]", "range(4)", "l | sort", "users | selectattr('admin')",
             "s", "ls | reverse"]
    loopvars = ["loop.index", "loop.index0", "loop.first", "loop.last", "loop.length", "loop.revindex",
                "loop.revindex0", "loop.previtem", "loop.nextitem", "loop.cycle('a', 'b')"]

    def body(d):
        parts = []
        for _ in range(rng.randint(1, 4)):
            r = rng.random()
            if r < 0.25:
                parts.append("{{ " + rng.choice(loopvars + ["x", "ns.acc", "acc", "x | string | upper"]) + " }}")
            elif r < 0.35:
                parts.append("{% set acc = acc ~ (x | string) %}")
            elif r < 0.45:
                parts.append("{% set ns.acc = ns.acc ~ (x | string) ~ ',' %}")
            elif r < 0.55:
                parts.append("{% if " + rng.choice(["loop.first", "loop.last", "x", "loop.index is even", "not x"]) +
                             " %}" + body(d - 1) + "{% elif loop.index > 2 %}+{% else %}" + body(d - 1) + "{% endif %}")
            elif r < 0.62:
                parts.append("{% if loop.index == 2 %}{% " + rng.choice(["break", "continue"]) + " %}{% endif %}")
            elif r < 0.75 and d > 0:
                cond = rng.choice(["", " if x", " if not loop", " if y is string"])
                parts.append("{% for y in " + rng.choice(iters) + cond + " %}[" + body(d - 1) + "{{ y }}]{% else %}E{% endfor %}")
            elif r < 0.85:
                parts.append("{{ wrap(x" + rng.choice(["", ", '<'", ", right='>'", ", '(', ')'"]) + ") }}")
            else:
                parts.append(rng.choice(["-", "\n", " "]))
        return "".join(parts)

    target = rng.choice(["x", "x", "k, v"])
    iters_for = iters if target == "x" else ["d.items()", "d | items", "[[1, 2], [3, 4]]", "[('a', 1)]"]
    head = ("{% set ns = namespace(acc='') %}{% set acc = 'A' %}"
            "{% macro wrap(v, left='[', right=']') %}{{ left }}{{ v }}{{ right }}{% endmacro %}")
    loop = "{% for " + target + " in " + rng.choice(iters_for) + " %}" + \
           ("{% set x = k ~ '=' ~ v %}" if target == "k, v" else "") + body(2) + "{% else %}none{% endfor %}"
    return head + loop + "|{{ acc }}|{{ ns.acc }}"


def random_cases(env, count):
    """Deterministic random templates from a small grammar: a differential test of the
    interpreter's expression semantics against Jinja2 (seeded, so the file is stable)."""
    import random
    rng = random.Random(int(os.environ.get("LLMWB_CHAT_RANDOM_SEED", "20240726")))
    atoms = ["0", "1", "2", "-3", "7", "0.5", "2.25", "-1.5", "1e3", "''", "'a'", "'Hello World'", "' x '",
             "'é😀'", '"it\'s"', "true", "false", "none", "[]", "[1, 2]", "['x', 'y']", "{'k': 1}", "(1, 'a')",
             "n", "m", "f", "s", "w", "u", "e", "l", "ls", "d", "z", "t", "missing", "d.a", "d['b']", "d.c",
             "users[0]", "users[1].admin", "l[0]", "l[-1]", "s[1:]", "l[::-1]", "u[:2]", "ls[-2:]", "u[::-2]",
             "w[1:-1]", "l[5:]"]
    filters = ["length", "upper", "lower", "trim", "string", "int", "float", "first", "last", "reverse | list",
               "list", "join(', ')", "join", "tojson", "tojson(indent=2)", "default('D')", "default('D', true)",
               "abs", "round", "sort", "unique | list", "title", "capitalize", "count", "items | list", "dictsort",
               "map(attribute='name') | list", "selectattr('admin') | list", "sum", "min", "max",
               "replace('l', 'L')", "select('odd') | list", "reject('even') | list"]
    tests = ["defined", "undefined", "none", "string", "number", "integer", "float", "mapping", "sequence",
             "iterable", "odd", "even", "true", "false", "boolean", "in [1, 2, 'a']", "eq 1", "lower", "upper"]
    methods = [".upper()", ".lower()", ".strip()", ".split()", ".split('l')", ".startswith('a')",
               ".endswith('d')", ".replace('l', '_')", ".title()", ".find('l')", ".count('l')", ".lstrip(' H')",
               ".rstrip('d ')", ".keys() | list", ".items() | list", ".values() | list", ".get('a')",
               ".get('q', 0)", "[0]", "[-1]"]
    binops = ["+", "-", "*", "/", "//", "%", "~", "and", "or", "==", "!=", "<", ">", "<=", ">=", "in", "not in"]

    def expr(depth):
        r = rng.random()
        if depth <= 0 or r < 0.25:
            return rng.choice(atoms)
        if r < 0.45:
            return f"({expr(depth - 1)} {rng.choice(binops)} {expr(depth - 1)})"
        if r < 0.55:
            return f"({expr(depth - 1)} | {rng.choice(filters)})"
        if r < 0.65:
            neg = rng.choice(["", "not "])
            return f"({expr(depth - 1)} is {neg}{rng.choice(tests)})"
        if r < 0.75:
            return f"({expr(depth - 1)}){rng.choice(methods)}"
        if r < 0.82:
            return f"({expr(depth - 1)} if {expr(depth - 1)} else {expr(depth - 1)})"
        if r < 0.88:
            return f"(not {expr(depth - 1)})"
        if r < 0.92:
            return f"{rng.choice(['2', '3', '-2', '1.5'])} ** {rng.choice(['0', '2', '3', '-1'])}"
        return f"[{expr(depth - 1)}, {expr(depth - 1)}]"

    out = []
    for i in range(count // 4):
        tpl = random_whitespace_template(rng, 3)
        case = {"name": f"random_ws_{i:03d}", "template": tpl, "context": RANDOM_CONTEXT}
        case.update(render(env, tpl, RANDOM_CONTEXT))
        out.append(case)
    for i in range(count // 4):
        tpl = random_statement_template(rng)
        case = {"name": f"random_stmt_{i:03d}", "template": tpl, "context": RANDOM_CONTEXT}
        case.update(render(env, tpl, RANDOM_CONTEXT))
        out.append(case)
    for i in range(count):
        kind = rng.random()
        if kind < 0.7:
            tpl = "{{ " + expr(3) + " }}"
        elif kind < 0.85:
            tpl = "{% if " + expr(2) + " %}T{% else %}F{% endif %}"
        else:
            tpl = "{% for x in " + expr(2) + " %}[{{ x }}|{{ loop.index }}]{% else %}empty{% endfor %}"
        case = {"name": f"random_{i:03d}", "template": tpl, "context": RANDOM_CONTEXT}
        case.update(render(env, tpl, RANDOM_CONTEXT))
        out.append(case)
    return out


def main():
    source_dir, out_dir = sys.argv[1], sys.argv[2]
    assets = os.environ.get("LLMWB_TEST_ASSETS", os.path.expanduser("~/.cache/llmwb/test-assets"))
    here = os.path.join(source_dir, "tests/engine/chat")
    env = make_env()
    with open(os.path.join(here, "templates.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    with open(os.path.join(here, "conversations.json"), encoding="utf-8") as f:
        conversations = json.load(f)

    cases = []
    for entry in manifest:
        source, bos, eos = load_template(entry, source_dir, assets)
        for conv in conversations:
            for agp in (False, True):
                for thinking in (None, True, False):
                    ctx = {"messages": conv["messages"], "add_generation_prompt": agp, "bos_token": bos, "eos_token": eos}
                    # As transformers' apply_chat_template: tools and documents always passed.
                    ctx["tools"] = conv.get("tools")
                    ctx["documents"] = None
                    if thinking is not None:
                        ctx["enable_thinking"] = thinking
                    ctx.update(conv.get("extra", {}))
                    case = {"template": entry["name"], "conversation": conv["name"], "add_generation_prompt": agp,
                            "enable_thinking": thinking}
                    case.update(render(env, source, ctx))
                    cases.append(case)

    with open(os.path.join(here, "interpreter_cases.json"), encoding="utf-8") as f:
        unit = json.load(f)
    unit_out = []
    for case in unit:
        out = {"name": case["name"], "template": case["template"], "context": case.get("context", {})}
        out.update(render(env, case["template"], out["context"]))
        unit_out.append(out)

    unit_out.extend(random_cases(env, int(os.environ.get("LLMWB_CHAT_RANDOM_CASES", "1000"))))

    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "templates.json"), "w", encoding="utf-8") as f:
        json.dump({"jinja2_version": jinja2.__version__, "cases": cases}, f, ensure_ascii=False, indent=1)
    with open(os.path.join(out_dir, "interpreter.json"), "w", encoding="utf-8") as f:
        json.dump({"jinja2_version": jinja2.__version__, "cases": unit_out}, f, ensure_ascii=False, indent=1)
    errors = sum(1 for c in cases if "error" in c)
    print(f"chat reference: {len(cases)} template cases ({errors} expected errors), {len(unit_out)} interpreter cases")


if __name__ == "__main__":
    main()
