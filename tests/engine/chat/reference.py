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
                    if conv.get("tools") is not None:
                        ctx["tools"] = conv["tools"]
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

    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "templates.json"), "w", encoding="utf-8") as f:
        json.dump({"jinja2_version": jinja2.__version__, "cases": cases}, f, ensure_ascii=False, indent=1)
    with open(os.path.join(out_dir, "interpreter.json"), "w", encoding="utf-8") as f:
        json.dump({"jinja2_version": jinja2.__version__, "cases": unit_out}, f, ensure_ascii=False, indent=1)
    errors = sum(1 for c in cases if "error" in c)
    print(f"chat reference: {len(cases)} template cases ({errors} expected errors), {len(unit_out)} interpreter cases")


if __name__ == "__main__":
    main()
