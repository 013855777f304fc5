#!/usr/bin/python3
"""Renders every template in templates/ over every case of conversations.json
the way Hugging Face transformers' apply_chat_template does, and writes
expected/<template>.json: {case: {"text": render} or {"error": message}}.

The reference is Debian bookworm's python3-jinja2 (3.1.2):

    apt-get install -y python3-jinja2
    /usr/bin/python3 internal/jinja/testdata/hf/render.py

The environment is transformers' (utils/chat_template_utils.py): an
ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks, the
loopcontrols extension and the {% generation %} tag, tojson with
ensure_ascii=False / indent / separators / sort_keys, the globals
raise_exception and strftime_now, and exactly the variables messages,
tools (None when the case has none), add_generation_prompt, bos_token and
eos_token. strftime_now sees the fixed time "now" of conversations.json.
"""
import datetime
import json
import os
import sys

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))


class Generation(Extension):
    """transformers' AssistantTracker: {% generation %}body{% endgeneration %} renders body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_support"), [], [], body).set_lineno(lineno)

    def _support(self, caller):
        return caller()


def environment(now):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return now.strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def describe(e):
    line = getattr(e, "lineno", None)
    where = f"line {line}: " if line else ""
    return f"{where}{type(e).__name__}: {e}"


def main():
    conv = json.load(open(os.path.join(HERE, "conversations.json"), encoding="utf-8"))
    now = datetime.datetime.fromisoformat(conv["now"].replace("Z", "+00:00"))
    env = environment(now)
    tdir = os.path.join(HERE, "templates")
    names = sorted(n for n in os.listdir(tdir) if n.endswith(".jinja"))
    if len(sys.argv) > 1:
        names = [n for n in names if any(a in n for a in sys.argv[1:])]
    total = ok = 0
    for name in names:
        source = open(os.path.join(tdir, name), encoding="utf-8").read()
        out = {}
        try:
            tpl = env.from_string(source)
        except Exception as e:  # a template Jinja2 does not compile fails every case
            tpl, err = None, describe(e)
        for case in conv["cases"]:
            total += 1
            if tpl is None:
                out[case["name"]] = {"error": err}
                continue
            try:
                text = tpl.render(
                    messages=case["messages"],
                    tools=conv["tools"] if case.get("tools") else None,
                    add_generation_prompt=case["add_generation_prompt"],
                    bos_token=conv["bos_token"],
                    eos_token=conv["eos_token"],
                )
                out[case["name"]] = {"text": text}
                ok += 1
            except Exception as e:
                out[case["name"]] = {"error": describe(e)}
        with open(os.path.join(HERE, "expected", name[: -len(".jinja")] + ".json"), "w", encoding="utf-8") as f:
            json.dump(out, f, ensure_ascii=False, indent=1)
            f.write("\n")
    print(f"jinja2 {jinja2.__version__}: {ok} of {total} renders completed, {len(names)} templates", file=sys.stderr)


if __name__ == "__main__":
    main()
